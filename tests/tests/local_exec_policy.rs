//! `local-exec` on a fleet is a policy of the worker pool: refused unless
//! the workers run with `--allow-local-exec`, which a run learns at plan
//! time from the workers' heartbeats (`fleetform workers` lists them);
//! allowed commands get a clean environment plus the provisioner's own.

use fleetform_tests::{Coordinator, Nats, S3, Worker, fleetform, sim_config};
use std::path::Path;
use std::time::{Duration, Instant};

fn cli(config: &Path, url: &str, args: &[&str]) -> (i32, String, String) {
    let chdir = format!("-chdir={}", config.display());
    let mut all = vec![chdir.as_str()];
    all.extend_from_slice(args);
    let out = fleetform(&all, &[("FLEETFORM_COORDINATOR", url.to_string())]).unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `fleetform workers` until `ok` holds of its output (heartbeats are
/// asynchronous), or panics with the last output.
fn workers_until(config: &Path, url: &str, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (code, out, err) = cli(config, url, &["workers"]);
        assert_eq!(code, 0, "{out}\n{err}");
        if ok(&out) {
            return out;
        }
        assert!(
            Instant::now() < deadline,
            "workers never listed as expected:\n{out}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_pool_refuses_local_exec_at_plan_unless_its_workers_allow_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let url = coordinator.url.clone();
    let strict = Worker::start(dir, &nats, "strict", 4).unwrap();

    let dump = dir.join("env.txt");
    let config = sim_config(
        dir,
        "cfg",
        &format!(
            "resource \"sim_object\" \"a\" {{\n  name = \"a\"\n\n  provisioner \"local-exec\" {{\n    command     = \"env > {}\"\n    environment = {{\n      FROM_CONFIG = \"yes\"\n    }}\n  }}\n}}\n",
            dump.display()
        ),
    );
    let store = format!("store={}", dir.join("sim-store").display());

    let listed = workers_until(&config, &url, |o| o.contains("strict"));
    assert!(listed.contains("refused"), "{listed}");

    // The strict worker refuses: the plan fails at the provisioner.
    let (code, out, err) = cli(&config, &url, &["plan", "-var", &store]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("local-exec provisioners are not allowed"),
        "{err}"
    );
    assert!(
        err.contains("pool \"default\" refuse them (strict)"),
        "{err}"
    );
    assert!(err.contains("on main.tf line"), "{err}");
    assert!(err.contains("--allow-local-exec"), "{err}");
    assert!(!dump.exists());

    // A pool that allows it: the command runs with a clean environment.
    strict.stop().unwrap();
    let open = Worker::start_with(dir, &nats, "open", 4, &["--allow-local-exec"], "info").unwrap();
    let listed = workers_until(&config, &url, |o| {
        o.contains("open") && !o.contains("strict")
    });
    assert!(listed.contains("allowed"), "{listed}");
    let (code, out, err) = cli(&config, &url, &["apply", "-auto-approve", "-var", &store]);
    assert_eq!(code, 0, "{out}\n{err}\nworker:\n{}", open.proc.log_text());
    let env = std::fs::read_to_string(&dump).unwrap();
    assert!(env.lines().any(|l| l == "FROM_CONFIG=yes"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
    // The worker runs with RUST_LOG (and whatever credentials it has):
    // none of it reaches the command.
    assert!(!env.contains("RUST_LOG"), "{env}");
    assert!(!env.contains("FLEETFORM_"), "{env}");
}
