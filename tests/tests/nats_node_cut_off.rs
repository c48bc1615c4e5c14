//! One node of a three-node NATS cluster is cut off from the other two
//! while a fleet applies (issue 33): every process in a host of its own
//! (`netns.rs`), the streams kept on three replicas. The coordinator and
//! worker `wa` reach the cluster through nodes n1 and n2; worker `wb` only
//! through n3, so while n3 is cut off, wb still has its connection but n3
//! has no quorum: its JetStream calls (results, acks, pulls, heartbeats)
//! fail, and the core NATS requests between wb and the coordinator (task
//! claims, "what became of this task") find no route. After 10 s the cut
//! heals. The apply must end, each instance with exactly one object, the
//! state naming exactly them, and a plan with nothing to do.

use fleetform_tests::netns::Net;
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

provider "sim" {
  store_dir  = var.store
  latency_ms = 400
}

resource "sim_object" "obj" {
  count = 60
  name  = "obj-${count.index}"
}
"#;

/// A short ack wait, so wb's tasks are redelivered soon; a create
/// delivered again after its claim was taken is looked up by name.
const WORKER_ARGS: [&str; 4] = [
    "--ack-wait",
    "2",
    "--lookup-rule",
    "sim_object=sim_object(name)",
];

fn creates_started(w: &Worker) -> usize {
    std::fs::read_to_string(&w.proc.log)
        .unwrap_or_default()
        .matches("apply Create sim_object.obj[")
        .count()
}

#[test]
fn a_nats_node_cut_off_from_its_cluster_loses_and_duplicates_nothing() {
    let Some(net) = Net::create("natscut") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config_dir = dir.join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("main.tf"), CONFIG).unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());

    let (n1, n2, n3) = (net.host("n1"), net.host("n2"), net.host("n3"));
    let nodes = Nats::start_cluster_in(dir, &[n1.clone(), n2.clone(), n3.clone()]).unwrap();
    let s3_host = net.host("s3");
    let s3 = S3::start_in(dir, &s3_host).unwrap();
    let majority = format!("{},{}", nodes[0].url, nodes[1].url);
    let replicas = [("FLEETFORM_NATS_REPLICAS", "3".to_string())];
    let coord_host = net.host("coord");
    let coordinator =
        Coordinator::start_in_via(dir, &coord_host, &majority, &s3, &[], &replicas).unwrap();
    let filter = "info,fleetform_worker::runtime=debug";
    let (wa_host, wb_host) = (net.host("wa"), net.host("wb"));
    let wa = Worker::start_in_via(
        dir,
        &wa_host,
        &majority,
        "wa",
        8,
        &WORKER_ARGS,
        filter,
        &replicas,
    )
    .unwrap();
    let wb = Worker::start_in_via(
        dir,
        &wb_host,
        &nodes[2].url,
        "wb",
        8,
        &WORKER_ARGS,
        filter,
        &replicas,
    )
    .unwrap();
    let coord = format!("--coordinator={}", coordinator.url);

    let started = Instant::now();
    let apply = BackgroundCli::start(
        &config_dir,
        &[&coord, "apply", "-auto-approve", "-var", &store_var],
        &[],
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    while creates_started(&wb) < 4 {
        assert!(Instant::now() < deadline, "wb never started creates");
        std::thread::sleep(Duration::from_millis(20));
    }
    let cut_at = started.elapsed();
    net.partition(&n3, &n1);
    net.partition(&n3, &n2);
    std::thread::sleep(Duration::from_secs(10));
    net.heal(&n3, &n1);
    net.heal(&n3, &n2);
    let healed = Instant::now();
    let finished = apply.finish(Duration::from_secs(240));
    let settled = healed.elapsed();
    let (code, out) = finished.expect("the apply ends in bounded time");
    eprintln!(
        "cut at {cut_at:?} for 10 s; the apply ended {settled:?} after the heal, exit {code}; creates started: wa {}, wb {}\n{out}",
        creates_started(&wa),
        creates_started(&wb)
    );

    let per_name = objects_per_name(&store);
    let twice: Vec<_> = per_name.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "instances with two objects: {twice:?}");
    // A run that stopped with creates reported interrupted is finished by
    // the next apply (which looks nothing up: the state says what exists).
    if code != 0 {
        let again = run_in(
            &config_dir,
            &[&coord, "apply", "-auto-approve", "-var", &store_var],
        );
        assert_eq!(
            again.code,
            0,
            "first:\n{out}\nsecond:\n{}",
            again.all_output()
        );
    }
    let per_name = objects_per_name(&store);
    assert_eq!(per_name.len(), COUNT, "{per_name:?}");
    assert!(per_name.values().all(|n| *n == 1), "{per_name:?}");
    let listed = run_in(&config_dir, &[&coord, "state", "list"]);
    assert_eq!(listed.code, 0, "{}", listed.all_output());
    assert_eq!(listed.stdout.lines().count(), COUNT, "{}", listed.stdout);
    let plan = run_in(
        &config_dir,
        &[&coord, "plan", "-detailed-exitcode", "-var", &store_var],
    );
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    drop((wa, wb, coordinator, s3, nodes));
}
