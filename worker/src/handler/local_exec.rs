//! The `local-exec` provisioner as Terraform 1.9 runs it: the command
//! through `interpreter` (by default `/bin/sh -c`), in `working_dir`, with
//! the worker's environment plus `environment`; standard output and error
//! interleaved through one pipe, one output message per line; a failure
//! reported with the command, Go's wording of how it ended, and the last
//! 8 KiB of output. A cancelled run kills the command's process group.

use super::StopSignal;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::ProvisionerSpec;
use std::io::{BufRead, BufReader, Read};
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// How much output the failure message quotes (Terraform's buffer size).
const TAIL_BYTES: usize = 8 * 1024;
/// How much output a result carries, so that it stays well below a queue
/// message's size limit; the rest is counted, not kept.
const MAX_OUTPUT_BYTES: usize = 256 * 1024;
/// How long output is still read after the command was killed: a process
/// that left the process group may hold the pipe open for good.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(2);

/// Whether and how this process runs `local-exec` provisioners: code that
/// whoever may apply a configuration writes, run on a machine that holds
/// the fleet's credentials. A process-wide setting, made once at start by
/// the program that hosts the worker (`fleetform-worker`: refused unless
/// `--allow-local-exec`, then with a clean environment; the CLI's embedded
/// worker: the user's own machine, so inherited, as Terraform runs them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocalExecPolicy {
    /// Not run: the provisioner fails with a message naming the pool.
    Refused { pool: String },
    /// Run with only PATH, HOME, USER, LOGNAME, LANG, TMPDIR and SHELL of
    /// the worker's environment, plus the provisioner's `environment`.
    CleanEnvironment,
    /// Run with the process's whole environment, as Terraform does.
    InheritEnvironment,
}

static POLICY: std::sync::OnceLock<LocalExecPolicy> = std::sync::OnceLock::new();

/// Sets the policy once; later calls change nothing (the default, for
/// library users and tests, is [`LocalExecPolicy::InheritEnvironment`]).
pub fn set_policy(policy: LocalExecPolicy) {
    let _ = POLICY.set(policy);
}

pub fn policy() -> LocalExecPolicy {
    POLICY
        .get()
        .cloned()
        .unwrap_or(LocalExecPolicy::InheritEnvironment)
}

/// What a clean environment keeps of the worker's.
const KEPT_VARIABLES: [&str; 7] = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "SHELL"];

/// Called with each output message as it is printed (from a blocking
/// thread), before [`run`] returns them all.
pub(super) type OnLine = Arc<dyn Fn(&str) + Send + Sync>;

/// Runs one `local-exec` provisioner: its output messages, and the error
/// that fails it. Each message is also passed to `on_line` as it comes.
pub(super) async fn run(
    spec: &ProvisionerSpec,
    stop: &dyn StopSignal,
    on_line: OnLine,
) -> (Vec<String>, Result<(), Diagnostic>) {
    if let LocalExecPolicy::Refused { pool } = policy() {
        let d = Diagnostic::error(
            "local-exec provisioners are not allowed",
            format!(
                "The workers of pool {pool:?} do not run local-exec provisioners: they would run commands from the configuration on machines that hold the fleet's credentials. Start the pool's workers with --allow-local-exec to allow them."
            ),
        );
        return (vec![], Err(d));
    }
    if spec.command.is_empty() {
        let d = Diagnostic::error(
            "Invalid local-exec provisioner command",
            "The command must be a non-empty string.",
        );
        return (vec![], Err(d));
    }
    let mut argv = if spec.interpreter.is_empty() {
        default_interpreter()
    } else {
        spec.interpreter.clone()
    };
    argv.push(spec.command.clone());
    let first = if spec.quiet {
        "local-exec: Executing: Suppressed by quiet=true".to_string()
    } else {
        let quoted: Vec<String> = argv.iter().map(|a| go_quote(a)).collect();
        format!("Executing: [{}]", quoted.join(" "))
    };
    on_line(&first);
    let mut output = vec![first];
    let (captured, ended) = execute(spec, &argv, stop, on_line.clone()).await;
    output.extend(captured.lines);
    if captured.dropped > 0 {
        let more = format!("({} more lines of output not shown)", captured.dropped);
        on_line(&more);
        output.push(more);
    }
    let result = match ended {
        Ok(()) => Ok(()),
        Err(how) => Err(Diagnostic::error(
            "local-exec provisioner error",
            format!(
                "Error running command '{}': {how}. Output: {}",
                spec.command,
                String::from_utf8_lossy(&captured.tail)
            ),
        )),
    };
    (output, result)
}

fn default_interpreter() -> Vec<String> {
    if cfg!(windows) {
        vec!["cmd".into(), "/C".into()]
    } else {
        vec!["/bin/sh".into(), "-c".into()]
    }
}

/// What the command printed.
#[derive(Default)]
struct Captured {
    lines: Vec<String>,
    /// Lines past [`MAX_OUTPUT_BYTES`].
    dropped: usize,
    /// The last [`TAIL_BYTES`] bytes, as they were.
    tail: Vec<u8>,
}

/// Starts the command and waits for it (and for its output to end); the
/// error is how Go's `os/exec` words a failure, as Terraform reports it.
async fn execute(
    spec: &ProvisionerSpec,
    argv: &[String],
    stop: &dyn StopSignal,
    on_line: OnLine,
) -> (Captured, Result<(), String>) {
    // Go checks the directory first, for a clearer error than exec's.
    if let Some(dir) = spec.working_dir.as_deref().filter(|d| !d.is_empty())
        && let Err(e) = std::fs::metadata(dir)
    {
        return (
            Captured::default(),
            Err(format!("chdir {dir}: {}", os_error(&e))),
        );
    }
    // One pipe for both streams keeps their lines in the order written.
    let (reader, writer) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => {
            let msg = format!("failed to initialize pipe for output: {e}");
            return (Captured::default(), Err(msg));
        }
    };
    let stderr = match writer.try_clone() {
        Ok(w) => w,
        Err(e) => return (Captured::default(), Err(e.to_string())),
    };
    let mut cmd = tokio::process::Command::new(&argv[0]);
    if policy() == LocalExecPolicy::CleanEnvironment {
        cmd.env_clear();
        for k in KEPT_VARIABLES {
            if let Some(v) = std::env::var_os(k) {
                cmd.env(k, v);
            }
        }
    }
    cmd.args(&argv[1..])
        .envs(&spec.environment)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(stderr)
        .kill_on_drop(true);
    if let Some(dir) = spec.working_dir.as_deref().filter(|d| !d.is_empty()) {
        cmd.current_dir(dir);
    }
    // Its own process group, so stopping it reaches what it started too.
    #[cfg(unix)]
    cmd.process_group(0);
    let spawned = cmd.spawn();
    // The command holds our copies of the pipe's write end: without
    // dropping them the output never ends.
    drop(cmd);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return (Captured::default(), Err(spawn_error(&argv[0], &e))),
    };
    let mut output = tokio::task::spawn_blocking(move || capture(reader, on_line.as_ref()));
    let mut killed = false;
    let status = tokio::select! {
        s = child.wait() => s,
        _ = stop.stopped() => {
            kill(&mut child);
            killed = true;
            child.wait().await
        }
    };
    // Terraform waits for the output to end, which is when every process
    // holding the pipe has exited, unless the run is cancelled.
    let captured = if killed {
        tokio::time::timeout(DRAIN_AFTER_KILL, &mut output)
            .await
            .ok()
    } else {
        tokio::select! {
            c = &mut output => Some(c),
            _ = stop.stopped() => {
                kill(&mut child);
                tokio::time::timeout(DRAIN_AFTER_KILL, &mut output).await.ok()
            }
        }
    };
    let captured = captured.and_then(Result::ok).unwrap_or_default();
    let ended = match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(exit_text(s)),
        Err(e) => Err(e.to_string()),
    };
    (captured, ended)
}

/// Reads the pipe to its end: one message per line (without the line
/// break), each passed to `on_line` as it is read, and the tail of the raw
/// bytes.
fn capture(reader: std::io::PipeReader, on_line: &(dyn Fn(&str) + Send + Sync)) -> Captured {
    let mut out = Captured::default();
    let mut kept = 0usize;
    let mut reader = BufReader::new(reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.by_ref().read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        out.tail.extend_from_slice(&buf);
        if out.tail.len() > 2 * TAIL_BYTES {
            out.tail.drain(..out.tail.len() - TAIL_BYTES);
        }
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        kept += line.len();
        if kept > MAX_OUTPUT_BYTES {
            out.dropped += 1;
        } else {
            let line = String::from_utf8_lossy(line).into_owned();
            on_line(&line);
            out.lines.push(line);
        }
    }
    if out.tail.len() > TAIL_BYTES {
        out.tail.drain(..out.tail.len() - TAIL_BYTES);
    }
    out
}

/// Kills the command and everything in its process group.
fn kill(child: &mut tokio::process::Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }
    let _ = child.start_kill();
}

/// `exit status 1`, `signal: killed`: Go's `ProcessState.String()`.
fn exit_text(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("signal: {}", signal_name(sig));
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => status.to_string(),
    }
}

/// Go's names of the common signals (`syscall.Signal.String()`).
#[cfg(unix)]
fn signal_name(sig: i32) -> String {
    match sig {
        1 => "hangup".into(),
        2 => "interrupt".into(),
        3 => "quit".into(),
        4 => "illegal instruction".into(),
        6 => "aborted".into(),
        9 => "killed".into(),
        11 => "segmentation fault".into(),
        13 => "broken pipe".into(),
        14 => "alarm clock".into(),
        15 => "terminated".into(),
        other => format!("signal {other}"),
    }
}

/// How Go's `os/exec` words a command that could not start.
fn spawn_error(program: &str, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound && !program.contains('/') {
        format!("exec: \"{program}\": executable file not found in $PATH")
    } else {
        format!("fork/exec {program}: {}", os_error(e))
    }
}

/// An OS error as Go prints it: `no such file or directory`.
fn os_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error") {
        Some(i) => &text[..i],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A string quoted as Go's `%q` quotes it.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
#[path = "local_exec_tests.rs"]
mod tests;
