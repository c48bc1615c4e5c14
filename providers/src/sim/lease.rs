//! The ephemeral `sim_lease`: a lease on a simulated credential, for tests
//! of when a host opens, renews and closes ephemeral resources. Every call
//! appends one JSON line to the file `log_file` names (see [`LeaseCall`]),
//! with its time, so a test can put the calls in order against the
//! store's `operations.log`. With `renew_after_ms` the open (and each
//! renewal) asks to be renewed that long after; with `fail_renew` every
//! renewal is refused, as an expired credential's would be. The value,
//! `token`, is made up at each open and written nowhere by the provider:
//! a test that finds it in a file found a leak.

use crate::defaults::{int_attr, set_attr};
use crate::framework::{CallResult, EphemeralResource, Opened, fail};
use async_trait::async_trait;
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use serde::{Deserialize, Serialize};
use std::io::Write;

use super::SimClient;
use super::stored::now_ms;

pub struct SimLease;

/// One line of a lease's log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LeaseCall {
    /// `open`, `renew` or `close`.
    pub call: String,
    pub name: String,
    /// Unix milliseconds when the provider got the call.
    pub at_ms: u64,
    /// What the answer asked for (open and renew): Unix milliseconds.
    #[serde(default)]
    pub renew_at: Option<i64>,
    /// The `input` argument the open got.
    #[serde(default)]
    pub input: Option<String>,
    /// Renewals before this call, as the private data the call got says.
    pub renewals: u32,
    /// The provider process that took the call.
    pub pid: u32,
}

/// What the lease keeps in the host's hands between calls.
#[derive(Serialize, Deserialize)]
struct Private {
    name: String,
    log_file: String,
    renew_after_ms: Option<i64>,
    fail_renew: bool,
    renewals: u32,
}

impl Private {
    fn log(&self, call: &str, renew_at: Option<i64>, input: Option<String>) -> CallResult<()> {
        let line = LeaseCall {
            call: call.into(),
            name: self.name.clone(),
            at_ms: now_ms(),
            renew_at,
            input,
            renewals: self.renewals,
            pid: std::process::id(),
        };
        let mut bytes = serde_json::to_vec(&line).expect("a lease call serialises");
        bytes.push(b'\n');
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_file)
            .and_then(|mut f| f.write_all(&bytes));
        match written {
            Ok(()) => Ok(()),
            Err(e) => fail(
                "Cannot write the lease log",
                format!("{}: {e}", self.log_file),
            ),
        }
    }

    fn renew_at(&self) -> Option<i64> {
        self.renew_after_ms.map(|ms| now_ms() as i64 + ms)
    }

    fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("private data serialises")
    }

    fn decode(private: Option<&[u8]>) -> CallResult<Private> {
        match private.map(serde_json::from_slice::<Private>) {
            Some(Ok(p)) => Ok(p),
            _ => fail(
                "Invalid lease private data",
                "the host did not hand back what the open answered",
            ),
        }
    }
}

#[async_trait]
impl EphemeralResource<SimClient> for SimLease {
    fn type_name(&self) -> &'static str {
        "sim_lease"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "A lease on a simulated credential, renewed and closed by the host; every call is logged to log_file.".into();
        let a = &mut s.block.attributes;
        a.insert(
            "name".into(),
            Attribute::new(Type::String)
                .required()
                .describe("Names the lease in the log."),
        );
        a.insert(
            "log_file".into(),
            Attribute::new(Type::String)
                .required()
                .describe("File each open, renewal and close appends a JSON line to."),
        );
        a.insert(
            "input".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("Any string; the open logs it."),
        );
        a.insert(
            "renew_after_ms".into(),
            Attribute::new(Type::Number)
                .optional()
                .describe("Ask for a renewal this long after the open and after each renewal."),
        );
        a.insert(
            "fail_renew".into(),
            Attribute::new(Type::Bool)
                .optional()
                .describe("Refuse every renewal with an error."),
        );
        a.insert(
            "token".into(),
            Attribute::new(Type::String)
                .computed()
                .describe("The leased credential, new at each open."),
        );
        s
    }

    async fn open(&self, _: &SimClient, config: &Value) -> CallResult<Opened> {
        let text = |name| config.get_attr(name).as_str().map(str::to_string);
        let (Some(name), Some(log_file)) = (text("name"), text("log_file")) else {
            return fail(
                "Invalid sim_lease",
                "name and log_file must be known strings",
            );
        };
        let private = Private {
            name,
            log_file,
            renew_after_ms: int_attr(config, "renew_after_ms"),
            fail_renew: config.get_attr("fail_renew") == &Value::Bool(true),
            renewals: 0,
        };
        let renew_at = private.renew_at();
        private.log("open", renew_at, text("input"))?;
        let token = format!("lease-{}", uuid::Uuid::new_v4().simple());
        Ok(Opened {
            result: set_attr(config, "token", Value::String(token)),
            private: Some(private.encode()),
            renew_at,
        })
    }

    async fn renew(&self, _: &SimClient, private: Option<&[u8]>) -> CallResult<Opened> {
        let mut p = Private::decode(private)?;
        if p.fail_renew {
            p.log("renew", None, None)?;
            return fail(
                "Lease renewal refused",
                format!("The lease {} cannot be renewed.", p.name),
            );
        }
        let renew_at = p.renew_at();
        p.log("renew", renew_at, None)?;
        p.renewals += 1;
        Ok(Opened {
            result: Value::null(),
            private: Some(p.encode()),
            renew_at,
        })
    }

    async fn close(&self, _: &SimClient, private: Option<&[u8]>) -> CallResult<()> {
        Private::decode(private)?.log("close", None, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(log: &std::path::Path, fail_renew: bool) -> Value {
        let mut c = SimLease.schema().block.empty_value();
        c = set_attr(&c, "name", Value::from("l"));
        c = set_attr(
            &c,
            "log_file",
            Value::from(log.display().to_string().as_str()),
        );
        c = set_attr(&c, "input", Value::from("in"));
        c = set_attr(&c, "renew_after_ms", Value::int(500));
        set_attr(&c, "fail_renew", Value::Bool(fail_renew))
    }

    fn calls(log: &std::path::Path) -> Vec<LeaseCall> {
        std::fs::read_to_string(log)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn open_renew_and_close_are_logged_with_the_private_data_they_got() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("lease.log");
        let client = SimClient::new(super::super::Store::open(dir.path()).await.unwrap());
        let o = SimLease.open(&client, &config(&log, false)).await.unwrap();
        let token = o.result.get_attr("token").as_str().unwrap().to_string();
        assert!(token.starts_with("lease-"), "{token}");
        let at = o.renew_at.expect("asks for a renewal");
        let r = SimLease.renew(&client, o.private.as_deref()).await.unwrap();
        assert!(r.renew_at.unwrap() >= at);
        SimLease.close(&client, r.private.as_deref()).await.unwrap();
        let got = calls(&log);
        let kinds: Vec<&str> = got.iter().map(|c| c.call.as_str()).collect();
        assert_eq!(kinds, ["open", "renew", "close"]);
        assert_eq!(got[0].input.as_deref(), Some("in"));
        assert_eq!(got[0].renew_at, Some(at));
        assert_eq!(
            got[2].renewals, 1,
            "the close got the renewal's private data"
        );
        assert!(!std::fs::read_to_string(&log).unwrap().contains(&token));
    }

    #[tokio::test]
    async fn a_refused_renewal_is_an_error_and_still_logged() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("lease.log");
        let client = SimClient::new(super::super::Store::open(dir.path()).await.unwrap());
        let o = SimLease.open(&client, &config(&log, true)).await.unwrap();
        let err = SimLease
            .renew(&client, o.private.as_deref())
            .await
            .unwrap_err();
        assert!(err.has_errors());
        assert!(SimLease.renew(&client, None).await.is_err());
        assert_eq!(calls(&log).len(), 2);
    }
}
