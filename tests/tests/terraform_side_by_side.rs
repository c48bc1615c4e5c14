//! Side by side with a real Terraform (the `terraform` on PATH: 1.11.4 on
//! our machines): `tests/terraform_side_by_side.sh` applies the same
//! configuration with Terraform, through our provider binaries, and with
//! fleetform, and compares the resulting objects attribute by attribute.
//!
//! Where no Terraform is on PATH (nor named by `FLEETFORM_TERRAFORM`), or it
//! does not run, the script prints `SKIP: <reason>` and this test passes,
//! telling the reason on stderr.

use fleetform_tests::{Grouped, bin_dir, binary, repo_root, run_grouped};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// The whole script: about 30 s here, a first install adds a few seconds.
const TIMEOUT: Duration = Duration::from_secs(240);

#[test]
fn our_providers_under_terraform_give_the_same_objects_as_fleetform() {
    for b in [
        "fleetform",
        "terraform-provider-null",
        "terraform-provider-random",
        "terraform-provider-local",
        "terraform-provider-time",
        "terraform-provider-sim",
    ] {
        binary(b);
    }
    let repo = repo_root();
    let tools = std::env::var("FLEETFORM_TEST_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo.join(".test-tools/venv/bin"));
    let mut cmd = Command::new("bash");
    cmd.arg(repo.join("tests/terraform_side_by_side.sh"))
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
            "the side-by-side script ran over {TIMEOUT:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
    };

    if let Some(skip) = stdout.lines().find(|l| l.starts_with("SKIP:")) {
        assert!(status.success(), "a skip exits 0:\n{stdout}\n{stderr}");
        eprintln!("{skip}");
        return;
    }
    assert!(
        status.success(),
        "the side-by-side script failed ({status})\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("PASS:")),
        "the script ended without PASS:\n{stdout}"
    );
    println!("{stdout}");
}
