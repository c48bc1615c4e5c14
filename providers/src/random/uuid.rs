//! `random_uuid`: a random UUID, as `result` and `id`.

use super::base_schema;
use crate::defaults::set_attr;
use crate::framework::{CallResult, Resource, fail};
use async_trait::async_trait;
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub struct RandomUuid;

#[async_trait]
impl Resource<()> for RandomUuid {
    fn type_name(&self) -> &'static str {
        "random_uuid"
    }

    fn schema(&self) -> Schema {
        let mut s = base_schema(
            "Generates a random universally unique identifier.",
            "The generated uuid presented in string format.",
        );
        s.block.attributes.insert(
            "result".into(),
            Attribute::new(Type::String)
                .computed()
                .describe("The generated uuid presented in string format."),
        );
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["keepers"]
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        let u = Value::String(uuid::Uuid::new_v4().hyphenated().to_string());
        Ok(set_attr(&set_attr(planned, "result", u.clone()), "id", u))
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
        match uuid::Uuid::parse_str(id) {
            Ok(u) => {
                let u = Value::String(u.hyphenated().to_string());
                Ok(Value::object([
                    ("id", u.clone()),
                    ("result", u),
                    ("keepers", Value::null()),
                ]))
            }
            Err(e) => fail(
                "Import Random UUID Error",
                format!("{id:?} is not a uuid: {e}"),
            ),
        }
    }
}
