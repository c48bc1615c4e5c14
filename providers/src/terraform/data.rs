//! `terraform_data`: a resource that does nothing but follow the managed
//! resource lifecycle. `input` is copied to `output` at apply time, a change
//! of `triggers_replace` replaces the object, and `id` is a random
//! UUID-formatted string chosen when the object is created.

use crate::defaults::set_attr;
use crate::framework::{CallResult, Resource};
use async_trait::async_trait;
use fleetform_shared::cty;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::json::Json;
use fleetform_shared::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, PlanResourceChangeRequest,
    PlanResourceChangeResponse, UpgradeResourceStateRequest, UpgradeResourceStateResponse,
};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};

pub struct TerraformData;

/// A new object id the way Terraform makes them (hashicorp/go-uuid's
/// `GenerateUUID`): 16 random bytes as lowercase hex in 8-4-4-4-12 groups,
/// without setting UUID version or variant bits.
pub fn generate_id() -> String {
    let b: [u8; 16] = rand::random();
    let hex = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// What a new object's `output` is planned as: null when there is no
/// input (the output always matches the input), otherwise known after apply,
/// of the input's type (as Terraform plans it: `cty.UnknownVal(input.Type())`).
fn fresh_output(input: &Value) -> Value {
    if input.is_null() {
        Value::null()
    } else {
        Value::unknown_of(input.ty())
    }
}

/// The planned object with every unknown resolved: `output` takes the
/// input, `id` a new id (Terraform's apply for create, update and replace).
fn resolve_planned(planned: &Value) -> Value {
    let mut v = planned.clone();
    if planned.get_attr("output").is_unknown() {
        v = set_attr(&v, "output", planned.get_attr("input").clone());
    }
    if planned.get_attr("id").is_unknown() {
        v = set_attr(&v, "id", Value::String(generate_id()));
    }
    v
}

/// A stored object as the current schema's value. Terraform's state (and
/// cty JSON) wraps dynamic values as `{"value": …, "type": …}`; fleetform
/// hands stored objects over as plain JSON without types. Both are
/// accepted: a dynamic attribute holding exactly a `value` and a valid
/// `type` is unwrapped, anything else is taken as the plain value.
fn decode_stored(raw: &[u8], schema: &Schema) -> Result<Value, String> {
    let json = Json::parse(raw).map_err(|e| format!("invalid JSON: {e}"))?;
    if json.is_null() {
        return Ok(Value::null());
    }
    let obj = json
        .as_object()
        .ok_or_else(|| "the stored object is not a JSON object".to_string())?;
    if let Some(extra) = obj
        .keys()
        .find(|k| !schema.block.attributes.contains_key(k.as_str()))
    {
        return Err(format!("unsupported attribute {extra:?}"));
    }
    let mut out = std::collections::BTreeMap::new();
    for (name, attr) in &schema.block.attributes {
        let j = obj.get(name).cloned().unwrap_or(Json::Null);
        let text = j.to_string();
        let v = if attr.ty == Type::Dynamic {
            let wrapped = j
                .as_object()
                .is_some_and(|o| o.len() == 2 && o.contains_key("value") && o.contains_key("type"));
            match cty::from_json(text.as_bytes(), &Type::Dynamic) {
                Ok(v) if wrapped => v,
                _ => Value::from(&j),
            }
        } else {
            cty::from_json(text.as_bytes(), &attr.ty).map_err(|e| format!("{name}: {e}"))?
        };
        out.insert(name.clone(), v);
    }
    Ok(Value::Map(out.into()))
}

#[async_trait]
impl Resource<()> for TerraformData {
    fn type_name(&self) -> &'static str {
        "terraform_data"
    }

    /// Terraform's schema exactly: no descriptions, version 0.
    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        let a = &mut s.block.attributes;
        a.insert("input".into(), Attribute::new(Type::Dynamic).optional());
        a.insert("output".into(), Attribute::new(Type::Dynamic).computed());
        a.insert(
            "triggers_replace".into(),
            Attribute::new(Type::Dynamic).optional(),
        );
        a.insert("id".into(), Attribute::new(Type::String).computed());
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["triggers_replace"]
    }

    /// Core does not reject values for computed-only attributes, so the
    /// provider does.
    fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        if config.is_null() {
            return d;
        }
        for attr in ["id", "output"] {
            if !config.get_attr(attr).is_null() {
                d.push(Diagnostic::error(
                    format!("{attr:?} attribute is read-only"),
                    "",
                ));
            }
        }
        d
    }

    /// Create: `id` unknown and `output` unknown unless there is no input.
    /// A changed `triggers_replace` replaces the object (the same plan as a
    /// create); otherwise a changed `input` makes `output` unknown, even
    /// when the new input is wholly known. Values are compared exactly
    /// (cty's RawEquals: an unknown never equals the known prior value).
    fn plan(&self, req: &PlanResourceChangeRequest, _: &Schema) -> PlanResourceChangeResponse {
        let mut resp = PlanResourceChangeResponse {
            planned_state: Value::null(),
            requires_replace: Vec::new(),
            planned_private: req.prior_private.clone(),
            diagnostics: Diagnostics::new(),
            legacy_type_system: false,
        };
        if req.proposed_new_state.is_null() {
            return resp;
        }
        let proposed = &req.proposed_new_state;
        let prior = &req.prior_state;
        let input = proposed.get_attr("input");
        let mut planned = proposed.clone();
        if prior.is_null() {
            planned = set_attr(&planned, "id", Value::unknown());
            planned = set_attr(&planned, "output", fresh_output(input));
        } else if prior.get_attr("triggers_replace") != proposed.get_attr("triggers_replace") {
            resp.requires_replace
                .push(vec![PathStep::Key("triggers_replace".into())]);
            planned = set_attr(&planned, "id", Value::unknown());
            planned = set_attr(&planned, "output", fresh_output(input));
        } else if prior.get_attr("input") != input {
            planned = set_attr(&planned, "output", Value::unknown_of(input.ty()));
        }
        resp.planned_state = planned;
        resp
    }

    /// Terraform decodes stored state of any schema version as the current
    /// schema (there has only ever been version 0); see [`decode_stored`]
    /// for the two forms dynamic values arrive in.
    fn upgrade(
        &self,
        req: &UpgradeResourceStateRequest,
        schema: &Schema,
    ) -> UpgradeResourceStateResponse {
        let mut resp = UpgradeResourceStateResponse {
            upgraded_state: Value::null(),
            diagnostics: Diagnostics::new(),
        };
        match decode_stored(&req.raw_state_json, schema) {
            Ok(v) => resp.upgraded_state = v,
            Err(e) => resp
                .diagnostics
                .push(Diagnostic::error("Invalid stored state", e)),
        }
        resp
    }

    /// One rule for create, update and replace: resolve what the plan left
    /// unknown; a null plan deletes.
    async fn apply(&self, _: &(), req: &ApplyResourceChangeRequest) -> ApplyResourceChangeResponse {
        let new_state = if req.planned_state.is_null() {
            Value::null()
        } else {
            resolve_planned(&req.planned_state)
        };
        ApplyResourceChangeResponse {
            new_state,
            private: req.planned_private.clone(),
            diagnostics: Diagnostics::new(),
            legacy_type_system: false,
        }
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        Ok(resolve_planned(planned))
    }

    async fn read(&self, _: &(), state: &Value) -> CallResult<Value> {
        Ok(state.clone())
    }

    async fn update(&self, _: &(), _prior: &Value, planned: &Value) -> CallResult<Value> {
        Ok(resolve_planned(planned))
    }

    async fn delete(&self, _: &(), _prior: &Value) -> CallResult<()> {
        Ok(())
    }

    /// Only the id can be imported: nothing else can be derived from it.
    async fn import(&self, _: &(), id: &str) -> CallResult<Value> {
        Ok(Value::object([
            ("id", Value::from(id)),
            ("input", Value::null()),
            ("output", Value::null()),
            ("triggers_replace", Value::null()),
        ]))
    }
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;
