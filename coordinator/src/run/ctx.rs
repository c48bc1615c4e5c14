//! The context every walk of a run shares: what evaluation needs (the
//! configuration and its graph, the prior state, the values known so far,
//! the configured providers) and where events go. The driver makes it; the
//! plan walk, the apply walk, imports and recovery take it. It sits below
//! all of them so that dependencies run one way (driver → walks → ctx), and
//! so do what both walks use: the dispatch window, the prior object a task
//! takes, the ephemeral instances a walk opened. What only the apply walk
//! keeps to be durable (results not journaled yet, the resumed run's
//! answers, the archive) is the apply walk's own: `apply::record`.

use super::handle::{RunHandle, Shared};
use crate::run::values::{Expansion, ResourceValues, RunValues};
use fleetform_lang::config::{Config, Module, ModuleNode};
use fleetform_lang::graph::config::ConfigGraph;
use fleetform_shared::addr::{
    AbsProviderConfig, AbsResourceInstance, ConfigResource, ModuleInstance, ProviderAddr,
};
use fleetform_shared::plan::ResourceChange;
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::state::{ObjectState, State};
use fleetform_shared::wire::{PriorObject, ProviderSpec, RunEvent, RunRequest};
use std::collections::HashMap;
use std::sync::Arc;

/// A configured provider: its spec (with the decoded configuration), shared
/// by the tasks that name it, and its schema.
pub(crate) type Configured = (Arc<ProviderSpec>, Arc<ProviderSchema>);

/// Operations of one run dispatched and not yet answered, at most, unless
/// `-parallelism` says otherwise. The workers' slots bound what runs at
/// once (embedded: 256; a worker: 64), so a task beyond them only waits in
/// the queue, while the coordinator holds its task, journal intent, result
/// route and event: with every ready operation dispatched at once, an
/// apply of 100,000 independent instances held all of them (about 1 GB of
/// its 1.7 GB heap peak). 4,096 keeps 16 workers' default slots full, costs
/// a few MB, and a larger fleet lifts it with `-parallelism`.
pub(crate) const DISPATCH_WINDOW: usize = 4096;

/// An instance a walk opened, with what closing it takes.
pub(crate) struct Opened {
    pub addr: AbsResourceInstance,
    pub provider: Arc<ProviderSpec>,
    pub private: Option<Vec<u8>>,
    pub renew_at: Option<i64>,
}

pub(crate) struct RunCtx<'a> {
    pub shared: &'a Shared,
    pub handle: &'a RunHandle,
    pub config: &'a Config,
    /// The root module (`config.root.module`), for what only the root has:
    /// root outputs, `moved` and `import` blocks.
    pub module: &'a Module,
    pub graph: &'a ConfigGraph,
    pub request: &'a RunRequest,
    /// The state the run started from (after `moved` blocks). The apply
    /// walk takes its objects ([`RunCtx::take_prior`]).
    pub prior: State,
    pub values: RunValues,
    /// Configured providers: spec (with the decoded configuration) and schema.
    pub providers: HashMap<AbsProviderConfig, Configured>,
    /// Objects rebound by `moved` blocks before planning (from, to).
    pub moved: Vec<(AbsResourceInstance, AbsResourceInstance)>,
    /// Where the walks' events go (held while the apply walk's record is
    /// not durable yet).
    pub events: super::emitter::Emitter,
    /// The run's hold on its workspace.
    pub lock: &'a super::lock::WorkspaceGuard,
    /// Ephemeral resource instances the current walk opened, to close at
    /// its end (see `ephemeral::close_all`).
    pub opened: Vec<Opened>,
    /// Walks that opened ephemeral resources so far: their tasks' ids
    /// differ from one walk to the next.
    pub ephemeral_walks: u32,
}

impl RunCtx<'_> {
    /// Empty values for resource `r`, with the object type its schema
    /// implies once its provider is configured.
    pub fn resource_values(&mut self, r: &ConfigResource, expansion: Expansion) -> ResourceValues {
        ResourceValues::new(expansion).with_type(self.object_type(r))
    }

    fn object_type(&mut self, r: &ConfigResource) -> Option<Arc<fleetform_shared::types::Type>> {
        use fleetform_shared::addr::ResourceMode;
        let key = (r.resource.mode, r.resource.type_name.clone());
        if let Some(t) = self.values.object_types.get(&key) {
            return Some(t.clone());
        }
        let provider = self.graph.resource_providers.get(r)?;
        let (_, schema) = self.providers.get(provider)?;
        let types = match r.resource.mode {
            ResourceMode::Data => &schema.data_sources,
            ResourceMode::Managed => &schema.resources,
            ResourceMode::Ephemeral => &schema.ephemeral_resources,
        };
        let ty = Arc::new(types.get(key.1.as_str())?.block.implied_type());
        self.values.object_types.insert(key, ty.clone());
        Some(ty)
    }

    /// The prior state, for the apply walk to turn into the new state in
    /// place rather than a copy (a state of 100,000 objects is over
    /// 100 MB, and a destroy or an update of all of them held both). What
    /// stays is its lineage and serial: nothing reads the prior objects
    /// once the plan is made and the walk's values are seeded.
    pub fn take_prior(&mut self) -> State {
        let rest = State {
            serial: self.prior.serial,
            ..State::new(self.prior.lineage.clone())
        };
        std::mem::replace(&mut self.prior, rest)
    }

    pub fn emit(&self, event: RunEvent) {
        self.events.emit(event);
    }

    pub fn run_id(&self) -> &str {
        &self.handle.id
    }

    /// What planning task ids start with (schemas, plans, reads, imports):
    /// unique to this attempt at the run, since a run taken up again after
    /// a restart plans again, and JetStream drops a task whose id it saw
    /// within its duplicate window. Apply tasks keep `<run id>:...`, which a
    /// resumed apply matches with its journal.
    pub fn planning_prefix(&self) -> String {
        let tag = self.handle.incarnation.get(..8).unwrap_or("");
        format!("{}.{tag}", self.handle.id)
    }

    pub fn workspace(&self) -> &str {
        &self.handle.workspace
    }

    /// The configuration of the module an instance belongs to.
    pub fn module_of(&self, instance: &ModuleInstance) -> Option<&ModuleNode> {
        self.config.module(&instance.module())
    }

    /// A configured provider by address, preferring the root's default
    /// configuration: for objects only in state, which name no configuration.
    pub fn provider_by_addr(
        &self,
        addr: &ProviderAddr,
    ) -> Option<(&AbsProviderConfig, &Configured)> {
        let mut found: Vec<_> = self
            .providers
            .iter()
            .filter(|(k, _)| &k.provider == addr)
            .collect();
        found.sort_by_key(|(k, _)| (k.module.0.len(), k.alias.is_some(), (*k).clone()));
        found.into_iter().next()
    }

    /// The configured provider of a change: its resource's configuration's
    /// (for an object only in state, the one its state records), else its
    /// provider's root configuration.
    pub fn provider_of_change(
        &self,
        c: &fleetform_shared::plan::ResourceChange,
    ) -> Option<&Configured> {
        match self.graph.resource_providers.get(&c.addr.config_resource()) {
            Some(p) => self.providers.get(p),
            None => self.provider_by_addr(&c.provider).map(|(_, v)| v),
        }
    }
}

/// The prior object a task takes, from an object in the state.
pub(crate) fn prior_object(o: &ObjectState) -> PriorObject {
    PriorObject {
        value: o.value.clone(),
        private: o.private.clone(),
        schema_version: o.schema_version,
    }
}

/// See [`RunCtx::provider_of_change`].
pub(crate) fn provider_of<'c>(ctx: &'c RunCtx<'_>, c: &ResourceChange) -> Option<&'c Configured> {
    ctx.provider_of_change(c)
}
