//! A provider that throttles (sim with `throttle_above_per_second`: calls
//! beyond the rate are refused with "ThrottlingException: Rate exceeded",
//! having done nothing) and per-provider limits (`FLEETFORM_PROVIDER_LIMITS`
//! in embedded mode, `--provider-limit` on a worker): every object is still
//! created exactly once, the run shows the throttling and the lowered
//! limit, and the calls in flight never exceed the limit. The sim store's
//! operation log says when each create's call began and ended.

use fleetform_tests::{Coordinator, Nats, S3, Worker, fleetform, sim_config_with};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn config(dir: &Path, provider: &str, resource: &str, n: usize) -> PathBuf {
    let body = if resource == "sim_object" {
        r#"name = "x-${count.index}""#
    } else {
        r#"mode = "apply_error""#
    };
    let resources = format!("\nresource \"{resource}\" \"x\" {{\n  count = {n}\n  {body}\n}}\n");
    sim_config_with(dir, "cfg", provider, &resources)
}

struct Applied {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn apply(cfg: &Path, store: &Path, json: bool, env: &[(&str, String)]) -> Applied {
    let chdir = format!("-chdir={}", cfg.display());
    let var = format!("store={}", store.display());
    let mut args = vec![chdir.as_str(), "apply", "-auto-approve", "-var", &var];
    if json {
        args.push("-json");
    }
    let out = fleetform(&args, env).unwrap();
    Applied {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The creates of the store's operation log: (name, call began, ended).
fn creates(store: &Path) -> Vec<(String, u64, u64)> {
    std::fs::read_to_string(store.join("operations.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|op| op["op"] == "create")
        .map(|op| {
            (
                op["name"].as_str().unwrap().to_string(),
                op["started_ms"].as_u64().unwrap(),
                op["ts"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Every object created once, none twice.
fn assert_created_once(store: &Path, n: usize) {
    let creates = creates(store);
    let names: BTreeSet<&str> = creates.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        (creates.len(), names.len()),
        (n, n),
        "{n} objects, each created once"
    );
    assert_eq!(fleetform_tests::sim_objects(store), n);
}

/// The most create calls that were in the provider at once. A call's span
/// in the provider lies within the worker's slot for it, so this never
/// counts more than the worker let run; a call that ends in the
/// millisecond another starts is not counted with it.
fn most_in_flight(store: &Path) -> usize {
    let mut edges: Vec<(u64, i32)> = creates(store)
        .iter()
        .flat_map(|(_, start, end)| [(*start, 1), (*end, -1)])
        .collect();
    // Ends before starts at the same millisecond.
    edges.sort();
    let (mut now, mut most) = (0, 0);
    for (_, step) in edges {
        now += step;
        most = most.max(now);
    }
    most as usize
}

/// `(before, after)` of each "concurrency A → B" in `text`.
fn lowered(text: &str) -> Vec<(u32, u32)> {
    text.match_indices("throttled: concurrency ")
        .filter_map(|(i, m)| {
            let rest = &text[i + m.len()..];
            let (a, rest) = rest.split_once(" → ")?;
            let b: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect()
}

/// The run's warnings in `-json` output: (summary, detail).
fn json_warnings(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["type"] == "diagnostic" && m["diagnostic"]["severity"] == "warning")
        .map(|m| {
            let d = &m["diagnostic"];
            (
                d["summary"].as_str().unwrap_or_default().to_string(),
                d["detail"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

const SIM: &str = "registry.terraform.io/fleetform/sim";

#[test]
fn embedded_apply_through_a_throttling_provider_creates_everything_once_within_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    // 200 creates of 20 ms each, 40 a second allowed; at most 8 at once.
    let cfg = config(
        tmp.path(),
        "throttle_above_per_second = 40\n  latency_ms = 20",
        "sim_object",
        200,
    );
    let store = tmp.path().join("store");
    let out = apply(
        &cfg,
        &store,
        false,
        &[
            ("FLEETFORM_PROVIDER_PROCESSES", "1".into()),
            ("FLEETFORM_PROVIDER_LIMITS", "sim=8".into()),
        ],
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_created_once(&store, 200);
    // The warning, in the CLI's output, with the limit it went down to.
    let summary = format!("Warning: Provider {SIM} throttled: concurrency ");
    assert!(out.stdout.contains(&summary), "{}", out.stdout);
    let lowered = lowered(&out.stdout);
    assert!(
        lowered.iter().any(|(a, b)| b < a && *a <= 8),
        "the limit went down from at most 8: {lowered:?}\n{}",
        out.stdout
    );
    // Said now and then, not once per refused call (at least 160 of them).
    let notices = out.stdout.matches(&summary).count();
    assert!(notices < 40, "{notices} notices");
    let most = most_in_flight(&store);
    assert!((2..=8).contains(&most), "{most} creates in flight at once");
}

#[test]
fn a_provider_error_that_is_not_throttling_is_reported_at_once_not_retried() {
    let tmp = tempfile::tempdir().unwrap();
    // Every create fails ("Simulated failure"), and only one call a second
    // gets past the throttle: a retry would be refused as throttled, and
    // that error, after eight attempts, would be the one reported.
    let cfg = config(
        tmp.path(),
        "throttle_above_per_second = 1\n  failure_rate = 1",
        "sim_object",
        1,
    );
    let store = tmp.path().join("store");
    let out = apply(
        &cfg,
        &store,
        true,
        &[("FLEETFORM_PROVIDER_PROCESSES", "1".into())],
    );
    assert_eq!(out.code, Some(1), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("Simulated failure"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("ThrottlingException"),
        "{}",
        out.stdout
    );
    assert!(json_warnings(&out.stdout).is_empty(), "{}", out.stdout);
    assert!(creates(&store).is_empty());
}

#[test]
fn a_worker_keeps_a_throttling_provider_under_its_limit_and_tells_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start_with(
        dir,
        &nats,
        "w1",
        32,
        &["--provider-limit", "sim=4", "--provider-processes", "1"],
        "info",
    )
    .unwrap();
    let cfg = config(
        dir,
        "throttle_above_per_second = 30\n  latency_ms = 20",
        "sim_object",
        100,
    );
    let store = dir.join("store");
    let out = apply(
        &cfg,
        &store,
        true,
        &[("FLEETFORM_COORDINATOR", coordinator.url.clone())],
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_created_once(&store, 100);
    let warnings = json_warnings(&out.stdout);
    let throttled: Vec<&(String, String)> = warnings
        .iter()
        .filter(|(s, _)| s.starts_with(&format!("Provider {SIM} throttled: concurrency ")))
        .collect();
    assert!(!throttled.is_empty(), "{}", out.stdout);
    assert!(
        throttled[0].1.contains("on worker w1") && throttled[0].1.contains("up to 4"),
        "{throttled:?}"
    );
    let lowered: Vec<(u32, u32)> = throttled.iter().flat_map(|(s, _)| lowered(s)).collect();
    assert!(lowered.iter().any(|(a, b)| b < a && *a <= 4), "{lowered:?}");
    let most = most_in_flight(&store);
    assert!((2..=4).contains(&most), "{most} creates in flight at once");
}

/// Backpressure: a worker pulls no more tasks than it has free slots; the
/// rest wait in the stream, not in the worker. A task pulled ahead would
/// wait behind slow ones while its ack wait ran out, and then be delivered
/// again, possibly to another worker, which must report a create
/// delivered twice as interrupted rather than risk a second object. Here
/// 10 creates of 1 s each meet a worker that runs 2 at once: the pool's
/// consumer never has more than 2 tasks delivered and unacknowledged.
#[test]
fn a_worker_pulls_only_the_tasks_it_has_slots_for() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start_with(dir, &nats, "w1", 2, &["--ack-wait", "2"], "info").unwrap();
    let cfg = config(dir, "latency_ms = 1000", "sim_object", 10);
    let store = dir.join("store");
    let watching = AckPending::watch(&nats.url);
    let out = apply(
        &cfg,
        &store,
        false,
        &[("FLEETFORM_COORDINATOR", coordinator.url.clone())],
    );
    let (most, samples) = watching.stop();
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_created_once(&store, 10);
    assert!(samples > 20, "{samples} looks at the consumer");
    assert!(
        (1..=2).contains(&most),
        "{most} tasks delivered to the worker at once"
    );
}

/// Watches the default pool's consumer for the most tasks delivered and
/// not yet acknowledged.
struct AckPending {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<(u64, usize)>,
}

impl AckPending {
    fn watch(url: &str) -> AckPending {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (url, stopped) = (url.to_string(), stop.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async move {
                let client = async_nats::connect(&url).await.unwrap();
                let js = async_nats::jetstream::new(client);
                let (mut most, mut samples) = (0, 0);
                while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(stream) = js.get_stream("FLEETFORM_TASKS").await
                        && let Ok(info) = stream.consumer_info("fleetform-workers-default").await
                    {
                        most = most.max(info.num_ack_pending as u64);
                        samples += 1;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                (most, samples)
            })
        });
        AckPending { stop, thread }
    }

    /// The most seen, and how many times it looked.
    fn stop(self) -> (u64, usize) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// A cloud account's limit is the account's, whoever calls: the sim's
/// `account_writes_per_second` holds across every provider process on the
/// store. Three processes create 120 objects against 30 writes a second:
/// each is created once, the calls the account refused are retried, and
/// no second of the run saw more writes than a burst and a second's rate.
#[test]
fn an_account_limit_holds_across_provider_processes() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(
        tmp.path(),
        "account_writes_per_second = 30\n  latency_ms = 5",
        "sim_object",
        120,
    );
    let store = tmp.path().join("store");
    let out = apply(
        &cfg,
        &store,
        true,
        &[("FLEETFORM_PROVIDER_PROCESSES", "3".into())],
    );
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert_created_once(&store, 120);
    let warnings = json_warnings(&out.stdout);
    assert!(
        warnings
            .iter()
            .any(|(s, d)| s.starts_with(&format!("Provider {SIM} throttled"))
                && d.contains("ThrottlingException: Rate exceeded")),
        "{warnings:?}"
    );
    let log: Vec<serde_json::Value> = std::fs::read_to_string(store.join("operations.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let pids: BTreeSet<u64> = log.iter().filter_map(|o| o["pid"].as_u64()).collect();
    assert!(
        pids.len() >= 2,
        "creates from {} provider processes",
        pids.len()
    );
    let mut ends: Vec<u64> = log.iter().map(|o| o["ts"].as_u64().unwrap()).collect();
    ends.sort();
    // A burst of 30, then 30 a second: no window of one second holds more
    // than 60 (a margin of 2 for the gap between the token and the write).
    let busiest = ends
        .iter()
        .map(|t| ends.iter().filter(|u| **u >= *t && **u < t + 1000).count())
        .max()
        .unwrap();
    assert!(busiest <= 62, "{busiest} writes in one second");
    let span = ends.last().unwrap() - ends.first().unwrap();
    assert!(span >= 2_500, "120 writes at 30 a second took {span} ms");
}
