//! `time_sleep`: waits `create_duration` when created and
//! `destroy_duration` when destroyed. Changing a duration updates in place
//! without sleeping; changing `triggers` replaces it (and so sleeps again).

use super::clock::{format_rfc3339, now_unix, parse_duration};
use super::triggers;
use crate::defaults::set_attr;
use crate::framework::{CallResult, Resource, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub struct TimeSleep;

const DURATIONS: [&str; 2] = ["create_duration", "destroy_duration"];

/// Sleeps for the duration in attribute `name` of `v`, if any.
async fn sleep_for(v: &Value, name: &str) -> CallResult<()> {
    let Some(text) = v.get_attr(name).as_str() else {
        return Ok(());
    };
    match parse_duration(text) {
        Ok(d) => {
            tracing::info!(attribute = name, duration = text, "time_sleep waiting");
            let why = format!("time_sleep: the {name} of {text} was interrupted");
            crate::framework::stoppable_sleep(d, &why).await
        }
        Err(e) => fail(format!("Invalid {name}"), e),
    }
}

#[async_trait]
impl Resource<()> for TimeSleep {
    fn type_name(&self) -> &'static str {
        "time_sleep"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "Manages a resource that delays creation and/or destruction.".into();
        let a = &mut s.block.attributes;
        for (name, when) in [
            ("create_duration", "creation"),
            ("destroy_duration", "destruction"),
        ] {
            a.insert(
                name.into(),
                Attribute::new(Type::String).optional().describe(&format!(
                    "Time duration to delay resource {when}, a number and unit such as `30s` or `1.5m`."
                )),
            );
        }
        a.insert("triggers".into(), triggers("trigger a new sleep"));
        a.insert(
            "id".into(),
            Attribute::new(Type::String).computed().describe(
                "UTC RFC3339 timestamp of the creation or import, e.g. `2020-02-12T06:36:13Z`.",
            ),
        );
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["triggers"]
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        for name in DURATIONS {
            if let Some(text) = config.get_attr(name).as_str()
                && let Err(e) = parse_duration(text)
            {
                d.push(Diagnostic::error("Invalid Attribute Value", e));
            }
        }
        d
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        sleep_for(planned, "create_duration").await?;
        Ok(set_attr(
            planned,
            "id",
            Value::String(format_rfc3339(now_unix())),
        ))
    }

    async fn read(&self, _: &(), state: &Value) -> CallResult<Value> {
        Ok(state.clone())
    }

    async fn update(&self, _: &(), _prior: &Value, planned: &Value) -> CallResult<Value> {
        Ok(planned.clone())
    }

    async fn delete(&self, _: &(), prior: &Value) -> CallResult<()> {
        sleep_for(prior, "destroy_duration").await
    }

    /// `CREATE_DURATION,DESTROY_DURATION`, either may be empty.
    async fn import(&self, _: &(), id: &str) -> CallResult<Value> {
        let Some((create, destroy)) = id.split_once(',') else {
            return fail(
                "Invalid import id",
                format!("expected create_duration,destroy_duration, got {id:?}"),
            );
        };
        let mut v = Value::object([
            ("triggers", Value::null()),
            ("id", Value::String(format_rfc3339(now_unix()))),
        ]);
        for (name, text) in DURATIONS.into_iter().zip([create, destroy]) {
            if text.is_empty() {
                v = set_attr(&v, name, Value::null());
                continue;
            }
            if let Err(e) = parse_duration(text) {
                return fail("Invalid import id", e);
            }
            v = set_attr(&v, name, Value::from(text));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[tokio::test]
    async fn create_and_delete_sleep_for_their_durations() {
        let planned = Value::object([
            ("create_duration", Value::from("30ms")),
            ("destroy_duration", Value::from("20ms")),
        ]);
        let started = Instant::now();
        let state = TimeSleep.create(&(), &planned).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert!(super::super::parse_rfc3339(state.get_attr("id").as_str().unwrap()).is_ok());
        let started = Instant::now();
        TimeSleep.delete(&(), &state).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(20));
        let bad = Value::object([("create_duration", Value::from("soon"))]);
        assert!(TimeSleep.validate(&bad).has_errors());
        let imported = TimeSleep.import(&(), "1s,").await.unwrap();
        assert_eq!(imported.get_attr("create_duration"), &Value::from("1s"));
        assert_eq!(imported.get_attr("destroy_duration"), &Value::null());
    }
}
