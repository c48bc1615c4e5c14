//! The next link of a chain sent to the worker process that ran the link
//! before, its claim written for that process first (`TaskQueue::
//! send_direct`): real nats-server, moto S3, coordinator, workers and the
//! sim provider.
//!
//! - A chain goes link by link to its workers directly: every link after
//!   the first (which nothing released) is sent so, none falls back, and
//!   the state holds each object once.
//! - Workers that take nothing directly (`--no-direct`, as an older worker
//!   would): every link sent finds nobody on its subject, its claim is
//!   released and it goes through the queue; the apply ends the same.
//! - A link lost on its way to its worker (the worker's link holds what
//!   comes toward it, then the connection is cut, losing it): once
//!   overdue, the worker, asked about it, says it never got it and refuses
//!   it from then on; the claim is released and the task queued, and it
//!   runs once. Without the refusal the create would be reported
//!   interrupted, though it never ran.

use fleetform_tests::{
    BackgroundCli, Coordinator, Link, LinkProxy, Nats, S3, Worker, free_port, objects_per_name,
    run_in, sim_config, sim_config_with, sim_store_objects,
};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// `count` sim objects, each named after the one before: a chain.
fn chain(count: usize) -> String {
    let mut out = String::new();
    for i in 0..count {
        let after = match i {
            0 => String::new(),
            _ => format!("-after-${{sim_object.link{}.id}}", i - 1),
        };
        out.push_str(&format!(
            "\nresource \"sim_object\" \"link{i}\" {{\n  name = \"link{i}{after}\"\n}}\n"
        ));
    }
    out
}

/// The coordinator's metric `name` (a counter without labels), 0 if absent.
fn metric(port: u16, name: &str) -> f64 {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0.0)
}

const LINKS: usize = 12;

/// Applies a chain of [`LINKS`] through a coordinator and two workers
/// started with `worker_args`; returns the coordinator's log and how many
/// tasks it sent directly.
fn apply_chain(worker_args: &[&str]) -> (String, f64) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = sim_config(dir, "config", &chain(LINKS));
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let port = free_port();
    let metrics = format!("127.0.0.1:{port}");
    let c = Coordinator::start_with(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &["--metrics-listen", &metrics],
    )
    .unwrap();
    let _workers: Vec<Worker> = ["w1", "w2"]
        .iter()
        .map(|id| Worker::start_with(dir, &nats, id, 8, worker_args, "info").unwrap())
        .collect();
    let on = format!("--coordinator={}", c.url);
    let apply = run_in(
        &config,
        &[&on, "apply", "-auto-approve", "-var", &store_var],
    );
    assert_eq!(apply.code, 0, "{}", apply.all_output());
    assert!(
        apply
            .stdout
            .contains(&format!("Apply complete! Resources: {LINKS} added")),
        "{}",
        apply.all_output()
    );
    let per_name = objects_per_name(&store_dir);
    assert_eq!(per_name.len(), LINKS, "{per_name:?}");
    assert!(per_name.values().all(|n| *n == 1), "{per_name:?}");
    let plan = run_in(&config, &[&on, "plan", "-var", &store_var]);
    assert!(plan.stdout.contains("No changes."), "{}", plan.all_output());
    (
        c.proc.log_text(),
        metric(port, "fleetform_tasks_direct_total"),
    )
}

#[test]
fn a_chain_goes_link_by_link_to_the_worker_that_ran_the_link_before() {
    let (log, direct) = apply_chain(&[]);
    assert_eq!(
        direct,
        (LINKS - 1) as f64,
        "every link after the first goes directly"
    );
    assert!(
        !log.contains("never reached its worker"),
        "none fell back to the queue:\n{log}"
    );
}

#[test]
fn workers_that_take_nothing_directly_get_every_link_through_the_queue() {
    let (log, direct) = apply_chain(&["--no-direct"]);
    assert_eq!(direct, (LINKS - 1) as f64, "each was tried");
    let fell_back = log
        .lines()
        .filter(|l| l.contains("never reached its worker: published to the queue"))
        .count();
    assert_eq!(fell_back, LINKS - 1, "{log}");
}

#[test]
fn a_link_lost_on_its_way_is_refused_by_its_worker_and_runs_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Every call of the provider takes 1.5 s: the test sees the first
    // link's object appear before its result has left the worker.
    let config = sim_config_with(dir, "config", "latency_ms = 1500", &chain(2));
    let store_dir = dir.join("sim-store");
    let store_var = format!("store={}", store_dir.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let c = Coordinator::start_with(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &["--settle-after", "3s"],
    )
    .unwrap();
    // The only worker, 200 ms away each way: what it sends takes 200 ms
    // to reach NATS, and the link sent back as much to reach it.
    let link =
        LinkProxy::local(nats.addr(), 1, Link::round_trip(Duration::from_millis(400))).unwrap();
    let worker =
        Worker::start_via(dir, &format!("nats://{}", link.addr), "w1", 8, &[], "info").unwrap();
    let on = format!("--coordinator={}", c.url);
    let apply = BackgroundCli::start(
        &config,
        &[&on, "apply", "-auto-approve", "-var", &store_var],
        &[],
    )
    .unwrap();

    // The first link's object is made: its result is on its way; what the
    // coordinator sends toward the worker from now on is held.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !sim_store_objects(&store_dir)
        .values()
        .any(|name| name == "link0")
    {
        assert!(Instant::now() < deadline, "the first link was never made");
        std::thread::sleep(Duration::from_millis(5));
    }
    link.hold_downstream();
    // Long enough for the result to arrive and the next link to be sent.
    std::thread::sleep(Duration::from_secs(2));
    // The connection goes, and what it held with it.
    link.cut();
    link.heal();

    let (code, out) = apply.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Apply complete! Resources: 2 added"), "{out}");
    let per_name = objects_per_name(&store_dir);
    assert_eq!(per_name.len(), 2, "{per_name:?}");
    assert!(per_name.values().all(|n| *n == 1), "{per_name:?}");
    let log = c.proc.log_text();
    assert!(
        log.contains("never reached it (the process refuses it now)"),
        "the link was sent directly, lost, and refused:\n{log}"
    );
    let worker_log = worker.proc.log_text();
    assert!(
        worker_log.contains("status=\"refused\"") || worker_log.contains("status=refused"),
        "{worker_log}"
    );
    let plan = run_in(&config, &[&on, "plan", "-var", &store_var]);
    assert!(plan.stdout.contains("No changes."), "{}", plan.all_output());
}
