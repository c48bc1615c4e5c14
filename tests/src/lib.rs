//! Integration test harness: starts real `nats-server`, a real S3 server
//! (moto), coordinators and workers as processes on free ports and temp
//! dirs, and kills them when dropped.
//!
//! The test tools come from `tests/run.sh`, which installs them into
//! `.test-tools/venv` and exports `FLEETFORM_TEST_TOOLS`; the fleetform
//! binaries come from the same cargo target directory as the test.

pub mod exprdiff;
pub mod exprgen;
pub mod terraform;
pub mod texts;
pub mod tftest;

use anyhow::{Context, bail};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Where cargo put our binaries: the directory above the test's `deps/`.
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

fn wait_for_port(port: u16, timeout: Duration) -> anyhow::Result<()> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    bail!("nothing listened on port {port} within {timeout:?}")
}

static APPEND_LOGS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

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
    fn spawn(name: &str, mut cmd: Command, log_dir: &Path) -> anyhow::Result<(Proc, ChildStdout)> {
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
fn wait_line(
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

/// A JetStream-enabled nats-server.
pub struct Nats {
    pub url: String,
    proc: Proc,
    port: u16,
    dir: PathBuf,
}

impl Nats {
    pub fn start(dir: &Path) -> anyhow::Result<Nats> {
        let port = free_port();
        let proc = Nats::spawn(dir, port)?;
        Ok(Nats {
            url: format!("nats://127.0.0.1:{port}"),
            proc,
            port,
            dir: dir.to_path_buf(),
        })
    }

    fn spawn(dir: &Path, port: u16) -> anyhow::Result<Proc> {
        let store = dir.join("nats");
        let mut cmd = Command::new(tool("nats-server")?);
        cmd.args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
            .arg(&store);
        let (proc, _stdout) = Proc::spawn("nats-server", cmd, dir)?;
        wait_for_port(port, Duration::from_secs(10))?;
        Ok(proc)
    }

    /// A nats-server without JetStream (a misconfigured fleet's).
    pub fn start_without_jetstream(dir: &Path) -> anyhow::Result<Nats> {
        let port = free_port();
        let mut cmd = Command::new(tool("nats-server")?);
        cmd.args(["-a", "127.0.0.1", "-p", &port.to_string()]);
        let (proc, _stdout) = Proc::spawn("nats-server", cmd, dir)?;
        wait_for_port(port, Duration::from_secs(10))?;
        Ok(Nats {
            url: format!("nats://127.0.0.1:{port}"),
            proc,
            port,
            dir: dir.to_path_buf(),
        })
    }

    /// A server with `config` (nats-server's configuration format) added to
    /// the address, port and JetStream store set here, and `env` in its
    /// environment (for `$VARIABLE` references in the configuration).
    pub fn start_configured(
        dir: &Path,
        config: &str,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Nats> {
        let port = free_port();
        let file = dir.join("nats-server.conf");
        std::fs::write(
            &file,
            format!(
                "listen: 127.0.0.1:{port}\njetstream {{\n  store_dir: {:?}\n}}\n{config}\n",
                dir.join("nats")
            ),
        )?;
        let mut cmd = Command::new(tool("nats-server")?);
        cmd.arg("-c").arg(&file);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let (proc, _stdout) = Proc::spawn("nats-server", cmd, dir)?;
        wait_for_port(port, Duration::from_secs(10))?;
        Ok(Nats {
            url: format!("nats://127.0.0.1:{port}"),
            proc,
            port,
            dir: dir.to_path_buf(),
        })
    }

    /// Kills the server (SIGKILL) and, after `down`, starts it again on
    /// the same port and store, as a crashed and restarted NATS would be.
    /// Kills nats-server (SIGKILL); [`Nats::start_again`] brings it back.
    pub fn kill(&mut self) {
        self.proc.kill();
    }

    /// Starts nats-server again on the same port and store.
    pub fn start_again(&mut self) -> anyhow::Result<()> {
        self.proc = Nats::spawn(&self.dir, self.port)?;
        Ok(())
    }

    pub fn restart(&mut self, down: Duration) -> anyhow::Result<()> {
        self.proc.kill();
        std::thread::sleep(down);
        self.proc = Nats::spawn(&self.dir, self.port)?;
        Ok(())
    }
}

/// moto's S3 server with one bucket created.
pub struct S3 {
    pub endpoint: String,
    pub bucket: String,
    _proc: Proc,
}

impl S3 {
    pub fn start(dir: &Path) -> anyhow::Result<S3> {
        let port = free_port();
        let mut cmd = Command::new(tool("moto_server")?);
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()]);
        let (proc, _stdout) = Proc::spawn("moto", cmd, dir)?;
        wait_for_port(port, Duration::from_secs(30))?;
        let bucket = "fleetform-test".to_string();
        http_put(port, &format!("/{bucket}"))?;
        Ok(S3 {
            endpoint: format!("http://127.0.0.1:{port}"),
            bucket,
            _proc: proc,
        })
    }

    /// moto checking credentials as AWS does (`INITIAL_NO_AUTH_ACTION_COUNT=0`:
    /// IAM checks from the first request on), so keys it never issued,
    /// such as [`S3::env`]'s, are refused with `InvalidAccessKeyId`. No
    /// bucket is created (that would need credentials too).
    pub fn start_checking_credentials(dir: &Path) -> anyhow::Result<S3> {
        let port = free_port();
        let mut cmd = Command::new(tool("moto_server")?);
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .env("INITIAL_NO_AUTH_ACTION_COUNT", "0");
        let (proc, _stdout) = Proc::spawn("moto", cmd, dir)?;
        wait_for_port(port, Duration::from_secs(30))?;
        Ok(S3 {
            endpoint: format!("http://127.0.0.1:{port}"),
            bucket: "fleetform-test".to_string(),
            _proc: proc,
        })
    }

    /// Deletes the bucket (a bare DeleteBucket; moto deletes only an empty
    /// one), as an operator who removed it by mistake would.
    pub fn delete_bucket(&self) -> anyhow::Result<()> {
        self.delete(&format!("/{}", self.bucket))
    }

    /// Creates the bucket (again, after [`S3::remove_bucket_and_objects`]).
    pub fn create_bucket(&self) -> anyhow::Result<()> {
        http_put(self.port(), &format!("/{}", self.bucket))
    }

    /// Removes the bucket with everything in it, at once: moto's reset
    /// (`POST /moto-api/reset`; moto refuses unsigned object deletes).
    pub fn remove_bucket_and_objects(&self) -> anyhow::Result<()> {
        let port = self.port();
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        write!(
            s,
            "POST /moto-api/reset HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        anyhow::ensure!(
            resp.starts_with("HTTP/1.1 200"),
            "resetting moto failed: {resp}"
        );
        Ok(())
    }

    /// A bare DELETE of `path`.
    fn delete(&self, path: &str) -> anyhow::Result<()> {
        let port = self.port();
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        write!(
            s,
            "DELETE {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        anyhow::ensure!(
            resp.starts_with("HTTP/1.1 204") || resp.starts_with("HTTP/1.1 200"),
            "deleting {path} failed: {resp}"
        );
        Ok(())
    }

    /// Keys in the bucket under `prefix` (a bare, unsigned ListObjectsV2).
    pub fn keys(&self, prefix: &str) -> anyhow::Result<Vec<String>> {
        let port = self.port();
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        write!(
            s,
            "GET /{}?list-type=2&prefix={prefix} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n",
            self.bucket
        )?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        anyhow::ensure!(resp.starts_with("HTTP/1.1 200"), "listing failed: {resp}");
        Ok(resp
            .split("<Key>")
            .skip(1)
            .filter_map(|k| k.split("</Key>").next())
            .map(str::to_string)
            .collect())
    }

    /// Writes `body` at `key` (a bare, unsigned PutObject): what another
    /// writer, or a process killed mid-write, leaves in the bucket.
    pub fn put(&self, key: &str, body: &[u8]) -> anyhow::Result<()> {
        let port = self.port();
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        write!(
            s,
            "PUT /{}/{key} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.bucket,
            body.len()
        )?;
        s.write_all(body)?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        anyhow::ensure!(
            resp.starts_with("HTTP/1.1 200"),
            "writing {key} failed: {resp}"
        );
        Ok(())
    }

    /// Environment for object_store's S3 client.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }
}

/// Creates a bucket with a bare HTTP PUT (moto accepts unsigned requests).
fn http_put(port: u16, path: &str) -> anyhow::Result<()> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    write!(
        s,
        "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut resp = String::new();
    s.read_to_string(&mut resp)?;
    if !resp.starts_with("HTTP/1.1 200") {
        bail!(
            "creating bucket {path} failed: {}",
            resp.lines().next().unwrap_or("")
        );
    }
    Ok(())
}

/// The sim provider, configured from variables: `store` (its directory),
/// `latency_ms` (default 0) and `failure_rate` (default 0). Tests append
/// their resources.
pub const SIM_PROVIDER: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" {
  type = string
}

variable "latency_ms" {
  type    = number
  default = 0
}

variable "failure_rate" {
  type    = number
  default = 0
}

provider "sim" {
  store_dir    = var.store
  latency_ms   = var.latency_ms
  failure_rate = var.failure_rate
}
"#;

/// Writes `SIM_PROVIDER` + `resources` as `dir/NAME/main.tf`; returns the directory.
pub fn sim_config(dir: &Path, name: &str, resources: &str) -> PathBuf {
    let config = dir.join(name);
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("main.tf"), format!("{SIM_PROVIDER}{resources}")).expect("main.tf");
    config
}

/// Writes, as `dir/NAME/main.tf`, the sim provider configured with
/// `store_dir = var.store` and `provider_args`, then `resources`; returns
/// the directory.
pub fn sim_config_with(dir: &Path, name: &str, provider_args: &str, resources: &str) -> PathBuf {
    let config = dir.join(name);
    std::fs::create_dir_all(&config).expect("config dir");
    let text = format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

variable "store" {{
  type = string
}}

provider "sim" {{
  store_dir = var.store
  {provider_args}
}}
{resources}"#
    );
    std::fs::write(config.join("main.tf"), text).expect("main.tf");
    config
}

pub struct Coordinator {
    pub url: String,
    pub proc: Proc,
}

impl Coordinator {
    pub fn start(dir: &Path, nats: &Nats, s3: &S3) -> anyhow::Result<Coordinator> {
        Coordinator::start_on(dir, nats, s3, "127.0.0.1:0")
    }

    /// Listening on `listen`: a restarted coordinator takes its
    /// predecessor's address (`url` without `http://`).
    pub fn start_on(dir: &Path, nats: &Nats, s3: &S3, listen: &str) -> anyhow::Result<Coordinator> {
        Coordinator::start_as(dir, nats, s3, listen, "coordinator")
    }

    /// Another coordinator beside the first: its own name (result
    /// consumer), data directory and log, the same NATS and state store.
    pub fn start_as(
        dir: &Path,
        nats: &Nats,
        s3: &S3,
        listen: &str,
        name: &str,
    ) -> anyhow::Result<Coordinator> {
        Coordinator::start_with(dir, nats, s3, listen, name, &[])
    }

    /// [`Coordinator::start_as`] with extra arguments (`--lock-ttl=4s`).
    pub fn start_with(
        dir: &Path,
        nats: &Nats,
        s3: &S3,
        listen: &str,
        name: &str,
        extra: &[&str],
    ) -> anyhow::Result<Coordinator> {
        Coordinator::start_full(dir, nats, s3, listen, name, extra, &[])
    }

    /// [`Coordinator::start_with`] with extra environment, which wins over
    /// the S3 settings (`S3::env_via` for a proxy).
    pub fn start_full(
        dir: &Path,
        nats: &Nats,
        s3: &S3,
        listen: &str,
        name: &str,
        extra: &[&str],
        envs: &[(&str, String)],
    ) -> anyhow::Result<Coordinator> {
        let mut cmd = Command::new(binary("fleetform-coordinator"));
        cmd.args(extra);
        cmd.args(["--listen", listen, "--nats", &nats.url])
            .args(["--state", &format!("s3://{}/states", s3.bucket)])
            .arg("--data-dir")
            .arg(dir.join(format!("{name}-data")))
            .args(["--name", &format!("fleetform-{name}")])
            .envs(s3.env())
            .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
            .env("RUST_LOG", "info");
        let (proc, stdout) = Proc::spawn(name, cmd, dir)?;
        let (addr, _rest) = wait_line(stdout, "listening on ", Duration::from_secs(30))?;
        Ok(Coordinator {
            url: format!("http://{addr}"),
            proc,
        })
    }
}

pub struct Worker {
    pub id: String,
    pub proc: Proc,
    lines: mpsc::Receiver<String>,
}

impl Worker {
    pub fn start(dir: &Path, nats: &Nats, id: &str, concurrency: usize) -> anyhow::Result<Worker> {
        Worker::start_with(dir, nats, id, concurrency, &[], "info")
    }

    /// With extra arguments and a `RUST_LOG` filter.
    pub fn start_with(
        dir: &Path,
        nats: &Nats,
        id: &str,
        concurrency: usize,
        extra: &[&str],
        log_filter: &str,
    ) -> anyhow::Result<Worker> {
        Worker::start_full(dir, nats, id, concurrency, extra, log_filter, &[])
    }

    /// [`Worker::start_with`] with environment variables.
    pub fn start_full(
        dir: &Path,
        nats: &Nats,
        id: &str,
        concurrency: usize,
        extra: &[&str],
        log_filter: &str,
        envs: &[(&str, String)],
    ) -> anyhow::Result<Worker> {
        let mut cmd = Command::new(binary("fleetform-worker"));
        cmd.envs(envs.iter().map(|(k, v)| (*k, v.as_str())));
        cmd.args([
            "--nats",
            &nats.url,
            "--id",
            id,
            "--concurrency",
            &concurrency.to_string(),
        ])
        .args(extra)
        .env("RUST_LOG", log_filter);
        let (proc, stdout) = Proc::spawn(&format!("worker-{id}"), cmd, dir)?;
        let (_, lines) = wait_line(
            stdout,
            &format!("worker {id} ready"),
            Duration::from_secs(30),
        )?;
        Ok(Worker {
            id: id.to_string(),
            proc,
            lines,
        })
    }

    /// Stops the worker and returns how many tasks it completed (from its
    /// last stdout line, `worker ID completed N tasks`).
    pub fn stop(mut self) -> anyhow::Result<u64> {
        self.proc.interrupt()?;
        let prefix = format!("worker {} completed ", self.id);
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            if let Some(rest) = line.strip_prefix(&prefix) {
                return Ok(rest.trim_end_matches(" tasks").parse()?);
            }
        }
        bail!(
            "worker {} did not report its task count; log:\n{}",
            self.id,
            self.proc.log_text()
        )
    }
}

/// The project the harness binds a CLI run through a coordinator to
/// (`FLEETFORM_PROJECT`), unless the test names one itself (an empty value
/// names none): a coordinator refuses state commands from a configuration
/// without a project, and most tests are about something else.
pub const TEST_PROJECT: &str = "tests";

/// Gives `cmd` (a CLI run with `args` and extra `envs`) the test project
/// when it goes to a coordinator and the test named no project.
pub fn bind_to_test_project<S: AsRef<std::ffi::OsStr>>(
    cmd: &mut Command,
    args: &[S],
    envs: &[(&str, String)],
) {
    let to_coordinator = args
        .iter()
        .any(|a| a.as_ref().to_string_lossy().starts_with("--coordinator"))
        || envs.iter().any(|(k, _)| *k == "FLEETFORM_COORDINATOR")
        || cmd
            .get_envs()
            .any(|(k, v)| k == "FLEETFORM_COORDINATOR" && v.is_some());
    let named = envs.iter().any(|(k, _)| *k == "FLEETFORM_PROJECT")
        || cmd.get_envs().any(|(k, _)| k == "FLEETFORM_PROJECT");
    if to_coordinator && !named {
        cmd.env("FLEETFORM_PROJECT", TEST_PROJECT);
    }
}

/// Runs the CLI to completion.
pub fn fleetform(args: &[&str], envs: &[(&str, String)]) -> anyhow::Result<Output> {
    let mut cmd = Command::new(binary("fleetform"));
    cmd.args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())));
    bind_to_test_project(&mut cmd, args, envs);
    Ok(cmd.output()?)
}

/// Files (objects) in a sim provider store directory.
pub fn sim_objects(store: &Path) -> usize {
    std::fs::read_dir(store)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        })
        .unwrap_or(0)
}

/// What one CLI invocation printed and how it exited.
#[derive(Debug)]
pub struct CliRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl CliRun {
    /// Both streams, for failure messages and substring checks.
    pub fn all_output(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Runs `fleetform ARGS` (a shell word list, after `setup`, e.g. `stty
/// rows 24 cols 40;`) in `dir` on a pseudo-terminal that `script` makes,
/// with `input` typed into it; (exit code, what the terminal showed, with
/// `\r` removed). None when `script` is not installed: the caller skips.
pub fn on_terminal(dir: &Path, setup: &str, args: &str, input: &str) -> Option<(i32, String)> {
    Command::new("script").arg("--version").output().ok()?;
    let line = format!("{setup} {} {args}", binary("fleetform").display());
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start script");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.as_bytes())
        .expect("type into the terminal");
    let out = child.wait_with_output().expect("wait for script");
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).replace('\r', ""),
    ))
}

/// Runs `fleetform ARGS...` in `dir` with `input` on its standard input
/// (`console`, `fmt -`), to completion.
pub fn run_with_input(dir: &Path, args: &[&str], input: &str) -> CliRun {
    let mut cmd = Command::new(binary("fleetform"));
    bind_to_test_project(&mut cmd, args, &[]);
    let mut child = cmd
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fleetform");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait for fleetform");
    CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `fleetform -chdir=DIR ARGS...` to completion, killing it when it runs
/// longer than `timeout` so a hung CLI fails the test instead of the suite.
pub fn fleetform_in(dir: &Path, args: &[String], timeout: Duration) -> anyhow::Result<CliRun> {
    let mut cmd = Command::new(binary("fleetform"));
    bind_to_test_project(&mut cmd, args, &[]);
    let child = cmd
        .arg(format!("-chdir={}", dir.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting fleetform")?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => {
            let out = out?;
            Ok(CliRun {
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            })
        }
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            bail!("fleetform {args:?} did not finish within {timeout:?}")
        }
    }
}

/// Runs the CLI in `dir` (embedded mode unless the environment names a
/// coordinator), with a timeout generous enough for any single command.
pub fn run_in(dir: &Path, args: &[&str]) -> CliRun {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    fleetform_in(dir, &args, Duration::from_secs(300)).expect("run fleetform")
}

/// A CLI started in the background, so a test can act while it runs (wait
/// for a line, interrupt it) and then collect how it ended.
pub struct BackgroundCli {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl BackgroundCli {
    /// Starts `fleetform -chdir=DIR ARGS...` with extra environment.
    pub fn start(dir: &Path, args: &[&str], envs: &[(&str, String)]) -> anyhow::Result<Self> {
        BackgroundCli::spawn(dir, args, envs, false)
    }

    /// [`BackgroundCli::start`] with a stdin to answer prompts on
    /// ([`BackgroundCli::answer`]).
    pub fn start_interactive(dir: &Path, args: &[&str]) -> anyhow::Result<Self> {
        BackgroundCli::spawn(dir, args, &[], true)
    }

    /// Writes a line to the CLI's stdin.
    pub fn answer(&mut self, line: &str) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("started without a stdin")?;
        writeln!(stdin, "{line}")?;
        stdin.flush()?;
        Ok(())
    }

    fn spawn(
        dir: &Path,
        args: &[&str],
        envs: &[(&str, String)],
        interactive: bool,
    ) -> anyhow::Result<Self> {
        let mut cmd = Command::new(binary("fleetform"));
        bind_to_test_project(&mut cmd, args, envs);
        let mut child = cmd
            .arg(format!("-chdir={}", dir.display()))
            .args(args)
            .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(if interactive {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting fleetform")?;
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().expect("piped stdout");
        let err = child.stderr.take().expect("piped stderr");
        for stream in [Box::new(out) as Box<dyn Read + Send>, Box::new(err)] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Ok(BackgroundCli {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        })
    }

    /// Waits until a line (stdout or stderr) contains `needle`.
    pub fn wait_for(&mut self, needle: &str, timeout: Duration) -> anyhow::Result<()> {
        if self.seen.iter().any(|l| l.contains(needle)) {
            return Ok(());
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let hit = line.contains(needle);
                    self.seen.push(line);
                    if hit {
                        return Ok(());
                    }
                }
                Err(_) => bail!(
                    "no line containing {needle:?} within {timeout:?}; output so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Waits until `n` lines (stdout or stderr) contain `needle`.
    pub fn wait_count(&mut self, needle: &str, n: usize, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        while self.seen.iter().filter(|l| l.contains(needle)).count() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => bail!(
                    "fewer than {n} lines containing {needle:?} within {timeout:?}; output so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
        Ok(())
    }

    /// Whether the CLI has exited.
    pub fn is_finished(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Kills the CLI (SIGKILL), as a crash or a closed laptop would end it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGINT, as Ctrl-C does.
    pub fn interrupt(&self) -> anyhow::Result<()> {
        let status = Command::new("kill")
            .arg("-INT")
            .arg(self.child.id().to_string())
            .status()?;
        anyhow::ensure!(status.success(), "kill -INT failed");
        Ok(())
    }

    /// Waits for the exit (killing the CLI after `timeout`); returns the exit
    /// code and everything it printed, stdout and stderr interleaved.
    pub fn finish(mut self, timeout: Duration) -> anyhow::Result<(i32, String)> {
        let deadline = Instant::now() + timeout;
        let code = loop {
            if let Some(status) = self.child.try_wait()? {
                break status.code().unwrap_or(-1);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                bail!(
                    "fleetform did not exit within {timeout:?}; output so far:\n{}",
                    self.seen.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader threads end at EOF, after the exit.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        Ok((code, self.seen.join("\n")))
    }
}

impl Drop for BackgroundCli {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
fn process_parent(pid: u32) -> Option<u32> {
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

/// A TCP proxy in front of a server (the S3 server) that can refuse
/// service: while down, every open connection is cut and new ones are
/// closed at once, as a failing or unreachable object store behaves.
pub struct FlakyProxy {
    pub port: u16,
    down: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<TcpStream>>>,
}

impl FlakyProxy {
    pub fn start(upstream_port: u16) -> anyhow::Result<FlakyProxy> {
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let down = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let open = std::sync::Arc::new(std::sync::Mutex::new(Vec::<TcpStream>::new()));
        let (d, o) = (down.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if d.load(Ordering::SeqCst) {
                    let _ = client.shutdown(std::net::Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                {
                    let mut o = o.lock().expect("proxy lock");
                    o.retain(|s| s.peer_addr().is_ok());
                    for s in [&client, &server] {
                        if let Ok(c) = s.try_clone() {
                            o.push(c);
                        }
                    }
                }
                for (mut from, mut to) in [
                    (client.try_clone(), server.try_clone()),
                    (server.try_clone(), client.try_clone()),
                ]
                .into_iter()
                .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Write);
                    });
                }
            }
        });
        Ok(FlakyProxy { port, down, open })
    }

    /// Refuses service (cutting every open connection) or serves again.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, std::sync::atomic::Ordering::SeqCst);
        if down {
            for s in self.open.lock().expect("proxy lock").drain(..) {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

impl S3 {
    /// The server's port.
    pub fn port(&self) -> u16 {
        self.endpoint
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("endpoint port")
    }

    /// [`S3::env`] pointing at `port` (a proxy) instead of the server.
    pub fn env_via(&self, port: u16) -> Vec<(&'static str, String)> {
        let mut env = self.env();
        for (k, v) in &mut env {
            if *k == "AWS_ENDPOINT_URL" {
                *v = format!("http://127.0.0.1:{port}");
            }
        }
        env
    }
}

/// A small deterministic generator (xorshift), so seeded choices repeat.
pub struct Rng(pub u64);

impl Rng {
    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The objects of a sim store: id → name. Objects are `<id>.json`; a
/// `.<id>.<n>.tmp` is a write a killed provider never finished (the sim
/// never lists it either).
pub fn sim_store_objects(store: &Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(store) else {
        return out;
    };
    for e in entries.flatten() {
        if e.path().extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
            && let (Some(id), Some(name)) = (v["id"].as_str(), v["name"].as_str())
        {
            out.insert(id.to_string(), name.to_string());
        }
    }
    out
}
