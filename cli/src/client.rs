//! Talking to a coordinator: submit a run, follow its events, answer the
//! approval prompt; fetch state.

use crate::follow::Follow;
use crate::render::RunView;
use anyhow::Context;
use fleetform_proto::fleetform as pb;
use fleetform_proto::fleetform::fleetform_client::FleetformClient;
use fleetform_shared::plan::{ChangeSummary, Plan};
use fleetform_shared::state::State;
use fleetform_shared::wire::{RunRequest, RunStatus};
use std::io::{BufRead, Write};
use tonic::transport::Channel;

pub type Client = FleetformClient<Channel>;

pub async fn connect(url: &str) -> anyhow::Result<Client> {
    let client = FleetformClient::connect(url.to_string())
        .await
        .with_context(|| format!("connecting to the coordinator at {url}"))?;
    Ok(client
        .max_decoding_message_size(1 << 30)
        .max_encoding_message_size(1 << 30))
}

/// How a run ended, as the CLI needs it for exit codes.
pub struct RunEnd {
    pub status: RunStatus,
    pub summary: ChangeSummary,
    pub plan: Option<Plan>,
}

/// `-lock-timeout`, set once from the command line.
static LOCK_TIMEOUT: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();

pub fn set_lock_timeout(wait: std::time::Duration) {
    let _ = LOCK_TIMEOUT.set(wait);
}

/// `-lock-timeout` as every request that takes the lock carries it.
pub fn lock_timeout_ms() -> u64 {
    LOCK_TIMEOUT.get().map_or(0, |d| d.as_millis() as u64)
}

/// Submits a run and follows it to its end.
pub async fn run(
    client: &mut Client,
    workspace: &str,
    request: RunRequest,
    view: &mut dyn RunView,
) -> anyhow::Result<RunEnd> {
    let interrupts = crate::follow::Interrupts::new()?;
    let bytes = rmp_serde::to_vec_named(&request)?;
    let run_id = client
        .submit_run(pb::SubmitRunRequest {
            workspace: workspace.to_string(),
            request: bytes,
            lock_timeout_ms: lock_timeout_ms(),
        })
        .await
        .context("submitting the run")?
        .into_inner()
        .run_id;
    let embedded = crate::embedded::is_running();
    Follow {
        client,
        run_id,
        operation: request.operation,
        embedded,
        interrupts,
    }
    .run(view)
    .await
}

/// Asks on the terminal; the read runs on its own thread so an interrupt
/// can answer instead (a thread left reading does not hold the process).
pub(crate) async fn ask_approval(destroy: bool) -> anyhow::Result<bool> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(prompt_approval(destroy));
    });
    rx.await.context("reading the answer")?
}

fn prompt_approval(destroy: bool) -> anyhow::Result<bool> {
    let mut out = std::io::stdout().lock();
    if destroy {
        writeln!(out, "\nDo you really want to destroy all resources?")?;
        writeln!(
            out,
            "  fleetform will destroy all your managed infrastructure, as shown above."
        )?;
    } else {
        writeln!(out, "\nDo you want to perform these actions?")?;
        writeln!(out, "  fleetform will perform the actions described above.")?;
    }
    writeln!(out, "  Only 'yes' will be accepted to approve.\n")?;
    write!(out, "  Enter a value: ")?;
    out.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim() == "yes")
}

pub async fn state(client: &mut Client, workspace: &str) -> anyhow::Result<Option<State>> {
    let resp = client
        .get_state(pb::GetStateRequest {
            workspace: workspace.to_string(),
            serial: 0,
        })
        .await?
        .into_inner();
    if resp.state.is_empty() {
        return Ok(None);
    }
    Ok(Some(State::decode(&resp.state).context("decoding state")?))
}

pub async fn set_tainted(
    client: &mut Client,
    workspace: &str,
    address: &str,
    tainted: bool,
) -> anyhow::Result<()> {
    client
        .set_tainted(pb::SetTaintedRequest {
            workspace: workspace.to_string(),
            address: address.to_string(),
            tainted,
            lock_timeout_ms: lock_timeout_ms(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?;
    Ok(())
}
