//! The clock of one host is stepped while a fleet applies: the
//! coordinator's wall clock jumps five minutes ahead and a worker's five
//! minutes back (as an NTP step does: the monotonic clock goes on). Leases
//! and ack waits run on monotonic clocks; a worker's heartbeat is stamped
//! by the NATS server, and its age must be read against the server's clock,
//! not the coordinator's, or a coordinator ahead takes every worker for
//! dead (`fleetform workers` lists none; a paused claim holder's task is
//! given away).
//!
//! Each stepped process runs under libfaketime (Debian's `libfaketime`,
//! which `tests/run.sh` installs), reading its offset from a file it
//! re-reads every second. Without libfaketime the test prints `SKIP:`.

use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, objects_per_name, run_in};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const LIBFAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
const COUNT: usize = 40;

/// The environment that runs a process on the offset in `file`.
fn stepped(file: &Path) -> Vec<(&'static str, String)> {
    vec![
        ("LD_PRELOAD", LIBFAKETIME.to_string()),
        ("FAKETIME_TIMESTAMP_FILE", file.display().to_string()),
        ("FAKETIME_CACHE_DURATION", "1".to_string()),
        // A step moves the wall clock only.
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_string()),
    ]
}

fn config() -> String {
    r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" {
  type = string
}

provider "sim" {
  store_dir  = var.store
  latency_ms = 250
}

resource "sim_object" "o" {
  count = 40
  name  = "o-${count.index}"
}
"#
    .to_string()
}

/// `fleetform workers`' output.
fn workers(config: &Path, coord: &str) -> String {
    let out = run_in(config, &[coord, "workers"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    out.stdout
}

fn listed(out: &str, ids: &[&str]) -> bool {
    ids.iter()
        .all(|w| out.lines().any(|l| l.split_whitespace().next() == Some(w)))
}

/// The process's wall clock as libfaketime gives it, by `date` under the
/// same environment: proof that the step took.
fn date_under(env: &[(&'static str, String)]) -> i64 {
    let out = std::process::Command::new("date")
        .arg("+%s")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

#[test]
fn a_stepped_clock_on_the_coordinators_or_a_workers_host_changes_nothing() {
    if !Path::new(LIBFAKETIME).exists() {
        println!("SKIP: clock step: {LIBFAKETIME} is missing (Debian package libfaketime)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config_dir = dir.join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("main.tf"), config()).unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());
    let coordinator_clock: PathBuf = dir.join("coordinator.clock");
    let worker_clock: PathBuf = dir.join("worker.clock");
    std::fs::write(&coordinator_clock, "+0\n").unwrap();
    std::fs::write(&worker_clock, "+0\n").unwrap();

    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start_full(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &[],
        &stepped(&coordinator_clock),
    )
    .unwrap();
    let coord = format!("--coordinator={}", coordinator.url);
    let _w1 = Worker::start(dir, &nats, "w1", 4).unwrap();
    let _w2 =
        Worker::start_full(dir, &nats, "w2", 4, &[], "info", &stepped(&worker_clock)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !listed(&workers(&config_dir, &coord), &["w1", "w2"]) {
        assert!(Instant::now() < deadline, "the workers never showed up");
        std::thread::sleep(Duration::from_millis(200));
    }

    let mut apply = BackgroundCli::start(
        &config_dir,
        &[&coord, "apply", "-auto-approve", "-var", &store_var],
        &[],
    )
    .unwrap();
    apply
        .wait_for("Creation complete", Duration::from_secs(60))
        .unwrap();
    // The steps, while creates go on.
    let real = date_under(&[]);
    std::fs::write(&coordinator_clock, "+5m\n").unwrap();
    std::fs::write(&worker_clock, "-5m\n").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let ahead = date_under(&stepped(&coordinator_clock)) - real;
    let behind = date_under(&stepped(&worker_clock)) - real;
    assert!(
        (290..=310).contains(&ahead),
        "the coordinator's clock is {ahead} s off"
    );
    assert!(
        (-310..=-290).contains(&behind),
        "the worker's clock is {behind} s off"
    );

    // Both workers are still live to the coordinator.
    let seen = workers(&config_dir, &coord);
    assert!(
        listed(&seen, &["w1", "w2"]),
        "after the steps the coordinator lists:\n{seen}"
    );

    let (code, out) = apply.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("Apply complete! Resources: {COUNT} added")),
        "{out}"
    );
    let stored = objects_per_name(&store);
    assert_eq!(stored.len(), COUNT, "{stored:?}");
    assert!(
        stored.values().all(|n| *n == 1),
        "an object was created twice: {stored:?}"
    );
    let replan = run_in(
        &config_dir,
        &[&coord, "plan", "-detailed-exitcode", "-var", &store_var],
    );
    assert_eq!(replan.code, 0, "{}", replan.all_output());
    let seen = workers(&config_dir, &coord);
    assert!(
        listed(&seen, &["w1", "w2"]),
        "at the end the coordinator lists:\n{seen}"
    );
}
