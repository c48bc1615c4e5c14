//! Dispatch: handing tasks to workers and routing their results back to the
//! run that waits for them. The queue is a trait with a JetStream
//! implementation (distributed) and an in-process one (embedded mode); the
//! routing is shared.

mod local;
mod nats;

pub use local::{LocalQueue, WorkerEnds};
pub use nats::NatsQueue;

use async_trait::async_trait;
use fleetform_shared::wire::{ProgressEvent, RunControl, Task, TaskProgress, TaskResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

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
    /// Tells every live worker of the pool about a run (best effort: a
    /// worker that is not there has nothing of the run to stop).
    async fn control(&self, message: &RunControl) -> Result<(), DispatchError>;
}

/// Shown a task's live progress ([`TaskProgress`]) until its result arrives.
pub trait ProgressWatcher: Send + Sync {
    fn progress(&self, step: u32, event: ProgressEvent);
}

/// Routes results to whoever waits for the task. A result for a task nobody
/// waits for (a duplicate, or one from before a restart) is dropped; so is
/// progress of a task nobody watches, or whose result is already in.
#[derive(Default)]
pub struct ResultRouter {
    waiting: Mutex<HashMap<String, oneshot::Sender<TaskResult>>>,
    watchers: Mutex<HashMap<String, Arc<dyn ProgressWatcher>>>,
}

impl ResultRouter {
    pub fn new() -> Arc<ResultRouter> {
        Arc::new(ResultRouter::default())
    }

    pub(crate) fn expect(&self, task_id: &str) -> oneshot::Receiver<TaskResult> {
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .expect("router lock")
            .insert(task_id.to_string(), tx);
        rx
    }

    /// Hands a result to its waiter; returns false when nobody waited.
    pub fn deliver(&self, result: TaskResult) -> bool {
        self.watchers
            .lock()
            .expect("router lock")
            .remove(&result.task_id);
        let waiter = self
            .waiting
            .lock()
            .expect("router lock")
            .remove(&result.task_id);
        match waiter {
            Some(tx) => tx.send(result).is_ok(),
            None => {
                tracing::debug!(task_id = %result.task_id, "result for a task nobody waits for");
                false
            }
        }
    }

    /// Hands live progress to the task's watcher, if it has one still.
    pub fn progress(&self, progress: TaskProgress) {
        let watcher = self
            .watchers
            .lock()
            .expect("router lock")
            .get(&progress.task_id)
            .cloned();
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

/// What runs use: publish a batch, get one receiver per task.
#[derive(Clone)]
pub struct Dispatcher {
    queue: Arc<dyn TaskQueue>,
    router: Arc<ResultRouter>,
}

impl Dispatcher {
    pub fn new(queue: Arc<dyn TaskQueue>, router: Arc<ResultRouter>) -> Dispatcher {
        Dispatcher { queue, router }
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

    pub async fn dispatch(
        &self,
        tasks: Vec<Task>,
    ) -> Result<Vec<oneshot::Receiver<TaskResult>>, DispatchError> {
        let receivers: Vec<_> = tasks.iter().map(|t| self.router.expect(&t.id)).collect();
        if let Err(e) = self.queue.publish(&tasks).await {
            for t in &tasks {
                self.router.forget(&t.id);
            }
            return Err(e);
        }
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
