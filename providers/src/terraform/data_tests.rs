//! `terraform_data` planning and apply, against the cases of Terraform's
//! `resource_data_test.go`: create, in-place input change, replacement by
//! `triggers_replace`, no-op, destroy, unknowns, and the schema.

use super::*;
use fleetform_shared::value::Value;

fn schema() -> Schema {
    TerraformData.schema()
}

fn obj(input: Value, output: Value, triggers: Value, id: Value) -> Value {
    Value::object([
        ("input", input),
        ("output", output),
        ("triggers_replace", triggers),
        ("id", id),
    ])
}

/// The configuration (computed attributes null) and core's proposal for
/// it: computed attributes taken from the prior state.
fn request(prior: &Value, input: Value, triggers: Value) -> PlanResourceChangeRequest {
    let config = obj(
        input.clone(),
        Value::null(),
        triggers.clone(),
        Value::null(),
    );
    let proposed = obj(
        input,
        prior.get_attr("output").clone(),
        triggers,
        prior.get_attr("id").clone(),
    );
    PlanResourceChangeRequest {
        type_name: "terraform_data".into(),
        prior_state: prior.clone(),
        proposed_new_state: proposed,
        config,
        prior_private: vec![],
    }
}

fn plan(prior: &Value, input: Value, triggers: Value) -> PlanResourceChangeResponse {
    TerraformData.plan(&request(prior, input, triggers), &schema())
}

fn apply(prior: &Value, planned: &Value) -> ApplyResourceChangeResponse {
    let req = ApplyResourceChangeRequest {
        type_name: "terraform_data".into(),
        prior_state: prior.clone(),
        planned_state: planned.clone(),
        config: Value::null(),
        planned_private: vec![],
    };
    futures::executor::block_on(TerraformData.apply(&(), &req))
}

fn is_go_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && groups.iter().all(|g| {
            g.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        })
}

#[test]
fn schema_is_terraforms() {
    let s = schema();
    assert_eq!(s.version, 0);
    let a = &s.block.attributes;
    assert_eq!(
        a.keys().map(String::as_str).collect::<Vec<_>>(),
        ["id", "input", "output", "triggers_replace"]
    );
    let flags = |n: &str| {
        let x = &a[n];
        (
            x.ty.clone(),
            x.required,
            x.optional,
            x.computed,
            x.sensitive,
        )
    };
    assert_eq!(flags("input"), (Type::Dynamic, false, true, false, false));
    assert_eq!(flags("output"), (Type::Dynamic, false, false, true, false));
    assert_eq!(
        flags("triggers_replace"),
        (Type::Dynamic, false, true, false, false)
    );
    assert_eq!(flags("id"), (Type::String, false, false, true, false));
    assert!(s.block.block_types.is_empty());
}

#[test]
fn ids_look_like_terraforms() {
    let a = generate_id();
    assert!(is_go_uuid(&a), "{a}");
    assert_ne!(a, generate_id());
}

#[test]
fn create_plans_unknown_id_and_output_and_apply_copies_the_input() {
    let input = Value::object([("a", Value::from("x")), ("n", Value::int(1))]);
    let resp = plan(&Value::null(), input.clone(), Value::null());
    assert!(resp.requires_replace.is_empty());
    assert!(!resp.diagnostics.has_errors());
    assert_eq!(
        resp.planned_state,
        obj(
            input.clone(),
            Value::unknown(),
            Value::null(),
            Value::unknown()
        )
    );
    let applied = apply(&Value::null(), &resp.planned_state);
    let state = applied.new_state;
    assert_eq!(state.get_attr("output"), &input);
    assert_eq!(state.get_attr("input"), &input);
    assert!(
        is_go_uuid(state.get_attr("id").as_str().unwrap()),
        "{state:?}"
    );
}

#[test]
fn create_without_input_plans_a_null_output() {
    let resp = plan(&Value::null(), Value::null(), Value::from("t"));
    assert_eq!(
        resp.planned_state,
        obj(
            Value::null(),
            Value::null(),
            Value::from("t"),
            Value::unknown()
        )
    );
    let state = apply(&Value::null(), &resp.planned_state).new_state;
    assert_eq!(state.get_attr("output"), &Value::null());
    assert!(state.get_attr("id").as_str().is_some());
}

#[test]
fn unchanged_configuration_plans_the_prior_state() {
    let prior = obj(
        Value::from("in"),
        Value::from("in"),
        Value::from("t"),
        Value::from("id-1"),
    );
    let resp = plan(&prior, Value::from("in"), Value::from("t"));
    assert!(resp.requires_replace.is_empty());
    assert_eq!(resp.planned_state, prior);
}

#[test]
fn changed_input_updates_in_place_with_output_unknown_even_when_known() {
    let prior = obj(
        Value::from("old"),
        Value::from("old"),
        Value::null(),
        Value::from("id-1"),
    );
    let resp = plan(&prior, Value::from("new"), Value::null());
    assert!(resp.requires_replace.is_empty());
    assert_eq!(
        resp.planned_state,
        obj(
            Value::from("new"),
            Value::unknown(),
            Value::null(),
            Value::from("id-1")
        ),
        "the id is kept and the output is known only after apply"
    );
    let state = apply(&prior, &resp.planned_state).new_state;
    assert_eq!(
        state,
        obj(
            Value::from("new"),
            Value::from("new"),
            Value::null(),
            Value::from("id-1")
        )
    );

    // Removing the input is a change too: the output becomes null at apply.
    let resp = plan(&prior, Value::null(), Value::null());
    assert!(resp.planned_state.get_attr("output").is_unknown());
    let state = apply(&prior, &resp.planned_state).new_state;
    assert_eq!(state.get_attr("output"), &Value::null());
}

#[test]
fn changed_input_of_another_type_is_a_change() {
    let prior = obj(
        Value::from("1"),
        Value::from("1"),
        Value::null(),
        Value::from("id-1"),
    );
    let resp = plan(&prior, Value::int(1), Value::null());
    assert!(resp.planned_state.get_attr("output").is_unknown());
}

#[test]
fn changed_triggers_replace_the_object() {
    let prior = obj(
        Value::from("in"),
        Value::from("in"),
        Value::tuple(vec![Value::from("a")]),
        Value::from("id-1"),
    );
    let resp = plan(
        &prior,
        Value::from("in"),
        Value::tuple(vec![Value::from("b")]),
    );
    assert_eq!(
        resp.requires_replace,
        vec![vec![PathStep::Key("triggers_replace".into())]]
    );
    assert_eq!(
        resp.planned_state,
        obj(
            Value::from("in"),
            Value::unknown(),
            Value::tuple(vec![Value::from("b")]),
            Value::unknown()
        )
    );
    // The replacement is created from a null prior state.
    let state = apply(&Value::null(), &resp.planned_state).new_state;
    assert_eq!(state.get_attr("output"), &Value::from("in"));
    assert_ne!(state.get_attr("id"), &Value::from("id-1"));

    // Replacing without input plans a null output.
    let resp = plan(&prior, Value::null(), Value::from("other"));
    assert_eq!(resp.requires_replace.len(), 1);
    assert_eq!(resp.planned_state.get_attr("output"), &Value::null());

    // Removing the triggers replaces as well.
    let resp = plan(&prior, Value::from("in"), Value::null());
    assert_eq!(resp.requires_replace.len(), 1);
}

#[test]
fn unknown_triggers_replace_and_unknown_input_leaves_output_unknown() {
    let prior = obj(
        Value::from("in"),
        Value::from("in"),
        Value::from("t"),
        Value::from("id-1"),
    );
    let resp = plan(&prior, Value::from("in"), Value::unknown());
    assert_eq!(resp.requires_replace.len(), 1);
    assert!(resp.planned_state.get_attr("id").is_unknown());

    let partly = Value::object([("a", Value::unknown())]);
    let resp = plan(&prior, partly.clone(), Value::from("t"));
    assert!(resp.requires_replace.is_empty());
    assert_eq!(resp.planned_state.get_attr("input"), &partly);
    assert!(resp.planned_state.get_attr("output").is_unknown());
    assert_eq!(resp.planned_state.get_attr("id"), &Value::from("id-1"));
}

#[test]
fn destroy_plans_and_applies_null() {
    let prior = obj(
        Value::from("in"),
        Value::from("in"),
        Value::null(),
        Value::from("id-1"),
    );
    let mut req = request(&prior, Value::null(), Value::null());
    req.proposed_new_state = Value::null();
    req.config = Value::null();
    let resp = TerraformData.plan(&req, &schema());
    assert_eq!(resp.planned_state, Value::null());
    assert_eq!(apply(&prior, &Value::null()).new_state, Value::null());
}

#[test]
fn computed_attributes_are_read_only_in_configuration() {
    let ok = obj(
        Value::from("x"),
        Value::null(),
        Value::null(),
        Value::null(),
    );
    assert!(TerraformData.validate(&ok).is_empty());
    assert!(TerraformData.validate(&Value::null()).is_empty());
    let bad = obj(
        Value::null(),
        Value::from("o"),
        Value::null(),
        Value::from("i"),
    );
    let d = TerraformData.validate(&bad);
    let summaries: Vec<&str> = d.iter().map(|d| d.summary.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "\"id\" attribute is read-only",
            "\"output\" attribute is read-only"
        ]
    );
}

#[test]
fn stored_state_of_any_version_decodes_with_dynamic_values() {
    let req = UpgradeResourceStateRequest {
        type_name: "terraform_data".into(),
        version: 0,
        raw_state_json: br#"{"id":"abc","input":{"value":{"a":[1,2]},"type":["object",{"a":["tuple",["number","number"]]}]},"output":{"value":"x","type":"string"},"triggers_replace":null}"#.to_vec(),
    };
    let resp = TerraformData.upgrade(&req, &schema());
    assert!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
    assert_eq!(
        resp.upgraded_state,
        obj(
            Value::object([("a", Value::tuple(vec![Value::int(1), Value::int(2)]))]),
            Value::from("x"),
            Value::null(),
            Value::from("abc")
        )
    );
}

#[test]
fn stored_state_in_fleetforms_plain_form_decodes_too() {
    let req = UpgradeResourceStateRequest {
        type_name: "terraform_data".into(),
        version: 0,
        raw_state_json: br#"{"id":"abc","input":"one","output":{"a":[1,2.5]},"triggers_replace":{"value":"x","type":"nope"}}"#.to_vec(),
    };
    let resp = TerraformData.upgrade(&req, &schema());
    assert!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
    assert_eq!(
        resp.upgraded_state,
        obj(
            Value::from("one"),
            Value::object([(
                "a",
                Value::tuple(vec![
                    Value::int(1),
                    Value::Number(fleetform_shared::value::Number::from_f64(2.5))
                ])
            )]),
            Value::object([("type", Value::from("nope")), ("value", Value::from("x"))]),
            Value::from("abc")
        ),
        "plain values are kept as they are, even one that only looks wrapped"
    );
    let bad = UpgradeResourceStateRequest {
        raw_state_json: br#"{"id":"abc","extra":1}"#.to_vec(),
        ..req
    };
    let resp = TerraformData.upgrade(&bad, &schema());
    assert_eq!(
        resp.diagnostics.iter().next().unwrap().detail,
        "unsupported attribute \"extra\""
    );
}

#[test]
fn import_sets_only_the_id() {
    let state = futures::executor::block_on(TerraformData.import(&(), "my-id")).unwrap();
    assert_eq!(
        state,
        obj(
            Value::null(),
            Value::null(),
            Value::null(),
            Value::from("my-id")
        )
    );
}
