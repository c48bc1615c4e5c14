//! OpenTelemetry traces of a real fleet, exported over OTLP/HTTP (JSON) to
//! a collector this test plays: one trace per run, in which each worker
//! task span is a child of the coordinator's dispatch span of it (the
//! context went through the NATS message's headers), and each provider
//! call a child of its task span.

use fleetform_tests::{Coordinator, Nats, S3, Worker, fleetform, sim_config};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An OTLP/HTTP receiver: every request body, as JSON.
fn collector() -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let bodies: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let kept = bodies.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut conn = conn;
                // Requests on a kept-alive connection, one after another.
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 {
                            return;
                        }
                        let h = h.trim_end();
                        if h.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0u8; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    if let Ok(v) = serde_json::from_slice(&body) {
                        kept.lock().unwrap().push(v);
                    }
                    let reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
                    if conn.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, bodies)
}

#[derive(Debug, Clone)]
struct Span {
    service: String,
    name: String,
    trace: String,
    id: String,
    parent: String,
}

fn spans(bodies: &[serde_json::Value]) -> Vec<Span> {
    let mut out = Vec::new();
    for body in bodies {
        for rs in body["resourceSpans"].as_array().into_iter().flatten() {
            let service = rs["resource"]["attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["key"] == "service.name")
                .and_then(|a| a["value"]["stringValue"].as_str())
                .unwrap_or_default()
                .to_string();
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for s in ss["spans"].as_array().into_iter().flatten() {
                    let text = |k: &str| s[k].as_str().unwrap_or_default().to_string();
                    out.push(Span {
                        service: service.clone(),
                        name: text("name"),
                        trace: text("traceId"),
                        id: text("spanId"),
                        parent: text("parentSpanId"),
                    });
                }
            }
        }
    }
    out
}

#[test]
fn a_run_is_one_trace_from_coordinator_through_nats_to_the_provider_call() {
    let (endpoint, bodies) = collector();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let otel = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.clone()),
        ("OTEL_BSP_SCHEDULE_DELAY", "100".to_string()),
    ];
    let coordinator =
        Coordinator::start_full(dir, &nats, &s3, "127.0.0.1:0", "coordinator", &[], &otel).unwrap();
    let _worker = Worker::start_full(dir, &nats, "w1", 4, &[], "info", &otel).unwrap();
    let config = sim_config(
        dir,
        "cfg",
        "resource \"sim_object\" \"a\" {\n  count = 2\n  name  = \"a-${count.index}\"\n}\n",
    );
    let chdir = format!("-chdir={}", config.display());
    let store = format!("store={}", dir.join("sim-store").display());
    let out = fleetform(
        &[&chdir, "apply", "-auto-approve", "-var", &store],
        &[("FLEETFORM_COORDINATOR", coordinator.url.clone())],
    )
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // Spans arrive in batches: wait for the run's span and the creates'.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (run, all) = loop {
        let all = spans(&bodies.lock().unwrap());
        let run = all
            .iter()
            .find(|s| s.service == "fleetform-coordinator" && s.name == "run")
            .cloned();
        let calls = all.iter().filter(|s| s.name == "provider call").count();
        if let Some(run) = run
            && calls >= 4
        {
            break (run, all);
        }
        assert!(Instant::now() < deadline, "spans so far: {all:#?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let by_id: HashMap<&str, &Span> = all.iter().map(|s| (s.id.as_str(), s)).collect();
    let tasks: Vec<&Span> = all
        .iter()
        .filter(|s| s.service == "fleetform-worker" && s.name == "task" && s.trace == run.trace)
        .collect();
    // 2 plans and 2 creates of sim objects, at least (schema fetches too).
    assert!(
        tasks.len() >= 4,
        "worker task spans in the run's trace: {all:#?}"
    );
    for t in &tasks {
        let parent = by_id
            .get(t.parent.as_str())
            .unwrap_or_else(|| panic!("task span without its parent: {t:?}\n{all:#?}"));
        assert_eq!(parent.service, "fleetform-coordinator", "{parent:?}");
        assert_eq!(parent.name, "dispatch", "{parent:?}");
        assert_eq!(parent.trace, run.trace);
    }
    let calls: Vec<&Span> = all
        .iter()
        .filter(|s| s.name == "provider call" && s.trace == run.trace)
        .collect();
    assert!(calls.len() >= 4, "{all:#?}");
    for c in &calls {
        let parent = by_id[c.parent.as_str()];
        assert_eq!(
            (parent.service.as_str(), parent.name.as_str()),
            ("fleetform-worker", "task")
        );
    }
    // Each create waits for its claim in a span of its own, inside its
    // provider calls; plans have none.
    let waits: Vec<&Span> = all
        .iter()
        .filter(|s| s.name == "claim wait" && s.trace == run.trace)
        .collect();
    assert_eq!(waits.len(), 2, "{all:#?}");
    for w in waits {
        let parent = by_id[w.parent.as_str()];
        assert_eq!(parent.name, "provider call", "{parent:?}");
    }
}
