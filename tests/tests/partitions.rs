//! Faults between hosts (issue 33). Every process of the fleet runs in a
//! host of its own, a network namespace on one bridge (`netns.rs`):
//! nats-server, moto, the coordinator and the workers (with their `sim`
//! provider processes). Each test cuts the network between two hosts, or
//! pauses a worker, while an apply of slow creates goes, heals it after a
//! few seconds, and then requires what a user must be able to count on:
//! the apply ended (or failed with a clear, correct message), the sim
//! store holds exactly one object per instance (none twice, none lost),
//! `state list` names exactly the configuration's instances, and no lock
//! is left in the state store. Each prints what happened and how long it
//! took to settle.
//!
//! Found here and fixed: a worker paused (with its providers) past its ack
//! wait was taken for dead because it did not answer, so the worker that
//! got its tasks looked the objects up, found none yet and created them,
//! and the resumed worker's providers created them too (3 of 4 instances
//! got two objects, the apply said complete); now a silent holder with a
//! fresh heartbeat is waited for. And a second delivery waiting on a
//! first one dropped as a duplicate reported the create interrupted,
//! beating the real result; now it is dropped too. Set
//! `FLEETFORM_TEST_LOGS=DIR` to keep the processes' logs.

use fleetform_tests::netns::{Host, Net};
use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, run_in, sim_store_objects};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const CONFIG: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" {
  type = string
}

variable "n" {
  type = number
}

variable "latency_ms" {
  type    = number
  default = 0
}

provider "sim" {
  store_dir  = var.store
  latency_ms = var.latency_ms
}

resource "sim_object" "obj" {
  count = var.n
  name  = "obj-${count.index}"
}
"#;

const WORKER_FILTER: &str = "info,fleetform_worker::runtime=debug";

/// A short ack wait, so a worker cut off is redelivered from soon; a
/// create delivered again after its claim was taken is looked up by name.
const WORKER_ARGS: [&str; 4] = [
    "--ack-wait",
    "2",
    "--lookup-rule",
    "sim_object=sim_object(name)",
];

/// The fleet, each server in its host. Fields drop in order: processes
/// first, the namespaces (`net`) last.
struct Fleet {
    config_dir: PathBuf,
    store: PathBuf,
    coordinator: Coordinator,
    workers: Vec<Worker>,
    s3: S3,
    _nats: Nats,
    nats_host: Host,
    s3_host: Host,
    coord_host: Host,
    dir: PathBuf,
    started: Instant,
    net: Net,
    _tmp: tempfile::TempDir,
}

impl Fleet {
    /// nats-server, moto and a coordinator (with `coordinator_args`), each
    /// in its host; no workers yet.
    fn start(scenario: &str, coordinator_args: &[&str]) -> Option<Fleet> {
        let net = Net::create(scenario)?;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let config_dir = dir.join("config");
        std::fs::create_dir_all(&config_dir).unwrap();
        std::fs::write(config_dir.join("main.tf"), CONFIG).unwrap();
        let (nats_host, s3_host, coord_host) =
            (net.host("nats"), net.host("s3"), net.host("coord"));
        let nats = Nats::start_in(&dir, &nats_host).unwrap();
        let s3 = S3::start_in(&dir, &s3_host).unwrap();
        let coordinator =
            Coordinator::start_in(&dir, &coord_host, &nats, &s3, coordinator_args).unwrap();
        Some(Fleet {
            config_dir,
            store: dir.join("sim-store"),
            coordinator,
            workers: Vec::new(),
            s3,
            _nats: nats,
            nats_host,
            s3_host,
            coord_host,
            dir,
            started: Instant::now(),
            net,
            _tmp: tmp,
        })
    }

    /// A worker in a host of its own (named as the worker).
    fn worker(&mut self, id: &str) -> Host {
        self.worker_running(id, 16)
    }

    /// A worker running at most `concurrency` tasks at once.
    fn worker_running(&mut self, id: &str, concurrency: usize) -> Host {
        let host = self.net.host(id);
        let w = Worker::start_in(
            &self.dir,
            &host,
            &self._nats,
            id,
            concurrency,
            &WORKER_ARGS,
            WORKER_FILTER,
        )
        .unwrap();
        self.workers.push(w);
        host
    }

    fn say(&self, what: &str) {
        println!("[{:>5.1}s] {what}", self.started.elapsed().as_secs_f64());
    }

    fn coord(&self) -> String {
        format!("--coordinator={}", self.coordinator.url)
    }

    /// [`Fleet::finish`], then says how long after `since` (the `event`:
    /// "heal", "resume") the apply ended, and prints its output and the
    /// processes' notable log lines.
    fn finish_after(
        &self,
        apply: BackgroundCli,
        timeout: Duration,
        since: Instant,
        event: &str,
    ) -> (i32, String) {
        let (code, out) = self.finish(apply, timeout);
        self.say(&format!(
            "apply exited {code}, {:.1}s after the {event}",
            since.elapsed().as_secs_f64()
        ));
        println!("{out}");
        self.print_notable();
        (code, out)
    }

    /// Waits for `apply` to end; on a hang, prints every process's log.
    fn finish(&self, apply: BackgroundCli, timeout: Duration) -> (i32, String) {
        match apply.finish(timeout) {
            Ok(done) => done,
            Err(e) => {
                let mut logs = vec![("coordinator", self.coordinator.proc.log.clone())];
                for w in &self.workers {
                    logs.push((w.id.as_str(), w.proc.log.clone()));
                }
                for (name, path) in logs {
                    let text = std::fs::read_to_string(path).unwrap_or_default();
                    println!("==== {name}");
                    for line in text.lines() {
                        println!("{}", strip_ansi(line));
                    }
                }
                panic!("the apply did not end: {e}");
            }
        }
    }

    /// A second apply, run to its end: it must converge.
    fn apply_again(&self, n: usize) -> (i32, String) {
        self.finish(self.apply(n, 0), Duration::from_secs(60))
    }

    fn apply(&self, n: usize, latency_ms: u64) -> BackgroundCli {
        let coord = self.coord();
        let store = format!("store={}", self.store.display());
        let n = format!("n={n}");
        let latency = format!("latency_ms={latency_ms}");
        let args = [
            coord.as_str(),
            "apply",
            "-auto-approve",
            "-var",
            &store,
            "-var",
            &n,
            "-var",
            &latency,
        ];
        BackgroundCli::start(&self.config_dir, &args, &[]).unwrap()
    }

    /// Waits until `n` of `worker`'s creates have started (their claims
    /// were the first, the provider is called).
    fn wait_started(&self, worker: usize, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let log = std::fs::read_to_string(&self.workers[worker].proc.log).unwrap_or_default();
            let started = log
                .lines()
                .filter(|l| {
                    l.contains("task started") && l.contains("apply Create sim_object.obj[")
                })
                .count();
            if started == n {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{} started {started} of {n} creates:\n{log}",
                self.workers[worker].id
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Name → how many objects bear it.
    fn objects(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for name in sim_store_objects(&self.store).into_values() {
            *out.entry(name).or_default() += 1;
        }
        out
    }

    /// How many creates the sim's operation log records per name.
    fn creates(&self) -> BTreeMap<String, usize> {
        let log = std::fs::read_to_string(self.store.join("operations.log")).unwrap_or_default();
        let mut out = BTreeMap::new();
        for line in log.lines() {
            let op: serde_json::Value = serde_json::from_str(line).unwrap();
            if op["op"] == "create" {
                *out.entry(op["name"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
        }
        out
    }

    /// The locks in the state store.
    fn locks(&self) -> Vec<String> {
        self.s3
            .keys("states/")
            .unwrap()
            .into_iter()
            .filter(|k| k.ends_with("/lock"))
            .collect()
    }

    /// How many creates of `obj[0..n]` completed, by the operation log.
    fn created(&self) -> usize {
        self.creates().len()
    }

    /// One object and one create per instance `obj[0..n]`, `state list`
    /// names exactly them, and no lock is left.
    fn assert_converged(&self, n: usize) {
        let expected: BTreeMap<String, usize> = (0..n).map(|i| (format!("obj-{i}"), 1)).collect();
        let objects = self.objects();
        let creates = self.creates();
        self.say(&format!("objects per name: {objects:?}"));
        self.say(&format!("creates per name: {creates:?}"));
        assert_eq!(objects, expected, "one object per instance");
        assert_eq!(creates, expected, "one create per instance");
        let listed = run_in(&self.config_dir, &[&self.coord(), "state", "list"]);
        assert_eq!(listed.code, 0, "{}", listed.all_output());
        let want: Vec<String> = (0..n).map(|i| format!("sim_object.obj[{i}]")).collect();
        let mut got: Vec<String> = listed.stdout.lines().map(str::to_string).collect();
        got.sort_by_key(|a| index_of(a));
        assert_eq!(got, want, "the state names the instances");
        let locks = self.locks();
        assert!(locks.is_empty(), "locks left: {locks:?}");
    }

    /// The coordinator's log says `needle`.
    fn assert_logged(&self, needle: &str) {
        let log = self.coordinator.proc.log_text();
        assert!(
            log.contains(needle),
            "the coordinator never logged {needle:?}"
        );
    }

    /// Worker `i`'s log says `needle`.
    fn assert_worker_logged(&self, i: usize, needle: &str) {
        let w = &self.workers[i];
        let log = w.proc.log_text();
        assert!(log.contains(needle), "{} never logged {needle:?}", w.id);
    }

    /// The coordinator's and workers' lines about settling, claims and
    /// redeliveries, for the test's output.
    fn print_notable(&self) {
        let notable = [
            "overdue task",
            "delivered again",
            "not run as new",
            "resolved by lookup",
            "dropped without a result",
            "does not answer",
            "failed;",
            "lock",
        ];
        let mut logs = vec![("coordinator", self.coordinator.proc.log.clone())];
        for w in &self.workers {
            logs.push((w.id.as_str(), w.proc.log.clone()));
        }
        for (name, path) in logs {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            for line in text
                .lines()
                .filter(|l| notable.iter().any(|n| l.contains(n)))
            {
                println!("  {name}: {}", strip_ansi(line));
            }
        }
    }
}

impl Drop for Fleet {
    /// With `FLEETFORM_TEST_LOGS=DIR`, the processes' logs are kept there.
    fn drop(&mut self) {
        let Some(keep) = std::env::var_os("FLEETFORM_TEST_LOGS") else {
            return;
        };
        let to = PathBuf::from(keep).join(format!("partitions-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&to);
        for e in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            if e.path().extension().is_some_and(|x| x == "log") {
                let _ = std::fs::copy(e.path(), to.join(e.file_name()));
            }
        }
    }
}

fn index_of(addr: &str) -> usize {
    addr.rsplit('[')
        .next()
        .and_then(|r| r.trim_end_matches(']').parse().ok())
        .unwrap_or(usize::MAX)
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// 1. A worker cut off from NATS while its provider creates objects, healed
///    after 8 s; a second worker stays connected. JetStream delivers the
///    cut-off worker's tasks to the other once their ack wait passes; the
///    creates must still happen once each.
#[test]
fn a_worker_cut_off_from_nats_while_it_holds_tasks() {
    let Some(mut fleet) = Fleet::start("worker partitioned from NATS", &["--settle-after=5s"])
    else {
        return;
    };
    const N: usize = 6;
    let w1 = fleet.worker("w1");
    let apply = fleet.apply(N, 6000);
    fleet.wait_started(0, N);
    fleet.worker("w2");
    let nats_host = fleet.nats_host.clone();
    fleet.net.partition(&w1, &nats_host);
    fleet.say("w1 holds all creates (6 s each in the provider); w1 cut off from NATS");
    std::thread::sleep(Duration::from_secs(8));
    fleet.net.heal(&w1, &nats_host);
    let healed = Instant::now();
    fleet.say("healed");
    let (code, out) = fleet.finish_after(apply, Duration::from_secs(60), healed, "heal");
    fleet.assert_converged(N);
    // The fault hit: w2 was handed creates w1 held (it took none first).
    fleet.assert_worker_logged(1, ":apply:sim_object.obj[");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("Resources: {N} added")), "{out}");
}

/// Sends `signal` (`STOP`, `CONT`) to the worker's process and its
/// provider processes: the whole host pauses, as a frozen VM does.
fn signal_host(worker: &Worker, signal: &str) -> Vec<u32> {
    let mut pids = vec![worker.proc.pid()];
    pids.extend(fleetform_tests::children_of(worker.proc.pid()));
    let status = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .args(pids.iter().map(u32::to_string))
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pids:?}");
    pids
}

/// 2. A worker (with its provider processes) paused by SIGSTOP while its
///    creates are in the provider, past its ack wait, then resumed. The
///    other worker gets the tasks from the queue meanwhile; between them,
///    each object must be created once: the resumed worker finishes what
///    it had started, and the other must not create it too.
#[test]
fn a_worker_paused_past_its_ack_wait_and_resumed() {
    let Some(mut fleet) = Fleet::start("worker paused by SIGSTOP", &["--settle-after=5s"]) else {
        return;
    };
    const N: usize = 4;
    fleet.worker("w1");
    let apply = fleet.apply(N, 3000);
    fleet.wait_started(0, N);
    fleet.worker("w2");
    let paused = signal_host(&fleet.workers[0], "STOP");
    fleet.say(&format!(
        "w1 holds all creates (3 s each in the provider); w1 and its providers {paused:?} paused"
    ));
    std::thread::sleep(Duration::from_secs(12));
    signal_host(&fleet.workers[0], "CONT");
    let resumed = Instant::now();
    fleet.say("w1 resumed");
    let (code, out) = fleet.finish_after(apply, Duration::from_secs(60), resumed, "resume");
    fleet.assert_converged(N);
    // The fault hit: w2 was handed creates w1 held (it took none first).
    fleet.assert_worker_logged(1, ":apply:sim_object.obj[");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("Resources: {N} added")), "{out}");
}

/// 3. The coordinator cut off from the object store (state, lease, claims)
///    for 10 s, longer than its lock's time to live (9 s here), while an
///    apply goes: creates in flight finish on the workers, new ones wait
///    for their claims. The run completes or stops with a clear error; no
///    object is made twice or lost, and an apply after it converges.
#[test]
fn the_coordinator_cut_off_from_the_object_store_while_it_holds_the_lease() {
    let Some(mut fleet) = Fleet::start(
        "coordinator partitioned from the object store",
        &["--settle-after=5s", "--lock-ttl=9s"],
    ) else {
        return;
    };
    const N: usize = 8;
    fleet.worker_running("w1", 2);
    let apply = fleet.apply(N, 2000);
    fleet.wait_started(0, 2);
    let locks = fleet.locks();
    assert_eq!(
        locks.len(),
        1,
        "the run holds its workspace's lock: {locks:?}"
    );
    let (coord, s3) = (fleet.coord_host.clone(), fleet.s3_host.clone());
    fleet.net.partition(&coord, &s3);
    fleet.say("the coordinator cut off from the object store (2 creates running, 6 to go)");
    std::thread::sleep(Duration::from_secs(10));
    fleet.net.heal(&coord, &s3);
    let healed = Instant::now();
    fleet.say(&format!("healed; {} creates done so far", fleet.created()));
    let (code, out) = fleet.finish_after(apply, Duration::from_secs(90), healed, "heal");
    // The lease was contested: the coordinator could not renew it.
    fleet.assert_logged("renewing the state lock failed");
    // No object twice, whatever the run's end.
    let twice: Vec<_> = fleet
        .objects()
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    assert!(twice.is_empty(), "objects made twice: {twice:?}");
    if code != 0 {
        assert!(out.contains("Error"), "a failed apply says why:\n{out}");
        let (again, out2) = fleet.apply_again(N);
        fleet.say(&format!("second apply exited {again}"));
        println!("{out2}");
        assert_eq!(again, 0, "{out2}");
    } else {
        assert!(out.contains(&format!("Resources: {N} added")), "{out}");
    }
    fleet.assert_converged(N);
}

/// 4. The coordinator cut off from NATS for 8 s while workers run its
///    tasks: results wait in JetStream, claims go unanswered until it is
///    back. The run must finish with one object per instance.
#[test]
fn the_coordinator_cut_off_from_nats() {
    let Some(mut fleet) = Fleet::start("coordinator partitioned from NATS", &["--settle-after=5s"])
    else {
        return;
    };
    const N: usize = 8;
    fleet.worker_running("w1", 2);
    fleet.worker_running("w2", 2);
    let apply = fleet.apply(N, 2000);
    fleet.wait_started(0, 2);
    fleet.wait_started(1, 2);
    let (coord, nats) = (fleet.coord_host.clone(), fleet.nats_host.clone());
    fleet.net.partition(&coord, &nats);
    fleet.say(&format!(
        "the coordinator cut off from NATS; 4 creates running (2 s each), {} done",
        fleet.created()
    ));
    std::thread::sleep(Duration::from_secs(8));
    fleet.net.heal(&coord, &nats);
    let healed = Instant::now();
    fleet.say(&format!("healed; {} creates done so far", fleet.created()));
    let (code, out) = fleet.finish_after(apply, Duration::from_secs(90), healed, "heal");
    // Nothing completed while the coordinator was cut off: the first
    // creates (2 s in the provider) are seen done only after the heal.
    let slowest = out
        .lines()
        .filter_map(|l| l.split("Creation complete after ").nth(1))
        .filter_map(|r| r.split('s').next()?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    assert!(slowest >= 7, "a create reported after {slowest} s:\n{out}");
    fleet.assert_converged(N);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("Resources: {N} added")), "{out}");
}
