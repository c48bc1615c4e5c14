//! The worker loop: take tasks up to the concurrency limit, run each, publish
//! the result, then ack (so a crash before publishing means redelivery, not
//! a lost result).

use crate::handler::{ProviderSource, handle};
use crate::source::{ResultSink, TaskSource};
use fleetform_shared::wire::TaskResult;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;

pub struct Worker {
    pub id: String,
    pub concurrency: usize,
    pub providers: Arc<dyn ProviderSource>,
    /// Tasks finished by this worker (for logs and tests).
    pub completed: Arc<AtomicU64>,
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
        }
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
            tokio::spawn(async move {
                let _permit = permit;
                let task = &delivery.task;
                tracing::debug!(task_id = %task.id, run_id = %task.run_id, "task started");
                let work = handle(providers.as_ref(), task);
                tokio::pin!(work);
                let outcome = loop {
                    tokio::select! {
                        o = &mut work => break o,
                        _ = tokio::time::sleep(Duration::from_secs(10)) => delivery.acker.in_progress().await,
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
