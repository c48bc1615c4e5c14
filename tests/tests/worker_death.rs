//! A worker dies in the middle of an apply. JetStream hands its unanswered
//! tasks to another worker after the ack wait; that worker must not repeat
//! a create that may already have reached the provider (it would make a
//! second object), so those are reported as interrupted, while a delete,
//! safe to repeat, is carried out. Real processes throughout: nats-server,
//! moto S3, coordinator, two workers, the CLI; the sim store is the truth.

use fleetform_tests::{BackgroundCli, Coordinator, Nats, S3, Worker, run_in, wait_for_log};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const SLOW: usize = 6;

fn config(keep_gone: bool) -> String {
    let gone = if keep_gone {
        "resource \"sim_object\" \"gone\" {\n  name = \"gone\"\n}\n"
    } else {
        ""
    };
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

variable "store" {{
  type = string
}}

variable "latency_ms" {{
  type    = number
  default = 0
}}

variable "slow" {{
  type    = number
  default = 0
}}

variable "response_latency_ms" {{
  type    = number
  default = 0
}}

provider "sim" {{
  store_dir           = var.store
  latency_ms          = var.latency_ms
  response_latency_ms = var.response_latency_ms
}}

resource "sim_object" "slow" {{
  count = var.slow
  name  = "slow-${{count.index}}"
}}
{gone}"#
    )
}

/// Names of the objects in the sim store, with how many objects bear each.
fn names(store: &Path) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(store).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let obj: serde_json::Value = serde_json::from_str(&text).unwrap();
            let name = obj["name"].as_str().unwrap_or_default().to_string();
            *out.entry(name).or_default() += 1;
        }
    }
    out
}

#[test]
fn a_dead_workers_creates_are_reported_interrupted_and_never_repeated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config_dir = dir.join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let coord = format!("--coordinator={}", coordinator.url);
    // A short ack wait, so the test does not wait 30 s for the redelivery.
    let fast = ["--ack-wait", "2"];
    let mut w1 = Worker::start_with(
        dir,
        &nats,
        "w1",
        32,
        &fast,
        "info,fleetform_worker::runtime=debug",
    )
    .unwrap();

    // An object to delete later.
    std::fs::write(config_dir.join("main.tf"), config(true)).unwrap();
    let setup = run_in(
        &config_dir,
        &[&coord, "apply", "-auto-approve", "-var", &store_var],
    );
    assert_eq!(setup.code, 0, "{}", setup.all_output());
    assert_eq!(names(&store).get("gone"), Some(&1));

    // Six slow creates and the delete, all on w1, which dies mid-call.
    std::fs::write(config_dir.join("main.tf"), config(false)).unwrap();
    let slow_var = format!("slow={SLOW}");
    let cli = BackgroundCli::start(
        &config_dir,
        &[
            &coord,
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "latency_ms=4000",
            "-var",
            &slow_var,
        ],
        &[],
    )
    .unwrap();
    let mut started: Vec<String> = (0..SLOW)
        .map(|i| format!("apply Create sim_object.slow[{i}]"))
        .collect();
    started.push("apply Delete sim_object.gone".into());
    for needle in &started {
        wait_for_log(&w1.proc.log, needle, Duration::from_secs(60)).unwrap();
    }
    // Its provider processes die with it, though nothing ran its cleanup.
    let plugins = fleetform_tests::children_of(w1.proc.pid());
    assert!(!plugins.is_empty(), "w1 runs a provider plugin");
    w1.proc.kill();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while plugins.iter().any(|p| fleetform_tests::alive(*p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "provider processes {plugins:?} outlived their SIGKILLed worker"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _w2 = Worker::start_with(dir, &nats, "w2", 32, &fast, "info").unwrap();

    let (code, out) = cli.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 1, "the interrupted creates fail the apply:\n{out}");
    assert_eq!(
        out.matches("Operation interrupted").count(),
        SLOW,
        "every create in flight on the dead worker is reported:\n{out}"
    );
    assert!(
        out.contains("sim_object.gone: Destruction complete"),
        "the delete was repeated by the other worker:\n{out}"
    );

    let state = run_in(&config_dir, &[&coord, "state", "list"]);
    assert_eq!(state.code, 0, "{}", state.all_output());
    assert_eq!(
        state.stdout.trim(),
        "",
        "nothing unconfirmed is recorded: {}",
        state.stdout
    );
    let found = names(&store);
    assert!(!found.contains_key("gone"), "{found:?}");
    // The dead worker's provider calls may or may not have completed; what
    // must never happen is a second object for the same instance.
    assert!(
        found.values().all(|n| *n == 1),
        "no instance got two objects: {found:?}"
    );

    // The next plan says which creates were interrupted, and what to do.
    let plan = run_in(
        &config_dir,
        &[&coord, "plan", "-var", &store_var, "-var", &slow_var],
    );
    let out = plan.all_output();
    assert_eq!(plan.code, 0, "{out}");
    assert_eq!(out.matches("Interrupted operation").count(), SLOW, "{out}");
    assert!(
        out.contains("fleetform import sim_object.slow[0] ID"),
        "{out}"
    );

    // `runs show` lists them under the run that left them.
    let listed = run_in(&config_dir, &[&coord, "runs", "list"]);
    let run_id = listed
        .stdout
        .lines()
        .find(|l| l.contains(" apply ") && l.contains("failed"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no apply in:\n{}", listed.stdout))
        .to_string();
    let shown = run_in(&config_dir, &[&coord, "runs", "show", &run_id]);
    let out = shown.all_output();
    assert_eq!(shown.code, 0, "{out}");
    assert!(out.contains("Status:     failed"), "{out}");
    assert_eq!(out.matches(": create at ").count(), SLOW, "{out}");
    assert!(
        out.contains("fleetform import sim_object.slow[0] ID"),
        "{out}"
    );
}

/// Kills `worker` once it has started the creates of `slow[from..to]`
/// (and, with `made`, once their objects exist), then starts a worker with
/// a lookup rule in its place.
fn kill_mid_create(
    dir: &Path,
    nats: &Nats,
    worker: Worker,
    range: std::ops::Range<usize>,
    made: Option<&Path>,
    next: &str,
) -> Worker {
    let mut worker = worker;
    for i in range.clone() {
        let needle = format!("apply Create sim_object.slow[{i}]");
        wait_for_log(&worker.proc.log, &needle, Duration::from_secs(60)).unwrap();
    }
    if let Some(store) = made {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while range
            .clone()
            .any(|i| !names(store).contains_key(&format!("slow-{i}")))
        {
            assert!(std::time::Instant::now() < deadline, "objects never made");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    worker.proc.kill();
    Worker::start_with(
        dir,
        nats,
        next,
        32,
        &[
            "--ack-wait",
            "2",
            "--lookup-rule",
            "sim_object=sim_object(name)",
        ],
        "info,fleetform_worker::runtime=debug",
    )
    .unwrap()
}

#[test]
fn a_lookup_rule_resolves_a_dead_workers_creates_without_a_second_object() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config_dir = dir.join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(config_dir.join("main.tf"), config(false)).unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let coord = format!("--coordinator={}", coordinator.url);
    let w1 = Worker::start_with(
        dir,
        &nats,
        "w1",
        32,
        &["--ack-wait", "2"],
        "info,fleetform_worker::runtime=debug",
    )
    .unwrap();
    let apply = |slow: usize, latency: &str| {
        BackgroundCli::start(
            &config_dir,
            &[
                &coord,
                "apply",
                "-auto-approve",
                "-var",
                &store_var,
                "-var",
                &format!("slow={slow}"),
                "-var",
                latency,
            ],
            &[],
        )
        .unwrap()
    };

    // The provider made the objects, and w1 dies before it answers: the
    // next worker finds them and takes them as the creates' results.
    let cli = apply(SLOW, "response_latency_ms=4000");
    let w2 = kill_mid_create(dir, &nats, w1, 0..SLOW, Some(&store), "w2");
    let (code, out) = cli.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("Resources: {SLOW} added")), "{out}");
    let w2_log = std::fs::read_to_string(&w2.proc.log).unwrap();
    assert_eq!(
        w2_log
            .matches("the object exists, and is the result")
            .count(),
        SLOW,
        "{w2_log}"
    );

    // The provider had not acted yet when w2 dies: the next worker finds
    // nothing and creates them.
    let cli = apply(2 * SLOW, "latency_ms=4000");
    let w3 = kill_mid_create(dir, &nats, w2, SLOW..2 * SLOW, None, "w3");
    let (code, out) = cli.finish(Duration::from_secs(120)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("Resources: {SLOW} added")), "{out}");
    let w3_log = std::fs::read_to_string(&w3.proc.log).unwrap();
    assert_eq!(
        w3_log.matches("no object, so it is created now").count(),
        SLOW,
        "{w3_log}"
    );

    // One object per instance, all in the state, nothing left to do.
    let found = names(&store);
    assert_eq!(found.len(), 2 * SLOW, "{found:?}");
    assert!(found.values().all(|n| *n == 1), "{found:?}");
    let listed = run_in(&config_dir, &[&coord, "state", "list"]);
    assert_eq!(
        listed.stdout.lines().count(),
        2 * SLOW,
        "{}",
        listed.all_output()
    );
    let slow_var = format!("slow={}", 2 * SLOW);
    let plan = run_in(
        &config_dir,
        &[&coord, "plan", "-var", &store_var, "-var", &slow_var],
    );
    assert!(plan.stdout.contains("No changes."), "{}", plan.all_output());
}
