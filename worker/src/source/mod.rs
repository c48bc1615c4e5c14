//! Where tasks come from and where results go: JetStream in a fleet, an
//! in-process channel in embedded mode.

mod local;
mod nats;

pub use local::{LocalSink, LocalSource, local_control};
pub use nats::{ACK_WAIT, NatsSink, NatsSource, Process, connect, heartbeat};

use async_trait::async_trait;
use fleetform_shared::wire::{RunControl, Task, TaskProgress, TaskResult};
use std::pin::Pin;

/// The coordinator's [`RunControl`] messages, as they arrive.
pub type ControlStream = Pin<Box<dyn futures::Stream<Item = RunControl> + Send>>;

/// Acknowledges a delivered task.
#[async_trait]
pub trait Acker: Send + Sync {
    /// The task is done and its result published: never deliver it again.
    async fn ack(&self);
    /// Still working: extend the time before redelivery.
    async fn in_progress(&self);
}

pub struct Delivery {
    pub task: Task,
    /// 1 for the first delivery; more when earlier ones went unanswered.
    pub attempt: u64,
    pub acker: Box<dyn Acker>,
    /// The message's headers (the trace context the coordinator sent).
    pub headers: Option<async_nats::HeaderMap>,
    /// In-process deliveries of operations the run journals: turns true
    /// once the coordinator's journal write of the task's intent has ended.
    /// Nothing that must not run twice starts before: the process dies with
    /// its workers, and only the journal can then say what was under way.
    /// A queue's deliveries have none: the queue keeps the task durably, and
    /// a restarted coordinator finds its result there.
    pub journaled: Option<tokio::sync::watch::Receiver<bool>>,
    /// A task sent to this process directly, its claim written for this
    /// process before it was sent: it runs without asking for a claim,
    /// unless this process refused it before it arrived (asked about it
    /// meanwhile). The sender hears which.
    pub direct: Option<Box<dyn DirectReply>>,
}

/// Tells the sender of a task sent directly whether it was taken up.
pub trait DirectReply: Send + Sync {
    fn answer(&self, answer: fleetform_shared::wire::DirectAnswer);
}

/// Whether this worker is the first to take a task up ([`TaskSource::claim`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Nobody took it up before: run it.
    First,
    /// Someone did (another worker, or this one before a crash): it may
    /// have reached the provider already.
    Taken,
    /// Someone else has it and runs it still (or finished it, and its
    /// result went to the run): drop this delivery without a result.
    Duplicate,
    /// The claim could not be recorded (why): the task is not run as new.
    Unknown(String),
}

#[async_trait]
pub trait TaskSource: Send + Sync {
    /// The next task; `None` when the source is closed.
    async fn next(&self) -> Option<Delivery>;

    /// Records durably that `worker` takes task `task_id` up, before a task
    /// that must not run twice runs. The delivery count alone cannot say:
    /// a queue that crashes may forget it and deliver the task again as if
    /// for the first time. In-process sources have nobody else to ask.
    async fn claim(&self, _task: &Task, _worker: &str) -> Claim {
        Claim::First
    }

    /// The worker stops: nothing more may be sent to it directly. Tasks
    /// sent before and not taken yet are then handed out by
    /// [`TaskSource::next_direct`]: their claims name this process, so
    /// nobody else could run them as new.
    async fn close_direct(&self) {}

    /// The next task sent directly before [`TaskSource::close_direct`]
    /// and not taken yet; `None` once there are none.
    async fn next_direct(&self) -> Option<Delivery> {
        None
    }
}

#[async_trait]
pub trait ResultSink: Send + Sync {
    async fn publish(&self, result: &TaskResult) -> Result<(), String>;
    /// Sends a task's live progress, best effort: never blocks, and what is
    /// lost the result repeats.
    fn progress(&self, progress: TaskProgress);
}
