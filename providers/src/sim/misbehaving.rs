//! `sim_misbehaving`: a resource type that breaks one provider contract on
//! purpose, chosen by its `mode`, so tests can see how fleetform reacts.
//! Its objects live in the sim store (kind `sim_misbehaving`, `name` = the
//! mode, tag `value`), so tests can count what really exists.

use super::SimClient;
use super::stored::SimObject;
use crate::framework::{CallResult, Resource, default_plan, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, PlanResourceChangeRequest,
    PlanResourceChangeResponse,
};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub const KIND: &str = "sim_misbehaving";

/// What the resource does wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Nothing: a well-behaved resource.
    Ok,
    /// Plans `mode` as something other than the configuration says.
    PlanIgnoresConfig,
    /// Plans a known `value` that is different at every plan.
    FinalPlanDiffers,
    /// Plans a known `value`, and apply returns another.
    ApplyChangesKnown,
    /// Apply leaves `value` unknown.
    ApplyLeavesUnknown,
    /// Apply creates the object and reports an error along with it.
    ApplyErrorWithObject,
    /// Apply fails without creating anything.
    ApplyError,
    /// Deleting fails while the store directory holds a file named
    /// `deny-delete`, so a test can make a delete fail and later succeed.
    DeleteDenied,
}

impl Mode {
    pub const ALL: [(&'static str, Mode); 8] = [
        ("ok", Mode::Ok),
        ("plan_ignores_config", Mode::PlanIgnoresConfig),
        ("final_plan_differs", Mode::FinalPlanDiffers),
        ("apply_changes_known", Mode::ApplyChangesKnown),
        ("apply_leaves_unknown", Mode::ApplyLeavesUnknown),
        ("apply_error_with_object", Mode::ApplyErrorWithObject),
        ("apply_error", Mode::ApplyError),
        ("delete_denied", Mode::DeleteDenied),
    ];

    fn of(v: &Value) -> Option<Mode> {
        let name = v.get_attr("mode").as_str()?;
        Mode::ALL.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }
}

pub struct SimMisbehavingResource;

fn with(v: &Value, name: &str, x: Value) -> Value {
    let mut m = v.as_map().cloned().unwrap_or_default();
    m.insert(name.to_string(), x);
    Value::Map(m)
}

fn to_value(o: &SimObject) -> Value {
    let value = o
        .tags
        .as_ref()
        .and_then(|t| t.get("value"))
        .map_or(Value::null(), |v| Value::from(v.as_str()));
    let note = o
        .tags
        .as_ref()
        .and_then(|t| t.get("note"))
        .map_or(Value::null(), |v| Value::from(v.as_str()));
    Value::object([
        ("id", Value::from(o.id.as_str())),
        ("mode", Value::from(o.name.as_str())),
        ("note", note),
        ("value", value),
    ])
}

impl SimMisbehavingResource {
    /// Stores the object `planned` describes; returns its state.
    async fn write(&self, c: &SimClient, prior: &Value, planned: &Value) -> CallResult<Value> {
        c.write_call().await?;
        let id = match prior.get_attr("id").as_str() {
            Some(id) => id.to_string(),
            None => uuid::Uuid::new_v4().to_string(),
        };
        let value = match planned.get_attr("value") {
            Value::String(v) => v.clone(),
            _ => format!("value-{}", &id[..8]),
        };
        let obj = SimObject {
            id,
            name: planned.get_attr("mode").as_str().unwrap_or_default().into(),
            tags: Some(
                [("value".to_string(), value)]
                    .into_iter()
                    .chain(
                        planned
                            .get_attr("note")
                            .as_str()
                            .map(|n| ("note".to_string(), n.to_string())),
                    )
                    .collect(),
            ),
            size: None,
            kind: Some(KIND.into()),
            created_ms: None,
        };
        let written = if prior.is_null() {
            c.store.create(&obj).await.map(drop)
        } else {
            c.store.put(&obj).await
        };
        if let Err(e) = written {
            return fail("sim: write failed", e.to_string());
        }
        Ok(to_value(&obj))
    }
}

#[async_trait]
impl Resource<SimClient> for SimMisbehavingResource {
    fn type_name(&self) -> &'static str {
        KIND
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description = "A resource that breaks one provider contract on purpose.".into();
        let attrs = &mut s.block.attributes;
        attrs.insert(
            "mode".into(),
            Attribute::new(Type::String)
                .required()
                .describe("Which contract to break; \"ok\" breaks none."),
        );
        attrs.insert(
            "note".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("Free text compared without regard to case: a change of case only is normalised away (the plan keeps the prior value)."),
        );
        attrs.insert("value".into(), Attribute::new(Type::String).computed());
        attrs.insert("id".into(), Attribute::new(Type::String).computed());
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["mode"]
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mode = config.get_attr("mode");
        if mode.is_unknown() || Mode::of(config).is_some() {
            return Diagnostics::new();
        }
        let modes: Vec<&str> = Mode::ALL.iter().map(|(n, _)| *n).collect();
        Diagnostic::error(
            "Invalid mode",
            format!("mode must be one of {}", modes.join(", ")),
        )
        .into()
    }

    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        let mut resp = default_plan(req, schema, self.replace_on_change());
        if resp.planned_state.is_null() {
            return resp;
        }
        // Normalisation: a note that differs from the prior one only in case
        // is the same note, so the plan keeps the prior value.
        if let (Some(p), Some(c)) = (
            req.prior_state.get_attr("note").as_str(),
            req.config.get_attr("note").as_str(),
        ) && p.eq_ignore_ascii_case(c)
        {
            resp.planned_state = with(&resp.planned_state, "note", Value::from(p));
        }
        let planned = &resp.planned_state;
        resp.planned_state = match Mode::of(&req.config) {
            Some(Mode::PlanIgnoresConfig) => with(planned, "mode", "ignored".into()),
            Some(Mode::FinalPlanDiffers) => with(
                planned,
                "value",
                Value::String(uuid::Uuid::new_v4().to_string()),
            ),
            Some(Mode::ApplyChangesKnown) if planned.get_attr("value").is_unknown() => {
                with(planned, "value", "planned".into())
            }
            _ => resp.planned_state,
        };
        resp
    }

    async fn apply(
        &self,
        c: &SimClient,
        req: &ApplyResourceChangeRequest,
    ) -> ApplyResourceChangeResponse {
        let mut resp = ApplyResourceChangeResponse {
            new_state: req.prior_state.clone(),
            private: req.planned_private.clone(),
            diagnostics: Diagnostics::new(),
            legacy_type_system: false,
        };
        let (prior, planned) = (&req.prior_state, &req.planned_state);
        if planned.is_null() {
            match self.delete(c, prior).await {
                Ok(()) => resp.new_state = Value::null(),
                Err(d) => resp.diagnostics = d,
            }
            return resp;
        }
        let mode = Mode::of(&req.config);
        if mode == Some(Mode::ApplyError) {
            resp.diagnostics.push(Diagnostic::error(
                "Simulated failure",
                "sim_misbehaving: apply_error",
            ));
            return resp;
        }
        let obj = match self.write(c, prior, planned).await {
            Ok(obj) => obj,
            Err(d) => {
                resp.diagnostics = d;
                return resp;
            }
        };
        resp.new_state = match mode {
            Some(Mode::ApplyChangesKnown) => with(&obj, "value", "applied".into()),
            Some(Mode::ApplyLeavesUnknown) => with(&obj, "value", Value::unknown()),
            _ => obj,
        };
        if mode == Some(Mode::ApplyErrorWithObject) {
            resp.diagnostics.push(Diagnostic::error(
                "Simulated partial failure",
                "sim_misbehaving: the object was created, then the apply failed",
            ));
        }
        resp
    }

    async fn create(&self, c: &SimClient, planned: &Value) -> CallResult<Value> {
        self.write(c, &Value::null(), planned).await
    }

    async fn read(&self, c: &SimClient, state: &Value) -> CallResult<Value> {
        c.read_call().await?;
        let Some(id) = state.get_attr("id").as_str() else {
            return fail("Invalid sim_misbehaving state", "the state has no id");
        };
        match c.store.get(id).await {
            Ok(o) => Ok(o
                .as_ref()
                .filter(|o| c.visible(o))
                .map_or(Value::null(), to_value)),
            Err(e) => fail("sim: read failed", e.to_string()),
        }
    }

    async fn update(&self, c: &SimClient, prior: &Value, planned: &Value) -> CallResult<Value> {
        self.write(c, prior, planned).await
    }

    async fn delete(&self, c: &SimClient, prior: &Value) -> CallResult<()> {
        c.write_call().await?;
        let Some(id) = prior.get_attr("id").as_str() else {
            return fail("Invalid sim_misbehaving state", "the state has no id");
        };
        if Mode::of(prior) == Some(Mode::DeleteDenied) && c.store.dir().join("deny-delete").exists()
        {
            return fail(
                "Simulated delete failure",
                format!("sim: deleting {id} is denied while deny-delete exists in the store"),
            );
        }
        match c.store.remove(id).await {
            Ok(()) => Ok(()),
            Err(e) => fail("sim: delete failed", e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(mode: &str) -> Value {
        let r = SimMisbehavingResource;
        let config = Value::object([
            ("mode", Value::from(mode)),
            ("value", Value::null()),
            ("id", Value::null()),
        ]);
        let req = PlanResourceChangeRequest {
            type_name: KIND.into(),
            prior_state: Value::null(),
            proposed_new_state: config.clone(),
            config,
            prior_private: vec![],
        };
        r.plan(&req, &r.schema()).planned_state
    }

    #[test]
    fn plans_break_the_contract_their_mode_names() {
        let ok = plan("ok");
        assert_eq!(ok.get_attr("mode"), &Value::from("ok"));
        assert!(ok.get_attr("value").is_unknown());
        assert_eq!(
            plan("plan_ignores_config").get_attr("mode"),
            &Value::from("ignored")
        );
        let (a, b) = (plan("final_plan_differs"), plan("final_plan_differs"));
        assert!(a.get_attr("value").is_wholly_known());
        assert_ne!(a.get_attr("value"), b.get_attr("value"));
        assert_eq!(
            plan("apply_changes_known").get_attr("value"),
            &Value::from("planned")
        );
    }

    #[test]
    fn unknown_modes_are_rejected_at_validation() {
        let r = SimMisbehavingResource;
        let cfg = |m: Value| Value::object([("mode", m)]);
        assert!(r.validate(&cfg("nonsense".into())).has_errors());
        assert!(!r.validate(&cfg("apply_error".into())).has_errors());
        assert!(!r.validate(&cfg(Value::unknown())).has_errors());
    }
}
