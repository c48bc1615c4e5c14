//! Planning one resource: expansion into instances, configuration decoded
//! against the schema, the lifecycle rules (ignore_changes,
//! replace_triggered_by), managed plans and data source reads dispatched to
//! workers, and their results turned into changes.

use crate::run::eval::expand::expand;
use crate::run::eval::scope::EvalScope;
use crate::run::eval::sensitivity::{object_marks, schema_of, sensitivity_changes};
use crate::run::plan::walk::{Answer, PlanPrior, Queued, ResourceInfo, Walker};
use crate::run::values::{Expansion, ResourceValues};
use fleetform_lang::config::ResourceBlock;
use fleetform_lang::eval::{Expr, ExprKind, Marks, evaluate};
use fleetform_lang::graph::config::ConfigNode;
use fleetform_lang::rules::conditions::RuleStatus;
use fleetform_lang::rules::lifecycle::apply_ignore_changes;
use fleetform_shared::addr::{
    AbsResource, AbsResourceInstance, ConfigResource, InstanceKey, ModuleInstance, ProviderAddr,
    Resource, ResourceMode,
};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::graph::NodeId;
use fleetform_shared::plan::{
    Action, ActionInputs, ActionReason, DataRecord, ResourceChange, select_action,
};
use fleetform_shared::schema::Schema;
use fleetform_shared::state::{ObjectState, ObjectStatus};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{
    ApplyOp, Operation, PlanOutcome, PlanTask, PriorObject, ProviderSpec, ReadTask, RunEvent,
    TaskKind, TaskOutcome, TaskResult,
};
use std::sync::Arc;

/// What planning the instances of one resource share (see
/// [`Walker::start_instance`]).
struct Starting<'b> {
    id: NodeId,
    dir: &'b str,
    block: &'b ResourceBlock,
    spec: &'b Arc<ProviderSpec>,
    type_schema: &'b Schema,
    data: bool,
    /// A data source waits for apply: something it depends on changes.
    upstream_changes: bool,
    /// Configuration is generated for its imports.
    generating: bool,
    dependencies: &'b Vec<AbsResource>,
    /// Instances whose `replace_triggered_by` fired.
    triggered: std::cell::RefCell<std::collections::HashSet<AbsResourceInstance>>,
}

/// What the change of one planned instance takes besides the provider's
/// answer (see [`Walker::planned_change`]).
struct PlannedInstance {
    /// Its resource's dependencies, and those its object had when applied.
    deps: Vec<AbsResource>,
    create_before_destroy: bool,
    /// Its `replace_triggered_by` fired.
    triggered: bool,
    provider: ProviderAddr,
}

impl<'a> Walker<'_, 'a> {
    /// The resources a resource depends on directly: the nearest managed
    /// ones on every path through named values, data sources and module
    /// boundaries, and the data sources on those paths, in every instance
    /// of their module. Terraform records the
    /// transitive set; that is their closure (each of these records its own),
    /// and keeping only the nearest keeps plans and state linear in the
    /// configuration: a chain of n resources used to carry n²/2 addresses.
    /// The apply graph orders through the closure (`graph::apply`).
    pub(in crate::run) fn direct_dependencies(&self, id: NodeId) -> Vec<AbsResource> {
        let dag = &self.graph.dag;
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<NodeId> = dag.dependencies(id).collect();
        let mut nearest = Vec::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            match dag.node(n) {
                ConfigNode::Resource(dep) if dep.resource.mode == ResourceMode::Managed => {
                    nearest.push(dep.clone());
                    // One with no instance (count = 0, an empty for_each, a
                    // module with none) has no change to carry its own
                    // dependencies: look through it.
                    let values = &self.ctx.values;
                    let present = values.instances_of(&dep.module).into_iter().any(|inst| {
                        values
                            .resource(&dep.absolute(inst))
                            .is_some_and(|v| !v.instances.is_empty())
                    });
                    if !present {
                        stack.extend(dag.dependencies(n));
                    }
                }
                // A data source is recorded and looked through: a read
                // deferred to apply must come before what uses its result
                // (the apply graph orders by these), and Terraform's state
                // names the data sources an object depends on too. The
                // managed resources behind it are still found here, since
                // a data source read while planning has no change to carry
                // its own dependencies.
                ConfigNode::Resource(dep) if dep.resource.mode == ResourceMode::Data => {
                    nearest.push(dep.clone());
                    stack.extend(dag.dependencies(n));
                }
                _ => stack.extend(dag.dependencies(n)),
            }
        }
        nearest.sort();
        nearest.dedup();
        nearest
            .into_iter()
            .flat_map(|dep| {
                self.ctx
                    .values
                    .instances_of(&dep.module)
                    .into_iter()
                    .map(move |inst| dep.absolute(inst))
            })
            .collect()
    }

    /// Whether anything a data source depends on, directly or not, plans a
    /// change: then it is read during apply.
    fn upstream_changes(&self, id: NodeId) -> bool {
        let upstream: std::collections::HashSet<ConfigResource> = self
            .graph
            .dag
            .ancestors_of([id])
            .into_iter()
            .filter(|n| *n != id)
            .filter_map(|n| match self.graph.dag.node(n) {
                ConfigNode::Resource(dep) if dep.resource.mode == ResourceMode::Managed => {
                    Some(dep.clone())
                }
                _ => None,
            })
            .collect();
        self.changes
            .iter()
            .any(|c| c.action != Action::NoOp && upstream.contains(&c.addr.config_resource()))
    }
    /// Expands the resource and queues its instances' planning tasks
    /// (dispatched by the walk as its window has room).
    pub(in crate::run) fn start_resource(&mut self, id: NodeId, r: ConfigResource) {
        let config = self.ctx.config;
        let Some(node) = config.module(&r.module) else {
            self.complete(id);
            return;
        };
        let block: &ResourceBlock = &node.module.resources[&r.resource];
        let destroy = self.ctx.request.operation == Operation::Destroy;
        if r.resource.mode == ResourceMode::Ephemeral {
            self.start_ephemeral(id, r);
            return;
        }
        let data = r.resource.mode == ResourceMode::Data;
        if destroy || (data && self.ctx.request.options.refresh_only) {
            self.set_prior_values(&r);
            self.complete(id);
            return;
        }
        let dependencies = self.direct_dependencies(id);
        let provider = self.ctx.graph.resource_providers.get(&r).cloned();
        let Some((spec, schema)) = provider
            .as_ref()
            .and_then(|p| self.ctx.providers.get(p))
            .cloned()
        else {
            // The provider failed to configure; its diagnostics are recorded.
            self.unknown_resource(id, &r);
            return;
        };
        let provider = provider.expect("checked above");
        let type_name = &r.resource.type_name;
        let type_schema = if data {
            schema.data_sources.get(type_name.as_str())
        } else {
            schema.resources.get(type_name.as_str())
        };
        let Some(type_schema) = type_schema else {
            let what = if data { "data source" } else { "resource type" };
            self.diags.push(
                Diagnostic::error(
                    format!("Invalid {what}"),
                    format!(
                        "The provider {} does not support {what} \"{type_name}\".",
                        spec.addr
                    ),
                )
                .at(block.decl_range.clone())
                .in_context(block.header()),
            );
            self.unknown_resource(id, &r);
            return;
        };
        // Data sources wait for apply when something they depend on changes.
        let upstream_changes = data && self.upstream_changes(id);
        let generating = self.generating(&r);
        let mut queued = Vec::new();
        let st = Starting {
            id,
            dir: &node.dir,
            block,
            spec: &spec,
            type_schema,
            data,
            upstream_changes,
            generating,
            dependencies: &dependencies,
            triggered: std::cell::RefCell::new(std::collections::HashSet::new()),
        };
        for inst in self.ctx.values.instances_of(&r.module) {
            let abs = r.absolute(inst.clone());
            let scope =
                EvalScope::in_module(&self.ctx.values, &inst, &node.dir, self.ctx.workspace());
            let instances = match expand(block, &scope) {
                Ok(i) => i,
                Err(d) => {
                    self.diags.extend(d);
                    self.ctx
                        .values
                        .set_resource(&abs, ResourceValues::new(Expansion::Unknown));
                    continue;
                }
            };
            let mut values = self.ctx.resource_values(&r, instances.expansion);
            for (key, each) in &instances.keys {
                let each_marks = instances.each_marks.get(key);
                self.start_instance(
                    &st,
                    &inst,
                    &abs,
                    (key, each.as_ref(), each_marks),
                    &mut values,
                    &mut queued,
                );
            }
            self.ctx.values.set_resource(&abs, values);
        }
        let triggered = st.triggered.into_inner();
        self.resources.insert(
            id,
            ResourceInfo {
                dependencies,
                create_before_destroy: block.lifecycle.create_before_destroy,
                provider,
                remaining: queued.len(),
                triggered,
            },
        );
        if queued.is_empty() {
            self.complete(id);
            return;
        }
        self.queued.extend(queued);
    }

    /// Plans one instance of a resource being started: its configuration
    /// decoded and checked, then a read, an import or a plan task queued,
    /// or its value set when it waits for apply or is not selected.
    fn start_instance(
        &mut self,
        st: &Starting<'_>,
        inst: &ModuleInstance,
        abs: &AbsResource,
        (key, each, each_marks): (&InstanceKey, Option<&Value>, Option<&Marks>),
        values: &mut ResourceValues,
        queued: &mut Vec<Queued>,
    ) {
        let (block, type_schema) = (st.block, st.type_schema);
        let addr = abs.instance(key.clone());
        self.declared.insert(abs, key);
        let current = self.ctx.prior.current(&addr);
        if !self.selection.includes(&addr, &[]) {
            if let Some(obj) = current {
                values.set_object(key, obj);
            }
            return;
        }
        let scope = EvalScope {
            key,
            each_value: each,
            each_marks,
            ..EvalScope::in_module(&self.ctx.values, inst, st.dir, self.ctx.workspace())
        };
        // An instance that reads nothing of other resources is not
        // recorded: it keeps Terraform's rule, which holds it back
        // only in the rare case a failure comes before it anyway.
        let refs = crate::run::eval::instance_refs::narrowed(
            &*self.ctx,
            &mut self.refs_memo,
            st.block,
            inst,
            &scope,
        );
        if let Some(refs) = refs.filter(|r| *r != Default::default()) {
            self.instance_refs.insert(addr.clone(), refs);
        }
        if st.generating {
            self.start_generated(st, addr, key, values, queued);
            return;
        }
        let (pre, d) = crate::run::eval::conditions::preconditions(st.block, &scope);
        self.diags.extend(d);
        if pre == RuleStatus::Failed {
            values.instances.insert(key.clone(), Value::unknown());
            return;
        }
        if let Some(each) = each.filter(|_| !st.block.lifecycle.postconditions.is_empty()) {
            self.condition_each.insert(addr.clone(), each.clone());
        }
        if !st.data {
            let d = fleetform_lang::config::check_resource_arguments(
                &block.body,
                &type_schema.block,
                &scope,
                &block.header(),
                &addr.to_string(),
            );
            if d.has_errors() {
                self.diags.extend(d);
                values.instances.insert(key.clone(), Value::unknown());
                return;
            }
        }
        let (config, config_marks, d) = st.block.body.decode_marked(&type_schema.block, &scope);
        if self.diags.extend_at(d, &addr) {
            values.instances.insert(key.clone(), Value::unknown());
            return;
        }
        // Kept until the instance is planned: its planned value's marks
        // start from its configuration's.
        values.set_marks(key, config_marks.clone());
        if st.data {
            self.start_read(st, addr, key, (config, config_marks), pre, values, queued);
            return;
        }
        // Whether a `replace_triggered_by` fires is decided here, where the
        // instance's scope is; only a plan that changes objects uses it.
        let fires = current.is_some()
            && !self.ctx.request.options.refresh_only
            && self.triggers_fire(st.block, &scope);
        self.start_change(st, addr, key, config, fires, values, queued);
    }

    /// An instance whose configuration is generated from its import: an
    /// empty stand-in block, the import gives the object its
    /// configuration is written from (see `imported`).
    fn start_generated(
        &mut self,
        st: &Starting<'_>,
        addr: AbsResourceInstance,
        key: &InstanceKey,
        values: &mut ResourceValues,
        queued: &mut Vec<Queued>,
    ) {
        let (spec, type_name) = (st.spec, addr.resource.resource.type_name.clone());
        let current = self.ctx.prior.current(&addr);
        // An empty stand-in block: the import gives the object
        // its configuration is written from (see `imported`).
        let source = self.import_ids.get(&addr).cloned();
        let task = match (current, source) {
            (None, Some(source)) => {
                self.import_task(st.id, spec, &type_name, addr, Value::null(), &source)
            }
            _ => {
                self.diags
                    .push(crate::run::plan::import::nothing_to_generate(&addr));
                None
            }
        };
        match task {
            Some(q) => queued.push(q),
            None => {
                values.instances.insert(key.clone(), Value::unknown());
            }
        }
    }

    /// A managed instance whose configuration decoded: refreshed only,
    /// imported, or planned (on a fresh read or a reused one).
    #[allow(clippy::too_many_arguments)]
    fn start_change(
        &mut self,
        st: &Starting<'_>,
        addr: AbsResourceInstance,
        key: &InstanceKey,
        config: Value,
        fires: bool,
        values: &mut ResourceValues,
        queued: &mut Vec<Queued>,
    ) {
        let (block, spec) = (st.block, st.spec);
        let type_name = addr.resource.resource.type_name.clone();
        let current = self.ctx.prior.current(&addr);
        if self.ctx.request.options.refresh_only {
            // Only refresh: nothing to plan for objects that do not exist.
            let Some(obj) = current else {
                values.instances.insert(key.clone(), Value::unknown());
                return;
            };
            // Refreshing keeps what the object's state records.
            values.set_object(key, obj);
            if self.ctx.handle.background && self.reusable(&addr).is_some() {
                // A background refresh reads only what is stale.
                return;
            }
            queued.push(self.plan_task(st.id, spec, addr, PlanPrior::State, Value::null(), false));
            return;
        }
        if self.ctx.request.options.import_only && !self.import_ids.contains_key(&addr) {
            if let Some(obj) = current {
                values.set_object(key, obj);
            }
            return;
        }
        if current.is_none()
            && let Some(source) = self.import_ids.get(&addr).cloned()
        {
            match self.import_task(st.id, spec, &type_name, addr, config, &source) {
                Some(q) => queued.push(q),
                None => {
                    values.instances.insert(key.clone(), Value::unknown());
                }
            }
            return;
        }
        let config = apply_ignore_changes(
            config,
            current.map(|o| &o.value),
            &block.lifecycle.ignore_changes,
        );
        if fires {
            st.triggered.borrow_mut().insert(addr.clone());
        }
        let force = fires
            || self.replace.contains(&addr)
            || current.is_some_and(|o| o.status == ObjectStatus::Tainted);
        let reused = current.and_then(|_| self.reusable(&addr));
        let on_reused = reused.is_some();
        let prior = match (current, reused) {
            (Some(_), Some(read)) => PlanPrior::Given(read),
            (Some(_), None) => PlanPrior::State,
            (None, _) => PlanPrior::None,
        };
        if on_reused {
            self.plan_on_reused(&addr, spec, &config, force);
        }
        let mut q = self.plan_task(st.id, spec, addr, prior, config, force);
        if let (true, TaskKind::Plan(p)) = (on_reused, &mut q.kind) {
            p.refresh = false;
        }
        queued.push(q);
    }

    /// A data source's instance: read now (a task queued), or at apply
    /// when its configuration or a dependency is not known yet.
    #[allow(clippy::too_many_arguments)]
    fn start_read(
        &mut self,
        st: &Starting<'_>,
        addr: AbsResourceInstance,
        key: &InstanceKey,
        (config, config_marks): (Value, Marks),
        pre: RuleStatus,
        values: &mut ResourceValues,
        queued: &mut Vec<Queued>,
    ) {
        let (spec, type_schema) = (st.spec, st.type_schema);
        let type_name = &addr.resource.resource.type_name.clone();
        // An unknown precondition waits for apply, like the read.
        if st.upstream_changes || !config.is_wholly_known() || pre == RuleStatus::Unknown {
            let planned = unknown_computed(&type_schema.block, &config);
            let value_marks = config_marks.clone();
            let marks = object_marks(config_marks, Some(&type_schema.block), &planned);
            values.instances.insert(key.clone(), planned.clone());
            values.set_marks(key, marks.clone());
            let mut change = read_change(&addr, &spec.addr, planned, st.dependencies.clone());
            // Recorded in state as the read is, once it is done at apply.
            change.schema_version = type_schema.version;
            change.value_sensitive_paths = value_marks.into_paths().into();
            change.reason = if config.is_wholly_known() {
                ActionReason::ReadBecauseDependencyPending
            } else {
                ActionReason::ReadBecauseConfigUnknown
            };
            change.sensitive_paths = marks.into_paths().into();
            self.push_change(change);
            return;
        }
        queued.push(Queued {
            node: st.id,
            answer: Answer::Read,
            id: format!("{}:read:{addr}", self.ctx.planning_prefix()),
            provider: st.spec.clone(),
            kind: TaskKind::Read(ReadTask {
                addr: addr.clone(),
                type_name: type_name.to_string(),
                config,
            }),
            prior_from_state: false,
            addr,
        });
    }

    pub(in crate::run) fn unknown_resource(&mut self, id: NodeId, r: &ConfigResource) {
        for inst in self.ctx.values.instances_of(&r.module) {
            self.ctx
                .values
                .set_resource(&r.absolute(inst), ResourceValues::new(Expansion::Unknown));
        }
        self.complete(id);
    }

    /// A plan task for `addr`, queued.
    pub(in crate::run) fn plan_task(
        &self,
        node: NodeId,
        spec: &Arc<ProviderSpec>,
        addr: AbsResourceInstance,
        prior: PlanPrior,
        config: Value,
        force_replace: bool,
    ) -> Queued {
        let (prior, prior_from_state) = match prior {
            PlanPrior::None => (None, false),
            PlanPrior::State => (None, true),
            PlanPrior::Given(p) => (Some(p), false),
        };
        let refresh = self.ctx.request.options.refresh || self.ctx.request.options.refresh_only;
        Queued {
            node,
            answer: Answer::Plan,
            id: format!("{}:plan:{addr}", self.ctx.planning_prefix()),
            provider: spec.clone(),
            kind: TaskKind::Plan(PlanTask {
                addr: addr.clone(),
                type_name: addr.resource.resource.type_name.to_string(),
                prior,
                config,
                refresh,
                force_replace,
            }),
            prior_from_state,
            addr,
        }
    }

    /// `replace_triggered_by`: a referenced instance planned for update or
    /// replacement, or a referenced attribute whose value changes.
    fn triggers_fire(&self, block: &ResourceBlock, scope: &EvalScope<'_>) -> bool {
        block.lifecycle.replace_triggered_by.iter().any(|expr| {
            let (resource, index, attr) = match trigger_target(expr) {
                Some(t) => t,
                None => {
                    // Anything else: fire when any referenced resource changes.
                    return expr.references().iter().any(|(r, _)| match r {
                        fleetform_lang::eval::Reference::Resource(res) => self
                            .resource_changes(scope.module, res, None)
                            .any(|c| is_update_or_replace(c.action)),
                        _ => false,
                    });
                }
            };
            let key = match index {
                None => None,
                Some(e) => match evaluate(e, scope) {
                    Ok(Value::Number(n)) => n.as_i64().map(InstanceKey::Int),
                    Ok(Value::String(s)) => Some(InstanceKey::Str(s)),
                    _ => return false,
                },
            };
            self.resource_changes(scope.module, &resource, key.as_ref())
                .any(|c| match &attr {
                    Some(a) => {
                        let after = c.after.get_attr(a);
                        !after.is_wholly_known() || c.before.get_attr(a) != after
                    }
                    None => is_update_or_replace(c.action),
                })
        })
    }

    fn resource_changes<'s>(
        &'s self,
        module: &'s ModuleInstance,
        r: &'s Resource,
        key: Option<&'s InstanceKey>,
    ) -> impl Iterator<Item = &'s ResourceChange> + 's {
        self.changes.iter().filter(move |c| {
            &c.addr.resource.resource == r
                && &c.addr.module == module
                && c.deposed.is_none()
                && key.is_none_or(|k| c.addr.key() == k)
        })
    }

    pub(in crate::run) fn instance_planned(
        &mut self,
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    ) {
        let info = self.resources.get_mut(&node).expect("resource info");
        info.remaining -= 1;
        let finished = info.remaining == 0;
        let (mut deps, cbd) = (info.dependencies.clone(), info.create_before_destroy);
        // Order by what the object depended on when it was applied, too: a
        // dependency removed from the configuration is destroyed after this
        // instance's update (docs/planning/destroying.md).
        if let Some(current) = self.ctx.prior.current(&addr) {
            for d in &current.dependencies {
                if !deps.contains(d) {
                    deps.push(d.clone());
                }
            }
        }
        let triggered = info.triggered.contains(&addr);
        let provider = self.ctx.providers[&info.provider].0.addr.clone();
        let outcome = match self.outcome(&addr, result) {
            Some(TaskOutcome::Plan(o)) => Some(o),
            _ => None,
        };
        let planned = match outcome {
            Some(o) if !o.diagnostics.has_errors() => {
                let planned = PlannedInstance {
                    deps,
                    create_before_destroy: cbd,
                    triggered,
                    provider,
                };
                match self.planned_change(node, &addr, o, planned) {
                    Some(planned) => planned,
                    // Planned again on a new read.
                    None => return,
                }
            }
            Some(o) => {
                self.diags.extend_at(o.diagnostics, &addr);
                (Value::unknown(), Marks::none())
            }
            None => (Value::unknown(), Marks::none()),
        };
        self.instance_value(&addr, planned.0, planned.1);
        if finished {
            self.complete(node);
        }
    }

    /// The change of an instance the provider planned without errors: its
    /// action, drift and marks; None when it is planned again on a new
    /// read (see `reuse`).
    fn planned_change(
        &mut self,
        node: NodeId,
        addr: &AbsResourceInstance,
        mut o: PlanOutcome,
        planned: PlannedInstance,
    ) -> Option<(Value, Marks)> {
        let PlannedInstance {
            deps,
            create_before_destroy: cbd,
            triggered,
            provider,
        } = planned;
        let refresh_only = self.ctx.request.options.refresh_only;
        let current = self.ctx.prior.current(addr);
        let status = current.map(|c| c.status).unwrap_or_default();
        let (action, reason) = if refresh_only {
            (Action::NoOp, ActionReason::None)
        } else {
            select_action(&ActionInputs {
                prior: o.prior.as_ref().map(|p| (&p.value, status)),
                planned: &o.planned,
                requires_replace: &o.requires_replace,
                replace_requested: self.replace.contains(addr),
                replace_triggered: triggered,
                create_before_destroy: cbd,
            })
        };
        // Nothing is changed on an earlier read: planned again on a
        // new one, this answer is dropped (its diagnostics too, which
        // the new plan gives again). A change only of sensitivity
        // (below) does not hang on the read, and is kept.
        if action != Action::NoOp && self.reread_changed(node, addr) {
            return None;
        }
        share_unchanged(&mut o, self.ctx.prior.current(addr));
        self.plan_read(addr, o.prior.as_ref());
        self.diags.extend(std::mem::take(&mut o.diagnostics));
        let current = self.ctx.prior.current(addr);
        // What the state records, as its schema upgrade left it.
        let recorded = o
            .upgraded
            .take()
            .or_else(|| current.map(|c| c.value.clone()))
            .unwrap_or(Value::null());
        if let Some(c) = current
            && let Some(d) = crate::run::plan::drift::drift_of(
                addr,
                &provider,
                c,
                &recorded,
                o.prior.as_ref().map(|p| &p.value),
            )
        {
            self.drift.push(d);
        }
        // Moved, not copied: the answer is this instance's alone.
        let prior = o.prior.take().unwrap_or(PriorObject {
            value: Value::null(),
            private: vec![],
            schema_version: 0,
        });
        // A refresh-only plan records what refreshing found: the
        // state before it, and after it.
        let (before, after) = if refresh_only {
            (recorded, prior.value)
        } else {
            (prior.value, o.planned)
        };
        let marks = self.planned_marks(addr, &provider, &after);
        let config_marks = self.config_marks(addr);
        let action = match current {
            Some(c) if action == Action::NoOp && !refresh_only => {
                let schema = schema_of(self.ctx, &provider, addr);
                if sensitivity_changes(c, schema, &marks) {
                    Action::Update
                } else {
                    action
                }
            }
            _ => action,
        };
        self.push_change(ResourceChange {
            addr: addr.clone(),
            deposed: None,
            provider,
            action,
            reason,
            before,
            after: after.clone(),
            requires_replace: o.requires_replace.into(),
            prior_private: prior.private.into(),
            planned_private: o.planned_private.into(),
            schema_version: prior.schema_version,
            dependencies: deps,
            create_before_destroy: cbd,
            sensitive_paths: marks.clone().into_paths().into(),
            before_sensitive_paths: Default::default(),
            value_sensitive_paths: config_marks.into_paths().into(),
            write_only_paths: Default::default(),
        });
        if !refresh_only {
            self.postconditions_planned(addr, &after);
        }
        Some((after, marks))
    }

    /// An instance whose planning failed (diagnostics already recorded).
    pub(in crate::run) fn instance_failed(&mut self, node: NodeId, addr: &AbsResourceInstance) {
        let info = self.resources.get_mut(&node).expect("resource info");
        info.remaining -= 1;
        let finished = info.remaining == 0;
        self.instance_value(addr, Value::unknown(), Marks::none());
        if finished {
            self.complete(node);
        }
    }

    /// "ADDR: Reading...": a data source read while planning is shown as
    /// Terraform shows it, with the events an apply's read has.
    pub(in crate::run) fn read_started(&mut self, addr: &AbsResourceInstance) {
        self.reads_started
            .insert(addr.clone(), std::time::Instant::now());
        self.ctx.emit(RunEvent::ApplyStart {
            addr: addr.clone(),
            deposed: None,
            action: Action::Read,
            op: ApplyOp::Read,
        });
    }

    /// "ADDR: Read complete after Ns [id=ID]" for a read that succeeded.
    fn read_complete(&mut self, addr: &AbsResourceInstance, value: &Value, worker: String) {
        let Some(t0) = self.reads_started.remove(addr) else {
            return;
        };
        self.ctx.emit(RunEvent::ApplyComplete {
            addr: addr.clone(),
            deposed: None,
            action: Action::Read,
            op: ApplyOp::Read,
            id: value.get_attr("id").as_str().map(str::to_string),
            elapsed_ms: t0.elapsed().as_millis() as u64,
            worker,
        });
    }

    pub(in crate::run) fn data_read(
        &mut self,
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    ) {
        let worker = result.as_ref().map(|r| r.worker.clone());
        let info = self.resources.get_mut(&node).expect("resource info");
        info.remaining -= 1;
        let finished = info.remaining == 0;
        let (spec, schema) = &self.ctx.providers[&info.provider];
        let provider = spec.addr.clone();
        let schema_version = schema
            .data_sources
            .get(addr.resource.resource.type_name.as_str())
            .map_or(0, |s| s.version);
        let first_diag = self.diags.0.len();
        let value = match self.outcome(&addr, result) {
            Some(TaskOutcome::Read(o)) => {
                if self.diags.extend_at(o.diagnostics, &addr) {
                    Value::unknown()
                } else {
                    o.state
                }
            }
            _ => Value::unknown(),
        };
        // A read that failed is reported by its diagnostics, as Terraform
        // reports it (no "Read complete").
        let failed = self.diags.0[first_diag..].iter().any(|d| d.is_error());
        match worker {
            Some(w) if !failed => self.read_complete(&addr, &value, w),
            _ => {
                self.reads_started.remove(&addr);
            }
        }
        let marks = self.planned_marks(&addr, &provider, &value);
        if value.is_wholly_known() {
            self.data_values.insert(addr.clone(), value.clone());
            let record = DataRecord {
                schema_version,
                provider,
                sensitive_paths: marks.clone().into_paths(),
                value_sensitive_paths: self.config_marks(&addr).into_paths(),
            };
            self.data_records.insert(addr.clone(), record);
            self.postconditions_planned(&addr, &value);
        }
        self.check_scoped_warnings(&addr, first_diag);
        self.instance_value(&addr, value, marks);
        if finished {
            self.complete(node);
        }
    }

    /// The task's outcome; failures become diagnostics.
    pub(in crate::run) fn outcome(
        &mut self,
        addr: &AbsResourceInstance,
        result: Option<TaskResult>,
    ) -> Option<TaskOutcome> {
        match result.map(|r| r.outcome) {
            Some(TaskOutcome::Failed(d)) => {
                self.diags.extend_at(d, addr);
                None
            }
            Some(o) => Some(o),
            None => {
                self.diags.push(
                    Diagnostic::error("Lost a planning task", "the coordinator stopped waiting")
                        .for_address(addr),
                );
                None
            }
        }
    }

    /// The marks of an instance's new value: its configuration's (kept
    /// since the instance was started) and its schema's.
    fn planned_marks(
        &self,
        addr: &AbsResourceInstance,
        provider: &ProviderAddr,
        value: &Value,
    ) -> Marks {
        object_marks(
            self.config_marks(addr),
            schema_of(self.ctx, provider, addr),
            value,
        )
    }

    /// The marks the configuration's values gave the instance (sensitive
    /// variables, `sensitive()`), before the schema's are added.
    fn config_marks(&self, addr: &AbsResourceInstance) -> Marks {
        self.ctx
            .values
            .resource(&addr.containing_resource())
            .and_then(|v| v.marks.get(addr.key()))
            .cloned()
            .unwrap_or_default()
    }

    fn instance_value(&mut self, addr: &AbsResourceInstance, value: Value, marks: Marks) {
        if let Some(values) = self.ctx.values.resource_mut(&addr.containing_resource()) {
            values.instances.insert(addr.resource.key.clone(), value);
            values.set_marks(&addr.resource.key, marks);
        }
        self.planned += 1;
        self.ctx.emit(RunEvent::Planning {
            done: self.planned,
            total: self.declared.len(),
        });
    }
}

/// One copy of an object where the answer gave back what was there: the
/// read the state's object when nothing changed outside, the planned
/// object the read one when the plan changes nothing. Each answer is
/// decoded apart, so a re-plan otherwise held every object three times
/// (the state's, the read's in the plan and the record of reads, the
/// planned one) at once. Shared only when identical, the types carried
/// included, so nothing downstream can tell.
fn share_unchanged(o: &mut PlanOutcome, current: Option<&ObjectState>) {
    if let (Some(read), Some(state)) = (o.prior.as_mut(), current)
        && read.value.identical(&state.value)
    {
        read.value = state.value.clone();
    }
    if let Some(read) = &o.prior
        && o.planned.identical(&read.value)
    {
        o.planned = read.value.clone();
    }
}

fn is_update_or_replace(a: Action) -> bool {
    matches!(
        a,
        Action::Update | Action::DeleteThenCreate | Action::CreateThenDelete
    )
}

/// `type.name`, `type.name[index]`, optionally followed by `.attribute`.
fn trigger_target(expr: &Expr) -> Option<(Resource, Option<&Expr>, Option<String>)> {
    fn base(e: &Expr) -> Option<Resource> {
        match &e.kind {
            ExprKind::GetAttr(inner, name) => match &inner.kind {
                ExprKind::Variable(t)
                    if !matches!(
                        t.as_str(),
                        "var"
                            | "local"
                            | "data"
                            | "count"
                            | "each"
                            | "path"
                            | "module"
                            | "terraform"
                            | "self"
                    ) =>
                {
                    Some(Resource::managed(t, name))
                }
                _ => None,
            },
            _ => None,
        }
    }
    if let Some(r) = base(expr) {
        return Some((r, None, None));
    }
    match &expr.kind {
        ExprKind::Index(inner, key) => base(inner).map(|r| (r, Some(key.as_ref()), None)),
        ExprKind::GetAttr(inner, attr) => match trigger_target(inner)? {
            (r, idx, None) => Some((r, idx, Some(attr.clone()))),
            _ => None,
        },
        _ => None,
    }
}

/// A deferred data source's value until it is read: its configuration with
/// every attribute it left to the provider unknown.
fn unknown_computed(schema: &fleetform_shared::schema::Block, config: &Value) -> Value {
    let mut out = config.as_map().cloned().unwrap_or_default();
    for (name, a) in &schema.attributes {
        if a.computed && out.get(name).is_none_or(Value::is_null) {
            out.insert(name.clone(), Value::unknown());
        }
    }
    Value::Map(out)
}

fn read_change(
    addr: &AbsResourceInstance,
    provider: &fleetform_shared::ProviderAddr,
    planned: Value,
    deps: Vec<AbsResource>,
) -> ResourceChange {
    ResourceChange {
        addr: addr.clone(),
        deposed: None,
        provider: provider.clone(),
        action: Action::Read,
        reason: ActionReason::None,
        before: Value::null(),
        after: planned,
        requires_replace: Default::default(),
        prior_private: Default::default(),
        planned_private: Default::default(),
        schema_version: 0,
        dependencies: deps,
        create_before_destroy: false,
        sensitive_paths: Default::default(),
        before_sensitive_paths: Default::default(),
        value_sensitive_paths: Default::default(),
        write_only_paths: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::share_unchanged;
    use fleetform_shared::state::ObjectState;
    use fleetform_shared::types::Type;
    use fleetform_shared::value::Value;
    use fleetform_shared::wire::{PlanOutcome, PriorObject};

    fn object(name: &str, tags: Type) -> Value {
        Value::object([
            ("id", Value::string("i-1")),
            ("name", Value::string(name)),
            ("tags", Value::null_of(tags)),
        ])
    }

    fn outcome(read: Value, planned: Value) -> PlanOutcome {
        PlanOutcome {
            prior: Some(PriorObject {
                value: read,
                private: vec![],
                schema_version: 0,
            }),
            upgraded: None,
            planned,
            planned_private: vec![],
            requires_replace: vec![],
            replace: false,
            diagnostics: Default::default(),
        }
    }

    fn state(value: Value) -> ObjectState {
        ObjectState::new(value)
    }

    fn shared(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Map(a), Value::Map(b)) => a.shares_entries(b),
            _ => false,
        }
    }

    #[test]
    fn an_unchanged_object_is_kept_once() {
        let tags = Type::map(Type::String);
        let st = state(object("x", tags.clone()));
        let mut o = outcome(object("x", tags.clone()), object("x", tags.clone()));
        assert!(!shared(&o.prior.as_ref().unwrap().value, &st.value));
        share_unchanged(&mut o, Some(&st));
        let read = &o.prior.as_ref().unwrap().value;
        assert!(shared(read, &st.value));
        assert!(shared(&o.planned, read));
    }

    #[test]
    fn a_changed_or_differently_typed_object_keeps_its_own_copy() {
        let tags = Type::map(Type::String);
        // Drift: the read is its own; the plan that changes nothing more
        // shares the read.
        let st = state(object("x", tags.clone()));
        let mut o = outcome(object("y", tags.clone()), object("y", tags.clone()));
        share_unchanged(&mut o, Some(&st));
        let read = &o.prior.as_ref().unwrap().value;
        assert!(!shared(read, &st.value));
        assert!(shared(&o.planned, read));

        // Equal by `==` but carrying another type: never swapped.
        let st = state(object("x", Type::map(Type::Number)));
        let mut o = outcome(object("x", tags.clone()), object("z", tags.clone()));
        assert_eq!(o.prior.as_ref().unwrap().value, st.value);
        share_unchanged(&mut o, Some(&st));
        let read = &o.prior.as_ref().unwrap().value;
        assert!(!shared(read, &st.value));
        assert!(!shared(&o.planned, read));
        assert_eq!(o.planned.get_attr("name").as_str(), Some("z"));

        // A create: nothing to share with.
        let mut o = outcome(object("x", tags.clone()), Value::unknown());
        o.prior = None;
        share_unchanged(&mut o, None);
        assert!(o.planned.is_unknown());
    }
}
