//! What a plan destroys: instances in state the configuration no longer
//! declares (everything, in a destroy), deposed objects, the providers'
//! say on destroys they asked to plan (`plan_destroy`), and
//! `prevent_destroy`.

use crate::run::plan::walk::Walker;
use fleetform_lang::graph::targeting::Mode;
use fleetform_lang::rules::lifecycle::check_prevent_destroy;
use fleetform_shared::addr::{AbsResource, InstanceKey, ResourceMode};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::plan::{Action, ActionReason, OutputChange, ResourceChange};
use fleetform_shared::state::{DependencyClosure, ObjectState};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{Operation, PriorObject, Task};

impl Walker<'_, '_> {
    /// Instances in state the plan did not visit: delete them (all of them
    /// in destroy mode), and every deposed object.
    pub(in crate::run) fn orphans(&mut self) {
        let destroy = self.ctx.request.operation == Operation::Destroy;
        let refresh_only = self.ctx.request.options.refresh_only;
        if self.selection.mode == Mode::All {
            for (name, o) in &self.ctx.prior.outputs {
                if !self.ctx.module.outputs.contains_key(name) {
                    let change = OutputChange {
                        action: Action::Delete,
                        before: Some(o.value.clone()),
                        after: Value::null(),
                        sensitive: o.sensitive,
                    };
                    self.outputs.insert(name.clone(), change);
                }
            }
        }
        if refresh_only {
            return;
        }
        let mut orphans = Vec::new();
        // -exclude leaves out what depends on an excluded resource, however
        // far down: state records the nearest dependencies, so take their
        // closure (only then: it is quadratic in a chain's length).
        let closure = self
            .selection
            .is_partial()
            .then(|| DependencyClosure::of_state(&self.ctx.prior));
        for (addr, inst) in &self.ctx.prior.resources {
            let mut deps: Vec<AbsResource> = inst
                .current
                .iter()
                .chain(inst.deposed.values())
                .flat_map(|o| o.dependencies.clone())
                .collect();
            if let Some(closure) = &closure {
                deps = closure.of(&deps);
            }
            let cr = addr.config_resource();
            let block = self
                .ctx
                .config
                .module(&cr.module)
                .and_then(|n| n.module.resources.get(&cr.resource));
            let module_gone = !self
                .ctx
                .values
                .instances
                .get(&cr.module)
                .is_some_and(|i| i.contains(&addr.module));
            if !self.selection.includes(addr, &deps)
                || (block.is_some() && !self.selection.visits_resource(&cr))
            {
                continue;
            }
            // A data source's object is a record of a read, never deleted:
            // its provider would delete the object it read (a data source
            // and a resource type often share a name). Dropped from state
            // by the apply instead.
            if addr.resource.resource.mode == ResourceMode::Data {
                if destroy || !self.declared.contains(addr) {
                    self.data_removed
                        .push((addr.clone(), inst.provider.clone()));
                }
                continue;
            }
            let base = |obj: &ObjectState, deposed: Option<String>, reason| ResourceChange {
                addr: addr.clone(),
                deposed,
                provider: inst.provider.clone(),
                action: Action::Delete,
                reason,
                before: obj.value.clone(),
                after: Value::null(),
                requires_replace: Default::default(),
                prior_private: obj.private.clone().into(),
                planned_private: Default::default(),
                schema_version: obj.schema_version,
                dependencies: obj.dependencies.clone(),
                create_before_destroy: obj.create_before_destroy,
                sensitive_paths: Default::default(),
                before_sensitive_paths: Default::default(),
                value_sensitive_paths: Default::default(),
                write_only_paths: Default::default(),
            };
            if let Some(obj) = &inst.current
                && (destroy || !self.declared.contains(addr))
            {
                let reason = match (block, &addr.resource.key) {
                    _ if destroy => ActionReason::None,
                    // A module call that is gone altogether takes its
                    // resources' configuration with it (Terraform 1.11 says
                    // "not in configuration" of the resource then); an
                    // instance of a call that is still there is "no module".
                    (None, _) => ActionReason::DeleteBecauseNoResourceConfig,
                    _ if module_gone => ActionReason::DeleteBecauseNoModule,
                    (Some(b), InstanceKey::Int(_)) if b.count.is_some() => {
                        ActionReason::DeleteBecauseCountIndex
                    }
                    (Some(b), InstanceKey::Str(_)) if b.for_each.is_some() => {
                        ActionReason::DeleteBecauseEachKey
                    }
                    (Some(_), _) => ActionReason::DeleteBecauseNoRepetition,
                };
                orphans.push(base(obj, None, reason));
            }
            for (key, obj) in &inst.deposed {
                orphans.push(base(obj, Some(key.clone()), ActionReason::None));
            }
        }
        for mut c in orphans {
            if crate::run::eval::removed::forgets(self.ctx, &c.addr) {
                c.action = Action::Forget;
                c.reason = ActionReason::None;
            }
            self.push_change(c);
        }
    }

    /// Providers advertising `plan_destroy` are asked about each destroy
    /// (PlanResourceChange with a null proposal) and may refuse it; the
    /// others are not asked, as Terraform does.
    pub(in crate::run) async fn plan_destroys(&mut self) {
        use futures::{FutureExt, StreamExt};
        let asked: Vec<usize> = self
            .changes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.action == Action::Delete && c.deposed.is_none())
            .filter(|(_, c)| {
                self.ctx
                    .provider_of_change(c)
                    .is_some_and(|(_, schema)| schema.capabilities.plan_destroy)
            })
            .map(|(i, _)| i)
            .collect();
        // At most a window of them ahead of their answers, each task built
        // only when it goes: all at once, a destroy of 100,000 held a
        // copy of every object in tasks waiting for a worker slot (the
        // CLI's RSS went from about 100 to 700 MB in the first 1.4 s,
        // 2026-11-27). The answers are taken in the changes' order, as
        // before, so diagnostics keep their order. `-parallelism` is not
        // used here: its help says planning is not limited by it.
        let window = crate::run::ctx::DISPATCH_WINDOW;
        let mut next = 0;
        let mut waiting = futures::stream::FuturesOrdered::new();
        loop {
            let room = window.saturating_sub(waiting.len());
            let batch: Vec<usize> = asked[next..].iter().take(room).copied().collect();
            next += batch.len();
            if !batch.is_empty() {
                let tasks: Vec<Task> = batch.iter().map(|&i| self.plan_destroy_task(i)).collect();
                match self.ctx.shared.dispatcher.dispatch(tasks).await {
                    Ok(receivers) => {
                        for (i, rx) in batch.into_iter().zip(receivers) {
                            waiting.push_back(async move { (i, rx.await.ok()) });
                        }
                    }
                    Err(e) => {
                        self.diags.push(Diagnostic::error(
                            "Failed to dispatch planning tasks",
                            e.to_string(),
                        ));
                        return;
                    }
                }
            }
            let Some((i, result)) = waiting.next().await else {
                return;
            };
            self.take_destroy_plan(i, result);
            // Every answer already here too, before the next dispatch: one
            // dispatch per answer cost a round trip to the queue each
            // (its acknowledgement), and past the first window a destroy of
            // 10,000 across a 50 ms link took 319 s instead of seconds.
            while let Some(Some((i, result))) = waiting.next().now_or_never() {
                self.take_destroy_plan(i, result);
            }
        }
    }

    /// The provider's answer about destroying change `i` (a failure or no
    /// answer becomes a diagnostic, as for every planning task).
    fn take_destroy_plan(&mut self, i: usize, result: Option<fleetform_shared::wire::TaskResult>) {
        use fleetform_shared::wire::TaskOutcome;
        let addr = self.changes[i].addr.clone();
        match self.outcome(&addr, result) {
            Some(TaskOutcome::Plan(o)) => {
                let failed = self.diags.extend_at(o.diagnostics, &addr);
                if !failed {
                    self.changes[i].planned_private = o.planned_private.into();
                }
            }
            Some(_) => self.diags.push(
                Diagnostic::error("Lost a planning task", "the coordinator stopped waiting")
                    .for_address(&addr),
            ),
            None => {}
        }
    }

    /// The provider's plan of destroying change `i` (a null proposal).
    fn plan_destroy_task(&self, i: usize) -> Task {
        let c = &self.changes[i];
        let (spec, _) = self
            .ctx
            .provider_of_change(c)
            .expect("only changes whose provider is known are asked about");
        Task {
            id: format!("{}:plan-destroy:{}", self.ctx.planning_prefix(), c.addr),
            run_id: self.ctx.run_id().to_string(),
            provider: spec.clone(),
            kind: fleetform_shared::wire::TaskKind::Plan(fleetform_shared::wire::PlanTask {
                addr: c.addr.clone(),
                type_name: c.addr.resource.resource.type_name.to_string(),
                prior: Some(PriorObject {
                    value: c.before.clone(),
                    private: c.prior_private.to_vec(),
                    schema_version: c.schema_version,
                }),
                config: Value::null(),
                refresh: false,
                force_replace: false,
            }),
        }
    }

    pub(in crate::run) fn check_prevent_destroy(&mut self) {
        for c in &self.changes {
            let cr = c.addr.config_resource();
            if let Some(block) = self
                .ctx
                .config
                .module(&cr.module)
                .and_then(|n| n.module.resources.get(&cr.resource))
                && let Some(d) = check_prevent_destroy(c, block)
            {
                self.diags.push(d);
            }
        }
    }
}
