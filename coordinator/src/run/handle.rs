//! The handle types every layer of a run shares: a run as the API sees it
//! ([`RunHandle`]) and what all runs of one coordinator share ([`Shared`]:
//! stores, dispatcher, registry map, workspace locks, settings).

use super::events::{EndedLogs, EventLog};
use crate::dispatch::Dispatcher;
use crate::store::{Journal, SchemaCache, StateStore};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::wire::{Operation, RunRequest};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// One run as the API sees it.
pub struct RunHandle {
    pub id: String,
    pub workspace: String,
    pub operation: Operation,
    /// Names this event log: a resumed run gets a new one.
    pub incarnation: String,
    /// When this process started driving the run (RFC 3339).
    pub started_at: String,
    /// Taken up after a restart.
    pub resumed: bool,
    /// A background refresh (see `background`), not a user's run.
    pub background: bool,
    /// Its planning tasks per second at most (`--refresh-rate`).
    pub read_rate: Option<f64>,
    pub events: Arc<EventLog>,
    pub(crate) approval: Mutex<Option<oneshot::Sender<bool>>>,
    cancel: tokio::sync::watch::Sender<bool>,
    /// The apply walk has started: the run changes infrastructure, and
    /// is no longer cancelled when nobody watches it (see `unwatched`).
    applying: std::sync::atomic::AtomicBool,
}

impl RunHandle {
    /// A run that has not started: a new incarnation, started now.
    pub(crate) fn new(
        id: String,
        workspace: &str,
        operation: Operation,
        resumed: bool,
    ) -> RunHandle {
        RunHandle {
            id,
            workspace: workspace.to_string(),
            operation,
            incarnation: uuid::Uuid::new_v4().simple().to_string(),
            started_at: fleetform_lang::eval::now_rfc3339(),
            resumed,
            background: false,
            read_rate: None,
            events: Arc::default(),
            approval: Mutex::new(None),
            cancel: tokio::sync::watch::Sender::new(false),
            applying: Default::default(),
        }
    }

    /// Asks the run to stop; false when it has already finished.
    pub fn cancel(&self) -> bool {
        if self.events.is_finished() {
            return false;
        }
        self.cancel.send_replace(true);
        true
    }

    pub fn is_cancelled(&self) -> bool {
        *self.cancel.borrow()
    }

    /// Resolves once the run is cancelled (never, if it is not).
    pub async fn cancelled(&self) {
        let mut rx = self.cancel.subscribe();
        // The sender lives as long as the handle, so this only ends on cancel.
        let _ = rx.wait_for(|c| *c).await;
    }

    /// The run starts changing infrastructure.
    pub(crate) fn begin_applying(&self) {
        self.applying
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the run's apply walk has started.
    pub fn is_applying(&self) -> bool {
        self.applying.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Delivers the approval decision; false when the run does not wait for one.
    pub fn decide(&self, approve: bool) -> bool {
        match self.approval.lock().expect("approval lock").take() {
            Some(tx) => tx.send(approve).is_ok(),
            None => false,
        }
    }
}

pub(crate) struct Shared {
    pub store: Arc<dyn StateStore>,
    pub journal: Journal,
    pub dispatcher: Dispatcher,
    pub runs: Mutex<HashMap<String, Arc<RunHandle>>>,
    /// One run at a time per workspace.
    pub locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Provider schemas by fingerprint (`<address>@<version>`): in memory,
    /// and in redb so a restart does not fetch them again.
    pub schemas: Mutex<HashMap<String, Arc<ProviderSchema>>>,
    pub schema_cache: SchemaCache,
    /// Workspace leases in the object store (none: in-process locks only).
    pub leases: Option<crate::store::LeaseStore>,
    /// Who this process is, as its leases say: `coordinator@host:pid`.
    pub owner: String,
    /// Where applying runs are archived (none: only the local journal).
    pub archive: Option<crate::store::RunArchive>,
    pub segments: crate::store::SegmentPolicy,
    /// How long a workspace lease lasts unless renewed.
    pub lock_ttl: std::time::Duration,
    /// Whether an ended run's event log is packed ([`EventLog::pack`]).
    pub pack_ended_logs: bool,
    /// Whether file functions read the CLI's directory on this machine
    /// (embedded mode; see [`Coordinator::reading_local_files`]).
    pub local_files: bool,
    /// Where packed logs go (none: they stay in memory).
    pub ended_logs: Option<Arc<EndedLogs>>,
    /// How long a run that changed nothing may go unwatched before it is
    /// cancelled (see `unwatched`).
    pub unwatched_grace: std::time::Duration,
    /// Background refresh, when the coordinator runs it (`--refresh-every`).
    pub background: Option<Arc<Background>>,
    /// The drift in each workspace's record of refreshed objects, for the
    /// live view.
    pub drift: crate::store::DriftBoard,
}

/// Finished runs whose events stay in memory, newest first, for `runs
/// watch` and the live view; older ones are listed from disk (`runs_ended`)
/// and their events are let go. A coordinator kept every run it had run:
/// its memory grew by each run's event log (the plan and an event per
/// operation), 90 MB to 184 MB over six runs.
const FINISHED_RUNS_KEPT: usize = 4;

impl Shared {
    /// Drops all but the newest [`FINISHED_RUNS_KEPT`] finished runs' handles
    /// (a client following one keeps its own reference to the end).
    pub fn forget_finished_runs(&self) {
        let mut runs = self.runs.lock().expect("runs lock");
        let mut finished: Vec<(String, String)> = runs
            .values()
            .filter(|h| h.events.is_finished())
            .map(|h| (h.started_at.clone(), h.id.clone()))
            .collect();
        if finished.len() <= FINISHED_RUNS_KEPT {
            return;
        }
        finished.sort();
        for (_, id) in &finished[..finished.len() - FINISHED_RUNS_KEPT] {
            runs.remove(id);
        }
    }

    pub fn workspace_lock(&self, workspace: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.locks
            .lock()
            .expect("locks lock")
            .entry(workspace.to_string())
            .or_default()
            .clone()
    }
}

/// How long a user's run waits at most for a cancelled background run to
/// let go of the workspace, when it would otherwise not wait at all.
const GIVE_WAY_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Background refresh's state (`--refresh-every`; see `background`, which
/// runs it): what each workspace is refreshed with, and the refreshes going.
pub(crate) struct Background {
    pub(super) every: std::time::Duration,
    /// Reads per second at most, per workspace (`--refresh-rate`).
    pub rate: Option<f64>,
    /// Each workspace's latest run that ended well, as a refresh run.
    pub(super) sources: Mutex<HashMap<String, RunRequest>>,
    /// Background runs going, by workspace.
    pub(super) going: Mutex<HashMap<String, Arc<RunHandle>>>,
    /// Where `sources` are kept across restarts: the journal's database
    /// (sealed like it: a request holds the configuration and variables).
    journal: Option<crate::store::Journal>,
}

impl Background {
    /// With `journal`, the sources a coordinator kept there before it
    /// restarted are refreshed from the start, and every change is kept
    /// there too.
    pub fn new(
        every: std::time::Duration,
        rate: Option<f64>,
        journal: Option<crate::store::Journal>,
    ) -> Background {
        let kept = match journal.as_ref().map(|j| j.refresh_sources()) {
            Some(Ok(kept)) => kept,
            Some(Err(e)) => {
                tracing::warn!(error = %e, "reading the workspaces to refresh in the background failed; each is refreshed again once it has had a run");
                Vec::new()
            }
            None => Vec::new(),
        };
        if !kept.is_empty() {
            tracing::info!(
                workspaces = kept.len(),
                "refreshing in the background what was refreshed before the restart"
            );
        }
        Background {
            every,
            rate,
            sources: Mutex::new(kept.into_iter().collect()),
            going: Mutex::default(),
            journal,
        }
    }

    /// Keeps a change of `workspace`'s source (`None`: forgotten). A
    /// failure to keep it only costs the refreshes after a restart.
    fn keep(&self, workspace: &str, source: Option<&RunRequest>) {
        if let Some(j) = &self.journal
            && let Err(e) = j.set_refresh_source(workspace, source)
        {
            tracing::warn!(workspace, error = %e, "keeping what the workspace is refreshed with failed; after a restart it is refreshed again once it has had a run");
        }
    }

    /// A user's run ended with `ok` (planned or applied): its request, made
    /// a refresh run, is what the workspace is refreshed with from now on.
    /// A destroy forgets the workspace (nothing of it is left to refresh);
    /// a saved plan's apply and a targeted run are not a whole
    /// configuration's view, and leave the earlier source in place.
    pub fn remember(&self, workspace: &str, request: &RunRequest, ok: bool) {
        // Kept under the lock: two runs' ends are kept in the order they
        // changed the sources.
        let mut sources = self.sources.lock().expect("sources lock");
        if request.operation == Operation::Destroy {
            if ok && sources.remove(workspace).is_some() {
                self.keep(workspace, None);
            }
            return;
        }
        let partial = request.saved_plan.is_some()
            || request.files.is_empty()
            || !request.options.targets.is_empty()
            || !request.options.excludes.is_empty()
            || request.options.import_only;
        if ok && !partial {
            let source = self.refresh_request(request);
            // The same configuration applied again is not written again.
            if sources.get(workspace) != Some(&source) {
                self.keep(workspace, Some(&source));
                sources.insert(workspace.to_string(), source);
            }
        }
    }

    /// `request` as a background refresh: a refresh-only plan of the whole
    /// configuration that reuses reads younger than the refresh interval.
    fn refresh_request(&self, request: &RunRequest) -> RunRequest {
        let mut r = request.clone();
        r.operation = Operation::Plan;
        r.plan_only = true;
        r.auto_approve = false;
        r.saved_plan = None;
        let o = &mut r.options;
        o.refresh = true;
        o.refresh_only = true;
        // Half the interval: a read one tick made is stale at the next, so
        // each object is read once per interval, while a read a user's run
        // made within the last half interval saves one.
        let half = self.every / 2;
        o.refresh_max_age_ms = Some(u64::try_from(half.as_millis()).unwrap_or(u64::MAX));
        o.no_reread_changed = false;
        o.replace.clear();
        o.targets.clear();
        o.excludes.clear();
        o.imports.clear();
        o.generate_config.clear();
        r
    }

    /// A user's run finds `workspace` locked: a background run holding it
    /// is cancelled, and the user's run waits for it to end (until the
    /// `deadline` it asked for, or [`GIVE_WAY_WAIT`] if that is sooner or
    /// none). Anything else holding the lock keeps the run's own deadline.
    pub fn give_way(
        &self,
        workspace: &str,
        deadline: Option<tokio::time::Instant>,
    ) -> Option<tokio::time::Instant> {
        let going = self.going.lock().expect("going lock").remove(workspace);
        match going {
            Some(h) if h.cancel() => {
                tracing::info!(workspace, run_id = %h.id, "a background refresh gives way to a run");
                let least = tokio::time::Instant::now() + GIVE_WAY_WAIT;
                Some(deadline.map_or(least, |d| d.max(least)))
            }
            _ => deadline,
        }
    }

    /// A background run ended.
    pub(super) fn ended(&self, workspace: &str, run_id: &str) {
        let mut going = self.going.lock().expect("going lock");
        if going.get(workspace).is_some_and(|h| h.id == run_id) {
            going.remove(workspace);
        }
    }
}

#[cfg(test)]
mod background_tests {
    use super::*;
    use fleetform_shared::wire::PlanOptions;
    use std::time::Duration;

    fn request(operation: Operation, main: &str) -> RunRequest {
        RunRequest {
            operation,
            files: [("main.tf".to_string(), main.to_string())].into(),
            variables: Vec::new(),
            auto_approve: true,
            saved_plan: None,
            plan_only: false,
            options: PlanOptions::default(),
            auto_var_files: Vec::new(),
            env_variables: Vec::new(),
            data_files: Default::default(),
            cwd: String::new(),
            source: String::new(),
        }
    }

    /// What each workspace is refreshed with is kept in the journal: a
    /// coordinator started again on it refreshes the same workspaces with
    /// the same requests, and a destroy forgets its workspace there too.
    #[test]
    fn sources_outlive_a_restart_and_a_destroy_forgets_them() {
        let dir = tempfile::tempdir().unwrap();
        let journal =
            crate::store::Journal::new(crate::store::open_db(&dir.path().join("j.redb")).unwrap());
        let every = Duration::from_secs(60);
        let first = Background::new(every, None, Some(journal.clone()));
        first.remember("a", &request(Operation::Apply, "# a"), true);
        first.remember("b", &request(Operation::Apply, "# b"), true);
        // Failed, or partial: nothing changes.
        first.remember("c", &request(Operation::Apply, "# c"), false);
        let mut targeted = request(Operation::Apply, "# b, targeted");
        targeted.options.targets = vec!["sim_object.x".into()];
        first.remember("b", &targeted, true);
        let kept = first.sources.lock().unwrap().clone();
        assert_eq!(kept.len(), 2);
        assert!(kept["a"].options.refresh_only && kept["a"].plan_only);
        assert_eq!(kept["b"].files["main.tf"], "# b");

        let again = Background::new(every, None, Some(journal.clone()));
        assert_eq!(*again.sources.lock().unwrap(), kept);
        again.remember("a", &request(Operation::Destroy, "# a"), true);
        assert_eq!(
            Background::new(every, None, Some(journal))
                .sources
                .lock()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["b"]
        );
    }
}
