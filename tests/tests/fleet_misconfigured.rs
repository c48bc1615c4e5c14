//! A misconfigured fleet fails in seconds with the fix in the message:
//! a coordinator whose state store cannot work (a plain-HTTP endpoint
//! without `AWS_ALLOW_HTTP`, a missing bucket, refused credentials, an
//! endpoint nobody answers at) and a coordinator or worker whose NATS is
//! out of reach or refuses it, each exit within 10 s with one line naming
//! the fix. After start, a run that meets a missing bucket ends with the
//! fix instead of retrying for ever, and a plan whose CLI was killed lets
//! go of the workspace's lock so the next apply runs.
//!
//! Refused credentials come from moto itself: with
//! `INITIAL_NO_AUTH_ACTION_COUNT=0` it checks them from the first request,
//! and refuses keys it never issued with `InvalidAccessKeyId`.

use fleetform_tests::{
    BackgroundCli, Coordinator, Nats, S3, Worker, binary, fleetform_in, free_port, run_grouped,
    sim_config, sim_store_objects, wait_for_log,
};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// What the issue asks: exited within this, process start included.
const EXIT_WITHIN: Duration = Duration::from_secs(10);

/// Runs `cmd` (given time to hang, to be told from an exit) and checks it
/// exited non-zero within [`EXIT_WITHIN`] with one error line containing
/// each of `fix`; prints the time for the record. Returns its stderr.
fn refuses(what: &str, mut cmd: Command, fix: &[&str]) -> String {
    // A backtrace would make the error many lines: it must stay one.
    cmd.env("RUST_BACKTRACE", "1").env("RUST_LOG", "info");
    let started = Instant::now();
    let out = run_grouped(cmd, Duration::from_secs(30));
    let took = started.elapsed();
    let status = out
        .status
        .unwrap_or_else(|| panic!("{what}: still running after 30 s; stderr:\n{}", out.stderr));
    assert!(
        !status.success(),
        "{what}: exited 0; stderr:\n{}",
        out.stderr
    );
    assert!(
        took < EXIT_WITHIN,
        "{what}: took {took:?}; stderr:\n{}",
        out.stderr
    );
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("Error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{what}: stderr:\n{}", out.stderr);
    for needle in fix {
        assert!(
            errors[0].contains(needle),
            "{what}: {needle:?} missing from {:?}",
            errors[0]
        );
    }
    assert!(
        !out.stderr.contains("backtrace"),
        "{what}: stderr:\n{}",
        out.stderr
    );
    eprintln!("{what}: exited in {took:.2?}: {}", errors[0]);
    out.stderr
}

/// `fleetform-coordinator` on port 0 with `nats`, state `s3://BUCKET/states`
/// and `env` (the S3 settings) in its environment.
fn coordinator(dir: &Path, nats: &str, bucket: &str, env: &[(&str, String)]) -> Command {
    let mut cmd = Command::new(binary("fleetform-coordinator"));
    cmd.args(["--listen", "127.0.0.1:0", "--nats", nats])
        .args(["--state", &format!("s3://{bucket}/states")])
        .arg("--data-dir")
        .arg(dir.join("coordinator-data"))
        .env_remove("AWS_ALLOW_HTTP")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    cmd
}

fn without(env: Vec<(&'static str, String)>, name: &str) -> Vec<(&'static str, String)> {
    env.into_iter().filter(|(k, _)| *k != name).collect()
}

#[test]
fn a_coordinator_whose_state_store_cannot_work_stops_at_once_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();

    // As the README started it: an http:// endpoint, no opt-in.
    refuses(
        "plain HTTP without AWS_ALLOW_HTTP",
        coordinator(
            dir,
            &nats.url,
            &s3.bucket,
            &without(s3.env(), "AWS_ALLOW_HTTP"),
        ),
        &[&s3.endpoint, "plain HTTP", "set AWS_ALLOW_HTTP=true"],
    );
    refuses(
        "a missing bucket",
        coordinator(dir, &nats.url, "no-such-bucket", &s3.env()),
        &["bucket no-such-bucket does not exist", "create it"],
    );
    let port = free_port();
    let closed = format!("http://127.0.0.1:{port}");
    refuses(
        "nobody at the endpoint",
        coordinator(dir, &nats.url, &s3.bucket, &s3.env_via(port)),
        &[
            &closed,
            "does not answer",
            "Connection refused",
            "AWS_ENDPOINT_URL",
        ],
    );
    let mut no_host = s3.env();
    no_host[0].1 = "http://no-such-host.invalid:9000".into();
    refuses(
        "an endpoint whose name does not resolve",
        coordinator(dir, &nats.url, &s3.bucket, &no_host),
        &[
            "http://no-such-host.invalid:9000",
            "does not answer",
            "AWS_ENDPOINT_URL",
        ],
    );

    let checking = S3::start_checking_credentials(dir).unwrap();
    refuses(
        "credentials the store refuses",
        coordinator(dir, &nats.url, &checking.bucket, &checking.env()),
        &[
            "refuses the credentials (InvalidAccessKeyId",
            "AWS_ACCESS_KEY_ID (ending in test), AWS_SECRET_ACCESS_KEY",
        ],
    );
}

#[test]
fn nats_out_of_reach_or_refusing_stops_coordinator_and_worker_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let closed = format!("nats://127.0.0.1:{}", free_port());
    let worker = |url: &str, extra: &[&str]| {
        let mut cmd = Command::new(binary("fleetform-worker"));
        cmd.args(["--nats", url, "--id", "w1"]).args(extra);
        cmd
    };
    let coordinator = |url: &str, extra: &[&str]| {
        let mut cmd = Command::new(binary("fleetform-coordinator"));
        cmd.args([
            "--listen",
            "127.0.0.1:0",
            "--nats",
            url,
            "--state",
            "memory://",
        ])
        .arg("--data-dir")
        .arg(dir.join("coordinator-data"))
        .args(extra);
        cmd
    };
    let out_of_reach = [
        closed.as_str(),
        "does not answer",
        "check --nats (FLEETFORM_NATS)",
    ];
    refuses(
        "coordinator, NATS out of reach",
        coordinator(&closed, &[]),
        &out_of_reach,
    );
    refuses(
        "worker, NATS out of reach",
        worker(&closed, &[]),
        &out_of_reach,
    );

    let nats = Nats::start_configured(dir, "authorization {\n  token: s3cret\n}\n", &[]).unwrap();
    let no_token = [
        "refuses this client",
        "this client gave no credentials",
        "--nats-token",
    ];
    refuses(
        "coordinator, no token",
        coordinator(&nats.url, &[]),
        &no_token,
    );
    refuses("worker, no token", worker(&nats.url, &[]), &no_token);
    let wrong = ["refuses this client", "this client gave --nats-token"];
    let stderr = refuses(
        "worker, a wrong token",
        worker(&nats.url, &["--nats-token", "t0ken-x9"]),
        &wrong,
    );
    assert!(
        !stderr.contains("t0ken-x9"),
        "the token is shown:\n{stderr}"
    );
    // The right token: the worker starts.
    let ok = Worker::start_with(dir, &nats, "w2", 1, &["--nats-token", "s3cret"], "info");
    assert!(ok.is_ok(), "{:?}", ok.err());

    // A server without JetStream: nothing to wait for (it waited the 2
    // minutes a cluster electing its leader is given).
    let plain_dir = dir.join("plain");
    std::fs::create_dir_all(&plain_dir).unwrap();
    let plain = Nats::start_without_jetstream(&plain_dir).unwrap();
    let no_jetstream = [
        plain.url.as_str(),
        "has no JetStream",
        "start nats-server with -js",
    ];
    refuses(
        "coordinator, no JetStream",
        coordinator(&plain.url, &[]),
        &no_jetstream,
    );
    refuses(
        "worker, no JetStream",
        worker(&plain.url, &[]),
        &no_jetstream,
    );
}

/// A configuration whose plan takes 5 minutes: a data source read held up
/// by the provider's latency.
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
"#;

const ONE_OBJECT: &str = r#"
resource "sim_object" "a" {
  name = "a"
}
"#;

/// The bucket removed while the coordinator runs: the next run ends with
/// the fix within seconds, where it retried the lock for 10 minutes.
#[test]
fn a_run_that_meets_a_missing_bucket_ends_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let c = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 4).unwrap();
    let config = sim_config(dir, "config", ONE_OBJECT);
    let store = format!("store={}", dir.join("sim-store").display());
    s3.delete_bucket().unwrap();

    let started = Instant::now();
    let args: Vec<String> = [
        &format!("--coordinator={}", c.url),
        "apply",
        "-auto-approve",
        "-var",
        &store,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = fleetform_in(&config, &args, Duration::from_secs(120)).unwrap();
    let took = started.elapsed();
    let out = run.all_output();
    assert_ne!(run.code, 0, "{out}");
    assert!(out.contains("Error acquiring the state lock"), "{out}");
    assert!(
        out.contains("bucket fleetform-test does not exist") && out.contains("create it"),
        "{out}"
    );
    assert!(!out.contains("Waiting for the state store"), "{out}");
    assert!(took < Duration::from_secs(30), "took {took:?}:\n{out}");
    eprintln!("apply against a removed bucket ended in {took:.2?}");
}

/// The bucket removed in the middle of an apply: the lock's renewal meets
/// it, the run starts nothing more and ends with the fix, where it paused
/// for want of its lock and then retried its snapshot for 10 minutes.
#[test]
fn an_apply_whose_bucket_goes_away_ends_with_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    // Renewed every second.
    let c = Coordinator::start_with(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &["--lock-ttl=3s"],
    )
    .unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 4).unwrap();
    let config = sim_config(
        dir,
        "config",
        r#"
resource "sim_object" "first" {
  name = "first"
}

resource "sim_object" "second" {
  name = "second-after-${sim_object.first.id}"
}
"#,
    );
    let store = format!("store={}", dir.join("sim-store").display());
    let on = format!("--coordinator={}", c.url);
    let mut apply = BackgroundCli::start(
        &config,
        &[
            &on,
            "apply",
            "-auto-approve",
            "-var",
            &store,
            "-var",
            "latency_ms=4000",
        ],
        &[],
    )
    .unwrap();
    apply
        .wait_for("sim_object.first: Creating...", Duration::from_secs(60))
        .unwrap();
    // A create runs only once its claim is in the object store: the
    // bucket goes away after `first` was claimed.
    s3.wait_for_claims("states", 1, Duration::from_secs(60))
        .unwrap();
    s3.remove_bucket_and_objects().unwrap();
    let gone = Instant::now();
    let (code, out) = apply
        .finish(Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}\ncoordinator log:\n{}", c.proc.log_text()));
    let took = gone.elapsed();
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("The state store refuses the state lock"),
        "{out}"
    );
    assert!(
        out.contains("bucket fleetform-test does not exist") && out.contains("create it"),
        "{out}"
    );
    assert!(
        !out.contains("sim_object.second: Creating..."),
        "nothing starts once the lock is refused:\n{out}"
    );
    eprintln!("the apply ended {took:.2?} after its bucket went away");

    // The bucket made again, empty: a new apply would plan from no state
    // and create `first` a second time. The journal says why it must not.
    let made = sim_store_objects(&dir.join("sim-store"));
    assert_eq!(made.len(), 1, "{made:?}");
    s3.create_bucket().unwrap();
    let refused =
        fleetform_tests::run_in(&config, &[&on, "apply", "-auto-approve", "-var", &store]);
    assert_eq!(refused.code, 1, "{}", refused.all_output());
    assert!(
        refused
            .stderr
            .contains("An earlier run's results are not in the state")
            && refused.stderr.contains("restart the coordinator"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        sim_store_objects(&dir.join("sim-store")),
        made,
        "nothing created twice"
    );

    // A restarted coordinator writes that run's snapshot (resuming it),
    // and the next apply creates only what is missing.
    let mut c = c;
    c.proc.kill();
    let c = Coordinator::start_with(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &["--lock-ttl=3s"],
    )
    .unwrap();
    let on = format!("--coordinator={}", c.url);
    let finished = fleetform_tests::run_in(
        &config,
        &[
            &on,
            "apply",
            "-auto-approve",
            "-lock-timeout=60s",
            "-var",
            &store,
        ],
    );
    assert_eq!(
        finished.code,
        0,
        "{}\n{}",
        finished.all_output(),
        c.proc.log_text()
    );
    let all = sim_store_objects(&dir.join("sim-store"));
    assert_eq!(all.len(), 2, "first once, second once: {all:?}");
}

/// A CLI killed while its plan runs: the plan is cancelled once nobody
/// has watched it for the grace (10 s), and the next apply takes the
/// workspace's lock; before, the plan held it until it ended (here, five
/// minutes), and the apply was refused.
#[test]
fn a_plan_whose_cli_was_killed_lets_go_of_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let c = Coordinator::start(dir, &nats, &s3).unwrap();
    let worker = Worker::start_with(
        dir,
        &nats,
        "w1",
        4,
        &[],
        "info,fleetform_worker::runtime=debug",
    )
    .unwrap();
    let on = format!("--coordinator={}", c.url);
    let store = format!("store={}", dir.join("sim-store").display());
    let slow = dir.join("slow");
    std::fs::create_dir_all(&slow).unwrap();
    std::fs::write(slow.join("main.tf"), SLOW_PLAN).unwrap();

    let plan = BackgroundCli::start(&slow, &[&on, "plan", "-var", &store], &[]).unwrap();
    wait_for_log(
        &worker.proc.log,
        "read data.sim_object.lookup",
        Duration::from_secs(60),
    )
    .unwrap();
    plan.kill();
    let killed = Instant::now();

    // Another configuration, the same workspace; it waits for the lock.
    let fast = sim_config(dir, "fast", ONE_OBJECT);
    let args: Vec<String> = [
        on.as_str(),
        "apply",
        "-auto-approve",
        "-lock-timeout=60s",
        "-var",
        &store,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let apply = fleetform_in(&fast, &args, Duration::from_secs(120)).unwrap();
    let took = killed.elapsed();
    assert_eq!(apply.code, 0, "{}", apply.all_output());
    assert!(
        apply.stdout.contains("Apply complete! Resources: 1 added"),
        "{}",
        apply.all_output()
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
    wait_for_log(
        &c.proc.log,
        "nobody watches the run, which changed nothing yet: cancelling it",
        Duration::from_secs(5),
    )
    .unwrap();
    eprintln!(
        "the killed CLI's plan let go of the lock; the apply ended {took:.2?} after the kill"
    );
}
