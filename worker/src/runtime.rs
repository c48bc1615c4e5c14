//! The worker loop: take tasks up to the concurrency limit, run each, publish
//! the result, then ack (so a crash before publishing means redelivery, not
//! a lost result). Beside it, [`follow_control`] acts on the coordinator's
//! run control messages (cancel, finished).

use crate::handler::{ProviderSource, handle};
use crate::source::{ControlStream, ResultSink, TaskSource};
use fleetform_shared::wire::{RunControl, TaskOutcome, TaskResult};
use futures::StreamExt;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// Runs cancelled lately. Their tasks still queued are answered
/// [`TaskOutcome::Cancelled`] without calling a provider. Bounded: a run's
/// tasks are dispatched only while the run goes, so old entries are useless.
#[derive(Default)]
pub struct StoppedRuns {
    runs: Mutex<VecDeque<String>>,
}

impl StoppedRuns {
    const KEEP: usize = 1024;

    pub fn insert(&self, run_id: &str) {
        let mut runs = self.runs.lock().expect("stopped runs lock");
        if !runs.iter().any(|r| r == run_id) {
            if runs.len() == Self::KEEP {
                runs.pop_front();
            }
            runs.push_back(run_id.to_string());
        }
    }

    pub fn contains(&self, run_id: &str) -> bool {
        self.runs
            .lock()
            .expect("stopped runs lock")
            .iter()
            .any(|r| r == run_id)
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

pub struct Worker {
    pub id: String,
    pub concurrency: usize,
    pub providers: Arc<dyn ProviderSource>,
    /// Tasks finished by this worker (for logs and tests).
    pub completed: Arc<AtomicU64>,
    /// Shared with [`follow_control`].
    pub stopped: Arc<StoppedRuns>,
}

impl Worker {
    pub fn new(
        id: impl Into<String>,
        concurrency: usize,
        providers: Arc<dyn ProviderSource>,
    ) -> Worker {
        Worker {
            id: id.into(),
            concurrency: concurrency.max(1),
            providers,
            completed: Arc::default(),
            stopped: Arc::default(),
        }
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
        loop {
            let permit = tokio::select! {
                p = slots.clone().acquire_owned() => p.expect("semaphore open"),
                _ = &mut shutdown => break,
            };
            let delivery = tokio::select! {
                d = source.next() => d,
                _ = &mut shutdown => break,
            };
            let Some(delivery) = delivery else { break };
            let providers = self.providers.clone();
            let sink = sink.clone();
            let worker = self.id.clone();
            let completed = self.completed.clone();
            let stopped = self.stopped.clone();
            tokio::spawn(async move {
                let _permit = permit;
                let task = &delivery.task;
                let outcome = if stopped.contains(&task.run_id) {
                    tracing::debug!(task_id = %task.id, run_id = %task.run_id, "task of a cancelled run skipped");
                    TaskOutcome::Cancelled
                } else {
                    tracing::debug!(task_id = %task.id, run_id = %task.run_id, "task started");
                    let work = handle(providers.as_ref(), task);
                    tokio::pin!(work);
                    loop {
                        tokio::select! {
                            o = &mut work => break o,
                            _ = tokio::time::sleep(Duration::from_secs(10)) => delivery.acker.in_progress().await,
                        }
                    }
                };
                let result = TaskResult {
                    task_id: task.id.clone(),
                    run_id: task.run_id.clone(),
                    worker,
                    outcome,
                };
                match sink.publish(&result).await {
                    Ok(()) => {
                        delivery.acker.ack().await;
                        completed.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        tracing::error!(task_id = %task.id, error = %e, "publishing a result failed; the task will be redelivered")
                    }
                }
            });
        }
        // Wait for in-flight tasks.
        let _ = slots.acquire_many(self.concurrency as u32).await;
    }
}
