//! The queue is transport, not the record: JetStream may lose messages it
//! acknowledged (Jepsen, NATS 2.12.1: lazy fsync and a power loss). Here
//! nats-server is rolled back to an earlier copy of its store after tasks
//! were published (and, in the second test, after a worker published a
//! task's result and acknowledged the task), so the run waits for results
//! nothing will send. The coordinator must notice the overdue tasks and
//! settle them (publish again what nobody took up, fetch the result from
//! the worker that has it), and the apply must end with one object per
//! instance and the state naming exactly those.

use fleetform_tests::{
    BackgroundCli, Coordinator, FlakyProxy, Nats, S3, Worker, run_id_in_log, run_in,
    sim_store_objects,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the coordinator waits for a result before it settles the task.
const SETTLE_AFTER: &str = "--settle-after=2s";

const PROVIDER: &str = r#"
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
  latency_ms = 300
}
"#;

/// Two layers: each upper object waits for its lower one, so the upper
/// layer's tasks are published while the lower layer runs.
const LAYERED: &str = r#"
resource "sim_object" "lower" {
  count = 12
  name  = "lower-${count.index}"
}

resource "sim_object" "upper" {
  count      = 12
  name       = "upper-${count.index}"
  depends_on = [sim_object.lower]
}
"#;

/// A chain: one task in flight at a time.
const CHAIN: &str = r#"
resource "sim_object" "a" {
  name = "chain-a"
}

resource "sim_object" "b" {
  name       = "chain-b"
  depends_on = [sim_object.a]
}

resource "sim_object" "c" {
  name       = "chain-c"
  depends_on = [sim_object.b]
}
"#;

const WORKER_FILTER: &str = "info,fleetform_worker::runtime=debug,fleetform_worker::source=debug";

/// A create delivered again whose claim is taken is looked up (the sim
/// finds objects by name); a short ack wait, so redeliveries come soon.
const WORKER_ARGS: [&str; 4] = [
    "--ack-wait",
    "2",
    "--lookup-rule",
    "sim_object=sim_object(name)",
];

/// How many lines of the worker's log hold every one of `needles`.
fn log_lines(worker: &Worker, needles: &[&str]) -> usize {
    std::fs::read_to_string(&worker.proc.log)
        .unwrap_or_default()
        .lines()
        .filter(|l| needles.iter().all(|n| l.contains(n)))
        .count()
}

fn wait_log(worker: &Worker, needles: &[&str], n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while log_lines(worker, needles) < n {
        assert!(
            Instant::now() < deadline,
            "fewer than {n} log lines with {needles:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Instance name → how many objects bear it.
fn objects_per_name(store: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for name in sim_store_objects(store).into_values() {
        *out.entry(name).or_default() += 1;
    }
    out
}

/// A fleet of nats-server, S3, a coordinator settling after 2 s (reaching
/// NATS through a proxy that can cut it off) and one worker, with
/// `resources` as the configuration.
struct Setup {
    _tmp: tempfile::TempDir,
    config_dir: std::path::PathBuf,
    store: std::path::PathBuf,
    nats: Nats,
    _s3: S3,
    coordinator: Coordinator,
    worker: Worker,
    /// Between the coordinator and NATS.
    proxy: FlakyProxy,
}

impl Setup {
    fn start(resources: &str) -> Setup {
        Setup::start_with(resources, &[])
    }

    /// [`Setup::start`] with more arguments of the coordinator.
    fn start_with(resources: &str, coordinator_args: &[&str]) -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let config_dir = dir.join("config");
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::write(config_dir.join("main.tf"), format!("{PROVIDER}{resources}")).unwrap();
        let store = dir.join("sim-store");
        let nats = Nats::start(dir).unwrap();
        let s3 = S3::start(dir).unwrap();
        let nats_port: u16 = nats.url.rsplit(':').next().unwrap().parse().unwrap();
        let proxy = FlakyProxy::start(nats_port).unwrap();
        let via = format!("nats://127.0.0.1:{}", proxy.port);
        let coordinator = Coordinator::start_via(
            dir,
            &via,
            &s3,
            "127.0.0.1:0",
            "coordinator",
            &[&[SETTLE_AFTER], coordinator_args].concat(),
            &[],
        )
        .unwrap();
        let worker = Worker::start_with(dir, &nats, "w1", 2, &WORKER_ARGS, WORKER_FILTER).unwrap();
        Setup {
            config_dir,
            store,
            nats,
            _s3: s3,
            coordinator,
            worker,
            proxy,
            _tmp: tmp,
        }
    }

    fn coord(&self) -> String {
        format!("--coordinator={}", self.coordinator.url)
    }

    fn store_var(&self) -> String {
        format!("store={}", self.store.display())
    }

    fn apply(&self) -> BackgroundCli {
        let (coord, store) = (self.coord(), self.store_var());
        let args = [coord.as_str(), "apply", "-auto-approve", "-var", &store];
        BackgroundCli::start(&self.config_dir, &args, &[]).unwrap()
    }

    /// The apply ended well, each of `names` has exactly one object, and
    /// the state lists them all.
    fn assert_settled(&self, apply: BackgroundCli, names: usize) {
        let finished = apply.finish(Duration::from_secs(40));
        let found = objects_per_name(&self.store);
        let twice: Vec<_> = found.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "instances with more than one object: {twice:?}"
        );
        let (code, out) = finished.expect("the apply ends although the queue lost messages");
        assert_eq!(code, 0, "{out}");
        assert_eq!(found.len(), names, "{found:?}");
        let listed = run_in(&self.config_dir, &[&self.coord(), "state", "list"]);
        assert_eq!(listed.code, 0, "{}", listed.all_output());
        assert_eq!(listed.stdout.lines().count(), names, "{}", listed.stdout);
        let coordinator_log = self.coordinator.proc.log_text();
        eprintln!(
            "settling actions in the coordinator's log:\n{}",
            coordinator_log
                .lines()
                .filter(|l| l.contains("overdue task"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn tasks_the_queue_lost_before_any_worker_took_them_are_published_again() {
    let mut s = Setup::start(LAYERED);
    let apply = s.apply();
    // The lower layer's tasks are all in the queue once the first runs.
    wait_log(
        &s.worker,
        &["task started", "apply Create sim_object.lower["],
        1,
    );
    let snapshot = s.nats.snapshot().unwrap();
    // Upper tasks are published as the lower layer ends; one worker of
    // two slots leaves most of them waiting in the queue, where the
    // rollback takes them.
    wait_log(
        &s.worker,
        &["task started", "apply Create sim_object.upper["],
        2,
    );
    s.nats.roll_back(&snapshot).unwrap();
    s.assert_settled(apply, 24);
    let log = s.coordinator.proc.log_text();
    assert!(
        log.contains("overdue task published again"),
        "no task was lost, so this test proved nothing:\n{log}"
    );
}

#[test]
fn a_result_the_queue_lost_is_fetched_from_the_worker_that_has_it() {
    // b goes through the queue, and its worker claims it.
    result_lost(
        &["--no-direct-dispatch"],
        &["claim answered", ":apply:sim_object.b"],
    );
}

#[test]
fn a_result_the_queue_lost_of_a_task_sent_directly_is_fetched_from_its_worker() {
    // b is sent to the worker that ran a, its claim written first.
    result_lost(&[], &["task started", "apply Create sim_object.b"]);
}

/// b's result is lost in a rollback after its worker published it; `b_on`:
/// the worker's log line saying b goes on.
fn result_lost(coordinator_args: &[&str], b_on: &[&str]) {
    let mut s = Setup::start_with(CHAIN, coordinator_args);
    let apply = s.apply();
    wait_log(&s.worker, &["task started", "apply Create sim_object.a"], 1);
    // a's task is in the copy; b's task and result will not be.
    let snapshot = s.nats.snapshot().unwrap();
    wait_log(&s.worker, b_on, 1);
    // The coordinator must not hear b's result before the rollback: cut
    // off, not stopped (a stopped process's socket still takes in what
    // the server sends it).
    s.proxy.set_down(true);
    wait_log(&s.worker, &["result published", ":apply:sim_object.b"], 1);
    let rolled_back = s.nats.roll_back(&snapshot);
    s.proxy.set_down(false);
    rolled_back.unwrap();
    s.assert_settled(apply, 3);
    let log = s.coordinator.proc.log_text();
    assert!(
        log.contains("its worker had finished it, and sent the result again"),
        "b's result was not fetched from its worker:\n{log}\nworker:\n{}",
        s.worker.proc.log_text()
    );
}

#[test]
fn tasks_a_restarted_coordinator_awaits_that_the_queue_lost_are_settled() {
    let mut s = Setup::start(LAYERED);
    // Before the run: rolling back to it loses every task of the apply.
    let before_the_run = s.nats.snapshot().unwrap();
    let mut apply = s.apply();
    // Completions are shown once journaled, and the journal write that
    // records a result also marks the tasks published by then: the lower
    // layer's tasks still queued are marked in flight.
    apply
        .wait_count(": Creation complete", 3, Duration::from_secs(60))
        .unwrap();
    let url = s.coordinator.url.clone();
    s.coordinator.proc.kill();
    let run_id = run_id_in_log(&s.coordinator.proc.log_text());
    let awaited = {
        use fleetform_coordinator::store::{Journal, open_db};
        let db = open_db(
            &s._tmp
                .path()
                .join("coordinator-data")
                .join("coordinator.redb"),
        )
        .unwrap();
        let journal = Journal::new(db);
        let answered = journal.answers(&run_id).unwrap();
        let in_flight: Vec<String> = journal
            .intents(&run_id)
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .filter(|id| !answered.contains_key(id))
            .collect();
        let published = journal.published_tasks(&run_id).unwrap();
        in_flight
            .into_iter()
            .filter(|id| published.contains(id))
            .count()
    };
    assert!(
        awaited > 0,
        "no task was in flight and marked published at the kill, so this test proves nothing"
    );
    eprintln!("{awaited} tasks in flight and published at the kill");
    s.nats.roll_back(&before_the_run).unwrap();
    let via = format!("nats://127.0.0.1:{}", s.proxy.port);
    let listen = url.trim_start_matches("http://").to_string();
    s.coordinator = Coordinator::start_via(
        s._tmp.path(),
        &via,
        &s._s3,
        &listen,
        "coordinator",
        &[SETTLE_AFTER],
        &[],
    )
    .unwrap();
    s.assert_settled(apply, 24);
    let log = s.coordinator.proc.log_text();
    assert!(
        log.contains("overdue task published again"),
        "no awaited task was settled:\n{log}"
    );
}
