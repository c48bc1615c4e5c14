//! The deployment files hold together where they can be checked here
//! (this machine runs no Docker engine and no Kubernetes cluster):
//! - `kubectl kustomize deploy/kubernetes` builds, and every object passes
//!   the Kubernetes 1.37 schemas in strict mode (kubernetes-validate, PyPI,
//!   installed into .test-tools/deploy-venv when missing);
//! - the command lines of the Kubernetes containers and systemd units are
//!   accepted by our binaries (every flag exists, every value parses);
//! - the Dockerfile copies binaries the workspace builds.

use fleetform_tests::bin_dir;
use std::path::PathBuf;
use std::process::Command;

fn validator() -> PathBuf {
    let venv = fleetform_tests::repo_root().join(".test-tools/deploy-venv");
    let exe = venv.join("bin/kubernetes-validate");
    if !exe.exists() {
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .unwrap()
            .success()
            && Command::new(venv.join("bin/pip"))
                .args([
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "kubernetes-validate==1.37.*",
                ])
                .status()
                .unwrap()
                .success();
        assert!(ok, "installing kubernetes-validate failed");
    }
    exe
}

#[test]
fn kubernetes_manifests_build_and_pass_the_schemas_strictly() {
    let built = Command::new("kubectl")
        .args(["kustomize"])
        .arg(fleetform_tests::repo_root().join("deploy/kubernetes"))
        .output()
        .expect("kubectl is installed");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let text = String::from_utf8(built.stdout).unwrap();
    for kind in [
        "kind: StatefulSet",
        "kind: Deployment",
        "kind: HorizontalPodAutoscaler",
        "kind: PodDisruptionBudget",
    ] {
        assert!(text.contains(kind), "{kind} missing:\n{text}");
    }
    assert!(text.contains("image: registry.example.com/fleetform-worker:0.1.0"));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("all.yaml");
    std::fs::write(&file, &text).unwrap();
    let out = Command::new(validator())
        .arg("--strict")
        .arg(&file)
        .output()
        .unwrap();
    let report =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{report}");
    assert_eq!(
        report.matches(" passed for resource ").count(),
        7,
        "{report}"
    );

    // The checker fails what is wrong: a misspelt field.
    std::fs::write(&file, text.replacen("  replicas: 2", "  replicass: 2", 1)).unwrap();
    let out = Command::new(validator())
        .arg("--strict")
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// The `args:` list of the container named `name` in a manifest.
fn container_args(manifest: &str, name: &str) -> Vec<String> {
    let start = manifest
        .find(&format!("- name: {name}\n"))
        .unwrap_or_else(|| panic!("no container {name}"));
    let rest = &manifest[start..];
    let args = &rest[rest.find("args:\n").unwrap() + 6..];
    args.lines()
        .take_while(|l| l.trim_start().starts_with('-') || l.trim_start().starts_with('#'))
        .filter(|l| l.trim_start().starts_with('-'))
        .map(|l| {
            l.trim_start()
                .trim_start_matches('-')
                .trim()
                .replace("$(POD_NAME)", "pod-0")
        })
        .map(|a| format!("--{}", a.trim_start_matches('-')))
        .collect()
}

/// The arguments of a systemd unit's `ExecStart=`, without the binary.
fn exec_args(unit: &str) -> Vec<String> {
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap();
    line.split_whitespace()
        .skip(1)
        .map(|a| a.replace("%H", "host").replace("%i", "01"))
        .collect()
}

/// Runs `binary ARGS` where NATS cannot be reached: a command line clap
/// refuses exits 2 ("unexpected argument", "invalid value"); an accepted
/// one gets as far as connecting and fails there (exit 1).
fn accepted(binary: &str, args: &[String]) {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(bin_dir().join(binary))
        .args(args)
        .current_dir(tmp.path())
        .env_clear()
        .env("FLEETFORM_NATS", "nats://127.0.0.1:1")
        .env(
            "FLEETFORM_STATE",
            format!("file://{}", tmp.path().display()),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "{binary} {args:?}:\n{stderr}");
    assert!(
        !stderr.contains("unexpected argument") && !stderr.contains("invalid value"),
        "{binary} {args:?}:\n{stderr}"
    );
    assert!(
        stderr.contains("NATS") || stderr.contains("nats"),
        "{binary} {args:?} should fail only on NATS:\n{stderr}"
    );
}

#[test]
fn deployed_command_lines_are_accepted_by_the_binaries() {
    let read = |p: &str| std::fs::read_to_string(fleetform_tests::repo_root().join(p)).unwrap();
    let coordinator = container_args(&read("deploy/kubernetes/coordinator.yaml"), "coordinator");
    assert!(
        coordinator.contains(&"--ui-listen=0.0.0.0:7480".to_string()),
        "{coordinator:?}"
    );
    // Without auth a reachable address is refused before NATS: bind loopback.
    let loopback: Vec<String> = coordinator
        .iter()
        .map(|a| {
            a.replace("0.0.0.0", "127.0.0.1")
                .replace(":7400", ":0")
                .replace(":7480", ":0")
                .replace(":9400", ":0")
        })
        .collect();
    accepted("fleetform-coordinator", &loopback);
    let worker = container_args(&read("deploy/kubernetes/worker.yaml"), "worker");
    assert!(worker.contains(&"--pool=default".to_string()), "{worker:?}");
    let worker: Vec<String> = worker
        .iter()
        .map(|a| a.replace("0.0.0.0:9400", "127.0.0.1:0"))
        .collect();
    accepted("fleetform-worker", &worker);

    let unit = exec_args(&read("deploy/systemd/fleetform-coordinator.service"));
    let unit: Vec<String> = unit
        .iter()
        .map(|a| {
            a.replace("0.0.0.0", "127.0.0.1")
                .replace(":7400", ":0")
                .replace(":9400", ":0")
        })
        .map(|a| a.replace("/var/lib/fleetform", "data"))
        .collect();
    accepted("fleetform-coordinator", &unit);
    let unit = exec_args(&read("deploy/systemd/fleetform-worker@.service"));
    let unit: Vec<String> = unit
        .iter()
        .map(|a| a.replace("0.0.0.0:9401", "127.0.0.1:0"))
        .collect();
    accepted("fleetform-worker", &unit);
}

#[test]
fn the_dockerfile_copies_binaries_the_workspace_builds() {
    let dockerfile =
        std::fs::read_to_string(fleetform_tests::repo_root().join("Dockerfile")).unwrap();
    let mut named = 0;
    for word in dockerfile.split_whitespace() {
        let Some(name) = word.strip_prefix("target/release/") else {
            continue;
        };
        named += 1;
        if let Some(prefix) = name.strip_suffix('*') {
            let found = std::fs::read_dir(bin_dir())
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(prefix));
            assert!(found, "no binary {name} in {}", bin_dir().display());
        } else {
            assert!(bin_dir().join(name).is_file(), "no binary {name}");
        }
    }
    assert_eq!(named, 4, "{dockerfile}");
    for image in ["AS coordinator", "AS worker", "AS cli"] {
        assert!(dockerfile.contains(image), "{image}");
    }
}
