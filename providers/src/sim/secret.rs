//! `sim_secret`: a named secret whose value is set through the write-only
//! argument `secret_wo` (Terraform 1.11), the way AWS's `password_wo` and
//! `password_wo_version` work: the value reaches the provider with the
//! configuration but is never planned or stored by the host; changing
//! `secret_wo_version` is what makes the host send a new one (an in-place
//! update). The simulated cloud keeps the secret (as a database keeps its
//! password) in the object's tags, where a test can find it.

use super::SimClient;
use super::stored::SimObject;
use crate::framework::{CallResult, Resource, default_plan, fail};
use async_trait::async_trait;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, PlanResourceChangeRequest,
    PlanResourceChangeResponse,
};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

const KIND: &str = "sim_secret";

pub struct SimSecretResource;

fn to_value(o: &SimObject) -> Value {
    let version = o
        .tags
        .as_ref()
        .and_then(|t| t.get("version"))
        .and_then(|v| v.parse::<i64>().ok())
        .map(Value::int)
        .unwrap_or(Value::null());
    Value::object([
        ("id", Value::from(o.id.as_str())),
        ("name", Value::from(o.name.as_str())),
        ("secret_wo", Value::null()),
        ("secret_wo_version", version),
    ])
}

impl SimSecretResource {
    /// Writes the object: the secret from the configuration, the rest from
    /// the plan. An update without a secret keeps the one stored.
    async fn write(
        &self,
        c: &SimClient,
        id: Option<&str>,
        planned: &Value,
        config: &Value,
    ) -> CallResult<Value> {
        c.write_call().await?;
        let Some(name) = planned.get_attr("name").as_str() else {
            return fail("Invalid sim_secret", "name must be a known string");
        };
        let previous = match id {
            Some(id) => c.store.get(id).await.ok().flatten().and_then(|o| o.tags),
            None => None,
        };
        let mut tags = previous.unwrap_or_default();
        if let Some(secret) = config.get_attr("secret_wo").as_str() {
            tags.insert("secret".into(), secret.to_string());
        }
        match planned.get_attr("secret_wo_version") {
            Value::Number(n) => tags.insert("version".into(), n.to_string()),
            _ => tags.remove("version"),
        };
        let obj = SimObject {
            id: id.map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_string),
            name: name.to_string(),
            tags: Some(tags),
            size: None,
            kind: Some(KIND.into()),
            created_ms: None,
        };
        let written = match id {
            None => c.store.create(&obj).await.map(drop),
            Some(_) => c.store.put(&obj).await,
        };
        if let Err(e) = written {
            return fail("sim: write failed", e.to_string());
        }
        Ok(to_value(&obj))
    }
}

#[async_trait]
impl Resource<SimClient> for SimSecretResource {
    fn type_name(&self) -> &'static str {
        KIND
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "A secret in the simulated cloud, set write-only.".into();
        let attrs = &mut s.block.attributes;
        attrs.insert(
            "name".into(),
            Attribute::new(Type::String)
                .required()
                .describe("Changing it replaces the secret."),
        );
        let mut wo = Attribute::new(Type::String)
            .optional()
            .describe("The secret; write-only: never planned or stored by the host.");
        wo.write_only = true;
        attrs.insert("secret_wo".into(), wo);
        attrs.insert(
            "secret_wo_version".into(),
            Attribute::new(Type::Number)
                .optional()
                .describe("Changing it sends `secret_wo` again."),
        );
        attrs.insert("id".into(), Attribute::new(Type::String).computed());
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["name"]
    }

    /// The framework's plan, which leaves write-only arguments null.
    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        default_plan(req, schema, self.replace_on_change())
    }

    async fn apply(
        &self,
        c: &SimClient,
        req: &ApplyResourceChangeRequest,
    ) -> ApplyResourceChangeResponse {
        let id = req.prior_state.get_attr("id").as_str().map(str::to_string);
        let result = match (&req.prior_state, &req.planned_state) {
            (_, Value::Null(_)) => match id {
                Some(id) => c
                    .store
                    .remove(&id)
                    .await
                    .map(|()| Value::null())
                    .or_else(|e| fail("sim: delete failed", e.to_string())),
                None => Ok(Value::null()),
            },
            (_, planned) => self.write(c, id.as_deref(), planned, &req.config).await,
        };
        let (new_state, diagnostics) = match result {
            Ok(v) => (v, Diagnostics::new()),
            Err(d) => (req.prior_state.clone(), d),
        };
        ApplyResourceChangeResponse {
            new_state,
            private: req.planned_private.clone(),
            diagnostics,
            legacy_type_system: false,
        }
    }

    async fn create(&self, c: &SimClient, planned: &Value) -> CallResult<Value> {
        self.write(c, None, planned, &Value::null()).await
    }

    async fn read(&self, c: &SimClient, state: &Value) -> CallResult<Value> {
        c.read_call().await?;
        let Some(id) = state.get_attr("id").as_str() else {
            return fail("Invalid sim_secret state", "the state has no id");
        };
        match c.store.get(id).await {
            Ok(Some(obj)) if c.visible(&obj) => Ok(to_value(&obj)),
            Ok(_) => Ok(Value::null()),
            Err(e) => fail("sim: read failed", e.to_string()),
        }
    }

    async fn update(&self, c: &SimClient, prior: &Value, planned: &Value) -> CallResult<Value> {
        let id = prior.get_attr("id").as_str().map(str::to_string);
        self.write(c, id.as_deref(), planned, &Value::null()).await
    }

    async fn delete(&self, c: &SimClient, prior: &Value) -> CallResult<()> {
        if let Some(id) = prior.get_attr("id").as_str() {
            c.store
                .remove(id)
                .await
                .or_else(|e| fail("sim: delete failed", e.to_string()))?;
        }
        Ok(())
    }
}
