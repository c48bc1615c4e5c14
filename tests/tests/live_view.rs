//! The live view (`fleetform-coordinator --ui-listen`) in a real headless
//! Chromium, driving a real run on a real fleet (nats-server, moto S3, a
//! coordinator with tokens, a worker): sign-in, the runs list, the run's
//! graph while it applies and when it has failed, an expanded resource,
//! the error with its instance. Screenshots of the start and the end are
//! kept in `target/live-view/` (the picture in docs/operations.md is one of them).
//! The browser side is `tests/ui_browser.py` (Playwright for Python with
//! Debian's Chromium, through tests/ui_browser.sh).

use fleetform_tests::{
    BackgroundCli, Coordinator, Nats, S3, Worker, free_port, sim_config, sim_stored,
};
use std::io::{Read, Write};
use std::process::Command;
use std::time::Duration;

const ADMIN: &str = "admin-token-0123456789";
const VIEWER: &str = "viewer-token-0123456789";
const OTHER: &str = "other-team-token-0123456789";

/// `GET path` with an optional bearer token: (status, body).
fn get(port: u16, path: &str, token: Option<&str>) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

#[test]
fn the_live_view_shows_a_run_as_it_executes_in_a_real_browser() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let grants = dir.join("grants");
    std::fs::write(
        &grants,
        format!("{ADMIN} apply *\n{VIEWER} read tests/default\n{OTHER} read tests/other-*\n"),
    )
    .unwrap();
    let ui_port = free_port();
    let coordinator = Coordinator::start_with(
        dir,
        &nats,
        &s3,
        "127.0.0.1:0",
        "coordinator",
        &[
            "--auth-token-file",
            grants.to_str().unwrap(),
            "--ui-listen",
            &format!("127.0.0.1:{ui_port}"),
        ],
    )
    .unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 4).unwrap();

    // 300 servers behind one network at 40 ms a call on 4 slots: a few
    // seconds of applying, long enough to be seen running.
    let config = sim_config(
        dir,
        "cfg",
        r#"
provider "sim" {
  alias        = "broken"
  store_dir    = var.store
  failure_rate = 1
}

resource "sim_object" "net" {
  name = "net"
}

resource "sim_object" "server" {
  count = 300
  name  = "server-${count.index}"
  tags  = { net = sim_object.net.id }
}

resource "sim_object" "broken" {
  provider = sim.broken
  name     = "broken"
  tags     = { net = sim_object.net.id }
}

resource "sim_object" "dns" {
  for_each = toset(["a", "b"])
  name     = "dns-${each.key}"
  tags     = { first = sim_object.server[0].id }
}
"#,
    );
    let store = format!("store={}", dir.join("sim-store").display());
    let env = [
        ("FLEETFORM_COORDINATOR", coordinator.url.clone()),
        ("FLEETFORM_TOKEN", ADMIN.to_string()),
    ];
    let shots = fleetform_tests::repo_root().join("target/live-view");
    std::fs::create_dir_all(&shots).unwrap();
    let signed_in = shots.join("signed-in");
    let _ = std::fs::remove_file(&signed_in);
    let browser = Command::new(fleetform_tests::repo_root().join("tests/ui_browser.sh"))
        .args([
            &format!("http://127.0.0.1:{ui_port}"),
            VIEWER,
            "not-a-valid-token-000000",
            shots.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The run starts once the browser has signed in (the first time,
    // installing Playwright takes a while).
    let deadline = std::time::Instant::now() + Duration::from_secs(300);
    while !signed_in.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let cli = BackgroundCli::start(
        &config,
        &[
            "apply",
            "-auto-approve",
            "-var",
            &store,
            "-var",
            "latency_ms=40",
        ],
        &env,
    )
    .unwrap();
    let (code, cli_out) = cli.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 1, "the broken object fails the apply:\n{cli_out}");
    // server[5] changes outside fleetform; a plan reads it and records the
    // drift, which the browser finds on the runs page.
    let (path, mut doc) = sim_stored(&dir.join("sim-store"), "server-5");
    doc["size"] = 9.into();
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let planned = BackgroundCli::start(&config, &["plan", "-var", &store], &env).unwrap();
    let (code, plan_out) = planned.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 0, "{plan_out}");
    let out = browser.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser walk failed:\n{stderr}\ncoordinator log:\n{}",
        coordinator.proc.log_text()
    );
    let obs: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));

    // Signing in.
    assert!(
        obs["unsigned_url"].as_str().unwrap().contains("/login"),
        "{obs}"
    );
    assert!(
        obs["bad_token_error"]
            .as_str()
            .unwrap()
            .contains("not valid"),
        "{obs}"
    );
    let run_id = obs["runs"][0].as_str().unwrap().to_string();
    assert_eq!(obs["runs"].as_array().unwrap().len(), 1, "{obs}");

    // While it applies: 304 operations, some done, not all.
    let start = &obs["start"];
    assert!(start["url"].as_str().unwrap().ends_with(&run_id), "{start}");
    let c = &start["counts"];
    assert_eq!(c["total"], 304, "{start}");
    let done = c["done"].as_u64().unwrap();
    assert!(done > 0 && done < 304, "seen while applying: {start}");
    let names: Vec<&str> = start["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g[0].as_str().unwrap())
        .collect();
    assert_eq!(
        names.len(),
        4,
        "one box per resource, not per instance: {names:?}"
    );
    for g in [
        "sim_object.net",
        "sim_object.server",
        "sim_object.broken",
        "sim_object.dns",
    ] {
        assert!(names.contains(&g), "{g} missing: {names:?}");
    }
    let edges: Vec<(String, String)> = start["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e[0].as_str().unwrap().into(), e[1].as_str().unwrap().into()))
        .collect();
    let mut edges = edges;
    edges.sort();
    let direct = [
        ("sim_object.net", "sim_object.broken"),
        ("sim_object.net", "sim_object.server"),
        ("sim_object.server", "sim_object.dns"),
    ]
    .map(|(a, b)| (a.to_string(), b.to_string()));
    assert_eq!(
        edges, direct,
        "direct dependencies only (dns -> net is implied)"
    );
    // The expanded resource lists its 300 instances.
    let expanded = obs["expanded"].as_array().unwrap();
    assert_eq!(expanded.len(), 300, "{obs}");
    assert!(
        expanded.iter().any(|i| i[0] == "sim_object.server[299]"),
        "{obs}"
    );

    // At the end: failed, the broken object's error named, everything else done.
    let end = &obs["end"];
    assert_eq!(end["phase"], "finished", "{end}");
    assert_eq!(end["status"], "failed", "{end}");
    assert_eq!(end["counts"]["done"], 303, "{end}");
    assert_eq!(end["counts"]["failed"], 1, "{end}");
    assert_eq!(end["counts"]["running"], 0, "{end}");
    let states: std::collections::BTreeMap<String, String> = end["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g[0].as_str().unwrap().into(), g[1].as_str().unwrap().into()))
        .collect();
    assert_eq!(states["sim_object.broken"], "failed", "{states:?}");
    assert_eq!(states["sim_object.server"], "done", "{states:?}");
    assert_eq!(states["sim_object.dns"], "done", "{states:?}");
    let errors = end["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{end}");
    let e = errors[0].as_str().unwrap();
    assert!(
        e.contains("Simulated failure") && e.contains("sim_object.broken"),
        "{e}"
    );
    assert_eq!(
        end["expanded_statuses"],
        serde_json::json!(["done"]),
        "{end}"
    );
    assert!(
        end["summary"]
            .as_str()
            .unwrap()
            .contains("failed: 303 of 304 operations done, 1 failed"),
        "{end}"
    );
    assert!(end["slowest"].as_u64().unwrap() > 0, "{end}");
    assert_eq!(obs["console_errors"], serde_json::json!([]), "{obs}");
    for shot in ["start.png", "end.png"] {
        let len = std::fs::metadata(shots.join(shot)).unwrap().len();
        assert!(len > 10_000, "{shot}: {len} bytes");
    }

    // The same protection as the API.
    let (code, body) = get(ui_port, "/api/runs", None);
    assert_eq!(code, 401, "{body}");
    let (code, body) = get(ui_port, "/api/runs", Some("wrong-token-00000000"));
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("not valid"), "{body}");
    let (code, body) = get(ui_port, "/api/runs", Some(OTHER));
    assert_eq!((code, body.trim()), (200, "[]"), "another team sees no run");
    let (code, body) = get(ui_port, &format!("/api/runs/{run_id}"), Some(OTHER));
    assert_eq!(code, 403, "{body}");
    assert!(
        body.contains("needs the read role on workspace \"tests/default\""),
        "{body}"
    );
    let (code, body) = get(ui_port, &format!("/api/runs/{run_id}"), Some(VIEWER));
    assert_eq!(code, 200, "{body}");
    let snap: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(snap["counts"]["done"], 303, "{snap}");
    let (code, _) = get(ui_port, "/runs/xyz", None);
    assert_eq!(code, 303, "a page sends an unsigned visitor to sign in");
    let (code, body) = get(ui_port, "/api/runs/no-such-run", Some(VIEWER));
    assert_eq!(code, 404, "{body}");

    // Drift: on the page, and through the API to those who may read it.
    assert_eq!(
        obs["drift"],
        serde_json::json!([["tests/default", "sim_object.server[5]", "changed"]]),
        "{obs}"
    );
    assert_eq!(obs["drift_empty_hidden"], true, "{obs}");
    let (code, body) = get(ui_port, "/api/drift", Some(VIEWER));
    assert_eq!(code, 200, "{body}");
    let drift: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        drift[0]["objects"][0]["address"], "sim_object.server[5]",
        "{drift}"
    );
    let (code, body) = get(ui_port, "/api/drift", Some(OTHER));
    assert_eq!(
        (code, body.trim()),
        (200, "[]"),
        "another team sees no drift"
    );
    let (code, _) = get(ui_port, "/api/drift", None);
    assert_eq!(code, 401);
    // An apply puts server[5] back (the broken object fails it again): its
    // read is forgotten, and the drift leaves the page.
    let apply =
        BackgroundCli::start(&config, &["apply", "-auto-approve", "-var", &store], &env).unwrap();
    let (code, apply_out) = apply.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 1, "{apply_out}");
    assert!(apply_out.contains("sim_object.server[5]"), "{apply_out}");
    let (code, body) = get(ui_port, "/api/drift", Some(VIEWER));
    assert_eq!((code, body.trim()), (200, "[]"), "drift applied away");
}
