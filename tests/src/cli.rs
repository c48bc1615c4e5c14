//! Running the `fleetform` CLI: to completion, on a terminal, with input,
//! or in the background while a test acts on the fleet.

use crate::*;
use anyhow::{Context, bail};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs the CLI to completion.
pub fn fleetform(args: &[&str], envs: &[(&str, String)]) -> anyhow::Result<Output> {
    let mut cmd = Command::new(binary("fleetform"));
    cmd.args(args)
        .envs(envs.iter().map(|(k, v)| (*k, v.as_str())));
    bind_to_test_project(&mut cmd, args, envs);
    Ok(cmd.output()?)
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
