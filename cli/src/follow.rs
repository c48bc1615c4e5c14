//! Following a run to its end, through whatever happens to the connection:
//! a coordinator that goes away is reconnected to (with backoff, said once),
//! and a run that a restarted coordinator resumed is followed on, its
//! replayed events not shown twice. Ctrl-C once cancels the run; twice
//! detaches, leaving the run to the coordinator. [`run`] submits a run and
//! follows it; the approval prompt is asked here too.

use crate::client::{Client, lock_timeout_ms};
use crate::present::run_view::RunView;
use anyhow::Context;
use fleetform_proto::fleetform as pb;
use fleetform_shared::plan::{ChangeSummary, Plan, PlanMode};
use fleetform_shared::wire::{Operation, RunEvent, RunRequest, RunStatus};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a lost coordinator is waited for before giving up.
const REATTACH_FOR: Duration = Duration::from_secs(15 * 60);
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What has been shown of the run, so that a reattach shows nothing twice.
#[derive(Default)]
struct Shown {
    /// The event log being followed, and the next sequence number in it.
    incarnation: Option<String>,
    next: u64,
    /// Events shown, in a form that ignores what a replay changes (times):
    /// the first 16 bytes of its SHA-256, not the event (a CLI following
    /// an apply of 100,000 instances held 40 MB of them).
    seen: HashSet<[u8; 16]>,
    /// Following a resumed run's log: events shown before are skipped.
    replaying: bool,
}

impl Shown {
    fn key(event: &RunEvent) -> [u8; 16] {
        let event = match event {
            RunEvent::ApplyComplete {
                addr,
                deposed,
                action,
                op,
                id,
                ..
            } => RunEvent::ApplyComplete {
                addr: addr.clone(),
                deposed: deposed.clone(),
                action: *action,
                op: *op,
                id: id.clone(),
                elapsed_ms: 0,
                worker: String::new(),
            },
            other => other.clone(),
        };
        let digest = Sha256::digest(rmp_serde::to_vec(&event).unwrap_or_default());
        let mut key = [0; 16];
        key.copy_from_slice(&digest[..16]);
        key
    }

    /// Whether to show `event`, numbered `sequence` in log `incarnation`.
    fn admit(&mut self, incarnation: &str, sequence: u64, event: &RunEvent) -> bool {
        if self.incarnation.as_deref() == Some(incarnation) && sequence < self.next {
            return false;
        }
        self.incarnation = Some(incarnation.to_string());
        self.next = sequence + 1;
        // The prompt is answered again: the restarted run asks again.
        if matches!(event, RunEvent::AwaitingApproval) {
            return true;
        }
        let fresh = self.seen.insert(Self::key(event));
        fresh || !self.replaying
    }
}

/// SIGINT (Ctrl-C) while a run goes: the first asks the coordinator to
/// cancel the run, the second stops waiting for it.
pub(crate) struct Interrupts {
    signal: tokio::signal::unix::Signal,
    count: usize,
}

impl Interrupts {
    /// Installs the handler: before the run is submitted, so that a Ctrl-C
    /// at any moment after reaches the run.
    pub(crate) fn new() -> anyhow::Result<Interrupts> {
        let signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .context("installing the interrupt handler")?;
        Ok(Interrupts { signal, count: 0 })
    }

    async fn next(&mut self) {
        self.signal.recv().await;
        self.count += 1;
    }
}

/// How the follower learns where it stands.
pub struct Follow<'a> {
    pub client: &'a mut Client,
    pub run_id: String,
    pub operation: Operation,
    /// Keep the plan's changes to the end (a run that only plans: `-out`
    /// saves them); otherwise [`RunEnd::plan`] has only the rest.
    pub keep_plan: bool,
    /// Embedded mode: the coordinator lives and dies with this process.
    pub embedded: bool,
    pub interrupts: Interrupts,
}

impl Follow<'_> {
    /// Shows the run's events until it finishes; returns how it ended.
    pub async fn run(self, view: &mut dyn RunView) -> anyhow::Result<RunEnd> {
        let Follow {
            client,
            run_id,
            operation,
            keep_plan,
            embedded,
            mut interrupts,
        } = self;
        let mut shown = Shown::default();
        let mut plan = None;
        let mut has_changes = false;
        // Since when the coordinator is out of reach, and the next wait.
        let mut lost: Option<(Instant, Duration)> = None;
        loop {
            // From the start: the coordinator may be a new one whose log of
            // the run is shorter than what was shown; what was shown is
            // skipped here, by sequence or by content.
            let watched = client
                .watch_run(pb::WatchRunRequest {
                    run_id: run_id.clone(),
                    from_sequence: 0,
                    parts: true,
                })
                .await;
            let mut stream = match watched {
                Ok(s) => s.into_inner(),
                Err(status)
                    if status.code() == tonic::Code::NotFound
                        && !status.message().starts_with("no run ") =>
                {
                    // A run that finished long enough ago (its events let go).
                    anyhow::bail!("{}", status.message())
                }
                Err(status) if status.code() == tonic::Code::NotFound => {
                    anyhow::bail!(
                        "the coordinator does not know run {run_id}: it restarted before the run started applying, so the run changed nothing. Run the command again."
                    )
                }
                Err(status) => {
                    wait_for_coordinator(&mut lost, &run_id, &status, embedded, &mut interrupts)
                        .await?;
                    continue;
                }
            };
            // The parts of a large event received so far (`more`).
            let mut parts: Vec<Vec<u8>> = Vec::new();
            let mut ticks = tokio::time::interval(Duration::from_millis(500));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                let msg = tokio::select! {
                    m = stream.message() => m,
                    _ = ticks.tick() => {
                        view.tick();
                        continue;
                    }
                    () = interrupts.next() => {
                        interrupted(client, &run_id, &interrupts, embedded).await?;
                        continue;
                    }
                };
                let msg = match msg {
                    Ok(Some(m)) => m,
                    Ok(None) => anyhow::bail!(
                        "the coordinator ended the event stream of run {run_id} before the run finished"
                    ),
                    Err(status) => {
                        wait_for_coordinator(
                            &mut lost,
                            &run_id,
                            &status,
                            embedded,
                            &mut interrupts,
                        )
                        .await?;
                        break;
                    }
                };
                if lost.take().is_some() {
                    eprintln!("Reattached to run {run_id}.");
                }
                if shown
                    .incarnation
                    .as_ref()
                    .is_some_and(|i| *i != msg.incarnation)
                {
                    // A restarted coordinator resumed the run: its log
                    // starts again, and repeats what was shown.
                    eprintln!(
                        "The coordinator restarted and took up run {run_id} again; what was shown already is not shown again."
                    );
                    shown.incarnation = Some(msg.incarnation.clone());
                    shown.next = 0;
                    shown.replaying = true;
                }
                if msg.more {
                    parts.push(msg.event);
                    continue;
                }
                let event: RunEvent = if parts.is_empty() {
                    rmp_serde::from_slice(&msg.event)
                } else {
                    parts.push(msg.event);
                    let event = fleetform_shared::parts::decode(&parts);
                    parts.clear();
                    event
                }
                .context("decoding a run event")?;
                if !shown.admit(&msg.incarnation, msg.sequence, &event) {
                    continue;
                }
                view.event(&event);
                match event {
                    // A plan that stopped at errors is only shown.
                    RunEvent::Planned(p) if !p.errored => {
                        has_changes = p.has_changes();
                        plan = Some(if keep_plan { p } else { slim(p) });
                    }
                    RunEvent::AwaitingApproval => {
                        let refresh_only = plan
                            .as_ref()
                            .is_some_and(|p: &Arc<Plan>| p.mode == PlanMode::RefreshOnly);
                        let what = match operation {
                            Operation::Destroy => Approval::Destroy,
                            _ if refresh_only => Approval::RefreshOnly,
                            _ => Approval::Apply,
                        };
                        // Ctrl-C at the prompt answers no.
                        let approve = tokio::select! {
                            a = ask_approval(what) => a?,
                            () = interrupts.next() => false,
                        };
                        client
                            .approve_run(pb::ApproveRunRequest {
                                run_id: run_id.clone(),
                                approve,
                            })
                            .await?;
                        if !approve {
                            if what == Approval::Destroy {
                                println!("Destroy cancelled.");
                            } else {
                                println!("Apply cancelled.");
                            }
                        }
                    }
                    RunEvent::Finished { status, summary } => {
                        return Ok(RunEnd {
                            status,
                            summary,
                            plan,
                            has_changes,
                        });
                    }
                    _ => {}
                }
            }
        }
    }
}

/// The plan without its changes and data values, which the view has
/// shown: what an applying run needs of it at the end is its outputs.
fn slim(plan: Arc<Plan>) -> Arc<Plan> {
    match Arc::try_unwrap(plan) {
        Ok(mut plan) => {
            plan.changes = Vec::new();
            plan.data_values.clear();
            plan.data_records.clear();
            Arc::new(plan)
        }
        // The view kept it: nothing to gain.
        Err(shared) => shared,
    }
}

/// The coordinator is out of reach: says so once, then waits before the
/// next attempt (backing off), until it has been gone too long. In embedded
/// mode there is nothing to wait for.
async fn wait_for_coordinator(
    lost: &mut Option<(Instant, Duration)>,
    run_id: &str,
    status: &tonic::Status,
    embedded: bool,
    interrupts: &mut Interrupts,
) -> anyhow::Result<()> {
    if embedded {
        anyhow::bail!("lost the embedded coordinator: {}", status.message());
    }
    let (since, backoff) = *lost.get_or_insert_with(|| {
        eprintln!(
            "Lost the connection to the coordinator ({}); reconnecting. The run goes on there.",
            status.message()
        );
        (Instant::now(), FIRST_BACKOFF)
    });
    if since.elapsed() > REATTACH_FOR {
        anyhow::bail!(
            "the coordinator has been out of reach for {} minutes; stopped waiting for run {run_id}. Once it is back: fleetform runs watch {run_id}",
            REATTACH_FOR.as_secs() / 60
        );
    }
    tokio::select! {
        () = tokio::time::sleep(backoff) => {}
        () = interrupts.next() => {
            if interrupts.count > 1 {
                anyhow::bail!("{}", detached(run_id));
            }
            eprintln!("\nThe coordinator is out of reach, so the run cannot be cancelled now. Interrupt again to stop waiting for it.");
        }
    }
    *lost = Some((since, (backoff * 2).min(MAX_BACKOFF)));
    Ok(())
}

fn detached(run_id: &str) -> String {
    format!(
        "interrupted again: stopped waiting for run {run_id}, which goes on at the coordinator. Follow it again with: fleetform runs watch {run_id}"
    )
}

async fn interrupted(
    client: &mut Client,
    run_id: &str,
    interrupts: &Interrupts,
    embedded: bool,
) -> anyhow::Result<()> {
    if interrupts.count > 1 {
        if embedded {
            anyhow::bail!(
                "interrupted again: stopped waiting for run {run_id}. In embedded mode the run ends with this process: operations in progress may be missing from the state, and the next command finishes what the journal recorded"
            );
        }
        anyhow::bail!("{}", detached(run_id));
    }
    eprintln!(
        "\nInterrupt received: cancelling the run. Operations in progress are asked to stop and nothing new starts; what completes is kept in the state.\nInterrupt again to stop waiting{}.",
        if embedded {
            " (operations in progress may then be missing from the state)"
        } else {
            " (the run goes on cancelling at the coordinator)"
        }
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

/// How a run ended, as the CLI needs it for exit codes.
pub struct RunEnd {
    pub status: RunStatus,
    pub summary: ChangeSummary,
    /// The plan: whole when the run only planned (`-out` saves it);
    /// without its changes when it applied, which need only its outputs
    /// (an apply of 100,000 instances kept 130 MB of changes to the end).
    pub plan: Option<Arc<Plan>>,
    /// Whether the plan had changes.
    pub has_changes: bool,
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
        keep_plan: request.plan_only || request.operation == Operation::Plan,
        embedded,
        interrupts,
    }
    .run(view)
    .await
}

/// What a run asks to be approved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Approval {
    Apply,
    Destroy,
    /// Recording what a refresh-only plan found.
    RefreshOnly,
}

/// Asks on the terminal; the read runs on its own thread so an interrupt
/// can answer instead (a thread left reading does not hold the process).
pub(crate) async fn ask_approval(what: Approval) -> anyhow::Result<bool> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(prompt_approval(what));
    });
    rx.await.context("reading the answer")?
}

/// Terraform's questions, "fleetform" for "Terraform".
fn approval_question(what: Approval) -> &'static str {
    match what {
        Approval::Destroy => {
            "\nDo you really want to destroy all resources?\n  fleetform will destroy all your managed infrastructure, as shown above.\n  There is no undo. Only 'yes' will be accepted to confirm.\n"
        }
        Approval::Apply => {
            "\nDo you want to perform these actions?\n  fleetform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n"
        }
        Approval::RefreshOnly => {
            "\nWould you like to update the fleetform state to reflect these detected changes?\n  fleetform will write these changes to the state without modifying any real infrastructure.\n  There is no undo. Only 'yes' will be accepted to confirm.\n"
        }
    }
}

fn prompt_approval(what: Approval) -> anyhow::Result<bool> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", approval_question(what))?;
    write!(out, "  Enter a value: ")?;
    out.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    // Terraform ends the question with a newline of its own once answered
    // (a blank line after the echoed answer on a terminal); nothing comes
    // between the plan and the first operation when none is asked.
    writeln!(out)?;
    Ok(line.trim() == "yes")
}
