//! The apply walk: the apply graph in dependency order, every ready
//! operation dispatched as soon as it is ready, each result checked against
//! the provider contract, journaled, applied to the working state and
//! released to its dependents. The walk is a type, [`ApplyWalk`], whose
//! steps are its methods: hand out what is ready ([`ApplyWalk::start_ready`],
//! [`ApplyWalk::dispatch`]), wait ([`ApplyWalk::wait`]), take the results
//! that came ([`ApplyWalk::settle`], [`ApplyWalk::complete`]) and end
//! ([`ApplyWalk::end`]). What it records goes through its
//! [`Record`] (journal, held events, archive). Provisioners: see
//! [`super::provision`]; ephemeral resources, opened, renewed and closed as
//! nodes of the walk: [`super::ephemeral`].

use crate::dispatch::Near;
use crate::dispatch::Notice;
use crate::run::apply::ephemeral::{ApplyEphemerals, Hold};
use crate::run::apply::near::{Nearness, process_of};
use crate::run::apply::provision::ProvisionStream;
use crate::run::apply::record::{Record, Resume};
use crate::run::apply::result::finish;
use crate::run::ctx::{DISPATCH_WINDOW, RunCtx, prior_object, provider_of};
use crate::run::eval::expand::expand;
use crate::run::eval::named_values::Refresh;
use crate::run::eval::scope::EvalScope;
use crate::run::eval::sensitivity::object_marks;
use crate::run::values::Expansion;
use crate::store::{ArchiveWriter, Intent, Provisioning};
use fleetform_lang::eval::{Marks, evaluate};
use fleetform_lang::graph::config::ConfigGraph;
use fleetform_lang::rules::lifecycle::apply_ignore_changes;
use fleetform_shared::addr::{
    AbsProviderConfig, AbsResource, AbsResourceInstance, ConfigResource, InstanceKey,
};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::apply::{ApplyGraph, ApplyNode, OpKind};
use fleetform_shared::graph::{NodeId, Walk};
use fleetform_shared::plan::{Action, DataRecord, Plan, PlanMode, ResourceChange};
use fleetform_shared::state::{ObjectState, ObjectStatus, OutputState, State, StateDelta};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{
    ApplyOp, ApplyTask, RunEvent, Task, TaskKind, TaskOutcome, TaskResult,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// The run's archive, for the driver to discard once the snapshot is
    /// written.
    pub archive: Option<ArchiveWriter>,
}

impl ApplyReport {
    pub fn failed(&self) -> bool {
        self.errors > 0 || self.journal_failed
    }
}

/// How often an apply reports how many operations are done.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How often a walk waiting for a pause to end looks again, even if no
/// result comes.
const PAUSED_LOOK: Duration = Duration::from_millis(250);

/// Results taken together into one journal write, at most.
const GROUP_COMMIT: usize = 1024;

/// Applies the plan. A run resumed after a restart takes what `resume`
/// holds instead of dispatching again.
pub(crate) async fn apply(
    ctx: &mut RunCtx<'_>,
    config_graph: &ConfigGraph,
    plan: &Arc<Plan>,
    resume: Resume,
) -> ApplyReport {
    // From here on the run changes infrastructure: it goes on to its end
    // whether or not anybody watches.
    ctx.handle.begin_applying();
    let errors_before = ctx.events.errors();
    let mut record = Record::begin(ctx, plan, resume);
    let (state, stopped_early) = walk(ctx, config_graph, plan, &mut record).await;
    record.flush(ctx, Vec::new()).await;
    // Failed operations, and errors reported beside them (conditions of
    // unchanged instances, outputs, a cycle).
    let errors = ctx.events.errors() - errors_before;
    ApplyReport {
        state,
        errors,
        journal_failed: record.failed,
        stopped_early,
        archive: record.archive.take(),
    }
}

/// The walk from the prior state to the new one; whether a cancel stopped
/// it with operations never started.
async fn walk(
    ctx: &mut RunCtx<'_>,
    config_graph: &ConfigGraph,
    plan: &Plan,
    record: &mut Record,
) -> (State, bool) {
    let mut locals = Refresh::new(config_graph);
    seed_values(ctx, plan);
    // From here the prior's objects are the working state's.
    let mut state = ctx.take_prior();
    record_imports(ctx, record, &mut state, plan);
    record.record(
        ctx,
        &mut state,
        crate::run::eval::removed::forget_deltas(plan),
    );
    if ctx.request.options.import_only {
        return (state, false);
    }
    if plan.mode == PlanMode::RefreshOnly {
        record_refresh(ctx, record, &mut state, plan);
        locals.refresh_all(ctx);
        outputs(ctx, record, &mut state, plan);
        return (state, false);
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
            return (state, false);
        }
    };
    let mut walk = ApplyWalk::new(ctx, config_graph, &graph, plan, state, record, locals);
    walk.run(ctx).await;
    walk.end(ctx).await
}

/// An operation handed out, as its result finds it.
struct Started {
    node: NodeId,
    /// Its change's index in the plan.
    change: usize,
    kind: OpKind,
    t0: Instant,
    task_id: String,
    /// The task runs creation-time provisioners after its create.
    provisioning: bool,
}

/// An operation's result as it comes back: none when its route was lost.
type Answer = (Started, Option<TaskResult>);

/// An operation whose result is recorded, before its conditions are
/// checked and its dependents released.
struct Finished {
    started: Started,
    /// The worker that carried it out, or why it failed.
    outcome: Result<String, Diagnostics>,
    /// Its creation-time provisioners run next.
    then_provision: bool,
    /// What it releases may go to the process that carried it out.
    near: Option<Near>,
}

/// What the walk woke for.
enum Woke {
    /// Results of operations, the first of a batch.
    Op(Answer),
    /// Nothing to take now: look again.
    Again,
    /// Nothing is in flight, nothing waits: the walk is over.
    Over,
}

/// One apply walk in progress.
struct ApplyWalk<'w> {
    plan: &'w Plan,
    graph: &'w ApplyGraph,
    record: &'w mut Record,
    /// Named values evaluated again as the resources they read are applied.
    locals: Refresh<'w>,
    /// The working state: the prior state, as results change it.
    state: State,
    walk: Walk,
    /// Nodes whose dependencies are all done.
    ready: Vec<NodeId>,
    ephemerals: ApplyEphemerals,
    /// Operations in flight.
    pending: FuturesUnordered<BoxFuture<'static, Answer>>,
    /// Operations to carry out (not no-ops, reads or forgets) and done.
    total: usize,
    done: usize,
    last_progress: Instant,
    errors_at_start: usize,
    /// The key under which a create-before-destroy replacement deposes its
    /// object.
    deposed_key: String,
    /// Creates whose provisioners run next.
    provisions: Vec<(Started, Task)>,
    /// Tasks running provisioners: what of their output has been shown.
    streams: HashMap<String, Arc<ProvisionStream>>,
    /// The pause for the lock was reported.
    said_paused: bool,
    /// Failure isolation: the instances whose apply operation failed or
    /// was skipped, by resource.
    failed: HashMap<AbsResource, BTreeSet<InstanceKey>>,
    /// Nodes that some failed or skipped operation comes before.
    tainted: HashSet<NodeId>,
    /// Apply operations skipped, with why.
    skipped: Vec<(AbsResourceInstance, String)>,
    /// Apply operations after a failure that went on, since they read none
    /// of the failed instances.
    isolated: usize,
    /// Which operations go to a worker process directly.
    near: Nearness,
}

impl<'w> ApplyWalk<'w> {
    fn new(
        ctx: &mut RunCtx<'_>,
        config_graph: &'w ConfigGraph,
        graph: &'w ApplyGraph,
        plan: &'w Plan,
        state: State,
        record: &'w mut Record,
        locals: Refresh<'w>,
    ) -> ApplyWalk<'w> {
        let total = plan
            .changes
            .iter()
            .filter(|c| !matches!(c.action, Action::NoOp | Action::Read | Action::Forget))
            .count();
        let (walk, ready) = Walk::new(&graph.dag);
        ctx.ephemeral_walks += 1;
        let ephemerals = ApplyEphemerals::new(ctx, config_graph, graph, plan);
        ApplyWalk {
            plan,
            graph,
            record,
            locals,
            state,
            walk,
            ready,
            ephemerals,
            pending: FuturesUnordered::new(),
            total,
            done: 0,
            last_progress: Instant::now(),
            errors_at_start: ctx.events.errors(),
            deposed_key: deposed_key(ctx.run_id()),
            provisions: Vec::new(),
            streams: HashMap::new(),
            said_paused: false,
            failed: HashMap::new(),
            tainted: HashSet::new(),
            skipped: Vec::new(),
            isolated: 0,
            near: Nearness::new(ctx.shared.dispatcher.sends_direct()),
        }
    }

    /// Hands out what is ready, waits, takes the results, until nothing is
    /// in flight and nothing is ready.
    async fn run(&mut self, ctx: &mut RunCtx<'_>) {
        loop {
            // Nothing new starts once the journal failed, the run was
            // cancelled, or another process took the workspace's lease over.
            let stopping = self.record.failed || ctx.handle.is_cancelled() || ctx.lock.lost();
            // Ephemeral resources whose dependencies are applied open; what
            // waited for them is ready.
            self.ephemerals.start(ctx, &mut self.locals, stopping).await;
            self.ready.extend(self.ephemerals.take_released());
            if stopping {
                self.ready.clear();
            }
            let paused = self.paused(ctx);
            let mut started = match paused {
                true => Vec::new(),
                false => self.start_ready(ctx),
            };
            if !paused {
                started.extend(std::mem::take(&mut self.provisions));
            }
            let started = self.take_resumed(ctx, started);
            if !started.is_empty() {
                self.dispatch(ctx, started).await;
            }
            // Nothing recorded waits unwritten while the walk waits: results
            // not journaled are not acknowledged, and would come again.
            self.record.flush(ctx, Vec::new()).await;
            match self.wait(ctx, paused).await {
                Woke::Op(first) => self.settle(ctx, first),
                Woke::Again => continue,
                Woke::Over => break,
            }
        }
    }

    /// Whether the lease could not be renewed in time (the state store is
    /// out of reach) while work waits: then nothing new starts until it is
    /// renewed (or found lost); what is in progress goes on and is
    /// recorded. Said once.
    fn paused(&mut self, ctx: &RunCtx<'_>) -> bool {
        let paused = ctx.lock.paused() && (!self.ready.is_empty() || !self.provisions.is_empty());
        if paused && !self.said_paused {
            self.said_paused = true;
            ctx.emit(RunEvent::Diagnostics(
                Diagnostic::warning(
                    "Waiting for the state lock",
                    "The lock on the workspace could not be renewed in time (the state store is out of reach). Operations in progress go on; new ones start once the lock is renewed, and none if another process took it meanwhile.",
                )
                .into(),
            ));
        }
        paused
    }

    /// Starts ready operations, as many as the limit allows: `-parallelism=N`
    /// operations in flight at most (a provisioner step continues its
    /// operation and is not held back), without it the dispatch window.
    fn start_ready(&mut self, ctx: &mut RunCtx<'_>) -> Vec<(Started, Task)> {
        let limit = ctx
            .request
            .options
            .parallelism
            .map_or(DISPATCH_WINDOW, |n| n as usize);
        let mut started = Vec::new();
        while self.pending.len() + started.len() < limit
            && let Some(id) = self.ready.pop()
        {
            match self.graph.dag.node(id) {
                ApplyNode::Barrier { .. } => self.done_with(id),
                ApplyNode::Op { change, kind } => {
                    if self.tainted.contains(&id) && !self.goes_on(id, *change, *kind) {
                        continue;
                    }
                    started.extend(self.start_op(ctx, id, *change, *kind));
                }
            }
        }
        started
    }

    /// Starts one operation: its task, once the ephemeral resources it
    /// uses are open and its preconditions hold; None when it waits or
    /// could not start (reported).
    fn start_op(
        &mut self,
        ctx: &mut RunCtx<'_>,
        id: NodeId,
        change: usize,
        kind: OpKind,
    ) -> Option<(Started, Task)> {
        let plan = self.plan;
        let c = &plan.changes[change];
        if kind == OpKind::Apply {
            match self.ephemerals.hold(id, &c.addr) {
                Hold::Go => {}
                // Back in `ready` once they have opened.
                Hold::Parked => return None,
                Hold::Expired(d) => {
                    self.ephemerals.op_failed(&c.addr);
                    errored(
                        ctx,
                        c,
                        kind,
                        d.into_iter().map(|x| x.for_address(&c.addr)).collect(),
                    );
                    self.op_failed(id, c, kind);
                    return None;
                }
            }
        }
        if kind == OpKind::Apply && c.action == Action::CreateThenDelete {
            let delta = StateDelta::Depose {
                addr: c.addr.clone(),
                key: self.deposed_key.clone(),
            };
            self.record.record(ctx, &mut self.state, vec![delta]);
        }
        if kind == OpKind::Apply {
            self.locals.refresh_for(ctx, &c.addr.config_resource());
        }
        match crate::run::eval::conditions::before_apply(ctx, c, kind)
            .and_then(|()| task(ctx, &self.state, c, kind, &self.deposed_key))
        {
            Ok(t) => {
                ctx.emit(RunEvent::ApplyStart {
                    addr: c.addr.clone(),
                    deposed: c.deposed.clone(),
                    action: c.action,
                    op: op_of(c, kind),
                });
                let started = Started {
                    node: id,
                    change,
                    kind,
                    t0: Instant::now(),
                    task_id: t.id.clone(),
                    provisioning: false,
                };
                Some((started, t))
            }
            Err(d) => {
                if kind == OpKind::Apply {
                    self.ephemerals.op_failed(&c.addr);
                }
                errored(ctx, c, kind, d);
                self.op_failed(id, c, kind);
                None
            }
        }
    }

    /// A resumed run takes what the journal has: a result recorded before
    /// the restart, or the result of an operation still in flight then;
    /// only the rest is dispatched.
    ///
    /// An operation in flight at the restart is awaited like any published
    /// task: should the queue have lost its task or its result, it is
    /// settled when overdue (see `dispatch::settle`); without this it
    /// would be awaited forever.
    fn take_resumed(
        &mut self,
        ctx: &RunCtx<'_>,
        started: Vec<(Started, Task)>,
    ) -> Vec<(Started, Task)> {
        if !self.record.resume.is_some() {
            return started;
        }
        let mut fresh = Vec::new();
        let mut awaited = Vec::new();
        for (info, t) in started {
            match self.record.resume.take(&t.id) {
                Some((rx, in_flight)) => {
                    if in_flight {
                        awaited.push(t);
                    }
                    self.pending
                        .push(async move { (info, rx.await.ok()) }.boxed())
                }
                None => fresh.push((info, t)),
            }
        }
        if !awaited.is_empty() {
            ctx.shared.dispatcher.awaiting(awaited);
        }
        fresh
    }

    /// Journals the intents of `started` (with the results that made them
    /// ready) while their tasks are published; from then on they are in
    /// flight, and a restarted coordinator can still record what they
    /// return.
    async fn dispatch(&mut self, ctx: &mut RunCtx<'_>, started: Vec<(Started, Task)>) {
        let (started, tasks): (Vec<Started>, Vec<Task>) = started.into_iter().unzip();
        let near: Vec<_> = started
            .iter()
            .zip(&tasks)
            .map(|(s, t)| self.near.take(s.node, t))
            .collect();
        let intents: Vec<(String, Intent)> = started
            .iter()
            .map(|s| {
                let c = &self.plan.changes[s.change];
                let provisioning = if s.provisioning {
                    Provisioning::Run
                } else if super::provision::after_create(ctx, c, s.kind) {
                    Provisioning::Follow
                } else {
                    Provisioning::None
                };
                let intent = Intent {
                    change: c.clone(),
                    kind: s.kind,
                    deposed_key: self.deposed_key.clone(),
                    provisioning,
                };
                (s.task_id.clone(), intent)
            })
            .collect();
        // One durable write, made while the tasks are published. A worker
        // starts nothing that must not run twice before the write has ended
        // unless the queue keeps the tasks durably itself (see
        // `TaskQueue::publish_journaled`): a chain of dependent operations
        // does not wait for the disk at each link.
        let flushing = self.record.start_flush(ctx, intents);
        // Provisioners' output is shown live as their workers report it.
        for t in &tasks {
            let addr = match &t.kind {
                TaskKind::Provision(p) => &p.addr,
                TaskKind::Apply(a) if !a.provisioners.is_empty() => &a.addr,
                _ => continue,
            };
            let stream = ProvisionStream::new(ctx, addr);
            ctx.shared.dispatcher.watch(&t.id, stream.clone());
            self.streams.insert(t.id.clone(), stream);
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
        // The write's events are shown once it has ended, even while the
        // queue is out of reach.
        let dispatcher = ctx.shared.dispatcher.clone();
        let journaled = flushing.journaled.clone();
        let (dispatched, ()) = tokio::join!(
            dispatcher.dispatch_journaled(tasks, &near, &journaled, &notice),
            self.record.end_flush(ctx, flushing)
        );
        match dispatched {
            Ok(receivers) => {
                // Queued: a restart awaits their results from now on (before
                // this mark it publishes them again). The mark goes with the
                // run's next journal write (a result's), not in a write of
                // its own: lost in a crash before that, the task is
                // published again, and the queue drops it as a duplicate of
                // its id (within its duplicate window; after it, the
                // worker's claim on the task stops it from running twice).
                // Marked only where the queue outlives the process: in
                // process, a restart holds every intent in doubt.
                if ctx.shared.dispatcher.outlives_process() {
                    self.record
                        .published(started.iter().map(|s| s.task_id.clone()));
                }
                for (info, rx) in started.into_iter().zip(receivers) {
                    self.pending
                        .push(async move { (info, rx.await.ok()) }.boxed());
                }
            }
            Err(e) => {
                for s in &started {
                    self.near.answered(&s.task_id);
                }
                ctx.emit(RunEvent::Diagnostics(
                    Diagnostic::error("Failed to dispatch apply tasks", e.to_string()).into(),
                ));
            }
        }
    }

    /// Waits for the next result of an operation or an ephemeral resource
    /// (handled here); while paused, looks again now and then.
    async fn wait(&mut self, ctx: &mut RunCtx<'_>, paused: bool) -> Woke {
        if self.pending.is_empty() && !self.ephemerals.busy() {
            if paused {
                tokio::time::sleep(PAUSED_LOOK).await;
                return Woke::Again;
            }
            return Woke::Over;
        }
        let next = async {
            tokio::select! {
                Some(r) = self.pending.next(), if !self.pending.is_empty() => Ok(r),
                e = self.ephemerals.next() => Err(e),
            }
        };
        let woke = match paused {
            true => match tokio::time::timeout(PAUSED_LOOK, next).await {
                Ok(w) => w,
                Err(_) => return Woke::Again,
            },
            false => next.await,
        };
        match woke {
            Ok(answer) => Woke::Op(answer),
            Err(e) => {
                self.ephemerals.handle(ctx, e);
                Woke::Again
            }
        }
    }

    /// Group commit: every result already here is recorded together (one
    /// durable write), then each operation is completed.
    fn settle(&mut self, ctx: &mut RunCtx<'_>, first: Answer) {
        let mut batch = vec![first];
        while batch.len() < GROUP_COMMIT {
            match self.pending.next().now_or_never() {
                Some(Some(r)) => batch.push(r),
                _ => break,
            }
        }
        let plan = self.plan;
        let mut finished = Vec::with_capacity(batch.len());
        let mut deltas = Vec::new();
        let mut answered = Vec::with_capacity(batch.len());
        let mut results = Vec::with_capacity(batch.len());
        for (started, mut result) in batch {
            self.near.answered(&started.task_id);
            let c = &plan.changes[started.change];
            // The process is for what this releases, not for the journal.
            let near = result.as_mut().and_then(process_of);
            // Journaled with the changes it makes, for a resumed run.
            results.extend(result.clone());
            // Only tasks with provisioners have one; a task whose watch was
            // lost (the coordinator restarted) shows all from the result.
            let stream = self.streams.remove(&started.task_id);
            let stream = || stream.unwrap_or_else(|| ProvisionStream::new(ctx, &c.addr));
            answered.push(started.task_id.clone());
            if started.provisioning {
                let (outcome, d) = super::provision::finish(c, &self.state, &stream(), result);
                deltas.extend(d);
                finished.push(Finished {
                    started,
                    outcome,
                    then_provision: false,
                    near,
                });
                continue;
            }
            if result
                .as_ref()
                .is_some_and(|r| r.outcome == TaskOutcome::Cancelled)
            {
                // Never started: the object is as it was, so a deposed one
                // goes back to being current.
                deltas.extend(undepose(c, started.kind, &self.state, &self.deposed_key));
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
            let (outcome, mut d, data) = finish(c, started.kind, result, &self.deposed_key);
            if c.action == Action::Read {
                d.push(read_record(ctx, c, data.as_ref()));
            }
            let then_provision =
                outcome.is_ok() && super::provision::after_create(ctx, c, started.kind);
            if then_provision {
                super::provision::taint_until_provisioned(&mut d);
            }
            deltas.extend(d);
            if let Some(v) = data
                && let Some(values) = ctx.values.resource_mut(&c.addr.containing_resource())
            {
                values.instances.insert(c.addr.resource.key.clone(), v);
            }
            finished.push(Finished {
                started,
                outcome,
                then_provision,
                near,
            });
        }
        self.record
            .answered(ctx, &mut self.state, deltas, answered, results);
        for f in finished {
            self.complete(ctx, f);
        }
    }

    /// Completes an operation whose result is recorded: its creation-time
    /// provisioners are next, or its postconditions are checked and its
    /// dependents released.
    fn complete(&mut self, ctx: &mut RunCtx<'_>, f: Finished) {
        let Finished {
            started,
            outcome,
            then_provision,
            near,
        } = f;
        let plan = self.plan;
        let (c, kind) = (&plan.changes[started.change], started.kind);
        // A new object with creation-time provisioners is done (and its
        // postconditions checked) once they have run.
        if then_provision && outcome.is_ok() {
            match super::provision::create_task(ctx, &self.state, c) {
                Ok(t) => {
                    let started = Started {
                        task_id: t.id.clone(),
                        provisioning: true,
                        ..started
                    };
                    self.provisions.push((started, t));
                }
                Err(d) => {
                    self.ephemerals.op_failed(&c.addr);
                    errored(ctx, c, kind, d);
                    self.op_failed(started.node, c, kind);
                }
            }
            return;
        }
        match crate::run::eval::conditions::after_apply(ctx, c, kind, outcome) {
            Ok(worker) => {
                if kind == OpKind::Apply {
                    self.ephemerals.op_done(&c.addr);
                }
                self.done += 1;
                ctx.emit(RunEvent::ApplyComplete {
                    addr: c.addr.clone(),
                    deposed: c.deposed.clone(),
                    action: c.action,
                    op: op_of(c, kind),
                    id: self.id_attr(ctx, c),
                    elapsed_ms: started.t0.elapsed().as_millis() as u64,
                    worker,
                });
                // Watchers show progress every few seconds: one event a
                // second (and the last) tells them, not one per operation
                // (100,000 events in a large apply).
                if self.done == self.total || self.last_progress.elapsed() >= PROGRESS_EVERY {
                    self.last_progress = Instant::now();
                    ctx.emit(RunEvent::Progress {
                        done: self.done,
                        total: self.total,
                    });
                }
                self.near.finished(started.node, near);
                self.done_with(started.node);
            }
            Err(d) => {
                if kind == OpKind::Apply {
                    self.ephemerals.op_failed(&c.addr);
                }
                errored(ctx, c, kind, d);
                self.op_failed(started.node, c, kind);
            }
        }
    }

    /// Releases what waits for `node`, which is done (or failed, or was
    /// skipped); what comes after a failure or a skip, or after a node
    /// that came after one, is tainted.
    fn done_with(&mut self, node: NodeId) {
        if self.tainted.contains(&node) {
            self.taint_after(node);
        }
        let released = self.walk.complete(node);
        self.near.released(node, &released);
        self.ready.extend(released);
    }

    fn taint_after(&mut self, node: NodeId) {
        self.tainted.extend(self.graph.dag.dependents(node));
    }

    /// An operation failed. A failed apply operation (create, update,
    /// deferred read) is recorded as failed, and what waits for it is
    /// released tainted: each such operation decides whether it reads the
    /// failed instance ([`ApplyWalk::goes_on`]). A failed destroy releases
    /// nothing: what waits for it never runs, as in Terraform.
    fn op_failed(&mut self, node: NodeId, c: &ResourceChange, kind: OpKind) {
        if kind != OpKind::Apply {
            return;
        }
        self.failed
            .entry(c.addr.containing_resource())
            .or_default()
            .insert(c.addr.resource.key.clone());
        self.taint_after(node);
        self.ready.extend(self.walk.complete(node));
    }

    /// Whether a tainted operation goes on (failure isolation). An apply
    /// operation goes on when every failed or skipped instance of the
    /// resources it depends on is one its configuration does not read:
    /// its plan narrowed its references of that resource to instances
    /// (`Plan::instance_refs`), and none of those failed. Otherwise it is
    /// skipped, as Terraform skips whatever depends on a failed resource,
    /// and counts as failed for what comes after it. A destroy after a
    /// failure never runs.
    fn goes_on(&mut self, node: NodeId, change: usize, kind: OpKind) -> bool {
        let plan = self.plan;
        let c = &plan.changes[change];
        if kind != OpKind::Apply {
            return false;
        }
        let why = match plan.instance_refs.get(&c.addr) {
            // Everything it reads is known: it goes on unless it reads a
            // failed (or skipped) instance.
            Some(refs) => refs
                .instances
                .iter()
                .find_map(|(r, read)| {
                    let failed = self.failed.get(r)?;
                    let k = read.iter().find(|k| failed.contains(*k))?;
                    Some(format!(
                        "it reads {}, which failed or was skipped",
                        r.instance(k.clone())
                    ))
                })
                .or_else(|| {
                    refs.whole.iter().find_map(|r| {
                        let failed = self.failed.get(r).filter(|f| !f.is_empty())?;
                        Some(format!(
                            "it reads {r} as a whole, and {} of its instances failed or were skipped",
                            failed.len()
                        ))
                    })
                }),
            // Terraform's rule: a failed instance of a resource it depends
            // on (or any failure before it) holds it back.
            None => Some(
                c.dependencies
                    .iter()
                    .find_map(|dep| {
                        let failed = self.failed.get(dep).filter(|f| !f.is_empty())?;
                        Some(format!(
                            "it depends on {dep} as a whole, and {} of its instances failed or were skipped",
                            failed.len()
                        ))
                    })
                    .unwrap_or_else(|| "an operation it waits for failed".to_string()),
            ),
        };
        match why {
            None => {
                self.isolated += 1;
                true
            }
            Some(why) => {
                self.ephemerals.op_failed(&c.addr);
                self.skipped.push((c.addr.clone(), why));
                self.op_failed(node, c, kind);
                false
            }
        }
    }

    /// Says which operations a failure held back, and why, and how many
    /// went on since they read none of the failed instances.
    fn report_isolation(&self, ctx: &RunCtx<'_>) {
        if self.skipped.is_empty() && self.isolated == 0 {
            return;
        }
        const SHOWN: usize = 20;
        let mut lines: Vec<String> = self
            .skipped
            .iter()
            .take(SHOWN)
            .map(|(addr, why)| format!("  - {addr}: skipped because {why}"))
            .collect();
        if self.skipped.len() > SHOWN {
            lines.push(format!("  ... and {} more", self.skipped.len() - SHOWN));
        }
        let mut detail = format!(
            "{} operation(s) that depend on a failed instance were skipped; {} went on, since their configuration reads none of the failed instances.",
            self.skipped.len(),
            self.isolated
        );
        if !lines.is_empty() {
            detail.push_str("\n\n");
            detail.push_str(&lines.join("\n"));
        }
        detail.push_str("\n\nApply again once the failures are fixed: the skipped operations are planned again.");
        ctx.emit(RunEvent::Diagnostics(
            Diagnostic::warning("Operations held back by failures", detail).into(),
        ));
    }

    /// The `id` a completion shows. A deferred read's object is in the
    /// scope, not the state: "Read complete after 0s [id=...]" as
    /// Terraform.
    fn id_attr(&self, ctx: &RunCtx<'_>, c: &ResourceChange) -> Option<String> {
        if c.action == Action::Read {
            ctx.values
                .resource(&c.addr.containing_resource())
                .and_then(|r| r.instances.get(&c.addr.resource.key))
                .and_then(|v| v.get_attr("id").as_str().map(str::to_string))
        } else {
            self.state
                .current(&c.addr)
                .and_then(|o| o.value.get_attr("id").as_str().map(str::to_string))
        }
    }

    /// Ends the walk, whatever ended it: what is still open closes, a
    /// cancel is reported, conditions and checks are recorded, then the
    /// provider configurations and the outputs. Returns the new state and
    /// whether a cancel stopped the walk early.
    async fn end(mut self, ctx: &mut RunCtx<'_>) -> (State, bool) {
        let quiet = ctx.events.errors() > self.errors_at_start
            || self.record.failed
            || ctx.handle.is_cancelled()
            || ctx.lock.lost();
        self.ephemerals.finish(ctx, &mut self.locals, quiet).await;
        let stopped_early = ctx.handle.is_cancelled() && !self.walk.is_done();
        if stopped_early {
            ctx.emit(RunEvent::Diagnostics(
                Diagnostic::error(
                    "Apply cancelled",
                    format!(
                        "The run was cancelled after {} of {} operations completed. Operations in progress were asked to stop; the rest were not started, and their objects are as they were. The state records everything that completed; apply again to finish.",
                        self.done, self.total
                    ),
                )
                .into(),
            ));
        }
        self.report_isolation(ctx);
        self.locals.refresh_all(ctx);
        let (plan, record, mut state) = (self.plan, self.record, self.state);
        if plan.mode == PlanMode::Normal && !stopped_early {
            crate::run::eval::conditions::after_apply_walk(ctx, plan);
            let results = crate::run::eval::conditions::check_results(ctx);
            if results != state.check_results {
                record.record(ctx, &mut state, vec![StateDelta::SetCheckResults(results)]);
            }
        }
        if let Some(delta) = provider_configs(ctx, &state) {
            record.record(ctx, &mut state, vec![delta]);
        }
        outputs(ctx, record, &mut state, plan);
        (state, stopped_early)
    }
}

/// The provider configuration of each resource with objects, for the
/// state to record (once a resource is gone from the configuration, it is
/// destroyed with that one); `None` when the state has it already.
pub(in crate::run) fn provider_configs(ctx: &RunCtx<'_>, state: &State) -> Option<StateDelta> {
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

/// The state's record of a data source read at apply, as a read made while
/// planning is recorded: the marks its schema and its configuration give
/// the value read (the planned value was unknown where nested sensitive
/// attributes are), the schema version of its type. A read that failed
/// (`None`) drops the record the state had, which is no longer the
/// latest read, as Terraform 1.11 drops it.
fn read_record(ctx: &RunCtx<'_>, c: &ResourceChange, value: Option<&Value>) -> StateDelta {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return StateDelta::SetCurrent {
            addr: c.addr.clone(),
            provider: c.provider.clone(),
            object: None,
        };
    };
    let type_schema = ctx
        .provider_by_addr(&c.provider)
        .and_then(|(_, (_, schema))| {
            schema
                .data_sources
                .get(c.addr.resource.resource.type_name.as_str())
        });
    let config_marks = Marks::from_paths(c.value_sensitive_paths.iter().cloned());
    let marks = object_marks(config_marks, type_schema.map(|s| &s.block), value);
    DataRecord {
        provider: c.provider.clone(),
        schema_version: type_schema.map_or(c.schema_version, |s| s.version),
        sensitive_paths: marks.into_paths(),
        value_sensitive_paths: c.value_sensitive_paths.to_vec(),
    }
    .delta(&c.addr, value.clone())
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

fn record_imports(ctx: &mut RunCtx<'_>, record: &mut Record, state: &mut State, plan: &Plan) {
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
                private: c.prior_private.to_vec(),
                schema_version: c.schema_version,
                status: ObjectStatus::Ready,
                dependencies: c.dependencies.clone(),
                create_before_destroy: c.create_before_destroy,
                sensitive_paths: c.sensitive_paths.to_vec(),
                value_sensitive_paths: None,
                undecoded: false,
            }),
        })
        .collect();
    record.record(ctx, state, deltas);
}

/// A refresh-only apply records what refreshing found, calling no provider.
fn record_refresh(ctx: &mut RunCtx<'_>, record: &mut Record, state: &mut State, plan: &Plan) {
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
                private: c.prior_private.to_vec(),
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
    record.record(ctx, state, deltas);
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
                    private: c.prior_private.to_vec(),
                    schema_version: c.schema_version,
                })
            });
            ApplyTask {
                addr: c.addr.clone(),
                type_name: type_name.to_string(),
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
                type_name: type_name.to_string(),
                op,
                prior,
                config,
                planned: c.after.clone(),
                planned_private: c.planned_private.to_vec(),
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
    let rschema = types.get(r.type_name.as_str()).ok_or_else(|| {
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

/// Records the root outputs the apply changed. After a failed operation
/// an output that cannot be evaluated (it reads what failed: a null
/// object, a missing attribute) keeps its recorded value without a second
/// error, as Terraform 1.11 does not evaluate what depends on a failure.
fn outputs(ctx: &mut RunCtx<'_>, record: &mut Record, state: &mut State, plan: &Plan) {
    let failed_before = ctx.events.errors() > 0;
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
        record.record(ctx, state, deltas);
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
