//! The `sim_object` data source: finds one existing `sim_object` by `name`
//! or by `id` (exactly one of them) and reports all its attributes.

use super::SimClient;
use super::object::to_value;
use crate::framework::{CallResult, DataSource, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub struct SimObjectDataSource;

#[async_trait]
impl DataSource<SimClient> for SimObjectDataSource {
    fn type_name(&self) -> &'static str {
        "sim_object"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "An existing object in the simulated cloud.".into();
        let attrs = &mut s.block.attributes;
        attrs.insert(
            "name".into(),
            Attribute::new(Type::String)
                .optional()
                .computed()
                .describe("Find the object by name (or give id)."),
        );
        attrs.insert(
            "id".into(),
            Attribute::new(Type::String)
                .optional()
                .computed()
                .describe("Find the object by id (or give name)."),
        );
        attrs.insert(
            "tags".into(),
            Attribute::new(Type::map(Type::String)).computed(),
        );
        attrs.insert("size".into(), Attribute::new(Type::Number).computed());
        s
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let (name, id) = (config.get_attr("name"), config.get_attr("id"));
        // Unknown values may turn out null or not: decide once they are known.
        if name.is_unknown() || id.is_unknown() || name.is_null() != id.is_null() {
            return Diagnostics::new();
        }
        Diagnostic::error(
            "Invalid combination of arguments",
            "Exactly one of \"name\" or \"id\" must be set.",
        )
        .into()
    }

    async fn read(&self, c: &SimClient, config: &Value) -> CallResult<Value> {
        c.read_call().await?;
        let found = match (config.get_attr("id"), config.get_attr("name")) {
            (Value::String(id), _) => match c.store.get(id).await {
                Ok(o) => Ok(o.into_iter().collect()),
                // Not an id the sim would ever give out.
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(vec![]),
                Err(e) => Err(e),
            },
            (_, Value::String(name)) => c.store.list().await.map(|all| {
                all.into_iter()
                    .filter(|o| o.kind.is_none() && &o.name == name)
                    .collect()
            }),
            _ => {
                return fail(
                    "Invalid sim_object lookup",
                    "name or id must be a known string",
                );
            }
        };
        let mut found: Vec<_> = match found {
            Ok(f) => f,
            Err(e) => return fail("sim: read failed", e.to_string()),
        };
        found.retain(|o| o.kind.is_none() && c.visible(o));
        match found.as_slice() {
            [obj] => Ok(to_value(obj)),
            [] => fail(
                "object not found",
                format!("no sim_object matches {}", describe(config)),
            ),
            many => fail(
                "Multiple objects found",
                format!("{} sim_objects match {}", many.len(), describe(config)),
            ),
        }
    }
}

fn describe(config: &Value) -> String {
    match (config.get_attr("id"), config.get_attr("name")) {
        (Value::String(id), _) => format!("id {id:?}"),
        (_, Value::String(name)) => format!("name {name:?}"),
        _ => "the lookup".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: Value, id: Value) -> Value {
        Value::object([("name", name), ("id", id)])
    }

    #[test]
    fn exactly_one_of_name_or_id_unless_unknown() {
        let ds = SimObjectDataSource;
        let errs = |v| ds.validate(&v).has_errors();
        assert!(!errs(lookup("a".into(), Value::null())));
        assert!(!errs(lookup(Value::null(), "x".into())));
        assert!(errs(lookup("a".into(), "x".into())));
        assert!(errs(lookup(Value::null(), Value::null())));
        assert!(!errs(lookup(Value::unknown(), Value::null())));
    }
}
