//! The apply walk: the apply graph in dependency order, every ready
//! operation dispatched as soon as it is ready, each result checked against
//! the provider contract, journaled, applied to the working state and
//! released to its dependents. Provisioners: see [`provision`]; ephemeral
//! resources, opened, renewed and closed as nodes of the walk:
//! [`crate::run::apply::ephemeral`].

use crate::dispatch::Notice;
use crate::run::apply::ephemeral::{ApplyEphemerals, Hold};
use crate::run::apply::result::finish;
use crate::run::ctx::{DISPATCH_WINDOW, RunCtx, prior_object, provider_of};
use crate::run::eval::expand::expand;
use crate::run::eval::named_values::Refresh;
use crate::run::eval::scope::EvalScope;
use crate::run::values::Expansion;
use crate::store::{Intent, JournaledRun, Pending, Provisioning, Written};
use fleetform_lang::eval::evaluate;
use fleetform_lang::graph::config::ConfigGraph;
use fleetform_lang::rules::lifecycle::apply_ignore_changes;
use fleetform_shared::addr::{AbsProviderConfig, AbsResourceInstance, ConfigResource, InstanceKey};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::apply::{ApplyGraph, ApplyNode, OpKind};
use fleetform_shared::graph::{NodeId, Walk};
use fleetform_shared::plan::{Action, Plan, PlanMode, ResourceChange};
use fleetform_shared::state::{ObjectState, ObjectStatus, OutputState, State, StateDelta};
use fleetform_shared::value::Value;
use fleetform_shared::wire::RunRequest;
use fleetform_shared::wire::{
    ApplyOp, ApplyTask, RunEvent, Task, TaskKind, TaskOutcome, TaskResult,
};
use futures::FutureExt;
use futures::stream::{FuturesUnordered, StreamExt};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Applies the plan; returns the resulting state (with whatever succeeded,
/// even when some operations failed).
/// What an apply walk did, for the driver: the resulting state and how it
/// ended.
pub(crate) struct ApplyReport {
    /// Everything that succeeded is in it, even when some operations failed.
    pub state: State,
    /// Operations that failed (or could not start).
    pub errors: usize,
    /// The journal could not record an operation, so none were started after.
    pub journal_failed: bool,
    /// A cancel stopped the walk with operations never started.
    pub stopped_early: bool,
}

impl ApplyReport {
    pub fn failed(&self) -> bool {
        self.errors > 0 || self.journal_failed
    }
}

/// How often an apply reports how many operations are done.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Applies the plan.
pub(crate) async fn apply(
    ctx: &mut RunCtx<'_>,
    config_graph: &ConfigGraph,
    plan: &Arc<Plan>,
) -> ApplyReport {
    // From here on the run changes infrastructure: it goes on to its end
    // whether or not anybody watches.
    ctx.handle.begin_applying();
    let errors_before = ctx.error_events.load(Ordering::Relaxed);
    let state = walk(ctx, config_graph, plan).await;
    flush(ctx, Vec::new()).await;
    // Failed operations, and errors reported beside them (conditions of
    // unchanged instances, outputs, a cycle).
    let errors = ctx.error_events.load(Ordering::Relaxed) - errors_before;
    ApplyReport {
        state,
        errors,
        journal_failed: ctx.journal_failed,
        stopped_early: ctx.stopped_early,
    }
}

async fn walk(ctx: &mut RunCtx<'_>, config_graph: &ConfigGraph, plan: &Arc<Plan>) -> State {
    let mut locals = Refresh::new(config_graph);
    // A restarted coordinator resumes the run by applying this plan, as a
    // saved plan, with the results journaled so far.
    let resume = RunRequest {
        saved_plan: Some(plan.clone()),
        auto_approve: true,
        plan_only: false,
        ..ctx.request.clone()
    };
    let run = JournaledRun {
        workspace: ctx.workspace().to_string(),
        prior_serial: ctx.prior.serial,
        resume: Some(Box::new(resume)),
    };
    // Resumed: the changes are derived again from the recorded results.
    let begun = match ctx.resume.is_some() {
        true => ctx.shared.journal.reset_deltas(ctx.run_id()),
        false => Ok(()),
    };
    if let Err(e) = begun.and_then(|()| ctx.shared.journal.begin(ctx.run_id(), &run)) {
        journal_failure(ctx, &e);
    }
    if let Some(archive) = &ctx.shared.archive {
        ctx.archive = Some(crate::store::ArchiveWriter::start(
            archive.clone(),
            ctx.shared.segments,
            ctx.run_id(),
            run,
            ctx.resume.is_some(),
        ));
    }
    seed_values(ctx, plan);
    // From here the prior's objects are the working state's.
    let mut state = ctx.take_prior();
    let mut seq = 0u64;
    record_imports(ctx, &mut state, &mut seq, plan);
    record(
        ctx,
        &mut state,
        &mut seq,
        crate::run::eval::removed::forget_deltas(plan),
    );
    if ctx.request.options.import_only {
        return state;
    }
    if plan.mode == PlanMode::RefreshOnly {
        record_refresh(ctx, &mut state, &mut seq, plan);
        locals.refresh_all(ctx);
        outputs(ctx, &mut state, &mut seq, plan);
        return state;
    }
    let graph = match ApplyGraph::build(plan) {
        Ok(g) => g,
        Err(cycles) => {
            let detail = cycles
                .iter()
                .map(|c| c.0.join(", "))
                .collect::<Vec<_>>()
                .join("; ");
            ctx.emit(RunEvent::Diagnostics(
                Diagnostic::error("Cycle in the apply graph", format!("Cycle: {detail}")).into(),
            ));
            return state;
        }
    };
    let total = plan
        .changes
        .iter()
        .filter(|c| !matches!(c.action, Action::NoOp | Action::Read | Action::Forget))
        .count();
    let (mut walk, ready) = Walk::new(&graph.dag);
    let mut ready: Vec<NodeId> = ready;
    let errors_at_start = ctx.error_events.load(Ordering::Relaxed);
    ctx.ephemeral_walks += 1;
    let mut ephemerals = ApplyEphemerals::new(ctx, config_graph, &graph, plan);
    let mut pending = FuturesUnordered::new();
    let mut done = 0usize;
    let mut last_progress = Instant::now();
    let deposed_key = deposed_key(ctx.run_id());
    // Creates whose provisioners run next: (node, change, kind, start, task).
    let mut provisions: Vec<(NodeId, usize, OpKind, Instant, Task)> = Vec::new();
    // Tasks running provisioners: what of their output has been shown.
    let mut streams: HashMap<String, Arc<super::provision::ProvisionStream>> = HashMap::new();
    let mut said_paused = false;
    loop {
        // Nothing new starts once the journal failed, the run was
        // cancelled, or another process took the workspace's lease over.
        let stopping = ctx.journal_failed || ctx.handle.is_cancelled() || ctx.lock.lost();
        // Ephemeral resources whose dependencies are applied open; what
        // waited for them is ready.
        ephemerals.start(ctx, &mut locals, stopping).await;
        ready.extend(ephemerals.take_released());
        if stopping {
            ready.clear();
        }
        // The lease could not be renewed in time (the state store is out
        // of reach): nothing new starts until it is renewed (or found
        // lost); what is in progress goes on and is recorded.
        let paused = ctx.lock.paused() && (!ready.is_empty() || !provisions.is_empty());
        if paused && !said_paused {
            said_paused = true;
            ctx.emit(RunEvent::Diagnostics(
                Diagnostic::warning(
                    "Waiting for the state lock",
                    "The lock on the workspace could not be renewed in time (the state store is out of reach). Operations in progress go on; new ones start once the lock is renewed, and none if another process took it meanwhile.",
                )
                .into(),
            ));
        }
        let mut tasks = Vec::new();
        let mut started = Vec::new();
        // `-parallelism=N`: no more than N operations in flight (a
        // provisioner step continues its operation and is not held back);
        // without it, the dispatch window.
        let limit = ctx
            .request
            .options
            .parallelism
            .map_or(DISPATCH_WINDOW, |n| n as usize);
        while !paused
            && pending.len() + tasks.len() < limit
            && let Some(id) = ready.pop()
        {
            match graph.dag.node(id) {
                ApplyNode::Barrier { .. } => ready.extend(walk.complete(id)),
                ApplyNode::Op { change, kind } => {
                    let c = &plan.changes[*change];
                    if *kind == OpKind::Apply {
                        match ephemerals.hold(id, &c.addr) {
                            Hold::Go => {}
                            // Back in `ready` once they have opened.
                            Hold::Parked => continue,
                            Hold::Expired(d) => {
                                ephemerals.op_failed(&c.addr);
                                errored(
                                    ctx,
                                    c,
                                    *kind,
                                    d.into_iter().map(|x| x.for_address(&c.addr)).collect(),
                                );
                                continue;
                            }
                        }
                    }
                    if *kind == OpKind::Apply && c.action == Action::CreateThenDelete {
                        let delta = StateDelta::Depose {
                            addr: c.addr.clone(),
                            key: deposed_key.clone(),
                        };
                        record(ctx, &mut state, &mut seq, vec![delta]);
                    }
                    if *kind == OpKind::Apply {
                        locals.refresh_for(ctx, &c.addr.config_resource());
                    }
                    match crate::run::eval::conditions::before_apply(ctx, c, *kind)
                        .and_then(|()| task(ctx, &state, c, *kind, &deposed_key))
                    {
                        Ok(t) => {
                            ctx.emit(RunEvent::ApplyStart {
                                addr: c.addr.clone(),
                                deposed: c.deposed.clone(),
                                action: c.action,
                                op: op_of(c, *kind),
                            });
                            started.push((id, *change, *kind, Instant::now(), t.id.clone(), false));
                            tasks.push(t);
                        }
                        Err(d) => {
                            if *kind == OpKind::Apply {
                                ephemerals.op_failed(&c.addr);
                            }
                            errored(ctx, c, *kind, d)
                        }
                    }
                }
            }
        }
        let provisions_now = if paused {
            Vec::new()
        } else {
            std::mem::take(&mut provisions)
        };
        for (id, change, kind, t0, t) in provisions_now {
            started.push((id, change, kind, t0, t.id.clone(), true));
            tasks.push(t);
        }
        // A resumed run takes what the journal has: a result recorded
        // before the restart, or the result of an operation still in flight
        // then; only the rest is dispatched.
        if ctx.resume.is_some() {
            let mut fresh = (Vec::new(), Vec::new());
            for (info, t) in started.into_iter().zip(tasks) {
                match ctx.resume.take(&t.id) {
                    Some(rx) => pending.push(async move { (info, rx.await.ok()) }.boxed()),
                    None => {
                        fresh.0.push(info);
                        fresh.1.push(t);
                    }
                }
            }
            (started, tasks) = fresh;
        }
        if !tasks.is_empty() {
            // In flight from here: a restarted coordinator can still record
            // what these return.
            let intents: Vec<(String, Intent)> = started
                .iter()
                .map(|(_, change, kind, _, task_id, provisioning)| {
                    let c = &plan.changes[*change];
                    let provisioning = if *provisioning {
                        Provisioning::Run
                    } else if super::provision::after_create(ctx, c, *kind) {
                        Provisioning::Follow
                    } else {
                        Provisioning::None
                    };
                    let intent = Intent {
                        change: c.clone(),
                        kind: *kind,
                        deposed_key: deposed_key.clone(),
                        provisioning,
                    };
                    (task_id.clone(), intent)
                })
                .collect();
            // With the results that made them ready: one durable write,
            // made while the tasks are published. A worker starts nothing
            // that must not run twice before the write has ended unless the
            // queue keeps the tasks durably itself (see
            // `TaskQueue::publish_journaled`): a chain of dependent
            // operations does not wait for the disk at each link.
            let flushing = start_flush(ctx, intents);
            // Provisioners' output is shown live as their workers report it.
            for t in &tasks {
                let addr = match &t.kind {
                    TaskKind::Provision(p) => &p.addr,
                    TaskKind::Apply(a) if !a.provisioners.is_empty() => &a.addr,
                    _ => continue,
                };
                let stream = super::provision::ProvisionStream::new(ctx, addr);
                ctx.shared.dispatcher.watch(&t.id, stream.clone());
                streams.insert(t.id.clone(), stream);
            }
            let events = ctx.handle.events.clone();
            let notice = move |n: Notice| {
                let d = match n {
                    Notice::Waiting(why) => Diagnostic::warning(
                        "Waiting for NATS",
                        format!(
                            "The task queue is out of reach ({why}); the run waits and retries, and nothing is lost meanwhile."
                        ),
                    ),
                    Notice::Back => Diagnostic::warning("NATS is back", "The run goes on."),
                };
                events.push(RunEvent::Diagnostics(d.into()));
            };
            // The write's events are shown once it has ended, even while
            // the queue is out of reach.
            let dispatcher = ctx.shared.dispatcher.clone();
            let journaled = flushing.journaled.clone();
            let (dispatched, ()) = tokio::join!(
                dispatcher.dispatch_journaled(tasks, &journaled, &notice),
                end_flush(ctx, flushing)
            );
            match dispatched {
                Ok(receivers) => {
                    // Queued: a restart awaits their results from now on
                    // (before this mark it publishes them again). The mark
                    // goes with the run's next journal write (a result's),
                    // not in a write of its own: lost in a crash before
                    // that, the task is published again, and the queue
                    // drops it as a duplicate of its id (within its
                    // duplicate window; after it, the worker's claim on
                    // the task stops it from running twice). Marked only
                    // where the queue outlives the process: in process, a
                    // restart holds every intent in doubt.
                    if ctx.shared.dispatcher.outlives_process() {
                        ctx.unwritten
                            .published
                            .extend(started.iter().map(|s| s.4.clone()));
                    }
                    for (info, rx) in started.into_iter().zip(receivers) {
                        pending.push(async move { (info, rx.await.ok()) }.boxed());
                    }
                }
                Err(e) => {
                    ctx.emit(RunEvent::Diagnostics(
                        Diagnostic::error("Failed to dispatch apply tasks", e.to_string()).into(),
                    ));
                }
            }
        }
        // Nothing recorded waits unwritten while the walk waits: results
        // not journaled are not acknowledged, and would come again.
        flush(ctx, Vec::new()).await;
        // While work waits for the pause to end, look again now and then
        // even if no result comes.
        let woke = if paused {
            match tokio::time::timeout(
                std::time::Duration::from_millis(250),
                wake(&mut pending, &mut ephemerals),
            )
            .await
            {
                Ok(n) => n,
                Err(_) => continue,
            }
        } else {
            wake(&mut pending, &mut ephemerals).await
        };
        let first = match woke {
            Woke::Op(first) => first,
            Woke::Ephemeral(e) => {
                ephemerals.handle(ctx, e);
                continue;
            }
            Woke::Idle if paused => {
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
                continue;
            }
            Woke::Idle => break,
        };
        // Group commit: every result already here is journaled in one
        // durable write, then released together.
        let mut batch = vec![first];
        while batch.len() < 1024 {
            match pending.next().now_or_never() {
                Some(Some(r)) => batch.push(r),
                _ => break,
            }
        }
        let mut finished = Vec::with_capacity(batch.len());
        let mut deltas = Vec::new();
        let mut answered = Vec::with_capacity(batch.len());
        let mut results = Vec::with_capacity(batch.len());
        for ((id, change, kind, t0, task_id, provisioning), result) in batch {
            let c = &plan.changes[change];
            // Journaled with the changes it makes, for a resumed run.
            results.extend(result.clone());
            // Only tasks with provisioners have one; a task whose watch was
            // lost (the coordinator restarted) shows all from the result.
            let stream = streams.remove(&task_id);
            let stream =
                || stream.unwrap_or_else(|| super::provision::ProvisionStream::new(ctx, &c.addr));
            answered.push(task_id);
            if provisioning {
                let (outcome, d) = super::provision::finish(c, &state, &stream(), result);
                deltas.extend(d);
                finished.push((id, change, kind, t0, outcome, false));
                continue;
            }
            if result
                .as_ref()
                .is_some_and(|r| r.outcome == TaskOutcome::Cancelled)
            {
                // Never started: the object is as it was, so a deposed one
                // goes back to being current.
                deltas.extend(undepose(c, kind, &state, &deposed_key));
                continue;
            }
            if let Some(TaskResult {
                outcome: TaskOutcome::Apply(o),
                ..
            }) = &result
                && !o.provisioned.is_empty()
            {
                stream().finish(&o.provisioned);
            }
            let (outcome, mut d, data) = finish(c, kind, result, &deposed_key);
            let then_provision = outcome.is_ok() && super::provision::after_create(ctx, c, kind);
            if then_provision {
                super::provision::taint_until_provisioned(&mut d);
            }
            deltas.extend(d);
            if let Some(v) = data
                && let Some(values) = ctx.values.resource_mut(&c.addr.containing_resource())
            {
                values.instances.insert(c.addr.resource.key.clone(), v);
            }
            finished.push((id, change, kind, t0, outcome, then_provision));
        }
        record_answered(ctx, &mut state, &mut seq, deltas, answered, results);
        for (id, change, kind, t0, outcome, then_provision) in finished {
            let c = &plan.changes[change];
            // A new object with creation-time provisioners is done (and its
            // postconditions checked) once they have run.
            if then_provision && outcome.is_ok() {
                match super::provision::create_task(ctx, &state, c) {
                    Ok(t) => provisions.push((id, change, kind, t0, t)),
                    Err(d) => {
                        ephemerals.op_failed(&c.addr);
                        errored(ctx, c, kind, d)
                    }
                }
                continue;
            }
            match crate::run::eval::conditions::after_apply(ctx, c, kind, outcome) {
                Ok(worker) => {
                    if kind == OpKind::Apply {
                        ephemerals.op_done(&c.addr);
                    }
                    done += 1;
                    // A deferred read's object is in the scope, not the
                    // state: "Read complete after 0s [id=...]" as Terraform.
                    let id_attr = if c.action == Action::Read {
                        ctx.values
                            .resource(&c.addr.containing_resource())
                            .and_then(|r| r.instances.get(&c.addr.resource.key))
                            .and_then(|v| v.get_attr("id").as_str().map(str::to_string))
                    } else {
                        state
                            .current(&c.addr)
                            .and_then(|o| o.value.get_attr("id").as_str().map(str::to_string))
                    };
                    ctx.emit(RunEvent::ApplyComplete {
                        addr: c.addr.clone(),
                        deposed: c.deposed.clone(),
                        action: c.action,
                        op: op_of(c, kind),
                        id: id_attr,
                        elapsed_ms: t0.elapsed().as_millis() as u64,
                        worker,
                    });
                    // Watchers show progress every few seconds: one event
                    // a second (and the last) tells them, not one per
                    // operation (100,000 events in a large apply).
                    if done == total || last_progress.elapsed() >= PROGRESS_EVERY {
                        last_progress = Instant::now();
                        ctx.emit(RunEvent::Progress { done, total });
                    }
                    ready.extend(walk.complete(id));
                }
                Err(d) => {
                    if kind == OpKind::Apply {
                        ephemerals.op_failed(&c.addr);
                    }
                    errored(ctx, c, kind, d)
                }
            }
        }
    }
    // What is still open closes now, whatever ended the walk.
    let quiet = ctx.error_events.load(Ordering::Relaxed) > errors_at_start
        || ctx.journal_failed
        || ctx.handle.is_cancelled()
        || ctx.lock.lost();
    ephemerals.finish(ctx, &mut locals, quiet).await;
    if ctx.handle.is_cancelled() && !walk.is_done() {
        ctx.stopped_early = true;
        ctx.emit(RunEvent::Diagnostics(
            Diagnostic::error(
                "Apply cancelled",
                format!(
                    "The run was cancelled after {done} of {total} operations completed. Operations in progress were asked to stop; the rest were not started, and their objects are as they were. The state records everything that completed; apply again to finish."
                ),
            )
            .into(),
        ));
    }
    locals.refresh_all(ctx);
    if plan.mode == PlanMode::Normal && !ctx.stopped_early {
        crate::run::eval::conditions::after_apply_walk(ctx, plan);
        let results = crate::run::eval::conditions::check_results(ctx);
        if results != state.check_results {
            record(
                ctx,
                &mut state,
                &mut seq,
                vec![StateDelta::SetCheckResults(results)],
            );
        }
    }
    if let Some(delta) = provider_configs(ctx, &state) {
        record(ctx, &mut state, &mut seq, vec![delta]);
    }
    outputs(ctx, &mut state, &mut seq, plan);
    state
}

/// The provider configuration of each resource with objects, for the
/// state to record (once a resource is gone from the configuration, it is
/// destroyed with that one); `None` when the state has it already.
fn provider_configs(ctx: &RunCtx<'_>, state: &State) -> Option<StateDelta> {
    let live: std::collections::BTreeSet<ConfigResource> = state
        .resources
        .keys()
        .map(AbsResourceInstance::config_resource)
        .collect();
    let mut configs: Vec<(ConfigResource, AbsProviderConfig)> = ctx
        .graph
        .resource_providers
        .iter()
        .filter(|(r, _)| live.contains(*r))
        .map(|(r, p)| (r.clone(), p.clone()))
        .collect();
    configs.sort();
    let unchanged = state.provider_configs.keys().all(|r| live.contains(r))
        && configs
            .iter()
            .all(|(r, p)| state.provider_configs.get(r) == Some(p));
    (!unchanged).then_some(StateDelta::SetProviderConfigs(configs))
}

/// What the walk woke for.
enum Woke<T> {
    /// An operation's result.
    Op(T),
    /// An ephemeral resource's answer, or a renewal falling due.
    Ephemeral(crate::run::apply::ephemeral::Event),
    /// Nothing is in flight.
    Idle,
}

/// Waits for the next result of an operation or an ephemeral resource.
async fn wake<F: std::future::Future + Unpin>(
    pending: &mut FuturesUnordered<F>,
    ephemerals: &mut ApplyEphemerals,
) -> Woke<F::Output> {
    if pending.is_empty() && !ephemerals.busy() {
        return Woke::Idle;
    }
    tokio::select! {
        Some(r) = pending.next(), if !pending.is_empty() => Woke::Op(r),
        e = ephemerals.next() => Woke::Ephemeral(e),
    }
}

/// The state changes that undo the deposing of a create-before-destroy
/// replacement whose create never started.
fn undepose(c: &ResourceChange, kind: OpKind, state: &State, key: &str) -> Vec<StateDelta> {
    if kind != OpKind::Apply || c.action != Action::CreateThenDelete {
        return vec![];
    }
    let Some(object) = state
        .resources
        .get(&c.addr)
        .and_then(|i| i.deposed.get(key))
        .cloned()
    else {
        return vec![];
    };
    vec![
        StateDelta::SetDeposed {
            addr: c.addr.clone(),
            provider: c.provider.clone(),
            key: key.to_string(),
            object: None,
        },
        StateDelta::SetCurrent {
            addr: c.addr.clone(),
            provider: c.provider.clone(),
            object: Some(object),
        },
    ]
}

/// Which half of a change an operation node carries out.
fn op_of(c: &ResourceChange, kind: OpKind) -> ApplyOp {
    match (kind, c.action) {
        (OpKind::Destroy, _) => ApplyOp::Delete,
        (OpKind::Apply, Action::Update) => ApplyOp::Update,
        (OpKind::Apply, Action::Read) => ApplyOp::Read,
        (OpKind::Apply, _) => ApplyOp::Create,
    }
}

/// Resource values in scope before anything is applied: the prior objects.
/// Resource values as applying starts: every instance's prior object (and
/// the data sources read while planning), in every module instance; each
/// applied result then replaces its instance's.
fn seed_values(ctx: &mut RunCtx<'_>, plan: &Plan) {
    let mut fresh = Vec::new();
    for inst in ctx.values.modules.keys() {
        let Some(node) = ctx.module_of(inst) else {
            continue;
        };
        for (r, block) in &node.module.resources {
            // Set when the walk opens them (`ephemeral::prepare`).
            if r.mode == fleetform_shared::addr::ResourceMode::Ephemeral {
                continue;
            }
            let expansion = Expansion::of(block.count.is_some(), block.for_each.is_some());
            let addr = fleetform_shared::addr::AbsResource {
                module: inst.clone(),
                resource: r.clone(),
            };
            fresh.push((addr, expansion));
        }
    }
    for (addr, expansion) in fresh {
        let values = ctx.resource_values(&addr.config(), expansion);
        ctx.values.set_resource(&addr, values);
    }
    for (addr, inst) in &ctx.prior.resources {
        if let (Some(values), Some(obj)) = (
            ctx.values.resource_mut(&addr.containing_resource()),
            &inst.current,
        ) {
            values.set_object(&addr.resource.key, obj);
        }
    }
    for (addr, v) in &plan.data_values {
        if let Some(values) = ctx.values.resource_mut(&addr.containing_resource()) {
            values
                .instances
                .insert(addr.resource.key.clone(), v.clone());
        }
    }
}

fn record_imports(ctx: &mut RunCtx<'_>, state: &mut State, seq: &mut u64, plan: &Plan) {
    let deltas: Vec<StateDelta> = plan
        .changes
        .iter()
        .filter(|c| {
            c.deposed.is_none() && plan.imports.contains_key(&c.addr) && !c.before.is_null()
        })
        .map(|c| StateDelta::SetCurrent {
            addr: c.addr.clone(),
            provider: c.provider.clone(),
            object: Some(ObjectState {
                value: c.before.clone(),
                private: c.prior_private.clone(),
                schema_version: c.schema_version,
                status: ObjectStatus::Ready,
                dependencies: c.dependencies.clone(),
                create_before_destroy: c.create_before_destroy,
                sensitive_paths: c.sensitive_paths.clone(),
                value_sensitive_paths: None,
                undecoded: false,
            }),
        })
        .collect();
    record(ctx, state, seq, deltas);
}

/// A refresh-only apply records what refreshing found, calling no provider.
fn record_refresh(ctx: &mut RunCtx<'_>, state: &mut State, seq: &mut u64, plan: &Plan) {
    let mut deltas = Vec::new();
    for c in plan
        .changes
        .iter()
        .filter(|c| c.before != c.after && c.deposed.is_none())
    {
        let object = match (state.current(&c.addr), &c.after) {
            (_, Value::Null(_)) => None,
            (Some(o), v) => Some(ObjectState {
                value: v.clone(),
                private: c.prior_private.clone(),
                undecoded: false,
                ..o.clone()
            }),
            (None, _) => continue,
        };
        deltas.push(StateDelta::SetCurrent {
            addr: c.addr.clone(),
            provider: c.provider.clone(),
            object,
        });
    }
    record(ctx, state, seq, deltas);
}

/// A deposed key unique to the run (Terraform uses 8 hex digits).
fn deposed_key(run_id: &str) -> String {
    run_id
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .collect()
}

fn task(
    ctx: &RunCtx<'_>,
    state: &State,
    c: &ResourceChange,
    kind: OpKind,
    deposed_key: &str,
) -> Result<Task, Diagnostics> {
    let (spec, _) = provider_of(ctx, c).ok_or_else(|| {
        Diagnostics::from(
            Diagnostic::error(
                "Provider not configured",
                format!("no configuration for provider {}", c.provider),
            )
            .for_address(&c.addr),
        )
    })?;
    let type_name = c.addr.resource.resource.type_name.clone();
    let apply = match kind {
        OpKind::Destroy => {
            let key = c.deposed.clone().or_else(|| {
                (c.action == Action::CreateThenDelete).then(|| deposed_key.to_string())
            });
            let prior = match &key {
                Some(k) => state.resources.get(&c.addr).and_then(|i| i.deposed.get(k)),
                None => state.current(&c.addr),
            };
            let provisioners = super::provision::before_delete(ctx, c, prior, key.is_some())?;
            let prior = prior.map(prior_object).or_else(|| {
                Some(fleetform_shared::wire::PriorObject {
                    value: c.before.clone(),
                    private: c.prior_private.clone(),
                    schema_version: c.schema_version,
                })
            });
            ApplyTask {
                addr: c.addr.clone(),
                type_name,
                op: ApplyOp::Delete,
                prior,
                config: Value::null(),
                planned: Value::null(),
                planned_private: vec![],
                provisioners,
            }
        }
        OpKind::Apply => {
            let current = state.current(&c.addr);
            let config = final_config(
                ctx,
                c,
                current
                    .filter(|_| c.action == Action::Update)
                    .map(|o| &o.value),
            )?;
            let (op, prior) = match c.action {
                Action::Update => (ApplyOp::Update, current.map(prior_object)),
                Action::Read => (ApplyOp::Read, None),
                _ => (ApplyOp::Create, None),
            };
            ApplyTask {
                addr: c.addr.clone(),
                type_name,
                op,
                prior,
                config,
                planned: c.after.clone(),
                planned_private: c.planned_private.clone(),
                provisioners: vec![],
            }
        }
    };
    let suffix = match kind {
        OpKind::Apply => "apply".to_string(),
        OpKind::Destroy => format!(
            "destroy{}",
            c.deposed
                .as_deref()
                .map(|d| format!(":{d}"))
                .unwrap_or_default()
        ),
    };
    Ok(Task {
        id: format!("{}:{suffix}:{}", ctx.run_id(), c.addr),
        run_id: ctx.run_id().to_string(),
        provider: spec.clone(),
        kind: TaskKind::Apply(apply),
    })
}

fn final_config(
    ctx: &RunCtx<'_>,
    c: &ResourceChange,
    prior: Option<&Value>,
) -> Result<Value, Diagnostics> {
    let r = &c.addr.resource.resource;
    let node = ctx.module_of(&c.addr.module);
    let block = node
        .and_then(|n| n.module.resources.get(r))
        .ok_or_else(|| {
            Diagnostics::from(Diagnostic::error(
                "Resource configuration vanished",
                format!("{} has no configuration", c.addr),
            ))
        })?;
    let dir = node.map(|n| n.dir.as_str()).unwrap_or(".");
    let (_, schema) = provider_of(ctx, c).ok_or_else(|| {
        Diagnostics::from(Diagnostic::error(
            "Provider not configured",
            format!("no configuration for provider {}", c.provider),
        ))
    })?;
    let types = if r.mode == fleetform_shared::ResourceMode::Data {
        &schema.data_sources
    } else {
        &schema.resources
    };
    let rschema = types.get(&r.type_name).ok_or_else(|| {
        Diagnostics::from(Diagnostic::error(
            "Invalid resource type",
            format!("unsupported resource type {}", r.type_name),
        ))
    })?;
    let key = &c.addr.resource.key;
    let scope = EvalScope::in_module(&ctx.values, &c.addr.module, dir, ctx.workspace());
    let each_value = match key {
        InstanceKey::Str(_) => expand(block, &scope)?
            .keys
            .into_iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v),
        _ => None,
    };
    let scope = EvalScope {
        key,
        each_value: each_value.as_ref(),
        ..scope
    };
    let (config, diags) = block.body.decode(&rschema.block, &scope);
    if diags.has_errors() {
        return Err(diags);
    }
    let config = apply_ignore_changes(config, prior, &block.lifecycle.ignore_changes);
    if !config.is_wholly_known() {
        return Err(Diagnostic::error(
            "Configuration is still unknown at apply time",
            format!("The configuration of {} depends on values that are still unknown after everything it depends on was applied; fleetform never applies an unknown configuration.", c.addr),
        )
        .for_address(&c.addr)
        .into());
    }
    Ok(config)
}

/// A journal write failed. Results are still applied to the working state
/// (and reach the snapshot), but nothing new starts without a durable record.
fn journal_failure(ctx: &mut RunCtx<'_>, e: &dyn std::fmt::Display) {
    tracing::error!(run_id = %ctx.run_id(), error = %e, "journal write failed");
    if !ctx.journal_failed {
        ctx.journal_failed = true;
        ctx.emit(RunEvent::Diagnostics(
            Diagnostic::error(
                "State journal unavailable",
                format!("Recording an operation failed ({e}); fleetform starts no further operations in this run. Operations already running finish and are recorded in the state snapshot."),
            )
            .into(),
        ));
    }
}

fn record(ctx: &mut RunCtx<'_>, state: &mut State, seq: &mut u64, deltas: Vec<StateDelta>) {
    record_answered(ctx, state, seq, deltas, Vec::new(), Vec::new());
}

/// Applies `deltas` to the working state, and keeps them (with the tasks
/// `answered`, no longer in flight, and their results) for the journal's
/// next write: [`flush`], which the walk calls before it hands out more
/// operations or waits. The queue keeps the results until then, so a
/// coordinator that dies in between gets them again.
fn record_answered(
    ctx: &mut RunCtx<'_>,
    state: &mut State,
    seq: &mut u64,
    deltas: Vec<StateDelta>,
    answered: Vec<String>,
    results: Vec<TaskResult>,
) {
    if deltas.is_empty() && answered.is_empty() {
        return;
    }
    *seq += 1;
    // Journaled as applied, so that a journal replayed after a crash gives
    // the state this run works on.
    let deltas: Vec<StateDelta> = deltas
        .into_iter()
        .map(|d| forget_gone_dependencies(ctx, d))
        .collect();
    for d in &deltas {
        if let StateDelta::SetCurrent { addr, object, .. } = d
            && let Some(values) = ctx.values.resource_mut(&addr.containing_resource())
        {
            match object {
                Some(o) => values.set_object(&addr.resource.key, o),
                None => {
                    values.instances.remove(&addr.resource.key);
                }
            };
        }
        state.apply_delta(d);
    }
    ctx.unwritten.rows.push((*seq, deltas));
    ctx.unwritten.done.extend(answered);
    ctx.unwritten.results.extend(results);
    // What reports these (a completion, the next operation's start) is
    // shown once they are durable.
    ctx.hold_events();
}

/// Writes what the walk recorded since its last write, and the intents of
/// the operations it is about to hand out, in one durable write; then the
/// queue may forget the results written. A chain of dependent operations
/// costs one disk flush per link this way, not two.
async fn flush(ctx: &mut RunCtx<'_>, intents: Vec<(String, Intent)>) {
    let flushing = start_flush(ctx, intents);
    end_flush(ctx, flushing).await;
}

/// A journal write under way ([`start_flush`]).
struct Flushing {
    /// Turns true when the write has ended (durable, or failed).
    journaled: tokio::sync::watch::Receiver<bool>,
    write: Option<tokio::sync::oneshot::Receiver<Written>>,
}

/// Starts [`flush`]'s write on the journal's writer thread (a disk flush
/// blocks).
fn start_flush(ctx: &mut RunCtx<'_>, intents: Vec<(String, Intent)>) -> Flushing {
    let (done, journaled) = tokio::sync::watch::channel(false);
    if ctx.unwritten.is_empty() && intents.is_empty() {
        // Marks of what reached the queue wait for the next write.
        let _ = done.send(true);
        return Flushing {
            journaled,
            write: None,
        };
    }
    let pending = std::mem::take(&mut ctx.unwritten);
    let write = ctx
        .shared
        .journal
        .commit_on_writer(ctx.run_id(), pending, intents, done);
    Flushing {
        journaled,
        write: Some(write),
    }
}

/// Waits for [`start_flush`]'s write; then shows the events it covers,
/// lets the queue forget the results written and archives them.
async fn end_flush(ctx: &mut RunCtx<'_>, flushing: Flushing) {
    let Some(write) = flushing.write else {
        ctx.release_events();
        return;
    };
    let (written, pending, intents) = match write.await {
        Ok(w) => w,
        Err(_) => {
            ctx.release_events();
            journal_failure(ctx, &"the journal write stopped before it ended");
            return;
        }
    };
    // Shown once durable; after a failed write too, followed by the error.
    ctx.release_events();
    match written {
        Ok(()) => ctx.shared.dispatcher.acknowledge(&pending.done),
        // Not acknowledged: a restarted coordinator gets them again.
        Err(e) => journal_failure(ctx, &e),
    }
    if let Some(a) = &ctx.archive {
        let Pending { rows, results, .. } = pending;
        let deltas: Vec<StateDelta> = rows.into_iter().flat_map(|(_, d)| d).collect();
        if !deltas.is_empty() || !results.is_empty() {
            a.record(deltas, results);
        }
        if !intents.is_empty() {
            a.intents(&intents);
        }
    }
}

/// An object's recorded dependencies keep only resources still configured:
/// the plan orders by dependencies from state too, which must not pile up.
fn forget_gone_dependencies(ctx: &RunCtx<'_>, delta: StateDelta) -> StateDelta {
    match delta {
        StateDelta::SetCurrent {
            addr,
            provider,
            object: Some(mut o),
        } => {
            o.dependencies.retain(|d| {
                ctx.module_of(&d.module)
                    .is_some_and(|m| m.module.resources.contains_key(&d.resource))
            });
            StateDelta::SetCurrent {
                addr,
                provider,
                object: Some(o),
            }
        }
        other => other,
    }
}

/// Records the root outputs the apply changed. After a failed operation
/// an output that cannot be evaluated (it reads what failed: a null
/// object, a missing attribute) keeps its recorded value without a second
/// error, as Terraform 1.11 does not evaluate what depends on a failure.
fn outputs(ctx: &mut RunCtx<'_>, state: &mut State, seq: &mut u64, plan: &Plan) {
    let failed_before = ctx.error_events.load(Ordering::Relaxed) > 0;
    let mut deltas = Vec::new();
    for (name, change) in &plan.outputs {
        let value = match ctx.module.outputs.get(name) {
            // Unchanged in the plan (or deliberately not recalculated under
            // -target/-exclude): the recorded value stands.
            Some(_) if change.action == Action::NoOp => continue,
            // Known when planned: that value is the one applied, as in
            // Terraform 1.11 (a saved plan's output reading a file keeps
            // the plan's value when the file changes before the apply;
            // resources' arguments are checked against the disk instead).
            Some(o) if change.action != Action::Delete && change.after.is_wholly_known() => {
                Some(OutputState {
                    value: change.after.clone(),
                    sensitive: o.sensitive,
                })
            }
            Some(o) if change.action != Action::Delete => {
                match evaluate(&o.expr, &EvalScope::new(&ctx.values, ctx.workspace())) {
                    Ok(v) => Some(OutputState {
                        value: v,
                        sensitive: o.sensitive,
                    }),
                    Err(_) if failed_before => continue,
                    Err(d) => {
                        ctx.emit(RunEvent::Diagnostics(d));
                        None
                    }
                }
            }
            _ => None,
        };
        deltas.push(StateDelta::SetOutput {
            name: name.clone(),
            value,
        });
    }
    if !deltas.is_empty() {
        record(ctx, state, seq, deltas);
    }
}

/// Reports that `c`'s operation of `kind` failed (the context counts it
/// for the report).
fn errored(ctx: &mut RunCtx<'_>, c: &ResourceChange, kind: OpKind, diagnostics: Diagnostics) {
    ctx.emit(RunEvent::ApplyErrored {
        addr: c.addr.clone(),
        deposed: c.deposed.clone(),
        action: c.action,
        op: op_of(c, kind),
        diagnostics,
    });
}
