//! Background refresh (`fleetform-coordinator --refresh-every`): after a
//! workspace's apply, the coordinator reads its objects again on its own,
//! with the providers the apply configured, so drift shows in
//! `fleetform drift` with no plan run by anyone; and a user's apply that
//! finds a background refresh holding the workspace makes it give way
//! instead of failing on the lock. A fleet: nats-server, moto, a
//! coordinator, a worker, the sim provider with its read log.

use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, run_in, sim_stored};
use std::path::Path;
use std::time::{Duration, Instant};

/// Three objects; every provider call takes `latency_ms`.
fn config(store: &Path, latency_ms: u32) -> String {
    config_of(store, latency_ms, 3)
}

/// `count` objects; every provider call takes `latency_ms`.
fn config_of(store: &Path, latency_ms: u32, count: u32) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir  = "{}"
  latency_ms = {latency_ms}
}}

resource "sim_object" "o" {{
  count = {count}
  name  = "o-${{count.index}}"
  size  = 3
}}
"#,
        store.display()
    )
}

fn reads(store: &Path) -> usize {
    std::fs::read_to_string(store.join("reads.log"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// `fleetform drift` run until it finds drift (exit 2), for up to 30 s.
fn drift_found(cfg: &Path, coord: &str, what: &str) -> fleetform_tests::CliRun {
    let mut found = None;
    eventually(Duration::from_secs(30), what, || {
        let r = run_in(cfg, &[coord, "drift"]);
        let hit = r.code == 2;
        found = Some(r);
        hit
    });
    found.expect("a drift run")
}

/// Polls `check` every 200 ms until it holds, for up to `limit`.
fn eventually(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < limit,
            "{what} did not happen within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn the_coordinator_refreshes_in_the_background_finds_drift_and_gives_way() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (cfg, store) = (dir.join("cfg"), dir.join("store"));
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("main.tf"), config(&store, 800)).unwrap();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start_with(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &["--refresh-every=2s"],
    )
    .unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let coord = format!("--coordinator={}", coordinator.url);

    // Before any run there is nothing to refresh: no provider is known.
    std::thread::sleep(Duration::from_secs(3));
    assert!(!coordinator.proc.log_text().contains("background refresh"));

    let applied = run_in(&cfg, &[&coord, "apply", "-auto-approve"]);
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    std::fs::write(store.join("reads.log"), "").unwrap();

    // Nobody plans; the coordinator reads the three objects by itself.
    eventually(
        Duration::from_secs(30),
        "a background read of every object",
        || reads(&store) >= 3,
    );
    let none = run_in(&cfg, &[&coord, "drift"]);
    assert_eq!(none.code, 0, "{}", none.all_output());

    // o[1] drifts outside; a later background refresh finds it.
    let (path, mut doc) = sim_stored(&store, "o-1");
    doc["size"] = 9.into();
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let found = drift_found(&cfg, &coord, "drift found in the background");
    assert!(
        found.stdout.contains("  sim_object.o[1]  (read "),
        "{}",
        found.stdout
    );
    assert!(
        !found.stdout.contains("sim_object.o[0]"),
        "{}",
        found.stdout
    );
    // The state was not touched: a background refresh changes nothing.
    let shown = run_in(&cfg, &[&coord, "state", "show", "sim_object.o[1]"]);
    assert!(
        shown.stdout.contains("size") && shown.stdout.contains("= 3"),
        "{}",
        shown.stdout
    );

    // While a background refresh reads (each read takes 800 ms), a user's
    // apply comes, without -lock-timeout: the refresh gives way.
    let log_len = coordinator
        .proc
        .log_text()
        .matches("background refresh")
        .count();
    eventually(
        Duration::from_secs(30),
        "another background refresh",
        || {
            coordinator
                .proc
                .log_text()
                .matches("background refresh")
                .count()
                > log_len
        },
    );
    let apply = BackgroundCli::start(&cfg, &[&coord, "apply", "-auto-approve"], &[]).unwrap();
    let (code, out) = apply.finish(Duration::from_secs(90)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("9 -> 3"), "the apply puts o[1] back:\n{out}");
    let log = coordinator.proc.log_text();
    assert!(
        log.contains("a background refresh gives way to a run"),
        "the apply did not meet a background refresh, so this proves nothing about giving way:\n{log}"
    );
    // Applied away, the drift is gone.
    let gone = run_in(&cfg, &[&coord, "drift"]);
    assert_eq!(gone.code, 0, "{}", gone.all_output());
}

/// The read log's timestamps (ms), in order.
fn read_times(store: &Path) -> Vec<u64> {
    std::fs::read_to_string(store.join("reads.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect()
}

#[test]
fn background_reads_keep_to_their_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (cfg, store) = (dir.join("cfg"), dir.join("store"));
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("main.tf"), config_of(&store, 0, 8)).unwrap();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start_with(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &["--refresh-every=2s", "--refresh-rate=2"],
    )
    .unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let coord = format!("--coordinator={}", coordinator.url);
    let applied = run_in(&cfg, &[&coord, "apply", "-auto-approve"]);
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    std::fs::write(store.join("reads.log"), "").unwrap();
    eventually(Duration::from_secs(30), "eight background reads", || {
        read_times(&store).len() >= 8
    });
    // 2 per second with a burst of one second's worth: 2 at once, then
    // the other 6 over 3 seconds. Unpaced, the 8 reads take milliseconds.
    let times = read_times(&store);
    let span = times[7] - times[0];
    eprintln!("8 background reads over {span} ms");
    assert!(
        span >= 2_500,
        "8 reads at 2 per second took {span} ms: {times:?}"
    );
}

/// What a coordinator refreshes in the background outlives it: restarted
/// on the same data directory, it reads the workspace's objects again
/// with no run after the restart, and finds drift made meanwhile.
#[test]
fn a_restarted_coordinator_goes_on_refreshing_without_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (cfg, store) = (dir.join("cfg"), dir.join("store"));
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(cfg.join("main.tf"), config(&store, 0)).unwrap();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let args = ["--refresh-every=2s"];
    let mut coordinator =
        Coordinator::start_with(dir, &nats, &s3, "127.0.0.1:0", "coordinator", &args).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let coord = format!("--coordinator={}", coordinator.url);
    let applied = run_in(&cfg, &[&coord, "apply", "-auto-approve"]);
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    coordinator.proc.kill();

    // Drift made while no coordinator runs; no run after the restart.
    let (path, mut doc) = sim_stored(&store, "o-2");
    doc["size"] = 7.into();
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    std::fs::write(store.join("reads.log"), "").unwrap();
    let coordinator =
        Coordinator::start_with(dir, &nats, &s3, "127.0.0.1:0", "coordinator", &args).unwrap();
    let coord = format!("--coordinator={}", coordinator.url);
    eventually(
        Duration::from_secs(30),
        "a background read of every object after the restart",
        || reads(&store) >= 3,
    );
    let found = drift_found(&cfg, &coord, "drift found after the restart");
    assert!(
        found.stdout.contains("  sim_object.o[2]  (read "),
        "{}",
        found.stdout
    );
}
