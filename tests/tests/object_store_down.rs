//! The object store refuses service in the middle of an apply (a proxy in
//! front of it cuts every connection and refuses new ones): the run says
//! it waits, goes on when the store is back, and ends as it would have,
//! with every object once. Real nats-server, moto S3 behind the proxy, a
//! coordinator, a worker. Also: a snapshot a killed coordinator left in the
//! bucket without moving the head does not block the next run.

use fleetform_tests::{
    BackgroundCli, Coordinator, FlakyProxy, Nats, S3, Worker, run_in, sim_config, sim_objects,
};
use std::time::Duration;

const RESOURCES: &str = r#"
resource "sim_object" "first" {
  count = 10
  name  = "first-${count.index}"
}

resource "sim_object" "second" {
  count = 10
  name  = "second-${count.index}-after-${sim_object.first[count.index].id}"
}
"#;

fn outage(seconds: u64, lock_ttl: &str, latency_ms: u64) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let proxy = FlakyProxy::start(s3.port()).unwrap();
    let ttl = format!("--lock-ttl={lock_ttl}");
    let c = Coordinator::start_full(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &[&ttl, "--segment-ops=1"],
        &s3.env_via(proxy.port),
    )
    .unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 16).unwrap();
    let on = format!("--coordinator={}", c.url);

    let mut apply = BackgroundCli::start(
        &config,
        &[
            &on,
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            &format!("latency_ms={latency_ms}"),
        ],
        &[],
    )
    .unwrap();
    apply
        .wait_for("sim_object.first[0]: Creating...", Duration::from_secs(60))
        .unwrap();
    // A create runs only once its claim is in the object store: the
    // outage begins after the first creates were claimed.
    s3.wait_for_claims("states", 10, Duration::from_secs(60))
        .unwrap();
    proxy.set_down(true);
    std::thread::sleep(Duration::from_secs(seconds));
    // The run paused: without its store it could not finish (creates wait
    // for their claims, the snapshot for its write).
    assert!(
        !apply.is_finished(),
        "the apply ended while the object store was down"
    );
    proxy.set_down(false);
    let (code, out) = apply.finish(Duration::from_secs(180)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Apply complete! Resources: 20 added"), "{out}");
    assert_eq!(sim_objects(&store_dir), 20);
    let listed = run_in(&config, &[&on, "state", "list"]);
    assert_eq!(listed.stdout.lines().count(), 20, "{}", listed.all_output());
    let plan = run_in(&config, &[&on, "plan", "-var", &store_var]);
    assert!(plan.stdout.contains("No changes."), "{}", plan.all_output());
    // Nothing of the run is left in the store but its snapshot.
    assert!(
        s3.keys("states/projects.d/tests/default/runs/")
            .unwrap()
            .is_empty()
    );
    assert!(
        s3.keys("states/projects.d/tests/default/lock")
            .unwrap()
            .is_empty()
    );
    out
}

#[test]
fn a_twenty_second_object_store_outage_pauses_the_run_and_loses_nothing() {
    // Since claims live in the object store (issue 33) this run no longer
    // prints "Waiting for the state store" (it did before: the creates
    // ended during the outage and the snapshot write waited). Our reading,
    // not verified: the creates now wait for their claims during the
    // outage and end after it, so the snapshot write never meets it.
    // `outage` checks that the run paused, then lost and duplicated
    // nothing.
    let _out = outage(20, "30s", 1500);
}

/// Longer than the lease: nobody could take the workspace meanwhile (the
/// store refused everyone), so the holder keeps it once it renews it. The
/// first creates end after the lease expired: the second ones wait for the
/// renewal before they start.
#[test]
fn an_outage_longer_than_the_lease_pauses_the_run_and_loses_nothing() {
    let out = outage(20, "6s", 8000);
    assert!(out.contains("Waiting for the state lock"), "{out}");
}

/// The store out of reach when a run starts: taking the lock waits for it
/// (a resumed run once failed here at once, found by the long chaos run).
#[test]
fn a_run_started_while_the_store_is_down_waits_for_its_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let proxy = FlakyProxy::start(s3.port()).unwrap();
    let c = Coordinator::start_full(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &[],
        &s3.env_via(proxy.port),
    )
    .unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 16).unwrap();
    let on = format!("--coordinator={}", c.url);
    proxy.set_down(true);
    let mut apply = BackgroundCli::start(
        &config,
        &[&on, "apply", "-auto-approve", "-var", &store_var],
        &[],
    )
    .unwrap();
    apply
        .wait_for("Waiting for the state store", Duration::from_secs(60))
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    proxy.set_down(false);
    let (code, out) = apply.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Apply complete! Resources: 20 added"), "{out}");
    assert_eq!(sim_objects(&store_dir), 20);
}

/// A coordinator killed mid-apply and started again while the store is
/// down: its recovery waits for the store and then finishes the run (it
/// once gave up at the first store error, and with the run in its journal
/// no coordinator took it over: found by the long chaos run).
#[test]
fn a_coordinator_restarted_during_an_outage_finishes_its_run_once_the_store_is_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let proxy = FlakyProxy::start(s3.port()).unwrap();
    let env = s3.env_via(proxy.port);
    let start = |listen: &str| {
        Coordinator::start_full(dir, &nats, &s3, listen, "coordinator", &[], &env).unwrap()
    };
    let mut first = start("127.0.0.1:0");
    let _worker = Worker::start(dir, &nats, "w1", 16).unwrap();
    let on = format!("--coordinator={}", first.url);
    let mut apply = BackgroundCli::start(
        &config,
        &[
            &on,
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "latency_ms=1500",
        ],
        &[],
    )
    .unwrap();
    apply
        .wait_for("sim_object.first[0]: Creating...", Duration::from_secs(60))
        .unwrap();
    first.proc.kill();
    proxy.set_down(true);
    let addr = first.url.trim_start_matches("http://").to_string();
    let second = start(&addr);
    // Long enough for every retry of a single store request to fail.
    std::thread::sleep(Duration::from_secs(8));
    proxy.set_down(false);
    let (code, out) = apply.finish(Duration::from_secs(180)).unwrap();
    assert_eq!(code, 0, "{out}\n{}", second.proc.log_text());
    assert!(out.contains("Apply complete! Resources: 20 added"), "{out}");
    assert_eq!(sim_objects(&store_dir), 20);
    let listed = run_in(&config, &[&on, "state", "list"]);
    assert_eq!(listed.stdout.lines().count(), 20, "{}", listed.all_output());
    assert!(
        s3.keys("states/projects.d/tests/default/runs/")
            .unwrap()
            .is_empty()
    );
}

/// A coordinator killed between writing a run's snapshot and moving the
/// workspace's head leaves a snapshot object nothing references (written
/// here by hand, in moto). The next run replaces it and goes on; before,
/// every later write of that serial failed as a concurrent change.
#[test]
fn a_snapshot_left_uncommitted_in_the_bucket_does_not_block_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let store_var = format!("store={}", dir.join("sim-store").display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let c = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 16).unwrap();
    let on = format!("--coordinator={}", c.url);
    let out = run_in(
        &config,
        &[&on, "apply", "-auto-approve", "-var", &store_var],
    );
    assert_eq!(out.code, 0, "{}", out.all_output());
    let keys = s3.keys("states/projects.d/tests/default/states/").unwrap();
    let first = "states/projects.d/tests/default/states/00000000000000000001";
    assert_eq!(
        keys,
        vec![first.to_string()],
        "the layout this test expects"
    );
    s3.put(
        "states/projects.d/tests/default/states/00000000000000000002",
        b"left behind",
    )
    .unwrap();

    std::fs::write(
        config.join("more.tf"),
        "resource \"sim_object\" \"more\" {\n  name = \"more\"\n}\n",
    )
    .unwrap();
    let out = run_in(
        &config,
        &[&on, "apply", "-auto-approve", "-var", &store_var],
    );
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stdout.contains("1 added"), "{}", out.stdout);
    let list = run_in(&config, &[&on, "state", "list"]);
    assert_eq!(list.stdout.lines().count(), 21, "{}", list.all_output());
    let plan = run_in(
        &config,
        &[&on, "plan", "-detailed-exitcode", "-var", &store_var],
    );
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert_eq!(sim_objects(&dir.join("sim-store")), 21);
}
