//! Real consumers of the plan JSON (`show -json PLANFILE`) read fleetform's
//! as they read Terraform's: `tests/plan_json_consumers.sh` plans one
//! configuration (references, count, for_each, a module called twice, a
//! variable, an output, a provider block with settings) with fleetform and
//! with Terraform 0.15, and gives both JSONs to checkov and
//! terraform-compliance (from PyPI, pinned, in `.test-tools/consumers-venv`),
//! whose findings, parsed resources, providers and links between resources
//! must be the same (tests/plan_json_consumers.py compares them).
//!
//! The script installs the consumers the first time (later runs reuse the
//! venv). Where none can be installed it prints `SKIP: <reason>` and this
//! test passes, telling the reason on stderr; the parts it cannot run (OPA,
//! Go's terraform-json, Terraform itself when it cannot be had) are told on
//! its `skipped:` lines, also repeated on stderr.

use fleetform_tests::{bin_dir, binary};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The whole script: about 15 s here once installed; the first install of
/// the consumers takes about a minute.
const TIMEOUT: Duration = Duration::from_secs(480);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

#[test]
fn plan_json_consumers_read_fleetforms_plan_as_terraforms() {
    for b in [
        "fleetform",
        "terraform-provider-null",
        "terraform-provider-random",
        "terraform-provider-local",
        "terraform-provider-sim",
    ] {
        binary(b);
    }
    let repo = repo();
    let tools = std::env::var("FLEETFORM_TEST_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo.join(".test-tools/venv/bin"));
    let out_dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (out_dir.path().join("stdout"), out_dir.path().join("stderr"));
    let mut child = Command::new("bash")
        .arg(repo.join("tests/plan_json_consumers.sh"))
        .current_dir(&repo)
        .env("FLEETFORM_TEST_TOOLS", &tools)
        .env("FLEETFORM_BIN_DIR", bin_dir())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        // Its own process group, so a timeout ends Terraform, the providers
        // and the consumers too.
        .process_group(0)
        .spawn()
        .expect("run bash tests/plan_json_consumers.sh");

    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > TIMEOUT {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let Some(status) = status else {
        panic!(
            "the plan-json consumers script ran over {TIMEOUT:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
    };

    if let Some(skip) = stdout.lines().find(|l| l.starts_with("SKIP:")) {
        assert!(status.success(), "a skip exits 0:\n{stdout}\n{stderr}");
        eprintln!("{skip}");
        return;
    }
    for skipped in stdout.lines().filter(|l| l.starts_with("skipped:")) {
        eprintln!("{skipped}");
    }
    assert!(
        status.success(),
        "the plan-json consumers script failed ({status})\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("PASS:")),
        "the script ended without PASS:\n{stdout}"
    );
    println!("{stdout}");
}
