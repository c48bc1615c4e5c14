//! The plugin process: starting it with the go-plugin environment, reading
//! its handshake, forwarding its logs into tracing, and ending it.

use super::ProviderError;
use super::handshake::{Handshake, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, parse_handshake};
use std::collections::VecDeque;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{oneshot, watch};

/// Terraform's port range for plugins listening on tcp.
const MIN_PORT: u16 = 10000;
const MAX_PORT: u16 = 25000;
/// How many stderr lines are kept to explain a failed start.
const STDERR_TAIL: usize = 20;

pub(super) struct SpawnOptions<'a> {
    pub path: &'a Path,
    pub name: &'a str,
    pub protocol_versions: &'a [u32],
    pub client_cert_pem: Option<&'a str>,
    pub handshake_timeout: Duration,
}

/// A running plugin. Dropping it kills the process.
pub(super) struct PluginProcess {
    pub handshake: Handshake,
    kill: Mutex<Option<oneshot::Sender<()>>>,
    exit: watch::Receiver<Option<ExitStatus>>,
}

/// Makes the plugin end when the worker does, however the worker ends: a
/// SIGKILLed worker runs no destructor, and its plugins would otherwise run
/// on, orphaned. Linux sends the parent-death signal when the thread that
/// started the child exits; plugins are started from the async runtime's
/// threads, which live as long as the worker.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    let worker = nix::unistd::getpid();
    // SAFETY: between fork and exec the closure makes only two system
    // calls (prctl, getppid) and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(std::io::Error::from)?;
            // The worker died before the signal was set: do not start.
            if nix::unistd::getppid() != worker {
                return Err(std::io::Error::other("the worker exited"));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

impl PluginProcess {
    pub async fn spawn(opts: SpawnOptions<'_>) -> Result<PluginProcess, ProviderError> {
        let versions: Vec<String> = opts.protocol_versions.iter().map(u32::to_string).collect();
        let mut cmd = Command::new(opts.path);
        cmd.env(MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE)
            .env("PLUGIN_PROTOCOL_VERSIONS", versions.join(","))
            .env("PLUGIN_MIN_PORT", MIN_PORT.to_string())
            .env("PLUGIN_MAX_PORT", MAX_PORT.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        match opts.client_cert_pem {
            Some(pem) => cmd.env("PLUGIN_CLIENT_CERT", pem),
            None => cmd.env_remove("PLUGIN_CLIENT_CERT"),
        };
        die_with_parent(&mut cmd);
        let mut child = cmd.spawn().map_err(|source| ProviderError::Spawn {
            path: opts.path.display().to_string(),
            source,
        })?;
        let pid = child.id();
        tracing::debug!(provider = opts.name, path = %opts.path.display(), pid, "started provider plugin");

        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut stderr_task =
            tokio::spawn(forward_stderr(stderr, opts.name.to_string(), tail.clone()));
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut lines = BufReader::new(stdout).lines();

        let line = tokio::time::timeout(opts.handshake_timeout, async {
            loop {
                match lines.next_line().await {
                    Ok(Some(line)) if line.trim().is_empty() => continue,
                    Ok(Some(line)) => return Some(line),
                    Ok(None) | Err(_) => return None,
                }
            }
        })
        .await;
        let line = match line {
            Ok(Some(line)) => line,
            Ok(None) => {
                let status = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
                let status = match status {
                    Ok(Ok(s)) => s.to_string(),
                    _ => "still running".to_string(),
                };
                // Let the last stderr lines arrive: they usually say why.
                let _ = tokio::time::timeout(Duration::from_secs(2), &mut stderr_task).await;
                return Err(ProviderError::Handshake(format!(
                    "plugin closed stdout before the handshake (process {status}){}",
                    stderr_suffix(&tail)
                )));
            }
            Err(_) => {
                return Err(ProviderError::Handshake(format!(
                    "no handshake within {:?}{}",
                    opts.handshake_timeout,
                    stderr_suffix(&tail)
                )));
            }
        };
        let handshake = parse_handshake(&line, opts.protocol_versions)
            .map_err(|e| ProviderError::Handshake(format!("{e}{}", stderr_suffix(&tail))))?;

        let name = opts.name.to_string();
        tokio::spawn(async move {
            // Plugins may print more to stdout; keep the pipe drained.
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(provider = name.as_str(), line, "provider stdout");
            }
        });
        let (kill_tx, kill_rx) = oneshot::channel();
        let (exit_tx, exit_rx) = watch::channel(None);
        tokio::spawn(supervise(child, opts.name.to_string(), kill_rx, exit_tx));
        Ok(PluginProcess {
            handshake,
            kill: Mutex::new(Some(kill_tx)),
            exit: exit_rx,
        })
    }

    /// The exit status, once the process has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.borrow()
    }

    /// Waits up to `timeout` for the process to exit on its own.
    pub async fn wait_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        let mut exit = self.exit.clone();
        match tokio::time::timeout(timeout, exit.wait_for(Option::is_some)).await {
            Ok(Ok(status)) => *status,
            _ => self.exit_status(),
        }
    }

    /// Kills the process and waits for it to be reaped.
    pub async fn kill(&self) {
        let tx = self.kill.lock().expect("kill lock").take();
        if let Some(tx) = tx {
            let _ = tx.send(());
        }
        let mut exit = self.exit.clone();
        let _ = exit.wait_for(Option::is_some).await;
    }
}

/// Owns the child: reaps it when it exits, kills it when asked or when the
/// [`PluginProcess`] is dropped (the kill sender goes away).
async fn supervise(
    mut child: Child,
    name: String,
    kill: oneshot::Receiver<()>,
    exit: watch::Sender<Option<ExitStatus>>,
) {
    let status = tokio::select! {
        status = child.wait() => status,
        _ = kill => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    match status {
        Ok(status) => {
            tracing::debug!(provider = name.as_str(), %status, "provider plugin exited");
            let _ = exit.send(Some(status));
        }
        Err(e) => {
            tracing::warn!(provider = name.as_str(), error = %e, "could not wait for provider plugin")
        }
    }
}

fn stderr_suffix(tail: &Mutex<VecDeque<String>>) -> String {
    let tail = tail.lock().expect("stderr tail lock");
    if tail.is_empty() {
        String::new()
    } else {
        format!(
            "; plugin stderr:\n{}",
            tail.iter().cloned().collect::<Vec<_>>().join("\n")
        )
    }
}

/// Forwards plugin stderr into tracing. go-hclog writes one JSON object per
/// line (`@level`, `@message`, `@module`, then key/values); anything else is
/// forwarded as text at debug level.
async fn forward_stderr(
    stderr: impl AsyncRead + Unpin,
    name: String,
    tail: Arc<Mutex<VecDeque<String>>>,
) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        {
            let mut tail = tail.lock().expect("stderr tail lock");
            if tail.len() == STDERR_TAIL {
                tail.pop_front();
            }
            tail.push_back(line.clone());
        }
        log_line(&name, &line);
    }
}

/// One hclog line, split into level, message, module and the other fields.
#[derive(Debug, PartialEq)]
struct LogLine {
    level: String,
    message: String,
    module: String,
    fields: String,
}

fn parse_hclog(line: &str) -> Option<LogLine> {
    let serde_json::Value::Object(mut obj) = serde_json::from_str(line.trim()).ok()? else {
        return None;
    };
    let mut take = |k: &str| match obj.remove(k) {
        Some(serde_json::Value::String(s)) => s,
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let level = take("@level");
    let message = take("@message");
    let module = take("@module");
    obj.remove("@timestamp");
    obj.remove("@caller");
    let fields = if obj.is_empty() {
        String::new()
    } else {
        serde_json::Value::Object(obj).to_string()
    };
    Some(LogLine {
        level,
        message,
        module,
        fields,
    })
}

fn log_line(name: &str, line: &str) {
    let Some(l) = parse_hclog(line) else {
        tracing::debug!(provider = name, line, "provider stderr");
        return;
    };
    let (message, module, fields) = (l.message.as_str(), l.module.as_str(), l.fields.as_str());
    match l.level.as_str() {
        "error" => tracing::error!(provider = name, module, fields, "{message}"),
        "warn" => tracing::warn!(provider = name, module, fields, "{message}"),
        "info" => tracing::info!(provider = name, module, fields, "{message}"),
        "trace" => tracing::trace!(provider = name, module, fields, "{message}"),
        _ => tracing::debug!(provider = name, module, fields, "{message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hclog_json_lines_are_split_into_fields() {
        let line = r#"{"@level":"warn","@message":"slow API","@module":"provider","@timestamp":"2024-01-01T00:00:00Z","tf_rpc":"ApplyResourceChange"}"#;
        let l = parse_hclog(line).unwrap();
        assert_eq!(l.level, "warn");
        assert_eq!(l.message, "slow API");
        assert_eq!(l.module, "provider");
        assert_eq!(l.fields, r#"{"tf_rpc":"ApplyResourceChange"}"#);
        assert_eq!(parse_hclog("panic: runtime error"), None);
        assert_eq!(parse_hclog("[1,2]"), None);
    }
}
