//! fleetform's JetStream layout, created by whichever process comes
//! first (coordinator or worker): the task work queue, the result stream
//! and the key-value buckets, each kept on `replicas` servers.

use async_nats::jetstream::{self, kv, stream};
use fleetform_shared::wire::nats as names;
use std::time::Duration;

/// The work-queue stream of tasks, `fleetform.task.<pool>`.
pub fn task_stream(replicas: usize) -> stream::Config {
    stream::Config {
        name: names::TASK_STREAM.into(),
        subjects: vec![format!("{}.>", names::TASK_SUBJECT_PREFIX)],
        retention: stream::RetentionPolicy::WorkQueue,
        duplicate_window: names::DUPLICATE_WINDOW,
        num_replicas: replicas,
        ..Default::default()
    }
}

/// The stream of results, `fleetform.result.<run>`, kept a week.
pub fn result_stream(replicas: usize) -> stream::Config {
    stream::Config {
        name: names::RESULT_STREAM.into(),
        subjects: vec![format!("{}.>", names::RESULT_SUBJECT_PREFIX)],
        retention: stream::RetentionPolicy::Limits,
        max_age: Duration::from_secs(7 * 24 * 3600),
        duplicate_window: names::DUPLICATE_WINDOW,
        num_replicas: replicas,
        ..Default::default()
    }
}

fn warn_if_other(name: &str, has: usize, wanted: usize) {
    if has != wanted {
        tracing::warn!(
            stream = name,
            replicas = has,
            wanted,
            "the stream exists with another number of replicas; it keeps it (change it with `nats stream edit {name} --replicas {wanted}`)"
        );
    }
}

/// How long a process starting keeps trying to reach JetStream: a
/// cluster electing its leaders (all nodes starting at once, or one
/// restarting) answers nothing for a while.
const STARTUP_PATIENCE: Duration = Duration::from_secs(120);

/// Runs `attempt` until it succeeds or [`STARTUP_PATIENCE`] has passed,
/// waiting longer each time (0.25 s up to 5 s) and saying so once: for
/// what a process sets up at start (streams, buckets, its consumer).
pub async fn patiently<T, F, Fut>(what: &str, mut attempt: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let deadline = tokio::time::Instant::now() + STARTUP_PATIENCE;
    let mut wait = Duration::from_millis(250);
    let mut said = false;
    loop {
        match attempt().await {
            Ok(v) => {
                if said {
                    tracing::info!(what, "JetStream answers again");
                }
                return Ok(v);
            }
            Err(e) if tokio::time::Instant::now() + wait < deadline => {
                if !said {
                    tracing::warn!(what, error = %e, "JetStream does not answer yet (a cluster electing its leader?); retrying for up to 2 minutes");
                    said = true;
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Creates both streams when missing; returns the task stream.
pub async fn ensure_streams(
    js: &jetstream::Context,
    replicas: usize,
) -> anyhow::Result<stream::Stream> {
    let mut tasks = patiently(names::TASK_STREAM, || async {
        js.get_or_create_stream(task_stream(replicas))
            .await
            .map_err(|e| anyhow::anyhow!("stream {}: {e}", names::TASK_STREAM))
    })
    .await?;
    let mut results = patiently(names::RESULT_STREAM, || async {
        js.get_or_create_stream(result_stream(replicas))
            .await
            .map_err(|e| anyhow::anyhow!("stream {}: {e}", names::RESULT_STREAM))
    })
    .await?;
    for (name, s) in [
        (names::TASK_STREAM, &mut tasks),
        (names::RESULT_STREAM, &mut results),
    ] {
        if let Ok(info) = s.info().await {
            warn_if_other(name, info.config.num_replicas, replicas);
        }
    }
    Ok(tasks)
}

/// The key-value bucket `bucket`, created when missing (another process
/// creating it meanwhile is fine).
pub async fn bucket(
    js: &jetstream::Context,
    bucket: &str,
    max_age: Duration,
    replicas: usize,
) -> anyhow::Result<kv::Store> {
    patiently(bucket, || open_bucket(js, bucket, max_age, replicas)).await
}

async fn open_bucket(
    js: &jetstream::Context,
    bucket: &str,
    max_age: Duration,
    replicas: usize,
) -> anyhow::Result<kv::Store> {
    if let Ok(store) = js.get_key_value(bucket).await {
        return Ok(store);
    }
    match js
        .create_key_value(kv::Config {
            bucket: bucket.into(),
            history: 1,
            max_age,
            num_replicas: replicas,
            ..Default::default()
        })
        .await
    {
        Ok(store) => Ok(store),
        Err(e) => js
            .get_key_value(bucket)
            .await
            .map_err(|_| anyhow::anyhow!("key-value bucket {bucket}: {e}")),
    }
}
