//! Chaos, long form (`just chaos`; ignored in the normal test command,
//! whose short form is `chaos/short.rs`).
//!
//! A real fleet: nats-server, moto S3 behind a proxy that can refuse
//! service, two coordinators (one active, one standby, on the same NATS and
//! store), three workers with a lookup rule for `sim_object`. Three runs on
//! 2,000 `sim` instances in chains: an apply, an apply that renames every
//! instance (create_before_destroy replacements), a destroy. While each
//! runs, a driver with a fixed seed, at points measured in the sim store
//! (so independent of any process): SIGKILLs the active coordinator (either
//! restarted at once on its data directory, or left dead so the standby
//! takes the run over once the lease expires), SIGKILLs workers (restarted
//! at once), restarts nats-server once and makes the object store refuse
//! service for 20 seconds once, pauses workers, rolls NATS's data back
//! and tears its data files.
//!
//! The processes are hosts a network apart: every connection of a
//! coordinator (to NATS, to the object store) and of a worker (to NATS)
//! goes through a link of its own ([`LinkProxy`]) with a seeded round trip
//! of 2 to 10 ms and 0.2 % of its chunks lost once (a retransmission
//! timeout late). The driver also partitions links for seconds and heals
//! them: a worker from NATS, the active coordinator from the object store
//! or from NATS, and slows one link to a 50 ms round trip for 10 s. (A
//! NATS node cut off from its cluster is `tests/tests/nats_node_cut_off.rs`:
//! this fleet has one NATS server.)
//!
//! After every run: it ended succeeded, as without faults; the state equals
//! the sim store object for object (none lost, none duplicated, none
//! orphaned, every name as configured); no lock and nothing of the run is
//! left in the store. One line per run says what it survived.

use fleetform_tests::{
    BackgroundCli, Coordinator, FlakyProxy, Link, LinkProxy, Nats, Rng, S3, Worker, run_in,
    sim_config, sim_store_objects,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHAINS: usize = 100;
const LEVELS: usize = 20;
const TOTAL: usize = CHAINS * LEVELS;
const SEED: u64 = 0x0c4a_05f1_ee7d;
const TUNING: [&str; 3] = ["--lock-ttl=5s", "--segment-ops=50", "--segment-interval=1s"];
const WORKER_ARGS: [&str; 4] = [
    "--ack-wait",
    "3",
    "--lookup-rule",
    "sim_object=sim_object(name)",
];

/// Chains of `LEVELS` instances, each named after its generation and the
/// object before it: a new generation renames, so replaces, every one.
fn resources() -> String {
    let mut out =
        String::from("\nvariable \"generation\" {\n  type    = number\n  default = 1\n}\n");
    for l in 0..LEVELS {
        let after = if l == 0 {
            String::new()
        } else {
            format!("-after-${{sim_object.l{}[count.index].id}}", l - 1)
        };
        out.push_str(&format!(
            r#"
resource "sim_object" "l{l}" {{
  count = {CHAINS}
  name  = "l{l}-${{count.index}}-g${{var.generation}}{after}"
  lifecycle {{
    create_before_destroy = true
  }}
}}
"#
        ));
    }
    out
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// Generation 1 created.
    Create,
    /// Every instance renamed to generation 2.
    Replace,
    Destroy,
}

/// Operations done so far, as the sim store shows them.
fn progress(kind: Kind, store: &Path) -> usize {
    let objs = sim_store_objects(store);
    let generation = |g: &str| objs.values().filter(|n| n.contains(g)).count();
    match kind {
        Kind::Create => objs.len(),
        Kind::Replace => generation("-g2") + (TOTAL - generation("-g1")),
        Kind::Destroy => TOTAL - objs.len(),
    }
}

fn operations(kind: Kind) -> usize {
    match kind {
        Kind::Replace => 2 * TOTAL,
        _ => TOTAL,
    }
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Kill the active coordinator and start it again at once.
    CoordinatorRestart,
    /// Kill the active coordinator; the standby takes over.
    CoordinatorFailover,
    WorkerKill,
    NatsRestart,
    StoreOutage,
    /// SIGSTOP a worker and its provider processes for 6-10 s (past its
    /// ack wait, under its heartbeat TTL of 20 s), then SIGCONT.
    WorkerPause,
    /// Copy NATS's data directory, let the run go on 2-4 s, then kill
    /// nats-server and start it on the copy: every write it acknowledged
    /// meanwhile is lost (lazy fsync and a power loss).
    NatsRollback,
    /// Kill nats-server, cut the newest block of every stream in half,
    /// start it again (a torn data file).
    NatsTruncate,
    /// Partition a worker's link to NATS for 5-15 s, then heal it (half
    /// the time resetting its connections, as endpoints that gave up).
    WorkerCut,
    /// Partition the active coordinator's link to the object store for
    /// 5-10 s (past its lease's time to live of 5 s).
    CoordinatorStoreCut,
    /// Partition the active coordinator's link to NATS for 5-10 s.
    CoordinatorNatsCut,
    /// One link (a worker's or a coordinator's) at a 50 ms round trip for
    /// 10 s.
    SlowLink,
}

/// The links between the hosts: each coordinator's to NATS and to the
/// object store (through the proxy that makes store outages), each
/// worker's to NATS.
struct Links {
    base: Link,
    coordinator_nats: [Arc<LinkProxy>; 2],
    coordinator_store: [Arc<LinkProxy>; 2],
    workers: Vec<Arc<LinkProxy>>,
}

impl Links {
    fn start(base: Link, nats: &Nats, store_port: u16, workers: usize, rng: &mut Rng) -> Links {
        let nats_addr = nats.addr();
        let store_addr: std::net::SocketAddr = ([127, 0, 0, 1], store_port).into();
        let mut link = |upstream| {
            Arc::new(LinkProxy::local(upstream, rng.below(1 << 30) as u64, base).unwrap())
        };
        Links {
            base,
            coordinator_nats: [link(nats_addr), link(nats_addr)],
            coordinator_store: [link(store_addr), link(store_addr)],
            workers: (0..workers).map(|_| link(nats_addr)).collect(),
        }
    }

    /// Waits until none of `links` is partitioned: a process starting on
    /// a host cut off from NATS exits within seconds, by design (it says
    /// the server does not answer), and its supervisor starts it again
    /// until the network is back; this is that supervisor.
    fn wait_joined(links: &[&Arc<LinkProxy>]) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while links.iter().any(|l| l.link().partitioned) {
            assert!(Instant::now() < deadline, "a link stayed partitioned");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Partitions `link` for `secs`, then heals it (with `reset`, resetting
    /// its connections first), in the background.
    fn cut_for(link: &Arc<LinkProxy>, secs: u64, reset: bool) {
        link.partition();
        let link = link.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(secs));
            if reset {
                link.cut();
            }
            link.heal();
        });
    }
}

#[derive(Default)]
struct Survived {
    restarts: usize,
    failovers: usize,
    worker_kills: usize,
    nats_restarts: usize,
    outages: usize,
    pauses: usize,
    rollbacks: usize,
    truncations: usize,
    worker_cuts: usize,
    store_cuts: usize,
    nats_cuts: usize,
    slow_links: usize,
    /// Faults not applied because the run had ended.
    skipped: usize,
}

struct Fleet {
    dir: PathBuf,
    config: PathBuf,
    store: PathBuf,
    nats: Nats,
    s3: S3,
    proxy: std::sync::Arc<FlakyProxy>,
    links: Links,
    /// A coordinator killed by a failover, started again (as the standby)
    /// once the other has had time to take its run over: (slot, when).
    pending: Option<(usize, Instant)>,
    /// `a` and `b`, by slot; the active one is `active`.
    coordinators: [Option<Coordinator>; 2],
    addrs: [String; 2],
    active: usize,
    workers: Vec<Worker>,
}

const NAMES: [&str; 2] = ["a", "b"];

impl Fleet {
    fn start_coordinator(&self, slot: usize, listen: &str) -> Coordinator {
        Links::wait_joined(&[
            &self.links.coordinator_nats[slot],
            &self.links.coordinator_store[slot],
        ]);
        Coordinator::start_via(
            &self.dir,
            &format!("nats://{}", self.links.coordinator_nats[slot].addr),
            &self.s3,
            listen,
            NAMES[slot],
            &TUNING,
            &self
                .s3
                .env_via(self.links.coordinator_store[slot].addr.port()),
        )
        .unwrap()
    }

    fn url(&self, slot: usize) -> String {
        format!("--coordinator=http://{}", self.addrs[slot])
    }

    fn start_worker(&self, i: usize) -> Worker {
        Links::wait_joined(&[&self.links.workers[i - 1]]);
        Worker::start_via(
            &self.dir,
            &format!("nats://{}", self.links.workers[i - 1].addr),
            &format!("w{i}"),
            32,
            &WORKER_ARGS,
            "info,fleetform_worker::runtime=debug",
        )
        .unwrap()
    }

    fn apply_fault(&mut self, fault: Fault, rng: &mut Rng, survived: &mut Survived) {
        match fault {
            Fault::CoordinatorRestart => {
                let slot = self.active;
                if let Some(mut c) = self.coordinators[slot].take() {
                    c.proc.kill();
                }
                let listen = self.addrs[slot].clone();
                self.coordinators[slot] = Some(self.start_coordinator(slot, &listen));
                survived.restarts += 1;
            }
            Fault::CoordinatorFailover => {
                self.tick(true);
                let slot = self.active;
                if let Some(mut c) = self.coordinators[slot].take() {
                    c.proc.kill();
                }
                // The standby takes over once the lease expires; the dead
                // one comes back as the new standby after that.
                self.active = 1 - slot;
                self.pending = Some((slot, Instant::now() + Duration::from_secs(8)));
                survived.failovers += 1;
            }
            Fault::WorkerKill => {
                let i = rng.below(self.workers.len());
                self.workers[i].proc.kill();
                self.workers[i] = self.start_worker(i + 1);
                survived.worker_kills += 1;
            }
            Fault::NatsRestart => {
                self.nats.restart(Duration::from_secs(2)).unwrap();
                survived.nats_restarts += 1;
            }
            Fault::StoreOutage => {
                let proxy = self.proxy.clone();
                proxy.set_down(true);
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_secs(20));
                    proxy.set_down(false);
                });
                survived.outages += 1;
            }
            Fault::WorkerPause => {
                let i = rng.below(self.workers.len());
                let secs = 6 + rng.below(5) as u64;
                let pid = self.workers[i].proc.pid();
                let mut pids = vec![pid];
                pids.extend(fleetform_tests::children_of(pid));
                signal(&pids, "STOP");
                eprintln!(
                    "chaos long: w{} and its providers {pids:?} paused for {secs} s",
                    i + 1
                );
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_secs(secs));
                    // A worker killed meanwhile is gone: nothing to resume.
                    signal(&pids, "CONT");
                });
                survived.pauses += 1;
            }
            Fault::NatsRollback => {
                let snapshot = self.nats.snapshot().unwrap();
                let secs = 2 + rng.below(3) as u64;
                std::thread::sleep(Duration::from_secs(secs));
                self.nats.roll_back(&snapshot).unwrap();
                eprintln!("chaos long: NATS rolled back {secs} s");
                survived.rollbacks += 1;
            }
            Fault::NatsTruncate => {
                let cut = self.nats.kill_and_truncate_blocks().unwrap();
                self.nats.start_again().unwrap();
                eprintln!("chaos long: NATS data cut: {cut:?}");
                survived.truncations += 1;
            }
            Fault::WorkerCut => {
                let i = rng.below(self.workers.len());
                let secs = 5 + rng.below(11) as u64;
                let reset = rng.below(2) == 0;
                Links::cut_for(&self.links.workers[i], secs, reset);
                eprintln!(
                    "chaos long: w{} cut off from NATS for {secs} s{}",
                    i + 1,
                    if reset {
                        ", connections reset at the heal"
                    } else {
                        ""
                    }
                );
                survived.worker_cuts += 1;
            }
            Fault::CoordinatorStoreCut => {
                let secs = 5 + rng.below(6) as u64;
                Links::cut_for(&self.links.coordinator_store[self.active], secs, false);
                eprintln!(
                    "chaos long: coordinator {} cut off from the object store for {secs} s",
                    NAMES[self.active]
                );
                survived.store_cuts += 1;
            }
            Fault::CoordinatorNatsCut => {
                let secs = 5 + rng.below(6) as u64;
                Links::cut_for(&self.links.coordinator_nats[self.active], secs, false);
                eprintln!(
                    "chaos long: coordinator {} cut off from NATS for {secs} s",
                    NAMES[self.active]
                );
                survived.nats_cuts += 1;
            }
            Fault::SlowLink => {
                let all: Vec<(String, Arc<LinkProxy>)> = self
                    .links
                    .workers
                    .iter()
                    .enumerate()
                    .map(|(i, l)| (format!("w{}'s to NATS", i + 1), l.clone()))
                    .chain((0..2).flat_map(|c| {
                        [
                            (
                                format!("coordinator {}'s to NATS", NAMES[c]),
                                self.links.coordinator_nats[c].clone(),
                            ),
                            (
                                format!("coordinator {}'s to the store", NAMES[c]),
                                self.links.coordinator_store[c].clone(),
                            ),
                        ]
                    }))
                    .collect();
                let (name, link) = all[rng.below(all.len())].clone();
                let base = self.links.base;
                link.set(Link {
                    one_way: Duration::from_millis(25),
                    ..link.link()
                });
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_secs(10));
                    link.set(Link {
                        one_way: base.one_way,
                        ..link.link()
                    });
                });
                eprintln!("chaos long: link {name} at a 50 ms round trip for 10 s");
                survived.slow_links += 1;
            }
        }
    }

    /// Starts the coordinator a failover left dead once it is time (or at
    /// once with `now`).
    fn tick(&mut self, now: bool) {
        if let Some((slot, at)) = self.pending
            && (now || Instant::now() >= at)
        {
            if now {
                std::thread::sleep(at.saturating_duration_since(Instant::now()));
            }
            self.pending = None;
            let listen = self.addrs[slot].clone();
            self.coordinators[slot] = Some(self.start_coordinator(slot, &listen));
        }
    }

    /// How the run ended, once no coordinator runs it any more (`None`:
    /// still running somewhere, or not known yet). A coordinator that lost
    /// the run to the other reports it failed there; the one that finished
    /// it reports how it ended, which is the run's end.
    fn status(&self, run_id: &str) -> Option<String> {
        let mut ends = Vec::new();
        for slot in 0..2 {
            if self.coordinators[slot].is_none() {
                continue;
            }
            let out = run_in(&self.config, &[&self.url(slot), "runs", "list"]);
            if let Some(line) = out.stdout.lines().find(|l| l.starts_with(run_id)) {
                let status = line.split_whitespace().nth(3).unwrap_or_default();
                if status == "running" {
                    return None;
                }
                ends.push(status.to_string());
            }
        }
        // A coordinator that lost the run reports it failed there while its
        // archive waits for another to take it over: not the end yet.
        let archived = self
            .s3
            .keys(&format!("states/projects.d/tests/default/runs/{run_id}/"))
            .unwrap_or_default();
        if !archived.is_empty() && !ends.iter().any(|s| s == "succeeded") {
            return None;
        }
        if ends.iter().any(|s| s == "succeeded") {
            return Some("succeeded".into());
        }
        ends.into_iter().next()
    }

    /// Runs one command under faults; returns the run id and its status.
    fn run(
        &mut self,
        kind: Kind,
        args: &[&str],
        faults: &[(usize, Fault)],
        rng: &mut Rng,
        survived: &mut Survived,
    ) -> (String, String) {
        let before = run_in(&self.config, &[&self.url(self.active), "runs", "list"]).stdout;
        let url = self.url(self.active);
        let mut all = vec![url.as_str()];
        all.extend_from_slice(args);
        let _cli = BackgroundCli::start(&self.config, &all, &[]).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let run_id = loop {
            let listed = run_in(&self.config, &[&url, "runs", "list"]).stdout;
            if let Some(id) = listed
                .lines()
                .skip(1)
                .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
                .find(|id| !before.contains(id.as_str()))
            {
                break id;
            }
            assert!(Instant::now() < deadline, "the run never started");
            std::thread::sleep(Duration::from_millis(200));
        };
        for &(at, fault) in faults {
            let deadline = Instant::now() + Duration::from_secs(300);
            while progress(kind, &self.store) < at && self.status(&run_id).is_none() {
                self.tick(false);
                assert!(
                    Instant::now() < deadline,
                    "{kind:?}: stuck at {} of {} operations before fault {fault:?} at {at}",
                    progress(kind, &self.store),
                    operations(kind)
                );
                std::thread::sleep(Duration::from_millis(200));
            }
            // Faults after the end would test nothing of this run.
            if self.status(&run_id).is_some() {
                survived.skipped += 1;
                continue;
            }
            self.apply_fault(fault, rng, survived);
        }
        let deadline = Instant::now() + Duration::from_secs(600);
        let status = loop {
            self.tick(false);
            if let Some(s) = self.status(&run_id) {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "{kind:?}: run {run_id} did not end ({} of {} operations)",
                progress(kind, &self.store),
                operations(kind)
            );
            std::thread::sleep(Duration::from_secs(1));
        };
        // Both coordinators up for the checks and the next run.
        self.tick(true);
        (run_id, status)
    }

    /// Creates (and other operations that must not run twice) of `run_id`
    /// that a worker started more than once without a lookup first finding
    /// that the earlier start had done nothing: should be none. Read from
    /// the workers' logs (appended across restarts).
    fn repeated(&self, run_id: &str) -> Vec<String> {
        let mut started: BTreeMap<String, usize> = BTreeMap::new();
        let mut absent: BTreeMap<String, usize> = BTreeMap::new();
        for i in 1..=self.workers.len() {
            let log = std::fs::read_to_string(self.dir.join(format!("worker-w{i}.log")))
                .unwrap_or_default();
            for line in log.lines() {
                let Some(id) = line
                    .split("task_id=")
                    .nth(1)
                    .and_then(|r| r.split_whitespace().next())
                else {
                    continue;
                };
                if !id.starts_with(&format!("{run_id}:apply:")) {
                    continue;
                }
                if line.contains("task started") && line.contains("what=apply Create") {
                    *started.entry(id.to_string()).or_default() += 1;
                } else if line.contains("no object, so it is created now") {
                    *absent.entry(id.to_string()).or_default() += 1;
                }
            }
        }
        started
            .into_iter()
            .filter(|(id, n)| *n > 1 + absent.get(id).copied().unwrap_or(0))
            .map(|(id, n)| format!("{id} started {n} times"))
            .collect()
    }

    /// Compares the state with the sim store; returns (objects checked,
    /// mismatches), printing each mismatch.
    fn check(&self, generation: Option<usize>) -> (usize, usize) {
        let pulled = run_in(&self.config, &[&self.url(self.active), "state", "pull"]);
        assert_eq!(pulled.code, 0, "{}", pulled.all_output());
        let mut in_state: BTreeMap<String, String> = BTreeMap::new();
        let mut mismatches = 0;
        if !pulled.stdout.trim().is_empty() {
            let doc: serde_json::Value = serde_json::from_str(&pulled.stdout).unwrap();
            for r in doc["resources"].as_array().unwrap() {
                for i in r["instances"].as_array().unwrap() {
                    if i.get("deposed").is_some() {
                        eprintln!("mismatch: deposed object left in state: {i}");
                        mismatches += 1;
                    }
                    let a = &i["attributes"];
                    let (id, name) = (a["id"].as_str().unwrap(), a["name"].as_str().unwrap());
                    in_state.insert(id.to_string(), name.to_string());
                }
            }
        }
        let in_store = sim_store_objects(&self.store);
        for (id, name) in &in_state {
            match in_store.get(id) {
                None => {
                    eprintln!("mismatch: {name} ({id}) in state, not in the sim store (lost)");
                    mismatches += 1;
                }
                Some(n) if n != name => {
                    eprintln!("mismatch: {id} is {name} in state, {n} in the store");
                    mismatches += 1;
                }
                Some(_) => {}
            }
        }
        for (id, name) in &in_store {
            if !in_state.contains_key(id) {
                eprintln!("mismatch: {name} ({id}) in the sim store, not in state (orphaned)");
                mismatches += 1;
            }
        }
        let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
        for name in in_store.values() {
            let key: String = name.split("-after-").next().unwrap_or(name).to_string();
            *by_name.entry(key).or_default() += 1;
        }
        for (name, n) in &by_name {
            if *n > 1 {
                eprintln!("mismatch: {n} objects for {name} (duplicated)");
                mismatches += n - 1;
            }
        }
        let expected = generation.map_or(0, |_| TOTAL);
        if in_store.len() != expected {
            eprintln!(
                "mismatch: {} objects, {expected} configured",
                in_store.len()
            );
            mismatches += in_store.len().abs_diff(expected);
        }
        if let Some(g) = generation {
            let wrong = in_store
                .values()
                .filter(|n| !n.contains(&format!("-g{g}")))
                .count();
            if wrong > 0 {
                eprintln!("mismatch: {wrong} objects of another generation than {g}");
                mismatches += wrong;
            }
        }
        let left = self
            .s3
            .keys("states/projects.d/tests/default/runs/")
            .unwrap();
        if !left.is_empty() {
            eprintln!("mismatch: the run's archive is left in the store: {left:?}");
            mismatches += left.len();
        }
        // Planning takes the workspace's lock: it fails at once if a lock
        // is left; and it finds nothing to do if the run ended as it would
        // have without faults.
        let store_var = format!("store={}", self.store.display());
        let plan = match generation {
            Some(g) => run_in(
                &self.config,
                &[
                    &self.url(self.active),
                    "plan",
                    "-detailed-exitcode",
                    "-var",
                    &store_var,
                    "-var",
                    &format!("generation={g}"),
                ],
            ),
            None => run_in(
                &self.config,
                &[
                    &self.url(self.active),
                    "plan",
                    "-destroy",
                    "-detailed-exitcode",
                    "-var",
                    &store_var,
                ],
            ),
        };
        if plan.code != 0 {
            let out = plan.all_output();
            let tail: Vec<&str> = out.lines().rev().take(12).collect();
            eprintln!(
                "mismatch: the plan after the run is not empty or failed (exit {}):\n{}",
                plan.code,
                tail.join("\n")
            );
            mismatches += 1;
        }
        (in_store.len().max(in_state.len()), mismatches)
    }
}

/// `terraform-provider-sim` processes whose parent is gone (re-parented
/// to init).
fn stray_providers() -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm is cut to 15 characters.
        let Some((comm, rest)) = stat.split_once(") ") else {
            continue;
        };
        let ppid: u32 = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if comm.ends_with("terraform-provi") && ppid == 1 {
            out.push(pid);
        }
    }
    out
}

/// Sends `-name` to `pids` (some may be gone by then).
fn signal(pids: &[u32], name: &str) {
    let _ = std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .args(pids.iter().map(u32::to_string))
        .stderr(std::process::Stdio::null())
        .status();
}

/// `n` fault points in 1..total, sorted, each with the fault `pick` gives.
fn schedule(rng: &mut Rng, total: usize, faults: &[Fault]) -> Vec<(usize, Fault)> {
    let mut out: Vec<(usize, Fault)> = faults
        .iter()
        .map(|f| (total / 30 + rng.below(total / 2), *f))
        .collect();
    out.sort_by_key(|(at, _)| *at);
    out
}

#[test]
#[ignore = "long: run with `just chaos`"]
fn chaos_long_form() {
    // CHAOS_KEEP=1 keeps the directory (logs, stores) for a post-mortem.
    let tmp = tempfile::tempdir().unwrap();
    let dir = if std::env::var_os("CHAOS_KEEP").is_some() {
        let kept = tmp.keep();
        eprintln!("chaos long: keeping {}", kept.display());
        kept
    } else {
        tmp.path().to_path_buf()
    };
    fleetform_tests::append_logs();
    let config = sim_config(&dir, "config", &resources());
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());
    let nats = Nats::start(&dir).unwrap();
    let s3 = S3::start(&dir).unwrap();
    let proxy = FlakyProxy::start(s3.port()).unwrap();
    // CHAOS_SEED=N (decimal or 0x hex) for another schedule of faults.
    let seed = std::env::var("CHAOS_SEED")
        .ok()
        .map(|v| match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16).expect("CHAOS_SEED in hex"),
            None => v.parse().expect("CHAOS_SEED as a number"),
        })
        .unwrap_or(SEED);
    println!("chaos long: seed {seed:#x}");
    let mut rng = Rng(seed);
    let rtt = Duration::from_millis(2 + rng.below(9) as u64);
    let base = Link {
        loss: 0.002,
        ..Link::round_trip(rtt)
    };
    println!(
        "chaos long: every link between hosts at a {rtt:?} round trip, {:.1} % of chunks lost once",
        base.loss * 100.0
    );
    let links = Links::start(base, &nats, proxy.port, 3, &mut rng);
    let mut fleet = Fleet {
        dir: dir.clone(),
        config,
        store,
        nats,
        s3,
        proxy: std::sync::Arc::new(proxy),
        links,
        pending: None,
        coordinators: [None, None],
        addrs: [String::new(), String::new()],
        active: 0,
        workers: Vec::new(),
    };
    for slot in 0..2 {
        let c = fleet.start_coordinator(slot, "127.0.0.1:0");
        fleet.addrs[slot] = c.url.trim_start_matches("http://").to_string();
        fleet.coordinators[slot] = Some(c);
    }
    fleet.workers = (1..=3).map(|i| fleet.start_worker(i)).collect();
    use Fault::*;
    // (what, command, generation configured after it, faults to inject)
    type Run<'a> = (Kind, Vec<&'a str>, Option<usize>, Vec<Fault>);
    let runs: [Run<'_>; 3] = [
        (
            Kind::Create,
            vec![
                "apply",
                "-auto-approve",
                "-var",
                &store_var,
                "-var",
                "generation=1",
            ],
            Some(1),
            vec![
                CoordinatorRestart,
                CoordinatorFailover,
                CoordinatorRestart,
                CoordinatorFailover,
                CoordinatorRestart,
                WorkerKill,
                WorkerKill,
                WorkerKill,
                WorkerKill,
                WorkerKill,
                StoreOutage,
                WorkerPause,
                NatsRollback,
                WorkerCut,
                CoordinatorStoreCut,
                SlowLink,
            ],
        ),
        (
            Kind::Replace,
            vec![
                "apply",
                "-auto-approve",
                "-var",
                &store_var,
                "-var",
                "generation=2",
            ],
            Some(2),
            vec![
                CoordinatorRestart,
                CoordinatorFailover,
                CoordinatorRestart,
                CoordinatorFailover,
                CoordinatorRestart,
                WorkerKill,
                WorkerKill,
                WorkerKill,
                WorkerKill,
                WorkerKill,
                NatsRestart,
                WorkerPause,
                NatsTruncate,
                WorkerCut,
                CoordinatorNatsCut,
                SlowLink,
            ],
        ),
        (
            Kind::Destroy,
            vec![
                "destroy",
                "-auto-approve",
                "-var",
                &store_var,
                "-var",
                "generation=2",
            ],
            None,
            vec![
                CoordinatorRestart,
                CoordinatorFailover,
                CoordinatorRestart,
                WorkerKill,
                WorkerKill,
                WorkerKill,
                WorkerPause,
                NatsRollback,
                WorkerCut,
                CoordinatorStoreCut,
                CoordinatorNatsCut,
            ],
        ),
    ];
    let mut total = Survived::default();
    for (kind, args, generation, faults) in runs {
        let started = Instant::now();
        let plan = schedule(&mut rng, operations(kind), &faults);
        let mut survived = Survived::default();
        let (run_id, status) = fleet.run(kind, &args, &plan, &mut rng, &mut survived);
        let (checked, mut mismatches) = fleet.check(generation);
        let repeated = fleet.repeated(&run_id);
        for r in &repeated {
            eprintln!("mismatch: a create ran twice: {r}");
        }
        mismatches += repeated.len();
        println!(
            "chaos long: {kind:?} run {run_id}: {status} in {:.0?}, {} operations, survived {} coordinator restarts, {} failovers to the standby, {} worker kills, {} NATS restarts, {} store outages, {} worker pauses, {} NATS rollbacks, {} NATS data files cut, {} workers cut from NATS, {} coordinator-store cuts, {} coordinator-NATS cuts, {} slow links ({} faults planned after its end); {checked} objects checked, mismatches = {mismatches}",
            started.elapsed(),
            operations(kind),
            survived.restarts,
            survived.failovers,
            survived.worker_kills,
            survived.nats_restarts,
            survived.outages,
            survived.pauses,
            survived.rollbacks,
            survived.truncations,
            survived.worker_cuts,
            survived.store_cuts,
            survived.nats_cuts,
            survived.slow_links,
            survived.skipped,
        );
        assert_eq!(status, "succeeded", "{kind:?} run {run_id}");
        assert_eq!(mismatches, 0, "{kind:?} run {run_id}");
        total.restarts += survived.restarts;
        total.failovers += survived.failovers;
        total.worker_kills += survived.worker_kills;
        total.nats_restarts += survived.nats_restarts;
        total.outages += survived.outages;
        total.pauses += survived.pauses;
        total.rollbacks += survived.rollbacks;
        total.truncations += survived.truncations;
        total.worker_cuts += survived.worker_cuts;
        total.store_cuts += survived.store_cuts;
        total.nats_cuts += survived.nats_cuts;
        total.slow_links += survived.slow_links;
    }
    // Provider processes end with their worker: none is left behind by the
    // killed ones (each would have init as its parent).
    let strays = stray_providers();
    assert!(
        strays.is_empty(),
        "provider processes outlived their worker: {strays:?}"
    );
    assert!(
        total.restarts + total.failovers >= 10,
        "too few coordinator kills"
    );
    assert!(total.worker_kills >= 10, "too few worker kills");
    assert!(total.nats_restarts >= 1 && total.outages >= 1);
    assert!(total.pauses >= 1, "no worker paused");
    assert!(
        total.rollbacks + total.truncations >= 1,
        "no NATS data lost"
    );
    assert!(
        total.worker_cuts + total.store_cuts + total.nats_cuts >= 1,
        "no partition"
    );
    println!(
        "chaos long: seed {seed:#x}, links at {rtt:?} with 0.2 % loss, 3 runs on {TOTAL} instances; {} coordinator kills ({} failovers), {} worker kills, {} NATS restarts, {} store outages, {} worker pauses, {} NATS rollbacks, {} NATS data files cut, {} workers cut from NATS, {} coordinator-store cuts, {} coordinator-NATS cuts, {} slow links; mismatches = 0",
        total.restarts + total.failovers,
        total.failovers,
        total.worker_kills,
        total.nats_restarts,
        total.outages,
        total.pauses,
        total.rollbacks,
        total.truncations,
        total.worker_cuts,
        total.store_cuts,
        total.nats_cuts,
        total.slow_links,
    );
}
