//! A coordinator that dies with its disk: its applying run is finished by
//! another coordinator that has only NATS and the object store. While the
//! run goes, its state changes reach the object store in segments (so
//! `state list` elsewhere shows them); the new coordinator takes the run
//! over once the dead one's lease expires, under the same run id, and
//! nothing is created twice. Real nats-server, moto S3, a worker, the sim
//! provider.

use fleetform_tests::{
    BackgroundCli, Coordinator, FlakyProxy, Nats, S3, Worker, run_in, sim_config, sim_objects,
    wait_for_log,
};
use std::time::{Duration, Instant};

const RESOURCES: &str = r#"
resource "sim_object" "a" {
  name = "a"
}

resource "sim_object" "b" {
  name = "b-after-${sim_object.a.id}"
}

resource "sim_object" "c" {
  name = "c-after-${sim_object.b.id}"
}

resource "sim_object" "d" {
  name = "d-after-${sim_object.c.id}"
}
"#;

/// Polls `f` until it returns `Some`, for up to `timeout`.
fn eventually<T>(timeout: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn a_coordinator_on_a_fresh_host_finishes_the_run_of_one_that_died_with_its_disk() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let tuning = ["--segment-ops=1", "--lock-ttl=4s"];
    let mut a = Coordinator::start_with(dir, &nats, &s3, "127.0.0.1:0", "a", &tuning).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let on_a = format!("--coordinator={}", a.url);

    let mut apply = BackgroundCli::start(
        &config,
        &[
            &on_a,
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "latency_ms=2500",
        ],
        &[],
    )
    .unwrap();
    apply
        .wait_for("sim_object.b: Creation complete", Duration::from_secs(60))
        .unwrap();

    // Mid-run: the object store already has a and b (the run's segments),
    // which any reader of the state sees.
    let listed = eventually(Duration::from_secs(10), "a mid-run state", || {
        let out = run_in(&config, &[&on_a, "state", "list"]);
        (out.stdout.contains("sim_object.b")).then_some(out.stdout)
    });
    assert!(listed.contains("sim_object.a"), "{listed}");
    assert!(!listed.contains("sim_object.d"), "{listed}");
    let archived = s3.keys("states/projects.d/tests/default/runs/").unwrap();
    assert!(archived.iter().any(|k| k.ends_with("/run")), "{archived:?}");

    // The coordinator dies, and its disk with it.
    a.proc.kill();
    apply.kill();
    std::fs::remove_dir_all(dir.join("a-data")).unwrap();

    // A coordinator with nothing of its own takes the run over once the
    // dead one's lease expires, and finishes it under the same id.
    let b = Coordinator::start_with(dir, &nats, &s3, "127.0.0.1:0", "b", &tuning).unwrap();
    let on_b = format!("--coordinator={}", b.url);
    let run_id = eventually(Duration::from_secs(60), "the run taken over", || {
        let out = run_in(&config, &[&on_b, "runs", "list"]);
        out.stdout
            .lines()
            .find(|l| l.contains("(resumed)"))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
    });
    let watched = run_in(&config, &[&on_b, "runs", "watch", &run_id]);
    assert_eq!(watched.code, 0, "{}", watched.all_output());

    // Every object once: a and b from before, c and d (or whichever was
    // in flight) once, never twice.
    assert_eq!(sim_objects(&store_dir), 4);
    let listed = run_in(&config, &[&on_b, "state", "list"]);
    assert_eq!(
        listed.stdout.lines().collect::<Vec<_>>(),
        [
            "sim_object.a",
            "sim_object.b",
            "sim_object.c",
            "sim_object.d"
        ],
        "{}",
        listed.all_output()
    );
    let history = run_in(&config, &[&on_b, "state", "history"]);
    let rows: Vec<&str> = history.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{}", history.all_output());
    assert!(rows[0].contains(&run_id), "{}", history.all_output());
    // Nothing left of the run's archive, and the workspace is free.
    assert!(
        s3.keys("states/projects.d/tests/default/runs/")
            .unwrap()
            .is_empty()
    );
    let plan = run_in(&config, &[&on_b, "plan", "-var", &store_var]);
    assert!(plan.stdout.contains("No changes."), "{}", plan.all_output());
    let log = std::fs::read_to_string(dir.join("b.log")).unwrap();
    assert!(
        log.contains("taking over a run whose coordinator is gone"),
        "{log}"
    );
}

/// A coordinator back after its run was finished by another must not run
/// it again, however often it restarts (its journal once kept the run as
/// submitted, and a later restart ran it again: found by the long chaos run).
#[test]
fn a_coordinator_back_after_another_finished_its_run_leaves_it_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let tuning = ["--segment-ops=1", "--lock-ttl=4s"];
    let mut a = Coordinator::start_with(dir, &nats, &s3, "127.0.0.1:0", "a", &tuning).unwrap();
    let b = Coordinator::start_with(dir, &nats, &s3, "127.0.0.1:0", "b", &tuning).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let (on_a, on_b) = (
        format!("--coordinator={}", a.url),
        format!("--coordinator={}", b.url),
    );
    let listen_a = a.url.trim_start_matches("http://").to_string();

    let mut apply = BackgroundCli::start(
        &config,
        &[
            &on_a,
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
        .wait_for("sim_object.b: Creation complete", Duration::from_secs(60))
        .unwrap();
    a.proc.kill();
    apply.kill();
    // b takes it over and finishes it.
    let run_id = eventually(Duration::from_secs(60), "the run finished by b", || {
        let out = run_in(&config, &[&on_b, "runs", "list"]);
        out.stdout
            .lines()
            .find(|l| l.contains("succeeded (resumed)"))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
    });
    // a comes back twice on its data directory: it never runs it again.
    for _ in 0..2 {
        a = Coordinator::start_with(dir, &nats, &s3, &listen_a, "a", &tuning).unwrap();
        std::thread::sleep(Duration::from_secs(2));
        let listed = run_in(&config, &[&on_a, "runs", "list"]);
        assert!(!listed.stdout.contains("running"), "{}", listed.stdout);
        let log = std::fs::read_to_string(dir.join("a.log")).unwrap();
        assert!(!log.contains("running again"), "{log}");
        a.proc.kill();
    }
    let history = run_in(&config, &[&on_b, "state", "history"]);
    let rows: Vec<&str> = history.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{}", history.all_output());
    assert!(rows[0].contains(&run_id), "{}", history.all_output());
    assert_eq!(sim_objects(&store_dir), 4);
}

/// A coordinator whose run another took over, back on its data directory
/// while the store is down: its recovery waits for the store, and by then
/// the other has died too. Its journal misses what the other recorded (and
/// the result this one acknowledged meanwhile as nobody's): resuming from
/// it waited for ever (found by the long chaos run). It leaves its stale
/// copy and takes the run over from the archive and the queue instead.
#[test]
fn a_coordinator_back_with_a_stale_journal_takes_the_run_over_from_the_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let proxy = FlakyProxy::start(s3.port()).unwrap();
    let env = s3.env_via(proxy.port);
    let tuning = ["--segment-ops=1", "--lock-ttl=4s"];
    let start = |listen: &str, name: &str| {
        Coordinator::start_full(dir, &nats, &s3, listen, name, &tuning, &env).unwrap()
    };
    let mut a = start("127.0.0.1:0", "a");
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let on_a = format!("--coordinator={}", a.url);
    let listen_a = a.url.trim_start_matches("http://").to_string();
    let mut apply = BackgroundCli::start(
        &config,
        &[
            &on_a,
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "latency_ms=2500",
        ],
        &[],
    )
    .unwrap();
    apply
        .wait_for("sim_object.b: Creation complete", Duration::from_secs(60))
        .unwrap();
    a.proc.kill();
    apply.kill();
    // b takes the run over (a had dispatched c) and dispatches d.
    let mut b = start("127.0.0.1:0", "b");
    wait_for_log(
        &dir.join("b.log"),
        "operation=Apply resumed=true",
        Duration::from_secs(60),
    )
    .unwrap();
    // d's create runs only once its claim is in the store (issue 33): the
    // store goes down after that.
    s3.wait_for_claims("states", 4, Duration::from_secs(60))
        .unwrap();
    // The store goes down; a comes back (its recovery waits) and hears d's
    // result, which b dispatched, as nobody's.
    proxy.set_down(true);
    a = start(&listen_a, "a");
    eventually(Duration::from_secs(30), "d created", || {
        (sim_objects(&store_dir) == 4).then_some(())
    });
    std::thread::sleep(Duration::from_secs(1));
    // b dies before it can write the snapshot; its lease expires.
    b.proc.kill();
    std::thread::sleep(Duration::from_secs(6));
    proxy.set_down(false);
    let run_id = eventually(Duration::from_secs(60), "the run resumed by a", || {
        let out = run_in(&config, &[&on_a, "runs", "list"]);
        out.stdout
            .lines()
            .find(|l| l.contains("(resumed)"))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
    });
    let watched = run_in(&config, &[&on_a, "runs", "watch", &run_id]);
    assert_eq!(
        watched.code,
        0,
        "{}\n{}",
        watched.all_output(),
        a.proc.log_text()
    );
    assert_eq!(sim_objects(&store_dir), 4);
    let listed = run_in(&config, &[&on_a, "state", "list"]);
    assert_eq!(listed.stdout.lines().count(), 4, "{}", listed.all_output());
    let log = std::fs::read_to_string(dir.join("a.log")).unwrap();
    assert!(
        log.contains("the run was taken over by another coordinator; leaving it to the archive"),
        "{log}"
    );
    assert!(
        s3.keys("states/projects.d/tests/default/runs/")
            .unwrap()
            .is_empty()
    );
}
