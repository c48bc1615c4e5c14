//! A dependency goes down in the middle of an apply: the run pauses and
//! goes on when it is back, losing and repeating nothing. Real processes:
//! nats-server (killed and restarted on the same port and store), moto S3,
//! a coordinator, a worker, the CLI.

use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, run_in, wait_for_log};
use std::time::Duration;

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
  store_dir  = var.store
  latency_ms = 1500
}

resource "sim_object" "first" {
  count = 4
  name  = "first-${count.index}"
}

# Dispatched after the restart: they wait for the first ones.
resource "sim_object" "then" {
  count = 4
  name  = "then-${count.index}-${sim_object.first[count.index].id}"
}
"#;

#[test]
fn a_nats_restart_mid_apply_pauses_the_run_and_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("main.tf"), CONFIG).unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());
    let mut nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let worker = Worker::start_with(
        dir,
        &nats,
        "w1",
        16,
        &[],
        "info,fleetform_worker::runtime=debug",
    )
    .unwrap();
    let coord = format!("--coordinator={}", coordinator.url);
    let cli = BackgroundCli::start(
        &config,
        &[&coord, "apply", "-auto-approve", "-var", &store_var],
        &[],
    )
    .unwrap();
    for i in 0..4 {
        let started = format!("apply Create sim_object.first[{i}]");
        wait_for_log(&worker.proc.log, &started, Duration::from_secs(60)).unwrap();
    }
    // The creates are in the provider's hands: NATS goes away for 2 s.
    nats.restart(Duration::from_secs(2)).unwrap();

    let (code, out) = cli.finish(Duration::from_secs(180)).unwrap_or_else(|e| {
        panic!(
            "{e}\ncoordinator:\n{}\nworker:\n{}",
            coordinator.proc.log_text(),
            worker.proc.log_text()
        )
    });
    assert_eq!(
        code,
        0,
        "{out}\ncoordinator:\n{}",
        coordinator.proc.log_text()
    );
    assert!(out.contains("Apply complete! Resources: 8 added"), "{out}");
    let list = run_in(&config, &[&coord, "state", "list"]);
    assert_eq!(list.code, 0, "{}", list.all_output());
    assert_eq!(list.stdout.lines().count(), 8, "{}", list.stdout);
    assert_eq!(
        fleetform_tests::sim_objects(&store),
        8,
        "nothing lost, nothing made twice"
    );
}
