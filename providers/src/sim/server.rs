//! `sim_server`: a resource whose schema has a nested block of each nesting
//! mode (`boot` single, `disk` list, `rule` set, `label` map) and a protocol
//! 6 nested attribute (`endpoints`, a list of objects), for what draws and
//! plans blocks. Changing `boot.image` replaces it; the rest changes in
//! place. It keeps nothing in the sim's store (its object is what its state
//! holds, as `terraform_data`'s is), so the store and its log, which the
//! benchmarks read, see only `sim_object`s.
//!
//! Drift, for tests: a read finds `server-drift/ID.json` in the store
//! directory (a JSON object of top-level attributes and blocks, as state
//! files write them) and answers the object with those replaced, as if
//! someone had changed the server outside.

use super::SimClient;
use crate::framework::{CallResult, Resource, default_plan};
use async_trait::async_trait;
use fleetform_shared::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use fleetform_shared::schema::{Attribute, Block, NestedAttributes, NestedBlock, Nesting, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};

pub struct SimServerResource;

fn block(nesting: Nesting, attributes: &[(&str, Attribute)]) -> NestedBlock {
    let mut b = Block::default();
    for (name, a) in attributes {
        b.attributes.insert((*name).into(), a.clone());
    }
    NestedBlock {
        nesting,
        block: b,
        min_items: 0,
        max_items: 0,
    }
}

fn string() -> Attribute {
    Attribute::new(Type::String)
}

fn number() -> Attribute {
    Attribute::new(Type::Number)
}

/// The path whose change replaces the object.
fn boot_image() -> Vec<PathStep> {
    vec![PathStep::Key("boot".into()), PathStep::Key("image".into())]
}

#[async_trait]
impl Resource<SimClient> for SimServerResource {
    fn type_name(&self) -> &'static str {
        "sim_server"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "A server in the simulated cloud, described by nested blocks.".into();
        let attrs = &mut s.block.attributes;
        attrs.insert("id".into(), string().computed());
        attrs.insert("name".into(), string().required());
        attrs.insert("token".into(), string().optional().sensitive());
        let endpoint = [
            ("host".to_string(), string().required()),
            ("port".to_string(), number().optional()),
        ];
        let mut endpoints = Attribute::new(Type::list(Type::Object {
            attrs: [
                ("host".to_string(), Type::String),
                ("port".to_string(), Type::Number),
            ]
            .into(),
            optional: ["port".to_string()].into(),
        }))
        .optional();
        endpoints.nested = Some(NestedAttributes {
            nesting: Nesting::List,
            attributes: endpoint.into_iter().collect(),
        });
        attrs.insert("endpoints".into(), endpoints);
        let blocks = &mut s.block.block_types;
        blocks.insert(
            "boot".into(),
            block(Nesting::Single, &[("image", string().required())]),
        );
        blocks.insert(
            "disk".into(),
            block(
                Nesting::List,
                &[("size", number().required()), ("kind", string().optional())],
            ),
        );
        blocks.insert(
            "rule".into(),
            block(
                Nesting::Set,
                &[
                    ("port", number().required()),
                    ("protocol", string().optional()),
                ],
            ),
        );
        blocks.insert(
            "label".into(),
            block(Nesting::Map, &[("value", string().required())]),
        );
        s
    }

    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        let mut resp = default_plan(req, schema, &[]);
        let image = |v: &Value| v.get_attr("boot").get_attr("image").clone();
        let replacing = !req.prior_state.is_null()
            && !req.proposed_new_state.is_null()
            && image(&req.prior_state) != image(&req.proposed_new_state);
        if replacing {
            resp.requires_replace.push(boot_image());
            if let Value::Map(m) = &mut resp.planned_state {
                m.insert("id", Value::unknown());
            }
        }
        resp
    }

    async fn create(&self, c: &SimClient, planned: &Value) -> CallResult<Value> {
        c.write_call().await?;
        c.injected_failure("create")?;
        let mut v = planned.clone();
        if let Value::Map(m) = &mut v {
            m.insert("id", Value::from(uuid::Uuid::new_v4().to_string()));
        }
        Ok(v)
    }

    async fn read(&self, c: &SimClient, state: &Value) -> CallResult<Value> {
        c.read_call().await?;
        let Some(id) = state.get_attr("id").as_str() else {
            return Ok(state.clone());
        };
        let path = c
            .store
            .dir()
            .join("server-drift")
            .join(format!("{id}.json"));
        let Ok(text) = tokio::fs::read(&path).await else {
            return Ok(state.clone());
        };
        let drift = fleetform_shared::json::Json::parse(&text).map_err(|e| {
            fleetform_shared::diag::Diagnostic::error(
                "Invalid sim_server drift",
                format!("{}: {e}", path.display()),
            )
        })?;
        let mut out = state.clone();
        if let (Value::Map(m), fleetform_shared::json::Json::Object(changes)) = (&mut out, &drift) {
            for (k, v) in changes {
                m.insert(k.clone(), Value::from(v));
            }
        }
        Ok(out)
    }

    async fn update(&self, c: &SimClient, prior: &Value, planned: &Value) -> CallResult<Value> {
        c.write_call().await?;
        c.injected_failure("update")?;
        let mut v = planned.clone();
        if let Value::Map(m) = &mut v {
            m.insert("id", prior.get_attr("id").clone());
        }
        Ok(v)
    }

    async fn delete(&self, c: &SimClient, _prior: &Value) -> CallResult<()> {
        c.write_call().await?;
        c.injected_failure("delete")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(image: &str) -> Value {
        Value::object([
            ("id", Value::from("s1")),
            ("name", Value::from("web")),
            ("boot", Value::object([("image", Value::from(image))])),
        ])
    }

    #[test]
    fn a_new_boot_image_replaces_the_server_and_the_rest_updates_it() {
        let r = SimServerResource;
        let schema = r.schema();
        let plan = |prior: Value, proposed: Value| {
            r.plan(
                &PlanResourceChangeRequest {
                    type_name: "sim_server".into(),
                    prior_state: prior,
                    config: proposed.clone(),
                    proposed_new_state: proposed,
                    prior_private: vec![],
                },
                &schema,
            )
        };
        let resp = plan(server("debian"), server("alpine"));
        assert_eq!(resp.requires_replace, vec![boot_image()]);
        assert_eq!(resp.planned_state.get_attr("id"), &Value::unknown());
        let mut renamed = server("debian");
        if let Value::Map(m) = &mut renamed {
            m.insert("name", Value::from("db"));
        }
        let resp = plan(server("debian"), renamed);
        assert!(resp.requires_replace.is_empty());
        assert_eq!(resp.planned_state.get_attr("id"), &Value::from("s1"));
        let kinds: Vec<Nesting> = schema
            .block
            .block_types
            .values()
            .map(|b| b.nesting)
            .collect();
        for n in [Nesting::Single, Nesting::List, Nesting::Set, Nesting::Map] {
            assert!(kinds.contains(&n), "{n:?}");
        }
    }
}
