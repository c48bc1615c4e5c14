//! `just up` / `just down` (deploy/local/up.sh, down.sh): the whole local
//! cluster from the built binaries — a 3-node NATS JetStream cluster,
//! moto S3, an active and a standby coordinator, 3 workers — applies
//! while one NATS node is stopped, and stops by its pid files leaving no
//! process behind.

use fleetform_tests::{SIM_PROVIDER, bin_dir, fleetform, sim_objects};
use std::path::{Path, PathBuf};
use std::process::Command;

fn script(name: &str, dir: &Path, base: u16) -> std::process::Output {
    Command::new(fleetform_tests::repo_root().join("deploy/local").join(name))
        .env("FLEETFORM_DEV_DIR", dir)
        .env("FLEETFORM_DEV_PORT_BASE", base.to_string())
        .env("FLEETFORM_BIN_DIR", bin_dir())
        .env(
            "FLEETFORM_TEST_TOOLS",
            fleetform_tests::tool("nats-server")
                .unwrap()
                .parent()
                .unwrap(),
        )
        .output()
        .unwrap()
}

fn logs(dir: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir.join("logs")).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        // Backtrace frames (indented) would hide the error above them.
        let tail: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with(' '))
            .rev()
            .take(15)
            .collect();
        out += &format!(
            "--- {}\n{}\n",
            e.path().display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    out
}

fn pid(dir: &Path, name: &str) -> u32 {
    std::fs::read_to_string(dir.join("pids").join(format!("{name}.pid")))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn alive(pid: u32) -> bool {
    PathBuf::from(format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

/// Replicas of each fleetform stream, from a node's monitoring endpoint.
fn stream_replicas(monitor_port: u16) -> Vec<(String, u64)> {
    let out = Command::new("curl")
        .args([
            "-sf",
            &format!("http://127.0.0.1:{monitor_port}/jsz?streams=true&config=true"),
        ])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut v: Vec<(String, u64)> = doc["account_details"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["stream_detail"].as_array().cloned().unwrap_or_default())
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["config"]["num_replicas"].as_u64().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Stops the cluster when the test ends, however it ends (a failed
/// assertion must not leave nine processes behind).
struct StopOnDrop(PathBuf, u16);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        script("down.sh", &self.0, self.1);
    }
}

#[test]
fn the_local_cluster_applies_with_a_nats_node_stopped_and_stops_by_its_pids() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fleet");
    let base = fleetform_tests::free_port_block(18);
    let _stop = StopOnDrop(dir.clone(), base);
    let up = script("up.sh", &dir, base);
    let up_text =
        String::from_utf8_lossy(&up.stdout).to_string() + &String::from_utf8_lossy(&up.stderr);
    assert!(up.status.success(), "{up_text}\n{}", logs(&dir));
    assert!(up_text.contains("fleet up in"), "{up_text}");
    let names = [
        "nats-1",
        "nats-2",
        "nats-3",
        "s3",
        "coordinator-1",
        "coordinator-2",
        "worker-1",
        "worker-2",
        "worker-3",
    ];
    let pids: Vec<u32> = names.iter().map(|n| pid(&dir, n)).collect();
    assert!(pids.iter().all(|&p| alive(p)), "{}", logs(&dir));

    // A second `up` on the same directory refuses, and starts nothing.
    let again = script("up.sh", &dir, base);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already up"));

    let config = tmp.path().join("cfg");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("main.tf"),
        format!(
            "{SIM_PROVIDER}\nvariable \"n\" {{\n  type = number\n}}\n\nresource \"sim_object\" \"s\" {{\n  count = var.n\n  name  = \"s-${{count.index}}\"\n}}\n"
        ),
    )
    .unwrap();
    let store_dir = tmp.path().join("sim-store");
    let store = format!("store={}", store_dir.display());
    let chdir = format!("-chdir={}", config.display());
    let env = [(
        "FLEETFORM_COORDINATOR",
        format!("http://127.0.0.1:{}", base + 10),
    )];
    let apply = |n: u32| {
        let out = fleetform(
            &[
                &chdir,
                "apply",
                "-auto-approve",
                "-var",
                &store,
                "-var",
                &format!("n={n}"),
            ],
            &env,
        )
        .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{text}\n{}", logs(&dir));
        text
    };
    let first = apply(40);
    assert!(first.contains("40 added"), "{first}");
    assert_eq!(sim_objects(&store_dir), 40);
    let replicas = stream_replicas(base + 6);
    for s in [
        "FLEETFORM_EVENTS",
        "FLEETFORM_TASKS",
        "KV_FLEETFORM_WORKERS",
    ] {
        assert!(
            replicas.contains(&(s.to_string(), 3)),
            "{s} with 3 replicas: {replicas:?}"
        );
    }

    // Stop the first NATS node (the one every process was given first, and
    // the cluster's first leader) the hard way; the fleet goes on.
    let nats1 = pid(&dir, "nats-1");
    Command::new("kill")
        .args(["-9", &nats1.to_string()])
        .status()
        .unwrap();
    let second = apply(120);
    assert!(second.contains("80 added"), "{second}");
    assert_eq!(sim_objects(&store_dir), 120);
    // Every worker is listed once its heartbeat (every 5 s) has reached
    // the cluster again.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let workers = fleetform(&["workers"], &env).unwrap();
        let listed = String::from_utf8_lossy(&workers.stdout).to_string();
        let all = ["w1", "w2", "w3"]
            .iter()
            .all(|w| listed.lines().any(|l| l.starts_with(w)));
        if all {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not every worker is listed:\n{listed}\n{}",
            logs(&dir)
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    // The standby serves the same state.
    let standby = [(
        "FLEETFORM_COORDINATOR",
        format!("http://127.0.0.1:{}", base + 11),
    )];
    let list = fleetform(&[&chdir, "state", "list"], &standby).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&list.stdout).lines().count(),
        120,
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );

    let down = script("down.sh", &dir, base);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    for (name, pid) in names.iter().zip(&pids) {
        assert!(!alive(*pid), "{name} (pid {pid}) still runs");
    }
    let left: Vec<_> = std::fs::read_dir(dir.join("pids")).unwrap().collect();
    assert!(left.is_empty(), "pid files left: {left:?}");
}
