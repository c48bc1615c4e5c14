//! The plan walk: the configuration graph in dependency order, every ready
//! resource expanded into instances whose plans are dispatched together, and
//! each instance's planned value released to its dependents.

use super::driver::RunCtx;
use super::expand::expand;
use super::providers;
use super::scope::{EvalScope, Expansion, ResourceValues};
use fleetform_shared::addr::{AbsResource, AbsResourceInstance, InstanceKey, Resource};
use fleetform_shared::config::ResourceBlock;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::eval::evaluate;
use fleetform_shared::graph::config::{ConfigGraph, ConfigNode};
use fleetform_shared::graph::{NodeId, Walk};
use fleetform_shared::plan::{
    Action, ActionInputs, ActionReason, OutputChange, Plan, PlanMode, ResourceChange, select_action,
};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::state::{ObjectState, ObjectStatus};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{
    Operation, PlanTask, PriorObject, ProviderSpec, RunEvent, Task, TaskKind, TaskOutcome,
    TaskResult,
};
use futures::stream::{FuturesUnordered, StreamExt};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

enum Done {
    Schema {
        node: NodeId,
        local: String,
        result: Result<Arc<ProviderSchema>, Diagnostics>,
    },
    Plan {
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    },
}

type Pending<'a> = FuturesUnordered<Pin<Box<dyn Future<Output = Done> + Send + 'a>>>;

/// Per-resource facts the result handler needs.
struct ResourceInfo {
    dependencies: Vec<AbsResource>,
    create_before_destroy: bool,
    provider: String,
    remaining: usize,
}

struct Walker<'c, 'a> {
    ctx: &'c mut RunCtx<'a>,
    graph: &'c ConfigGraph,
    walk: Walk,
    ready: VecDeque<NodeId>,
    diags: Diagnostics,
    changes: Vec<ResourceChange>,
    outputs: BTreeMap<String, OutputChange>,
    resources: HashMap<NodeId, ResourceInfo>,
    /// Instances the configuration declares (the rest of state is deleted).
    declared: HashSet<AbsResourceInstance>,
    planned: usize,
    /// Only providers: applying a saved plan needs their configuration.
    providers_only: bool,
}

/// Plans the run.
pub(crate) async fn plan(ctx: &mut RunCtx<'_>, graph: &ConfigGraph) -> Result<Plan, Diagnostics> {
    let mut w = Walker::new(ctx, graph, false);
    w.run().await;
    w.orphans();
    let mut diags = std::mem::take(&mut w.diags);
    if diags.has_errors() {
        return Err(diags);
    }
    let mut changes = std::mem::take(&mut w.changes);
    changes.sort_by(|a, b| (&a.addr, &a.deposed).cmp(&(&b.addr, &b.deposed)));
    let ctx = w.ctx;
    if !diags.is_empty() {
        ctx.emit(RunEvent::Diagnostics(std::mem::take(&mut diags)));
    }
    Ok(Plan {
        mode: if ctx.request.operation == Operation::Destroy {
            PlanMode::Destroy
        } else {
            PlanMode::Normal
        },
        changes,
        outputs: w.outputs,
        prior_lineage: ctx.prior.lineage.clone(),
        prior_serial: ctx.prior.serial,
        variables: ctx.values.variables.clone(),
    })
}

/// Configures providers (and evaluates locals) without planning resources.
pub(crate) async fn providers_only(
    ctx: &mut RunCtx<'_>,
    graph: &ConfigGraph,
) -> Result<(), Diagnostics> {
    let mut w = Walker::new(ctx, graph, true);
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
        providers_only: bool,
    ) -> Walker<'c, 'a> {
        let (walk, ready) = Walk::new(&graph.dag);
        Walker {
            ctx,
            graph,
            walk,
            ready: ready.into(),
            diags: Diagnostics::new(),
            changes: Vec::new(),
            outputs: BTreeMap::new(),
            resources: HashMap::new(),
            declared: HashSet::new(),
            planned: 0,
            providers_only,
        }
    }

    async fn run(&mut self) {
        let shared = self.ctx.shared;
        let mut pending: Pending<'a> = FuturesUnordered::new();
        loop {
            while let Some(id) = self.ready.pop_front() {
                self.start(id, &mut pending, shared).await;
            }
            let Some(done) = pending.next().await else {
                break;
            };
            match done {
                Done::Schema {
                    node,
                    local,
                    result,
                } => self.provider_ready(node, &local, result),
                Done::Plan { node, addr, result } => self.instance_planned(node, addr, result),
            }
        }
    }

    fn complete(&mut self, id: NodeId) {
        let next = self.walk.complete(id);
        self.ready.extend(next);
    }

    async fn start(&mut self, id: NodeId, pending: &mut Pending<'a>, shared: &'a super::Shared) {
        match self.graph.dag.node(id).clone() {
            ConfigNode::Variable(_) => self.complete(id),
            ConfigNode::Local(name) => {
                let expr = &self.ctx.module.locals[&name].expr;
                let v = evaluate(
                    expr,
                    &EvalScope::new(&self.ctx.values, self.ctx.workspace()),
                )
                .unwrap_or_else(|d| {
                    self.diags.extend(d);
                    Value::Unknown
                });
                self.ctx.values.locals.insert(name, v);
                self.complete(id);
            }
            ConfigNode::Output(name) => {
                if !self.providers_only {
                    self.plan_output(&name);
                }
                self.complete(id);
            }
            ConfigNode::Provider(local) => {
                let spec = ProviderSpec {
                    addr: providers::provider_addr(self.ctx.module, &local),
                    version_constraint: providers::version_constraint(self.ctx.module, &local),
                    config: Value::Null,
                };
                let run_id = self.ctx.run_id().to_string();
                pending.push(Box::pin(async move {
                    let result = providers::schema(shared, &run_id, &spec).await;
                    Done::Schema {
                        node: id,
                        local,
                        result,
                    }
                }));
            }
            ConfigNode::Resource(r) if self.providers_only => {
                self.set_prior_values(&r);
                self.complete(id);
            }
            ConfigNode::Resource(r) => self.start_resource(id, r, pending, shared).await,
        }
    }

    fn provider_ready(
        &mut self,
        node: NodeId,
        local: &str,
        result: Result<Arc<ProviderSchema>, Diagnostics>,
    ) {
        match result {
            Ok(schema) => {
                let scope = EvalScope::new(&self.ctx.values, self.ctx.workspace());
                match providers::configure(self.ctx.module, local, &schema, &scope) {
                    Ok(config) => {
                        let spec = ProviderSpec {
                            addr: providers::provider_addr(self.ctx.module, local),
                            version_constraint: providers::version_constraint(
                                self.ctx.module,
                                local,
                            ),
                            config,
                        };
                        self.ctx.providers.insert(local.to_string(), (spec, schema));
                    }
                    Err(d) => self.diags.extend(d),
                }
            }
            Err(d) => self.diags.extend(d),
        }
        self.complete(node);
    }

    /// Resource values from prior state, for walks that do not plan.
    fn set_prior_values(&mut self, r: &Resource) {
        let block = &self.ctx.module.resources[r];
        let expansion = if block.count.is_some() {
            Expansion::Count
        } else if block.for_each.is_some() {
            Expansion::ForEach
        } else {
            Expansion::Single
        };
        let mut values = ResourceValues::new(expansion);
        for (addr, inst) in self
            .ctx
            .prior
            .resources
            .range(AbsResourceInstance::root(r.instance(InstanceKey::None))..)
        {
            if addr.resource.resource != *r {
                break;
            }
            if let Some(obj) = &inst.current {
                values
                    .instances
                    .insert(addr.resource.key.clone(), obj.value.clone());
            }
        }
        self.ctx.values.resources.insert(r.clone(), values);
    }

    async fn start_resource(
        &mut self,
        id: NodeId,
        r: Resource,
        pending: &mut Pending<'a>,
        shared: &'a super::Shared,
    ) {
        let module = self.ctx.module;
        let block: &ResourceBlock = &module.resources[&r];
        let dependencies: Vec<AbsResource> = self
            .graph
            .dag
            .ancestors_of([id])
            .into_iter()
            .filter(|n| *n != id)
            .filter_map(|n| match self.graph.dag.node(n) {
                ConfigNode::Resource(dep) => Some(AbsResource::root(dep.clone())),
                _ => None,
            })
            .collect();
        if self.ctx.request.operation == Operation::Destroy {
            self.set_prior_values(&r);
            self.complete(id);
            return;
        }
        let Some((spec, schema)) = self.ctx.providers.get(&block.provider).cloned() else {
            // The provider failed to configure; its diagnostics are recorded.
            self.ctx
                .values
                .resources
                .insert(r.clone(), ResourceValues::new(Expansion::Unknown));
            self.complete(id);
            return;
        };
        let Some(rschema) = schema.resources.get(&r.type_name) else {
            self.diags.push(
                Diagnostic::error(
                    "Invalid resource type",
                    format!(
                        "The provider {} does not support resource type \"{}\".",
                        spec.addr, r.type_name
                    ),
                )
                .at(block.decl_range.clone()),
            );
            self.ctx
                .values
                .resources
                .insert(r.clone(), ResourceValues::new(Expansion::Unknown));
            self.complete(id);
            return;
        };
        let scope = EvalScope::new(&self.ctx.values, self.ctx.workspace());
        let instances = match expand(block, &scope) {
            Ok(i) => i,
            Err(d) => {
                self.diags.extend(d);
                self.ctx
                    .values
                    .resources
                    .insert(r.clone(), ResourceValues::new(Expansion::Unknown));
                self.complete(id);
                return;
            }
        };
        let mut tasks = Vec::new();
        let mut addrs = Vec::new();
        for (key, each) in &instances.keys {
            let addr = AbsResourceInstance::root(r.instance(key.clone()));
            self.declared.insert(addr.clone());
            let scope = EvalScope {
                key,
                each_value: each.as_ref(),
                ..EvalScope::new(&self.ctx.values, self.ctx.workspace())
            };
            let (config, d) = block.body.decode(&rschema.block, &scope);
            let failed = d.has_errors();
            self.diags.extend(d);
            if failed {
                continue;
            }
            let current = self.ctx.prior.current(&addr);
            tasks.push(Task {
                id: format!("{}:plan:{addr}", self.ctx.run_id()),
                run_id: self.ctx.run_id().to_string(),
                provider: spec.clone(),
                kind: TaskKind::Plan(PlanTask {
                    addr: addr.clone(),
                    type_name: r.type_name.clone(),
                    prior: current.map(prior_object),
                    config,
                    refresh: self.ctx.request.options.refresh,
                    force_replace: current.is_some_and(|o| o.status == ObjectStatus::Tainted),
                }),
            });
            addrs.push(addr);
        }
        self.ctx
            .values
            .resources
            .insert(r.clone(), ResourceValues::new(instances.expansion));
        self.resources.insert(
            id,
            ResourceInfo {
                dependencies,
                create_before_destroy: block.lifecycle.create_before_destroy,
                provider: block.provider.clone(),
                remaining: tasks.len(),
            },
        );
        if tasks.is_empty() {
            self.complete(id);
            return;
        }
        match shared.dispatcher.dispatch(tasks).await {
            Ok(receivers) => {
                for (addr, rx) in addrs.into_iter().zip(receivers) {
                    pending.push(Box::pin(async move {
                        Done::Plan {
                            node: id,
                            addr,
                            result: rx.await.ok(),
                        }
                    }));
                }
            }
            Err(e) => {
                self.diags.push(Diagnostic::error(
                    "Failed to dispatch planning tasks",
                    e.to_string(),
                ));
                self.complete(id);
            }
        }
    }

    fn instance_planned(
        &mut self,
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    ) {
        let info = self.resources.get_mut(&node).expect("resource info");
        info.remaining -= 1;
        let finished = info.remaining == 0;
        let (deps, cbd, provider_local) = (
            info.dependencies.clone(),
            info.create_before_destroy,
            info.provider.clone(),
        );
        let provider = self.ctx.providers[&provider_local].0.addr.clone();
        let outcome = match result.map(|r| r.outcome) {
            Some(TaskOutcome::Plan(o)) => Some(o),
            Some(TaskOutcome::Failed(d)) => {
                self.diags.extend(d);
                None
            }
            Some(other) => {
                self.diags.push(
                    Diagnostic::error("Unexpected worker answer", format!("{other:?}"))
                        .for_address(&addr),
                );
                None
            }
            None => {
                self.diags.push(
                    Diagnostic::error("Lost a planning task", "the coordinator stopped waiting")
                        .for_address(&addr),
                );
                None
            }
        };
        let planned = match outcome {
            Some(o) if !o.diagnostics.has_errors() => {
                self.diags.extend(o.diagnostics.clone());
                let status = self
                    .ctx
                    .prior
                    .current(&addr)
                    .map(|c| c.status)
                    .unwrap_or_default();
                let (action, reason) = select_action(&ActionInputs {
                    prior: o.prior.as_ref().map(|p| (&p.value, status)),
                    planned: &o.planned,
                    requires_replace: &o.requires_replace,
                    replace_requested: false,
                    create_before_destroy: cbd,
                });
                let prior = o.prior.unwrap_or(PriorObject {
                    value: Value::Null,
                    private: vec![],
                    schema_version: 0,
                });
                self.changes.push(ResourceChange {
                    addr: addr.clone(),
                    deposed: None,
                    provider,
                    action,
                    reason,
                    before: prior.value,
                    after: o.planned.clone(),
                    requires_replace: o.requires_replace,
                    prior_private: prior.private,
                    planned_private: o.planned_private,
                    schema_version: prior.schema_version,
                    dependencies: deps,
                    create_before_destroy: cbd,
                });
                o.planned
            }
            Some(o) => {
                self.diags.extend(
                    o.diagnostics
                        .into_iter()
                        .map(|d| d.for_address(&addr))
                        .collect(),
                );
                Value::Unknown
            }
            None => Value::Unknown,
        };
        let r = &addr.resource.resource;
        if let Some(values) = self.ctx.values.resources.get_mut(r) {
            values.instances.insert(addr.resource.key.clone(), planned);
        }
        self.planned += 1;
        self.ctx.emit(RunEvent::Planning {
            done: self.planned,
            total: self.declared.len(),
        });
        if finished {
            self.complete(node);
        }
    }

    fn plan_output(&mut self, name: &str) {
        let output = &self.ctx.module.outputs[name];
        let after = if self.ctx.request.operation == Operation::Destroy {
            Value::Null
        } else {
            match evaluate(
                &output.expr,
                &EvalScope::new(&self.ctx.values, self.ctx.workspace()),
            ) {
                Ok(v) => v,
                Err(d) => {
                    self.diags.extend(d);
                    return;
                }
            }
        };
        let before = self.ctx.prior.outputs.get(name).map(|o| o.value.clone());
        let action = match (&before, &after) {
            (None, Value::Null) => Action::NoOp,
            (None, _) => Action::Create,
            (Some(_), Value::Null) => Action::Delete,
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

    /// Instances in state the plan did not visit: delete them (all of them
    /// in destroy mode), and every deposed object.
    fn orphans(&mut self) {
        let destroy = self.ctx.request.operation == Operation::Destroy;
        for (name, o) in &self.ctx.prior.outputs {
            if !self.ctx.module.outputs.contains_key(name) {
                self.outputs.insert(
                    name.clone(),
                    OutputChange {
                        action: Action::Delete,
                        before: Some(o.value.clone()),
                        after: Value::Null,
                        sensitive: o.sensitive,
                    },
                );
            }
        }
        for (addr, inst) in &self.ctx.prior.resources {
            let block = self.ctx.module.resources.get(&addr.resource.resource);
            let base = |obj: &ObjectState, deposed: Option<String>, reason| ResourceChange {
                addr: addr.clone(),
                deposed,
                provider: inst.provider.clone(),
                action: Action::Delete,
                reason,
                before: obj.value.clone(),
                after: Value::Null,
                requires_replace: vec![],
                prior_private: obj.private.clone(),
                planned_private: vec![],
                schema_version: obj.schema_version,
                dependencies: obj.dependencies.clone(),
                create_before_destroy: obj.create_before_destroy,
            };
            if let Some(obj) = &inst.current
                && (destroy || !self.declared.contains(addr))
            {
                let reason = match (block, &addr.resource.key) {
                    _ if destroy => ActionReason::None,
                    (None, _) => ActionReason::DeleteBecauseNoResourceConfig,
                    (Some(b), InstanceKey::Int(_)) if b.count.is_some() => {
                        ActionReason::DeleteBecauseCountIndex
                    }
                    (Some(b), InstanceKey::Str(_)) if b.for_each.is_some() => {
                        ActionReason::DeleteBecauseEachKey
                    }
                    (Some(_), _) => ActionReason::DeleteBecauseNoRepetition,
                };
                self.changes.push(base(obj, None, reason));
            }
            for (key, obj) in &inst.deposed {
                self.changes
                    .push(base(obj, Some(key.clone()), ActionReason::None));
            }
        }
    }
}

pub(crate) fn prior_object(o: &ObjectState) -> PriorObject {
    PriorObject {
        value: o.value.clone(),
        private: o.private.clone(),
        schema_version: o.schema_version,
    }
}
