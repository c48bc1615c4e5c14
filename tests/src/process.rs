//! Processes and ports: the repository's binaries and test tools, free
//! ports, child processes that die with their handle, commands run with a
//! time limit (and everything they start), logs waited for.

use anyhow::{Context, bail};
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// How a command run by [`run_grouped`] ended: `status` is None when it
/// ran over its time and was killed, with everything it started.
pub struct Grouped {
    pub status: Option<std::process::ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with no stdin, its output into files (a child that fills a
/// pipe nobody reads would hang), in its own process group, so that after
/// `timeout` the whole group (Terraform, providers, scripts) is killed.
pub fn run_grouped(mut cmd: Command, timeout: Duration) -> Grouped {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().expect("temporary directory");
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("start {:?}: {e}", cmd.get_program()));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > timeout {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Grouped {
        status,
        stdout: read(&out),
        stderr: read(&err),
    }
}

/// Where cargo put our binaries: the directory above the test's `deps/`.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .expect("deps dir")
        .parent()
        .expect("target dir")
        .to_path_buf()
}

/// One of our binaries; fails with a hint when it was not built.
pub fn binary(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.exists(),
        "{} is missing: run `cargo build --workspace --bins` first (tests/run.sh does)",
        p.display()
    );
    p
}

/// A test tool (nats-server, moto_server) from FLEETFORM_TEST_TOOLS or PATH.
pub fn tool(name: &str) -> anyhow::Result<PathBuf> {
    if let Ok(dir) = std::env::var("FLEETFORM_TEST_TOOLS") {
        let p = Path::new(&dir).join(name);
        if p.exists() {
            return Ok(p);
        }
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .join(".test-tools/venv/bin")
        .join(name);
    if repo.exists() {
        return Ok(repo);
    }
    bail!("{name} not found: run tests/run.sh, which installs it into .test-tools/venv")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind port 0")
        .local_addr()
        .expect("local addr")
        .port()
}

/// The first of `n` consecutive free ports, below the kernel's range of
/// ephemeral ports, for a script that binds its ports one server at a
/// time: a port in that range could meanwhile become the source port of
/// an outgoing connection (seen: the S3 server's port taken by a NATS
/// route connection between two NATS nodes, which had started first).
pub fn free_port_block(n: u16) -> u16 {
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let (low, high) = (10_000u16, ephemeral_low.saturating_sub(n).max(10_001));
    // A different start for each process: tests in parallel runs pick apart.
    let seed =
        std::process::id() as u64 ^ std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos() as u64;
    for i in 0..200u64 {
        let base = low + ((seed.wrapping_add(i * 7_919)) % u64::from(high - low)) as u16;
        if (base..base + n).all(|p| TcpListener::bind(("127.0.0.1", p)).is_ok()) {
            return base;
        }
    }
    panic!("no {n} free ports in a row below {ephemeral_low}");
}

pub fn wait_for_port(port: u16, timeout: Duration) -> anyhow::Result<()> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bail!("nothing listened on port {port} within {timeout:?}")
}

/// Waits until something listens at `addr:port` (a server in a host).
pub fn wait_for_addr(addr: std::net::Ipv4Addr, port: u16, timeout: Duration) -> anyhow::Result<()> {
    let start = Instant::now();
    let to = std::net::SocketAddr::from((addr, port));
    while start.elapsed() < timeout {
        if TcpStream::connect_timeout(&to, Duration::from_millis(500)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bail!("nothing listened on {addr}:{port} within {timeout:?}")
}

pub(crate) static APPEND_LOGS: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// From now on, a process started again under a name it had appends to
/// its log instead of starting it afresh (for post-mortems of long runs).
pub fn append_logs() {
    APPEND_LOGS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A child process killed on drop, with its stderr kept in a file.
pub struct Proc {
    pub name: String,
    child: Child,
    pub log: PathBuf,
}

impl Proc {
    pub fn spawn(
        name: &str,
        mut cmd: Command,
        log_dir: &Path,
    ) -> anyhow::Result<(Proc, ChildStdout)> {
        let log = log_dir.join(format!("{name}.log"));
        let file = if APPEND_LOGS.load(std::sync::atomic::Ordering::Relaxed) {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log)?
        } else {
            std::fs::File::create(&log)?
        };
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(file)
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        Ok((
            Proc {
                name: name.to_string(),
                child,
                log,
            },
            stdout,
        ))
    }

    /// Sends SIGINT and waits for the process to exit; returns its stdout rest.
    pub fn interrupt(&mut self) -> anyhow::Result<()> {
        let _ = Command::new("kill")
            .arg("-INT")
            .arg(self.child.id().to_string())
            .status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        bail!("{} did not stop after SIGINT", self.name)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the process (SIGKILL) and reaps it, as a crash would end it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads stdout lines until one starts with `prefix`; returns the rest of it.
/// Later lines are collected in the background into the returned receiver.
pub(crate) fn wait_line(
    stdout: ChildStdout,
    prefix: &str,
    timeout: Duration,
) -> anyhow::Result<(String, mpsc::Receiver<String>)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(rest) = line.strip_prefix(prefix) {
                    return Ok((rest.trim().to_string(), rx));
                }
            }
            Err(_) => bail!("no line starting with {prefix:?} within {timeout:?}"),
        }
    }
}

/// The processes whose parent is `pid`, from `/proc`.
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| process_parent(*child) == Some(pid))
        .collect()
}

/// A process's parent, if it is alive (a zombie counts as gone).
pub(crate) fn process_parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
    let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = rest.next()?;
    (state != "Z").then(|| rest.next()?.parse().ok())?
}

/// Whether process `pid` is alive (not gone, not a zombie).
pub fn alive(pid: u32) -> bool {
    process_parent(pid).is_some()
}

/// Waits until the file at `path` contains `needle` (a process log).
pub fn wait_for_log(path: &Path, needle: &str, timeout: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if std::fs::read_to_string(path).is_ok_and(|t| t.contains(needle)) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!(
        "{} never contained {needle:?} within {timeout:?}",
        path.display()
    )
}

/// The id of the first run a coordinator's log names (`run_id=...`).
pub fn run_id_in_log(log: &str) -> String {
    let at = log
        .find("run_id=")
        .unwrap_or_else(|| panic!("no run id in:\n{log}"));
    log[at + "run_id=".len()..]
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}
