//! JetStream forgets writes it had acknowledged (Jepsen, NATS 2.12.1: lazy
//! fsync and a power loss, or a truncated data file). Here nats-server is
//! killed mid-apply and restarted on a copy of its store taken earlier in
//! the run, so tasks, results and claims acknowledged since are gone; in a
//! second test it is killed and the newest block of every stream's data
//! is cut in half before it starts again. The
//! sim store is the truth: every instance must end with exactly one object,
//! the state must name exactly those, and nothing may hang.

use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, objects_per_name, run_in};
use std::time::{Duration, Instant};

const COUNT: usize = 60;

const CONFIG: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" {
  type = string
}

variable "count_n" {
  type = number
}

provider "sim" {
  store_dir  = var.store
  latency_ms = 400
}

resource "sim_object" "fleet" {
  count = var.count_n
  name  = "fleet-${count.index}"
}
"#;

/// How many creates the workers' logs say they started.
fn creates_started(workers: &[&Worker]) -> usize {
    workers
        .iter()
        .map(|w| {
            std::fs::read_to_string(&w.proc.log)
                .unwrap_or_default()
                .matches("apply Create sim_object.fleet[")
                .count()
        })
        .sum()
}

fn wait_creates(workers: &[&Worker], n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while creates_started(workers) < n {
        assert!(Instant::now() < deadline, "fewer than {n} creates started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The claims' round trips (worker → coordinator → object store → worker)
/// from the workers' `claim answered` lines: count, median and 90th
/// percentile, for the notes (the added latency of a mutating task).
fn claim_latency(workers: &[&Worker]) -> String {
    let mut took: Vec<u64> = workers
        .iter()
        .flat_map(|w| {
            let log = std::fs::read_to_string(&w.proc.log).unwrap_or_default();
            log.lines()
                .filter(|l| l.contains("claim answered"))
                .filter_map(|l| {
                    l.split("took_us=")
                        .nth(1)?
                        .split_whitespace()
                        .next()?
                        .parse()
                        .ok()
                })
                .collect::<Vec<u64>>()
        })
        .collect();
    took.sort_unstable();
    if took.is_empty() {
        return "none".into();
    }
    let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
    format!(
        "{} claims, median {} us, p90 {} us",
        took.len(),
        at(0.5),
        at(0.9)
    )
}

#[test]
fn a_queue_rolled_back_to_an_earlier_copy_creates_nothing_twice_and_settles() {
    apply_through(|nats, workers| {
        wait_creates(workers, 12);
        let snapshot = nats.snapshot().unwrap();
        wait_creates(workers, 36);
        nats.roll_back(&snapshot).unwrap();
    });
}

/// A crash that leaves the newest block of every stream's data torn (half
/// of it gone, as a disk that did not flush leaves it): nats-server must
/// start on it, and the run must settle what the queue forgot.
#[test]
fn a_queue_whose_data_files_are_truncated_creates_nothing_twice_and_settles() {
    apply_through(|nats, workers| {
        wait_creates(workers, 24);
        let cut = nats.kill_and_truncate_blocks().unwrap();
        eprintln!("truncated: {cut:?}");
        assert!(!cut.is_empty(), "no message block was found to truncate");
        nats.start_again().unwrap();
    });
}

/// An apply of [`COUNT`] instances on two workers, with `fault` done to
/// NATS while it goes; then every instance must have exactly one object,
/// the state exactly those, and a plan nothing to do.
fn apply_through(fault: impl FnOnce(&mut Nats, &[&Worker])) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config_dir = dir.join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("main.tf"), CONFIG).unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());
    let count_var = format!("count_n={COUNT}");
    let mut nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let coord = format!("--coordinator={}", coordinator.url);
    // A create delivered again whose claim was taken is looked up (the sim
    // finds objects by name) rather than reported interrupted.
    let fast = [
        "--ack-wait",
        "2",
        "--lookup-rule",
        "sim_object=sim_object(name)",
    ];
    let filter = "info,fleetform_worker::runtime=debug,fleetform_worker::source=debug";
    let w1 = Worker::start_with(dir, &nats, "w1", 4, &fast, filter).unwrap();
    let w2 = Worker::start_with(dir, &nats, "w2", 4, &fast, filter).unwrap();
    let apply_args = [
        coord.as_str(),
        "apply",
        "-auto-approve",
        "-var",
        &store_var,
        "-var",
        &count_var,
    ];

    let started = Instant::now();
    let cli = BackgroundCli::start(&config_dir, &apply_args, &[]).unwrap();
    fault(&mut nats, &[&w1, &w2]);
    let first = cli.finish(Duration::from_secs(150));
    let first_took = started.elapsed();
    match &first {
        Ok((code, out)) => eprintln!("first apply: exit {code} after {first_took:?}\n{out}"),
        Err(e) => eprintln!("first apply did not finish: {e}"),
    }
    let after_first = objects_per_name(&store);
    let twice: Vec<_> = after_first.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "instances with more than one object after the rollback: {twice:?}"
    );
    let (code, out) = first.expect("the first apply ends in bounded time");

    // A run that had to stop (interrupted operations reported) is finished
    // by a second apply.
    if code != 0 {
        let second = BackgroundCli::start(&config_dir, &apply_args, &[]).unwrap();
        let (code2, out2) = second
            .finish(Duration::from_secs(150))
            .expect("the second apply ends in bounded time");
        assert_eq!(code2, 0, "first:\n{out}\nsecond:\n{out2}");
    }

    eprintln!("claim round trips: {}", claim_latency(&[&w1, &w2]));

    let found = objects_per_name(&store);
    assert_eq!(found.len(), COUNT, "{found:?}");
    assert!(found.values().all(|n| *n == 1), "{found:?}");
    let listed = run_in(&config_dir, &[&coord, "state", "list"]);
    assert_eq!(listed.code, 0, "{}", listed.all_output());
    assert_eq!(listed.stdout.lines().count(), COUNT, "{}", listed.stdout);
    let plan = run_in(
        &config_dir,
        &[&coord, "plan", "-var", &store_var, "-var", &count_var],
    );
    assert!(plan.stdout.contains("No changes."), "{}", plan.all_output());
}
