//! What a provider and its resource types implement, and the planning rules
//! the framework applies for them.
//!
//! The framework computes only what a provider must: Terraform core sends the
//! proposed new state; [`default_plan`] marks unset computed attributes
//! unknown on create (and on replace), keeps their prior values on update,
//! and reports which changed attributes force replacement.

use async_trait::async_trait;
use fleetform_shared::cty;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, PlanResourceChangeRequest,
    PlanResourceChangeResponse, UpgradeResourceStateRequest, UpgradeResourceStateResponse,
};
use fleetform_shared::schema::Schema;
use fleetform_shared::value::{PathStep, Value};
use std::sync::Arc;

tokio::task_local! {
    /// The stop signal of the provider serving the current call.
    static STOP: StopSignal;
}

/// `StopProvider` for the calls of one provider process: once raised it stays
/// raised (as in Terraform's SDKs, a stopped provider is not used again).
#[derive(Clone, Default)]
pub struct StopSignal {
    token: Arc<tokio::sync::watch::Sender<bool>>,
}

impl StopSignal {
    pub fn raise(&self) {
        self.token.send_replace(true);
    }

    pub fn is_raised(&self) -> bool {
        *self.token.borrow()
    }

    async fn raised(&self) {
        let mut rx = self.token.subscribe();
        let _ = rx.wait_for(|s| *s).await;
    }

    /// Runs `call` with this signal visible to [`stoppable_sleep`].
    pub async fn scope<F: std::future::Future>(&self, call: F) -> F::Output {
        STOP.scope(self.clone(), call).await
    }
}

/// Waits `d`, unless the provider is told to stop first: then fails with
/// the "Interrupted" diagnostic and `why` as detail. Outside a call (unit
/// tests) it simply waits.
pub async fn stoppable_sleep(d: std::time::Duration, why: &str) -> CallResult<()> {
    let Ok(stop) = STOP.try_with(StopSignal::clone) else {
        tokio::time::sleep(d).await;
        return Ok(());
    };
    if stop.is_raised() {
        return fail("Interrupted", why);
    }
    tokio::select! {
        () = tokio::time::sleep(d) => Ok(()),
        () = stop.raised() => fail("Interrupted", why),
    }
}

/// The outcome of a provider operation: a value, or the diagnostics that
/// explain why there is none.
pub type CallResult<T> = Result<T, Diagnostics>;

/// One error diagnostic as a failed [`CallResult`].
pub fn fail<T>(summary: impl Into<String>, detail: impl Into<String>) -> CallResult<T> {
    Err(Diagnostics(vec![Diagnostic::error(summary, detail)]))
}

/// An unconfigured provider: its schemas, its resource types, and how to
/// turn a configuration into the configured [`Provider::Client`].
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// The configured provider, handed to every resource operation.
    type Client: Send + Sync + 'static;

    /// The provider's type name (`sim`, `null`), for logs.
    fn name(&self) -> &'static str;

    fn config_schema(&self) -> Schema;

    fn resources(&self) -> Vec<Arc<dyn Resource<Self::Client>>>;

    fn data_sources(&self) -> Vec<Arc<dyn DataSource<Self::Client>>> {
        Vec::new()
    }

    /// Ephemeral resource types (Terraform 1.10): opened, renewed and
    /// closed, never planned or stored.
    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource<Self::Client>>> {
        Vec::new()
    }

    /// Whether resources want to be asked about destroys
    /// (`PlanResourceChange` with a null proposal), advertised to the host
    /// as the `plan_destroy` capability.
    fn plan_destroy(&self) -> bool {
        false
    }

    /// Static checks of the provider configuration (values may be unknown).
    fn validate_config(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    async fn configure(&self, config: &Value) -> CallResult<Self::Client>;

    /// The functions the provider offers (`provider::NAME::FUNC`); they
    /// need no configuration.
    fn functions(&self) -> Vec<Arc<dyn Function>> {
        Vec::new()
    }
}

/// What opening an ephemeral resource gives the host.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    pub result: Value,
    /// Handed back to renew and close; the host keeps it for the walk only.
    pub private: Option<Vec<u8>>,
    /// Unix time in milliseconds after which the host renews.
    pub renew_at: Option<i64>,
}

/// An ephemeral resource type: a value that exists while a walk uses it.
#[async_trait]
pub trait EphemeralResource<C>: Send + Sync {
    fn type_name(&self) -> &'static str;

    fn schema(&self) -> Schema;

    /// Static checks of a configuration (values may be unknown).
    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    /// The resource's value for a wholly known configuration.
    async fn open(&self, client: &C, config: &Value) -> CallResult<Opened>;

    /// Extends what `open` made (a lease); the answer's `renew_at` says
    /// when to come back. Nothing to renew by default.
    async fn renew(&self, _client: &C, private: Option<&[u8]>) -> CallResult<Opened> {
        Ok(Opened {
            result: Value::null(),
            private: private.map(<[u8]>::to_vec),
            renew_at: None,
        })
    }

    /// Releases what `open` made; nothing to release by default.
    async fn close(&self, _client: &C, _private: Option<&[u8]>) -> CallResult<()> {
        Ok(())
    }
}

/// A provider-defined function: pure, computed from its arguments alone.
pub trait Function: Send + Sync {
    fn name(&self) -> &'static str;
    fn signature(&self) -> fleetform_shared::function::FunctionSignature;
    /// The result for arguments of the signature's types (null or unknown
    /// only where a parameter allows them).
    fn call(&self, args: &[Value]) -> Result<Value, fleetform_shared::function::FunctionError>;
}

/// A managed resource type.
#[async_trait]
pub trait Resource<C>: Send + Sync {
    fn type_name(&self) -> &'static str;

    fn schema(&self) -> Schema;

    /// Top-level attributes whose change requires replacing the object.
    fn replace_on_change(&self) -> &'static [&'static str] {
        &[]
    }

    /// Static checks of a configuration (values may be unknown).
    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        default_plan(req, schema, self.replace_on_change())
    }

    fn upgrade(
        &self,
        req: &UpgradeResourceStateRequest,
        schema: &Schema,
    ) -> UpgradeResourceStateResponse {
        default_upgrade(req, schema)
    }

    /// The whole `ApplyResourceChange`. The default calls [`Resource::create`],
    /// [`Resource::update`] or [`Resource::delete`] and, when they fail, hands
    /// the prior object back (nothing changed). Override it only to answer
    /// something those cannot, such as an object together with an error.
    async fn apply(
        &self,
        client: &C,
        req: &ApplyResourceChangeRequest,
    ) -> ApplyResourceChangeResponse
    where
        C: Sync,
    {
        let result = match (&req.prior_state, &req.planned_state) {
            (Value::Null(_), Value::Null(_)) => Ok(Value::null()),
            (prior, Value::Null(_)) => self.delete(client, prior).await.map(|()| Value::null()),
            (Value::Null(_), planned) => self.create(client, planned).await,
            (prior, planned) => self.update(client, prior, planned).await,
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

    /// Creates the object; returns its new state with every unknown resolved.
    async fn create(&self, client: &C, planned: &Value) -> CallResult<Value>;

    /// Reads the object back; [`Value::null()`] when it no longer exists.
    async fn read(&self, client: &C, state: &Value) -> CallResult<Value>;

    async fn update(&self, client: &C, prior: &Value, planned: &Value) -> CallResult<Value>;

    /// Deletes the object; deleting an object that is already gone succeeds.
    async fn delete(&self, client: &C, prior: &Value) -> CallResult<()>;

    async fn import(&self, _client: &C, _id: &str) -> CallResult<Value> {
        fail(
            "Import not supported",
            format!("{} does not support import", self.type_name()),
        )
    }
}

/// A data source.
#[async_trait]
pub trait DataSource<C>: Send + Sync {
    fn type_name(&self) -> &'static str;

    fn schema(&self) -> Schema;

    fn validate(&self, _config: &Value) -> Diagnostics {
        Diagnostics::new()
    }

    async fn read(&self, client: &C, config: &Value) -> CallResult<Value>;
}

/// The standard plan: destroy when the proposal is null; otherwise the
/// proposal, with unset computed attributes unknown (create, replace) or
/// kept from the prior state (update), and `replace_on_change` attributes
/// that differ from the prior state reported as requiring replacement.
pub fn default_plan(
    req: &PlanResourceChangeRequest,
    schema: &Schema,
    replace_on_change: &[&str],
) -> PlanResourceChangeResponse {
    let mut resp = PlanResourceChangeResponse {
        planned_state: Value::null(),
        requires_replace: Vec::new(),
        planned_private: req.prior_private.clone(),
        diagnostics: Diagnostics::new(),
        legacy_type_system: false,
    };
    let Value::Map(mut planned) = req.proposed_new_state.clone() else {
        return resp;
    };
    let creating = req.prior_state.is_null();
    if !creating {
        resp.requires_replace = replace_on_change
            .iter()
            .filter(|name| req.prior_state.get_attr(name) != req.proposed_new_state.get_attr(name))
            .map(|name| vec![PathStep::Key((*name).to_string())])
            .collect();
    }
    let fresh = creating || !resp.requires_replace.is_empty();
    for (name, attr) in &schema.block.attributes {
        if attr.computed && req.config.get_attr(name).is_null() {
            let v = if fresh {
                Value::unknown()
            } else {
                req.prior_state.get_attr(name).clone()
            };
            planned.insert(name.clone(), v);
        }
    }
    // Write-only arguments reach the provider in the configuration only:
    // the plan (and so the state) holds null for them.
    for (name, attr) in &schema.block.attributes {
        if attr.write_only {
            planned.insert(name.clone(), Value::null());
        }
    }
    resp.planned_state = Value::Map(planned);
    resp
}

/// Version-0 style upgrade: the stored JSON already matches the current
/// schema, so it is decoded as is; state from a newer schema is refused.
pub fn default_upgrade(
    req: &UpgradeResourceStateRequest,
    schema: &Schema,
) -> UpgradeResourceStateResponse {
    let mut resp = UpgradeResourceStateResponse {
        upgraded_state: Value::null(),
        diagnostics: Diagnostics::new(),
    };
    if req.version > schema.version {
        resp.diagnostics.push(Diagnostic::error(
            "Resource state from a newer provider",
            format!(
                "{} state has schema version {}, this provider knows version {}",
                req.type_name, req.version, schema.version
            ),
        ));
        return resp;
    }
    match cty::from_json(&req.raw_state_json, &schema.block.implied_type()) {
        Ok(v) => resp.upgraded_state = v,
        Err(e) => resp
            .diagnostics
            .push(Diagnostic::error("Invalid stored state", e.to_string())),
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::schema::Attribute;
    use fleetform_shared::types::Type;

    fn schema() -> Schema {
        let mut s = Schema::default();
        s.block
            .attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        s.block
            .attributes
            .insert("name".into(), Attribute::new(Type::String).required());
        s.block
            .attributes
            .insert("size".into(), Attribute::new(Type::Number).optional());
        s
    }

    fn obj(id: Value, name: &str, size: i64) -> Value {
        Value::object([
            ("id", id),
            ("name", name.into()),
            ("size", Value::int(size)),
        ])
    }

    fn req(prior: Value, proposed: Value) -> PlanResourceChangeRequest {
        let config = match &proposed {
            Value::Map(m) => {
                let mut m = m.clone();
                m.insert("id", Value::null());
                Value::Map(m)
            }
            _ => Value::null(),
        };
        PlanResourceChangeRequest {
            type_name: "t".into(),
            prior_state: prior,
            proposed_new_state: proposed,
            config,
            prior_private: vec![],
        }
    }

    #[test]
    fn create_marks_unset_computed_attributes_unknown() {
        let resp = default_plan(
            &req(Value::null(), obj(Value::null(), "a", 1)),
            &schema(),
            &["name"],
        );
        assert_eq!(resp.planned_state, obj(Value::unknown(), "a", 1));
        assert!(resp.requires_replace.is_empty());
    }

    #[test]
    fn in_place_update_keeps_the_prior_id() {
        let prior = obj("x1".into(), "a", 1);
        let resp = default_plan(
            &req(prior, obj(Value::null(), "a", 2)),
            &schema(),
            &["name"],
        );
        assert_eq!(resp.planned_state, obj("x1".into(), "a", 2));
        assert!(resp.requires_replace.is_empty());
    }

    #[test]
    fn replacing_change_is_reported_and_id_becomes_unknown() {
        let prior = obj("x1".into(), "a", 1);
        let resp = default_plan(&req(prior, obj("x1".into(), "b", 1)), &schema(), &["name"]);
        assert_eq!(
            resp.requires_replace,
            vec![vec![PathStep::Key("name".into())]]
        );
        assert_eq!(resp.planned_state, obj(Value::unknown(), "b", 1));
    }

    #[test]
    fn null_proposal_plans_destroy() {
        let resp = default_plan(
            &req(obj("x1".into(), "a", 1), Value::null()),
            &schema(),
            &["name"],
        );
        assert_eq!(resp.planned_state, Value::null());
    }

    #[test]
    fn upgrade_refuses_newer_state_and_decodes_current() {
        let mut r = UpgradeResourceStateRequest {
            type_name: "t".into(),
            version: 1,
            raw_state_json: br#"{"id":"x","name":"a","size":3}"#.to_vec(),
        };
        assert!(default_upgrade(&r, &schema()).diagnostics.has_errors());
        r.version = 0;
        let resp = default_upgrade(&r, &schema());
        assert!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
        assert_eq!(resp.upgraded_state, obj("x".into(), "a", 3));
    }
}
