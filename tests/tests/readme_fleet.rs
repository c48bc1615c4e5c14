//! README.md's "Running it distributed", run as it is written there: its
//! first block (the tools, NATS, S3 with the bucket, the coordinator, two
//! workers, a project, the quickstart's apply) and its second (destroy and
//! stop) in one bash session, as a reader pastes them one after the other.
//! The blocks are read from the README by their heading, so what is tested
//! is what the README says. The test moves the ports and the fleet's
//! directory through the variables the section documents, and runs the
//! blocks in a directory laid out like the repository's root whose
//! `target/debug` is this build and whose `.test-tools` holds the tools
//! `tests/run.sh` installed (`deploy/local/tools.sh` then has nothing to
//! install); `cargo` is a stand-in that records its arguments, since the
//! binaries under test are built already.

use fleetform_tests::{alive, bin_dir, fleetform, repo_root, sim_objects, tool};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const HEADING: &str = "## Running it distributed";
const FIRST_DONE: &str = "::readme_fleet: first block done::";

/// The `sh` code blocks of the README section under `heading`, up to the
/// next heading of any level (a `#` inside a code block is a comment).
fn blocks(readme: &str, heading: &str) -> Vec<String> {
    let mut lines = readme.lines().skip_while(|l| l.trim_end() != heading);
    assert!(lines.next().is_some(), "README.md has no {heading:?}");
    let mut out = vec![];
    // Inside a code block: Some(its text) for an `sh` block, None for another.
    let mut fence: Option<Option<String>> = None;
    for line in lines {
        if let Some(info) = line.strip_prefix("```") {
            match fence.take() {
                Some(block) => out.extend(block),
                None => fence = Some((info.trim() == "sh").then(String::new)),
            }
        } else if let Some(block) = &mut fence {
            if let Some(text) = block {
                text.push_str(line);
                text.push('\n');
            }
        } else if line.starts_with('#') {
            break;
        }
    }
    out
}

/// A directory laid out like the repository's root for the blocks: the
/// repository's entries linked in, `examples` copied (the blocks may write
/// there), this build as `target/debug`, the installed tools as
/// `.test-tools/venv/bin`.
fn repo_like(root: &Path) {
    let repo = repo_root();
    for entry in std::fs::read_dir(&repo).unwrap().flatten() {
        let name = entry.file_name();
        let skip = [
            "target",
            ".test-tools",
            ".fleetform",
            ".fleetform-dev",
            "examples",
        ];
        if !skip.iter().any(|s| name == *s) {
            std::os::unix::fs::symlink(entry.path(), root.join(&name)).unwrap();
        }
    }
    copy_dir(&repo.join("examples"), &root.join("examples"));
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::os::unix::fs::symlink(bin_dir(), root.join("target/debug")).unwrap();
    let tools = tool("nats-server").expect("the test tools (tests/run.sh installs them)");
    tool("moto_server").expect("the test tools (tests/run.sh installs them)");
    std::fs::create_dir_all(root.join(".test-tools/venv")).unwrap();
    std::os::unix::fs::symlink(tools.parent().unwrap(), root.join(".test-tools/venv/bin")).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let name = entry.file_name();
        if name == ".fleetform" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// The bash session that runs the blocks. Its process group (what the
/// blocks start stays in it: a non-interactive shell has no job control)
/// is killed if anything of it is left when the test ends, however it ends.
struct Session {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: PathBuf,
    fleet: PathBuf,
}

impl Session {
    /// Waits for a line of the session's stdout equal to `line`.
    fn wait_line(&mut self, line: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            match self
                .stdout
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(l) => {
                    let hit = l == line;
                    self.seen.push(l);
                    if hit {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("not done within {timeout:?}\n{}", self.report())
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().unwrap();
                    panic!("the block ended with {status}\n{}", self.report())
                }
            }
        }
    }

    /// Lets the session go on to its second block and waits for its end.
    fn finish(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let mut stdin = self.stdin.take().unwrap();
        writeln!(stdin).unwrap();
        drop(stdin);
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the second block did not end within {timeout:?}\n{}",
                self.report()
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        while let Ok(l) = self.stdout.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(l);
        }
        status
    }

    fn stdout(&self) -> String {
        self.seen.join("\n")
    }

    /// What the session printed, its trace, and the end of every log.
    fn report(&self) -> String {
        let mut out = format!(
            "--- stdout\n{}\n--- stderr (trace)\n{}",
            self.stdout(),
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        );
        for e in std::fs::read_dir(self.fleet.join("logs"))
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            out += &format!(
                "\n--- {}\n{}",
                e.path().display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        out
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let group = self.child.id();
        if !in_group(group).is_empty() {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{group}")])
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The live processes of process group `group`, from `/proc`.
fn in_group(group: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // `pid (comm) state ppid pgrp ...`; comm may hold spaces.
            let rest: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
                .split_whitespace()
                .collect();
            rest[0] != "Z" && rest[2].parse() == Ok(group)
        })
        .collect()
}

/// Starts bash on the two blocks, the second held back until the test
/// writes a line: `{ BLOCK } </dev/null` keeps what the block starts off
/// the session's stdin, and `set -e` ends the session at a failing command.
fn start(root: &Path, first: &str, second: &str, env: &[(&str, String)], fleet: &Path) -> Session {
    use std::os::unix::process::CommandExt;
    let script = format!(
        "set -euxo pipefail\n{{\n{first}}} </dev/null\necho '{FIRST_DONE}'\nread -r _\n{{\n{second}}} </dev/null\n"
    );
    let stderr = root.parent().unwrap().join("session.stderr");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(root)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let (tx, stdout) = mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Session {
        stdin: child.stdin.take(),
        child,
        stdout,
        seen: vec![],
        stderr,
        fleet: fleet.to_path_buf(),
    }
}

/// Keys in bucket `bucket` of the S3 server on `port` under `prefix` (a
/// bare ListObjectsV2: moto answers unsigned requests).
fn bucket_keys(port: u16, bucket: &str, prefix: &str) -> Vec<String> {
    let out = Command::new("curl")
        .args([
            "-sf",
            &format!("http://127.0.0.1:{port}/{bucket}?list-type=2&prefix={prefix}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split("<Key>")
        .skip(1)
        .filter_map(|k| k.split("</Key>").next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_fleet_section_applies_the_quickstart_and_stops_as_written() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let found = blocks(&readme, HEADING);
    assert_eq!(
        found.len(),
        2,
        "{HEADING:?} should have two sh blocks, a fleet's start with an apply and its stop: {found:#?}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    repo_like(&root);
    let shim = tmp.path().join("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let cargo_args = tmp.path().join("cargo-args");
    std::fs::write(
        shim.join("cargo"),
        format!("#!/bin/sh\necho \"$*\" >>'{}'\n", cargo_args.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        shim.join("cargo"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();

    let fleet = tmp.path().join("fleet");
    let base = fleetform_tests::free_port_block(5);
    let port = |i: u16| (base + i).to_string();
    let mut env = vec![
        (
            "PATH",
            format!("{}:{}", shim.display(), std::env::var("PATH").unwrap()),
        ),
        ("HOME", tmp.path().display().to_string()),
        ("FLEET_DIR", fleet.display().to_string()),
        ("NATS_PORT", port(0)),
        ("NATS_HTTP_PORT", port(1)),
        ("S3_PORT", port(2)),
        ("API_PORT", port(3)),
        ("UI_PORT", port(4)),
    ];
    if let Ok(t) = std::env::var("TMPDIR") {
        env.push(("TMPDIR", t));
    }
    let mut session = start(&root, &found[0], &found[1], &env, &fleet);
    session.wait_line(FIRST_DONE, Duration::from_secs(240));

    // The first block applied the quickstart through the fleet and listed
    // its state.
    let out = session.stdout();
    assert!(
        out.contains("Apply complete! Resources: 5 added, 0 changed, 0 destroyed."),
        "{}",
        session.report()
    );
    let listed = [
        "null_resource.inventory",
        "sim_object.network",
        "sim_object.server[0]",
        "sim_object.server[1]",
        "sim_object.server[2]",
    ];
    for addr in listed {
        assert!(
            out.lines().any(|l| l == addr),
            "{addr} not listed\n{}",
            session.report()
        );
    }
    assert_eq!(
        std::fs::read_to_string(&cargo_args).unwrap(),
        "build --workspace --bins\n",
        "the binaries this test links as target/debug are those of that build"
    );
    assert_eq!(
        sim_objects(&fleet.join("sim-store")),
        4,
        "network + 3 servers, by the workers, in the absolute sim_store\n{}",
        session.report()
    );
    // The state is the project's, where docs/operations.md says it is, and the
    // coordinator serves it to the bound directory.
    let keys = bucket_keys(
        base + 2,
        "fleetform",
        "states/projects.d/quickstart/default/",
    );
    assert!(
        keys.iter().any(|k| k.ends_with("/head")),
        "no state of project quickstart in the bucket: {keys:?}"
    );
    let list = fleetform(
        &[
            &format!("-chdir={}", fleet.join("quickstart").display()),
            "state",
            "list",
        ],
        &[
            (
                "FLEETFORM_COORDINATOR",
                format!("http://127.0.0.1:{}", base + 3),
            ),
            ("FLEETFORM_PROJECT", String::new()),
        ],
    )
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&list.stdout)
            .lines()
            .collect::<Vec<_>>(),
        listed,
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    let pids: Vec<(String, u32)> = std::fs::read_dir(fleet.join("pids"))
        .unwrap()
        .flatten()
        .map(|e| {
            let pid = std::fs::read_to_string(e.path())
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            (e.file_name().to_string_lossy().into_owned(), pid)
        })
        .collect();
    assert_eq!(pids.len(), 5, "nats, s3, coordinator, 2 workers: {pids:?}");
    for (name, pid) in &pids {
        assert!(
            alive(*pid),
            "{name} ({pid}) is not running\n{}",
            session.report()
        );
    }

    // The second block destroys what the first made and stops everything.
    let status = session.finish(Duration::from_secs(90));
    assert!(status.success(), "{status}\n{}", session.report());
    assert!(
        session
            .stdout()
            .contains("Destroy complete! Resources: 5 destroyed."),
        "{}",
        session.report()
    );
    for (name, pid) in &pids {
        assert!(!alive(*pid), "{name} ({pid}) still runs");
    }
    let left = in_group(session.child.id());
    assert!(
        left.is_empty(),
        "processes the blocks started still run: {left:?}"
    );
    assert!(!fleet.exists(), "{} is left", fleet.display());
}
