//! Answers a coordinator asking what became of a task whose result is
//! overdue ([`wire::TaskStatusRequest`]): the queue may have lost the
//! task's result after the worker published it and acknowledged the task,
//! and then only this worker's memory of the outcome ([`Taken`]) still has
//! it.

use crate::runtime::{DirectStatus, Taken};
use fleetform_shared::wire::{self, TaskResult, TaskStatus};
use futures::StreamExt;
use std::sync::Arc;

/// Subscribes to this worker's task status subject and answers from
/// `taken` until the connection closes. `incarnation`: this process's
/// (questions about a task sent to it directly name it).
pub async fn answer_status(
    client: async_nats::Client,
    worker: String,
    incarnation: String,
    taken: Arc<Taken>,
) -> anyhow::Result<()> {
    let mut requests = client
        .subscribe(wire::nats::task_status_subject(&worker))
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to task status requests: {e}"))?;
    tokio::spawn(async move {
        while let Some(msg) = requests.next().await {
            let (Some(reply), Ok(req)) = (
                msg.reply.clone(),
                rmp_serde::from_slice::<wire::TaskStatusRequest>(&msg.payload),
            ) else {
                tracing::debug!(subject = %msg.subject, "undecodable task status request dropped");
                continue;
            };
            let status = status_of(&taken, &worker, &incarnation, &req);
            tracing::info!(task_id = %req.task_id, status = status_label(&status), "asked about an overdue task");
            let Ok(payload) = rmp_serde::to_vec_named(&status) else {
                continue;
            };
            if let Err(e) = client.publish(reply, payload.into()).await {
                tracing::debug!(task_id = %req.task_id, error = %e, "task status not sent");
            }
        }
    });
    Ok(())
}

/// The answer to `req` from what this worker remembers. Asked about a
/// task sent directly to this very process (`req` names its incarnation),
/// it answers for that delivery alone, and refuses the task from now on if
/// it never arrived; a question naming another incarnation is about a
/// process before this one, which this one cannot answer for.
pub fn status_of(
    taken: &Taken,
    worker: &str,
    incarnation: &str,
    req: &wire::TaskStatusRequest,
) -> TaskStatus {
    let finished = |outcome| {
        TaskStatus::Finished(TaskResult {
            task_id: req.task_id.clone(),
            run_id: req.run_id.clone(),
            worker: worker.to_string(),
            outcome,
            incarnation: incarnation.to_string(),
        })
    };
    if !req.incarnation.is_empty() {
        if req.incarnation != incarnation {
            return TaskStatus::Unknown;
        }
        return match taken.status_or_refuse(&req.task_id) {
            DirectStatus::Taken(None) => TaskStatus::Running,
            DirectStatus::Taken(Some(outcome)) => finished(outcome),
            DirectStatus::Refused => TaskStatus::Refused,
            DirectStatus::Forgotten => TaskStatus::Unknown,
        };
    }
    match taken.status(&req.task_id) {
        None => TaskStatus::Unknown,
        Some(None) => TaskStatus::Running,
        Some(Some(outcome)) => finished(outcome),
    }
}

fn status_label(status: &TaskStatus) -> &'static str {
    match status {
        TaskStatus::Running => "running",
        TaskStatus::Finished(_) => "finished",
        TaskStatus::Unknown => "unknown",
        TaskStatus::Refused => "refused",
    }
}
