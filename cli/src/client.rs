//! Talking to a coordinator: submit a run, follow its events, answer the
//! approval prompt; fetch state.

use crate::render::RunView;
use anyhow::Context;
use fleetform_proto::fleetform as pb;
use fleetform_proto::fleetform::fleetform_client::FleetformClient;
use fleetform_shared::plan::{ChangeSummary, Plan};
use fleetform_shared::state::State;
use fleetform_shared::wire::{RunEvent, RunRequest, RunStatus};
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

pub async fn run(
    client: &mut Client,
    workspace: &str,
    request: RunRequest,
    view: &mut dyn RunView,
) -> anyhow::Result<RunEnd> {
    let bytes = rmp_serde::to_vec_named(&request)?;
    let run_id = client
        .submit_run(pb::SubmitRunRequest {
            workspace: workspace.to_string(),
            request: bytes,
        })
        .await
        .context("submitting the run")?
        .into_inner()
        .run_id;
    let mut stream = client
        .watch_run(pb::WatchRunRequest {
            run_id: run_id.clone(),
        })
        .await?
        .into_inner();
    let mut plan = None;
    let mut interrupts = Interrupts::new()?;
    loop {
        let msg = tokio::select! {
            m = stream.message() => m?,
            () = interrupts.next() => {
                interrupted(client, &run_id, &mut interrupts).await?;
                continue;
            }
        };
        let Some(msg) = msg else { break };
        let event: RunEvent = rmp_serde::from_slice(&msg.event).context("decoding a run event")?;
        view.event(&event);
        match event {
            RunEvent::Planned(p) => plan = Some(*p),
            RunEvent::AwaitingApproval => {
                let destroy = request.operation == fleetform_shared::wire::Operation::Destroy;
                // Ctrl-C at the prompt answers no.
                let approve = tokio::select! {
                    a = ask_approval(destroy) => a?,
                    () = interrupts.next() => false,
                };
                client
                    .approve_run(pb::ApproveRunRequest {
                        run_id: run_id.clone(),
                        approve,
                    })
                    .await?;
                if !approve {
                    println!("\nApply cancelled.");
                }
            }
            RunEvent::Finished { status, summary } => {
                return Ok(RunEnd {
                    status,
                    summary,
                    plan,
                });
            }
            _ => {}
        }
    }
    anyhow::bail!("the coordinator ended the event stream of run {run_id} before the run finished")
}

/// SIGINT (Ctrl-C) while a run goes: the first asks the coordinator to
/// cancel the run, the second stops waiting for it.
struct Interrupts {
    signal: tokio::signal::unix::Signal,
    count: usize,
}

impl Interrupts {
    fn new() -> anyhow::Result<Interrupts> {
        let signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .context("installing the interrupt handler")?;
        Ok(Interrupts { signal, count: 0 })
    }

    async fn next(&mut self) {
        self.signal.recv().await;
        self.count += 1;
    }
}

async fn interrupted(
    client: &mut Client,
    run_id: &str,
    interrupts: &mut Interrupts,
) -> anyhow::Result<()> {
    if interrupts.count > 1 {
        anyhow::bail!(
            "interrupted again: stopped waiting for run {run_id}. With a coordinator the run goes on cancelling there; in embedded mode, operations in progress may be missing from the state"
        );
    }
    eprintln!(
        "\nInterrupt received: cancelling the run. Operations in progress are asked to stop and nothing new starts; what completes is kept in the state.\nInterrupt again to stop waiting (operations in progress may then be missing from the state)."
    );
    let cancelling = client
        .cancel_run(pb::CancelRunRequest {
            run_id: run_id.to_string(),
        })
        .await
        .context("cancelling the run")?
        .into_inner()
        .cancelling;
    if !cancelling {
        eprintln!("The run had already finished.");
    }
    Ok(())
}

/// Asks on the terminal; the read runs on its own thread so an interrupt
/// can answer instead (a thread left reading does not hold the process).
async fn ask_approval(destroy: bool) -> anyhow::Result<bool> {
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
        })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?;
    Ok(())
}
