//! fleetform's own processes: a coordinator and workers started against
//! the test servers, and the project the tests' configurations bind to.

use crate::*;
use anyhow::bail;
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

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
        Coordinator::start_via(dir, &nats.url, s3, listen, name, extra, envs)
    }

    /// [`Coordinator::start_full`] reaching NATS at `nats_url` (a proxy
    /// in front of the server, to cut the coordinator off).
    pub fn start_via(
        dir: &Path,
        nats_url: &str,
        s3: &S3,
        listen: &str,
        name: &str,
        extra: &[&str],
        envs: &[(&str, String)],
    ) -> anyhow::Result<Coordinator> {
        let cmd = Command::new(binary("fleetform-coordinator"));
        Coordinator::start_cmd(cmd, dir, nats_url, s3, listen, name, extra, envs)
    }

    /// A coordinator inside `host` (a network namespace), listening on
    /// the host's address, reaching NATS at `nats.url` and the object
    /// store at `s3`'s endpoint (servers in other hosts).
    pub fn start_in(
        dir: &Path,
        host: &crate::netns::Host,
        nats: &Nats,
        s3: &S3,
        extra: &[&str],
    ) -> anyhow::Result<Coordinator> {
        Coordinator::start_in_via(dir, host, &nats.url, s3, extra, &[])
    }

    /// [`Coordinator::start_in`] reaching NATS at `nats_url` (a cluster's
    /// servers, comma-separated), with `envs`.
    pub fn start_in_via(
        dir: &Path,
        host: &crate::netns::Host,
        nats_url: &str,
        s3: &S3,
        extra: &[&str],
        envs: &[(&str, String)],
    ) -> anyhow::Result<Coordinator> {
        let mut cmd = host.command(binary("fleetform-coordinator"));
        // The API listens on the bridge, the tests' own trusted network.
        cmd.arg("--insecure");
        let listen = format!("{}:8400", host.addr);
        Coordinator::start_cmd(cmd, dir, nats_url, s3, &listen, "coordinator", extra, envs)
    }

    #[allow(clippy::too_many_arguments)]
    fn start_cmd(
        mut cmd: Command,
        dir: &Path,
        nats_url: &str,
        s3: &S3,
        listen: &str,
        name: &str,
        extra: &[&str],
        envs: &[(&str, String)],
    ) -> anyhow::Result<Coordinator> {
        cmd.args(extra);
        cmd.args(["--listen", listen, "--nats", nats_url])
            .args(["--state", &format!("s3://{}/states", s3.bucket)])
            .arg("--data-dir")
            .arg(dir.join(format!("{name}-data")))
            .args(["--name", &format!("fleetform-{name}")])
            .envs(s3.env())
            .envs(envs.iter().map(|(k, v)| (*k, v.as_str())))
            .env("RUST_LOG", "info");
        let (proc, stdout) = Proc::spawn(name, cmd, dir)?;
        let (addr, _rest) = wait_line(stdout, "listening on ", Duration::from_secs(30))
            .map_err(|e| anyhow::anyhow!("{e}; its log:\n{}", proc.log_text()))?;
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
        let cmd = Command::new(binary("fleetform-worker"));
        Worker::start_cmd(
            cmd,
            dir,
            &nats.url,
            id,
            concurrency,
            extra,
            log_filter,
            envs,
        )
    }

    /// [`Worker::start_with`] reaching NATS at `nats_url` (a proxy in
    /// front of the server: a link with latency, loss or a partition).
    pub fn start_via(
        dir: &Path,
        nats_url: &str,
        id: &str,
        concurrency: usize,
        extra: &[&str],
        log_filter: &str,
    ) -> anyhow::Result<Worker> {
        let cmd = Command::new(binary("fleetform-worker"));
        Worker::start_cmd(cmd, dir, nats_url, id, concurrency, extra, log_filter, &[])
    }

    /// A worker inside `host` (a network namespace), reaching `nats` (a
    /// server in another host) over the bridge.
    pub fn start_in(
        dir: &Path,
        host: &crate::netns::Host,
        nats: &Nats,
        id: &str,
        concurrency: usize,
        extra: &[&str],
        log_filter: &str,
    ) -> anyhow::Result<Worker> {
        Worker::start_in_via(
            dir,
            host,
            &nats.url,
            id,
            concurrency,
            extra,
            log_filter,
            &[],
        )
    }

    /// [`Worker::start_in`] reaching NATS at `nats_url` (one server of a
    /// cluster, or several comma-separated), with `envs`.
    #[allow(clippy::too_many_arguments)]
    pub fn start_in_via(
        dir: &Path,
        host: &crate::netns::Host,
        nats_url: &str,
        id: &str,
        concurrency: usize,
        extra: &[&str],
        log_filter: &str,
        envs: &[(&str, String)],
    ) -> anyhow::Result<Worker> {
        let cmd = host.command(binary("fleetform-worker"));
        Worker::start_cmd(cmd, dir, nats_url, id, concurrency, extra, log_filter, envs)
    }

    #[allow(clippy::too_many_arguments)]
    fn start_cmd(
        mut cmd: Command,
        dir: &Path,
        nats_url: &str,
        id: &str,
        concurrency: usize,
        extra: &[&str],
        log_filter: &str,
        envs: &[(&str, String)],
    ) -> anyhow::Result<Worker> {
        cmd.envs(envs.iter().map(|(k, v)| (*k, v.as_str())));
        cmd.args([
            "--nats",
            nats_url,
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
