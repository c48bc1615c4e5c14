//! The in-process queue of embedded mode: tasks go to in-process workers
//! over a channel, results come back over another.

use super::{DispatchError, ResultRouter, TaskQueue};
use async_trait::async_trait;
use fleetform_shared::wire::{RunControl, Task, TaskProgress, TaskResult};
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc, watch};

/// A task as the in-process workers get it: with, for a task whose intent
/// the run journals, the signal that the journal write has ended (see
/// [`TaskQueue::publish_journaled`]).
pub type LocalTask = (Task, Option<watch::Receiver<bool>>);

pub struct LocalQueue {
    tasks: mpsc::UnboundedSender<LocalTask>,
    control: broadcast::Sender<RunControl>,
}

/// The in-process workers' ends of a [`LocalQueue`].
pub struct WorkerEnds {
    pub tasks: mpsc::UnboundedReceiver<LocalTask>,
    pub results: mpsc::UnboundedSender<TaskResult>,
    pub progress: mpsc::UnboundedSender<TaskProgress>,
}

impl LocalQueue {
    /// Returns the queue and the ends workers take tasks from and report on.
    pub fn new(router: Arc<ResultRouter>) -> (LocalQueue, WorkerEnds) {
        let (task_tx, task_rx) = mpsc::unbounded_channel();
        let (result_tx, mut result_rx) = mpsc::unbounded_channel::<TaskResult>();
        let (progress_tx, mut progress_rx) = mpsc::unbounded_channel::<TaskProgress>();
        let results = router.clone();
        tokio::spawn(async move {
            while let Some(r) = result_rx.recv().await {
                results.deliver(r, None);
            }
        });
        tokio::spawn(async move {
            while let Some(p) = progress_rx.recv().await {
                router.progress(p);
            }
        });
        let (control, _) = broadcast::channel(64);
        (
            LocalQueue {
                tasks: task_tx,
                control,
            },
            WorkerEnds {
                tasks: task_rx,
                results: result_tx,
                progress: progress_tx,
            },
        )
    }

    /// Run control messages, for one in-process worker each.
    pub fn control_receiver(&self) -> broadcast::Receiver<RunControl> {
        self.control.subscribe()
    }
}

#[async_trait]
impl TaskQueue for LocalQueue {
    fn outlives_process(&self) -> bool {
        false
    }

    async fn publish(&self, tasks: &[Task]) -> Result<(), DispatchError> {
        for t in tasks {
            self.tasks
                .send((t.clone(), None))
                .map_err(|_| DispatchError::Closed)?;
        }
        Ok(())
    }

    async fn publish_journaled(
        &self,
        tasks: &[Task],
        journaled: &watch::Receiver<bool>,
    ) -> Result<(), DispatchError> {
        for t in tasks {
            self.tasks
                .send((t.clone(), Some(journaled.clone())))
                .map_err(|_| DispatchError::Closed)?;
        }
        Ok(())
    }

    async fn control(&self, message: &RunControl) -> Result<(), DispatchError> {
        // No receivers (no workers yet) is not an error: nothing to stop.
        let _ = self.control.send(message.clone());
        Ok(())
    }
}
