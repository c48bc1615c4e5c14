//! The in-process queue of embedded mode: tasks go to in-process workers
//! over a channel, results come back over another.

use super::{DispatchError, ResultRouter, TaskQueue};
use async_trait::async_trait;
use fleetform_shared::wire::{RunControl, Task, TaskResult};
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc};

pub struct LocalQueue {
    tasks: mpsc::UnboundedSender<Task>,
    control: broadcast::Sender<RunControl>,
}

impl LocalQueue {
    /// Returns the queue, the receiving end for workers and the sender
    /// workers report results on.
    pub fn new(
        router: Arc<ResultRouter>,
    ) -> (
        LocalQueue,
        mpsc::UnboundedReceiver<Task>,
        mpsc::UnboundedSender<TaskResult>,
    ) {
        let (task_tx, task_rx) = mpsc::unbounded_channel();
        let (result_tx, mut result_rx) = mpsc::unbounded_channel::<TaskResult>();
        tokio::spawn(async move {
            while let Some(r) = result_rx.recv().await {
                router.deliver(r);
            }
        });
        let (control, _) = broadcast::channel(64);
        (
            LocalQueue {
                tasks: task_tx,
                control,
            },
            task_rx,
            result_tx,
        )
    }

    /// Run control messages, for one in-process worker each.
    pub fn control_receiver(&self) -> broadcast::Receiver<RunControl> {
        self.control.subscribe()
    }
}

#[async_trait]
impl TaskQueue for LocalQueue {
    async fn publish(&self, tasks: &[Task]) -> Result<(), DispatchError> {
        for t in tasks {
            self.tasks
                .send(t.clone())
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
