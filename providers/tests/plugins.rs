//! The provider binaries as real plugin processes: handshake (with and
//! without AutoMTLS), the resource lifecycle over tfplugin6, and what the
//! sim store holds afterwards.

mod client;

use anyhow::{Context, Result};
use client::{COOKIE, ClientIdentity, Plugin};
use fleetform_proto::tfplugin6 as pb;
use fleetform_proto::tfplugin6::provider_client::ProviderClient;
use fleetform_proto::{FromProto, ToProto};
use fleetform_shared::provider::*;
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};
use std::path::Path;
use std::time::Duration;
use tonic::transport::Channel;

const SIM: &str = env!("CARGO_BIN_EXE_terraform-provider-sim");
const NULL: &str = env!("CARGO_BIN_EXE_terraform-provider-null");

/// The `.json` objects in the sim store, by id.
fn stored_ids(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_suffix(".json")
                    .map(str::to_string)
            })
            .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

fn stored(dir: &Path, id: &str) -> Result<serde_json::Value> {
    Ok(serde_json::from_slice(&std::fs::read(
        dir.join(format!("{id}.json")),
    )?)?)
}

struct Sim {
    client: ProviderClient<Channel>,
    ty: Type,
}

impl Sim {
    async fn connect(plugin: &Plugin, id: Option<&ClientIdentity>) -> Result<Sim> {
        let mut client = plugin.provider(id).await?;
        let schema = client
            .get_provider_schema(pb::get_provider_schema::Request {})
            .await?
            .into_inner();
        let schema = GetProviderSchemaResponse::try_from(schema)?.schema;
        let obj = schema
            .resources
            .get("sim_object")
            .context("no sim_object")?;
        assert!(obj.block.attributes["name"].required);
        assert!(obj.block.attributes["id"].computed);
        assert!(
            schema
                .provider
                .block
                .attributes
                .contains_key("failure_rate")
        );
        Ok(Sim {
            client,
            ty: obj.block.implied_type(),
        })
    }

    async fn configure(&mut self, store: &Path, failure_rate: f64) -> Result<()> {
        let ty = Type::object([
            ("store_dir", Type::String),
            ("latency_ms", Type::Number),
            ("failure_rate", Type::Number),
        ]);
        let config = Value::object([
            ("store_dir", Value::from(store.display().to_string())),
            ("latency_ms", Value::int(1)),
            (
                "failure_rate",
                Value::Number(fleetform_shared::Number::from_f64(failure_rate)),
            ),
        ]);
        let req = ConfigureProviderRequest {
            terraform_version: "1.9.0".into(),
            config,
        }
        .to_proto(&ty)?;
        let resp = self.client.configure_provider(req).await?.into_inner();
        assert!(resp.diagnostics.is_empty(), "{:?}", resp.diagnostics);
        Ok(())
    }

    async fn plan(&mut self, prior: &Value, config: &Value) -> Result<PlanResourceChangeResponse> {
        // Core's proposed new state: config, with unset computed attributes from prior.
        let mut proposed = config.clone();
        if let (Value::Map(p), Some(id)) = (&mut proposed, prior.as_map().and_then(|m| m.get("id")))
        {
            p.insert("id", id.clone());
        }
        let req = PlanResourceChangeRequest {
            type_name: "sim_object".into(),
            prior_state: prior.clone(),
            proposed_new_state: proposed,
            config: config.clone(),
            prior_private: vec![],
        };
        let resp = self
            .client
            .plan_resource_change(req.to_proto(&self.ty)?)
            .await?
            .into_inner();
        Ok(PlanResourceChangeResponse::from_proto(resp, &self.ty)?)
    }

    async fn apply(
        &mut self,
        prior: &Value,
        planned: &Value,
        config: &Value,
    ) -> Result<ApplyResourceChangeResponse> {
        let req = ApplyResourceChangeRequest {
            type_name: "sim_object".into(),
            prior_state: prior.clone(),
            planned_state: planned.clone(),
            config: config.clone(),
            planned_private: vec![],
        };
        let resp = self
            .client
            .apply_resource_change(req.to_proto(&self.ty)?)
            .await?
            .into_inner();
        Ok(ApplyResourceChangeResponse::from_proto(resp, &self.ty)?)
    }

    async fn read(&mut self, state: &Value) -> Result<Value> {
        let req = ReadResourceRequest {
            type_name: "sim_object".into(),
            current_state: state.clone(),
            private: vec![],
        };
        let resp = self
            .client
            .read_resource(req.to_proto(&self.ty)?)
            .await?
            .into_inner();
        let resp = ReadResourceResponse::from_proto(resp, &self.ty)?;
        assert!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
        Ok(resp.new_state)
    }
}

fn sim_config(name: &str, size: i64) -> Value {
    Value::object([
        ("id", Value::null()),
        ("name", Value::from(name)),
        ("tags", Value::object([("env", Value::from("test"))])),
        ("size", Value::int(size)),
    ])
}

#[tokio::test]
async fn sim_lifecycle_over_automtls() -> Result<()> {
    let store = tempfile::tempdir()?;
    let id = ClientIdentity::generate()?;
    let plugin = Plugin::start(SIM, Some(&id), &[]).await?;
    assert!(plugin.server_cert.is_some());
    let mut sim = Sim::connect(&plugin, Some(&id)).await?;
    sim.configure(store.path(), 0.0).await?;

    let config = sim_config("a", 2);
    let plan = sim.plan(&Value::null(), &config).await?;
    assert_eq!(plan.planned_state.get_attr("id"), &Value::unknown());
    assert!(
        stored_ids(store.path()).is_empty(),
        "planning must not create anything"
    );

    let created = sim
        .apply(&Value::null(), &plan.planned_state, &config)
        .await?;
    assert!(
        !created.diagnostics.has_errors(),
        "{:?}",
        created.diagnostics
    );
    let state = created.new_state;
    let object_id = state
        .get_attr("id")
        .as_str()
        .context("id after create")?
        .to_string();
    assert_eq!(stored_ids(store.path()), vec![object_id.clone()]);
    assert_eq!(stored(store.path(), &object_id)?["name"], "a");
    assert_eq!(sim.read(&state).await?, state);

    // Size changes in place and keeps the id.
    let config = sim_config("a", 3);
    let plan = sim.plan(&state, &config).await?;
    assert!(plan.requires_replace.is_empty());
    assert_eq!(plan.planned_state.get_attr("id"), state.get_attr("id"));
    let state = sim
        .apply(&state, &plan.planned_state, &config)
        .await?
        .new_state;
    assert_eq!(stored(store.path(), &object_id)?["size"], 3.0);

    // Renaming requires replacement.
    let plan = sim.plan(&state, &sim_config("b", 3)).await?;
    assert_eq!(
        plan.requires_replace,
        vec![vec![PathStep::Key("name".into())]]
    );

    // Delete, then the object reads as gone.
    let deleted = sim.apply(&state, &Value::null(), &Value::null()).await?;
    assert!(
        !deleted.diagnostics.has_errors(),
        "{:?}",
        deleted.diagnostics
    );
    assert_eq!(deleted.new_state, Value::null());
    assert!(stored_ids(store.path()).is_empty());
    assert_eq!(sim.read(&state).await?, Value::null());

    let status = plugin.shutdown(Some(&id)).await?;
    assert!(status.success(), "{status}");
    Ok(())
}

#[tokio::test]
async fn automtls_rejects_a_client_with_another_certificate() -> Result<()> {
    let id = ClientIdentity::generate()?;
    let plugin = Plugin::start(SIM, Some(&id), &[]).await?;
    let stranger = ClientIdentity::generate()?;
    let attempt = async {
        let mut c = plugin.provider(Some(&stranger)).await?;
        c.get_provider_schema(pb::get_provider_schema::Request {})
            .await?;
        anyhow::Ok(())
    };
    let outcome = tokio::time::timeout(Duration::from_secs(20), attempt)
        .await
        .context("hung")?;
    assert!(outcome.is_err(), "a stranger's certificate was accepted");
    Ok(())
}

#[tokio::test]
async fn sim_handles_concurrent_applies_and_injected_failures_without_tls() -> Result<()> {
    let store = tempfile::tempdir()?;
    let plugin = Plugin::start(SIM, None, &[]).await?;
    assert!(plugin.server_cert.is_none());
    let mut sim = Sim::connect(&plugin, None).await?;
    sim.configure(store.path(), 0.0).await?;

    let applies = (0..24).map(|i| {
        let (client, ty) = (sim.client.clone(), sim.ty.clone());
        tokio::spawn(async move {
            let mut sim = Sim { client, ty };
            let config = sim_config(&format!("obj{i}"), i);
            let plan = sim.plan(&Value::null(), &config).await?;
            let resp = sim
                .apply(&Value::null(), &plan.planned_state, &config)
                .await?;
            anyhow::ensure!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
            anyhow::Ok(())
        })
    });
    for a in applies.collect::<Vec<_>>() {
        a.await??;
    }
    assert_eq!(stored_ids(store.path()).len(), 24);

    // failure_rate 1: every apply fails before touching the store.
    sim.configure(store.path(), 1.0).await?;
    let config = sim_config("doomed", 1);
    let plan = sim.plan(&Value::null(), &config).await?;
    let resp = sim
        .apply(&Value::null(), &plan.planned_state, &config)
        .await?;
    assert!(resp.diagnostics.has_errors());
    assert_eq!(resp.new_state, Value::null());
    assert_eq!(stored_ids(store.path()).len(), 24);
    Ok(())
}

#[tokio::test]
async fn sim_store_defaults_to_sim_store_env() -> Result<()> {
    let store = tempfile::tempdir()?;
    let plugin = Plugin::start(SIM, None, &[("SIM_STORE", store.path())]).await?;
    let mut sim = Sim::connect(&plugin, None).await?;
    let resp = sim
        .client
        .configure_provider(pb::configure_provider::Request::default())
        .await?
        .into_inner();
    assert!(resp.diagnostics.is_empty(), "{:?}", resp.diagnostics);
    let config = sim_config("a", 1);
    let plan = sim.plan(&Value::null(), &config).await?;
    sim.apply(&Value::null(), &plan.planned_state, &config)
        .await?;
    assert_eq!(stored_ids(store.path()).len(), 1);
    Ok(())
}

#[tokio::test]
async fn null_resource_gets_an_id_and_is_replaced_when_triggers_change() -> Result<()> {
    let plugin = Plugin::start(NULL, None, &[]).await?;
    let mut c = plugin.provider(None).await?;
    let schema = c
        .get_provider_schema(pb::get_provider_schema::Request {})
        .await?
        .into_inner();
    let schema = GetProviderSchemaResponse::try_from(schema)?.schema;
    let ty = schema.resources["null_resource"].block.implied_type();
    c.configure_provider(pb::configure_provider::Request::default())
        .await?;

    let config = Value::object([
        ("id", Value::null()),
        ("triggers", Value::object([("v", Value::from("1"))])),
    ]);
    let plan = |prior: Value, config: Value| PlanResourceChangeRequest {
        type_name: "null_resource".into(),
        proposed_new_state: config.clone(),
        prior_state: prior,
        config,
        prior_private: vec![],
    };
    let planned = c
        .plan_resource_change(plan(Value::null(), config.clone()).to_proto(&ty)?)
        .await?
        .into_inner();
    let planned = PlanResourceChangeResponse::from_proto(planned, &ty)?.planned_state;
    assert_eq!(planned.get_attr("id"), &Value::unknown());
    let apply = ApplyResourceChangeRequest {
        type_name: "null_resource".into(),
        prior_state: Value::null(),
        planned_state: planned,
        config: config.clone(),
        planned_private: vec![],
    };
    let state = c
        .apply_resource_change(apply.to_proto(&ty)?)
        .await?
        .into_inner();
    let state = ApplyResourceChangeResponse::from_proto(state, &ty)?.new_state;
    let id = state.get_attr("id").as_str().context("id")?;
    assert!(id.parse::<u64>().is_ok(), "{id}");

    let changed = Value::object([
        ("id", Value::null()),
        ("triggers", Value::object([("v", Value::from("2"))])),
    ]);
    let replan = c
        .plan_resource_change(plan(state, changed).to_proto(&ty)?)
        .await?
        .into_inner();
    let replan = PlanResourceChangeResponse::from_proto(replan, &ty)?;
    assert_eq!(
        replan.requires_replace,
        vec![vec![PathStep::Key("triggers".into())]]
    );
    Ok(())
}

#[tokio::test]
async fn without_the_magic_cookie_the_plugin_refuses_to_run() -> Result<()> {
    let out = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::process::Command::new(SIM)
            .env_remove(COOKIE.0)
            .output(),
    )
    .await??;
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("This binary is a plugin"));
    Ok(())
}
