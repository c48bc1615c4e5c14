//! The worker loop: take tasks up to the concurrency limit, run each, publish
//! the result, then ack (so a crash before publishing means redelivery, not
//! a lost result). Beside it, [`follow_control`] acts on the coordinator's
//! run control messages (cancel, finished).

use crate::handler::{ApplyGate, Open, Progress, ProviderSource, StopSignal, handle_gated};
use crate::source::{ControlStream, ResultSink, TaskSource};
use crate::throttle::{CallContext, ProviderLimits, ThrottledSource, Throttles};
use fleetform_shared::wire::{
    ApplyOp, DirectAnswer, ProgressEvent, RunControl, Task, TaskKind, TaskOutcome, TaskProgress,
    TaskResult,
};
use futures::StreamExt;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Semaphore, watch};

/// Runs cancelled lately. Their tasks still queued are answered
/// [`TaskOutcome::Cancelled`] without calling a provider. Bounded: a run's
/// tasks are dispatched only while the run goes, so old entries are useless.
pub struct StoppedRuns {
    runs: Mutex<VecDeque<String>>,
    /// Wakes tasks in progress that watch for their run's cancellation.
    changed: tokio::sync::watch::Sender<()>,
}

impl Default for StoppedRuns {
    fn default() -> Self {
        StoppedRuns {
            runs: Mutex::default(),
            changed: tokio::sync::watch::Sender::new(()),
        }
    }
}

impl StoppedRuns {
    const KEEP: usize = 1024;

    pub fn insert(&self, run_id: &str) {
        {
            let mut runs = self.runs.lock().expect("stopped runs lock");
            if runs.iter().any(|r| r == run_id) {
                return;
            }
            if runs.len() == Self::KEEP {
                runs.pop_front();
            }
            runs.push_back(run_id.to_string());
        }
        self.changed.send_replace(());
    }

    pub fn contains(&self, run_id: &str) -> bool {
        self.runs
            .lock()
            .expect("stopped runs lock")
            .iter()
            .any(|r| r == run_id)
    }
}

/// One task's view of [`StoppedRuns`]: fires when its run is cancelled.
pub struct RunStop {
    pub runs: Arc<StoppedRuns>,
    pub run_id: String,
}

#[async_trait::async_trait]
impl StopSignal for RunStop {
    async fn stopped(&self) {
        // Subscribed before looking, so a cancellation in between still wakes us.
        let mut changed = self.runs.changed.subscribe();
        while !self.runs.contains(&self.run_id) {
            if changed.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// Acts on run control messages until the stream ends: a cancelled run's
/// providers get `StopProvider` and its queued tasks are skipped; a finished
/// run's provider processes are released. One follower per provider source
/// (embedded workers share one).
pub async fn follow_control(
    mut control: ControlStream,
    providers: Arc<dyn ProviderSource>,
    stopped: Arc<StoppedRuns>,
) {
    while let Some(message) = control.next().await {
        match message {
            RunControl::Stop { run_id } => {
                tracing::info!(%run_id, "run cancelled");
                stopped.insert(&run_id);
                let providers = providers.clone();
                tokio::spawn(async move { providers.stop_run(&run_id).await });
            }
            RunControl::Finished { run_id } => providers.finish_run(&run_id).await,
        }
    }
}

/// Tasks this worker has taken, so that one delivered again is never run
/// twice here. JetStream delivers again what it has no ack for, and a
/// server that restarts may even lose the count of deliveries (the worker
/// then sees attempt 1 again): a task still running here waits for its
/// outcome instead, and one finished lately reports the same outcome again.
pub struct Taken {
    tasks: Mutex<TakenTasks>,
    /// Tasks remembered (running or finished); older ones are forgotten.
    keep: usize,
}

impl Default for Taken {
    fn default() -> Taken {
        Taken::keeping(Taken::KEEP)
    }
}

/// Each task's outcome to come, and the order they were taken in.
#[derive(Default)]
struct TakenTasks {
    outcomes: HashMap<String, watch::Receiver<Option<TaskOutcome>>>,
    order: VecDeque<String>,
    /// Tasks this process was asked about as the one they were sent to
    /// directly, before they arrived: refused should they still arrive
    /// (the coordinator may have sent them elsewhere). The last
    /// [`Taken::keep`], in order.
    refused: std::collections::HashSet<String>,
    refused_order: VecDeque<String>,
    /// Tasks taken up here that were sent directly, the last
    /// [`Taken::direct_keep`]; and whether older ones were forgotten, after
    /// which a task not among them may have been one: this process can then
    /// no longer say that a task never reached it.
    direct: std::collections::HashSet<String>,
    direct_order: VecDeque<String>,
    direct_forgot: bool,
}

/// A task sent directly that this process refused before it arrived.
#[derive(Debug, PartialEq, Eq)]
pub struct Refused;

/// What this process says of a task sent to it directly
/// ([`Taken::status_or_refuse`]).
#[derive(Debug, PartialEq)]
pub enum DirectStatus {
    /// It arrived: running (`None`) or finished.
    Taken(Option<TaskOutcome>),
    /// It did not arrive, and is refused from now on.
    Refused,
    /// This process cannot say: it forgot tasks it took directly long ago.
    Forgotten,
}

impl Taken {
    /// Tasks remembered by a worker of a fleet.
    const KEEP: usize = 10_000;

    /// Remembers the last `keep` tasks taken (at least one).
    pub fn keeping(keep: usize) -> Taken {
        Taken {
            tasks: Mutex::default(),
            keep: keep.max(1),
        }
    }

    /// The task's to run (the sender takes its outcome), or its outcome to
    /// come when it was taken already.
    fn claim(
        &self,
        task_id: &str,
    ) -> Result<watch::Sender<Option<TaskOutcome>>, watch::Receiver<Option<TaskOutcome>>> {
        let mut taken = self.tasks.lock().expect("taken lock");
        self.take_locked(&mut taken, task_id)
    }

    fn take_locked(
        &self,
        taken: &mut TakenTasks,
        task_id: &str,
    ) -> Result<watch::Sender<Option<TaskOutcome>>, watch::Receiver<Option<TaskOutcome>>> {
        if let Some(rx) = taken.outcomes.get(task_id) {
            return Err(rx.clone());
        }
        let (tx, rx) = watch::channel(None);
        taken.outcomes.insert(task_id.to_string(), rx);
        taken.order.push_back(task_id.to_string());
        if taken.order.len() > self.keep
            && let Some(old) = taken.order.pop_front()
        {
            taken.outcomes.remove(&old);
        }
        Ok(tx)
    }
}

impl Taken {
    /// [`Taken::claim`] for a task sent to this process directly: refused
    /// if this process was asked about it before (and answered that it
    /// never took it up, [`Taken::status_or_refuse`]). Decided under the
    /// same lock as that answer, so exactly one of them wins.
    #[allow(clippy::type_complexity)]
    pub fn take_direct(
        &self,
        task_id: &str,
    ) -> Result<
        Result<watch::Sender<Option<TaskOutcome>>, watch::Receiver<Option<TaskOutcome>>>,
        Refused,
    > {
        let mut taken = self.tasks.lock().expect("taken lock");
        if taken.refused.contains(task_id) {
            return Err(Refused);
        }
        if taken.direct.insert(task_id.to_string()) {
            taken.direct_order.push_back(task_id.to_string());
            if taken.direct_order.len() > self.direct_keep()
                && let Some(old) = taken.direct_order.pop_front()
            {
                taken.direct.remove(&old);
                taken.direct_forgot = true;
            }
        }
        Ok(self.take_locked(&mut taken, task_id))
    }

    /// Ids of tasks taken directly remembered: ten times the outcomes (an
    /// id is small), so that a process forgets one only after a long life.
    fn direct_keep(&self) -> usize {
        self.keep.saturating_mul(10)
    }

    /// What became of a task sent to this process directly, asked by the
    /// coordinator whose claim names this process: one that never arrived
    /// is refused from now on (see [`Taken::take_direct`]).
    pub fn status_or_refuse(&self, task_id: &str) -> DirectStatus {
        let mut taken = self.tasks.lock().expect("taken lock");
        if taken.refused.contains(task_id) {
            return DirectStatus::Refused;
        }
        if taken.direct.contains(task_id) {
            // Taken here directly: its outcome, unless forgotten.
            return match taken.outcomes.get(task_id) {
                Some(rx) => DirectStatus::Taken(rx.borrow().clone()),
                None => DirectStatus::Forgotten,
            };
        }
        if taken.direct_forgot {
            return DirectStatus::Forgotten;
        }
        taken.refused.insert(task_id.to_string());
        taken.refused_order.push_back(task_id.to_string());
        if taken.refused_order.len() > self.keep
            && let Some(old) = taken.refused_order.pop_front()
        {
            taken.refused.remove(&old);
        }
        DirectStatus::Refused
    }

    /// Forgets a task taken here (a delivery dropped as a duplicate).
    fn forget(&self, task_id: &str) {
        let mut taken = self.tasks.lock().expect("taken lock");
        if taken.outcomes.remove(task_id).is_some() {
            taken.order.retain(|t| t != task_id);
        }
    }

    /// What became of a task taken here: `None` when it was not (or is
    /// forgotten), `Some(None)` while it runs, its outcome once finished.
    pub fn status(&self, task_id: &str) -> Option<Option<TaskOutcome>> {
        let taken = self.tasks.lock().expect("taken lock");
        let rx = taken.outcomes.get(task_id)?;
        let outcome = rx.borrow().clone();
        Some(outcome)
    }
}

/// One task's progress, sent through the worker's result sink.
struct SinkProgress {
    sink: Arc<dyn ResultSink>,
    task_id: String,
    run_id: String,
}

impl Progress for SinkProgress {
    fn report(&self, step: u32, event: ProgressEvent) {
        self.sink.progress(TaskProgress {
            task_id: self.task_id.clone(),
            run_id: self.run_id.clone(),
            step,
            event,
        });
    }
}

/// Whether a task may run again after an earlier delivery went unanswered.
/// Planning, reading and importing change nothing; deleting an object that
/// is already gone succeeds. Creating or updating may have happened already,
/// and a second create would leave two objects.
pub fn safe_to_repeat(task: &Task) -> bool {
    match &task.kind {
        // Provisioners run commands, which may not be repeatable.
        TaskKind::Apply(a) if !a.provisioners.is_empty() => false,
        TaskKind::Provision(_) => false,
        TaskKind::Apply(a) => matches!(a.op, ApplyOp::Delete | ApplyOp::Read),
        // Functions are pure: calling one again gives the same answer.
        TaskKind::Schema { .. }
        | TaskKind::Plan(_)
        | TaskKind::Read(_)
        | TaskKind::Import(_)
        | TaskKind::Open(_)
        | TaskKind::Renew(_)
        | TaskKind::Close(_)
        | TaskKind::Function(_) => true,
    }
}

/// Whether a task that must not run twice is claimed while its provider
/// plans it again, rather than before anything starts: a create or update
/// without provisioners, whose calls before ApplyResourceChange change
/// nothing. A provisioner runs commands, so such a task is claimed first.
fn claimed_while_planning(task: &Task) -> bool {
    matches!(&task.kind, TaskKind::Apply(a) if a.provisioners.is_empty() && matches!(a.op, ApplyOp::Create | ApplyOp::Update))
}

/// Whether a task that must not run twice may start as far as the journal
/// is concerned: at once for a queue's delivery, once the coordinator's
/// write of its intent has ended for an in-process one. False when that
/// write never ended (the coordinator's writer is gone): the task is not
/// started, and reported as such.
async fn journaled(delivery: &crate::source::Delivery) -> bool {
    match &delivery.journaled {
        None => true,
        Some(j) => j.clone().wait_for(|done| *done).await.is_ok(),
    }
}

/// Opens once the task's claim says it is this worker's first.
#[derive(Default)]
struct ClaimGate(watch::Sender<Option<bool>>);

#[async_trait::async_trait]
impl ApplyGate for ClaimGate {
    async fn open(&self) -> bool {
        let mut rx = self.0.subscribe();
        // The sender lives in the gate: waiting ends when the claim is made.
        let first = rx.wait_for(Option::is_some).await.map(|v| *v == Some(true));
        first.unwrap_or(false)
    }
}

/// What a delivery of a task that must not run twice is, by its claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Again {
    /// Its first: run it.
    New,
    /// Taken up before (delivered again, or claimed already: the queue's
    /// delivery count may have been lost in a crash of the queue; the
    /// claim is not): not run as new.
    Before,
    /// A duplicate of a delivery another worker runs (or ran, and its
    /// result is delivered): dropped without a result, which could only
    /// say "interrupted" and might reach the run before the real one.
    Duplicate,
}

async fn again(task: &Task, attempt: u64, source: &dyn TaskSource, worker: &str) -> Again {
    match source.claim(task, worker).await {
        crate::source::Claim::First if attempt > 1 => Again::Before,
        crate::source::Claim::First => Again::New,
        crate::source::Claim::Taken => {
            tracing::warn!(task_id = %task.id, attempt, "task claimed before (by another worker, or before a crash): not run as new");
            Again::Before
        }
        crate::source::Claim::Duplicate => {
            tracing::warn!(task_id = %task.id, attempt, "task delivered again while another worker has it: this delivery is dropped without a result");
            Again::Duplicate
        }
        crate::source::Claim::Unknown(why) => {
            // Safety over progress: a claim nobody confirmed may be
            // someone else's already.
            tracing::warn!(task_id = %task.id, attempt, %why, "the task's claim was not confirmed: not run as new");
            Again::Before
        }
    }
}

/// A task delivered again after an unanswered delivery, which repeating
/// could do twice: its outcome, unless a lookup rule says the create never
/// happened (`None`: run it).
async fn resolve_again(
    task: &Task,
    attempt: u64,
    lookup: &crate::handler::lookup::LookupRules,
    providers: &dyn ProviderSource,
) -> Option<TaskOutcome> {
    use crate::handler::lookup::{Resolved, resolve};
    let interrupted = TaskOutcome::Interrupted { attempt };
    let (TaskKind::Apply(a), false) = (&task.kind, lookup.is_empty()) else {
        tracing::warn!(task_id = %task.id, run_id = %task.run_id, attempt, what = %describe(task), "task delivered again after an unanswered delivery: reported as interrupted, not repeated");
        return Some(interrupted);
    };
    let Some(rule) = lookup.for_create(a) else {
        tracing::warn!(task_id = %task.id, run_id = %task.run_id, attempt, what = %describe(task), "task delivered again after an unanswered delivery: reported as interrupted, not repeated");
        return Some(interrupted);
    };
    match resolve(providers, &task.provider, &task.run_id, a, rule).await {
        Resolved::Found(outcome) => {
            tracing::info!(task_id = %task.id, addr = %a.addr, attempt, "interrupted create resolved by lookup: the object exists, and is the result");
            Some(TaskOutcome::Apply(outcome))
        }
        Resolved::Absent => {
            tracing::info!(task_id = %task.id, addr = %a.addr, attempt, "interrupted create resolved by lookup: no object, so it is created now");
            None
        }
        Resolved::Unknown(why) => {
            tracing::warn!(task_id = %task.id, addr = %a.addr, attempt, %why, "interrupted create: the lookup could not tell whether it happened; reported as interrupted, not repeated");
            Some(interrupted)
        }
    }
}

/// A task in a few words, for logs (`apply Create sim_object.a[3]`).
fn describe(task: &Task) -> String {
    match &task.kind {
        TaskKind::Schema { .. } => format!("schema {}", task.provider.addr),
        TaskKind::Plan(p) => format!("plan {}", p.addr),
        TaskKind::Apply(a) => format!("apply {:?} {}", a.op, a.addr),
        TaskKind::Read(r) => format!("read {}", r.addr),
        TaskKind::Import(i) => format!("import {}", i.addr),
        TaskKind::Provision(p) => format!("provision {}", p.addr),
        TaskKind::Function(f) => format!("function {}::{}", task.provider.addr, f.name),
        TaskKind::Open(o) => format!("open {}", o.addr),
        TaskKind::Renew(r) => format!("renew {}", r.addr),
        TaskKind::Close(c) => format!("close {}", c.addr),
    }
}

pub struct Worker {
    pub id: String,
    /// Drawn at the start of this process: tasks sent to it directly name
    /// it, and its results carry it (see [`crate::source::Process`]).
    pub incarnation: String,
    pub concurrency: usize,
    /// How often a task in progress tells the queue it is still alive;
    /// well below the queue's ack wait.
    pub progress_every: Duration,
    pub providers: Arc<dyn ProviderSource>,
    /// How long a result is retried while it cannot be published.
    pub publish_retry_for: Duration,
    /// Tasks taken by this worker.
    pub taken: Arc<Taken>,
    /// Tasks finished by this worker (for logs and tests).
    pub completed: Arc<AtomicU64>,
    /// Tasks running now (for the heartbeat).
    pub in_flight: Arc<AtomicU64>,
    /// Shared with [`follow_control`].
    pub stopped: Arc<StoppedRuns>,
    /// How creates delivered again are resolved by looking the object up.
    pub lookup: Arc<crate::handler::lookup::LookupRules>,
    /// Per-provider limits and throttling (shared by the in-process
    /// workers of embedded mode).
    pub throttles: Arc<Throttles>,
}

/// Counts a running task while it lives.
struct InFlight(Arc<AtomicU64>);

impl InFlight {
    fn enter(count: &Arc<AtomicU64>) -> InFlight {
        count.fetch_add(1, Ordering::Relaxed);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Publishes a task's result, then acks the task. NATS out of reach: the
/// result is kept and published once it is back (the task is kept from
/// redelivery meanwhile), for as long as a publish is retried anywhere.
async fn publish(
    sink: &dyn ResultSink,
    result: &TaskResult,
    delivery: &crate::source::Delivery,
    retry_for: Duration,
) -> bool {
    let since = std::time::Instant::now();
    let mut backoff = Duration::from_millis(200);
    loop {
        match sink.publish(result).await {
            Ok(()) => {
                delivery.acker.ack().await;
                tracing::debug!(task_id = %result.task_id, "result published, task acknowledged");
                return true;
            }
            Err(e) if since.elapsed() < retry_for => {
                tracing::warn!(task_id = %result.task_id, error = %e, "publishing a result failed; retrying");
                crate::metrics::publish_retry();
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(5));
                delivery.acker.in_progress().await;
            }
            Err(e) => {
                tracing::error!(task_id = %result.task_id, error = %e, "publishing a result failed; the task will be redelivered");
                return false;
            }
        }
    }
}

impl Worker {
    pub fn new(
        id: impl Into<String>,
        concurrency: usize,
        providers: Arc<dyn ProviderSource>,
    ) -> Worker {
        Worker {
            id: id.into(),
            incarnation: format!("{:016x}", rand::random::<u64>()),
            concurrency: concurrency.max(1),
            progress_every: Duration::from_secs(10),
            publish_retry_for: fleetform_shared::wire::nats::RETRY_FOR,
            taken: Arc::default(),
            providers,
            completed: Arc::default(),
            in_flight: Arc::default(),
            stopped: Arc::default(),
            lookup: Arc::default(),
            throttles: Arc::new(Throttles::new(ProviderLimits::default(), concurrency)),
        }
    }

    /// Calls providers under `throttles` (their limits, and the state of
    /// providers that throttle) instead of a fresh set of its own.
    pub fn with_throttles(mut self, throttles: Arc<Throttles>) -> Worker {
        self.throttles = throttles;
        self
    }

    /// Remembers only the last `keep` tasks it took. For a source that
    /// never delivers a task twice (in-process workers): remembering
    /// 10,000 finished outcomes, each with its object, only held memory
    /// (27 MB of an embedded apply of 20,000 instances).
    pub fn remembering(mut self, keep: usize) -> Worker {
        self.taken = Arc::new(Taken::keeping(keep));
        self
    }

    /// Shares the set of cancelled runs with a [`follow_control`] (and with
    /// other workers of the same provider source).
    pub fn with_stopped(mut self, stopped: Arc<StoppedRuns>) -> Worker {
        self.stopped = stopped;
        self
    }

    /// Runs until the source closes or `shutdown` resolves; in-flight tasks
    /// finish first.
    pub async fn run(
        &self,
        source: Arc<dyn TaskSource>,
        sink: Arc<dyn ResultSink>,
        shutdown: impl Future<Output = ()>,
    ) {
        let slots = Arc::new(Semaphore::new(self.concurrency));
        tokio::pin!(shutdown);
        // Once stopping: only tasks already sent to this process directly
        // are taken, then the loop ends. Their claims name this process:
        // left untaken, they could only be reported interrupted.
        let mut stopping = false;
        loop {
            let permit = match stopping {
                true => slots.clone().acquire_owned().await.expect("semaphore open"),
                false => tokio::select! {
                    p = slots.clone().acquire_owned() => p.expect("semaphore open"),
                    _ = &mut shutdown => {
                        stopping = true;
                        source.close_direct().await;
                        continue;
                    }
                },
            };
            let delivery = match stopping {
                true => source.next_direct().await,
                false => tokio::select! {
                    d = source.next() => d,
                    _ = &mut shutdown => {
                        stopping = true;
                        source.close_direct().await;
                        continue;
                    }
                },
            };
            let Some(delivery) = delivery else { break };
            let providers = self.providers.clone();
            let claims = source.clone();
            let sink = sink.clone();
            let worker = self.id.clone();
            let incarnation = self.incarnation.clone();
            let completed = self.completed.clone();
            let stopped = self.stopped.clone();
            let progress_every = self.progress_every;
            let publish_retry_for = self.publish_retry_for;
            let taken = self.taken.clone();
            let lookup = self.lookup.clone();
            let throttles = self.throttles.clone();
            let in_flight = InFlight::enter(&self.in_flight);
            // Every log line of the task carries its run and task ids.
            let span = tracing::info_span!(
                "task",
                run_id = %delivery.task.run_id,
                task_id = %delivery.task.id
            );
            // Part of the run's trace, under the coordinator's dispatch.
            fleetform_telemetry::extract(delivery.headers.as_ref(), &span);
            tokio::spawn(tracing::Instrument::instrument(
                async move {
                    let _permit = permit;
                    let _in_flight = in_flight;
                    let task = &delivery.task;
                    // Sent directly: its claim was written for this process
                    // before it was sent, unless this process refused it.
                    let taking = match &delivery.direct {
                        None => taken.claim(&task.id),
                        Some(reply) => match taken.take_direct(&task.id) {
                            Ok(taking) => {
                                reply.answer(DirectAnswer::Accepted);
                                taking
                            }
                            Err(Refused) => {
                                tracing::warn!(task_id = %task.id, "task sent directly after this process said it never got it: refused, it runs elsewhere");
                                reply.answer(DirectAnswer::Refused);
                                delivery.acker.ack().await;
                                return;
                            }
                        },
                    };
                    let preclaimed = delivery.direct.is_some();
                    let claim = match taking {
                        Ok(claim) => claim,
                        Err(mut earlier) => {
                            tracing::info!(task_id = %task.id, attempt = delivery.attempt, "task delivered again while taken here: its outcome is reported again, nothing runs twice");
                            let done = async {
                                // Cloned out at once: the borrow may not be held.
                                earlier.wait_for(Option::is_some).await.map(|o| o.clone())
                            };
                            tokio::pin!(done);
                            let outcome = loop {
                                tokio::select! {
                                    o = &mut done => break o,
                                    _ = tokio::time::sleep(progress_every) => delivery.acker.in_progress().await,
                                }
                            };
                            let Ok(Some(outcome)) = outcome else {
                                // The earlier delivery ended without an
                                // outcome: it was dropped as a duplicate,
                                // since another worker has the task. So is
                                // this one: an "interrupted" result could
                                // reach the run before the real one.
                                tracing::warn!(task_id = %task.id, attempt = delivery.attempt, "task delivered again while taken here, and the earlier delivery was dropped as another worker's: this one is dropped too, without a result");
                                delivery.acker.ack().await;
                                return;
                            };
                            let result = TaskResult {
                                task_id: task.id.clone(),
                                run_id: task.run_id.clone(),
                                worker,
                                outcome,
                                incarnation,
                            };
                            publish(sink.as_ref(), &result, &delivery, publish_retry_for).await;
                            return;
                        }
                    };
                    if delivery.attempt > 1 {
                        crate::metrics::redelivered(task);
                    }
                    let started = std::time::Instant::now();
                    // Said when what the task does may now happen.
                    let started_here = || {
                        tracing::debug!(task_id = %task.id, run_id = %task.run_id, what = %describe(task), "task started");
                    };
                    // The provider calls of the task, applying once `gate` opens.
                    let run = async |gate: &dyn ApplyGate| -> TaskOutcome {
                        let stop = Arc::new(RunStop {
                            runs: stopped.clone(),
                            run_id: task.run_id.clone(),
                        });
                        let progress: Arc<dyn Progress> = Arc::new(SinkProgress {
                            sink: sink.clone(),
                            task_id: task.id.clone(),
                            run_id: task.run_id.clone(),
                        });
                        let throttled = ThrottledSource {
                            inner: providers.as_ref(),
                            throttles: throttles.clone(),
                            context: Arc::new(CallContext {
                                worker: worker.clone(),
                                progress: progress.clone(),
                                stop: stop.clone(),
                            }),
                        };
                        let work = tracing::Instrument::instrument(
                            handle_gated(&throttled, task, stop.as_ref(), &progress, gate),
                            tracing::info_span!(
                                "provider call",
                                provider = %task.provider.addr,
                                action = crate::metrics::action(task)
                            ),
                        );
                        tokio::pin!(work);
                        loop {
                            tokio::select! {
                                o = &mut work => break o,
                                _ = tokio::time::sleep(progress_every) => delivery.acker.in_progress().await,
                            }
                        }
                    };
                    // Acknowledged, not answered, and not remembered here:
                    // the claim's holder answers for the task.
                    let drop_duplicate = async || {
                        taken.forget(&task.id);
                        delivery.acker.ack().await;
                    };
                    // A close is the walk's clean-up: Terraform closes what
                    // it opened after an interruption too.
                    let cleanup = matches!(task.kind, TaskKind::Close(_));
                    let outcome = if stopped.contains(&task.run_id) && !cleanup {
                        tracing::debug!(task_id = %task.id, run_id = %task.run_id, "task of a cancelled run skipped");
                        TaskOutcome::Cancelled
                    } else if safe_to_repeat(task) {
                        started_here();
                        run(&Open).await
                    } else if claimed_while_planning(task) {
                        // The claim goes alongside the final plan; the
                        // apply waits for it (and for the journal, in
                        // process). Taken before: what the provider did so
                        // far changed nothing, and is dropped.
                        let gate = ClaimGate::default();
                        let claim = async {
                            if !journaled(&delivery).await {
                                gate.0.send_replace(Some(false));
                                return None;
                            }
                            let again = match preclaimed {
                                true => Again::New,
                                false => {
                                    again(task, delivery.attempt, claims.as_ref(), &worker).await
                                }
                            };
                            if again == Again::New {
                                started_here();
                            }
                            gate.0.send_replace(Some(again == Again::New));
                            Some(again)
                        };
                        let (again, first) = tokio::join!(claim, run(&gate));
                        match again {
                            // Never applied: the provider's plan is dropped.
                            None => TaskOutcome::Cancelled,
                            Some(Again::New) => first,
                            Some(Again::Duplicate) => {
                                drop_duplicate().await;
                                return;
                            }
                            Some(Again::Before) => match resolve_again(
                                task,
                                delivery.attempt,
                                &lookup,
                                providers.as_ref(),
                            )
                            .await
                            {
                                Some(outcome) => outcome,
                                None => {
                                    started_here();
                                    run(&Open).await
                                }
                            },
                        }
                    } else if !journaled(&delivery).await {
                        TaskOutcome::Cancelled
                    } else {
                        let again = match preclaimed {
                            true => Again::New,
                            false => again(task, delivery.attempt, claims.as_ref(), &worker).await,
                        };
                        let resolved = match again {
                            Again::New => None,
                            Again::Duplicate => {
                                drop_duplicate().await;
                                return;
                            }
                            Again::Before => {
                                resolve_again(task, delivery.attempt, &lookup, providers.as_ref())
                                    .await
                            }
                        };
                        match resolved {
                            Some(outcome) => outcome,
                            None => {
                                started_here();
                                run(&Open).await
                            }
                        }
                    };
                    crate::metrics::operation(task, &outcome, started.elapsed());
                    claim.send_replace(Some(outcome.clone()));
                    let result = TaskResult {
                        task_id: task.id.clone(),
                        run_id: task.run_id.clone(),
                        worker,
                        outcome,
                        incarnation,
                    };
                    if publish(sink.as_ref(), &result, &delivery, publish_retry_for).await {
                        completed.fetch_add(1, Ordering::Relaxed);
                    }
                },
                span,
            ));
        }
        // Wait for in-flight tasks.
        let _ = slots.acquire_many(self.concurrency as u32).await;
    }
}

#[cfg(test)]
#[path = "runtime_tests.rs"]
mod claim_tests;
