//! Several workspaces per coordinator: each has its own state, lock and
//! history; runs on two workspaces go on at the same time and a failure
//! in one leaves the other alone. `workspace new/select/list/show/delete`,
//! `state history` and `state pull -serial`. Real nats-server, moto S3, a
//! coordinator and a worker; and the same commands in embedded mode.

use fleetform_tests::{
    BackgroundCli, Coordinator, Nats, S3, Worker, run_in, sim_config, sim_objects,
};
use std::time::Duration;

const RESOURCES: &str = r#"
resource "sim_object" "x" {
  count = 3
  name  = "${terraform.workspace}-${count.index}"
}

output "workspace" {
  value = terraform.workspace
}
"#;

#[test]
fn two_workspaces_run_at_once_and_a_failure_in_one_leaves_the_other_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let blue_store = format!("store={}", dir.join("blue-store").display());
    let red_store = format!("store={}", dir.join("red-store").display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let c = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let on = format!("--coordinator={}", c.url);

    for ws in ["blue", "red"] {
        let made = run_in(&config, &[&on, "workspace", "new", ws]);
        assert_eq!(made.code, 0, "{}", made.all_output());
    }
    let again = run_in(&config, &[&on, "workspace", "new", "blue"]);
    assert_eq!(again.code, 1, "{}", again.all_output());
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    // `new` selected red in this directory.
    let shown = run_in(&config, &[&on, "workspace", "show"]);
    assert_eq!(shown.stdout.trim(), "red");
    let listed = run_in(&config, &[&on, "workspace", "list"]);
    assert_eq!(
        listed
            .stdout
            .lines()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>(),
        ["  default", "  blue", "* red"],
        "{}",
        listed.all_output()
    );

    // A slow apply on blue...
    let mut blue = BackgroundCli::start(
        &config,
        &[
            &on,
            "-workspace=blue",
            "apply",
            "-auto-approve",
            "-var",
            &blue_store,
            "-var",
            "latency_ms=6000",
        ],
        &[],
    )
    .unwrap();
    blue.wait_for("Creating...", Duration::from_secs(60))
        .unwrap();
    // ...does not hold red back, and red failing does not stop blue.
    let red = run_in(
        &config,
        &[
            &on,
            "apply",
            "-auto-approve",
            "-var",
            &red_store,
            "-var",
            "failure_rate=1",
        ],
    );
    assert_eq!(red.code, 1, "{}", red.all_output());
    assert!(
        red.all_output().contains("Simulated failure"),
        "{}",
        red.all_output()
    );
    assert!(
        !blue.is_finished(),
        "red ended after blue: the runs did not overlap"
    );
    let (code, out) = blue.finish(Duration::from_secs(60)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("workspace = \"blue\""), "{out}");
    assert_eq!(sim_objects(&dir.join("blue-store")), 3);
    assert_eq!(sim_objects(&dir.join("red-store")), 0);

    // Each workspace has its own state.
    let blue_list = run_in(&config, &[&on, "-workspace=blue", "state", "list"]);
    assert_eq!(blue_list.stdout.lines().count(), 3, "{}", blue_list.stdout);
    let red_list = run_in(&config, &[&on, "state", "list"]);
    assert_eq!(red_list.stdout.trim(), "", "{}", red_list.all_output());

    // Every snapshot is kept, with the run that wrote it.
    let taint = run_in(
        &config,
        &[&on, "-workspace=blue", "taint", "sim_object.x[0]"],
    );
    assert_eq!(taint.code, 0, "{}", taint.all_output());
    let history = run_in(&config, &[&on, "-workspace=blue", "state", "history"]);
    let rows: Vec<&str> = history.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{}", history.all_output());
    assert!(
        rows[0].trim_start().starts_with("1 ") && rows[0].contains("apply"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].trim_start().starts_with("2 ") && rows[1].contains("taint"),
        "{}",
        rows[1]
    );
    let first = run_in(
        &config,
        &[&on, "-workspace=blue", "state", "pull", "-serial=1"],
    );
    assert_eq!(first.code, 0, "{}", first.all_output());
    let zero = run_in(
        &config,
        &[&on, "-workspace=blue", "state", "pull", "-serial=0"],
    );
    assert_eq!(zero.code, 1, "{}", zero.all_output());
    assert!(
        zero.stderr.contains("Serials start at 1"),
        "{}",
        zero.stderr
    );
    let latest = run_in(&config, &[&on, "-workspace=blue", "state", "pull"]);
    let doc = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
    let (first, latest) = (doc(&first.stdout), doc(&latest.stdout));
    assert_eq!(first["version"], 4);
    assert_eq!(first["serial"], 1);
    assert_eq!(latest["serial"], 2);
    assert_eq!(first["lineage"], latest["lineage"]);
    let instances =
        |d: &serde_json::Value| d["resources"][0]["instances"].as_array().unwrap().clone();
    assert_eq!(instances(&first).len(), 3);
    assert_eq!(instances(&first)[0].get("status"), None);
    assert_eq!(instances(&latest)[0]["status"], "tainted");
    assert_eq!(latest["outputs"]["workspace"]["value"], "blue");

    // Delete: never the selected one, never one that still tracks objects
    // (unless -force), never "default".
    let selected = run_in(&config, &[&on, "workspace", "delete", "red"]);
    assert_eq!(selected.code, 1, "{}", selected.all_output());
    assert!(
        selected.stderr.contains("is your active workspace"),
        "{}",
        selected.stderr
    );
    let switched = run_in(&config, &[&on, "workspace", "select", "default"]);
    assert_eq!(switched.code, 0, "{}", switched.all_output());
    let full = run_in(&config, &[&on, "workspace", "delete", "blue"]);
    assert_eq!(full.code, 1, "{}", full.all_output());
    assert!(full.stderr.contains("sim_object.x[2]"), "{}", full.stderr);
    let gone = run_in(&config, &[&on, "workspace", "delete", "red"]);
    assert_eq!(gone.code, 0, "{}", gone.all_output());
    let default = run_in(&config, &[&on, "workspace", "delete", "-force", "default"]);
    assert_eq!(default.code, 1, "{}", default.all_output());
    let listed = run_in(&config, &[&on, "workspace", "list"]);
    assert_eq!(
        listed
            .stdout
            .lines()
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>(),
        ["* default", "  blue"],
        "{}",
        listed.all_output()
    );
    // blue's objects are untouched by all this.
    let plan = run_in(
        &config,
        &[&on, "-workspace=blue", "plan", "-var", &blue_store],
    );
    assert!(
        plan.stdout.contains("1 to add, 0 to change, 1 to destroy"),
        "{}",
        plan.all_output()
    );
}

#[test]
fn workspaces_in_embedded_mode_keep_separate_states() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", RESOURCES);
    let store = format!("store={}", dir.join("store").display());

    let made = run_in(&config, &["workspace", "new", "dev"]);
    assert_eq!(made.code, 0, "{}", made.all_output());
    let applied = run_in(&config, &["apply", "-auto-approve", "-var", &store]);
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    assert!(
        applied.stdout.contains("workspace = \"dev\""),
        "{}",
        applied.stdout
    );
    let missing = run_in(&config, &["workspace", "select", "prod"]);
    assert_eq!(missing.code, 1, "{}", missing.all_output());
    assert!(
        missing.stderr.contains("doesn't exist"),
        "{}",
        missing.stderr
    );
    let created = run_in(&config, &["workspace", "select", "-or-create", "prod"]);
    assert_eq!(created.code, 0, "{}", created.all_output());
    let plan = run_in(&config, &["plan", "-var", &store]);
    assert!(plan.stdout.contains("3 to add"), "{}", plan.all_output());
    // TF_WORKSPACE picks one for a command, as in Terraform.
    let out = fleetform_tests::fleetform(
        &[
            &format!("-chdir={}", config.display()),
            "output",
            "-raw",
            "workspace",
        ],
        &[("TF_WORKSPACE", "dev".to_string())],
    )
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "dev");
    let bad = run_in(&config, &["-workspace=no/slash", "plan", "-var", &store]);
    assert_eq!(bad.code, 1, "{}", bad.all_output());
    assert!(
        bad.stderr.contains("Invalid workspace name"),
        "{}",
        bad.stderr
    );
}
