//! Plan-time defaults for optional+computed attributes, the way the
//! Terraform plugin framework's `Default` works: an argument left out of the
//! configuration is planned as its default, so changing the default in or
//! out of the configuration is an ordinary change (and may force
//! replacement) rather than a silent "keep whatever the state has".

use crate::framework::default_plan;
use fleetform_shared::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use fleetform_shared::schema::Schema;
use fleetform_shared::value::Value;

/// `value` with attribute `name` set to `v` (`value` is an object, or null).
pub fn set_attr(value: &Value, name: &str, v: Value) -> Value {
    let mut m = value.as_map().cloned().unwrap_or_default();
    m.insert(name.to_string(), v);
    Value::Map(m)
}

/// The request as if (`defaults`: attribute names and the values they take
/// when the configuration omits them) the configuration had spelled out every default it omits.
pub fn with_defaults(
    req: &PlanResourceChangeRequest,
    defaults: &[(&str, Value)],
) -> PlanResourceChangeRequest {
    let mut req = req.clone();
    if !matches!(req.proposed_new_state, Value::Map(_)) {
        return req;
    }
    for (name, v) in defaults {
        if req.config.get_attr(name).is_null() {
            req.config = set_attr(&req.config, name, v.clone());
            req.proposed_new_state = set_attr(&req.proposed_new_state, name, v.clone());
        }
    }
    req
}

/// [`default_plan`] after filling in `defaults`.
pub fn plan_with_defaults(
    req: &PlanResourceChangeRequest,
    schema: &Schema,
    replace_on_change: &[&str],
    defaults: &[(&str, Value)],
) -> PlanResourceChangeResponse {
    default_plan(&with_defaults(req, defaults), schema, replace_on_change)
}

/// A known whole number attribute, or `None` (null, unknown or fractional).
pub fn int_attr(v: &Value, name: &str) -> Option<i64> {
    match v.get_attr(name) {
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::schema::Attribute;
    use fleetform_shared::types::Type;
    use fleetform_shared::value::PathStep;

    fn schema() -> Schema {
        let mut s = Schema::default();
        let a = &mut s.block.attributes;
        a.insert("id".into(), Attribute::new(Type::String).computed());
        a.insert(
            "special".into(),
            Attribute::new(Type::Bool).optional().computed(),
        );
        s
    }

    fn req(prior: Value, special: Value) -> PlanResourceChangeRequest {
        let config = Value::object([("id", Value::null()), ("special", special.clone())]);
        let mut proposed = config.clone();
        if let Value::Map(m) = &mut proposed {
            m.insert("id", prior.get_attr("id").clone());
            if special.is_null() {
                m.insert("special", prior.get_attr("special").clone());
            }
        }
        PlanResourceChangeRequest {
            type_name: "t".into(),
            prior_state: prior,
            proposed_new_state: proposed,
            config,
            prior_private: vec![],
        }
    }

    #[test]
    fn omitted_arguments_plan_their_default_and_removing_one_replaces() {
        let d = [("special", Value::Bool(true))];
        let created = plan_with_defaults(
            &req(Value::null(), Value::null()),
            &schema(),
            &["special"],
            &d,
        );
        assert_eq!(
            created.planned_state.get_attr("special"),
            &Value::Bool(true)
        );
        assert!(created.planned_state.get_attr("id").is_unknown());

        let prior = Value::object([("id", "x".into()), ("special", Value::Bool(false))]);
        let unchanged = plan_with_defaults(
            &req(prior.clone(), Value::Bool(false)),
            &schema(),
            &["special"],
            &d,
        );
        assert!(unchanged.requires_replace.is_empty());
        assert_eq!(unchanged.planned_state, prior);

        let removed = plan_with_defaults(&req(prior, Value::null()), &schema(), &["special"], &d);
        assert_eq!(
            removed.requires_replace,
            vec![vec![PathStep::Key("special".into())]]
        );
        assert!(removed.planned_state.get_attr("id").is_unknown());
    }
}
