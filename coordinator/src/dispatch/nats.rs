//! The JetStream queue: tasks on a work-queue stream shared by all workers
//! of a pool, results on a limits stream this coordinator consumes with a
//! durable consumer.

use super::{DispatchError, ResultAck, ResultRouter, TaskQueue};
use crate::store::ClaimStore;
use async_nats::jetstream::{self, consumer};
use async_trait::async_trait;
use fleetform_shared::wire::{self, DEFAULT_POOL, RunControl, Task, TaskProgress, TaskResult};
use futures::{StreamExt, TryStreamExt};
use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

/// How long a delivered result may go unacknowledged before JetStream
/// delivers it again.
const RESULT_ACK_WAIT: Duration = Duration::from_secs(10);
/// Task publishes in flight at once, well under the client's limit of
/// 5,000 unanswered acks; at 85k publishes a second here, a window of
/// 1,000 costs one round trip in 12 ms.
const PUBLISH_WINDOW: usize = 1000;

pub struct NatsQueue {
    client: async_nats::Client,
    js: jetstream::Context,
    pool: String,
    /// The claims of the runs this coordinator runs ([`answer_claims`]).
    claims: ClaimStore,
    /// This coordinator's name, written in its claim logs' markers.
    owner: String,
    /// Whether tasks are sent to worker processes directly
    /// ([`TaskQueue::send_direct`]).
    direct: bool,
}

fn nats_err(e: impl std::fmt::Display) -> DispatchError {
    DispatchError::Nats(e.to_string())
}

impl NatsQueue {
    /// Publishes every task, then awaits the acks together. `round`: the
    /// how-many-th republication of overdue tasks this is (none for the
    /// first publication), part of the message id so that the queue's
    /// duplicate check keeps it.
    async fn publish_window(
        &self,
        tasks: &[Task],
        round: Option<u32>,
    ) -> Result<(), DispatchError> {
        let subject = wire::nats::task_subject(&self.pool);
        let mut acks = Vec::with_capacity(tasks.len());
        for t in tasks {
            let mut headers = async_nats::HeaderMap::new();
            let id = match round {
                None => t.id.clone(),
                Some(n) => format!("{}#{n}", t.id),
            };
            headers.insert("Nats-Msg-Id", id.as_str());
            // The operation's span (in the run's trace) goes with the task:
            // the worker's span of it is its child.
            let span = tracing::info_span!("dispatch", task_id = %t.id);
            fleetform_telemetry::inject(&span, &mut headers);
            let payload = rmp_serde::to_vec_named(t)?;
            let ack = self
                .js
                .publish_with_headers(subject.clone(), headers, payload.into())
                .await
                .map_err(nats_err)?;
            acks.push(ack.into_future());
        }
        for ack in futures::future::join_all(acks).await {
            ack.map_err(nats_err)?;
        }
        Ok(())
    }

    /// Connects the queue and starts consuming results into `router`.
    pub async fn start(
        client: async_nats::Client,
        consumer_name: &str,
        router: Arc<ResultRouter>,
        replicas: usize,
        claims: ClaimStore,
    ) -> Result<NatsQueue, DispatchError> {
        let js = jetstream::new(client.clone());
        // Workers create them too, so either may start first.
        fleetform_nats::layout::ensure_streams(&js, replicas)
            .await
            .map_err(nats_err)?;
        let consumer: consumer::PullConsumer =
            fleetform_nats::layout::patiently(consumer_name, || async {
                let results = js
                    .get_stream(wire::nats::RESULT_STREAM)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                results
                    .get_or_create_consumer(
                        consumer_name,
                        consumer::pull::Config {
                            durable_name: Some(consumer_name.to_string()),
                            ack_policy: consumer::AckPolicy::Explicit,
                            // Results wait for their journal write before the ack:
                            // a large batch must not stall delivery.
                            max_ack_pending: 100_000,
                            // Short: results a coordinator received but had not
                            // journaled when it died come again soon to the one
                            // that takes its place. A slow journal write only means
                            // a redelivery, which the router folds into the first.
                            ack_wait: RESULT_ACK_WAIT,
                            ..Default::default()
                        },
                    )
                    .await
                    .map_err(|e| anyhow::anyhow!("consumer {consumer_name}: {e}"))
            })
            .await
            .map_err(nats_err)?;
        let mut messages = consumer.messages().await.map_err(nats_err)?;
        // Live progress on core NATS: what a coordinator misses (it was not
        // connected, or the message was dropped) the result repeats.
        let mut progress = client
            .subscribe(format!("{}.>", wire::nats::PROGRESS_SUBJECT_PREFIX))
            .await
            .map_err(nats_err)?;
        answer_claims(&client, &js, claims.clone(), router.clone()).await?;
        let progress_router = router.clone();
        tokio::spawn(async move {
            while let Some(msg) = progress.next().await {
                match rmp_serde::from_slice::<TaskProgress>(&msg.payload) {
                    Ok(p) => progress_router.progress(p),
                    Err(e) => tracing::debug!(error = %e, "undecodable progress dropped"),
                }
            }
        });
        tokio::spawn(async move {
            while let Some(msg) = messages.next().await {
                let msg = match msg {
                    Ok(m) => m,
                    Err(e) => {
                        tracing::warn!(error = %e, "result stream error");
                        continue;
                    }
                };
                match rmp_serde::from_slice::<TaskResult>(&msg.payload) {
                    Ok(r) => {
                        router.deliver(r, Some(Box::new(MessageAck(msg))));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, subject = %msg.subject, "undecodable result dropped");
                        Box::new(MessageAck(msg)).ack().await;
                    }
                }
            }
        });
        // The pool's queue depth for the metrics, every few seconds.
        {
            let js = js.clone();
            let pool = DEFAULT_POOL.to_string();
            tokio::spawn(async move {
                let consumer = wire::nats::worker_consumer(&pool);
                // Nothing queued until a worker made the pool's consumer.
                crate::metrics::queue_depth(&pool, 0);
                loop {
                    if let Ok(stream) = js.get_stream(wire::nats::TASK_STREAM).await
                        && let Ok(info) = stream.consumer_info(&consumer).await
                    {
                        crate::metrics::queue_depth(&pool, info.num_pending);
                    }
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
            });
        }
        Ok(NatsQueue {
            client,
            js,
            pool: DEFAULT_POOL.to_string(),
            claims,
            owner: consumer_name.to_string(),
            direct: true,
        })
    }

    /// Sends tasks to worker processes directly, or not (`false`: every
    /// task goes through the queue).
    pub fn sending_direct(mut self, direct: bool) -> NatsQueue {
        self.direct = direct;
        self
    }
}

/// Answers workers' claims ([`wire::ClaimRequest`]) on core NATS. Every
/// coordinator hears every request; the one that runs the request's run
/// answers, once the object store has the claim (`store/claims.rs`), and
/// the others stay silent. A worker that hears nothing asks again (a run
/// failing over to another coordinator), and in the end does not run the
/// task as new.
async fn answer_claims(
    client: &async_nats::Client,
    js: &jetstream::Context,
    claims: ClaimStore,
    router: Arc<ResultRouter>,
) -> Result<(), DispatchError> {
    let subject = format!("{}.>", wire::nats::CLAIM_SUBJECT_PREFIX);
    let mut requests = client.subscribe(subject).await.map_err(nats_err)?;
    let client = client.clone();
    let js = js.clone();
    tokio::spawn(async move {
        while let Some(msg) = requests.next().await {
            let (Some(reply), Ok(req)) = (
                msg.reply.clone(),
                rmp_serde::from_slice::<wire::ClaimRequest>(&msg.payload),
            ) else {
                tracing::warn!(subject = %msg.subject, "undecodable claim request dropped");
                continue;
            };
            let claims = claims.clone();
            let client = client.clone();
            let js = js.clone();
            let router = router.clone();
            tokio::spawn(async move {
                let claimant = if req.attempt.is_empty() {
                    String::new()
                } else {
                    format!("{} {}", req.worker, req.attempt)
                };
                let answer = match claims.claim(&req.run_id, &req.task_id, &claimant).await {
                    Ok(true) => wire::ClaimAnswer::First,
                    Ok(false) => {
                        match taken_answer(&client, &js, &claims, &router, &req, &claimant).await {
                            Some(answer) => answer,
                            // Not yet: the worker asks again.
                            None => return,
                        }
                    }
                    // Another coordinator's run: it answers.
                    Err(crate::store::ClaimError::NotOwned(_)) => return,
                    Err(e) => {
                        // No answer: the worker asks again, then gives up
                        // and does not run the task.
                        tracing::warn!(task_id = %req.task_id, error = %e, "claim not answered");
                        return;
                    }
                };
                tracing::debug!(task_id = %req.task_id, worker = %req.worker, ?answer, "claim");
                let Ok(payload) = rmp_serde::to_vec(&answer) else {
                    return;
                };
                if let Err(e) = client.publish(reply, payload.into()).await {
                    tracing::debug!(task_id = %req.task_id, error = %e, "claim answer not sent");
                }
            });
        }
    });
    Ok(())
}

/// How long a worker is given to say what became of a task; well under
/// the wait of a worker's claim request, which may ask meanwhile.
const WORKER_ANSWER_WAIT: Duration = Duration::from_secs(2);

/// The answer to a claim someone else holds. A delivery of a task another
/// worker still runs (the queue delivered it again: it lost its ack, or
/// the task was published again while overdue) is a `Duplicate`, dropped
/// without a result: answered `Taken`, its worker would report it
/// interrupted, and that report could reach the run before the real
/// result. So is one whose holder finished it: the holder's result is
/// handed to the run here, in case the queue lost it. A holder that is
/// gone or forgot the task leaves the claim `Taken`: the new delivery
/// looks the object up or reports the operation interrupted.
///
/// A holder that is still connected to NATS but does not answer (its host
/// paused, or cut off from the server) may still be running the task: its
/// provider may create the object the moment it resumes. A `Taken` then
/// would let the new delivery look the object up, find nothing yet, and
/// create it a second time (seen in `tests/tests/partitions.rs`: a worker
/// SIGSTOPped for 12 s with its creates in the provider, 3 of 4 instances
/// got two objects and the apply said "complete"). So while the holder's
/// heartbeat is fresh, no answer is given (`None`): the worker asks again,
/// and the holder, back, answers for its task. A holder whose heartbeat
/// stopped for [`wire::nats::WORKER_TTL`] is gone.
///
/// A claim written for a task sent to one worker process directly names
/// that process's incarnation: the process is asked about that delivery
/// alone. One that never got it refuses it from then on, so the claim is
/// released and given to the asking delivery (`First`).
async fn taken_answer(
    client: &async_nats::Client,
    js: &jetstream::Context,
    claims: &ClaimStore,
    router: &ResultRouter,
    req: &wire::ClaimRequest,
    claimant: &str,
) -> Option<wire::ClaimAnswer> {
    if !req.drops_duplicates {
        return Some(wire::ClaimAnswer::Taken);
    }
    let Ok(Some(holder)) = claims.holder(&req.run_id, &req.task_id).await else {
        return Some(wire::ClaimAnswer::Taken);
    };
    let worker = crate::store::claimant_worker(&holder);
    if let Some(incarnation) = wire::nats::direct_incarnation(&holder) {
        let asked = ask(client, worker, &req.run_id, &req.task_id, incarnation).await;
        if asked == Asked::Said(wire::TaskStatus::Refused) {
            // Released only while it is still that process's claim; then
            // claimed for this delivery, unless another came first. Not
            // answered otherwise: the worker asks again.
            tracing::info!(task_id = %req.task_id, holder = %worker, asking = %req.worker, "task sent directly never reached its worker, which refuses it now: its claim goes to the delivery asking");
            return match claims.release(&req.run_id, &req.task_id, &holder).await {
                Ok(true) => match claims.claim(&req.run_id, &req.task_id, claimant).await {
                    Ok(true) => Some(wire::ClaimAnswer::First),
                    Ok(false) | Err(_) => None,
                },
                Ok(false) | Err(_) => None,
            };
        }
        return held_answer(js, router, req, worker, asked).await;
    }
    // The same worker asking again under another attempt has forgotten
    // the delivery it claimed (it restarted under the same id).
    if worker == req.worker {
        return Some(wire::ClaimAnswer::Taken);
    }
    let asked = ask(client, worker, &req.run_id, &req.task_id, "").await;
    held_answer(js, router, req, worker, asked).await
}

/// The answer to a claim `worker` holds, by what it said of the task.
async fn held_answer(
    js: &jetstream::Context,
    router: &ResultRouter,
    req: &wire::ClaimRequest,
    worker: &str,
    asked: Asked,
) -> Option<wire::ClaimAnswer> {
    Some(match asked {
        Asked::Said(wire::TaskStatus::Running) => wire::ClaimAnswer::Duplicate,
        Asked::Said(wire::TaskStatus::Finished(result)) => {
            router.deliver(result, None);
            wire::ClaimAnswer::Duplicate
        }
        // A refusal answers only a question naming the process (handled
        // before); from anyone else it says nothing more than "unknown".
        Asked::Said(wire::TaskStatus::Unknown | wire::TaskStatus::Refused) | Asked::Gone => {
            wire::ClaimAnswer::Taken
        }
        Asked::Silent => {
            if !heartbeat_fresh(js, worker).await {
                return Some(wire::ClaimAnswer::Taken);
            }
            tracing::warn!(task_id = %req.task_id, holder = %worker, asking = %req.worker, "claim held by a worker that is connected but does not answer (paused, or cut off): not answered until it does, or its heartbeat stops");
            return None;
        }
    })
}

/// Whether `worker` (of any pool) sent a heartbeat within
/// [`wire::nats::WORKER_TTL`]; true when that cannot be read, since a
/// claim not answered only waits.
async fn heartbeat_fresh(js: &jetstream::Context, worker: &str) -> bool {
    let read = async {
        let bucket = js.get_key_value(wire::nats::WORKERS_BUCKET).await.ok()?;
        let clock = ServerClock::read(js).await;
        let keys: Vec<String> = bucket.keys().await.ok()?.try_collect().await.ok()?;
        let mut fresh = false;
        for key in keys
            .iter()
            .filter(|k| k.split_once('.').is_some_and(|(_, id)| id == worker))
        {
            if let Some(entry) = bucket.entry(key).await.ok()? {
                fresh |= clock.age(entry.created.into()) <= wire::nats::WORKER_TTL;
            }
        }
        Some(fresh)
    };
    tokio::time::timeout(WORKER_ANSWER_WAIT, read)
        .await
        .ok()
        .flatten()
        .unwrap_or(true)
}

/// "Now" by the NATS server's clock, which stamps heartbeats. A heartbeat's
/// age is measured against it, not against this host's clock: a host whose
/// clock is stepped (or just wrong) by more than the heartbeat's time to
/// live would otherwise take every worker for dead (clock ahead: claims of
/// paused holders answered, "no workers"), or dead ones for live (behind).
struct ServerClock {
    /// The server's time, minus this host's, in nanoseconds.
    offset_ns: i128,
}

impl ServerClock {
    /// The server's time from its answer to a stream info request (`ts`,
    /// nats-server 2.10 and later), taken as its time at the middle of
    /// the round trip. A server that gives none leaves this host's clock.
    async fn read(js: &jetstream::Context) -> ServerClock {
        #[derive(serde::Deserialize)]
        struct Stamped {
            ts: Option<String>,
        }
        let subject = format!("STREAM.INFO.KV_{}", wire::nats::WORKERS_BUCKET);
        let before = std::time::SystemTime::now();
        let answer: Result<Stamped, _> = js.request(subject, &serde_json::json!({})).await;
        let after = std::time::SystemTime::now();
        let server = answer.ok().and_then(|a| a.ts).and_then(|ts| {
            time::OffsetDateTime::parse(&ts, &time::format_description::well_known::Rfc3339).ok()
        });
        let Some(server) = server else {
            tracing::debug!(
                "the NATS server gave no time: heartbeats are aged by this host's clock"
            );
            return ServerClock { offset_ns: 0 };
        };
        let middle = (unix_ns(before) + unix_ns(after)) / 2;
        ServerClock {
            offset_ns: server.unix_timestamp_nanos() - middle,
        }
    }

    /// How long ago `at` (a server timestamp) was, by the server's clock.
    fn age(&self, at: std::time::SystemTime) -> Duration {
        let now = unix_ns(std::time::SystemTime::now()) + self.offset_ns;
        let ns = (now - unix_ns(at)).max(0);
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

/// Nanoseconds since the Unix epoch, negative before it.
fn unix_ns(t: std::time::SystemTime) -> i128 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// What a worker asked about a task said.
#[derive(Debug, PartialEq)]
enum Asked {
    Said(wire::TaskStatus),
    /// Nobody listens on its subject: it is not connected.
    Gone,
    /// Connected, and no answer in time (paused, cut off, or slow).
    Silent,
}

/// Asks `worker` what became of a task; `incarnation`, when not empty:
/// of the task sent to that process of it directly.
async fn ask(
    client: &async_nats::Client,
    worker: &str,
    run_id: &str,
    task_id: &str,
    incarnation: &str,
) -> Asked {
    let request = wire::TaskStatusRequest {
        run_id: run_id.to_string(),
        task_id: task_id.to_string(),
        incarnation: incarnation.to_string(),
    };
    let Ok(payload) = rmp_serde::to_vec_named(&request) else {
        return Asked::Said(wire::TaskStatus::Unknown);
    };
    let asked = tokio::time::timeout(
        WORKER_ANSWER_WAIT,
        client.request(wire::nats::task_status_subject(worker), payload.into()),
    )
    .await;
    match asked {
        Ok(Ok(msg)) => Asked::Said(rmp_serde::from_slice(&msg.payload).unwrap_or_else(|e| {
            tracing::debug!(%worker, error = %e, "undecodable task status");
            wire::TaskStatus::Unknown
        })),
        Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders => Asked::Gone,
        Ok(Err(e)) => {
            tracing::debug!(%worker, error = %e, "task status not answered");
            Asked::Silent
        }
        Err(_) => Asked::Silent,
    }
}

/// Asks `worker` what became of a task: [`wire::TaskStatus::Unknown`]
/// when it cannot say (a worker that cannot say is treated as gone for
/// this task).
async fn ask_worker(
    client: &async_nats::Client,
    worker: &str,
    run_id: &str,
    task_id: &str,
    incarnation: &str,
) -> wire::TaskStatus {
    match ask(client, worker, run_id, task_id, incarnation).await {
        Asked::Said(status) => status,
        Asked::Gone | Asked::Silent => wire::TaskStatus::Unknown,
    }
}

/// How long the answer of a worker process to a task sent to it directly
/// is waited for (it answers as soon as it has a free slot).
const DIRECT_ANSWER_WAIT: Duration = Duration::from_secs(10);

/// What is done with a task sent directly that provably never reached its
/// process (nobody listened on its subject, or the process refused it):
/// its claim is released and the task published to the queue, where any
/// worker takes it up.
struct Fallback {
    js: jetstream::Context,
    pool: String,
    claims: ClaimStore,
    claimant: String,
    task: Task,
}

impl Fallback {
    async fn run(self, why: &str) {
        let task = &self.task;
        match self
            .claims
            .release(&task.run_id, &task.id, &self.claimant)
            .await
        {
            Ok(true) => {}
            // Held by someone else already, or not released now: the
            // task is settled once overdue.
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(task_id = %task.id, error = %e, "a task sent directly never reached its worker, and its claim could not be released; settled once overdue");
                return;
            }
        }
        tracing::info!(task_id = %task.id, why, "a task sent directly never reached its worker: published to the queue");
        // Its own message id: a message of the task's id may have been
        // published before (a resumed run), and the queue's duplicate check
        // would drop this one.
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", format!("{}#direct", task.id).as_str());
        let published = async {
            let payload = rmp_serde::to_vec_named(task).map_err(nats_err)?;
            self.js
                .publish_with_headers(
                    wire::nats::task_subject(&self.pool),
                    headers,
                    payload.into(),
                )
                .await
                .map_err(nats_err)?
                .await
                .map_err(nats_err)
        };
        if let Err(e) = published.await {
            tracing::warn!(task_id = %task.id, error = %e, "a task sent directly never reached its worker, and publishing it failed; published again once overdue");
        }
    }
}

/// A result message, acknowledged once its run journaled it.
struct MessageAck(jetstream::Message);

impl ResultAck for MessageAck {
    fn ack(self: Box<Self>) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(async move {
            // Not acknowledged: delivered again, and dropped then, since
            // nobody waits for it any more.
            if let Err(e) = self.0.ack().await {
                tracing::warn!(error = %e, "acking a result failed");
            }
        })
    }
}

#[async_trait]
impl TaskQueue for NatsQueue {
    fn own_claims(
        &self,
        run_id: &str,
        fence: crate::store::Fence,
    ) -> Option<crate::store::ClaimGuard> {
        Some(self.claims.own(run_id, &self.owner, fence))
    }

    async fn workers(&self) -> Result<Option<Vec<wire::WorkerInfo>>, DispatchError> {
        let Ok(bucket) = self.js.get_key_value(wire::nats::WORKERS_BUCKET).await else {
            // No worker has ever sent a heartbeat here.
            return Ok(Some(Vec::new()));
        };
        let keys: Vec<String> = bucket
            .keys()
            .await
            .map_err(nats_err)?
            .try_collect()
            .await
            .map_err(nats_err)?;
        let clock = ServerClock::read(&self.js).await;
        let mut out = Vec::new();
        for key in keys {
            let Some(entry) = bucket.entry(&key).await.map_err(nats_err)? else {
                continue;
            };
            // Live: its last heartbeat is recent, by the server's clock.
            if clock.age(entry.created.into()) > wire::nats::WORKER_TTL {
                continue;
            }
            if let Ok(info) = serde_json::from_slice::<wire::WorkerInfo>(&entry.value) {
                out.push(info);
            }
        }
        out.sort_by(|a, b| (&a.pool, &a.id).cmp(&(&b.pool, &b.id)));
        Ok(Some(out))
    }

    async fn republish(&self, task: &Task, round: u32) -> Result<(), DispatchError> {
        self.publish_window(std::slice::from_ref(task), Some(round))
            .await
    }

    async fn ask_worker(&self, worker: &str, task: &Task, incarnation: &str) -> wire::TaskStatus {
        ask_worker(&self.client, worker, &task.run_id, &task.id, incarnation).await
    }

    fn sends_direct(&self) -> bool {
        self.direct
    }

    async fn send_direct(&self, task: &Task, worker: &str, incarnation: &str) -> bool {
        let claimant = format!("{worker} {}", wire::nats::direct_attempt(incarnation));
        // Written for that process before anything is sent: it runs the
        // task without asking, and no other delivery of the task may.
        match self.claims.claim(&task.run_id, &task.id, &claimant).await {
            Ok(true) => {}
            // Someone holds it already (the task of a resumed run, in the
            // queue before), or the claim could not be written: the queue's
            // delivery asks for its claim as usual.
            Ok(false) | Err(_) => return false,
        }
        let Ok(payload) = rmp_serde::to_vec_named(task) else {
            let _ = self.claims.release(&task.run_id, &task.id, &claimant).await;
            return false;
        };
        let mut headers = async_nats::HeaderMap::new();
        let span = tracing::info_span!("dispatch", task_id = %task.id, direct = %worker);
        fleetform_telemetry::inject(&span, &mut headers);
        let (client, subject) = (
            self.client.clone(),
            wire::nats::direct_subject(worker, incarnation),
        );
        crate::metrics::dispatched_direct();
        let fallback = Fallback {
            js: self.js.clone(),
            pool: self.pool.clone(),
            claims: self.claims.clone(),
            claimant,
            task: task.clone(),
        };
        // The answer is awaited apart: the run goes on meanwhile.
        tokio::spawn(async move {
            let request = client.request_with_headers(subject, headers, payload.into());
            match tokio::time::timeout(DIRECT_ANSWER_WAIT, request).await {
                Ok(Ok(msg)) => match rmp_serde::from_slice::<wire::DirectAnswer>(&msg.payload) {
                    Ok(wire::DirectAnswer::Accepted) => {}
                    Ok(wire::DirectAnswer::Refused) => fallback.run("it refused it").await,
                    Err(e) => {
                        tracing::debug!(task_id = %fallback.task.id, error = %e, "undecodable answer to a task sent directly; settled if overdue")
                    }
                },
                Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                    fallback.run("no such worker process is connected").await
                }
                // It may have arrived: what became of it is asked of the
                // process once its result is overdue (`settle.rs`).
                Ok(Err(e)) => {
                    tracing::debug!(task_id = %fallback.task.id, error = %e, "no answer to a task sent directly; settled if overdue")
                }
                Err(_) => {
                    tracing::debug!(task_id = %fallback.task.id, "no answer in time to a task sent directly; settled if overdue")
                }
            }
        });
        true
    }

    async fn undelivered(&self) -> Option<u64> {
        let stream = self.js.get_stream(wire::nats::TASK_STREAM).await.ok()?;
        let info = stream
            .consumer_info(wire::nats::worker_consumer(&self.pool))
            .await
            .ok()?;
        Some(info.num_pending)
    }

    async fn publish(&self, tasks: &[Task]) -> Result<(), DispatchError> {
        // Pipelined a window at a time. The client holds or refuses
        // publishes beyond 5,000 acks outstanding (async-nats'
        // `max_ack_inflight`): unwindowed, a batch of 10,000 ready
        // operations stopped after about 5,000 and the run waited forever
        // for the rest.
        for window in tasks.chunks(PUBLISH_WINDOW) {
            self.publish_window(window, None).await?;
        }
        Ok(())
    }

    async fn replay_results(&self, run_id: &str) -> Result<Vec<TaskResult>, DispatchError> {
        let stream = self
            .js
            .get_stream(wire::nats::RESULT_STREAM)
            .await
            .map_err(nats_err)?;
        // Ephemeral, unacknowledged: it reads, and changes nothing for the
        // durable consumers.
        let mut consumer: consumer::PullConsumer = stream
            .create_consumer(consumer::pull::Config {
                filter_subject: wire::nats::result_subject(run_id),
                ack_policy: consumer::AckPolicy::None,
                deliver_policy: consumer::DeliverPolicy::All,
                inactive_threshold: Duration::from_secs(60),
                ..Default::default()
            })
            .await
            .map_err(nats_err)?;
        let mut out = Vec::new();
        while consumer.info().await.map_err(nats_err)?.num_pending > 0 {
            let mut batch = consumer
                .fetch()
                .max_messages(1000)
                .expires(Duration::from_secs(1))
                .messages()
                .await
                .map_err(nats_err)?;
            while let Some(msg) = batch.next().await {
                let msg = msg.map_err(nats_err)?;
                match rmp_serde::from_slice::<TaskResult>(&msg.payload) {
                    Ok(r) => out.push(r),
                    Err(e) => tracing::warn!(error = %e, "undecodable result skipped"),
                }
            }
        }
        let name = consumer.cached_info().name.clone();
        let _ = stream.delete_consumer(&name).await;
        Ok(out)
    }

    async fn control(&self, message: &RunControl) -> Result<(), DispatchError> {
        let payload = rmp_serde::to_vec_named(message)?;
        self.client
            .publish(wire::nats::control_subject(&self.pool), payload.into())
            .await
            .map_err(nats_err)?;
        self.client.flush().await.map_err(nats_err)
    }
}
