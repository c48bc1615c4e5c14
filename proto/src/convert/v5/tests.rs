//! The tfplugin5 conversions: round trips through v5 messages, and the wire
//! facts that make the v5 messages what real protocol 5 peers send.

use super::*;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::provider::*;
use fleetform_shared::schema::{Attribute, ProviderSchema, Schema};
use fleetform_shared::value::PathStep;
use prost::Message;

fn ty() -> Type {
    Type::object([
        ("id", Type::String),
        ("name", Type::String),
        ("tags", Type::map(Type::String)),
    ])
}

fn object(id: Value) -> Value {
    Value::object([
        ("id", id),
        ("name", "a".into()),
        ("tags", Value::object([("env", Value::from("dev"))])),
    ])
}

fn plan_response() -> PlanResourceChangeResponse {
    PlanResourceChangeResponse {
        planned_state: object(Value::unknown()),
        requires_replace: vec![vec![
            PathStep::Key("tags".into()),
            PathStep::Key("env".into()),
        ]],
        planned_private: vec![7],
        diagnostics: Diagnostics(vec![Diagnostic::warning("w", "d")]),
        legacy_type_system: false,
    }
}

#[test]
fn plan_calls_round_trip_through_v5_messages() {
    let req = PlanResourceChangeRequest {
        type_name: "sim_object".into(),
        prior_state: Value::null(),
        proposed_new_state: object(Value::null()),
        config: object(Value::null()),
        prior_private: vec![1, 2],
    };
    let wire: pb::plan_resource_change::Request = req.to_proto5(&ty()).unwrap();
    assert_eq!(
        PlanResourceChangeRequest::from_proto5(wire, &ty()).unwrap(),
        req
    );

    let resp = plan_response();
    let wire = resp.to_proto5(&ty()).unwrap();
    let steps: Vec<_> = wire.requires_replace[0]
        .steps
        .iter()
        .map(|s| s.selector.clone().unwrap())
        .collect();
    use pb::attribute_path::step::Selector;
    assert_eq!(
        steps,
        vec![
            Selector::AttributeName("tags".into()),
            Selector::ElementKeyString("env".into())
        ]
    );
    assert_eq!(
        PlanResourceChangeResponse::from_proto5(wire, &ty()).unwrap(),
        resp
    );
}

/// Where the protocols agree, a v5 message is byte for byte the v6 one, so
/// every field number the v5 file shares with the v6 file is right.
#[test]
fn v5_messages_encode_like_their_v6_twins() {
    let resp = plan_response();
    let v5 = resp.to_proto5(&ty()).unwrap().encode_to_vec();
    let v6 = resp.to_proto(&ty()).unwrap().encode_to_vec();
    assert_eq!(v5, v6);

    let configure = ConfigureProviderRequest {
        terraform_version: "0.15.5".into(),
        config: object(Value::null()),
    };
    let v5 = configure.to_proto5(&ty()).unwrap();
    assert_eq!(
        v6::configure_provider::Request::decode(v5.encode_to_vec().as_slice()).unwrap(),
        configure.to_proto(&ty()).unwrap()
    );
}

#[test]
fn deferred_answers_are_refused_over_v5_too() {
    let mut wire = plan_response().to_proto5(&ty()).unwrap();
    wire.deferred = Some(pb::Deferred { reason: 1 });
    assert!(PlanResourceChangeResponse::from_proto5(wire, &ty()).is_err());
}

/// The one shared field whose number differs: v5 has no `nested_type` (10).
#[test]
fn write_only_is_field_10_in_v5_and_11_in_v6() {
    let v5 = pb::schema::Attribute {
        write_only: true,
        ..Default::default()
    };
    assert_eq!(v5.encode_to_vec(), vec![10 << 3, 1]);
    let v6 = v6::schema::Attribute::from_v5(v5);
    assert!(v6.write_only);
    assert_eq!(v6.encode_to_vec(), vec![11 << 3, 1]);
}

#[test]
fn nested_attributes_become_typed_attributes_in_v5() {
    use v6::schema::object::NestingMode;
    let port = v6::schema::Attribute {
        name: "port".into(),
        r#type: fleetform_shared::cty::type_to_json(&Type::Number),
        optional: true,
        ..Default::default()
    };
    let endpoints = v6::schema::Attribute {
        name: "endpoints".into(),
        nested_type: Some(v6::schema::Object {
            attributes: vec![port],
            nesting: NestingMode::List.into(),
            ..Default::default()
        }),
        optional: true,
        ..Default::default()
    };
    let want = Attribute::try_from(endpoints.clone()).unwrap().ty;
    let v5 = endpoints.into_v5();
    assert!(!v5.r#type.is_empty());
    let back = Attribute::try_from(v6::schema::Attribute::from_v5(v5)).unwrap();
    assert_eq!(back.ty, want);
    assert!(back.optional);
}

#[test]
fn provider_schema_response_round_trips_over_v5() {
    let mut schema = ProviderSchema::default();
    let mut s = Schema::default();
    s.block
        .attributes
        .insert("name".into(), Attribute::new(Type::String).required());
    schema.resources.insert("null_resource".into(), s.clone());
    schema.data_sources.insert("null_data_source".into(), s);
    schema.capabilities.get_provider_schema_optional = true;
    let resp = GetProviderSchemaResponse {
        schema,
        diagnostics: Diagnostics(vec![Diagnostic::warning("old", "")]),
    };
    let wire = pb::get_provider_schema::Response::from(&resp);
    assert!(
        wire.server_capabilities
            .unwrap()
            .get_provider_schema_optional
    );
    assert_eq!(GetProviderSchemaResponse::try_from(wire).unwrap(), resp);
}

#[test]
fn prepare_and_data_source_requests_carry_their_config() {
    let config = object("x".into());
    let prepare = prepare_provider_config_request(&config, &ty()).unwrap();
    assert_eq!(decode_value5(prepare.config, &ty()).unwrap(), config);

    let req = ValidateResourceConfigRequest {
        type_name: "null_data_source".into(),
        config,
    };
    let wire = validate_data_config_to_proto5(&req, &ty()).unwrap();
    assert_eq!(validate_data_config_from_proto5(wire, &ty()).unwrap(), req);
    let diags = Diagnostics(vec![Diagnostic::error("bad", "worse")]);
    assert_eq!(
        diagnostics_from_proto5(diagnostics_to_proto5(&diags)),
        diags
    );
}
