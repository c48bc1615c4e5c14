//! Cancelling a run with Ctrl-C: the CLI asks the coordinator to cancel, the
//! coordinator starts nothing new and tells the workers, the workers send
//! `StopProvider` to the run's provider processes, and the provider ends
//! the call in progress. What completed before stays in the state; the next
//! apply finishes the rest. In embedded mode and in a fleet of processes.

use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, run_in, sim_objects};
use fleetform_tests::{CliRun, fleetform_in, wait_for_log};
use std::path::Path;
use std::time::{Duration, Instant};

/// Three quick objects, a sleep that would take five minutes, and an object
/// that waits for the sleep.
const CONFIG: &str = r#"
terraform {
  required_providers {
    sim  = { source = "fleetform/sim" }
    time = { source = "hashicorp/time" }
  }
}

variable "store" {
  type = string
}

variable "sleep" {
  type    = string
  default = "300s"
}

provider "sim" {
  store_dir = var.store
}

resource "sim_object" "fast" {
  count = 3
  name  = "fast-${count.index}"
}

resource "time_sleep" "long" {
  create_duration = var.sleep
}

resource "sim_object" "after" {
  name       = "after"
  depends_on = [time_sleep.long]
}
"#;

/// Far below the five-minute sleep: the sleep was interrupted, not waited out.
const PROMPT_EXIT: Duration = Duration::from_secs(60);

/// Writes the configuration; returns `-var` for the sim store in `dir`
/// (absolute: in a fleet, relative paths would be the worker's).
fn write_config(dir: &Path) -> String {
    std::fs::write(dir.join("main.tf"), CONFIG).unwrap();
    format!("store={}", dir.join("sim-store").display())
}

/// Waits until the three quick objects exist and the sleep is running: the
/// time provider logs when it starts waiting, on the CLI's output in
/// embedded mode, in the worker's log (`worker_log`) in a fleet.
fn wait_until_sleeping(cli: &mut BackgroundCli, worker_log: Option<&Path>) {
    for i in 0..3 {
        cli.wait_for(
            &format!("sim_object.fast[{i}]: Creation complete"),
            Duration::from_secs(60),
        )
        .unwrap();
    }
    let sleeping = "time_sleep waiting";
    match worker_log {
        None => cli.wait_for(sleeping, Duration::from_secs(60)).unwrap(),
        Some(log) => wait_for_log(log, sleeping, Duration::from_secs(60)).unwrap(),
    }
}

/// Interrupts the CLI and checks how the run ended.
fn interrupt_and_check(cli: BackgroundCli) -> String {
    cli.interrupt().unwrap();
    let t0 = Instant::now();
    let (code, out) = cli.finish(Duration::from_secs(120)).unwrap();
    let took = t0.elapsed();
    assert!(
        took < PROMPT_EXIT,
        "the CLI took {took:?} to exit after Ctrl-C:\n{out}"
    );
    assert_eq!(code, 1, "a cancelled apply exits 1:\n{out}");
    assert!(out.contains("Interrupt received"), "{out}");
    // Only StopProvider makes time_sleep end early, with this diagnostic.
    assert!(
        out.contains("time_sleep: the create_duration of 300s was interrupted"),
        "{out}"
    );
    assert!(out.contains("Apply cancelled"), "{out}");
    assert!(!out.contains("sim_object.after: Creating"), "{out}");
    out
}

fn state_list(run: CliRun) -> Vec<String> {
    assert_eq!(run.code, 0, "{}", run.all_output());
    run.stdout.lines().map(str::to_string).collect()
}

fn check_after_cancel(dir: &Path, state: Vec<String>) {
    assert_eq!(
        state,
        [
            "sim_object.fast[0]",
            "sim_object.fast[1]",
            "sim_object.fast[2]"
        ],
        "the state keeps exactly what completed"
    );
    assert_eq!(sim_objects(&dir.join("sim-store")), 3);
}

fn check_finished(dir: &Path, apply: CliRun, state: Vec<String>) {
    assert_eq!(apply.code, 0, "{}", apply.all_output());
    assert!(
        apply
            .stdout
            .contains("Plan: 2 to add, 0 to change, 0 to destroy."),
        "the next apply does only what the cancel left undone:\n{}",
        apply.stdout
    );
    assert_eq!(state.len(), 5, "{state:?}");
    assert_eq!(sim_objects(&dir.join("sim-store")), 4);
}

#[test]
fn ctrl_c_in_embedded_mode_stops_the_provider_and_keeps_what_completed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = write_config(dir);
    // Provider logs (forwarded by the in-process worker) show when the sleep runs.
    let mut cli = BackgroundCli::start(
        dir,
        &["apply", "-auto-approve", "-var", &store],
        &[("FLEETFORM_LOG", "info".into())],
    )
    .unwrap();
    wait_until_sleeping(&mut cli, None);
    let out = interrupt_and_check(cli);
    assert!(
        out.contains("StopProvider: interrupting calls in progress"),
        "the provider process logged the StopProvider call:\n{out}"
    );
    check_after_cancel(dir, state_list(run_in(dir, &["state", "list"])));

    let apply = run_in(
        dir,
        &["apply", "-auto-approve", "-var", &store, "-var", "sleep=1s"],
    );
    check_finished(dir, apply, state_list(run_in(dir, &["state", "list"])));
}

#[test]
fn ctrl_c_cancels_a_fleet_run_through_the_coordinator_and_workers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    let store = write_config(&config);
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let env = [("FLEETFORM_COORDINATOR", coordinator.url.clone())];

    let mut cli =
        BackgroundCli::start(&config, &["apply", "-auto-approve", "-var", &store], &env).unwrap();
    wait_until_sleeping(&mut cli, Some(&worker.proc.log));
    interrupt_and_check(cli);
    // Both are logged as the stop goes out, perhaps after the CLI exited.
    for line in [
        "run cancelled: providers told to stop",
        "StopProvider: interrupting calls in progress",
    ] {
        wait_for_log(&worker.proc.log, line, Duration::from_secs(30)).unwrap();
    }
    let list = |c: &Path| {
        let args = ["state".to_string(), "list".to_string()];
        fleetform_with(c, &args, &env)
    };
    check_after_cancel(&config, state_list(list(&config)));

    let args: Vec<String> = ["apply", "-auto-approve", "-var", &store, "-var", "sleep=1s"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let apply = fleetform_with(&config, &args, &env);
    check_finished(&config, apply, state_list(list(&config)));
}

/// Runs the CLI against the fleet's coordinator.
fn fleetform_with(dir: &Path, args: &[String], env: &[(&str, String)]) -> CliRun {
    let mut all = vec![format!("--coordinator={}", env[0].1)];
    all.extend_from_slice(args);
    fleetform_in(dir, &all, Duration::from_secs(120)).unwrap()
}

/// A data source read that would take five minutes holds up the plan.
const SLOW_PLAN: &str = r#"
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
  latency_ms = 300000
}

data "sim_object" "lookup" {
  name = "anything"
}

resource "sim_object" "a" {
  name = "a"
}
"#;

#[test]
fn ctrl_c_while_planning_stops_the_plan_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.tf"), SLOW_PLAN).unwrap();
    let store = format!("store={}", dir.join("sim-store").display());
    let mut cli = BackgroundCli::start(
        dir,
        &["apply", "-auto-approve", "-var", &store],
        // The worker logs each task it starts: the read is under way.
        &[(
            "FLEETFORM_LOG",
            "info,fleetform_worker::runtime=debug".into(),
        )],
    )
    .unwrap();
    cli.wait_for("read data.sim_object.lookup", Duration::from_secs(60))
        .unwrap();
    cli.interrupt().unwrap();
    let t0 = Instant::now();
    let (code, out) = cli.finish(Duration::from_secs(120)).unwrap();
    assert!(
        t0.elapsed() < PROMPT_EXIT,
        "the CLI took {:?} to exit after Ctrl-C:\n{out}",
        t0.elapsed()
    );
    assert_eq!(code, 1, "a cancelled run exits 1:\n{out}");
    assert!(out.contains("Run cancelled; nothing was changed."), "{out}");
    assert!(!out.contains("Creating..."), "nothing was applied:\n{out}");
    let list = run_in(dir, &["state", "list"]);
    assert_eq!(list.code, 0, "{}", list.all_output());
    assert_eq!(list.stdout.trim(), "", "no state was written");
    assert_eq!(sim_objects(&dir.join("sim-store")), 0);
}
