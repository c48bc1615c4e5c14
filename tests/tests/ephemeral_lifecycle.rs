//! When an apply opens, renews and closes an ephemeral resource, through
//! the real CLI and real provider processes, embedded and in a fleet
//! (nats-server, S3, coordinator, two workers). The sim provider's
//! `sim_lease` logs every call with its time, and the sim store's
//! `operations.log` times every create, so the tests put them in order:
//! the lease opens after the object its argument reads is created (with
//! that object's id, so with a known value), is renewed before the
//! `renew_at` it asked for while its dependents run, and is closed after
//! its last dependent and before an unrelated slow resource ends. A lease
//! whose renewal is refused fails the dependent that starts after that.
//! The same assertions hold for Terraform 1.11.4 given the same
//! configuration (but for "before `renew_at`": Terraform renews at it);
//! without `terraform` that part prints `SKIP:`. Terraform 1.11.4 loses a
//! refused renewal's error (see that test), which we do not copy.

use fleetform_tests::terraform::Terraform;
use fleetform_tests::{
    BackgroundCli, CliRun, Coordinator, Nats, S3, Worker, fleetform, run_with_input,
};
use serde::Deserialize;
use std::path::Path;

/// A line of a `sim_lease` log (`providers/src/sim/lease.rs`).
#[derive(Debug, Deserialize)]
struct LeaseCall {
    call: String,
    at_ms: u64,
    renew_at: Option<i64>,
    input: Option<String>,
    pid: u32,
}

/// A line of the sim store's `operations.log`.
#[derive(Debug, Deserialize)]
struct Operation {
    op: String,
    id: String,
    name: String,
    ts: u64,
}

/// A lease reading a new object, used by a secret whose object is read by
/// another, beside a sleep that outlasts them all. Every sim call takes a
/// second, so the lease is needed past its first `renew_at`.
const LIFECYCLE_TF: &str = r#"terraform {
  required_providers {
    sim  = { source = "fleetform/sim" }
    time = { source = "hashicorp/time" }
  }
}

provider "sim" {
  store_dir  = "STORE"
  latency_ms = 1000
}

resource "sim_object" "first" {
  name = "first"
}

ephemeral "sim_lease" "l" {
  name           = "l"
  log_file       = "LOG"
  input          = sim_object.first.id
  renew_after_ms = 1200
}

resource "sim_secret" "s" {
  name              = "s"
  secret_wo         = ephemeral.sim_lease.l.token
  secret_wo_version = 1
}

resource "sim_object" "after" {
  name = "after-${sim_secret.s.id}"
}

resource "time_sleep" "wait" {
  create_duration = "9s"
}
"#;

/// A lease whose renewals are refused, used by a secret that is created
/// at once and by one that starts only after the first (a second later).
/// It reads a new object, so that only the apply opens it.
const REFUSED_TF: &str = r#"terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

provider "sim" {
  store_dir  = "STORE"
  latency_ms = 1000
}

resource "sim_object" "first" {
  name = "first"
}

ephemeral "sim_lease" "l" {
  name           = "l"
  log_file       = "LOG"
  input          = sim_object.first.id
  renew_after_ms = 300
  fail_renew     = true
}

resource "sim_secret" "s1" {
  name              = "s1"
  secret_wo         = ephemeral.sim_lease.l.token
  secret_wo_version = 1
}

resource "sim_secret" "s2" {
  name              = "s2-${sim_secret.s1.id}"
  secret_wo         = ephemeral.sim_lease.l.token
  secret_wo_version = 1
}
"#;

/// A lease whose user waits for a five-minute sleep: cancelled while it
/// sleeps, the apply still closes the lease.
const CANCELLED_TF: &str = r#"terraform {
  required_providers {
    sim  = { source = "fleetform/sim" }
    time = { source = "hashicorp/time" }
  }
}

provider "sim" {
  store_dir = "STORE"
}

resource "sim_object" "first" {
  name = "first"
}

ephemeral "sim_lease" "l" {
  name     = "l"
  log_file = "LOG"
  input    = sim_object.first.id
}

resource "time_sleep" "long" {
  create_duration = "300s"
}

resource "sim_secret" "s" {
  name              = "s-${time_sleep.long.id}"
  secret_wo         = ephemeral.sim_lease.l.token
  secret_wo_version = 1
}
"#;

/// Writes `text` as `dir/main.tf`, with the store and the lease's log in
/// `dir` (named absolutely: a worker runs the provider elsewhere).
fn write_config(dir: &Path, text: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let text = text
        .replace("STORE", &dir.join("store").display().to_string())
        .replace("LOG", &dir.join("lease.log").display().to_string());
    std::fs::write(dir.join("main.tf"), text).unwrap();
}

fn lease_calls(dir: &Path) -> Vec<LeaseCall> {
    std::fs::read_to_string(dir.join("lease.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a lease log line"))
        .collect()
}

fn creates(dir: &Path) -> Vec<Operation> {
    std::fs::read_to_string(dir.join("store").join("operations.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Operation>(l).expect("an operations.log line"))
        .filter(|o| o.op == "create")
        .collect()
}

/// The create of the object named `name` (or starting so).
fn created<'a>(ops: &'a [Operation], name: &str) -> &'a Operation {
    ops.iter()
        .find(|o| o.name.starts_with(name))
        .unwrap_or_else(|| panic!("no create of {name}: {ops:?}"))
}

/// The index of the first standard output line containing `text`.
fn line_of(stdout: &str, text: &str) -> usize {
    stdout
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("no line with {text:?} in:\n{stdout}"))
}

/// What both tools must do with [`LIFECYCLE_TF`]; `ours` adds that each
/// renewal came before the `renew_at` it answered.
fn check_lifecycle(dir: &Path, r: &CliRun, ours: bool) {
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let calls = lease_calls(dir);
    let ops = creates(dir);
    let first = created(&ops, "first");
    let secret = created(&ops, "s");
    let after = created(&ops, "after-");
    let kinds: Vec<&str> = calls.iter().map(|c| c.call.as_str()).collect();
    let opens = kinds.iter().filter(|k| **k == "open").count();
    let closes = kinds.iter().filter(|k| **k == "close").count();
    assert_eq!((opens, closes), (1, 1), "one open, one close: {calls:?}");
    assert_eq!(kinds[0], "open", "{calls:?}");
    assert_eq!(*kinds.last().unwrap(), "close", "{calls:?}");
    let (open, close) = (&calls[0], calls.last().unwrap());
    // Opened once the object it reads exists, with that object's id.
    assert!(open.at_ms >= first.ts, "open {open:?} before {first:?}");
    assert_eq!(open.input.as_deref(), Some(first.id.as_str()), "{open:?}");
    // Renewed while its dependents ran.
    let renewals: Vec<&LeaseCall> = calls.iter().filter(|c| c.call == "renew").collect();
    assert!(!renewals.is_empty(), "no renewal: {calls:?}");
    if ours {
        for pair in calls.windows(2) {
            if pair[1].call == "renew" {
                let due = pair[0].renew_at.expect("a renewal was asked for");
                assert!(
                    (pair[1].at_ms as i64) <= due,
                    "renewed after renew_at: {pair:?}"
                );
            }
        }
    }
    // Closed after its last dependent (the secret's dependent included),
    // and before the unrelated sleep ended.
    assert!(
        close.at_ms >= secret.ts && close.at_ms >= after.ts,
        "{calls:?} {ops:?}"
    );
    let out = &r.stdout;
    assert!(
        line_of(out, "sim_object.first: Creation complete")
            < line_of(out, "ephemeral.sim_lease.l: Opening...")
    );
    assert!(
        line_of(out, "ephemeral.sim_lease.l: Opening complete")
            < line_of(out, "sim_secret.s: Creating...")
    );
    assert!(
        line_of(out, "ephemeral.sim_lease.l: Renewing...")
            < line_of(out, "ephemeral.sim_lease.l: Closing...")
    );
    assert!(
        line_of(out, "sim_object.after: Creation complete")
            < line_of(out, "ephemeral.sim_lease.l: Closing...")
    );
    assert!(
        line_of(out, "ephemeral.sim_lease.l: Closing complete")
            < line_of(out, "time_sleep.wait: Creation complete")
    );
}

/// What we do with [`REFUSED_TF`]: the first secret is created, the
/// second fails on the expired lease, the provider's refusal is reported,
/// and the lease is still closed.
fn check_refused(dir: &Path, r: &CliRun) {
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let ops = creates(dir);
    created(&ops, "s1");
    assert!(!ops.iter().any(|o| o.name.starts_with("s2-")), "{ops:?}");
    let text = fleetform_tests::texts::without_colours(&format!("{}{}", r.stdout, r.stderr));
    assert!(
        text.contains("Error: Ephemeral resource instance has expired"),
        "{text}"
    );
    assert!(text.contains("The remote object for ephemeral.sim_lease.l is no longer available due to a renewal error"), "{text}");
    assert!(text.contains("Error: Lease renewal refused"), "{text}");
    assert_eq!(calls_made(dir), ["open", "renew", "close"]);
}

fn calls_made(dir: &Path) -> Vec<String> {
    lease_calls(dir).into_iter().map(|c| c.call).collect()
}
#[test]
fn an_apply_opens_renews_and_closes_an_ephemeral_resource_when_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("ff");
    write_config(&ours, LIFECYCLE_TF);
    let r = run_with_input(&ours, &["apply", "-auto-approve", "-no-color"], "");
    check_lifecycle(&ours, &r, true);
    // The plan did not open it: its input was unknown then.
    let Some(terraform) =
        Terraform::find("ephemeral lifecycle", &["fleetform/sim", "hashicorp/time"])
    else {
        return;
    };
    let theirs = tmp.path().join("tf");
    write_config(&theirs, LIFECYCLE_TF);
    let t = terraform.run_plain(&theirs, &["apply", "-auto-approve"], "");
    check_lifecycle(&theirs, &t, false);
}

#[test]
fn a_refused_renewal_fails_the_dependents_still_to_run_as_in_terraform() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("ff");
    write_config(&ours, REFUSED_TF);
    let r = run_with_input(&ours, &["apply", "-auto-approve", "-no-color"], "");
    check_refused(&ours, &r);
    let Some(terraform) = Terraform::find("ephemeral renewal refused", &["fleetform/sim"]) else {
        return;
    };
    let theirs = tmp.path().join("tf");
    write_config(&theirs, REFUSED_TF);
    let t = terraform.run_plain(&theirs, &["apply", "-auto-approve"], "");
    // Terraform 1.11.4 means to do the same (an instance whose renewal
    // failed is "no longer live", and its error is reported at the close),
    // but drops the renewal's diagnostics (`r.renewDiags.Append(diags)`,
    // its result unused, in internal/resources/ephemeral): the second
    // secret is created with the expired lease and nothing is reported.
    // Pinned here, so that a Terraform that reports it shows up.
    assert_eq!(t.code, 0, "{}\n{}", t.stdout, t.stderr);
    created(&creates(&theirs), "s2-");
    assert!(!t.stdout.contains("Lease renewal refused"), "{}", t.stdout);
    assert_eq!(calls_made(&theirs), ["open", "renew", "close"]);
    println!(
        "NOTE: Terraform 1.11.4 ignores a refused renewal; fleetform fails what still needs the lease"
    );
}

/// Through a fleet of two workers: the same order, and the lease's token
/// in no file the coordinator or the workers wrote (journal, cache, logs,
/// state in S3).
#[test]
fn a_fleet_opens_renews_and_closes_in_order_and_records_no_token() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _w1 = Worker::start(dir, &nats, "w1", 4).unwrap();
    let _w2 = Worker::start(dir, &nats, "w2", 4).unwrap();
    let config = dir.join("config");
    write_config(&config, LIFECYCLE_TF);
    let chdir = format!("-chdir={}", config.display());
    let out = fleetform(
        &[&chdir, "apply", "-auto-approve", "-no-color"],
        &[("FLEETFORM_COORDINATOR", coordinator.url.clone())],
    )
    .unwrap();
    let r = CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    if r.code != 0 {
        println!("coordinator log:\n{}", coordinator.proc.log_text());
    }
    check_lifecycle(&config, &r, true);
    let calls = lease_calls(&config);
    let pids: std::collections::BTreeSet<u32> = calls.iter().map(|c| c.pid).collect();
    println!(
        "NOTE: the lease's calls came from {} provider process(es)",
        pids.len()
    );
    // The secret holds the token the lease opened (the store keeps it);
    // nothing else on disk does but NATS's own storage.
    let store = std::fs::read_dir(config.join("store")).unwrap();
    let token = store
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
        .find_map(|text| {
            let i = text.find("lease-")?;
            Some(text[i..i + 38].to_string())
        })
        .expect("the secret holds the lease's token");
    let mut holding = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let path = e.unwrap().path();
            if path.ends_with("store") || path.ends_with("nats") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path)
                .is_ok_and(|b| b.windows(token.len()).any(|w| w == token.as_bytes()))
            {
                holding.push(path.display().to_string());
            }
        }
    }
    assert!(holding.is_empty(), "the token is in {holding:?}");
}

#[test]
fn a_cancelled_apply_still_closes_what_it_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ff");
    write_config(&dir, CANCELLED_TF);
    let mut cli = BackgroundCli::start(
        &dir,
        &["apply", "-auto-approve", "-no-color"],
        &[("FLEETFORM_LOG", "info".into())],
    )
    .unwrap();
    let minute = std::time::Duration::from_secs(60);
    cli.wait_for("ephemeral.sim_lease.l: Opening complete", minute)
        .unwrap();
    cli.wait_for("time_sleep waiting", minute).unwrap();
    assert_eq!(
        calls_made(&dir),
        ["open"],
        "open, and needed until the sleep ends"
    );
    cli.interrupt().unwrap();
    let (code, out) = cli.finish(std::time::Duration::from_secs(120)).unwrap();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Apply cancelled"), "{out}");
    assert!(!out.contains("sim_secret.s: Creating"), "{out}");
    assert!(
        out.contains("ephemeral.sim_lease.l: Closing complete"),
        "{out}"
    );
    assert_eq!(calls_made(&dir), ["open", "close"]);
}
