//! `sim_object`: a named object with tags and a size; renaming replaces it,
//! tags and size change in place.

use super::SimClient;
use super::stored::SimObject;
use crate::framework::{CallResult, Resource, default_plan, fail};
use async_trait::async_trait;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub struct SimObjectResource;

fn to_object(id: String, v: &Value) -> CallResult<SimObject> {
    let Some(name) = v.get_attr("name").as_str() else {
        return fail("Invalid sim_object", "name must be a known string");
    };
    let tags = match v.get_attr("tags") {
        Value::Null(_) => None,
        Value::Map(m) => {
            let mut tags = std::collections::BTreeMap::new();
            for (k, t) in m {
                let Some(s) = t.as_str() else {
                    return fail(
                        "Invalid sim_object",
                        format!("tags[{k:?}] must be a known string"),
                    );
                };
                tags.insert(k.to_string(), s.to_string());
            }
            Some(tags)
        }
        other => {
            return fail(
                "Invalid sim_object",
                format!("tags must be a map of strings, got {}", other.kind()),
            );
        }
    };
    let size = match v.get_attr("size") {
        Value::Null(_) => None,
        Value::Number(n) => Some(n.clone()),
        other => {
            return fail(
                "Invalid sim_object",
                format!("size must be a known number, got {}", other.kind()),
            );
        }
    };
    Ok(SimObject {
        id,
        name: name.to_string(),
        tags,
        size,
        kind: None,
        created_ms: None,
    })
}

pub(super) fn to_value(o: &SimObject) -> Value {
    let tags = match &o.tags {
        Some(t) => Value::Map(
            t.iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect(),
        ),
        None => Value::null(),
    };
    let size = o.size.clone().map(Value::Number).unwrap_or(Value::null());
    Value::object([
        ("id", Value::from(o.id.as_str())),
        ("name", Value::from(o.name.as_str())),
        ("tags", tags),
        ("size", size),
    ])
}

fn id_of(state: &Value) -> CallResult<&str> {
    match state.get_attr("id").as_str() {
        Some(id) => Ok(id),
        None => fail("Invalid sim_object state", "the state has no id"),
    }
}

/// The simulated cloud refuses a name that starts with `refused-` when the
/// object is created, not when it is planned, as real APIs check some
/// arguments only then: what a failed create looks like to the tools
/// (failure isolation's tests and benchmark make instances fail this way).
fn refuse_name(planned: &Value) -> CallResult<()> {
    match planned.get_attr("name").as_str() {
        Some(name) if name.starts_with(REFUSED) => fail(
            "InvalidParameterValue",
            format!("sim_object name {name:?} is not valid: the prefix {REFUSED:?} is reserved."),
        ),
        _ => Ok(()),
    }
}

/// See [`refuse_name`].
const REFUSED: &str = "refused-";

fn io_failure<T>(op: &str, e: std::io::Error) -> CallResult<T> {
    fail(format!("sim: {op} failed"), e.to_string())
}

#[async_trait]
impl Resource<SimClient> for SimObjectResource {
    fn type_name(&self) -> &'static str {
        "sim_object"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "An object in the simulated cloud.".into();
        let attrs = &mut s.block.attributes;
        attrs.insert(
            "name".into(),
            Attribute::new(Type::String)
                .required()
                .describe("Changing it replaces the object."),
        );
        attrs.insert(
            "tags".into(),
            Attribute::new(Type::map(Type::String)).optional(),
        );
        attrs.insert("size".into(), Attribute::new(Type::Number).optional());
        attrs.insert("id".into(), Attribute::new(Type::String).computed());
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["name"]
    }

    /// Like a cloud's deletion protection: an object tagged
    /// `protected = "true"` cannot be planned for destruction (the host asks
    /// because the provider advertises `plan_destroy`).
    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        let mut resp = default_plan(req, schema, self.replace_on_change());
        let protected =
            req.prior_state.get_attr("tags").get_attr("protected") == &Value::from("true");
        if req.proposed_new_state.is_null() && protected {
            resp.diagnostics.push(Diagnostic::error(
                "Object is protected",
                format!(
                    "sim_object {:?} is tagged protected = \"true\"; remove the tag before destroying it.",
                    req.prior_state.get_attr("name").as_str().unwrap_or_default()
                ),
            ));
        }
        resp
    }

    async fn create(&self, c: &SimClient, planned: &Value) -> CallResult<Value> {
        let started = super::stored::now_ms();
        c.write_call().await?;
        c.injected_failure("create")?;
        refuse_name(planned)?;
        let obj = to_object(uuid::Uuid::new_v4().to_string(), planned)?;
        let obj = c
            .store
            .create_for_call(&obj, Some(started))
            .await
            .or_else(|e| io_failure("create", e))?;
        tracing::debug!(id = %obj.id, name = %obj.name, "created");
        c.response_latency().await;
        Ok(to_value(&obj))
    }

    async fn read(&self, c: &SimClient, state: &Value) -> CallResult<Value> {
        c.read_call().await?;
        super::readlog::note(c.store.dir(), id_of(state)?);
        match c.store.get(id_of(state)?).await {
            Ok(Some(obj)) if c.visible(&obj) => Ok(to_value(&obj)),
            Ok(_) => Ok(Value::null()),
            Err(e) => io_failure("read", e),
        }
    }

    async fn update(&self, c: &SimClient, prior: &Value, planned: &Value) -> CallResult<Value> {
        c.write_call().await?;
        c.injected_failure("update")?;
        let obj = to_object(id_of(prior)?.to_string(), planned)?;
        c.store
            .put(&obj)
            .await
            .or_else(|e| io_failure("update", e))?;
        c.response_latency().await;
        Ok(to_value(&obj))
    }

    async fn delete(&self, c: &SimClient, prior: &Value) -> CallResult<()> {
        c.write_call().await?;
        c.injected_failure("delete")?;
        let id = id_of(prior)?;
        c.store
            .remove(id)
            .await
            .or_else(|e| io_failure("delete", e))?;
        tracing::debug!(id, "deleted");
        c.response_latency().await;
        Ok(())
    }

    async fn import(&self, c: &SimClient, id: &str) -> CallResult<Value> {
        c.read_call().await?;
        match c.store.get(id).await {
            Ok(Some(obj)) if c.visible(&obj) => Ok(to_value(&obj)),
            Ok(_) => fail(
                "Cannot import non-existent object",
                format!("no sim_object with id {id:?}"),
            ),
            Err(e) => io_failure("import", e),
        }
    }
}
