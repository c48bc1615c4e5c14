//! The `sim` provider (`fleetform/sim`): a simulated cloud for load and chaos
//! tests, with configurable latency distribution, failure rate, rate limit,
//! throttling and eventual consistency, whose objects live as JSON files in a
//! directory with a log of every creation and deletion.
//!
//! # Layout
//! - `account`: the account's read and write limits, shared by processes.
//! - `client`: the configured cloud: latency, rate limit, throttling,
//!   failures, visibility.
//! - `oplog`: `operations.log`, the record of creates and deletes.
//! - `object`: the `sim_object` resource.
//! - `lookup`: the `sim_object` data source.
//! - `misbehaving`: `sim_misbehaving`, which breaks provider contracts on purpose.
//! - `server`: `sim_server`, nested blocks of every nesting mode.
//! - `secret`: `sim_secret`, set through a write-only argument.
//! - `lease`: the ephemeral `sim_lease`, which logs its opens, renewals
//!   and closes.
//! - `store`: the directory of JSON files.
//! - `functions`: `provider::sim::shout`.

mod account;
mod client;
mod functions;
mod lease;
mod lookup;
mod misbehaving;
mod object;
pub mod oplog;
pub mod readlog;
mod secret;
mod server;
mod store;
mod stored;

pub use client::{Latency, RateLimiter, SimClient, Throttle};
pub use lease::{LeaseCall, SimLease};
pub use lookup::SimObjectDataSource;
pub use misbehaving::{Mode as MisbehavingMode, SimMisbehavingResource};
pub use object::SimObjectResource;
pub use secret::SimSecretResource;
pub use server::SimServerResource;
pub use store::Store;
pub use stored::SimObject;

use crate::framework::{CallResult, DataSource, EphemeralResource, Provider, Resource, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Numeric provider arguments that must not be negative.
const NON_NEGATIVE: [&str; 9] = [
    "latency_ms",
    "cpu_ms",
    "latency_jitter_ms",
    "response_latency_ms",
    "rate_limit_per_second",
    "throttle_above_per_second",
    "account_reads_per_second",
    "account_writes_per_second",
    "eventual_consistency_ms",
];

pub struct SimProvider;

/// The store directory when the configuration names none: `SIM_STORE`, else
/// `${XDG_DATA_HOME:-$HOME/.local/share}/fleetform/sim`.
pub fn default_store_dir() -> PathBuf {
    let env = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env("SIM_STORE") {
        return dir;
    }
    let data = env("XDG_DATA_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".local/share")))
        .unwrap_or_else(std::env::temp_dir);
    data.join("fleetform/sim")
}

fn number(config: &Value, name: &str) -> Result<Option<f64>, Diagnostic> {
    match config.get_attr(name) {
        Value::Null(_) => Ok(None),
        Value::Number(n) => Ok(Some(n.as_f64())),
        other => Err(Diagnostic::error(
            "Invalid provider configuration",
            format!("{name} must be a known number, got {}", other.kind()),
        )),
    }
}

fn check_config(config: &Value) -> Diagnostics {
    let mut d = Diagnostics::new();
    for name in NON_NEGATIVE {
        match number(config, name) {
            Ok(Some(n)) if n < 0.0 => d.push(Diagnostic::error(
                format!("Invalid {name}"),
                format!("{name} must not be negative"),
            )),
            Err(e) => d.push(e),
            _ => {}
        }
    }
    for name in [
        "rate_limit_per_second",
        "throttle_above_per_second",
        "account_reads_per_second",
        "account_writes_per_second",
    ] {
        if let Ok(Some(0.0)) = number(config, name) {
            d.push(Diagnostic::error(
                format!("Invalid {name}"),
                format!("{name} must be positive (leave it out for no limit)"),
            ));
        }
    }
    match number(config, "failure_rate") {
        Ok(Some(r)) if !(0.0..=1.0).contains(&r) => d.push(Diagnostic::error(
            "Invalid failure_rate",
            "failure_rate must be between 0 and 1",
        )),
        Err(e) => d.push(e),
        _ => {}
    }
    d
}

#[async_trait]
impl Provider for SimProvider {
    type Client = SimClient;

    fn name(&self) -> &'static str {
        "sim"
    }

    /// sim_object refuses to plan the destroy of a protected object.
    fn plan_destroy(&self) -> bool {
        true
    }

    fn config_schema(&self) -> Schema {
        let mut s = Schema::default();
        let attrs = &mut s.block.attributes;
        attrs.insert(
            "store_dir".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("Directory holding the objects."),
        );
        attrs.insert(
            "latency_ms".into(),
            Attribute::new(Type::Number)
                .optional()
                .describe("Latency added to every call."),
        );
        attrs.insert(
            "cpu_ms".into(),
            Attribute::new(Type::Number).optional().describe(
                "CPU time every call burns, under a lock held across the whole process: the provider then uses one core at most however many calls it serves, as a single-threaded provider or one with a global lock does.",
            ),
        );
        attrs.insert(
            "response_latency_ms".into(),
            Attribute::new(Type::Number).optional().describe(
                "Latency after a create, update or delete has been made, before the answer: the change is done even if the caller never hears of it.",
            ),
        );
        attrs.insert(
            "failure_rate".into(),
            Attribute::new(Type::Number)
                .optional()
                .describe("Probability (0..1) that an apply fails."),
        );
        attrs.insert(
            "latency_jitter_ms".into(),
            Attribute::new(Type::Number).optional().describe(
                "Extra latency drawn uniformly from 0 to this, added to latency_ms on every call.",
            ),
        );
        attrs.insert(
            "rate_limit_per_second".into(),
            Attribute::new(Type::Number).optional().describe(
                "Calls per second this provider process serves; bursts up to one second's worth pass, later calls wait.",
            ),
        );
        attrs.insert(
            "throttle_above_per_second".into(),
            Attribute::new(Type::Number).optional().describe(
                "Calls per second this provider process serves before it refuses more with \"ThrottlingException: Rate exceeded\", doing nothing, as a cloud API throttles; bursts up to one second's worth pass.",
            ),
        );
        attrs.insert(
            "account_reads_per_second".into(),
            Attribute::new(Type::Number).optional().describe(
                "Reads per second (refreshes, data sources, ephemeral opens) the simulated account serves, across every provider process on this store_dir; over it a read is refused with \"ThrottlingException: Rate exceeded\" saying when to retry, doing nothing. Bursts up to one second's worth pass.",
            ),
        );
        attrs.insert(
            "account_writes_per_second".into(),
            Attribute::new(Type::Number).optional().describe(
                "Creates, updates and deletes per second the simulated account serves, across every provider process on this store_dir; over it a write is refused as reads are.",
            ),
        );
        attrs.insert(
            "eventual_consistency_ms".into(),
            Attribute::new(Type::Number).optional().describe(
                "How long a newly created object stays invisible to reads and data lookups.",
            ),
        );
        s
    }

    fn resources(&self) -> Vec<Arc<dyn Resource<SimClient>>> {
        vec![
            Arc::new(SimObjectResource),
            Arc::new(SimMisbehavingResource),
            Arc::new(SimServerResource),
            Arc::new(SimSecretResource),
        ]
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource<SimClient>>> {
        vec![Arc::new(SimObjectDataSource)]
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource<SimClient>>> {
        vec![Arc::new(SimLease)]
    }

    fn functions(&self) -> Vec<Arc<dyn crate::framework::Function>> {
        vec![Arc::new(functions::Shout)]
    }

    fn validate_config(&self, config: &Value) -> Diagnostics {
        // Unknown values are fine at validation time; configure needs them known.
        let known = |name: &str| !config.get_attr(name).is_unknown();
        if NON_NEGATIVE
            .iter()
            .chain(&["failure_rate"])
            .all(|n| known(n))
        {
            check_config(config)
        } else {
            Diagnostics::new()
        }
    }

    async fn configure(&self, config: &Value) -> CallResult<SimClient> {
        let d = check_config(config);
        if d.has_errors() {
            return Err(d);
        }
        let dir = match config.get_attr("store_dir") {
            Value::String(s) if !s.is_empty() => PathBuf::from(s),
            Value::Null(_) | Value::String(_) => default_store_dir(),
            other => {
                return fail(
                    "Invalid store_dir",
                    format!("store_dir must be a known string, got {}", other.kind()),
                );
            }
        };
        let store = match Store::open(&dir).await {
            Ok(s) => s,
            Err(e) => {
                return fail(
                    "Cannot open the sim store",
                    format!("{}: {e}", dir.display()),
                );
            }
        };
        let ms = |name| {
            Duration::from_secs_f64(number(config, name).ok().flatten().unwrap_or(0.0) / 1000.0)
        };
        let mut client = SimClient::new(store);
        client.latency = Latency {
            base: ms("latency_ms"),
            jitter: ms("latency_jitter_ms"),
        };
        client.response_latency = ms("response_latency_ms");
        client.cpu = ms("cpu_ms");
        client.failure_rate = number(config, "failure_rate").ok().flatten().unwrap_or(0.0);
        client.rate_limit = number(config, "rate_limit_per_second")
            .ok()
            .flatten()
            .map(RateLimiter::new);
        client.throttle = number(config, "throttle_above_per_second")
            .ok()
            .flatten()
            .map(Throttle::new);
        client.eventual_consistency = ms("eventual_consistency_ms");
        let account = |name| number(config, name).ok().flatten();
        let (reads, writes) = (
            account("account_reads_per_second"),
            account("account_writes_per_second"),
        );
        if reads.is_some() || writes.is_some() {
            client.account = Some(account::AccountLimits::new(
                client.store.dir(),
                reads,
                writes,
            ));
        }
        Ok(client)
    }
}
