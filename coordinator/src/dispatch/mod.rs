//! Dispatch: handing tasks to workers and routing their results back to the
//! run that waits for them. The queue is a trait with a JetStream
//! implementation (distributed) and an in-process one (embedded mode); the
//! routing is shared.

mod local;
mod nats;
mod settle;

pub use local::{LocalQueue, LocalTask, WorkerEnds};
pub use nats::NatsQueue;
pub use settle::{CLAIMS_KEPT, SETTLE_EVERY, spawn_settler};

use async_trait::async_trait;
use fleetform_shared::wire::{
    ProgressEvent, RunControl, Task, TaskProgress, TaskResult, TaskStatus, WorkerInfo,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, watch};

#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error("nats: {0}")]
    Nats(String),
    #[error("task queue closed")]
    Closed,
    #[error("encoding task: {0}")]
    Encode(#[from] rmp_serde::encode::Error),
}

/// Where tasks go. Implementations deliver results to the [`ResultRouter`]
/// they were built with.
#[async_trait]
pub trait TaskQueue: Send + Sync {
    /// Publishes tasks, pipelined: returns when all are durably queued.
    async fn publish(&self, tasks: &[Task]) -> Result<(), DispatchError>;
    /// Publishes tasks whose intents the run is writing to its journal
    /// meanwhile: `journaled` turns true once that write has ended. A queue
    /// that keeps its tasks durably (JetStream) does not need it: a
    /// restarted coordinator finds what such tasks did in the queue's
    /// results. The in-process queue hands it to its workers, which start
    /// nothing that must not run twice before it: a crash of the process
    /// leaves nothing but the journal to say what was under way.
    async fn publish_journaled(
        &self,
        tasks: &[Task],
        journaled: &watch::Receiver<bool>,
    ) -> Result<(), DispatchError> {
        let _ = journaled;
        self.publish(tasks).await
    }
    /// Whether queued tasks and their results outlive this process (a
    /// JetStream queue), so that a restarted coordinator may hear of them.
    /// The in-process queue's do not: a restart finds every journaled
    /// intent in doubt, and marks of what reached the queue
    /// ([`crate::store::Journal::published`]) would go unread.
    fn outlives_process(&self) -> bool {
        true
    }
    /// Tells every live worker of the pool about a run (best effort: a
    /// worker that is not there has nothing of the run to stop).
    async fn control(&self, message: &RunControl) -> Result<(), DispatchError>;
    /// Every result of `run_id` the queue still keeps, acknowledged or not:
    /// what a coordinator taking over a run from another host reads.
    async fn replay_results(&self, _run_id: &str) -> Result<Vec<TaskResult>, DispatchError> {
        Ok(Vec::new())
    }
    /// The workers that sent a heartbeat lately, every pool; None where
    /// workers do not send any (in-process workers).
    async fn workers(&self) -> Result<Option<Vec<WorkerInfo>>, DispatchError> {
        Ok(None)
    }
    /// Publishes a task again whose result is overdue (the queue may have
    /// lost it), as a new message: the queue's duplicate check by task id
    /// would drop it otherwise. `round` counts the task's republications.
    async fn republish(&self, task: &Task, round: u32) -> Result<(), DispatchError> {
        let _ = round;
        self.publish(std::slice::from_ref(task)).await
    }
    /// Asks `worker` what became of a task; [`TaskStatus::Unknown`] when
    /// it does not answer. `incarnation`, when not empty: of the task sent
    /// directly to that process of the worker ([`TaskQueue::send_direct`]),
    /// which refuses it from then on if it never got it.
    async fn ask_worker(&self, worker: &str, task: &Task, incarnation: &str) -> TaskStatus {
        let _ = (worker, task, incarnation);
        TaskStatus::Unknown
    }
    /// Whether [`TaskQueue::send_direct`] may send anything.
    fn sends_direct(&self) -> bool {
        false
    }
    /// Sends a task that must not run twice to one worker process directly
    /// (`incarnation` of `worker`, the process that ran what the task
    /// waited for), its claim written for that process first, so that the
    /// worker runs it without asking for a claim: a link of a chain then
    /// costs a write to the object store and two hops through NATS, not
    /// five. Returns whether it was sent; a task not sent is published as
    /// usual. One that provably never reaches the process (nobody listens
    /// on its subject, or the process refuses it) has its claim released
    /// and is published to the queue; one whose fate is unknown is settled
    /// once overdue by asking the process, which answers for that delivery.
    async fn send_direct(&self, task: &Task, worker: &str, incarnation: &str) -> bool {
        let _ = (task, worker, incarnation);
        false
    }
    /// Answers `run_id`'s task claims here until the guard is dropped
    /// (`store/claims.rs`); `fence` says whether the run's lease may still
    /// be acted on. None where workers claim nothing from a coordinator
    /// (the in-process queue).
    fn own_claims(
        &self,
        run_id: &str,
        fence: crate::store::Fence,
    ) -> Option<crate::store::ClaimGuard> {
        let _ = (run_id, fence);
        None
    }
    /// Tasks of the pool not yet delivered to any worker; None when the
    /// queue cannot tell. An overdue task nobody claimed may be among
    /// them, so it is published again only when there are none.
    async fn undelivered(&self) -> Option<u64> {
        None
    }
}

/// Acknowledges a delivered result to its queue, which then never delivers
/// it again.
pub trait ResultAck: Send {
    fn ack(self: Box<Self>) -> futures::future::BoxFuture<'static, ()>;
}

fn ack_later(ack: Box<dyn ResultAck>) {
    tokio::spawn(ack.ack());
}

/// Shown a task's live progress ([`TaskProgress`]) until its result arrives.
pub trait ProgressWatcher: Send + Sync {
    fn progress(&self, step: u32, event: ProgressEvent);
}

/// Routes results to whoever waits for the task. A result for a task nobody
/// waits for (a duplicate, or one from before a restart) is dropped; so is
/// progress of a task nobody watches, or whose result is already in.
/// Progress about the run rather than the task (a provider that throttles)
/// goes to the run's watcher, while the run goes.
///
/// A result of a journaled task (an apply operation) is acknowledged to the
/// queue only once the run has journaled it ([`Dispatcher::acknowledge`]):
/// a coordinator that dies in between gets it again after its restart.
/// Every other result is acknowledged on delivery.
#[derive(Default)]
pub struct ResultRouter {
    waiting: Mutex<HashMap<String, Waiter>>,
    watchers: Mutex<HashMap<String, Arc<dyn ProgressWatcher>>>,
    /// By run id, until the run ends ([`ResultRouter::release`]).
    run_watchers: Mutex<HashMap<String, Arc<dyn ProgressWatcher>>>,
    /// Results delivered but not journaled yet, by task id.
    unjournaled: Mutex<HashMap<String, Box<dyn ResultAck>>>,
    /// Runs taken over from another coordinator ([`ResultRouter::hold`]).
    held_runs: Mutex<std::collections::HashSet<String>>,
    /// Their results that came before anyone waited for them, by task id.
    held: Mutex<HashMap<String, TaskResult>>,
    /// Runs ended, and when, whose claims are to be deleted in time (only
    /// where a settler runs: see [`settle`]).
    ended: settle::EndedRuns,
}

struct Waiter {
    tx: oneshot::Sender<TaskResult>,
    journaled: bool,
    /// The task once it is in the queue, for [`settle`] to publish again.
    sent: Option<settle::Sent>,
}

impl ResultRouter {
    pub fn new() -> Arc<ResultRouter> {
        Arc::new(ResultRouter::default())
    }

    /// Waits for a task's result; with `journaled`, the result is
    /// acknowledged only when the waiter says it is journaled.
    pub(crate) fn expect(&self, task_id: &str, journaled: bool) -> oneshot::Receiver<TaskResult> {
        let (tx, rx) = oneshot::channel();
        if let Some(result) = self.held.lock().expect("router lock").remove(task_id) {
            let _ = tx.send(result);
            return rx;
        }
        self.waiting.lock().expect("router lock").insert(
            task_id.to_string(),
            Waiter {
                tx,
                journaled,
                sent: None,
            },
        );
        rx
    }

    /// Hands a result to its waiter; returns false when nobody waited. `ack`
    /// acknowledges it to its queue (none for the in-process queue).
    pub fn deliver(&self, result: TaskResult, ack: Option<Box<dyn ResultAck>>) -> bool {
        self.watchers
            .lock()
            .expect("router lock")
            .remove(&result.task_id);
        let waiter = self
            .waiting
            .lock()
            .expect("router lock")
            .remove(&result.task_id);
        let Some(waiter) = waiter else {
            if self
                .held_runs
                .lock()
                .expect("router lock")
                .contains(&result.run_id)
            {
                // Kept for the waiter to come; the queue keeps it too, so
                // acknowledging loses nothing.
                if let Some(ack) = ack {
                    ack_later(ack);
                }
                self.held
                    .lock()
                    .expect("router lock")
                    .entry(result.task_id.clone())
                    .or_insert(result);
                return false;
            }
            let mut unjournaled = self.unjournaled.lock().expect("router lock");
            match (unjournaled.get_mut(&result.task_id), ack) {
                // Delivered again before it was journaled: either ack
                // acknowledges the one message, once it is journaled.
                (Some(pending), Some(ack)) => *pending = ack,
                (None, Some(ack)) => {
                    tracing::debug!(task_id = %result.task_id, "result for a task nobody waits for");
                    ack_later(ack);
                }
                (_, None) => {}
            }
            return false;
        };
        crate::metrics::answered();
        if let Some(ack) = ack {
            if waiter.journaled {
                self.unjournaled
                    .lock()
                    .expect("router lock")
                    .insert(result.task_id.clone(), ack);
            } else {
                ack_later(ack);
            }
        }
        waiter.tx.send(result).is_ok()
    }

    /// The results of `task_ids` are journaled: acknowledge them.
    pub fn acknowledge<'a>(&self, task_ids: impl IntoIterator<Item = &'a String>) {
        let mut unjournaled = self.unjournaled.lock().expect("router lock");
        for id in task_ids {
            if let Some(ack) = unjournaled.remove(id) {
                ack_later(ack);
            }
        }
    }

    /// From now on, results of `run_id` that nobody waits for yet are kept
    /// until someone does: the run is being taken over from another
    /// coordinator, and its operations' results may come before the resumed
    /// run asks for them.
    pub fn hold(&self, run_id: &str) {
        self.held_runs
            .lock()
            .expect("router lock")
            .insert(run_id.to_string());
    }

    /// The run ended: its results are no longer kept for waiters to come
    /// (those nobody claimed, such as its planning results, are dropped),
    /// and its watcher hears no more.
    pub fn release(&self, run_id: &str) {
        self.ended.push(run_id);
        self.run_watchers
            .lock()
            .expect("router lock")
            .remove(run_id);
        if self.held_runs.lock().expect("router lock").remove(run_id) {
            self.held
                .lock()
                .expect("router lock")
                .retain(|_, r| r.run_id != run_id);
        }
        // The maps grew to the run's widest moment; as they empty, their
        // tables stayed that size (168 KB of the heap after a run of 1,000).
        shrink(&self.waiting);
        shrink(&self.watchers);
        shrink(&self.run_watchers);
        shrink(&self.unjournaled);
        shrink(&self.held);
    }

    /// Hands live progress to the task's watcher, if it has one still.
    pub fn progress(&self, progress: TaskProgress) {
        if !matches!(progress.event, ProgressEvent::Throttled(_)) {
            // A task that reports progress is not lost.
            self.heard_of(&progress.task_id);
        }
        let watcher = match progress.event {
            ProgressEvent::Throttled(_) => self
                .run_watchers
                .lock()
                .expect("router lock")
                .get(&progress.run_id)
                .cloned(),
            _ => self
                .watchers
                .lock()
                .expect("router lock")
                .get(&progress.task_id)
                .cloned(),
        };
        // Called outside the lock: a watcher may take its own.
        if let Some(w) = watcher {
            w.progress(progress.step, progress.event);
        }
    }

    fn forget(&self, task_id: &str) {
        self.waiting.lock().expect("router lock").remove(task_id);
        self.watchers.lock().expect("router lock").remove(task_id);
    }
}

/// A worker process a task may be sent to directly: the one that ran what
/// the task waited for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Near {
    pub worker: String,
    pub incarnation: String,
}

/// What a run hears while its tasks cannot be dispatched.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// The queue is out of reach (why); retrying.
    Waiting(String),
    /// It is back: the tasks are dispatched.
    Back,
}

/// What runs use: publish a batch, get one receiver per task.
#[derive(Clone)]
pub struct Dispatcher {
    queue: Arc<dyn TaskQueue>,
    router: Arc<ResultRouter>,
    retry_for: std::time::Duration,
    first_backoff: std::time::Duration,
}

impl Dispatcher {
    /// See [`TaskQueue::outlives_process`].
    pub fn outlives_process(&self) -> bool {
        self.queue.outlives_process()
    }

    /// See [`TaskQueue::workers`].
    pub async fn workers(&self) -> Result<Option<Vec<WorkerInfo>>, DispatchError> {
        self.queue.workers().await
    }

    pub fn new(queue: Arc<dyn TaskQueue>, router: Arc<ResultRouter>) -> Dispatcher {
        Dispatcher {
            queue,
            router,
            retry_for: fleetform_shared::wire::nats::RETRY_FOR,
            first_backoff: std::time::Duration::from_millis(200),
        }
    }

    /// With shorter retries (tests).
    #[cfg(test)]
    fn retrying(mut self, retry_for: std::time::Duration) -> Dispatcher {
        self.retry_for = retry_for;
        self.first_backoff = std::time::Duration::from_millis(5);
        self
    }

    /// Shows `task_id`'s live progress to `watcher` until its result
    /// arrives; call before dispatching the task.
    pub fn watch(&self, task_id: &str, watcher: Arc<dyn ProgressWatcher>) {
        self.router
            .watchers
            .lock()
            .expect("router lock")
            .insert(task_id.to_string(), watcher);
    }

    /// Shows `run_id`'s progress that is about the run rather than one
    /// task to `watcher`, until [`Dispatcher::release`].
    pub fn watch_run(&self, run_id: &str, watcher: Arc<dyn ProgressWatcher>) {
        self.router
            .run_watchers
            .lock()
            .expect("router lock")
            .insert(run_id.to_string(), watcher);
    }

    pub async fn dispatch(
        &self,
        tasks: Vec<Task>,
    ) -> Result<Vec<oneshot::Receiver<TaskResult>>, DispatchError> {
        self.dispatch_with(tasks, &[], None, &|_| {}).await
    }

    /// Whether tasks may be sent to worker processes directly
    /// ([`TaskQueue::send_direct`]).
    pub fn sends_direct(&self) -> bool {
        self.queue.sends_direct()
    }

    /// [`Dispatcher::dispatch`] for tasks whose results the run journals:
    /// each is acknowledged to the queue only at [`Dispatcher::acknowledge`].
    /// Their intents are being journaled meanwhile; `journaled` turns true
    /// when that write has ended ([`TaskQueue::publish_journaled`]).
    /// `notice` hears when the queue is out of reach and when it is back.
    /// `near[i]`, when given: the worker process (`(worker, incarnation)`)
    /// to send `tasks[i]` to directly ([`TaskQueue::send_direct`]).
    pub async fn dispatch_journaled(
        &self,
        tasks: Vec<Task>,
        near: &[Option<Near>],
        journaled: &watch::Receiver<bool>,
        notice: &(dyn Fn(Notice) + Sync),
    ) -> Result<Vec<oneshot::Receiver<TaskResult>>, DispatchError> {
        self.dispatch_with(tasks, near, Some(journaled), notice)
            .await
    }

    /// The results of `task_ids` are journaled.
    pub fn acknowledge<'a>(&self, task_ids: impl IntoIterator<Item = &'a String>) {
        self.router.acknowledge(task_ids);
    }

    /// Takes over `run_id`'s results from the queue: every one it keeps,
    /// and from now on those that come before the run waits for them
    /// ([`ResultRouter::hold`]). Returns the ones it kept.
    pub async fn take_over(&self, run_id: &str) -> Result<Vec<TaskResult>, DispatchError> {
        self.router.hold(run_id);
        self.queue.replay_results(run_id).await
    }

    /// Tasks published before a restart whose results are awaited again
    /// (rebuilt by the resumed run, with their ids): from now on they are
    /// settled like tasks published here, should the queue have lost them
    /// or their results.
    pub fn awaiting(&self, tasks: Vec<Task>) {
        self.router.published(tasks);
    }

    /// See [`TaskQueue::own_claims`].
    pub fn own_claims(
        &self,
        run_id: &str,
        fence: crate::store::Fence,
    ) -> Option<crate::store::ClaimGuard> {
        self.queue.own_claims(run_id, fence)
    }

    /// The run ended: see [`ResultRouter::release`].
    pub fn release(&self, run_id: &str) {
        self.router.release(run_id);
    }

    /// Publishes, retrying with backoff while the queue is out of reach
    /// (for `wire::nats::RETRY_FOR`): the run pauses rather than fails.
    /// Tasks published before a failure are published again, which the
    /// queue drops as duplicates by their ids.
    async fn dispatch_with(
        &self,
        tasks: Vec<Task>,
        near: &[Option<Near>],
        journaled: Option<&watch::Receiver<bool>>,
        notice: &(dyn Fn(Notice) + Sync),
    ) -> Result<Vec<oneshot::Receiver<TaskResult>>, DispatchError> {
        let receivers: Vec<_> = tasks
            .iter()
            .map(|t| self.router.expect(&t.id, journaled.is_some()))
            .collect();
        // Sent directly where asked for and possible; the rest are queued.
        let mut sent = vec![false; tasks.len()];
        if near.iter().any(Option::is_some) && self.queue.sends_direct() {
            let tries = tasks.iter().zip(near).map(|(t, n)| async move {
                match n {
                    Some(n) => self.queue.send_direct(t, &n.worker, &n.incarnation).await,
                    None => false,
                }
            });
            sent = futures::future::join_all(tries).await;
            crate::metrics::dispatched(sent.iter().filter(|s| **s).count());
        }
        let queued: Vec<Task> = match sent.iter().any(|s| *s) {
            false => Vec::new(),
            true => tasks
                .iter()
                .zip(&sent)
                .filter(|(_, s)| !**s)
                .map(|(t, _)| t.clone())
                .collect(),
        };
        let queued: &[Task] = match sent.iter().any(|s| *s) {
            false => &tasks,
            true => &queued,
        };
        let since = std::time::Instant::now();
        let mut backoff = self.first_backoff;
        let mut waiting = false;
        while !queued.is_empty() {
            let published = match journaled {
                Some(j) => self.queue.publish_journaled(queued, j).await,
                None => self.queue.publish(queued).await,
            };
            match published {
                Ok(()) => {
                    crate::metrics::dispatched(queued.len());
                    break;
                }
                Err(DispatchError::Nats(e)) if since.elapsed() < self.retry_for => {
                    crate::metrics::dispatch_retry();
                    if !waiting {
                        tracing::warn!(error = %e, tasks = tasks.len(), "the task queue is out of reach; retrying");
                        notice(Notice::Waiting(e));
                        waiting = true;
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
                }
                Err(e) if queued.len() == tasks.len() => {
                    for t in &tasks {
                        self.router.forget(&t.id);
                    }
                    return Err(e);
                }
                Err(e) => {
                    // Some went to their workers directly and run: they are
                    // still awaited. Those never queued end unanswered (the
                    // run reports them lost).
                    tracing::error!(error = %e, tasks = queued.len(), "publishing tasks failed; those sent to their workers directly are still awaited");
                    for t in queued {
                        self.router.forget(&t.id);
                    }
                    let sent: Vec<Task> = tasks
                        .into_iter()
                        .zip(&sent)
                        .filter(|(_, s)| **s)
                        .map(|(t, _)| t)
                        .collect();
                    self.router.published(sent);
                    return Ok(receivers);
                }
            }
        }
        if waiting {
            tracing::info!("the task queue is back");
            notice(Notice::Back);
        }
        // Kept (moved, not copied) until their results come, to be
        // published again should the queue lose them.
        self.router.published(tasks);
        Ok(receivers)
    }

    /// Sends a [`RunControl`] to the workers; failures are logged, since the
    /// run goes on either way.
    pub async fn control(&self, message: RunControl) {
        if let Err(e) = self.queue.control(&message).await {
            tracing::warn!(?message, error = %e, "telling workers about a run failed");
        }
    }
}

#[cfg(test)]
mod tests;

/// Shrinks `map`'s table to what it holds.
fn shrink<V>(map: &Mutex<HashMap<String, V>>) {
    let mut map = map.lock().expect("router lock");
    let len = map.len();
    map.shrink_to(len);
}
