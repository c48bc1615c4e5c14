//! What the apply walk keeps so that nothing it does is lost: the state
//! changes and results recorded and not yet written to the journal, the
//! answers a resumed run takes from the journal instead of dispatching
//! again, and the archive of the run in the object store. Everything it
//! records is applied to the working state at once and written to the
//! journal in one durable write before the walk hands out more operations
//! or waits ([`Record::flush`]); the events that report it are held until
//! that write has ended, so what a watcher reads as done is durable.

use crate::run::ctx::RunCtx;
use crate::store::{ArchiveWriter, Intent, JournaledRun, Pending, Written};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::plan::Plan;
use fleetform_shared::state::{State, StateDelta};
use fleetform_shared::wire::{RunEvent, RunRequest, TaskResult};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{oneshot, watch};

/// What a run resumed after a restart takes from the journal instead of
/// dispatching again: the results recorded before the restart, and the
/// results of operations that were in flight then, still to come.
#[derive(Default)]
pub(crate) struct Resume {
    active: bool,
    answers: HashMap<String, TaskResult>,
    in_flight: HashMap<String, oneshot::Receiver<TaskResult>>,
}

impl Resume {
    pub fn new(
        answers: HashMap<String, TaskResult>,
        in_flight: HashMap<String, oneshot::Receiver<TaskResult>>,
    ) -> Resume {
        Resume {
            active: true,
            answers,
            in_flight,
        }
    }

    /// Whether the run is a resumed one.
    pub fn is_some(&self) -> bool {
        self.active
    }

    /// The result of `task_id` if the journal has it or awaits it: the
    /// task must not be dispatched again. The flag says it is awaited (in
    /// flight at the restart) rather than recorded.
    pub fn take(&mut self, task_id: &str) -> Option<(oneshot::Receiver<TaskResult>, bool)> {
        if let Some(answer) = self.answers.remove(task_id) {
            let (tx, rx) = oneshot::channel();
            let _ = tx.send(answer);
            return Some((rx, false));
        }
        self.in_flight.remove(task_id).map(|rx| (rx, true))
    }
}

/// The apply walk's record (see the module's documentation).
pub(crate) struct Record {
    /// Recorded and not written to the journal yet.
    unwritten: Pending,
    /// Numbers each recorded batch of state changes.
    seq: u64,
    /// The journal could not record an operation: no new ones start.
    pub failed: bool,
    /// For a run resumed after a restart, what the journal holds.
    pub resume: Resume,
    /// Writes the applying run's archive to the object store.
    pub archive: Option<ArchiveWriter>,
}

/// A journal write under way ([`Record::start_flush`]).
pub(crate) struct Flushing {
    /// Turns true when the write has ended (durable, or failed).
    pub journaled: watch::Receiver<bool>,
    write: Option<oneshot::Receiver<Written>>,
}

impl Record {
    /// Begins the run's journal (a resumed run's changes are derived again
    /// from its recorded results) and its archive.
    pub fn begin(ctx: &mut RunCtx<'_>, plan: &Arc<Plan>, resume: Resume) -> Record {
        // A restarted coordinator resumes the run by applying this plan, as
        // a saved plan, with the results journaled so far.
        let request = RunRequest {
            saved_plan: Some(plan.clone()),
            auto_approve: true,
            plan_only: false,
            ..ctx.request.clone()
        };
        let run = JournaledRun {
            workspace: ctx.workspace().to_string(),
            prior_serial: ctx.prior.serial,
            resume: Some(Box::new(request)),
        };
        let mut record = Record {
            unwritten: Pending::default(),
            seq: 0,
            failed: false,
            resume,
            archive: None,
        };
        let begun = match record.resume.is_some() {
            true => ctx.shared.journal.reset_deltas(ctx.run_id()),
            false => Ok(()),
        };
        if let Err(e) = begun.and_then(|()| ctx.shared.journal.begin(ctx.run_id(), &run)) {
            record.failure(ctx, &e);
        }
        if let Some(archive) = &ctx.shared.archive {
            record.archive = Some(ArchiveWriter::start(
                archive.clone(),
                ctx.shared.segments,
                ctx.run_id(),
                run,
                record.resume.is_some(),
            ));
        }
        record
    }

    /// Marks tasks as published to a queue that outlives the process: a
    /// restart awaits their results from then on. The mark goes with the
    /// next write.
    pub fn published(&mut self, task_ids: impl IntoIterator<Item = String>) {
        self.unwritten.published.extend(task_ids);
    }

    /// A journal write failed. Results are still applied to the working
    /// state (and reach the snapshot), but nothing new starts without a
    /// durable record.
    pub fn failure(&mut self, ctx: &RunCtx<'_>, e: &dyn std::fmt::Display) {
        tracing::error!(run_id = %ctx.run_id(), error = %e, "journal write failed");
        if !self.failed {
            self.failed = true;
            ctx.emit(RunEvent::Diagnostics(
                Diagnostic::error(
                    "State journal unavailable",
                    format!("Recording an operation failed ({e}); fleetform starts no further operations in this run. Operations already running finish and are recorded in the state snapshot."),
                )
                .into(),
            ));
        }
    }

    /// Applies `deltas` to the working state (see [`Record::answered`]).
    pub fn record(&mut self, ctx: &mut RunCtx<'_>, state: &mut State, deltas: Vec<StateDelta>) {
        self.answered(ctx, state, deltas, Vec::new(), Vec::new());
    }

    /// Applies `deltas` to the working state and the run's values, and
    /// keeps them (with the tasks `answered`, no longer in flight, and
    /// their results) for the journal's next write: [`Record::flush`],
    /// which the walk calls before it hands out more operations or waits.
    /// The queue keeps the results until then, so a coordinator that dies
    /// in between gets them again.
    pub fn answered(
        &mut self,
        ctx: &mut RunCtx<'_>,
        state: &mut State,
        deltas: Vec<StateDelta>,
        answered: Vec<String>,
        results: Vec<TaskResult>,
    ) {
        if deltas.is_empty() && answered.is_empty() {
            return;
        }
        self.seq += 1;
        // Journaled as applied, so that a journal replayed after a crash
        // gives the state this run works on.
        let deltas: Vec<StateDelta> = deltas
            .into_iter()
            .map(|d| forget_gone_dependencies(ctx, d))
            .collect();
        for d in &deltas {
            if let StateDelta::SetCurrent { addr, object, .. } = d
                && let Some(values) = ctx.values.resource_mut(&addr.containing_resource())
            {
                match object {
                    Some(o) => values.set_object(&addr.resource.key, o),
                    None => {
                        values.instances.remove(&addr.resource.key);
                    }
                };
            }
            state.apply_delta(d);
        }
        self.unwritten.rows.push((self.seq, deltas));
        self.unwritten.done.extend(answered);
        self.unwritten.results.extend(results);
        // What reports these (a completion, the next operation's start) is
        // shown once they are durable.
        ctx.events.hold();
    }

    /// Writes what was recorded since the last write, and the intents of
    /// the operations about to be handed out, in one durable write; then
    /// the queue may forget the results written. A chain of dependent
    /// operations costs one disk flush per link this way, not two.
    pub async fn flush(&mut self, ctx: &RunCtx<'_>, intents: Vec<(String, Intent)>) {
        let flushing = self.start_flush(ctx, intents);
        self.end_flush(ctx, flushing).await;
    }

    /// Starts [`Record::flush`]'s write on the journal's writer thread (a
    /// disk flush blocks).
    pub fn start_flush(&mut self, ctx: &RunCtx<'_>, intents: Vec<(String, Intent)>) -> Flushing {
        let (done, journaled) = watch::channel(false);
        if self.unwritten.is_empty() && intents.is_empty() {
            // Marks of what reached the queue wait for the next write.
            let _ = done.send(true);
            return Flushing {
                journaled,
                write: None,
            };
        }
        let pending = std::mem::take(&mut self.unwritten);
        let write = ctx
            .shared
            .journal
            .commit_on_writer(ctx.run_id(), pending, intents, done);
        Flushing {
            journaled,
            write: Some(write),
        }
    }

    /// Waits for [`Record::start_flush`]'s write; then shows the events it
    /// covers, lets the queue forget the results written and archives
    /// them.
    pub async fn end_flush(&mut self, ctx: &RunCtx<'_>, flushing: Flushing) {
        let Some(write) = flushing.write else {
            ctx.events.release();
            return;
        };
        let (written, pending, intents) = match write.await {
            Ok(w) => w,
            Err(_) => {
                ctx.events.release();
                self.failure(ctx, &"the journal write stopped before it ended");
                return;
            }
        };
        // Shown once durable; after a failed write too, followed by the error.
        ctx.events.release();
        match written {
            Ok(()) => ctx.shared.dispatcher.acknowledge(&pending.done),
            // Not acknowledged: a restarted coordinator gets them again.
            Err(e) => self.failure(ctx, &e),
        }
        if let Some(a) = &self.archive {
            let Pending { rows, results, .. } = pending;
            let deltas: Vec<StateDelta> = rows.into_iter().flat_map(|(_, d)| d).collect();
            if !deltas.is_empty() || !results.is_empty() {
                a.record(deltas, results);
            }
            if !intents.is_empty() {
                a.intents(&intents);
            }
        }
    }
}

/// An object's recorded dependencies keep only resources still configured:
/// the plan orders by dependencies from state too, which must not pile up.
fn forget_gone_dependencies(ctx: &RunCtx<'_>, delta: StateDelta) -> StateDelta {
    match delta {
        StateDelta::SetCurrent {
            addr,
            provider,
            object: Some(mut o),
        } => {
            o.dependencies.retain(|d| {
                ctx.module_of(&d.module)
                    .is_some_and(|m| m.module.resources.contains_key(&d.resource))
            });
            StateDelta::SetCurrent {
                addr,
                provider,
                object: Some(o),
            }
        }
        other => other,
    }
}
