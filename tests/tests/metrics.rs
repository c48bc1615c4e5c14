//! Prometheus metrics of a real fleet (`--metrics-listen` on the
//! coordinator and the worker), and sensitive values kept out of every
//! output of a run: a sensitive variable and a provider-sensitive
//! attribute (random_password's result) are in none of the CLI's output,
//! the coordinator's or worker's log, or their metrics.

use fleetform_tests::{Coordinator, Nats, S3, Worker, fleetform, free_port, sim_config};
use std::io::{Read, Write};

const TOKEN: &str = "s3cr3t-token-5521";

fn scrape(port: u16) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    s.read_to_string(&mut body).unwrap();
    assert!(
        body.starts_with("HTTP/1.") && body.contains(" 200 "),
        "{body}"
    );
    body
}

/// The value of the sample `name{labels}` (labels as printed), if any.
fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

#[test]
fn a_fleet_exports_metrics_and_no_output_holds_a_sensitive_value() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let (cport, wport) = (free_port(), free_port());
    let caddr = format!("127.0.0.1:{cport}");
    let waddr = format!("127.0.0.1:{wport}");
    let coordinator = Coordinator::start_with(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &["--metrics-listen", &caddr, "--log-format", "json"],
    )
    .unwrap();
    let worker = Worker::start_with(
        dir,
        &nats,
        "w1",
        8,
        &["--metrics-listen", &waddr, "--log-format", "json"],
        "debug",
    )
    .unwrap();

    let config = sim_config(
        dir,
        "cfg",
        &format!(
            "variable \"token\" {{\n  type      = string\n  sensitive = true\n  default   = \"{TOKEN}\"\n}}\n\nresource \"sim_object\" \"a\" {{\n  count = 3\n  name  = \"a-${{count.index}}\"\n  tags  = {{ token = var.token }}\n}}\n\nresource \"random_password\" \"p\" {{\n  length = 24\n}}\n"
        ),
    );
    let store = format!("store={}", dir.join("sim-store").display());
    let chdir = format!("-chdir={}", config.display());
    let env = [("FLEETFORM_COORDINATOR", coordinator.url.clone())];
    let out = fleetform(&[&chdir, "apply", "-auto-approve", "-var", &store], &env).unwrap();
    let cli_output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{cli_output}");

    let pulled = fleetform(&[&chdir, "state", "pull"], &env).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&pulled.stdout).unwrap();
    let password = doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["type"] == "random_password")
        .map(|r| {
            r["instances"][0]["attributes"]["result"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .unwrap();
    assert_eq!(password.len(), 24);

    let w = scrape(wport);
    let sim = "provider=\"registry.terraform.io/fleetform/sim\",type=\"sim_object\"";
    assert_eq!(
        sample(
            &w,
            &format!("fleetform_operations_total{{{sim},action=\"create\",outcome=\"ok\"}}")
        ),
        Some(3.0),
        "{w}"
    );
    assert_eq!(
        sample(
            &w,
            &format!("fleetform_operations_total{{{sim},action=\"plan\",outcome=\"ok\"}}")
        ),
        Some(3.0),
        "{w}"
    );
    assert_eq!(
        sample(
            &w,
            &format!(
                "fleetform_operation_duration_seconds_count{{{sim},action=\"create\",outcome=\"ok\"}}"
            )
        ),
        Some(3.0),
        "{w}"
    );
    assert!(
        w.contains("fleetform_operation_duration_seconds_bucket{"),
        "{w}"
    );
    assert!(w.contains("fleetform_provider_processes "), "{w}");

    let c = scrape(cport);
    assert_eq!(
        sample(
            &c,
            "fleetform_runs_total{operation=\"apply\",status=\"succeeded\"}"
        ),
        Some(1.0),
        "{c}"
    );
    assert_eq!(
        sample(&c, "fleetform_runs_active{operation=\"apply\"}"),
        Some(0.0),
        "{c}"
    );
    let dispatched = sample(&c, "fleetform_tasks_dispatched_total").unwrap_or(0.0);
    assert!(dispatched >= 8.0, "3+1 plans and 3+1 creates at least: {c}");
    assert_eq!(sample(&c, "fleetform_tasks_in_flight"), Some(0.0), "{c}");
    assert!(
        sample(&c, "fleetform_snapshot_write_seconds_count").unwrap_or(0.0) >= 1.0,
        "{c}"
    );
    assert!(
        sample(&c, "fleetform_journal_write_seconds_count").unwrap_or(0.0) >= 1.0,
        "{c}"
    );
    assert!(c.contains("fleetform_queue_depth{pool=\"default\"}"), "{c}");

    // No output of the run holds either secret.
    for (what, text) in [
        ("the CLI's output", cli_output.clone()),
        ("the coordinator's log", coordinator.proc.log_text()),
        ("the worker's log", worker.proc.log_text()),
        ("the coordinator's metrics", c.clone()),
        ("the worker's metrics", w.clone()),
    ] {
        for secret in [TOKEN, password.as_str()] {
            assert!(
                !text.contains(secret),
                "{what} holds a sensitive value:\n{text}"
            );
        }
    }
    // JSON logs: every log line an object; those of a task carry its run
    // and task ids, those of a run its id.
    let json_lines = |log: &str| -> Vec<serde_json::Value> {
        log.lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    };
    let wl = json_lines(&worker.proc.log_text());
    let tasks: Vec<_> = wl
        .iter()
        .filter(|l| l["span"]["task_id"].is_string())
        .collect();
    assert!(!tasks.is_empty(), "no worker line names its task: {wl:?}");
    assert!(tasks.iter().all(|l| l["span"]["run_id"].is_string()));
    let cl = json_lines(&coordinator.proc.log_text());
    let finished = cl
        .iter()
        .find(|l| l["message"] == "run finished")
        .unwrap_or_else(|| panic!("{cl:?}"));
    assert!(finished["span"]["run_id"].is_string(), "{finished}");
    assert!(
        finished["span"]["workspace"] == "tests/default",
        "{finished}"
    );

    // The check can see them: the state holds both, as it must.
    let state = String::from_utf8_lossy(&pulled.stdout);
    assert!(state.contains(TOKEN) && state.contains(&password));
}
