//! Workspace locks are leases in the object store: two coordinators on one
//! state never run one workspace at once. A locked workspace fails a run at
//! once with who holds it (Terraform's "Error acquiring the state lock"),
//! `-lock-timeout` waits for it, and `force-unlock` removes the lock a dead
//! coordinator left. Real nats-server, moto S3, two coordinators, a worker.

use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, run_in, sim_objects};
use std::path::Path;
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

variable "latency_ms" {
  type    = number
  default = 0
}

provider "sim" {
  store_dir  = var.store
  latency_ms = var.latency_ms
}

resource "sim_object" "x" {
  count = 2
  name  = "x-${count.index}"
}
"#;

/// The lock ID in an "Error acquiring the state lock" message.
fn lock_id(out: &str) -> String {
    // Diagnostics are drawn in a margin of `│`.
    let line = out
        .lines()
        .map(|l| l.trim_start_matches(['│', ' ']))
        .find(|l| l.starts_with("ID:"))
        .unwrap_or_else(|| panic!("no lock ID in:\n{out}"));
    line["ID:".len()..].trim().to_string()
}

fn config_dir(dir: &Path) -> std::path::PathBuf {
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("main.tf"), CONFIG).unwrap();
    config
}

/// Two coordinators on one NATS and one state store, and a worker.
struct TwoCoordinators {
    tmp: tempfile::TempDir,
    config: std::path::PathBuf,
    store_var: String,
    on_a: String,
    on_b: String,
    _fleet: (Nats, S3, Coordinator, Coordinator, Worker),
}

impl TwoCoordinators {
    fn start() -> TwoCoordinators {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let config = config_dir(dir);
        let store_var = format!("store={}", dir.join("sim-store").display());
        let nats = Nats::start(dir).unwrap();
        let s3 = S3::start(dir).unwrap();
        let a = Coordinator::start(dir, &nats, &s3).unwrap();
        let b = Coordinator::start_as(dir, &nats, &s3, "127.0.0.1:0", "standby").unwrap();
        let worker = Worker::start(dir, &nats, "w1", 8).unwrap();
        TwoCoordinators {
            config,
            store_var,
            on_a: format!("--coordinator={}", a.url),
            on_b: format!("--coordinator={}", b.url),
            _fleet: (nats, s3, a, b, worker),
            tmp,
        }
    }
}

#[test]
fn a_second_coordinator_is_refused_while_the_first_holds_the_workspace() {
    let fleet = TwoCoordinators::start();
    let dir = fleet.tmp.path();
    let (config, store_var) = (fleet.config.clone(), fleet.store_var.clone());
    let (on_a, on_b) = (fleet.on_a.clone(), fleet.on_b.clone());

    // A slow apply on the first.
    let mut slow = BackgroundCli::start(
        &config,
        &[
            &on_a,
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "latency_ms=3000",
        ],
        &[],
    )
    .unwrap();
    slow.wait_for("sim_object.x[0]: Creating...", Duration::from_secs(60))
        .unwrap();

    // The second refuses at once, saying who holds the workspace.
    let refused = run_in(
        &config,
        &[&on_b, "apply", "-auto-approve", "-var", &store_var],
    );
    let out = refused.all_output();
    assert_eq!(refused.code, 1, "{out}");
    assert!(out.contains("Error acquiring the state lock"), "{out}");
    assert!(out.contains("Operation: apply"), "{out}");
    assert!(out.contains("coordinator@"), "{out}");
    assert!(!lock_id(&out).is_empty());

    // With -lock-timeout it waits for the first run, then plans on its state.
    let waited = run_in(
        &config,
        &[&on_b, "plan", "-lock-timeout=60s", "-var", &store_var],
    );
    assert_eq!(waited.code, 0, "{}", waited.all_output());
    assert!(waited.stdout.contains("No changes."), "{}", waited.stdout);
    let (code, out) = slow.finish(Duration::from_secs(60)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert_eq!(sim_objects(&dir.join("sim-store")), 2);

    // `taint` takes the lock too, and -lock-timeout waits for it there.
    let mut slow = BackgroundCli::start(
        &config,
        &[
            &on_a,
            "apply",
            "-auto-approve",
            "-replace=sim_object.x[1]",
            "-var",
            &store_var,
            "-var",
            "latency_ms=3000",
        ],
        &[],
    )
    .unwrap();
    slow.wait_for("sim_object.x[1]: Destroying...", Duration::from_secs(60))
        .unwrap();
    let refused = run_in(&config, &[&on_b, "taint", "sim_object.x[0]"]);
    assert_eq!(refused.code, 1, "{}", refused.all_output());
    assert!(
        refused
            .all_output()
            .contains("Error acquiring the state lock"),
        "{}",
        refused.all_output()
    );
    let tainted = run_in(
        &config,
        &[&on_b, "taint", "-lock-timeout=60s", "sim_object.x[0]"],
    );
    assert_eq!(tainted.code, 0, "{}", tainted.all_output());
    assert!(
        tainted.stdout.contains("has been marked as tainted"),
        "{}",
        tainted.stdout
    );
    let (code, out) = slow.finish(Duration::from_secs(60)).unwrap();
    assert_eq!(code, 0, "{out}");
}

#[test]
fn force_unlock_removes_the_lock_a_killed_coordinator_left() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = config_dir(dir);
    let store_var = format!("store={}", dir.join("sim-store").display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let mut a = Coordinator::start(dir, &nats, &s3).unwrap();
    let b = Coordinator::start_as(dir, &nats, &s3, "127.0.0.1:0", "standby").unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let on_a = format!("--coordinator={}", a.url);
    let on_b = format!("--coordinator={}", b.url);
    let slow = BackgroundCli::start(
        &config,
        &[
            &on_a,
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "latency_ms=3000",
        ],
        &[],
    );
    let mut slow = slow.unwrap();
    slow.wait_for("Creating...", Duration::from_secs(60))
        .unwrap();
    a.proc.kill();
    drop(slow);

    let refused = run_in(&config, &[&on_b, "plan", "-var", &store_var]);
    let out = refused.all_output();
    assert_eq!(refused.code, 1, "{out}");
    let id = lock_id(&out);

    // A wrong id changes nothing.
    let wrong = run_in(&config, &[&on_b, "force-unlock", "-force", "not-the-id"]);
    assert_eq!(wrong.code, 1, "{}", wrong.all_output());
    let still = run_in(&config, &[&on_b, "plan", "-var", &store_var]);
    assert_eq!(still.code, 1, "{}", still.all_output());

    let unlocked = run_in(&config, &[&on_b, "force-unlock", "-force", &id]);
    assert_eq!(unlocked.code, 0, "{}", unlocked.all_output());
    assert!(
        unlocked.stdout.contains("successfully unlocked"),
        "{}",
        unlocked.stdout
    );
    let planned = run_in(&config, &[&on_b, "plan", "-var", &store_var]);
    assert_eq!(planned.code, 0, "{}", planned.all_output());
}

/// A run waiting with -lock-timeout for a workspace another run holds says
/// so every 10 seconds, naming the holder, and then goes on.
#[test]
fn a_wait_for_a_held_lock_says_so_every_ten_seconds() {
    let fleet = TwoCoordinators::start();
    let (config, store_var) = (fleet.config.clone(), fleet.store_var.clone());
    let (on_a, on_b) = (fleet.on_a.clone(), fleet.on_b.clone());
    let mut slow = BackgroundCli::start(
        &config,
        &[
            &on_a,
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "latency_ms=12000",
        ],
        &[],
    )
    .unwrap();
    slow.wait_for("sim_object.x[0]: Creating...", Duration::from_secs(60))
        .unwrap();
    let waited = run_in(
        &config,
        &[&on_b, "plan", "-lock-timeout=2m", "-var", &store_var],
    );
    let out = waited.all_output();
    assert_eq!(waited.code, 0, "{out}");
    assert!(out.contains("Acquiring the state lock"), "{out}");
    assert!(
        out.contains("Workspace tests/default is locked by run"),
        "{out}"
    );
    assert!(out.contains("(apply, fleetform-coordinator@"), "{out}");
    assert!(waited.stdout.contains("No changes."), "{out}");
    let (code, out) = slow.finish(Duration::from_secs(60)).unwrap();
    assert_eq!(code, 0, "{out}");
}
