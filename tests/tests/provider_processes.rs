//! A provider that uses one core (sim with `cpu_ms`: every call keeps a
//! core busy under a process-wide lock) gets several processes when its
//! calls overlap: `FLEETFORM_PROVIDER_PROCESSES` in embedded mode (default:
//! one per core), `--provider-processes` on a worker. The sim store's
//! operation log names the process of every create.

use fleetform_tests::{Coordinator, Nats, S3, Worker, fleetform, sim_config_with};
use std::collections::BTreeSet;
use std::path::Path;

fn config(dir: &Path, n: usize) -> std::path::PathBuf {
    let resources = format!(
        "\nresource \"sim_object\" \"x\" {{\n  count = {n}\n  name  = \"x-${{count.index}}\"\n}}\n"
    );
    sim_config_with(dir, "cfg", "cpu_ms    = 15", &resources)
}

/// The provider processes that made the store's creates.
fn creators(store: &Path) -> BTreeSet<u64> {
    std::fs::read_to_string(store.join("operations.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|op| op["op"] == "create")
        .map(|op| op["pid"].as_u64().unwrap())
        .collect()
}

fn apply(cfg: &Path, store: &Path, env: &[(&str, String)]) {
    let out = fleetform(
        &[
            &format!("-chdir={}", cfg.display()),
            "apply",
            "-auto-approve",
            "-var",
            &format!("store={}", store.display()),
        ],
        env,
    )
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn embedded_mode_spreads_calls_over_provider_processes() {
    let tmp = tempfile::tempdir().unwrap();
    for (processes, expected) in [("1", 1), ("3", 3)] {
        let dir = tmp.path().join(processes);
        let cfg = config(&dir, 40);
        let store = dir.join("store");
        apply(
            &cfg,
            &store,
            &[("FLEETFORM_PROVIDER_PROCESSES", processes.to_string())],
        );
        let pids = creators(&store);
        assert_eq!(
            pids.len(),
            expected,
            "FLEETFORM_PROVIDER_PROCESSES={processes}: creates by {pids:?}"
        );
    }
    // A bad setting is refused before anything runs.
    let dir = tmp.path().join("bad");
    let cfg = config(&dir, 1);
    let out = fleetform(
        &[
            &format!("-chdir={}", cfg.display()),
            "apply",
            "-auto-approve",
            "-var",
            "store=x",
        ],
        &[("FLEETFORM_PROVIDER_PROCESSES", "0".to_string())],
    )
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("FLEETFORM_PROVIDER_PROCESSES=\"0\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_worker_runs_as_many_provider_processes_as_it_is_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker =
        Worker::start_with(dir, &nats, "w1", 16, &["--provider-processes", "2"], "info").unwrap();
    let cfg = config(dir, 40);
    let store = dir.join("store");
    apply(
        &cfg,
        &store,
        &[("FLEETFORM_COORDINATOR", coordinator.url.clone())],
    );
    let pids = creators(&store);
    assert_eq!(pids.len(), 2, "creates by {pids:?}");
}
