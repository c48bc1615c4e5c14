//! The in-process source and sink of embedded mode.

use super::{Acker, ControlStream, Delivery, ResultSink, TaskSource};
use async_trait::async_trait;
use fleetform_shared::wire::{RunControl, Task, TaskProgress, TaskResult};
use std::sync::Arc;
use tokio::sync::{Mutex, broadcast, mpsc, watch};

/// Run control messages from the in-process coordinator. A receiver that
/// fell behind skips what it missed: messages are only ever hints to stop
/// sooner or to free processes sooner.
pub fn local_control(rx: broadcast::Receiver<RunControl>) -> ControlStream {
    Box::pin(futures::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(m) => return Some((m, rx)),
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "run control messages skipped")
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }))
}

/// Shared by every in-process worker: competing consumers of one channel.
#[derive(Clone)]
pub struct LocalSource {
    rx: Arc<Mutex<mpsc::UnboundedReceiver<LocalTask>>>,
}

/// A task from the in-process coordinator, with the signal that its intent
/// is journaled (see [`Delivery::journaled`]).
pub type LocalTask = (Task, Option<watch::Receiver<bool>>);

impl LocalSource {
    pub fn new(rx: mpsc::UnboundedReceiver<LocalTask>) -> LocalSource {
        LocalSource {
            rx: Arc::new(Mutex::new(rx)),
        }
    }
}

struct NoAck;

#[async_trait]
impl Acker for NoAck {
    async fn ack(&self) {}
    async fn in_progress(&self) {}
}

#[async_trait]
impl TaskSource for LocalSource {
    async fn next(&self) -> Option<Delivery> {
        let (task, journaled) = self.rx.lock().await.recv().await?;
        // In-process delivery happens once: there is no redelivery.
        Some(Delivery {
            task,
            attempt: 1,
            acker: Box::new(NoAck),
            headers: None,
            journaled,
            direct: None,
        })
    }
}

#[derive(Clone)]
pub struct LocalSink {
    tx: mpsc::UnboundedSender<TaskResult>,
    progress: mpsc::UnboundedSender<TaskProgress>,
}

impl LocalSink {
    pub fn new(
        tx: mpsc::UnboundedSender<TaskResult>,
        progress: mpsc::UnboundedSender<TaskProgress>,
    ) -> LocalSink {
        LocalSink { tx, progress }
    }
}

#[async_trait]
impl ResultSink for LocalSink {
    async fn publish(&self, result: &TaskResult) -> Result<(), String> {
        self.tx
            .send(result.clone())
            .map_err(|_| "coordinator gone".to_string())
    }

    fn progress(&self, progress: TaskProgress) {
        let _ = self.progress.send(progress);
    }
}
