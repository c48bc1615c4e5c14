//! Recovery after a restart: a run that was applying when the coordinator
//! stopped gets its snapshot from the journal (every operation recorded
//! before the stop) and from the results of the operations that were in
//! flight, as workers deliver them. Nothing that completed is lost.
//!
//! A run whose journal holds its request (every run since runs could
//! resume) is resumed instead: driven to its end under its own id, its
//! recorded results taken from the journal (see `apply::record::Resume`). What follows
//! is for older journals.
//!
//! The run itself is not continued: operations it had not started stay
//! unstarted, and the next apply plans them again from the recovered state.
//! That includes creation-time provisioners: an object whose create result
//! arrives after the restart is recorded tainted (its provisioners never
//! ran), and one whose provisioners were running is made ready only if
//! their result says they succeeded.

use super::apply::record::Resume;
use super::driver::{Resumed, Start};
use super::handle::Shared;
use super::start::start_run;
use crate::dispatch::ResultRouter;
use crate::run::apply::provision::{provisioned, taint_until_provisioned};
use crate::run::apply::result::finish;
use crate::store::{Intent, Journal, JournaledRun, Provisioning, StoreError};
use fleetform_shared::state::State;
use fleetform_shared::wire::{TaskOutcome, TaskResult};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, oneshot};

/// An operation in flight at the stop: its task id, its intent and a
/// waiter for its result.
type InFlight = (String, Intent, oneshot::Receiver<TaskResult>);

/// An unfinished run found in the journal, with a waiter for every
/// operation that was in flight.
pub struct Recovery {
    run_id: String,
    run: JournaledRun,
    in_flight: Vec<InFlight>,
    /// The run had not started applying: it runs again from the start.
    restart: bool,
}

/// Reads the journal and registers the waiters. Call it before results are
/// consumed, so a result that was waiting in the queue finds its waiter.
pub fn prepare(journal: &Journal, router: &ResultRouter) -> anyhow::Result<Vec<Recovery>> {
    let mut out = Vec::new();
    for (run_id, run) in journal.runs()? {
        let in_flight = journal
            .intents(&run_id)?
            .into_iter()
            .map(|(task_id, intent)| {
                let rx = router.expect(&task_id, true);
                (task_id, intent, rx)
            })
            .collect();
        out.push(Recovery {
            run_id,
            run,
            in_flight,
            restart: false,
        });
    }
    // Runs that were planning (or waiting for approval) changed nothing:
    // they run again from the start, under their ids.
    for (run_id, submitted) in journal.unfinished()? {
        if out.iter().any(|r| r.run_id == run_id) {
            continue;
        }
        out.push(Recovery {
            run_id,
            run: JournaledRun {
                workspace: submitted.workspace,
                prior_serial: 0,
                resume: Some(Box::new(submitted.request)),
            },
            in_flight: Vec::new(),
            restart: true,
        });
    }
    Ok(out)
}

/// Finishes each recovered run: its journal and the results that arrive
/// within `wait` go into a new snapshot; the journal is then cleared.
impl Recovery {
    pub fn workspace(&self) -> &str {
        &self.run.workspace
    }

    /// A run taken over from another coordinator (see `adopt`), resumed
    /// like one of this coordinator's own.
    pub(crate) fn adopted(
        run_id: String,
        run: JournaledRun,
        in_flight: Vec<(String, Intent, oneshot::Receiver<TaskResult>)>,
    ) -> Recovery {
        Recovery {
            run_id,
            run,
            in_flight,
            restart: false,
        }
    }
}

/// A workspace lock taken when the recovery was scheduled (or `None` if it
/// was taken already: then it is awaited).
type Guard = Option<OwnedMutexGuard<()>>;

/// `in_flight_lost`: the workers ran in the process that stopped, so the
/// operations in flight then will never be answered.
pub(crate) async fn finish_all(
    shared: Arc<Shared>,
    recoveries: Vec<(Recovery, Guard)>,
    wait: Duration,
    in_flight_lost: bool,
) {
    for (r, guard) in recoveries {
        let run_id = r.run_id.clone();
        if let Err(e) = recover(&shared, r, guard, wait, in_flight_lost).await {
            tracing::error!(%run_id, error = %e, "recovering the run failed; its journal is kept for the next start");
        }
    }
}

/// Whether another coordinator drives `run_id` now, or wrote a snapshot
/// for it: then it must not run again here. (A store that cannot be read
/// says no: the run goes on as before, and the lock decides.)
async fn finished_elsewhere(shared: &Shared, run_id: &str, workspace: &str) -> bool {
    if taken_over(shared, run_id, workspace).await.is_some() {
        return true;
    }
    shared
        .store
        .history(workspace)
        .await
        .is_ok_and(|h| h.iter().any(|e| e.run_id == run_id))
}

/// The coordinator that holds `run_id`'s workspace for that run, if it is
/// another one than this (and its predecessors on this host).
async fn taken_over(shared: &Shared, run_id: &str, workspace: &str) -> Option<String> {
    let leases = shared.leases.as_ref()?;
    let holder = leases.holder(workspace).await.ok()??;
    (holder.run_id == run_id && !crate::store::same_holder(&holder.owner, &shared.owner))
        .then_some(holder.owner)
}

/// The coordinator that took `run_id` over from this one (or from its
/// predecessors on this host), as the run's archive records it.
async fn taken_from_here(
    shared: &Shared,
    run_id: &str,
    workspace: &str,
) -> Result<Option<String>, StoreError> {
    let Some(archive) = &shared.archive else {
        return Ok(None);
    };
    let driver = patiently(run_id, "reading the run's archive", || {
        archive.driver(workspace, run_id)
    })
    .await?;
    Ok(driver.filter(|d| !crate::store::same_holder(d, &shared.owner)))
}

/// The answer for an operation that was in flight in the process that
/// stopped, when nothing can answer it any more (in-process workers): it is
/// interrupted, as if its worker had stopped answering.
fn lost(run_id: &str, task_id: String) -> TaskResult {
    TaskResult {
        task_id,
        run_id: run_id.to_string(),
        worker: String::new(),
        outcome: TaskOutcome::Interrupted { attempt: 0 },
        incarnation: String::new(),
    }
}

async fn recover(
    shared: &Arc<Shared>,
    r: Recovery,
    guard: Guard,
    wait: Duration,
    in_flight_lost: bool,
) -> anyhow::Result<()> {
    let Recovery {
        run_id,
        run,
        in_flight,
        restart,
    } = r;
    let guard = match guard {
        Some(g) => g,
        None => shared.workspace_lock(&run.workspace).lock_owned().await,
    };
    if restart && in_flight_lost {
        // Embedded mode: the command that watched it ended with the
        // process, and nothing was changed; nobody is left to follow it.
        shared.journal.finished(&run_id)?;
        return Ok(());
    }
    // The store must be readable to decide anything: a recovery that met
    // an outage once gave up, and with the run in its journal no
    // coordinator took it over, so the run hung until a restart (found by
    // the long chaos run). It waits instead, for as long as it takes.
    let loaded = patiently(&run_id, "reading the state", || {
        shared.store.load(&run.workspace)
    })
    .await?;
    if restart && finished_elsewhere(shared, &run_id, &run.workspace).await {
        tracing::info!(%run_id, workspace = %run.workspace, "the run was finished or taken over by another coordinator; not running it again");
        shared.journal.finished(&run_id)?;
        return Ok(());
    }
    if let (true, Some(request)) = (restart, run.resume.clone()) {
        tracing::info!(%run_id, workspace = %run.workspace, "running again a run that had not started applying at the restart");
        let resumed = Resumed {
            guard: Some(guard),
            resume: Resume::default(),
        };
        start_run(
            shared,
            run_id,
            &run.workspace,
            *request,
            Start::Resumed(resumed),
        );
        return Ok(());
    }
    let state = loaded.unwrap_or_else(|| State::new(uuid::Uuid::new_v4().to_string()));
    if state.serial != run.prior_serial {
        // The run's snapshot was stored; only clearing the journal was missed
        // (or another coordinator finished the run): it is over.
        shared.journal.clear(&run_id)?;
        shared.journal.finished(&run_id)?;
        return Ok(());
    }
    if let Some(driver) = taken_from_here(shared, &run_id, &run.workspace).await? {
        // Another coordinator took the run over while this one was away:
        // this journal misses what that one recorded (and acknowledged),
        // so resuming from it would wait for results that will never come
        // again. The archive and the queue hold everything: whoever holds
        // the run, or takes it over once its lease expires (this one
        // included), finishes it from there. Found by the long chaos run.
        tracing::info!(%run_id, workspace = %run.workspace, %driver, "the run was taken over by another coordinator; leaving it to the archive");
        shared.journal.clear(&run_id)?;
        shared.journal.finished(&run_id)?;
        return Ok(());
    }
    if let Some(holder) = taken_over(shared, &run_id, &run.workspace).await {
        // Another coordinator took the run over while this one was down
        // (its lease expired): that one finishes it, from the archive and
        // the queue, which hold everything this journal does.
        tracing::info!(%run_id, workspace = %run.workspace, %holder, "the run is being finished by another coordinator; leaving it to it");
        shared.journal.clear(&run_id)?;
        shared.journal.finished(&run_id)?;
        return Ok(());
    }
    if let Some(request) = run.resume {
        // Driven to its end, as if there had been no restart.
        let resume =
            resume_answers(shared, &run_id, &run.workspace, in_flight, in_flight_lost).await?;
        let resumed = Resumed {
            guard: Some(guard),
            resume,
        };
        start_run(
            shared,
            run_id,
            &run.workspace,
            *request,
            Start::Resumed(resumed),
        );
        return Ok(());
    }
    settle_in_flight(shared, &run_id, &run, state, in_flight, wait).await
}

/// What a run resumed after a restart takes instead of dispatching again:
/// the results its journal recorded, those the queue still keeps, and
/// waiters for the operations in flight at the stop that reached the queue
/// (the rest are published again under the same ids).
async fn resume_answers(
    shared: &Arc<Shared>,
    run_id: &str,
    workspace: &str,
    mut in_flight: Vec<InFlight>,
    in_flight_lost: bool,
) -> anyhow::Result<Resume> {
    let mut answers = shared.journal.answers(run_id)?;
    let recorded = answers.len();
    let mut from_queue = 0usize;
    if in_flight_lost {
        // In-process workers start an operation once its intent is
        // journaled, and may have done so before it was marked
        // published (that mark is written without a flush of its own):
        // each one journaled is in doubt, never handed out again.
        for (task_id, _, _) in in_flight.drain(..) {
            answers.insert(task_id.clone(), lost(run_id, task_id));
        }
    } else {
        // Only tasks that reached the queue can be answered: the rest
        // are published again (same ids, so a publish that did happen
        // after all is dropped as a duplicate).
        let published = shared.journal.published_tasks(run_id)?;
        in_flight.retain(|(task_id, _, _)| published.contains(task_id));
        // The run's tasks are published while their intents are
        // journaled: one published just before the stop may have no
        // intent here, and its result (acknowledged or not) is only in
        // the queue. Every result the queue keeps for the run counts,
        // and those still to come wait for the task dispatched again.
        let in_flight_ids: std::collections::HashSet<&str> =
            in_flight.iter().map(|(id, _, _)| id.as_str()).collect();
        let mut backoff = Duration::from_millis(200);
        let replayed = loop {
            match shared.dispatcher.take_over(run_id).await {
                Ok(r) => break r,
                Err(e) => {
                    tracing::warn!(%run_id, error = %e, "reading the run's results in the queue failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                }
            }
        };
        for r in replayed {
            // Planning's results are in the queue too; they answer
            // nothing the apply asks for.
            let planning = matches!(
                r.outcome,
                TaskOutcome::Schema { .. }
                    | TaskOutcome::Plan(_)
                    | TaskOutcome::Read(_)
                    | TaskOutcome::Import(_)
            );
            if !planning
                && !in_flight_ids.contains(r.task_id.as_str())
                && !answers.contains_key(&r.task_id)
            {
                from_queue += 1;
                answers.insert(r.task_id.clone(), r);
            }
        }
    }
    tracing::info!(
        %run_id,
        %workspace,
        recorded,
        from_queue,
        in_flight = in_flight.len(),
        "resuming run interrupted by a restart"
    );
    let in_flight = in_flight
        .into_iter()
        .map(|(task_id, _, rx)| (task_id, rx))
        .collect();
    Ok(Resume::new(answers, in_flight))
}

/// A run from an older journal, which cannot be resumed: its snapshot is
/// the state it started from, what the journal recorded and the results
/// of the operations in flight that arrive within `wait`.
async fn settle_in_flight(
    shared: &Arc<Shared>,
    run_id: &str,
    run: &JournaledRun,
    mut state: State,
    in_flight: Vec<InFlight>,
    wait: Duration,
) -> anyhow::Result<()> {
    let recorded = shared.journal.replay(run_id)?;
    for d in &recorded {
        state.apply_delta(d);
    }
    let deadline = tokio::time::Instant::now() + wait;
    let task_ids: Vec<String> = in_flight.iter().map(|(id, _, _)| id.clone()).collect();
    let answers =
        futures::future::join_all(in_flight.into_iter().map(|(_, intent, rx)| async move {
            (tokio::time::timeout_at(deadline, rx).await, intent)
        }))
        .await;
    let (mut late, mut in_doubt) = (0, 0);
    for (answer, intent) in answers {
        let c = &intent.change;
        match answer {
            Ok(Ok(result)) if intent.provisioning == Provisioning::Run => {
                late += 1;
                // The object was recorded tainted after its create; it is
                // ready only if every provisioner that counts succeeded.
                match result.outcome {
                    TaskOutcome::Provision(o) if !o.diagnostics.has_errors() => {
                        if let Some(d) = provisioned(c, &state) {
                            state.apply_delta(&d);
                        }
                    }
                    other => {
                        tracing::warn!(%run_id, addr = %c.addr, outcome = ?other, "the provisioners in flight at the restart did not succeed: the object stays tainted, and the next apply replaces it");
                    }
                }
            }
            Ok(Ok(result)) => {
                let (outcome, mut deltas, _) =
                    finish(c, intent.kind, Some(result), &intent.deposed_key);
                if outcome.is_ok() && intent.provisioning == Provisioning::Follow {
                    // Its provisioners were never started.
                    taint_until_provisioned(&mut deltas);
                    tracing::warn!(%run_id, addr = %c.addr, "created after the restart, but its creation-time provisioners did not run: the object is tainted, and the next apply replaces it");
                }
                for d in &deltas {
                    state.apply_delta(d);
                }
                late += 1;
                if let Err(d) = outcome {
                    let summary = d.iter().map(|d| d.summary.as_str()).collect::<Vec<_>>();
                    tracing::warn!(%run_id, addr = %c.addr, problems = ?summary, "an operation in flight at the restart failed");
                }
            }
            _ => {
                in_doubt += 1;
                tracing::warn!(%run_id, addr = %c.addr, action = ?c.action, "no result for an operation in flight at the restart: the object may differ from the state; the next plan refreshes it, and a create may have left an object outside the state");
            }
        }
    }
    state.serial = run.prior_serial + 1;
    let origin = crate::store::Origin::new(run_id.to_string(), "recover");
    patiently(run_id, "writing the state", || {
        shared.store.save(&run.workspace, &state, &origin)
    })
    .await?;
    // In the snapshot now: the queue may forget the results.
    shared.dispatcher.acknowledge(&task_ids);
    shared.journal.clear(run_id)?;
    shared.journal.finished(run_id)?;
    tracing::info!(
        %run_id,
        workspace = %run.workspace,
        recorded = recorded.len(),
        late,
        in_doubt,
        "recovered run interrupted by a restart"
    );
    Ok(())
}

/// Runs `op` until the object store answers: store errors (out of reach,
/// refusing service) are retried with backoff up to 10 s apart, saying so
/// once; anything else (a conflict, a corrupted snapshot) is returned. A
/// recovery has nobody to hand its run to, so it never gives up on an
/// outage.
async fn patiently<T, F, Fut>(run_id: &str, what: &str, mut op: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, StoreError>>,
{
    let mut backoff = Duration::from_millis(200);
    let mut waited = false;
    loop {
        match op().await {
            Ok(v) => {
                if waited {
                    tracing::info!(%run_id, "the state store is back; recovering the run");
                }
                return Ok(v);
            }
            Err(e @ (StoreError::ObjectStore(_) | StoreError::LockCheck(_))) => {
                if !waited {
                    tracing::warn!(%run_id, error = %e, "{what} for a recovery failed; retrying until the state store answers");
                    waited = true;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
            Err(e) => return Err(e),
        }
    }
}
