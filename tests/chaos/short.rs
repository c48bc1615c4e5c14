//! Chaos, short form (the long form is `chaos/long.rs`, run by `just
//! chaos`): the coordinator is SIGKILLed several times while it applies and
//! then destroys chains of `sim` instances, at points chosen by a fixed
//! seed; each time another starts on its address and data directory. The CLI that started each run follows it through every
//! restart, and every run ends as it would have without faults: the state
//! equals the sim store object for object, nothing lost, nothing made
//! twice, nothing left behind. Real nats-server, moto S3, two workers.

use fleetform_tests::{
    BackgroundCli, Coordinator, Nats, Rng, S3, Worker, append_logs, run_in, sim_store_objects,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const CHAINS: usize = 20;
const LEVELS: usize = 5;
const TOTAL: usize = CHAINS * LEVELS;
const SEED: u64 = 0x5eed_f1ee_7f0a;

/// Chains of `LEVELS` dependent instances, `CHAINS` side by side.
fn chains() -> String {
    let mut out = String::from(
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
  store_dir         = var.store
  latency_ms        = 100
  latency_jitter_ms = 200
}

resource "sim_object" "l0" {
  count = CHAINS
  name  = "l0-${count.index}"
}
"#,
    )
    .replace("CHAINS", &CHAINS.to_string());
    for l in 1..LEVELS {
        out.push_str(&format!(
            r#"
resource "sim_object" "l{l}" {{
  count = {CHAINS}
  name  = "l{l}-${{count.index}}-after-${{sim_object.l{p}[count.index].id}}"
}}
"#,
            p = l - 1
        ));
    }
    out
}

/// Objects in the sim store by name.
fn store_names(store: &Path) -> BTreeMap<String, usize> {
    let mut names = BTreeMap::new();
    for name in sim_store_objects(store).into_values() {
        *names.entry(name).or_default() += 1;
    }
    names
}

/// The last `n` lines of `text`: a failed run's plan alone can fill what
/// the test runner shows of a failure.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// What to show of a failed run: the end of its output, and the warnings
/// and errors of every coordinator that served it (their logs append) and
/// of the workers.
fn failure(out: &str, dir: &Path) -> String {
    let mut text = format!("{}\n", tail(out, 60));
    for name in ["coordinator", "worker-w1", "worker-w2"] {
        let log = std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap_or_default();
        let notable: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("WARN") || l.contains("ERROR") || l.contains("panicked"))
            .collect();
        text.push_str(&format!(
            "--- {name}: warnings and errors (last 40) ---\n{}\n",
            notable[notable.len().saturating_sub(40)..].join("\n")
        ));
    }
    text
}

/// Three kill points among the `TOTAL` operations, from the generator.
fn kill_points(rng: &mut Rng) -> Vec<usize> {
    let mut points: Vec<usize> = (0..3).map(|_| 1 + rng.below(TOTAL - 1)).collect();
    points.sort();
    points.dedup();
    points
}

/// The processes and directories a run needs.
struct Fleet<'a> {
    dir: &'a Path,
    config: &'a Path,
    nats: &'a Nats,
    s3: &'a S3,
}

impl Fleet<'_> {
    /// Runs `args` in the background and kills the coordinator each time
    /// `needle` has been printed as many times as the next kill point says,
    /// starting another on its address; returns the CLI's exit code and
    /// output, and the coordinator serving at the end.
    fn run_with_kills(
        &self,
        mut coordinator: Coordinator,
        args: &[&str],
        needle: &str,
        kills: &[usize],
    ) -> (i32, String, Coordinator) {
        let addr = coordinator.url.trim_start_matches("http://").to_string();
        let coord = format!("--coordinator={}", coordinator.url);
        let mut all: Vec<&str> = vec![&coord];
        all.extend_from_slice(args);
        let mut cli = BackgroundCli::start(self.config, &all, &[]).unwrap();
        for &at in kills {
            if let Err(e) = cli.wait_count(needle, at, Duration::from_secs(120)) {
                let text = e.to_string();
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                panic!(
                    "{}\ncoordinator:\n{}",
                    tail.join("\n"),
                    coordinator.proc.log_text()
                );
            }
            coordinator.proc.kill();
            coordinator = Coordinator::start_on(self.dir, self.nats, self.s3, &addr).unwrap();
        }
        let (code, out) = cli
            .finish(Duration::from_secs(300))
            .unwrap_or_else(|e| panic!("{e}\ncoordinator:\n{}", coordinator.proc.log_text()));
        (code, out, coordinator)
    }
}

#[test]
fn killing_the_coordinator_again_and_again_loses_and_duplicates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Every coordinator's log, for a failure's post-mortem.
    append_logs();
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("main.tf"), chains()).unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _w1 = Worker::start(dir, &nats, "w1", 16).unwrap();
    let _w2 = Worker::start(dir, &nats, "w2", 16).unwrap();
    let mut rng = Rng(SEED);
    let fleet = Fleet {
        dir,
        config: &config,
        nats: &nats,
        s3: &s3,
    };

    let apply_kills = kill_points(&mut rng);
    let (code, out, coordinator) = fleet.run_with_kills(
        coordinator,
        &["apply", "-auto-approve", "-var", &store_var],
        "Creation complete",
        &apply_kills,
    );
    assert_eq!(code, 0, "{}", failure(&out, dir));
    assert!(
        out.contains(&format!("Apply complete! Resources: {TOTAL} added")),
        "{}",
        tail(&out, 60)
    );
    let names = store_names(&store);
    assert_eq!(names.len(), TOTAL, "every instance has an object");
    assert!(names.values().all(|n| *n == 1), "none was made twice");
    let coord = format!("--coordinator={}", coordinator.url);
    let list = run_in(&config, &[&coord, "state", "list"]);
    assert_eq!(list.stdout.lines().count(), TOTAL, "{}", list.all_output());
    let plan = run_in(
        &config,
        &[&coord, "plan", "-detailed-exitcode", "-var", &store_var],
    );
    assert_eq!(
        plan.code,
        0,
        "state and objects agree:\n{}",
        plan.all_output()
    );

    let destroy_kills = kill_points(&mut rng);
    let (code, out, coordinator) = fleet.run_with_kills(
        coordinator,
        &["destroy", "-auto-approve", "-var", &store_var],
        "Destruction complete",
        &destroy_kills,
    );
    assert_eq!(code, 0, "{}", failure(&out, dir));
    assert!(store_names(&store).is_empty(), "nothing is left behind");
    let coord = format!("--coordinator={}", coordinator.url);
    let list = run_in(&config, &[&coord, "state", "list"]);
    assert_eq!(list.stdout.trim(), "", "{}", list.all_output());
    println!(
        "chaos: apply and destroy of {TOTAL} instances, {} coordinator kills survived, {TOTAL} objects checked, mismatches = 0",
        apply_kills.len() + destroy_kills.len()
    );
}
