//! A configured provider process driven the way core drives it (schema,
//! configure, validate, plan with core's proposal, apply, read, import,
//! data sources), shared by the plugin test files; each uses part of it.
#![allow(dead_code)]

use super::{ClientIdentity, Plugin};
use anyhow::{Context, Result, ensure};
use fleetform_proto::tfplugin6 as pb;
use fleetform_proto::tfplugin6::provider_client::ProviderClient;
use fleetform_proto::{FromProto, ToProto};
use fleetform_shared::provider::*;
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::value::Value;
use tonic::transport::Channel;

/// A configured provider process and its schema, driven the way core does.
pub struct Conn {
    pub client: ProviderClient<Channel>,
    pub schema: ProviderSchema,
    plugin: Plugin,
    identity: Option<ClientIdentity>,
}

pub fn obj(pairs: &[(&str, Value)]) -> Value {
    Value::object(pairs.iter().cloned())
}

pub fn set(v: &Value, name: &str, x: Value) -> Value {
    let mut m = v.as_map().cloned().unwrap_or_default();
    m.insert(name, x);
    Value::Map(m)
}

impl Conn {
    pub async fn start(bin: &str, mtls: bool, config: Value) -> Result<Conn> {
        let id = if mtls {
            Some(ClientIdentity::generate()?)
        } else {
            None
        };
        let plugin = Plugin::start(bin, id.as_ref(), &[]).await?;
        let mut client = plugin.provider(id.as_ref()).await?;
        let schema = client
            .get_provider_schema(pb::get_provider_schema::Request {})
            .await?
            .into_inner();
        let schema = GetProviderSchemaResponse::try_from(schema)?.schema;
        let req = ConfigureProviderRequest {
            terraform_version: "1.9.0".into(),
            config,
        }
        .to_proto(&schema.provider.block.implied_type())?;
        let resp = client.configure_provider(req).await?.into_inner();
        ensure!(resp.diagnostics.is_empty(), "{:?}", resp.diagnostics);
        Ok(Conn {
            client,
            schema,
            plugin,
            identity: id,
        })
    }

    /// Stops the plugin through go-plugin's controller, as hosts do.
    pub async fn shutdown(self) -> Result<()> {
        let status = self.plugin.shutdown(self.identity.as_ref()).await?;
        ensure!(status.success(), "{status}");
        Ok(())
    }

    pub fn ty(&self, type_name: &str) -> fleetform_shared::types::Type {
        self.schema.resources[type_name].block.implied_type()
    }

    pub async fn validate(&mut self, type_name: &str, config: &Value) -> Result<bool> {
        let req = ValidateResourceConfigRequest {
            type_name: type_name.into(),
            config: config.clone(),
        };
        let resp = self
            .client
            .validate_resource_config(req.to_proto(&self.ty(type_name))?)
            .await?
            .into_inner();
        Ok(resp.diagnostics.is_empty())
    }

    /// PlanResourceChange with core's proposal: the configuration, with
    /// unset computed attributes taken from the prior state.
    pub async fn plan(
        &mut self,
        type_name: &str,
        prior: &Value,
        config: &Value,
    ) -> Result<PlanResourceChangeResponse> {
        let mut proposed = config.clone();
        for (name, attr) in &self.schema.resources[type_name].block.attributes {
            if attr.computed && config.get_attr(name).is_null() {
                proposed = set(&proposed, name, prior.get_attr(name).clone());
            }
        }
        let req = PlanResourceChangeRequest {
            type_name: type_name.into(),
            prior_state: prior.clone(),
            proposed_new_state: proposed,
            config: config.clone(),
            prior_private: vec![],
        };
        let ty = self.ty(type_name);
        let resp = self
            .client
            .plan_resource_change(req.to_proto(&ty)?)
            .await?
            .into_inner();
        let resp = PlanResourceChangeResponse::from_proto(resp, &ty)?;
        ensure!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
        Ok(resp)
    }

    pub async fn apply(
        &mut self,
        type_name: &str,
        prior: &Value,
        planned: &Value,
        config: &Value,
    ) -> Result<Value> {
        let req = ApplyResourceChangeRequest {
            type_name: type_name.into(),
            prior_state: prior.clone(),
            planned_state: planned.clone(),
            config: config.clone(),
            planned_private: vec![],
        };
        let ty = self.ty(type_name);
        let resp = self
            .client
            .apply_resource_change(req.to_proto(&ty)?)
            .await?
            .into_inner();
        let resp = ApplyResourceChangeResponse::from_proto(resp, &ty)?;
        ensure!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
        Ok(resp.new_state)
    }

    /// Plan and apply a creation; checks the planned unknowns are resolved.
    pub async fn create(&mut self, type_name: &str, config: &Value) -> Result<Value> {
        let planned = self
            .plan(type_name, &Value::null(), config)
            .await?
            .planned_state;
        let state = self
            .apply(type_name, &Value::null(), &planned, config)
            .await?;
        ensure!(
            state.is_wholly_known(),
            "unknowns left after apply: {state:?}"
        );
        Ok(state)
    }

    pub async fn read(&mut self, type_name: &str, state: &Value) -> Result<Value> {
        let req = ReadResourceRequest {
            type_name: type_name.into(),
            current_state: state.clone(),
            private: vec![],
        };
        let ty = self.ty(type_name);
        let resp = self
            .client
            .read_resource(req.to_proto(&ty)?)
            .await?
            .into_inner();
        let resp = ReadResourceResponse::from_proto(resp, &ty)?;
        ensure!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
        Ok(resp.new_state)
    }

    pub async fn destroy(&mut self, type_name: &str, state: &Value) -> Result<()> {
        let gone = self
            .apply(type_name, state, &Value::null(), &Value::null())
            .await?;
        ensure!(gone.is_null(), "{gone:?}");
        Ok(())
    }

    pub async fn import(&mut self, type_name: &str, id: &str) -> Result<Value> {
        let resp = self
            .client
            .import_resource_state(pb::import_resource_state::Request {
                type_name: type_name.into(),
                id: id.into(),
                ..Default::default()
            })
            .await?
            .into_inner();
        ensure!(resp.diagnostics.is_empty(), "{:?}", resp.diagnostics);
        let state = resp
            .imported_resources
            .into_iter()
            .next()
            .context("nothing imported")?;
        Ok(fleetform_proto::convert::decode_value(
            state.state.as_ref(),
            &self.ty(type_name),
        )?)
    }

    pub async fn read_data(
        &mut self,
        type_name: &str,
        config: &Value,
    ) -> Result<ReadDataSourceResponse> {
        let ty = self.schema.data_sources[type_name].block.implied_type();
        let req = ReadDataSourceRequest {
            type_name: type_name.into(),
            config: config.clone(),
        };
        let resp = self
            .client
            .read_data_source(req.to_proto(&ty)?)
            .await?
            .into_inner();
        Ok(ReadDataSourceResponse::from_proto(resp, &ty)?)
    }
}
