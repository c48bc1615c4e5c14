//! Ephemeral resources in the apply walk, opened, renewed and closed when
//! Terraform 1.11 does it:
//! - **open**: an ephemeral resource is a node of the walk. It opens once
//!   every resource it depends on (through named values, providers and
//!   other ephemeral resources) is applied, so its arguments are known;
//!   the create, update and read operations that use its value wait for it
//!   (they are parked, and released when it has opened).
//! - **renew**: an instance whose provider answered a `renew_at` is renewed
//!   shortly before then ([`RENEW_LEAD`]) while it is still open, again
//!   after each renewal that asks for one. A renewal that fails leaves the
//!   instance expired: dependents that start after that fail with
//!   "Ephemeral resource instance has expired", and the provider's own
//!   error is reported when the instance is closed, as Terraform does.
//! - **close**: once everything that depends on it, directly or through
//!   other resources (Terraform waits for the last of its dependents'
//!   dependents too), has finished or failed, and always when the walk
//!   ends: after errors and cancellations too ([`ApplyEphemerals::finish`]).
//!
//! Where the tasks run, in a fleet. An open is a task any worker of the
//! pool may take. Its renewals and its close are tasks too, carrying the
//! `private` data the provider answered, and any worker of the pool may
//! take them, calling its own process of the run's provider
//! configuration: workers keep one process per (provider, configuration,
//! run), so with one worker (and in embedded mode, whose in-process
//! workers share one pool of processes) it is the process that opened the
//! instance; with several, it may be another. The plugin protocol makes
//! that sound for a provider that keeps what it needs in `private` (the
//! protocol's own place for it: Terraform's plugin framework hands it to
//! Renew and Close for exactly that); a provider that kept the instance in
//! its process's memory would not find it. Sending a renewal or a close to
//! the very worker that opened would take a task subject per worker, which
//! the queue does not have. The coordinator holds `private` in memory for
//! the walk only, never in the journal or the archive. As in Terraform,
//! the close gets the private data of the open, a renewal that of the
//! renewal before it.

use crate::run::ctx::{DISPATCH_WINDOW, Opened, RunCtx};
use crate::run::eval::ephemeral::{open_started, prepare, task_id};
use crate::run::eval::named_values::Refresh;
use fleetform_lang::graph::config::{ConfigGraph, ConfigNode};
use fleetform_shared::addr::{AbsResourceInstance, ConfigResource, ResourceMode};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::NodeId;
use fleetform_shared::graph::apply::{ApplyGraph, ApplyNode, OpKind};
use fleetform_shared::plan::{Action, Plan};
use fleetform_shared::wire::{ApplyOp, CloseTask, RenewTask, RunEvent, Task, TaskKind, TaskResult};
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How long before the provider's `renew_at` a renewal is sent, at most
/// (half the time left when that is shorter): the task crosses the queue
/// and may wait for a worker's free slot.
mod answers;

pub(crate) use answers::Answer;
use answers::Pending;

pub(crate) const RENEW_LEAD: Duration = Duration::from_secs(1);

/// Where a gate (one ephemeral resource, every instance of it) stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for what it depends on.
    Waiting,
    /// Opens dispatched, `left` not answered.
    Opening {
        left: usize,
    },
    Open,
    /// Closes dispatched (or nothing to close).
    Closing,
    /// It did not open: what uses it never runs.
    Failed,
}

struct Instance {
    opened: Opened,
    /// What the next renewal sends: the open's, then each renewal's.
    renew_private: Option<Vec<u8>>,
    /// When to send the next renewal.
    renew_due: Option<Instant>,
    renewing: bool,
    /// Renewals sent so far.
    renewals: u32,
    /// A renewal failed: the value must not be used any more.
    expired: bool,
    /// What renewals said, reported with the close.
    renew_diags: Diagnostics,
}

struct Gate {
    resource: ConfigResource,
    phase: Phase,
    /// Apply operations and ephemeral resources it waits for, not done yet.
    upstream_left: usize,
    /// Operations and ephemeral resources that use it, not finished yet.
    users_left: usize,
    /// Ephemeral resources that count this one among their users.
    user_of: Vec<usize>,
    /// Ephemeral resources waiting for this one to open.
    downstream: Vec<usize>,
    /// Operations waiting for this one to open.
    parked: Vec<NodeId>,
    instances: Vec<Instance>,
    /// One of its opens failed.
    open_failed: bool,
}

/// What one of the walk's ephemeral events is (see [`ApplyEphemerals::next`]).
pub(crate) enum Event {
    Answer(Answer),
    /// A renewal is due.
    RenewDue,
}

/// Whether an operation may start, as far as ephemeral resources go.
pub(crate) enum Hold {
    Go,
    /// It waits for an ephemeral resource to open.
    Parked,
    /// It uses an instance whose renewal failed.
    Expired(Diagnostics),
}

/// The apply walk's ephemeral resources (see the module comment).
#[derive(Default)]
pub(crate) struct ApplyEphemerals {
    gates: Vec<Gate>,
    /// A resource's apply operations → the ephemeral resources they use
    /// directly (through named values, not through another resource).
    waits_for: HashMap<ConfigResource, Vec<usize>>,
    /// A resource's apply operations → the ephemeral resources waiting for them.
    upstream_of: HashMap<ConfigResource, Vec<usize>>,
    /// A resource's apply operations → the ephemeral resources they keep open.
    used_by: HashMap<ConfigResource, Vec<usize>>,
    /// Parked operations → ephemeral resources they still wait for.
    parked: HashMap<NodeId, usize>,
    tasks: FuturesUnordered<BoxFuture<'static, Answer>>,
    to_open: Vec<usize>,
    to_close: Vec<usize>,
    /// Operations released by opens, for the walk's ready set.
    released: Vec<NodeId>,
    /// The walk starts nothing new: no opens, no renewals.
    stopping: bool,
}

fn is_ephemeral(node: &ConfigNode) -> Option<&ConfigResource> {
    match node {
        ConfigNode::Resource(r) if r.resource.mode == ResourceMode::Ephemeral => Some(r),
        _ => None,
    }
}

/// Every node that depends on `id`, transitively, without `id`.
fn descendants(graph: &ConfigGraph, id: NodeId) -> HashSet<NodeId> {
    let mut out = graph.dag.descendants_of([id]);
    out.remove(&id);
    out
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// When to send the renewal the provider wants by `renew_at` (Unix ms).
fn renew_due(renew_at: i64) -> Instant {
    let left = Duration::from_millis((renew_at - unix_ms()).max(0) as u64);
    Instant::now() + left - (left / 2).min(RENEW_LEAD)
}

impl ApplyEphemerals {
    /// The ephemeral resources of the configuration, with what each waits
    /// for and what uses it among the plan's apply operations. A destroy
    /// opens none: its operations take no configuration.
    pub fn new(ctx: &RunCtx<'_>, config: &ConfigGraph, graph: &ApplyGraph, plan: &Plan) -> Self {
        let mut me = ApplyEphemerals::default();
        let none = !config
            .dag
            .node_ids()
            .any(|id| is_ephemeral(config.dag.node(id)).is_some());
        if none || ctx.request.operation == fleetform_shared::wire::Operation::Destroy {
            return me;
        }
        let mut ops: HashMap<ConfigResource, usize> = HashMap::new();
        for id in graph.dag.node_ids() {
            if let ApplyNode::Op {
                change,
                kind: OpKind::Apply,
            } = graph.dag.node(id)
            {
                *ops.entry(plan.changes[*change].addr.config_resource())
                    .or_default() += 1;
            }
        }
        let mut index: HashMap<NodeId, usize> = HashMap::new();
        for id in config.dag.node_ids() {
            if let Some(r) = is_ephemeral(config.dag.node(id)) {
                index.insert(id, me.gates.len());
                me.gates.push(Gate {
                    resource: r.clone(),
                    phase: Phase::Waiting,
                    upstream_left: 0,
                    users_left: 0,
                    user_of: Vec::new(),
                    downstream: Vec::new(),
                    parked: Vec::new(),
                    instances: Vec::new(),
                    open_failed: false,
                });
            }
        }
        let not_resource = |n: &ConfigNode| !matches!(n, ConfigNode::Resource(_));
        for (&id, &g) in &index {
            for a in config.dag.ancestors_through([id], not_resource) {
                let ConfigNode::Resource(r) = config.dag.node(a) else {
                    continue;
                };
                if a == id {
                    continue;
                }
                match index.get(&a) {
                    Some(&up) => {
                        me.gates[g].upstream_left += 1;
                        me.gates[up].downstream.push(g);
                    }
                    None => {
                        let n = ops.get(r).copied().unwrap_or(0);
                        if n > 0 {
                            me.gates[g].upstream_left += n;
                            me.upstream_of.entry(r.clone()).or_default().push(g);
                        }
                    }
                }
            }
            for d in descendants(config, id) {
                let ConfigNode::Resource(r) = config.dag.node(d) else {
                    continue;
                };
                match index.get(&d) {
                    Some(&user) => {
                        me.gates[g].users_left += 1;
                        me.gates[user].user_of.push(g);
                    }
                    None => {
                        let n = ops.get(r).copied().unwrap_or(0);
                        if n > 0 {
                            me.gates[g].users_left += n;
                            me.used_by.entry(r.clone()).or_default().push(g);
                        }
                    }
                }
            }
        }
        for r in ops.keys() {
            let Some(id) = config.id(&ConfigNode::Resource(r.clone())) else {
                continue;
            };
            let gates: Vec<usize> = config
                .dag
                .ancestors_through([id], not_resource)
                .into_iter()
                .filter_map(|a| index.get(&a).copied())
                .collect();
            if !gates.is_empty() {
                me.waits_for.insert(r.clone(), gates);
            }
        }
        me.to_open = (0..me.gates.len())
            .filter(|&g| me.gates[g].upstream_left == 0)
            .collect();
        me
    }

    /// Whether the apply operation `id` of instance `addr` may start: it
    /// waits while an ephemeral resource it uses has not opened, and
    /// fails once one it uses has expired.
    pub fn hold(&mut self, id: NodeId, addr: &AbsResourceInstance) -> Hold {
        if self.gates.is_empty() {
            return Hold::Go;
        }
        let Some(gates) = self.waits_for.get(&addr.config_resource()) else {
            return Hold::Go;
        };
        let waiting: Vec<usize> = gates
            .iter()
            .copied()
            .filter(|&g| !matches!(self.gates[g].phase, Phase::Open | Phase::Closing))
            .collect();
        if !waiting.is_empty() {
            self.parked.insert(id, waiting.len());
            for g in waiting {
                self.gates[g].parked.push(id);
            }
            return Hold::Parked;
        }
        let mut diags = Diagnostics::new();
        for &g in gates {
            for i in self.gates[g].instances.iter().filter(|i| i.expired) {
                diags.push(Diagnostic::error(
                    "Ephemeral resource instance has expired",
                    format!(
                        "The remote object for {} is no longer available due to a renewal error, so fleetform cannot evaluate this expression.",
                        i.opened.addr
                    ),
                ));
            }
        }
        if diags.is_empty() {
            Hold::Go
        } else {
            Hold::Expired(diags)
        }
    }

    /// An apply operation of `addr` finished: what waits for it may open,
    /// and what it kept open may close.
    pub fn op_done(&mut self, addr: &AbsResourceInstance) {
        if self.gates.is_empty() {
            return;
        }
        let r = addr.config_resource();
        for g in self.upstream_of.get(&r).cloned().unwrap_or_default() {
            let gate = &mut self.gates[g];
            gate.upstream_left -= 1;
            if gate.upstream_left == 0 && gate.phase == Phase::Waiting {
                self.to_open.push(g);
            }
        }
        self.op_failed(addr);
    }

    /// An apply operation of `addr` failed (or will never start): it no
    /// longer keeps anything open; what waits for it never opens.
    pub fn op_failed(&mut self, addr: &AbsResourceInstance) {
        if self.gates.is_empty() {
            return;
        }
        for g in self
            .used_by
            .get(&addr.config_resource())
            .cloned()
            .unwrap_or_default()
        {
            self.gates[g].users_left -= 1;
            self.close_if_unused(g);
        }
    }

    /// Operations that may start now that what they use has opened.
    pub fn take_released(&mut self) -> Vec<NodeId> {
        std::mem::take(&mut self.released)
    }

    /// Whether tasks of the walk's ephemeral resources are in flight.
    pub fn busy(&self) -> bool {
        !self.tasks.is_empty()
    }

    /// The next answer, or a renewal falling due. Waits for ever when
    /// there is neither (the walk waits for its operations meanwhile).
    pub async fn next(&mut self) -> Event {
        let due = self.next_due();
        let timer = async {
            match due {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            Some(a) = self.tasks.next(), if !self.tasks.is_empty() => Event::Answer(a),
            () = timer => Event::RenewDue,
        }
    }

    fn next_due(&self) -> Option<Instant> {
        if self.stopping {
            return None;
        }
        self.gates
            .iter()
            .filter(|g| matches!(g.phase, Phase::Opening { .. } | Phase::Open))
            .flat_map(|g| &g.instances)
            .filter(|i| !i.renewing && !i.expired)
            .filter_map(|i| i.renew_due)
            .min()
    }

    /// Dispatches what is due: opens of ephemeral resources whose
    /// dependencies are applied (none once `stopping`: the walk starts
    /// nothing new), renewals, closes.
    pub async fn start(&mut self, ctx: &mut RunCtx<'_>, locals: &mut Refresh<'_>, stopping: bool) {
        self.stopping |= stopping;
        let stopping = self.stopping;
        let mut tasks: Vec<(Task, Pending)> = Vec::new();
        for g in std::mem::take(&mut self.to_open) {
            if stopping {
                self.gates[g].phase = Phase::Failed;
                continue;
            }
            self.open(ctx, locals, g, &mut tasks);
        }
        if !stopping {
            let now = Instant::now();
            for (g, gate) in self.gates.iter_mut().enumerate() {
                if !matches!(gate.phase, Phase::Opening { .. } | Phase::Open) {
                    continue;
                }
                for (i, inst) in gate.instances.iter_mut().enumerate() {
                    if inst.renewing || inst.expired || inst.renew_due.is_none_or(|d| d > now) {
                        continue;
                    }
                    inst.renewing = true;
                    inst.renewals += 1;
                    inst.renew_due = None;
                    renew_task(ctx, g, i, inst, &mut tasks);
                }
            }
        }
        for g in std::mem::take(&mut self.to_close) {
            self.close(ctx, g, &mut tasks);
        }
        self.dispatch(ctx, tasks).await;
    }

    fn open(
        &mut self,
        ctx: &mut RunCtx<'_>,
        locals: &mut Refresh<'_>,
        g: usize,
        tasks: &mut Vec<(Task, Pending)>,
    ) {
        let r = self.gates[g].resource.clone();
        locals.refresh_for(ctx, &r);
        let mut diags = Diagnostics::new();
        let prepared = prepare(ctx, &r, &mut diags);
        let failed = diags.has_errors();
        if !diags.is_empty() {
            ctx.emit(RunEvent::Diagnostics(diags));
        }
        let Some((spec, prepared)) = prepared.filter(|_| !failed) else {
            self.failed(g);
            return;
        };
        let mut left = 0;
        for p in prepared {
            let Some(open) = p.task else { continue };
            open_started(ctx, &p.addr);
            left += 1;
            let task = Task {
                id: task_id(ctx, "open", &p.addr),
                run_id: ctx.run_id().to_string(),
                provider: spec.clone(),
                kind: TaskKind::Open(open),
            };
            tasks.push((
                task,
                Pending::Open {
                    gate: g,
                    addr: p.addr,
                },
            ));
        }
        self.gates[g].phase = Phase::Opening { left };
        if left == 0 {
            self.opened(g);
        }
    }

    fn close(&mut self, ctx: &mut RunCtx<'_>, g: usize, tasks: &mut Vec<(Task, Pending)>) {
        let gate = &mut self.gates[g];
        gate.phase = Phase::Closing;
        for (i, inst) in gate.instances.iter().enumerate() {
            let o = &inst.opened;
            ctx.emit(RunEvent::ApplyStart {
                addr: o.addr.clone(),
                deposed: None,
                action: Action::Read,
                op: ApplyOp::Close,
            });
            let task = Task {
                id: task_id(ctx, "close", &o.addr),
                run_id: ctx.run_id().to_string(),
                provider: o.provider.clone(),
                kind: TaskKind::Close(CloseTask {
                    addr: o.addr.clone(),
                    type_name: o.addr.resource.resource.type_name.to_string(),
                    private: o.private.clone(),
                }),
            };
            tasks.push((
                task,
                Pending::Close {
                    gate: g,
                    instance: i,
                },
            ));
        }
    }

    async fn dispatch(&mut self, ctx: &mut RunCtx<'_>, tasks: Vec<(Task, Pending)>) {
        if tasks.is_empty() {
            return;
        }
        let started = Instant::now();
        // Few in any real configuration; a window keeps a pathological one
        // from holding every task at once.
        let mut tasks = tasks.into_iter().peekable();
        while tasks.peek().is_some() {
            let chunk: Vec<(Task, Pending)> = tasks.by_ref().take(DISPATCH_WINDOW).collect();
            let (batch, pending): (Vec<Task>, Vec<Pending>) = chunk.into_iter().unzip();
            match ctx.shared.dispatcher.dispatch(batch).await {
                Ok(receivers) => {
                    for (p, rx) in pending.into_iter().zip(receivers) {
                        self.tasks.push(p.answer(rx, started));
                    }
                }
                Err(e) => {
                    ctx.emit(RunEvent::Diagnostics(
                        Diagnostic::error(
                            "Failed to dispatch ephemeral resource tasks",
                            e.to_string(),
                        )
                        .into(),
                    ));
                    // Answered "no answer": opens fail, renewals expire,
                    // closes are reported lost.
                    for p in pending {
                        let (_, rx) = tokio::sync::oneshot::channel::<TaskResult>();
                        self.tasks.push(p.answer(rx, started));
                    }
                }
            }
        }
    }

    /// Every instance of gate `g` is open (or has an unknown value).
    fn opened(&mut self, g: usize) {
        self.gates[g].phase = Phase::Open;
        for id in std::mem::take(&mut self.gates[g].parked) {
            if let Some(n) = self.parked.get_mut(&id) {
                *n -= 1;
                if *n == 0 {
                    self.parked.remove(&id);
                    self.released.push(id);
                }
            }
        }
        for d in self.gates[g].downstream.clone() {
            let gate = &mut self.gates[d];
            gate.upstream_left -= 1;
            if gate.upstream_left == 0 && gate.phase == Phase::Waiting {
                self.to_open.push(d);
            }
        }
        self.no_longer_using(g);
        self.close_if_unused(g);
    }

    /// Gate `g` did not open: what uses it never runs; what it opened
    /// closes.
    fn failed(&mut self, g: usize) {
        self.gates[g].phase = Phase::Failed;
        self.no_longer_using(g);
        if !self.gates[g].instances.is_empty() {
            self.to_close.push(g);
            self.gates[g].phase = Phase::Closing;
        }
    }

    /// Gate `g` opened or failed: the ephemeral resources it used are done
    /// with as far as it goes.
    fn no_longer_using(&mut self, g: usize) {
        for u in self.gates[g].user_of.clone() {
            self.gates[u].users_left -= 1;
            self.close_if_unused(u);
        }
    }

    fn close_if_unused(&mut self, g: usize) {
        let gate = &mut self.gates[g];
        if gate.phase == Phase::Open
            && gate.users_left == 0
            && !gate.instances.iter().any(|i| i.renewing)
        {
            gate.phase = Phase::Closing;
            self.to_close.push(g);
        }
    }

    /// The walk ended (done, failed or cancelled): answers still to come
    /// are awaited, then everything open is closed, and operations that
    /// waited for an ephemeral resource that never opened are reported
    /// if nothing else explains them.
    pub async fn finish(&mut self, ctx: &mut RunCtx<'_>, locals: &mut Refresh<'_>, quiet: bool) {
        loop {
            self.to_open.clear();
            for g in 0..self.gates.len() {
                let gate = &self.gates[g];
                if gate.phase == Phase::Open && !gate.instances.iter().any(|i| i.renewing) {
                    self.gates[g].phase = Phase::Closing;
                    self.to_close.push(g);
                }
            }
            self.start(ctx, locals, true).await;
            let Some(answer) = self.tasks.next().await else {
                break;
            };
            self.handle(ctx, Event::Answer(answer));
        }
        if !self.parked.is_empty() && !quiet {
            let mut names: Vec<String> = self
                .gates
                .iter()
                .filter(|g| !g.parked.is_empty())
                .map(|g| g.resource.to_string())
                .collect();
            names.sort();
            ctx.emit(RunEvent::Diagnostics(
                Diagnostic::error(
                    "Operations never started",
                    format!(
                        "{} operations waited for ephemeral resources that never opened: {}.",
                        self.parked.len(),
                        names.join(", ")
                    ),
                )
                .into(),
            ));
        }
    }
}

impl Instance {
    fn expire(&mut self, diags: Diagnostics) {
        self.expired = true;
        self.renew_due = None;
        self.renew_diags.extend(diags);
    }
}

/// "ADDR: Renewing..." and its task, with the private data of the last
/// open or renewal.
fn renew_task(
    ctx: &RunCtx<'_>,
    gate: usize,
    instance: usize,
    inst: &Instance,
    tasks: &mut Vec<(Task, Pending)>,
) {
    let addr = &inst.opened.addr;
    ctx.emit(RunEvent::ApplyStart {
        addr: addr.clone(),
        deposed: None,
        action: Action::Read,
        op: ApplyOp::Renew,
    });
    let task = Task {
        // Unique per renewal: the queue drops a task id it has seen.
        id: format!("{}.{}", task_id(ctx, "renew", addr), inst.renewals),
        run_id: ctx.run_id().to_string(),
        provider: inst.opened.provider.clone(),
        kind: TaskKind::Renew(RenewTask {
            addr: addr.clone(),
            type_name: addr.resource.resource.type_name.to_string(),
            private: inst.renew_private.clone(),
        }),
    };
    tasks.push((task, Pending::Renew { gate, instance }));
}
