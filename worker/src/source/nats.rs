//! JetStream: a durable pull consumer shared by all workers of a pool
//! (competing consumers), results published to the results stream.
//!
//! A worker pulls no more tasks than it has free slots: a task delivered
//! to it waits for no other before it starts, so its ack wait runs only
//! while it runs (and progress acks extend it). A task pulled ahead and
//! left waiting behind slow ones (a provider that throttles) would be
//! delivered again once the ack wait passed, and a worker that gets a
//! create delivered again reports it interrupted rather than risk a second
//! object. Tasks no worker has a slot for stay in the stream.

use super::{Acker, ControlStream, Delivery, ResultSink, TaskSource};
use async_nats::jetstream::{self, AckKind, consumer};
use async_trait::async_trait;
use fleetform_shared::wire::{self, RunControl, Task, TaskProgress, TaskResult};
use futures::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;

/// How long a delivered task may go without an ack or progress before
/// JetStream hands it to another worker (the default of `--ack-wait`). The
/// pool's consumer keeps the value of whoever created it.
pub const ACK_WAIT: Duration = Duration::from_secs(30);

pub struct NatsSource {
    consumer: consumer::PullConsumer,
    /// The pull request open now (or being made), while it may still bring
    /// tasks.
    pull: Mutex<Pull>,
    /// Tasks sent to this process directly ([`wire::nats::direct_subject`]);
    /// none for a worker that takes none.
    direct: Option<Mutex<async_nats::Subscriber>>,
    /// Tasks handed out and not acknowledged yet.
    held: Arc<AtomicUsize>,
    /// Tasks the worker runs at once: a pull asks for the free ones.
    capacity: usize,
    /// To ask a coordinator for task claims ([`TaskSource::claim`]).
    client: async_nats::Client,
}

/// This worker process, as tasks sent to it directly name it.
#[derive(Clone, Debug)]
pub struct Process {
    pub worker: String,
    /// Drawn at the process's start: a process started later under the
    /// same id is another incarnation.
    pub incarnation: String,
}

/// The state of the source's pull request.
enum Pull {
    None,
    /// Being made, in a task of its own: a caller that stops waiting (a
    /// task sent directly came first) does not drop it half made, which
    /// would leave the tasks it asked for with nobody until their ack wait
    /// passed.
    Making(tokio::task::JoinHandle<Result<consumer::pull::Batch, String>>),
    Open(consumer::pull::Batch),
}

/// How long a pull request waits for tasks before another is made: an
/// idle worker asks again this often, and a request lost with a NATS node
/// is replaced within it (plus the client's 5 s of grace).
const PULL_EXPIRES: Duration = Duration::from_secs(5);

/// How long a claim request waits for its answer.
const CLAIM_ANSWER_WAIT: Duration = Duration::from_secs(5);
/// How long a worker keeps asking for a claim (a coordinator failing over,
/// NATS restarting) before it gives up and does not run the task. Only the
/// coordinator that runs the run answers, so a run failing over to a
/// standby is not answered until the standby has watched the dead one's
/// lease go unrenewed for its time to live (30 s) and read the run's
/// claims: the patience covers that twice over, since the task waits for
/// the same failover anyway.
const CLAIM_PATIENCE: Duration = Duration::from_secs(90);

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
/// subscribes to the pool's run control subject. `capacity`: the tasks the
/// worker runs at once, the most it pulls.
pub async fn connect(
    client: async_nats::Client,
    pool: &str,
    ack_wait: Duration,
    replicas: usize,
    capacity: usize,
    process: Option<&Process>,
) -> anyhow::Result<(NatsSource, NatsSink, ControlStream)> {
    let direct = match process {
        None => None,
        Some(p) => Some(Mutex::new(
            client
                .subscribe(wire::nats::direct_subject(&p.worker, &p.incarnation))
                .await
                .map_err(|e| anyhow::anyhow!("subscribing to tasks sent directly: {e}"))?,
        )),
    };
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
    let js = jetstream::new(client.clone());
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
    Ok((
        NatsSource {
            consumer,
            pull: Mutex::new(Pull::None),
            direct,
            held: Arc::default(),
            capacity: capacity.max(1),
            client,
        },
        NatsSink { js, progress },
        control,
    ))
}

/// A delivered task's message; it counts as held by the worker until it
/// is acknowledged or dropped.
struct NatsAck {
    msg: jetstream::Message,
    held: std::sync::Mutex<Option<Held>>,
}

/// One task in [`NatsSource::held`].
struct Held(Arc<AtomicUsize>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[async_trait]
impl Acker for NatsAck {
    async fn ack(&self) {
        if let Err(e) = self.msg.ack().await {
            tracing::warn!(error = %e, "ack failed; the task may be delivered again");
        }
        self.held.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    async fn in_progress(&self) {
        let _ = self.msg.ack_with(AckKind::Progress).await;
    }
}

impl NatsSource {
    /// The next task message: from the open pull request, else from a new
    /// one asking for as many tasks as the worker has free slots (at least
    /// one: the caller has a slot for it). Safe to stop waiting for: a
    /// pull request being made goes on being made, and a task is taken
    /// from it only when it is returned.
    async fn next_message(&self) -> jetstream::Message {
        let mut pull = self.pull.lock().await;
        // While NATS does not answer (a cluster electing its leader): said
        // once, and asked again less and less often, up to every 2 s.
        let mut pause = Duration::from_millis(100);
        let mut said = false;
        loop {
            match &mut *pull {
                Pull::None => {
                    let free = self
                        .capacity
                        .saturating_sub(self.held.load(Ordering::Relaxed))
                        .max(1);
                    let consumer = self.consumer.clone();
                    *pull = Pull::Making(tokio::spawn(async move {
                        consumer
                            .batch()
                            .max_messages(free)
                            .expires(PULL_EXPIRES)
                            .messages()
                            .await
                            .map_err(|e| e.to_string())
                    }));
                }
                Pull::Making(made) => {
                    let made = made.await.map_err(|e| e.to_string()).and_then(|r| r);
                    match made {
                        Ok(b) => *pull = Pull::Open(b),
                        Err(e) => {
                            *pull = Pull::None;
                            if !said {
                                tracing::warn!(error = %e, "pulling tasks failed; retrying");
                                said = true;
                            }
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(Duration::from_secs(2));
                        }
                    }
                }
                Pull::Open(batch) => match batch.next().await {
                    Some(Ok(msg)) => return msg,
                    // Fulfilled or expired: the next pull asks again.
                    None => *pull = Pull::None,
                    Some(Err(e)) => {
                        *pull = Pull::None;
                        if !said {
                            tracing::warn!(error = %e, "task stream error");
                            said = true;
                        }
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(2));
                    }
                },
            }
        }
    }

    /// A task sent to this process directly, as a delivery; None when the
    /// message is not one (answered refused, so its sender knows).
    fn direct_delivery(
        &self,
        client: &async_nats::Client,
        msg: async_nats::Message,
    ) -> Option<Delivery> {
        let reply = msg.reply.clone().map(|subject| DirectSender {
            client: client.clone(),
            subject,
        });
        let task: Task = match rmp_serde::from_slice(&msg.payload) {
            Ok(t) => t,
            Err(e) => {
                tracing::error!(error = %e, subject = %msg.subject, "undecodable task sent directly: refused");
                if let Some(r) = reply {
                    super::DirectReply::answer(&r, wire::DirectAnswer::Refused);
                }
                return None;
            }
        };
        self.held.fetch_add(1, Ordering::Relaxed);
        Some(Delivery {
            task,
            attempt: 1,
            acker: Box::new(DirectAck(std::sync::Mutex::new(Some(Held(
                self.held.clone(),
            ))))),
            headers: msg.headers.clone(),
            journaled: None,
            direct: Some(Box::new(reply.unwrap_or_else(|| DirectSender {
                client: client.clone(),
                subject: String::new().into(),
            }))),
        })
    }
}

/// Answers the sender of a task sent directly (best effort: a sender that
/// hears nothing asks the process later what became of the task).
struct DirectSender {
    client: async_nats::Client,
    subject: async_nats::Subject,
}

impl super::DirectReply for DirectSender {
    fn answer(&self, answer: wire::DirectAnswer) {
        if self.subject.is_empty() {
            return;
        }
        let Ok(payload) = rmp_serde::to_vec_named(&answer) else {
            return;
        };
        let (client, subject) = (self.client.clone(), self.subject.clone());
        tokio::spawn(async move {
            if let Err(e) = client.publish(subject, payload.into()).await {
                tracing::debug!(error = %e, "answer to a task sent directly not sent");
            }
        });
    }
}

/// A task sent directly is in no queue: nothing to acknowledge. It counts
/// as held by the worker until it is done.
struct DirectAck(std::sync::Mutex<Option<Held>>);

#[async_trait]
impl Acker for DirectAck {
    async fn ack(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
    async fn in_progress(&self) {}
}

#[async_trait]
impl TaskSource for NatsSource {
    async fn close_direct(&self) {
        if let Some(direct) = &self.direct
            && let Err(e) = direct.lock().await.unsubscribe().await
        {
            tracing::warn!(error = %e, "unsubscribing from tasks sent directly failed");
        }
    }

    async fn next_direct(&self) -> Option<Delivery> {
        let direct = self.direct.as_ref()?;
        loop {
            // What came before the unsubscription is still in the
            // subscription; then it ends. A little patience for what was
            // on its way from the server.
            let sent = tokio::time::timeout(Duration::from_millis(500), direct.lock().await.next())
                .await
                .ok()
                .flatten()?;
            if let Some(d) = self.direct_delivery(&self.client, sent) {
                return Some(d);
            }
        }
    }

    /// Asks the coordinator that runs the task's run, which records claims
    /// in the object store, and keeps asking for [`CLAIM_PATIENCE`]: no answer
    /// means the task is not run.
    async fn claim(&self, task: &Task, worker: &str) -> super::Claim {
        let request = wire::ClaimRequest {
            run_id: task.run_id.clone(),
            task_id: task.id.clone(),
            worker: worker.to_string(),
            attempt: format!("{:032x}", rand::random::<u128>()),
            drops_duplicates: true,
        };
        let Ok(payload) = rmp_serde::to_vec_named(&request) else {
            return super::Claim::Unknown("claim request not encodable".into());
        };
        let subject = wire::nats::claim_subject(&task.run_id);
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        let mut why = String::new();
        while started.elapsed() < CLAIM_PATIENCE {
            let asked = tokio::time::timeout(
                CLAIM_ANSWER_WAIT,
                self.client.request(subject.clone(), payload.clone().into()),
            )
            .await;
            match asked {
                Ok(Ok(msg)) => match rmp_serde::from_slice::<wire::ClaimAnswer>(&msg.payload) {
                    Ok(answer) => {
                        tracing::debug!(task_id = %task.id, ?answer, took_us = started.elapsed().as_micros() as u64, "claim answered");
                        return match answer {
                            wire::ClaimAnswer::First => super::Claim::First,
                            wire::ClaimAnswer::Taken => super::Claim::Taken,
                            wire::ClaimAnswer::Duplicate => super::Claim::Duplicate,
                        };
                    }
                    Err(e) => why = format!("undecodable claim answer: {e}"),
                },
                Ok(Err(e)) => why = e.to_string(),
                Err(_) => why = "no answer".into(),
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
        super::Claim::Unknown(why)
    }

    async fn next(&self) -> Option<Delivery> {
        loop {
            // A task sent directly first: it is the next link of a chain,
            // which waits for nothing else.
            let msg = match &self.direct {
                None => self.next_message().await,
                Some(direct) => {
                    let mut direct = direct.lock().await;
                    tokio::select! {
                        biased;
                        sent = direct.next() => match sent {
                            Some(sent) => {
                                match self.direct_delivery(&self.client, sent) {
                                    Some(d) => return Some(d),
                                    None => continue,
                                }
                            }
                            // Unsubscribed (the client closed): the queue's
                            // tasks go on.
                            None => {
                                drop(direct);
                                self.next_message().await
                            }
                        },
                        msg = self.next_message() => msg,
                    }
                }
            };
            match rmp_serde::from_slice(&msg.payload) {
                Ok(task) => {
                    let attempt = msg.info().map_or(1, |i| i.delivered.max(1) as u64);
                    let headers = msg.headers.clone();
                    self.held.fetch_add(1, Ordering::Relaxed);
                    let held = Held(self.held.clone());
                    return Some(Delivery {
                        task,
                        attempt,
                        acker: Box::new(NatsAck {
                            msg,
                            held: std::sync::Mutex::new(Some(held)),
                        }),
                        headers,
                        journaled: None,
                        direct: None,
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
