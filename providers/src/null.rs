//! The `null` provider, like `hashicorp/null`: `null_resource`, which does
//! nothing but get a random id and be replaced when its `triggers` change,
//! and the `null_data_source` that echoes its inputs.

use crate::framework::{CallResult, DataSource, Provider, Resource};
use async_trait::async_trait;
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::sync::Arc;

pub struct NullProvider;

#[async_trait]
impl Provider for NullProvider {
    type Client = ();

    fn name(&self) -> &'static str {
        "null"
    }

    fn config_schema(&self) -> Schema {
        Schema::default()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource<()>>> {
        vec![Arc::new(NullResource)]
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource<()>>> {
        vec![Arc::new(NullDataSource)]
    }

    async fn configure(&self, _config: &Value) -> CallResult<()> {
        Ok(())
    }
}

/// A random non-negative decimal id, as `hashicorp/null` makes them.
fn random_id() -> String {
    (rand::random::<u64>() >> 1).to_string()
}

fn with_attr(value: &Value, name: &str, v: Value) -> Value {
    let mut m = value.as_map().cloned().unwrap_or_default();
    m.insert(name.to_string(), v);
    Value::Map(m)
}

pub struct NullResource;

#[async_trait]
impl Resource<()> for NullResource {
    fn type_name(&self) -> &'static str {
        "null_resource"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description =
            "A resource that does nothing, replaced whenever its triggers change.".into();
        s.block.attributes.insert(
            "triggers".into(),
            Attribute::new(Type::map(Type::String))
                .optional()
                .describe("Arbitrary values whose change requires replacement."),
        );
        s.block
            .attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["triggers"]
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        Ok(with_attr(planned, "id", Value::String(random_id())))
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
}

pub struct NullDataSource;

#[async_trait]
impl DataSource<()> for NullDataSource {
    fn type_name(&self) -> &'static str {
        "null_data_source"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        let attrs = &mut s.block.attributes;
        attrs.insert(
            "inputs".into(),
            Attribute::new(Type::map(Type::String)).optional(),
        );
        attrs.insert(
            "outputs".into(),
            Attribute::new(Type::map(Type::String)).computed(),
        );
        attrs.insert("random".into(), Attribute::new(Type::String).computed());
        attrs.insert("id".into(), Attribute::new(Type::String).computed());
        s
    }

    async fn read(&self, _: &(), config: &Value) -> CallResult<Value> {
        let outputs = config.get_attr("inputs").clone();
        let v = with_attr(config, "outputs", outputs);
        let v = with_attr(&v, "random", Value::String(random_id()));
        Ok(with_attr(&v, "id", Value::from("static")))
    }
}
