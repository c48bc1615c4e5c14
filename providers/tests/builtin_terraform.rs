//! The built-in `terraform-provider-terraform` binary as a real plugin
//! process (go-plugin handshake, AutoMTLS, tfplugin6 with msgpack values):
//! `terraform_data` through create, in-place update, replacement and
//! import, with dynamic values on the wire, and `terraform_remote_state`
//! reading a local state file.

mod client;

use anyhow::{Result, ensure};
use client::conn::Conn;
use fleetform_proto::ToProto;
use fleetform_proto::tfplugin6 as pb;
use fleetform_shared::provider::*;
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};

const TERRAFORM: &str = env!("CARGO_BIN_EXE_terraform-provider-terraform");
const DATA: &str = "terraform_data";

fn data(input: Value, triggers: Value) -> Value {
    Value::object([
        ("input", input),
        ("output", Value::null()),
        ("triggers_replace", triggers),
        ("id", Value::null()),
    ])
}

#[tokio::test]
async fn terraform_data_lifecycle_over_the_plugin_protocol() -> Result<()> {
    let mut c = Conn::start(TERRAFORM, true, Value::null()).await?;
    let names: Vec<&String> = c.schema.resources.keys().collect();
    assert_eq!(names, ["terraform_data"]);
    let names: Vec<&String> = c.schema.data_sources.keys().collect();
    assert_eq!(names, ["terraform_remote_state"]);
    assert!(c.schema.provider.block.attributes.is_empty());
    assert_eq!(
        c.schema.resources["terraform_data"].block.attributes["input"].ty,
        Type::Dynamic
    );

    // Create, with a structured input crossing the wire as a dynamic value.
    let input = Value::object([
        ("name", Value::from("a")),
        ("ports", Value::tuple(vec![Value::int(80), Value::int(443)])),
    ]);
    let config = data(input.clone(), Value::from("t1"));
    let plan = c.plan(DATA, &Value::null(), &config).await?;
    assert!(plan.planned_state.get_attr("id").is_unknown());
    assert!(plan.planned_state.get_attr("output").is_unknown());
    let state = c
        .apply(DATA, &Value::null(), &plan.planned_state, &config)
        .await?;
    assert_eq!(state.get_attr("output"), &input);
    let first_id = state.get_attr("id").clone();
    assert_eq!(first_id.as_str().map(str::len), Some(36), "{first_id:?}");

    // No change: the plan is the state.
    let again = c.plan(DATA, &state, &config).await?;
    assert_eq!(again.planned_state, state);
    assert!(again.requires_replace.is_empty());

    // Input change: in place, output unknown, id kept.
    let config = data(Value::from("b"), Value::from("t1"));
    let plan = c.plan(DATA, &state, &config).await?;
    assert!(plan.requires_replace.is_empty());
    assert!(plan.planned_state.get_attr("output").is_unknown());
    assert_eq!(plan.planned_state.get_attr("id"), &first_id);
    let state = c.apply(DATA, &state, &plan.planned_state, &config).await?;
    assert_eq!(state.get_attr("output"), &Value::from("b"));
    assert_eq!(state.get_attr("id"), &first_id);

    // Trigger change: replacement with a new id.
    let config = data(Value::from("b"), Value::from("t2"));
    let plan = c.plan(DATA, &state, &config).await?;
    assert_eq!(
        plan.requires_replace,
        vec![vec![PathStep::Key("triggers_replace".into())]]
    );
    let replaced = c
        .apply(DATA, &Value::null(), &plan.planned_state, &config)
        .await?;
    assert_ne!(replaced.get_attr("id"), &first_id);
    assert_eq!(replaced.get_attr("output"), &Value::from("b"));

    // Destroy, then import by id.
    let gone = c
        .apply(DATA, &replaced, &Value::null(), &Value::null())
        .await?;
    assert!(gone.is_null());
    let resp = c
        .client
        .import_resource_state(pb::import_resource_state::Request {
            type_name: "terraform_data".into(),
            id: "some-id".into(),
            ..Default::default()
        })
        .await?
        .into_inner();
    ensure!(resp.diagnostics.is_empty(), "{:?}", resp.diagnostics);
    let imported = fleetform_proto::convert::decode_value(
        resp.imported_resources[0].state.as_ref(),
        &c.ty(DATA),
    )?;
    assert_eq!(imported.get_attr("id"), &Value::from("some-id"));
    assert!(imported.get_attr("input").is_null());

    // Setting a computed attribute is refused by validation.
    let bad = Value::object([
        ("input", Value::null()),
        ("output", Value::from("x")),
        ("triggers_replace", Value::null()),
        ("id", Value::null()),
    ]);
    let resp = c
        .client
        .validate_resource_config(
            ValidateResourceConfigRequest {
                type_name: "terraform_data".into(),
                config: bad,
            }
            .to_proto(&c.ty(DATA))?,
        )
        .await?
        .into_inner();
    assert_eq!(resp.diagnostics.len(), 1);
    assert_eq!(
        resp.diagnostics[0].summary,
        "\"output\" attribute is read-only"
    );

    c.shutdown().await
}

#[tokio::test]
async fn remote_state_reads_a_local_state_file_over_the_plugin_protocol() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("other.tfstate");
    std::fs::write(
        &path,
        r#"{"version":4,"terraform_version":"1.9.0","serial":2,"lineage":"x","outputs":{"vpc":{"value":{"id":"vpc-1","cidrs":["10.0.0.0/16"]},"type":["object",{"id":"string","cidrs":["list","string"]}]},"secret":{"value":"s","type":"string","sensitive":true}},"resources":[]}"#,
    )?;
    let mut c = Conn::start(TERRAFORM, true, Value::null()).await?;
    let config = |backend: &str, path: &str| {
        Value::object([
            ("backend", Value::from(backend)),
            (
                "config",
                Value::object([("path", Value::from(path.to_string()))]),
            ),
            ("defaults", Value::object([("extra", Value::int(7))])),
            ("workspace", Value::null()),
            ("outputs", Value::null()),
        ])
    };
    let resp = c
        .read_data(
            "terraform_remote_state",
            &config("local", path.to_str().unwrap()),
        )
        .await?;
    ensure!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
    let outputs = resp.state.get_attr("outputs");
    assert_eq!(
        outputs,
        &Value::object([
            ("extra", Value::int(7)),
            ("secret", Value::from("s")),
            (
                "vpc",
                Value::object([
                    ("cidrs", Value::tuple(vec![Value::from("10.0.0.0/16")])),
                    ("id", Value::from("vpc-1")),
                ])
            ),
        ])
    );

    let resp = c
        .read_data("terraform_remote_state", &config("gcs", "ignored"))
        .await?;
    let d: Vec<_> = resp.diagnostics.iter().collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].summary, "Unsupported backend");

    c.shutdown().await
}
