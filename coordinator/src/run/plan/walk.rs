//! The plan walk: the configuration graph in dependency order, every ready
//! resource expanded into instances whose plans are queued and dispatched
//! a window at a time ([`DISPATCH_WINDOW`]), and each instance's planned
//! value released to its dependents. Resource
//! planning itself is in [`crate::run::plan::resource`].

use crate::run::ctx::{DISPATCH_WINDOW, RunCtx, prior_object};
use crate::run::eval::providers;
use crate::run::eval::scope::EvalScope;
use crate::run::plan::imports::{ImportSource, import_targets};
use crate::run::values::Expansion;
use fleetform_lang::eval::evaluate_marked;
use fleetform_lang::graph::config::{ConfigGraph, ConfigNode};
use fleetform_lang::graph::targeting::{Mode, Selection};
use fleetform_shared::addr::{
    AbsProviderConfig, AbsResource, AbsResourceInstance, ConfigResource, InstanceKey, ProviderAddr,
};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::apply::cbd::force_create_before_destroy;
use fleetform_shared::graph::{NodeId, Walk};
use fleetform_shared::plan::{Action, OutputChange, Plan, PlanMode, ResourceChange};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{
    Operation, PriorObject, ProviderSpec, RunEvent, Task, TaskKind, TaskResult,
};
use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub(in crate::run) enum Done {
    Schema {
        node: NodeId,
        provider: AbsProviderConfig,
        result: Result<Arc<ProviderSchema>, Diagnostics>,
    },
    Plan {
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    },
    Read {
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    },
    Import {
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    },
    Open {
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    },
    /// The pace allows the next queued task (see [`Walker::pace`]).
    Paced,
}

/// What a planning task's answer is handled as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::run) enum Answer {
    Plan,
    Read,
    Import,
    /// An ephemeral resource's open.
    Open,
}

/// A resource instance's planning task waiting for room in the dispatch
/// window. The task itself is made when it goes, so a waiting one holds
/// its configuration and no copy of its prior object: a re-plan of
/// 100,000 instances held all of their tasks, each with its prior object
/// and (then) its own copy of the provider's configuration, in the queue
/// to the workers.
pub(in crate::run) struct Queued {
    pub node: NodeId,
    pub addr: AbsResourceInstance,
    pub answer: Answer,
    pub id: String,
    pub provider: Arc<ProviderSpec>,
    pub kind: TaskKind,
    /// A plan of the state's current object, copied into the task when it
    /// goes.
    pub prior_from_state: bool,
}

/// Where a queued plan task's prior object comes from.
pub(in crate::run) enum PlanPrior {
    /// A create: none.
    None,
    /// The state's current object, copied into the task when it goes.
    State,
    /// This one (an object imported just now).
    Given(PriorObject),
}

pub(in crate::run) type Pending<'a> =
    FuturesUnordered<Pin<Box<dyn Future<Output = Done> + Send + 'a>>>;

/// The instances the configuration declares, by resource: each resource's
/// address once, with its instances' keys (a set of whole addresses held a
/// copy of the resource's address for each of a million instances).
#[derive(Default)]
pub(in crate::run) struct Declared {
    keys: HashMap<AbsResource, HashSet<InstanceKey>>,
    len: usize,
}

impl Declared {
    pub(in crate::run) fn insert(&mut self, resource: &AbsResource, key: &InstanceKey) {
        let keys = match self.keys.get_mut(resource) {
            Some(keys) => keys,
            None => self.keys.entry(resource.clone()).or_default(),
        };
        if keys.insert(key.clone()) {
            self.len += 1;
        }
    }

    pub(in crate::run) fn contains(&self, addr: &AbsResourceInstance) -> bool {
        self.keys
            .get(&addr.containing_resource())
            .is_some_and(|keys| keys.contains(&addr.resource.key))
    }

    pub(in crate::run) fn len(&self) -> usize {
        self.len
    }
}

/// Per-resource facts the result handlers need.
pub(in crate::run) struct ResourceInfo {
    pub dependencies: Vec<AbsResource>,
    pub create_before_destroy: bool,
    pub provider: AbsProviderConfig,
    pub remaining: usize,
    /// Instances `replace_triggered_by` fires for.
    pub triggered: HashSet<AbsResourceInstance>,
}

pub(in crate::run) struct Walker<'c, 'a> {
    pub ctx: &'c mut RunCtx<'a>,
    pub graph: &'c ConfigGraph,
    pub walk: Walk,
    pub ready: VecDeque<NodeId>,
    pub diags: Diagnostics,
    pub changes: Vec<ResourceChange>,
    /// Objects refreshing found changed outside fleetform (see
    /// [`fleetform_shared::plan::Plan::drift`]).
    pub drift: Vec<ResourceChange>,
    pub outputs: BTreeMap<String, OutputChange>,
    pub resources: HashMap<NodeId, ResourceInfo>,
    /// Instances the configuration declares (the rest of state is deleted).
    pub declared: Declared,
    /// Data source values read while planning.
    pub data_values: BTreeMap<AbsResourceInstance, Value>,
    /// How each of those is recorded in state at apply.
    pub data_records: BTreeMap<AbsResourceInstance, fleetform_shared::plan::DataRecord>,
    /// When each data source read in flight was dispatched, for its
    /// "Read complete after" event.
    pub reads_started: HashMap<AbsResourceInstance, std::time::Instant>,
    pub planned: usize,
    pub selection: Selection,
    pub replace: HashSet<AbsResourceInstance>,
    /// Only providers: applying a saved plan needs their configuration.
    pub providers_only: bool,
    /// Import targets and where their ids come from.
    pub import_ids: HashMap<AbsResourceInstance, ImportSource<'a>>,
    /// Imports in flight: the instance's configuration and the import id.
    pub import_pending: HashMap<AbsResourceInstance, (Value, String)>,
    /// Imported objects by address: (import id, object).
    pub imports: BTreeMap<AbsResourceInstance, (String, PriorObject)>,
    /// Resource blocks written for imported objects (`-generate-config-out`).
    pub generated: BTreeMap<AbsResourceInstance, String>,
    /// The instances each instance's configuration reads, where narrowed
    /// (see `eval::instance_refs`).
    pub instance_refs: BTreeMap<AbsResourceInstance, fleetform_shared::plan::InstanceRefs>,
    /// What named values read, found once per run.
    pub refs_memo: crate::run::eval::instance_refs::Memo,
    /// Planning tasks not dispatched yet, in the order they were made.
    pub queued: VecDeque<Queued>,
    /// Planning tasks dispatched and not answered yet: at most
    /// [`DISPATCH_WINDOW`], as in the apply walk.
    pub in_flight: usize,
    /// `each.value` of instances with postconditions, until they are planned.
    pub condition_each: HashMap<AbsResourceInstance, Value>,
    /// Data source instances in state no longer declared (see
    /// [`Plan::data_removed`]).
    pub data_removed: Vec<(AbsResourceInstance, ProviderAddr)>,
    /// Reads recorded and reused (`-refresh-max-age`).
    pub reuse: crate::run::plan::reuse::Reuse,
    /// A background refresh's rate (`--refresh-rate`), and whether a wait
    /// for its next task is pending.
    pub pace: Option<crate::run::plan::pace::Pace>,
    pub pace_waiting: bool,
}

/// Plans the run.
pub(crate) async fn plan(ctx: &mut RunCtx<'_>, graph: &ConfigGraph) -> Result<Plan, Diagnostics> {
    let destroy = ctx.request.operation == Operation::Destroy;
    let options = &ctx.request.options;
    let selection = Selection::new(graph, &options.targets, &options.excludes, destroy)?;
    let replace = fleetform_lang::graph::targeting::parse_instances(&options.replace, "-replace")?
        .into_iter()
        .collect();
    let import_ids = import_targets(ctx)?;
    crate::run::eval::removed::validate(ctx).into_result()?;
    let reuse = crate::run::plan::reuse::Reuse::load(ctx).await;
    let mut w = Walker::new(ctx, graph, selection, replace, false);
    w.import_ids = import_ids;
    w.reuse = reuse;
    w.run().await;
    if !w.ctx.request.options.import_only {
        w.orphans();
        w.plan_destroys().await;
    }
    // What was read is worth keeping whatever the plan's diagnostics.
    w.reuse.save(w.ctx).await;
    if let Some(note) = w.reuse.note() {
        w.diags.push(note);
    }
    // The walk's ephemeral resources are done with: nothing evaluates
    // them after this.
    crate::run::eval::ephemeral::close_all(w.ctx).await;
    w.check_prevent_destroy();
    if !destroy {
        let checks = crate::run::eval::checks::run_checks(w.ctx);
        w.diags.extend(checks);
    }
    let mut diags = std::mem::take(&mut w.diags);
    if diags.has_errors() {
        w.show_partial_plan(destroy);
        return Err(diags);
    }
    let partial = w.selection.is_partial();
    if partial {
        diags.push(targeting_warning(&w.selection));
    }
    let mut changes = std::mem::take(&mut w.changes);
    changes.sort_by(|a, b| (&a.addr, &a.deposed).cmp(&(&b.addr, &b.deposed)));
    diags.extend(
        crate::run::eval::removed::forget_warning(&changes)
            .into_iter()
            .collect(),
    );
    let data_values = std::mem::take(&mut w.data_values);
    let data_records = std::mem::take(&mut w.data_records);
    let mut drift = std::mem::take(&mut w.drift);
    crate::metrics::drift_found(drift.len());
    let ctx = w.ctx;
    if !diags.is_empty() {
        ctx.emit(RunEvent::Diagnostics(diags));
    }
    let mode = if destroy {
        PlanMode::Destroy
    } else if ctx.request.options.refresh_only {
        PlanMode::RefreshOnly
    } else {
        PlanMode::Normal
    };
    drift.extend(crate::run::plan::drift::moved_only(
        mode, &ctx.prior, &ctx.moved, &changes, &drift,
    ));
    drift.sort_by(|a, b| a.addr.cmp(&b.addr));
    let relevant_attributes = crate::run::plan::drift::relevant(ctx.config, &changes, &w.outputs);
    let mut plan = Plan {
        mode,
        changes,
        outputs: w.outputs,
        prior_lineage: ctx.prior.lineage.clone(),
        prior_serial: ctx.prior.serial,
        // Ephemeral values are never recorded; applying asks for them again.
        variables: ctx
            .values
            .root()
            .variables
            .iter()
            .filter(|(n, _)| !ctx.module.variables.get(*n).is_some_and(|v| v.ephemeral))
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect(),
        // Which were set is the driver's to say.
        apply_time_variables: Vec::new(),
        data_values,
        moved: ctx.moved.clone(),
        partial,
        imports: w.imports.into_iter().map(|(a, (id, _))| (a, id)).collect(),
        timestamp: ctx.values.env.plan_timestamp.clone(),
        drift,
        relevant_attributes,
        generated_config: w.generated,
        shapes: Default::default(),
        errored: false,
        instance_refs: w.instance_refs,
        data_removed: w.data_removed,
        data_records,
    };
    force_create_before_destroy(&mut plan);
    crate::run::eval::sensitivity::mark_changes(ctx, &mut plan.changes);
    crate::run::eval::sensitivity::mark_changes(ctx, &mut plan.drift);
    plan.shapes = crate::run::plan::shapes::of_plan(ctx, &plan);
    Ok(plan)
}

impl Walker<'_, '_> {
    /// Before a failed plan's errors, the changes planned until then, as
    /// Terraform 1.11 shows them; nothing when none would change anything.
    /// Marked sensitive and shaped as a whole plan is, so that the
    /// renderer hides and draws them the same way.
    fn show_partial_plan(&mut self, destroy: bool) {
        if !self.changes.iter().any(|c| c.action != Action::NoOp) {
            return;
        }
        let mut changes = std::mem::take(&mut self.changes);
        changes.sort_by(|a, b| (&a.addr, &a.deposed).cmp(&(&b.addr, &b.deposed)));
        let mut plan = Plan {
            mode: if destroy {
                PlanMode::Destroy
            } else if self.ctx.request.options.refresh_only {
                PlanMode::RefreshOnly
            } else {
                PlanMode::Normal
            },
            changes,
            errored: true,
            ..Plan::default()
        };
        crate::run::eval::sensitivity::mark_changes(self.ctx, &mut plan.changes);
        plan.shapes = crate::run::plan::shapes::of_plan(self.ctx, &plan);
        self.ctx.emit(RunEvent::Planned(Arc::new(plan)));
    }
}

fn targeting_warning(sel: &Selection) -> Diagnostic {
    match sel.mode {
        Mode::Exclude => Diagnostic::warning(
            "Resource exclusion is in effect",
            "You are creating a plan with the -exclude option, which means that the result of this plan may not represent all of the changes requested by the current configuration.\n\nThe -exclude option is not for routine use, and is provided only for exceptional situations such as recovering from errors or mistakes, or when fleetform specifically suggests to use it as part of an error message.",
        ),
        _ => Diagnostic::warning(
            "Resource targeting is in effect",
            "You are creating a plan with the -target option, which means that the result of this plan may not represent all of the changes requested by the current configuration.\n\nThe -target option is not for routine use, and is provided only for exceptional situations such as recovering from errors or mistakes, or when fleetform specifically suggests to use it as part of an error message.",
        ),
    }
}

/// Configures providers (and evaluates locals) without planning resources.
pub(crate) async fn providers_only(
    ctx: &mut RunCtx<'_>,
    graph: &ConfigGraph,
) -> Result<(), Diagnostics> {
    let mut w = Walker::new(ctx, graph, Selection::all(), HashSet::new(), true);
    w.run().await;
    if w.diags.has_errors() {
        Err(w.diags)
    } else {
        Ok(())
    }
}

impl<'c, 'a> Walker<'c, 'a> {
    fn new(
        ctx: &'c mut RunCtx<'a>,
        graph: &'c ConfigGraph,
        selection: Selection,
        replace: HashSet<AbsResourceInstance>,
        providers_only: bool,
    ) -> Walker<'c, 'a> {
        let (walk, ready) = Walk::new(&graph.dag);
        let pace = ctx.handle.read_rate.map(crate::run::plan::pace::Pace::new);
        Walker {
            ctx,
            graph,
            walk,
            ready: ready.into(),
            diags: Diagnostics::new(),
            changes: Vec::new(),
            drift: Vec::new(),
            outputs: BTreeMap::new(),
            resources: HashMap::new(),
            declared: Declared::default(),
            data_values: BTreeMap::new(),
            data_records: BTreeMap::new(),
            reads_started: HashMap::new(),
            planned: 0,
            selection,
            replace,
            providers_only,
            import_ids: HashMap::new(),
            import_pending: HashMap::new(),
            imports: BTreeMap::new(),
            generated: BTreeMap::new(),
            instance_refs: BTreeMap::new(),
            refs_memo: Default::default(),
            queued: VecDeque::new(),
            data_removed: Vec::new(),
            in_flight: 0,
            condition_each: HashMap::new(),
            reuse: Default::default(),
            pace,
            pace_waiting: false,
        }
    }

    async fn run(&mut self) {
        let shared = self.ctx.shared;
        let mut pending: Pending<'a> = FuturesUnordered::new();
        loop {
            while let Some(id) = self.ready.pop_front() {
                self.start(id, &mut pending, shared).await;
            }
            self.dispatch_queued(&mut pending, shared).await;
            let Some(done) = pending.next().await else {
                break;
            };
            self.answered(done);
            // Every other answer already here too: the window refills with
            // one dispatch, not one per answer.
            while let Some(Some(done)) = pending.next().now_or_never() {
                self.answered(done);
            }
        }
    }

    fn answered(&mut self, done: Done) {
        match done {
            Done::Schema {
                node,
                provider,
                result,
            } => self.provider_ready(node, provider, result),
            Done::Plan { node, addr, result } => {
                self.in_flight -= 1;
                self.instance_planned(node, addr, result)
            }
            Done::Read { node, addr, result } => {
                self.in_flight -= 1;
                self.data_read(node, addr, result)
            }
            Done::Import { node, addr, result } => {
                self.in_flight -= 1;
                self.imported(node, addr, result)
            }
            Done::Open { node, addr, result } => {
                self.in_flight -= 1;
                self.ephemeral_opened(node, addr, result)
            }
            Done::Paced => self.pace_waiting = false,
        }
    }

    /// Dispatches queued planning tasks while fewer than
    /// [`DISPATCH_WINDOW`] are unanswered. Not limited by `-parallelism`,
    /// which limits operations, not planning (its `--help` says so).
    async fn dispatch_queued(
        &mut self,
        pending: &mut Pending<'a>,
        shared: &'a crate::run::handle::Shared,
    ) {
        while self.in_flight < DISPATCH_WINDOW && !self.queued.is_empty() {
            let mut n = (DISPATCH_WINDOW - self.in_flight).min(self.queued.len());
            if let Some(pace) = &mut self.pace {
                let now = std::time::Instant::now();
                n = pace.take(n, now);
                if n == 0 {
                    if !self.pace_waiting {
                        self.pace_waiting = true;
                        let wait = pace.until_next(now);
                        pending.push(Box::pin(async move {
                            tokio::time::sleep(wait).await;
                            Done::Paced
                        }));
                    }
                    return;
                }
            }
            let batch: Vec<Queued> = self.queued.drain(..n).collect();
            // A resource's instances are queued all at once, and a deque
            // keeps its largest size: given back as it drains, so a plan
            // does not end holding room for every instance (45 of 437 MB
            // at the end of a re-plan of 100,000).
            if self.queued.capacity() > 4 * self.queued.len().max(1024) {
                self.queued.shrink_to(2 * self.queued.len());
            }
            let run_id = self.ctx.run_id().to_string();
            let prior = &self.ctx.prior;
            let (tasks, answers): (Vec<Task>, Vec<_>) = batch
                .into_iter()
                .map(|q| {
                    let mut kind = q.kind;
                    if let TaskKind::Plan(p) = &mut kind
                        && q.prior_from_state
                    {
                        p.prior = prior.current(&q.addr).map(prior_object);
                    }
                    let task = Task {
                        id: q.id,
                        run_id: run_id.clone(),
                        provider: q.provider,
                        kind,
                    };
                    (task, (q.node, q.addr, q.answer))
                })
                .unzip();
            match shared.dispatcher.dispatch(tasks).await {
                Ok(receivers) => {
                    self.in_flight += receivers.len();
                    for ((node, addr, answer), rx) in answers.into_iter().zip(receivers) {
                        match answer {
                            Answer::Read => self.read_started(&addr),
                            Answer::Open => self.open_started(&addr),
                            Answer::Plan | Answer::Import => {}
                        }
                        pending.push(Box::pin(async move {
                            let result = rx.await.ok();
                            match answer {
                                Answer::Plan => Done::Plan { node, addr, result },
                                Answer::Read => Done::Read { node, addr, result },
                                Answer::Import => Done::Import { node, addr, result },
                                Answer::Open => Done::Open { node, addr, result },
                            }
                        }));
                    }
                }
                Err(e) => {
                    // The queue refused them (after its retries): nothing
                    // else is dispatched; each instance counts as planned,
                    // with the error recorded once.
                    self.diags.push(Diagnostic::error(
                        "Failed to dispatch planning tasks",
                        e.to_string(),
                    ));
                    let rest: Vec<Queued> = self.queued.drain(..).collect();
                    let failed = answers
                        .into_iter()
                        .chain(rest.into_iter().map(|q| (q.node, q.addr, q.answer)));
                    for (node, addr, _) in failed {
                        self.instance_failed(node, &addr);
                    }
                }
            }
        }
    }

    pub(in crate::run) fn complete(&mut self, id: NodeId) {
        let next = self.walk.complete(id);
        self.ready.extend(next);
    }

    pub(in crate::run) fn push_change(&mut self, change: ResourceChange) {
        self.changes.push(change);
    }

    async fn start(
        &mut self,
        id: NodeId,
        pending: &mut Pending<'a>,
        shared: &'a crate::run::handle::Shared,
    ) {
        match self.graph.dag.node(id).clone() {
            ConfigNode::Variable(m, _) if m.is_root() => self.complete(id),
            ConfigNode::Output(m, name) if m.is_root() => {
                if !self.providers_only {
                    self.plan_output(id, &name);
                }
                self.complete(id);
            }
            node @ (ConfigNode::Local(..)
            | ConfigNode::Variable(..)
            | ConfigNode::Output(..)
            | ConfigNode::ModuleCall(_)) => {
                // A value fed by resources this plan leaves out may not be
                // computable (they may not even exist yet); only left-out
                // nodes use it, so it is unknown rather than an error.
                let partial = !self
                    .output_resources(id)
                    .iter()
                    .all(|r| self.selection.visits_resource(r));
                let d = crate::run::eval::named_values::evaluate_node(self.ctx, &node);
                // Applying a saved plan refreshes values as it goes; a
                // call's expansion must be known whatever is targeted.
                let report =
                    matches!(node, ConfigNode::ModuleCall(_)) || (!partial && !self.providers_only);
                if report {
                    self.diags.extend(d);
                }
                self.complete(id);
            }
            ConfigNode::Provider(p) => {
                let spec = providers::spec(self.ctx.config, &p);
                let run_id = self.ctx.run_id().to_string();
                let prefix = self.ctx.planning_prefix();
                pending.push(Box::pin(async move {
                    // One task per configuration: ids must be unique in a run.
                    let key = format!("{p}@{prefix}");
                    let result = providers::schema(shared, &run_id, &key, &spec).await;
                    Done::Schema {
                        node: id,
                        provider: p,
                        result,
                    }
                }));
            }
            ConfigNode::Resource(r)
                if self.providers_only || !self.selection.visits_resource(&r) =>
            {
                self.set_prior_values(&r);
                self.complete(id);
            }
            ConfigNode::Resource(r) => self.start_resource(id, r),
        }
    }

    fn provider_ready(
        &mut self,
        node: NodeId,
        p: AbsProviderConfig,
        result: Result<Arc<ProviderSchema>, Diagnostics>,
    ) {
        match result {
            Ok(schema) => {
                let d = crate::run::plan::state_file::decode_prior(
                    &mut self.ctx.prior,
                    &p.provider,
                    &schema,
                );
                self.diags.extend(d);
                // A module with its own provider configurations has no
                // count or for_each (the graph refuses it): one instance.
                let instances = self.ctx.values.instances_of(&p.module);
                let inst = instances.first().cloned().unwrap_or_default();
                let dir = self
                    .ctx
                    .config
                    .module(&p.module)
                    .map(|n| n.dir.as_str())
                    .unwrap_or(".");
                let scope =
                    EvalScope::in_module(&self.ctx.values, &inst, dir, self.ctx.workspace());
                match providers::configure(self.ctx.config, &p, &schema, &scope) {
                    Ok(config) => {
                        let spec = ProviderSpec {
                            config,
                            ..providers::spec(self.ctx.config, &p)
                        };
                        self.ctx.providers.insert(p, (Arc::new(spec), schema));
                    }
                    Err(d) => self.diags.extend(d),
                }
            }
            Err(d) => self.diags.extend(d),
        }
        self.complete(node);
    }

    /// Resource values from prior state, for resources this walk does not
    /// plan, in every instance of their module.
    pub(in crate::run) fn set_prior_values(&mut self, r: &ConfigResource) {
        let Some(block) = self
            .ctx
            .config
            .module(&r.module)
            .and_then(|n| n.module.resources.get(&r.resource))
        else {
            return;
        };
        let expansion = Expansion::of(block.count.is_some(), block.for_each.is_some());
        for inst in self.ctx.values.instances_of(&r.module) {
            let abs = r.absolute(inst.clone());
            let mut values = self.ctx.resource_values(r, expansion);
            for (addr, state) in self
                .ctx
                .prior
                .resources
                .range(abs.instance(InstanceKey::None)..)
            {
                if addr.module != inst || addr.resource.resource != r.resource {
                    break;
                }
                if let Some(obj) = &state.current {
                    values.set_object(&addr.resource.key, obj);
                }
            }
            self.ctx.values.set_resource(&abs, values);
        }
    }

    /// Managed resources a node depends on (through named values), for
    /// -target/-exclude.
    fn output_resources(&self, id: NodeId) -> Vec<ConfigResource> {
        // The resources a node relies on directly (through locals and
        // variables), not what those resources depend on in turn; data
        // sources do not count (docs/planning/exclude.md).
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack: Vec<NodeId> = self.graph.dag.dependencies(id).collect();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            match self.graph.dag.node(n) {
                ConfigNode::Resource(r) => {
                    if r.resource.mode == fleetform_shared::ResourceMode::Managed {
                        out.push(r.clone());
                    }
                }
                _ => stack.extend(self.graph.dag.dependencies(n)),
            }
        }
        out
    }

    fn plan_output(&mut self, id: NodeId, name: &str) {
        let output = &self.ctx.module.outputs[name];
        let before = self.ctx.prior.outputs.get(name).map(|o| o.value.clone());
        // -target recalculates an output only if every resource it uses is
        // targeted; -exclude if at least one it uses is not excluded.
        let deps = self.output_resources(id);
        let recalculate = match self.selection.mode {
            Mode::All => true,
            Mode::Target => deps.iter().all(|r| self.selection.visits_resource(r)),
            Mode::Exclude => deps.iter().any(|r| self.selection.visits_resource(r)),
        };
        if !recalculate {
            if let Some(b) = before {
                let change = OutputChange {
                    action: Action::NoOp,
                    before: Some(b.clone()),
                    after: b,
                    sensitive: output.sensitive,
                };
                self.outputs.insert(name.to_string(), change);
            }
            return;
        }
        let after = if self.ctx.request.operation == Operation::Destroy {
            Value::null()
        } else {
            let scope = EvalScope::new(&self.ctx.values, self.ctx.workspace());
            let (status, d) = crate::run::eval::conditions::output_rules(output, &scope);
            self.diags.extend(d);
            if status == fleetform_lang::rules::conditions::RuleStatus::Failed {
                return;
            }
            match evaluate_marked(&output.expr, &scope) {
                Ok((_, marks)) if !marks.is_empty() && !output.sensitive => {
                    let d = crate::run::eval::sensitivity::undeclared_sensitive_output(output);
                    self.diags.push(d);
                    return;
                }
                Ok((v, _)) => v,
                Err(d) => {
                    self.diags.extend(d);
                    return;
                }
            }
        };
        if self.ctx.request.options.refresh_only && !after.is_wholly_known() {
            // Refreshing cannot tell what an output will be; it keeps its value.
            if let Some(b) = before {
                let change = OutputChange {
                    action: Action::NoOp,
                    before: Some(b.clone()),
                    after: b,
                    sensitive: output.sensitive,
                };
                self.outputs.insert(name.to_string(), change);
            }
            return;
        }
        let action = match (&before, &after) {
            (None, Value::Null(_)) => Action::NoOp,
            (None, _) => Action::Create,
            (Some(_), Value::Null(_)) => Action::Delete,
            (Some(b), a) if b == a => Action::NoOp,
            _ => Action::Update,
        };
        self.outputs.insert(
            name.to_string(),
            OutputChange {
                action,
                before,
                after,
                sensitive: output.sensitive,
            },
        );
    }
}
