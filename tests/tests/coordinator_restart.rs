//! The coordinator dies in the middle of an apply. The one that starts in its
//! place (same data directory, same NATS, same S3) recovers the run: the
//! operations journaled before the crash and the results of the operations
//! that were in flight all reach the state, so no object is lost, and the
//! next plan has nothing to do.

use fleetform_tests::wait_for_log;
use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, run_in, sim_objects};
use std::time::Duration;

const FAST: usize = 4;
const SLOW: usize = 3;

const CONFIG: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" {
  type = string
}

provider "sim" {
  store_dir = var.store
}

provider "sim" {
  alias      = "slow"
  store_dir  = var.store
  latency_ms = 4000
}

resource "sim_object" "fast" {
  count = 4
  name  = "fast-${count.index}"
}

resource "sim_object" "slow" {
  provider = sim.slow
  count    = 3
  name     = "slow-${count.index}"
}
"#;

#[test]
fn a_restarted_coordinator_records_what_the_crashed_one_started() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("main.tf"), CONFIG).unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let mut first = Coordinator::start(dir, &nats, &s3).unwrap();
    let worker = Worker::start_with(
        dir,
        &nats,
        "w1",
        32,
        &[],
        "info,fleetform_worker::runtime=debug",
    )
    .unwrap();

    let mut cli = BackgroundCli::start(
        &config,
        &[
            &format!("--coordinator={}", first.url),
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
        ],
        &[],
    )
    .unwrap();
    for i in 0..FAST {
        cli.wait_for(
            &format!("sim_object.fast[{i}]: Creation complete"),
            Duration::from_secs(60),
        )
        .unwrap();
    }
    for i in 0..SLOW {
        wait_for_log(
            &worker.proc.log,
            &format!("apply Create sim_object.slow[{i}]"),
            Duration::from_secs(60),
        )
        .unwrap();
    }
    // The slow creates are in the provider's hands: the coordinator dies.
    first.proc.kill();
    let (code, _) = cli.finish(Duration::from_secs(60)).unwrap();
    assert_ne!(code, 0, "the CLI lost its coordinator");

    let second = Coordinator::start(dir, &nats, &s3).unwrap();
    wait_for_log(
        &second.proc.log,
        "recovered run interrupted by a restart",
        Duration::from_secs(60),
    )
    .unwrap();
    let log = second.proc.log_text();
    assert!(
        log.contains("late=3"),
        "the in-flight results arrived:\n{log}"
    );
    assert!(log.contains("in_doubt=0"), "{log}");

    let coord = format!("--coordinator={}", second.url);
    let list = run_in(&config, &[&coord, "state", "list"]);
    assert_eq!(list.code, 0, "{}", list.all_output());
    let mut listed: Vec<&str> = list.stdout.lines().collect();
    listed.sort();
    let mut expected: Vec<String> = (0..FAST)
        .map(|i| format!("sim_object.fast[{i}]"))
        .chain((0..SLOW).map(|i| format!("sim_object.slow[{i}]")))
        .collect();
    expected.sort();
    assert_eq!(listed, expected, "every created object is in the state");
    assert_eq!(sim_objects(&store), FAST + SLOW, "and nothing else exists");

    let plan = run_in(
        &config,
        &[&coord, "plan", "-detailed-exitcode", "-var", &store_var],
    );
    assert_eq!(
        plan.code,
        0,
        "state and objects agree, nothing to do:\n{}",
        plan.all_output()
    );
}
