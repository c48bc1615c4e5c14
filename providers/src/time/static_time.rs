//! `time_static`: a timestamp fixed at creation (or given as `rfc3339`)
//! and its parts. A configured `rfc3339` is planned known, as upstream's
//! plan modifier does; otherwise the time is taken at apply.

use super::clock::{Timestamp, format_rfc3339, now_unix, parse_rfc3339};
use super::triggers;
use crate::defaults::set_attr;
use crate::framework::{CallResult, Resource, default_plan, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub struct TimeStatic;

const PARTS: [&str; 7] = ["year", "month", "day", "hour", "minute", "second", "unix"];

/// `base` with `rfc3339` (as given), `id` and every part set.
fn with_parts(base: &Value, rfc3339: &str, t: &Timestamp) -> Value {
    let values = [t.year, t.month, t.day, t.hour, t.minute, t.second, t.unix];
    let mut v = set_attr(base, "rfc3339", Value::from(rfc3339));
    v = set_attr(&v, "id", Value::from(rfc3339));
    for (name, n) in PARTS.iter().zip(values) {
        v = set_attr(&v, name, Value::int(n));
    }
    v
}

#[async_trait]
impl Resource<()> for TimeStatic {
    fn type_name(&self) -> &'static str {
        "time_static"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "Manages a static time resource, which keeps a locally sourced UTC timestamp stored in the state.".into();
        let a = &mut s.block.attributes;
        a.insert(
            "rfc3339".into(),
            Attribute::new(Type::String)
                .optional()
                .computed()
                .describe("Base timestamp in RFC3339 format (e.g. `YYYY-MM-DDTHH:MM:SSZ`). Defaults to the current time."),
        );
        a.insert(
            "triggers".into(),
            triggers("trigger a new base timestamp value to be saved"),
        );
        for name in PARTS {
            a.insert(
                name.into(),
                Attribute::new(Type::Number)
                    .computed()
                    .describe(&format!("Number {name} of the timestamp.")),
            );
        }
        a.insert(
            "id".into(),
            Attribute::new(Type::String)
                .computed()
                .describe("RFC3339 format of the timestamp, e.g. `2020-02-12T06:36:13Z`."),
        );
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["rfc3339", "triggers"]
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        match config.get_attr("rfc3339").as_str().map(parse_rfc3339) {
            Some(Err(e)) => Diagnostic::error("Invalid Attribute Value", e).into(),
            _ => Diagnostics::new(),
        }
    }

    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        let mut resp = default_plan(req, schema, self.replace_on_change());
        let fresh = req.prior_state.is_null() || !resp.requires_replace.is_empty();
        if fresh
            && !resp.planned_state.is_null()
            && let Some(text) = req.config.get_attr("rfc3339").as_str()
            && let Ok(t) = parse_rfc3339(text)
        {
            resp.planned_state = with_parts(&resp.planned_state, text, &t);
        }
        resp
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        let text = match planned.get_attr("rfc3339") {
            Value::String(s) => s.clone(),
            _ => format_rfc3339(now_unix()),
        };
        match parse_rfc3339(&text) {
            Ok(t) => Ok(with_parts(planned, &text, &t)),
            Err(e) => fail("Invalid rfc3339", e),
        }
    }

    async fn read(&self, _: &(), state: &Value) -> CallResult<Value> {
        Ok(state.clone())
    }

    async fn update(&self, _: &(), _prior: &Value, planned: &Value) -> CallResult<Value> {
        Ok(planned.clone())
    }

    async fn delete(&self, _: &(), _prior: &Value) -> CallResult<()> {
        Ok(())
    }

    async fn import(&self, _: &(), id: &str) -> CallResult<Value> {
        match parse_rfc3339(id) {
            Ok(t) => Ok(with_parts(
                &Value::object([("triggers", Value::null())]),
                id,
                &t,
            )),
            Err(e) => fail("Import time static error", e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plans like core proposes: unset computed attributes keep their prior value.
    fn plan(prior: Value, config: Value) -> PlanResourceChangeResponse {
        let schema = TimeStatic.schema();
        let mut proposed = config.clone();
        for (name, attr) in &schema.block.attributes {
            if attr.computed && config.get_attr(name).is_null() {
                proposed = set_attr(&proposed, name, prior.get_attr(name).clone());
            }
        }
        let req = PlanResourceChangeRequest {
            type_name: "time_static".into(),
            prior_state: prior,
            proposed_new_state: proposed,
            config,
            prior_private: vec![],
        };
        TimeStatic.plan(&req, &schema)
    }

    #[tokio::test]
    async fn now_is_taken_at_apply_and_a_given_time_is_known_at_plan() {
        let planned =
            plan(Value::null(), Value::object([("triggers", Value::null())])).planned_state;
        assert!(planned.get_attr("rfc3339").is_unknown() && planned.get_attr("unix").is_unknown());
        let before = now_unix();
        let state = TimeStatic.create(&(), &planned).await.unwrap();
        let unix = state.get_attr("unix").clone();
        assert!(matches!(unix, Value::Number(n) if n.as_i64().unwrap() >= before));
        assert_eq!(state.get_attr("id"), state.get_attr("rfc3339"));

        let given = Value::object([("rfc3339", Value::from("2020-02-12T08:36:13+02:00"))]);
        let planned = plan(Value::null(), given.clone()).planned_state;
        assert_eq!(planned.get_attr("unix"), &Value::int(1_581_489_373));
        assert_eq!(planned.get_attr("hour"), &Value::int(8));
        assert_eq!(TimeStatic.create(&(), &planned).await.unwrap(), planned);

        let retriggered = plan(
            state.clone(),
            Value::object([("triggers", Value::object([("k", Value::from("v"))]))]),
        );
        assert_eq!(retriggered.requires_replace.len(), 1);
        assert!(retriggered.planned_state.get_attr("rfc3339").is_unknown());
        assert!(
            TimeStatic
                .validate(&Value::object([("rfc3339", Value::from("yesterday"))]))
                .has_errors()
        );
    }
}
