//! The plugin host against real plugin processes: fleetform's own
//! `terraform-provider-null` and `terraform-provider-sim` through the
//! go-plugin handshake with AutoMTLS on and off, over protocol 5 and 6, plus
//! handshake failures from scripted fake plugins.
//!
//! Build the providers first: `cargo build -p fleetform-providers --bins`.

use fleetform_install::resolve::resolve_in;
use fleetform_shared::ProviderAddr;
use fleetform_shared::cty;
use fleetform_shared::provider::*;
use fleetform_shared::schema::{Block, Nesting};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use fleetform_worker::plugin::{PluginClient, PluginConfig, Provider, ProviderError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn target_dir() -> PathBuf {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    dir.join("debug")
}

fn provider_binary(type_name: &str) -> PathBuf {
    resolve_in(&ProviderAddr::implied(type_name), &[target_dir()]).unwrap_or_else(|e| {
        panic!("{e}\nbuild the providers first: cargo build -p fleetform-providers --bins")
    })
}

/// A value for a required attribute of type `ty`.
fn sample(ty: &Type) -> Value {
    match ty {
        Type::Bool => Value::Bool(true),
        Type::Number => Value::int(1),
        Type::String | Type::Dynamic => Value::from("fleetform-test"),
        Type::List(e) | Type::Set(e) => Value::tuple(vec![sample(e)]),
        Type::Map(e) => Value::object([("k", sample(e))]),
        Type::Object { attrs, .. } => {
            Value::Map(attrs.iter().map(|(k, t)| (k.clone(), sample(t))).collect())
        }
        Type::Tuple(ts) => Value::List(ts.iter().map(sample).collect()),
    }
}

/// The configuration Terraform would send for a block with only its
/// required arguments set: absent blocks are null or empty collections.
fn minimal_config(block: &Block) -> Value {
    let mut obj: BTreeMap<String, Value> = block
        .attributes
        .iter()
        .map(|(k, a)| {
            (
                k.clone(),
                if a.required {
                    sample(&a.ty)
                } else {
                    Value::null()
                },
            )
        })
        .collect();
    for (name, nb) in &block.block_types {
        let one = || minimal_config(&nb.block);
        let v = match nb.nesting {
            Nesting::Single | Nesting::Group if nb.min_items > 0 => one(),
            Nesting::Single | Nesting::Group => Value::null(),
            Nesting::List | Nesting::Set if nb.min_items > 0 => Value::tuple(vec![one()]),
            Nesting::List | Nesting::Set => Value::tuple(Vec::new()),
            Nesting::Map => Value::Map(Default::default()),
        };
        obj.insert(name.clone(), v);
    }
    Value::Map(obj.into())
}

/// Which protocol versions the host offers, and which one the plugin must pick.
#[derive(Clone, Copy)]
enum Offer {
    /// `PLUGIN_PROTOCOL_VERSIONS=5`, as Terraform 0.12 to 0.15 send.
    Only5,
    /// The default, `5,6`: our plugins pick 6.
    Both,
}

async fn lifecycle(
    type_name: &str,
    resource: &str,
    data: Option<&str>,
    auto_mtls: bool,
    offer: Offer,
) {
    let mut config = PluginConfig::new(provider_binary(type_name), type_name);
    config.auto_mtls = auto_mtls;
    config.handshake_timeout = Duration::from_secs(20);
    let want_version = match offer {
        Offer::Only5 => {
            config.protocol_versions = vec![5];
            5
        }
        Offer::Both => 6,
    };
    let client = PluginClient::start(&config).await.unwrap();
    assert_eq!(
        client.protocol_version(),
        want_version,
        "the version in the handshake line"
    );

    let schema = client.get_provider_schema().await.unwrap();
    assert!(!schema.diagnostics.has_errors(), "{:?}", schema.diagnostics);
    let rtype = resource.to_string();
    let block = &schema.schema.resources[&rtype].block;

    let provider_config = minimal_config(&schema.schema.provider.block);
    let diags = client
        .validate_provider_config(&ValidateProviderConfigRequest {
            config: provider_config.clone(),
        })
        .await
        .unwrap();
    assert!(!diags.has_errors(), "{diags:?}");
    let req = ConfigureProviderRequest {
        terraform_version: "1.9.0".into(),
        config: provider_config,
    };
    let diags = client.configure_provider(&req).await.unwrap();
    assert!(!diags.has_errors(), "{diags:?}");

    let cfg = minimal_config(block);
    let diags = client
        .validate_resource_config(&ValidateResourceConfigRequest {
            type_name: rtype.clone(),
            config: cfg.clone(),
        })
        .await
        .unwrap();
    assert!(!diags.has_errors(), "{diags:?}");

    let plan = client
        .plan_resource_change(&PlanResourceChangeRequest {
            type_name: rtype.clone(),
            prior_state: Value::null(),
            proposed_new_state: cfg.clone(),
            config: cfg.clone(),
            prior_private: Vec::new(),
        })
        .await
        .unwrap();
    assert!(!plan.diagnostics.has_errors(), "{:?}", plan.diagnostics);
    assert!(
        plan.planned_state.get_attr("id").is_unknown(),
        "id is known after apply: {:?}",
        plan.planned_state
    );

    let created = client
        .apply_resource_change(&ApplyResourceChangeRequest {
            type_name: rtype.clone(),
            prior_state: Value::null(),
            planned_state: plan.planned_state.clone(),
            config: cfg.clone(),
            planned_private: plan.planned_private.clone(),
        })
        .await
        .unwrap();
    assert!(
        !created.diagnostics.has_errors(),
        "{:?}",
        created.diagnostics
    );
    assert!(
        created.new_state.is_wholly_known(),
        "{:?}",
        created.new_state
    );
    let id = created.new_state.get_attr("id").clone();
    assert!(
        id.as_str().is_some_and(|s| !s.is_empty()),
        "created object has an id: {id:?}"
    );

    let read = client
        .read_resource(&ReadResourceRequest {
            type_name: rtype.clone(),
            current_state: created.new_state.clone(),
            private: created.private.clone(),
        })
        .await
        .unwrap();
    assert!(!read.diagnostics.has_errors(), "{:?}", read.diagnostics);
    assert_eq!(read.new_state.get_attr("id"), &id);

    let upgraded = client
        .upgrade_resource_state(&UpgradeResourceStateRequest {
            type_name: rtype.clone(),
            version: schema.schema.resources[&rtype].version,
            raw_state_json: cty::to_json(&read.new_state, &block.implied_type()).unwrap(),
        })
        .await
        .unwrap();
    assert!(
        !upgraded.diagnostics.has_errors(),
        "{:?}",
        upgraded.diagnostics
    );
    assert_eq!(upgraded.upgraded_state, read.new_state);

    let deleted = client
        .apply_resource_change(&ApplyResourceChangeRequest {
            type_name: rtype.clone(),
            prior_state: read.new_state.clone(),
            planned_state: Value::null(),
            config: Value::null(),
            planned_private: Vec::new(),
        })
        .await
        .unwrap();
    assert!(
        !deleted.diagnostics.has_errors(),
        "{:?}",
        deleted.diagnostics
    );
    assert_eq!(deleted.new_state, Value::null());

    let unknown = client
        .read_resource(&ReadResourceRequest {
            type_name: "no_such_thing".into(),
            current_state: Value::null(),
            private: Vec::new(),
        })
        .await;
    assert!(
        matches!(unknown, Err(ProviderError::UnknownType { .. })),
        "{unknown:?}"
    );

    if let Some(dtype) = data {
        let cfg = minimal_config(&schema.schema.data_sources[dtype].block);
        let req = ValidateResourceConfigRequest {
            type_name: dtype.to_string(),
            config: cfg.clone(),
        };
        let diags = client.validate_data_resource_config(&req).await.unwrap();
        assert!(!diags.has_errors(), "{diags:?}");
        let read = client
            .read_data_source(&ReadDataSourceRequest {
                type_name: dtype.to_string(),
                config: cfg,
            })
            .await
            .unwrap();
        assert!(!read.diagnostics.has_errors(), "{:?}", read.diagnostics);
        assert!(
            read.state.get_attr("id").as_str().is_some(),
            "{:?}",
            read.state
        );
    }

    client.stop().await.unwrap();
    client.close().await;
    assert!(
        client.exit_status().is_some(),
        "the plugin process is gone after close"
    );
}

const NULL_DATA: Option<&str> = Some("null_data_source");

#[tokio::test]
async fn null_provider_with_auto_mtls() {
    lifecycle("null", "null_resource", NULL_DATA, true, Offer::Both).await;
}

#[tokio::test]
async fn null_provider_without_tls() {
    lifecycle("null", "null_resource", NULL_DATA, false, Offer::Both).await;
}

#[tokio::test]
async fn null_provider_over_protocol_5_with_auto_mtls() {
    lifecycle("null", "null_resource", NULL_DATA, true, Offer::Only5).await;
}

#[tokio::test]
async fn null_provider_over_protocol_5_without_tls() {
    lifecycle("null", "null_resource", NULL_DATA, false, Offer::Only5).await;
}

#[tokio::test]
async fn sim_provider_with_auto_mtls() {
    lifecycle("sim", "sim_object", None, true, Offer::Both).await;
}

#[tokio::test]
async fn sim_provider_without_tls() {
    lifecycle("sim", "sim_object", None, false, Offer::Both).await;
}

#[tokio::test]
async fn sim_provider_over_protocol_5_with_auto_mtls() {
    lifecycle("sim", "sim_object", None, true, Offer::Only5).await;
}

#[tokio::test]
async fn sim_provider_over_protocol_5_without_tls() {
    lifecycle("sim", "sim_object", None, false, Offer::Only5).await;
}

/// Writes an executable shell script posing as a plugin.
fn script(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("terraform-provider-script");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

async fn start_script(body: &str) -> ProviderError {
    let dir = tempfile::tempdir().unwrap();
    let mut config = PluginConfig::new(script(dir.path(), body), "script");
    config.handshake_timeout = Duration::from_secs(10);
    match PluginClient::start(&config).await {
        Ok(_) => panic!("the script is not a working plugin"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn plugins_get_the_go_plugin_environment() {
    // The script answers with protocol 4 only if the environment is right,
    // so the version error proves the cookie, versions and certificate arrived.
    let err = start_script(
        r#"[ "$TF_PLUGIN_MAGIC_COOKIE" = d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2 ] || exit 1
[ "$PLUGIN_PROTOCOL_VERSIONS" = 5,6 ] || exit 1
[ "$PLUGIN_MIN_PORT" = 10000 ] && [ "$PLUGIN_MAX_PORT" = 25000 ] || exit 1
case "$PLUGIN_CLIENT_CERT" in "-----BEGIN CERTIFICATE-----"*) ;; *) exit 1 ;; esac
echo "1|4|tcp|127.0.0.1:1|grpc""#,
    )
    .await;
    assert!(
        err.to_string()
            .contains("protocol version 4 is not one of [5, 6]"),
        "{err}"
    );
}

#[tokio::test]
async fn a_plugin_that_dies_reports_its_stderr_and_status() {
    let err = start_script("echo 'something went badly wrong' >&2\nexit 3").await;
    let msg = err.to_string();
    assert!(msg.contains("exit status: 3"), "{msg}");
    assert!(msg.contains("something went badly wrong"), "{msg}");
}

#[tokio::test]
async fn a_silent_plugin_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = PluginConfig::new(script(dir.path(), "exec sleep 30"), "script");
    config.handshake_timeout = Duration::from_millis(300);
    let err = PluginClient::start(&config)
        .await
        .err()
        .expect("no handshake");
    assert!(err.to_string().contains("no handshake within"), "{err}");
}
