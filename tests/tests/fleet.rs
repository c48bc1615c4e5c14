//! The whole path on real parts: nats-server, moto S3, a coordinator and two
//! workers as processes, the CLI, and the sim provider's on-disk store as
//! the ground truth of what exists.

use fleetform_tests::{Coordinator, Nats, S3, Worker, fleetform, sim_objects};
use std::path::Path;

fn run(args: &[&str], coordinator: &str) -> (i32, String, String) {
    let out = fleetform(args, &[("FLEETFORM_COORDINATOR", coordinator.to_string())])
        .expect("run fleetform");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

fn state_list(coordinator: &str) -> Vec<String> {
    let (code, out, err) = run(&["state", "list"], coordinator);
    assert_eq!(code, 0, "state list failed: {err}");
    out.lines().map(str::to_string).collect()
}

#[test]
fn apply_update_destroy_500_instances_across_two_workers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let w1 = Worker::start(dir, &nats, "w1", 16).unwrap();
    let w2 = Worker::start(dir, &nats, "w2", 16).unwrap();
    let url = coordinator.url.clone();

    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet500");
    let config = config.to_str().unwrap();
    let store = dir.join("sim-store");
    let store_var = format!("store={}", store.display());

    let (code, out, err) = run(
        &["apply", "-auto-approve", "-var", &store_var, config],
        &url,
    );
    assert_eq!(
        code,
        0,
        "apply failed:\n{out}\n{err}\ncoordinator log:\n{}",
        coordinator.proc.log_text()
    );
    assert!(
        out.contains("Plan: 500 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    assert!(
        out.contains("Apply complete! Resources: 500 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert_eq!(state_list(&url).len(), 500);
    assert_eq!(
        sim_objects(&store),
        500,
        "the sim store holds exactly the 500 objects"
    );

    // The dependent's tag holds the id of the object it references.
    let (code, first_dep, _) = run(&["output", "-raw", "first_dep"], &url);
    assert_eq!(code, 0);
    assert!(
        store.join(format!("{}.json", first_dep.trim())).exists(),
        "output names a real object: {first_dep}"
    );

    let (code, out, err) = run(
        &["plan", "-detailed-exitcode", "-var", &store_var, config],
        &url,
    );
    assert_eq!(code, 0, "second plan should have no changes:\n{out}\n{err}");
    assert!(out.contains("No changes."), "{out}");

    let (code, out, err) = run(
        &[
            "plan",
            "-detailed-exitcode",
            "-var",
            &store_var,
            "-var",
            "special_size=5",
            config,
        ],
        &url,
    );
    assert_eq!(code, 2, "changing one attribute is a change:\n{out}\n{err}");
    assert!(
        out.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{out}"
    );
    assert!(
        out.contains("# sim_object.dep[7] will be updated in-place"),
        "{out}"
    );
    let (code, out, err) = run(
        &[
            "apply",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "special_size=5",
            config,
        ],
        &url,
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Resources: 0 added, 1 changed, 0 destroyed."),
        "{out}"
    );
    let (code, shown, _) = run(&["state", "show", "sim_object.dep[7]"], &url);
    assert_eq!(code, 0);
    assert!(shown.contains("size = 5"), "{shown}");
    assert_eq!(sim_objects(&store), 500);

    let (code, out, err) = run(
        &[
            "destroy",
            "-auto-approve",
            "-var",
            &store_var,
            "-var",
            "special_size=5",
            config,
        ],
        &url,
    );
    assert_eq!(code, 0, "destroy failed:\n{out}\n{err}");
    assert!(
        out.contains("Destroy complete! Resources: 500 destroyed."),
        "{out}"
    );
    assert!(state_list(&url).is_empty(), "state is empty after destroy");
    assert_eq!(
        sim_objects(&store),
        0,
        "the sim store is empty after destroy"
    );

    let done1 = w1.stop().unwrap();
    let done2 = w2.stop().unwrap();
    assert!(
        done1 > 0 && done2 > 0,
        "both workers did tasks: w1={done1} w2={done2}"
    );
    assert!(
        done1 + done2 >= 2000,
        "plan and apply tasks of every instance: {}",
        done1 + done2
    );
}

/// One batch of more ready operations than the NATS client lets wait for
/// their acks (5,000): 6,000 instances of one resource are planned at once.
/// The coordinator used to publish about 5,000 of them and wait forever for
/// the rest (seen in the benchmark, destroying ten 1,000-long chains).
#[test]
fn a_batch_of_6000_ready_operations_is_dispatched_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _w1 = Worker::start(dir, &nats, "w1", 64).unwrap();
    let config = dir.join("wide");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("main.tf"),
        format!(
            r#"terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}
provider "sim" {{
  store_dir = "{}"
}}
resource "sim_object" "x" {{
  count = 6000
  name  = "x-${{count.index}}"
}}
"#,
            dir.join("store").display()
        ),
    )
    .unwrap();
    let mut cmd = std::process::Command::new(fleetform_tests::binary("fleetform"));
    cmd.args(["plan", "-no-color", config.to_str().unwrap()])
        .env("FLEETFORM_COORDINATOR", &coordinator.url);
    fleetform_tests::bind_to_test_project(&mut cmd, &[] as &[&str], &[]);
    // Bounded: the failure was a run that never ends.
    let run = fleetform_tests::run_grouped(cmd, std::time::Duration::from_secs(240));
    let (out, err) = (run.stdout, run.stderr);
    assert!(
        run.status.is_some_and(|s| s.success()),
        "plan failed or did not end ({:?}):\n{out}\n{err}\ncoordinator log:\n{}",
        run.status,
        coordinator.proc.log_text()
    );
    assert!(
        out.contains("Plan: 6000 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
}

/// A coordinator lets go of the events of older finished runs (its memory
/// grew with every run it had run): `runs list` still lists them all, from
/// disk; `runs watch` replays the latest ones and says what became of an
/// older one. The latest ones' events are in files of its data directory,
/// not in its memory, and an older one's file goes with it.
#[test]
fn a_coordinator_keeps_the_events_of_its_latest_finished_runs_only() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _w1 = Worker::start(dir, &nats, "w1", 8).unwrap();
    let config = dir.join("small");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("main.tf"),
        "resource \"null_resource\" \"a\" {}\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    for _ in 0..6 {
        let (code, out, err) = run(&["plan", "-no-color", config], &coordinator.url);
        assert_eq!(code, 0, "plan failed:\n{out}\n{err}");
    }
    let (code, out, err) = run(&["runs", "list"], &coordinator.url);
    assert_eq!(code, 0, "{err}");
    let ids: Vec<String> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    assert_eq!(ids.len(), 6, "every run is listed:\n{out}");
    // The last run's file is written, and the oldest kept one's removed,
    // just after that run's end is told.
    let files = || {
        std::fs::read_dir(dir.join("coordinator-data").join("ended-runs"))
            .expect("the ended runs' events are on disk")
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while files() != 4 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(files(), 4, "one file per finished run kept");
    let mut replayed = 0;
    let mut forgotten = 0;
    for id in &ids {
        let (code, out, err) = run(&["runs", "watch", id], &coordinator.url);
        if code == 0 {
            assert!(out.contains("1 to add"), "{out}");
            replayed += 1;
        } else {
            assert!(
                err.contains("keeps the events of its latest finished runs only")
                    && err.contains("planned"),
                "{err}"
            );
            forgotten += 1;
        }
    }
    assert_eq!((replayed, forgotten), (4, 2));
}
