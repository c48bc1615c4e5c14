//! Real consumers of the plan JSON (`show -json PLANFILE`) read fleetform's
//! as they read Terraform's: `tests/plan_json_consumers.sh` plans one
//! configuration (references, count, for_each, a module called twice, a
//! variable, an output, a provider block with settings) with fleetform and
//! with Terraform 1.11 (`terraform` on PATH), and gives both JSONs to checkov and
//! terraform-compliance (from PyPI, pinned, in `.test-tools/consumers-venv`),
//! whose findings, parsed resources, providers and links between resources
//! must be the same (tests/plan_json_consumers.py compares them).
//!
//! The script installs the consumers the first time (later runs reuse the
//! venv). Where none can be installed it prints `SKIP: <reason>` and this
//! test passes, telling the reason on stderr; the parts it cannot run (OPA,
//! Go's terraform-json, Terraform itself when it cannot be had) are told on
//! its `skipped:` lines, also repeated on stderr.

use fleetform_tests::{Grouped, bin_dir, binary, repo_root, run_grouped};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The whole script: about 15 s here once installed; the first install of
/// the consumers takes about a minute.
const TIMEOUT: Duration = Duration::from_secs(480);

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
    let repo = repo_root();
    let tools = std::env::var("FLEETFORM_TEST_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo.join(".test-tools/venv/bin"));
    let mut cmd = Command::new("bash");
    cmd.arg(repo.join("tests/plan_json_consumers.sh"))
        .current_dir(&repo)
        .env("FLEETFORM_TEST_TOOLS", &tools)
        .env("FLEETFORM_BIN_DIR", bin_dir());
    let Grouped {
        status,
        stdout,
        stderr,
    } = run_grouped(cmd, TIMEOUT);
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
