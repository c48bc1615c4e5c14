//! JetStream: a durable pull consumer shared by all workers of a pool
//! (competing consumers), results published to the results stream.

use super::{Acker, ControlStream, Delivery, ResultSink, TaskSource};
use async_nats::jetstream::{self, AckKind, consumer};
use async_trait::async_trait;
use fleetform_shared::wire::{self, RunControl, TaskProgress, TaskResult};
use futures::StreamExt;
use std::time::Duration;
use tokio::sync::Mutex;

/// How long a delivered task may go without an ack or progress before
/// JetStream hands it to another worker (the default of `--ack-wait`). The
/// pool's consumer keeps the value of whoever created it.
pub const ACK_WAIT: Duration = Duration::from_secs(30);

pub struct NatsSource {
    messages: Mutex<consumer::pull::Stream>,
    /// Task claims ([`TaskSource::claim`]): a key per task taken up.
    claims: jetstream::kv::Store,
}

/// The key-value bucket of task claims.
pub const CLAIMS_BUCKET: &str = "FLEETFORM_CLAIMS";

/// How long a claim is kept: far longer than a task waits for redelivery.
const CLAIM_MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// A task id as a key: letters, digits, `-` and `_` kept, every other
/// byte as `=` and two hex digits (ids hold `:`, `[`, `"`, `.`).
pub fn claim_key(task_id: &str) -> String {
    let mut out = String::with_capacity(task_id.len());
    for b in task_id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(b as char);
        } else {
            out.push_str(&format!("={b:02X}"));
        }
    }
    out
}

pub struct NatsSink {
    js: jetstream::Context,
    /// To the task publishing progress on core NATS, in order.
    progress: tokio::sync::mpsc::UnboundedSender<TaskProgress>,
}

/// Publishes progress on core NATS: fire and forget, one message each.
fn progress_publisher(
    client: async_nats::Client,
) -> tokio::sync::mpsc::UnboundedSender<TaskProgress> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<TaskProgress>();
    tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            let Ok(payload) = rmp_serde::to_vec_named(&p) else {
                continue;
            };
            let subject = wire::nats::progress_subject(&p.run_id);
            if let Err(e) = client.publish(subject, payload.into()).await {
                tracing::debug!(error = %e, "progress not sent");
            }
        }
    });
    tx
}

/// Connects, creates the streams if missing, binds the pool's consumer and
/// subscribes to the pool's run control subject.
pub async fn connect(
    client: async_nats::Client,
    pool: &str,
    ack_wait: Duration,
    replicas: usize,
) -> anyhow::Result<(NatsSource, NatsSink, ControlStream)> {
    let control = client
        .subscribe(wire::nats::control_subject(pool))
        .await
        .map_err(|e| anyhow::anyhow!("subscribing to run control: {e}"))?;
    let control: ControlStream = Box::pin(control.filter_map(|msg| async move {
        rmp_serde::from_slice::<RunControl>(&msg.payload)
            .inspect_err(|e| tracing::warn!(error = %e, "undecodable run control message"))
            .ok()
    }));
    let progress = progress_publisher(client.clone());
    let js = jetstream::new(client);
    let tasks = fleetform_nats::layout::ensure_streams(&js, replicas).await?;
    let name = wire::nats::worker_consumer(pool);
    let consumer: consumer::PullConsumer = fleetform_nats::layout::patiently(&name, || async {
        tasks
            .get_or_create_consumer(
                &name,
                consumer::pull::Config {
                    durable_name: Some(name.clone()),
                    filter_subject: wire::nats::task_subject(pool),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait,
                    max_ack_pending: 100_000,
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| anyhow::anyhow!("consumer {name}: {e}"))
    })
    .await?;
    let messages = fleetform_nats::layout::patiently(&name, || async {
        consumer
            .messages()
            .await
            .map_err(|e| anyhow::anyhow!("consumer {name}: {e}"))
    })
    .await?;
    let claims =
        fleetform_nats::layout::bucket(&js, CLAIMS_BUCKET, CLAIM_MAX_AGE, replicas).await?;
    Ok((
        NatsSource {
            messages: Mutex::new(messages),
            claims,
        },
        NatsSink { js, progress },
        control,
    ))
}

struct NatsAck(jetstream::Message);

#[async_trait]
impl Acker for NatsAck {
    async fn ack(&self) {
        if let Err(e) = self.0.ack().await {
            tracing::warn!(error = %e, "ack failed; the task may be delivered again");
        }
    }

    async fn in_progress(&self) {
        let _ = self.0.ack_with(AckKind::Progress).await;
    }
}

#[async_trait]
impl TaskSource for NatsSource {
    async fn claim(&self, task_id: &str, worker: &str) -> super::Claim {
        use async_nats::jetstream::kv::CreateErrorKind;
        match self
            .claims
            .create(claim_key(task_id), worker.to_string().into_bytes().into())
            .await
        {
            Ok(_) => super::Claim::First,
            Err(e) if e.kind() == CreateErrorKind::AlreadyExists => super::Claim::Taken,
            Err(e) => super::Claim::Unknown(e.to_string()),
        }
    }

    async fn next(&self) -> Option<Delivery> {
        loop {
            let msg = match self.messages.lock().await.next().await? {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(error = %e, "task stream error");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            match rmp_serde::from_slice(&msg.payload) {
                Ok(task) => {
                    let attempt = msg.info().map_or(1, |i| i.delivered.max(1) as u64);
                    let headers = msg.headers.clone();
                    return Some(Delivery {
                        task,
                        attempt,
                        acker: Box::new(NatsAck(msg)),
                        headers,
                    });
                }
                Err(e) => {
                    // Poison message: terminate it so it is not redelivered forever.
                    tracing::error!(error = %e, subject = %msg.subject, "undecodable task dropped");
                    let _ = msg.ack_with(AckKind::Term).await;
                }
            }
        }
    }
}

#[async_trait]
impl ResultSink for NatsSink {
    async fn publish(&self, result: &TaskResult) -> Result<(), String> {
        let payload = rmp_serde::to_vec_named(result).map_err(|e| e.to_string())?;
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", format!("result:{}", result.task_id).as_str());
        let ack = self
            .js
            .publish_with_headers(
                wire::nats::result_subject(&result.run_id),
                headers,
                payload.into(),
            )
            .await
            .map_err(|e| e.to_string())?;
        ack.await.map_err(|e| e.to_string())?;
        Ok(())
    }

    fn progress(&self, progress: TaskProgress) {
        let _ = self.progress.send(progress);
    }
}

/// Publishes what `info` says of this worker to the workers bucket every
/// few seconds, until `stop` resolves; then removes the entry, so a
/// worker that stops cleanly leaves the list at once (one that dies
/// leaves it when its last heartbeat is older than the TTL).
pub async fn heartbeat(
    client: async_nats::Client,
    key: String,
    info: impl Fn() -> wire::WorkerInfo + Send + 'static,
    stop: impl std::future::Future<Output = ()>,
    replicas: usize,
) -> anyhow::Result<()> {
    let js = jetstream::new(client);
    let bucket = fleetform_nats::layout::bucket(
        &js,
        wire::nats::WORKERS_BUCKET,
        wire::nats::WORKER_TTL * 3,
        replicas,
    )
    .await?;
    tokio::pin!(stop);
    loop {
        let body = serde_json::to_vec(&info()).expect("worker info serialises");
        if let Err(e) = bucket.put(&key, body.into()).await {
            tracing::warn!(error = %e, "publishing the worker's heartbeat failed");
        }
        tokio::select! {
            () = tokio::time::sleep(wire::nats::HEARTBEAT_EVERY) => {}
            () = &mut stop => break,
        }
    }
    let _ = bucket.delete(&key).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::claim_key;

    #[test]
    fn claim_keys_are_valid_kv_keys_and_distinct() {
        let a = claim_key("9f82:apply:sim_object.l8[81]");
        assert_eq!(a, "9f82=3Aapply=3Asim_object=2El8=5B81=5D");
        let b = claim_key("9f82:apply:sim_object.l8[\"81\"]");
        assert_ne!(a, b);
        assert!(
            a.chars()
                .chain(b.chars())
                .all(|c| c.is_ascii_alphanumeric() || "-_=".contains(c))
        );
    }
}
