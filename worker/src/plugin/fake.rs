//! [`FakeProvider`]: an in-process [`Provider`] with one resource type,
//! `fake_thing` (`name` required and forcing replacement, `id` computed as
//! `fake-<name>`), and one data source, `fake_lookup` (finds a live
//! `fake_thing` by `name`), for unit tests of the code that calls providers.
//! [`Misbehaviour`] makes it break one provider contract on purpose.

use super::{Provider, ProviderError};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::*;
use fleetform_shared::schema::{Attribute, Block, ProviderSchema, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

pub const FAKE_THING: &str = "fake_thing";
pub const FAKE_LOOKUP: &str = "fake_lookup";

/// One way for the fake to break the provider protocol's contracts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Misbehaviour {
    #[default]
    None,
    /// Plans `name` as something other than the configuration says.
    PlanIgnoresConfig,
    /// Plans a known `id` that is different at every call.
    FinalPlanDiffers,
    /// Apply returns an `id` other than the known planned one.
    ApplyChangesKnown,
    /// Apply leaves `id` unknown.
    ApplyLeavesUnknown,
    /// Apply creates the object and reports an error with it.
    ApplyErrorWithObject,
    /// `fake_lookup` answers a `name` other than the configured one.
    ReadChangesConfig,
    /// `fake_lookup` leaves `id` unknown.
    ReadLeavesUnknown,
}

#[derive(Default)]
struct State {
    configured: bool,
    /// Live objects by id: what "the cloud" holds.
    objects: BTreeMap<String, Value>,
    calls: Vec<&'static str>,
    failing_names: BTreeSet<String>,
    misbehaviour: Misbehaviour,
    plans: u64,
}

#[derive(Default)]
pub struct FakeProvider {
    state: Mutex<State>,
}

impl FakeProvider {
    pub fn new() -> FakeProvider {
        FakeProvider::default()
    }

    /// Makes applying any `fake_thing` with this name fail with a diagnostic.
    pub fn fail_on(&self, name: &str) {
        self.state().failing_names.insert(name.to_string());
    }

    pub fn misbehave(&self, how: Misbehaviour) {
        self.state().misbehaviour = how;
    }

    /// The calls made so far, by protocol name, in order.
    pub fn calls(&self) -> Vec<&'static str> {
        self.state().calls.clone()
    }

    /// The objects that currently exist, by id.
    pub fn objects(&self) -> BTreeMap<String, Value> {
        self.state().objects.clone()
    }

    pub fn schema() -> ProviderSchema {
        let mut block = Block::default();
        block
            .attributes
            .insert("name".into(), Attribute::new(Type::String).required());
        block
            .attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        ProviderSchema {
            resources: [(
                FAKE_THING.to_string(),
                Schema {
                    version: 0,
                    block: block.clone(),
                },
            )]
            .into(),
            data_sources: [(FAKE_LOOKUP.to_string(), Schema { version: 0, block })].into(),
            ..ProviderSchema::default()
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("fake provider lock")
    }

    /// Records a call and checks the preconditions every real provider has.
    fn begin(
        &self,
        call: &'static str,
        type_name: Option<&str>,
        needs_config: bool,
    ) -> Result<(), ProviderError> {
        let mut st = self.state();
        st.calls.push(call);
        if let Some(t) = type_name.filter(|t| *t != FAKE_THING && *t != FAKE_LOOKUP) {
            return Err(ProviderError::UnknownType {
                kind: "resource",
                name: t.to_string(),
            });
        }
        if needs_config && !st.configured {
            return Err(ProviderError::Protocol {
                method: call,
                message: "provider is not configured".into(),
            });
        }
        Ok(())
    }
}

impl FakeProvider {
    /// The planned object, spoiled as `how` says.
    fn misplan(&self, how: Misbehaviour, planned: Value) -> Value {
        let Value::Map(mut m) = planned else {
            return planned;
        };
        match how {
            Misbehaviour::PlanIgnoresConfig => {
                m.insert("name", "not-the-config".into());
            }
            Misbehaviour::FinalPlanDiffers => {
                let n = self.state().plans;
                m.insert("id", Value::String(format!("fake-plan-{n}")));
            }
            _ => {}
        }
        Value::Map(m)
    }
}

/// The applied object and diagnostics, spoiled as `how` says.
fn misapply(how: Misbehaviour, obj: Value) -> (Value, Diagnostics) {
    let with_id = |id: Value| {
        let mut m = obj.as_map().cloned().unwrap_or_default();
        m.insert("id", id);
        Value::Map(m)
    };
    match how {
        Misbehaviour::ApplyChangesKnown => (with_id("changed-by-apply".into()), no_diags()),
        Misbehaviour::ApplyLeavesUnknown => (with_id(Value::unknown()), no_diags()),
        Misbehaviour::ApplyErrorWithObject => (
            obj.clone(),
            Diagnostic::error("Fake partial failure", "created, then failed").into(),
        ),
        _ => (obj, no_diags()),
    }
}

fn id_for(name: &Value) -> Value {
    match name {
        Value::String(n) => Value::String(format!("fake-{n}")),
        _ => Value::unknown(),
    }
}

fn no_diags() -> Diagnostics {
    Diagnostics::default()
}

#[async_trait]
impl Provider for FakeProvider {
    async fn get_provider_schema(&self) -> Result<GetProviderSchemaResponse, ProviderError> {
        self.begin("GetProviderSchema", None, false)?;
        Ok(GetProviderSchemaResponse {
            schema: FakeProvider::schema(),
            diagnostics: no_diags(),
        })
    }

    async fn validate_provider_config(
        &self,
        _: &ValidateProviderConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.begin("ValidateProviderConfig", None, false)?;
        Ok(no_diags())
    }

    async fn validate_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.begin("ValidateResourceConfig", Some(&req.type_name), false)?;
        let mut diags = no_diags();
        let name = req.config.get_attr("name");
        if name.is_null() {
            diags.push(Diagnostic::error(
                "Missing required argument",
                "The argument \"name\" is required.",
            ));
        }
        if name.as_str().is_some_and(|n| n.starts_with("deprecated-")) {
            diags.push(Diagnostic::warning(
                "Deprecated name",
                "Names starting with \"deprecated-\" will be refused.",
            ));
        }
        Ok(diags)
    }

    async fn validate_data_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.begin("ValidateDataResourceConfig", Some(&req.type_name), false)?;
        let mut diags = no_diags();
        if req.config.get_attr("name").is_null() {
            diags.push(Diagnostic::error(
                "Missing required argument",
                "The argument \"name\" is required.",
            ));
        }
        Ok(diags)
    }

    async fn configure_provider(
        &self,
        _: &ConfigureProviderRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.begin("ConfigureProvider", None, false)?;
        self.state().configured = true;
        Ok(no_diags())
    }

    async fn upgrade_resource_state(
        &self,
        req: &UpgradeResourceStateRequest,
    ) -> Result<UpgradeResourceStateResponse, ProviderError> {
        self.begin("UpgradeResourceState", Some(&req.type_name), false)?;
        let ty = FakeProvider::schema().resources[FAKE_THING]
            .block
            .implied_type();
        let upgraded_state =
            fleetform_shared::cty::from_json(&req.raw_state_json, &ty).map_err(|e| {
                ProviderError::Protocol {
                    method: "UpgradeResourceState",
                    message: e.to_string(),
                }
            })?;
        Ok(UpgradeResourceStateResponse {
            upgraded_state,
            diagnostics: no_diags(),
        })
    }

    async fn read_resource(
        &self,
        req: &ReadResourceRequest,
    ) -> Result<ReadResourceResponse, ProviderError> {
        self.begin("ReadResource", Some(&req.type_name), true)?;
        let id = req
            .current_state
            .get_attr("id")
            .as_str()
            .unwrap_or_default()
            .to_string();
        let new_state = self
            .state()
            .objects
            .get(&id)
            .cloned()
            .unwrap_or(Value::null());
        Ok(ReadResourceResponse {
            new_state,
            diagnostics: no_diags(),
            private: req.private.clone(),
        })
    }

    async fn plan_resource_change(
        &self,
        req: &PlanResourceChangeRequest,
    ) -> Result<PlanResourceChangeResponse, ProviderError> {
        self.begin("PlanResourceChange", Some(&req.type_name), true)?;
        let how = {
            let mut st = self.state();
            st.plans += 1;
            st.misbehaviour
        };
        let mut requires_replace = Vec::new();
        let planned_state = match (&req.prior_state, &req.proposed_new_state) {
            (_, Value::Null(_)) => Value::null(),
            (Value::Null(_), proposed) => Value::object([
                ("name", proposed.get_attr("name").clone()),
                ("id", id_for(proposed.get_attr("name"))),
            ]),
            (prior, proposed) => {
                let name = proposed.get_attr("name").clone();
                let id = if &name == prior.get_attr("name") {
                    prior.get_attr("id").clone()
                } else {
                    requires_replace.push(vec![PathStep::Key("name".into())]);
                    id_for(&name)
                };
                Value::object([("name", name), ("id", id)])
            }
        };
        let planned_state = self.misplan(how, planned_state);
        Ok(PlanResourceChangeResponse {
            planned_state,
            requires_replace,
            planned_private: Vec::new(),
            diagnostics: no_diags(),
            legacy_type_system: false,
        })
    }

    async fn apply_resource_change(
        &self,
        req: &ApplyResourceChangeRequest,
    ) -> Result<ApplyResourceChangeResponse, ProviderError> {
        self.begin("ApplyResourceChange", Some(&req.type_name), true)?;
        let mut st = self.state();
        let mut diagnostics = no_diags();
        let new_state = match &req.planned_state {
            Value::Null(_) => {
                if let Some(id) = req.prior_state.get_attr("id").as_str() {
                    st.objects.remove(id);
                }
                Value::null()
            }
            planned => {
                let name = planned.get_attr("name").clone();
                if name.as_str().is_some_and(|n| st.failing_names.contains(n)) {
                    diagnostics.push(Diagnostic::error(
                        "Fake failure",
                        "this name is set to fail",
                    ));
                    req.prior_state.clone()
                } else {
                    let id = id_for(&name);
                    let obj = Value::object([("name", name), ("id", id.clone())]);
                    st.objects
                        .insert(id.as_str().unwrap_or_default().to_string(), obj.clone());
                    let (obj, d) = misapply(st.misbehaviour, obj);
                    diagnostics.extend(d);
                    obj
                }
            }
        };
        Ok(ApplyResourceChangeResponse {
            new_state,
            private: Vec::new(),
            diagnostics,
            legacy_type_system: false,
        })
    }

    async fn read_data_source(
        &self,
        req: &ReadDataSourceRequest,
    ) -> Result<ReadDataSourceResponse, ProviderError> {
        self.begin("ReadDataSource", Some(&req.type_name), true)?;
        let st = self.state();
        let name = req.config.get_attr("name");
        let found = st.objects.values().find(|o| o.get_attr("name") == name);
        let Some(found) = found else {
            return Ok(ReadDataSourceResponse {
                state: Value::null(),
                diagnostics: Diagnostic::error("object not found", "no fake_thing has this name")
                    .into(),
            });
        };
        let state = match st.misbehaviour {
            Misbehaviour::ReadChangesConfig => Value::object([
                ("name", "other".into()),
                ("id", found.get_attr("id").clone()),
            ]),
            Misbehaviour::ReadLeavesUnknown => {
                Value::object([("name", name.clone()), ("id", Value::unknown())])
            }
            _ => found.clone(),
        };
        Ok(ReadDataSourceResponse {
            state,
            diagnostics: no_diags(),
        })
    }

    async fn stop(&self) -> Result<(), ProviderError> {
        self.begin("StopProvider", None, false)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str) -> Value {
        Value::object([("name", Value::from(name)), ("id", Value::null())])
    }

    #[tokio::test]
    async fn create_replace_and_delete_lifecycle() {
        let p = FakeProvider::new();
        let plan = |prior: Value, proposed: Value| PlanResourceChangeRequest {
            type_name: FAKE_THING.into(),
            prior_state: prior,
            config: proposed.clone(),
            proposed_new_state: proposed,
            prior_private: Vec::new(),
        };
        assert!(
            p.plan_resource_change(&plan(Value::null(), config("a")))
                .await
                .is_err(),
            "unconfigured"
        );
        let cfg = ConfigureProviderRequest {
            terraform_version: "1.9.0".into(),
            config: Value::object([] as [(&str, Value); 0]),
        };
        p.configure_provider(&cfg).await.unwrap();

        let planned = p
            .plan_resource_change(&plan(Value::null(), config("a")))
            .await
            .unwrap();
        assert_eq!(planned.planned_state.get_attr("id"), &Value::from("fake-a"));
        let apply = |prior: Value, planned: Value| ApplyResourceChangeRequest {
            type_name: FAKE_THING.into(),
            prior_state: prior,
            config: planned.clone(),
            planned_state: planned,
            planned_private: Vec::new(),
        };
        let created = p
            .apply_resource_change(&apply(Value::null(), planned.planned_state))
            .await
            .unwrap()
            .new_state;
        assert_eq!(p.objects().keys().collect::<Vec<_>>(), vec!["fake-a"]);

        let renamed = p
            .plan_resource_change(&plan(created.clone(), config("b")))
            .await
            .unwrap();
        assert_eq!(
            renamed.requires_replace,
            vec![vec![PathStep::Key("name".into())]]
        );

        p.apply_resource_change(&apply(created.clone(), Value::null()))
            .await
            .unwrap();
        let read = ReadResourceRequest {
            type_name: FAKE_THING.into(),
            current_state: created,
            private: Vec::new(),
        };
        assert_eq!(
            p.read_resource(&read).await.unwrap().new_state,
            Value::null()
        );
        assert_eq!(p.calls().first(), Some(&"PlanResourceChange"));
    }

    #[tokio::test]
    async fn failing_names_return_error_diagnostics() {
        let p = FakeProvider::new();
        p.fail_on("bad");
        let cfg = ConfigureProviderRequest {
            terraform_version: String::new(),
            config: Value::null(),
        };
        p.configure_provider(&cfg).await.unwrap();
        let req = ApplyResourceChangeRequest {
            type_name: FAKE_THING.into(),
            prior_state: Value::null(),
            planned_state: config("bad"),
            config: config("bad"),
            planned_private: Vec::new(),
        };
        let resp = p.apply_resource_change(&req).await.unwrap();
        assert!(resp.diagnostics.has_errors());
        assert!(p.objects().is_empty());
    }
}
