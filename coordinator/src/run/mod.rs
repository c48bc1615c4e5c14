//! Runs: their registry, event logs and approval, and the driver that takes
//! a run from configuration to plan to applied state.

mod adopt;
mod apply_result;
mod apply_walk;
mod checks;
mod conditions;
mod ctx;
mod drift;
mod driver;
mod ephemeral;
mod ephemeral_apply;
#[cfg(test)]
mod ephemeral_tests;
mod events;
mod expand;
mod foreign_state;
mod functions;
mod imports;
mod lock;
mod named_values;
mod plan_destroy;
mod plan_import;
mod plan_resource;
mod plan_walk;
mod providers;
pub mod recover;
mod removed;
mod scope;
mod sensitivity;
mod shapes;
mod state_file;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
mod unwatched;

pub use events::now_ms as events_now_ms;
pub use events::{EndedLogs, EventLog};

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
    pub events: Arc<EventLog>,
    approval: Mutex<Option<oneshot::Sender<bool>>>,
    cancel: tokio::sync::watch::Sender<bool>,
    /// The apply walk has started: the run changes infrastructure, and
    /// is no longer cancelled when nobody watches it (see `unwatched`).
    applying: std::sync::atomic::AtomicBool,
}

impl RunHandle {
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
    pub ended_logs: Option<Arc<events::EndedLogs>>,
    /// How long a run that changed nothing may go unwatched before it is
    /// cancelled (see `unwatched`).
    pub unwatched_grace: std::time::Duration,
}

/// The coordinator: accepts runs and drives them.
#[derive(Clone)]
pub struct Coordinator {
    shared: Arc<Shared>,
}

impl Coordinator {
    pub fn new(
        store: Arc<dyn StateStore>,
        journal: Journal,
        schema_cache: SchemaCache,
        dispatcher: Dispatcher,
    ) -> Coordinator {
        Coordinator {
            shared: Arc::new(Shared {
                store,
                journal,
                dispatcher,
                runs: Mutex::default(),
                locks: Mutex::default(),
                schemas: Mutex::default(),
                schema_cache,
                leases: None,
                owner: format!("coordinator@{}:{}", hostname(), std::process::id()),
                archive: None,
                segments: crate::store::SegmentPolicy::default(),
                lock_ttl: lock::LOCK_TTL,
                pack_ended_logs: true,
                local_files: false,
                ended_logs: None,
                unwatched_grace: unwatched::GRACE,
            }),
        }
    }

    /// Locks workspaces with leases in `leases`, held as `owner`
    /// (`coordinator`, `embedded`); call before any run starts.
    pub fn with_leases(mut self, leases: crate::store::LeaseStore, owner: &str) -> Coordinator {
        let shared = Arc::get_mut(&mut self.shared).expect("no run started yet");
        shared.leases = Some(leases);
        shared.owner = format!("{owner}@{}:{}", hostname(), std::process::id());
        self
    }

    /// Archives applying runs in `archive` (see [`crate::store::RunArchive`]),
    /// a segment every `policy`; call before any run starts.
    pub fn with_archive(
        mut self,
        archive: crate::store::RunArchive,
        policy: crate::store::SegmentPolicy,
    ) -> Coordinator {
        let shared = Arc::get_mut(&mut self.shared).expect("no run started yet");
        shared.archive = Some(archive);
        shared.segments = policy;
        self
    }

    /// Leases last `ttl` unless renewed (renewed every third of it): how
    /// long a workspace stays locked after its holder died.
    pub fn with_lock_ttl(mut self, ttl: std::time::Duration) -> Coordinator {
        let shared = Arc::get_mut(&mut self.shared).expect("no run started yet");
        shared.lock_ttl = ttl;
        self
    }

    /// A run that has changed nothing yet is cancelled once nobody has
    /// watched it for `grace` (10 s unless set; see `unwatched`); call
    /// before any run starts.
    pub fn with_unwatched_grace(mut self, grace: std::time::Duration) -> Coordinator {
        let shared = Arc::get_mut(&mut self.shared).expect("no run started yet");
        shared.unwatched_grace = grace;
        self
    }

    /// The CLI runs in this process, on this machine (embedded mode): file
    /// functions read its directory when they are called, at plan and at
    /// apply time, as Terraform does, instead of the bundle it sent (see
    /// `fleetform_lang::eval::env`). Call before any run starts.
    pub fn reading_local_files(mut self) -> Coordinator {
        let shared = Arc::get_mut(&mut self.shared).expect("no run started yet");
        shared.local_files = true;
        self
    }

    /// Keeps ended runs' event logs as they were instead of packing them:
    /// for a process that ends with its run (embedded mode), where packing
    /// would only cost time and memory at the end of the run.
    pub fn without_packing_ended_logs(mut self) -> Coordinator {
        let shared = Arc::get_mut(&mut self.shared).expect("no run started yet");
        shared.pack_ended_logs = false;
        self
    }

    /// Ended runs' packed event logs go to files in `logs` instead of
    /// staying in memory.
    pub fn with_ended_logs(mut self, logs: events::EndedLogs) -> Coordinator {
        let shared = Arc::get_mut(&mut self.shared).expect("no run started yet");
        shared.ended_logs = Some(Arc::new(logs));
        self
    }

    /// The archive of applying runs, if this coordinator keeps one.
    pub fn archive(&self) -> Option<&crate::store::RunArchive> {
        self.shared.archive.as_ref()
    }

    /// Starts a run in the background and returns its id.
    pub fn submit(&self, workspace: &str, request: RunRequest) -> Arc<RunHandle> {
        self.submit_waiting(workspace, request, None)
    }

    /// [`Coordinator::submit`], waiting up to `lock_wait` for a locked
    /// workspace (`-lock-timeout`); without, a locked one fails the run.
    pub fn submit_waiting(
        &self,
        workspace: &str,
        request: RunRequest,
        lock_wait: Option<std::time::Duration>,
    ) -> Arc<RunHandle> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        // Kept until the run finishes, so a restarted coordinator runs it.
        let submitted = crate::store::SubmittedRun {
            workspace: workspace.to_string(),
            request: request.clone(),
        };
        if let Err(e) = self.shared.journal.submitted(&id, &submitted) {
            tracing::warn!(run_id = %id, error = %e, "recording the run failed: a restart before it applies would lose it");
        }
        start_run(
            &self.shared,
            id,
            workspace,
            request,
            driver::Start::New { lock_wait },
        )
    }

    /// Finishes, in the background, the runs a previous process left
    /// unfinished (see [`recover`]); results of their operations in flight
    /// are awaited (for `wait`, in journals of older versions), unless
    /// `in_flight_lost` says nothing can answer them.
    /// The returned task ends once every run is resumed (or recovered).
    pub fn recover(
        &self,
        recoveries: Vec<recover::Recovery>,
        wait: std::time::Duration,
        in_flight_lost: bool,
    ) -> Option<tokio::task::JoinHandle<()>> {
        if recoveries.is_empty() {
            return None;
        }
        tracing::info!(
            runs = recoveries.len(),
            "recovering runs interrupted by a restart"
        );
        // Workspace locks are taken now, before any new run can take them:
        // a new run must start from the recovered state.
        let locked = recoveries
            .into_iter()
            .map(|r| {
                let guard = self
                    .shared
                    .workspace_lock(r.workspace())
                    .try_lock_owned()
                    .ok();
                (r, guard)
            })
            .collect();
        Some(tokio::spawn(recover::finish_all(
            self.shared.clone(),
            locked,
            wait,
            in_flight_lost,
        )))
    }

    /// Takes over, in the background, the runs other coordinators left
    /// applying when they died (see `adopt`); returns how many.
    pub async fn adopt_orphans(&self, wait: std::time::Duration) -> usize {
        match adopt::orphans(&self.shared).await {
            Ok(found) => {
                let n = found.len();
                if n > 0 {
                    let _ = self.recover(found, wait, false);
                }
                n
            }
            Err(e) => {
                tracing::warn!(error = %e, "looking for runs left by other coordinators failed");
                0
            }
        }
    }

    /// How long a workspace lease lasts unless renewed.
    pub fn lock_ttl(&self) -> std::time::Duration {
        self.shared.lock_ttl
    }

    /// Every run this process knows, oldest first.
    pub fn runs(&self) -> Vec<Arc<RunHandle>> {
        let mut runs: Vec<_> = self
            .shared
            .runs
            .lock()
            .expect("runs lock")
            .values()
            .cloned()
            .collect();
        runs.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.id.cmp(&b.id)));
        runs
    }

    /// Runs that ended before this process started (or whose handle it
    /// no longer has), as remembered on disk; newest last.
    pub fn ended_runs(&self) -> Vec<(String, crate::store::EndedRun)> {
        let live = self.shared.runs.lock().expect("runs lock");
        let mut out: Vec<_> = self
            .shared
            .journal
            .ended_runs()
            .unwrap_or_default()
            .into_iter()
            .filter(|(id, _)| !live.contains_key(id))
            .collect();
        out.sort_by(|a, b| a.1.started_at.cmp(&b.1.started_at).then(a.0.cmp(&b.0)));
        out
    }

    pub fn run(&self, id: &str) -> Option<Arc<RunHandle>> {
        self.shared.runs.lock().expect("runs lock").get(id).cloned()
    }

    /// Whether `id` is a run of this coordinator's journal that is not
    /// running yet: its recovery after a restart waits (for the state
    /// store, or for the workspace), and it will run again.
    pub fn recovering(&self, id: &str) -> bool {
        let journal = &self.shared.journal;
        journal
            .runs()
            .is_ok_and(|runs| runs.iter().any(|(run_id, _)| run_id == id))
            || journal
                .unfinished()
                .is_ok_and(|runs| runs.iter().any(|(run_id, _)| run_id == id))
    }

    pub fn store(&self) -> &Arc<dyn StateStore> {
        &self.shared.store
    }

    /// The provider schemas this coordinator has fetched.
    pub fn schema_cache(&self) -> &SchemaCache {
        &self.shared.schema_cache
    }

    /// Fetches the schema of the newest installed version of `addr` through
    /// a worker into the schema cache, outside any run: writing a state
    /// file needs the schemas of its objects, and a coordinator whose cache
    /// was lost (or that never planned this workspace) has none.
    pub async fn fetch_schema(
        &self,
        addr: &fleetform_shared::ProviderAddr,
    ) -> Result<(), fleetform_shared::diag::Diagnostics> {
        let spec = fleetform_shared::wire::ProviderSpec {
            addr: addr.clone(),
            version_constraint: None,
            config: fleetform_shared::value::Value::null(),
            lock: fleetform_shared::wire::ProviderLock::NoLockFile,
        };
        // Task ids must be unique: one pseudo-run per fetch.
        let run_id = format!("schema-{}", uuid::Uuid::new_v4());
        providers::schema(&self.shared, &run_id, &addr.to_string(), &spec)
            .await
            .map(|_| ())
    }

    pub fn dispatcher(&self) -> &Dispatcher {
        &self.shared.dispatcher
    }

    pub fn journal(&self) -> &Journal {
        &self.shared.journal
    }

    /// Holds the workspace's lock while `f` changes the state (`operation`
    /// names it in the lock); a locked workspace fails at once, or after
    /// `wait` (`-lock-timeout`).
    pub async fn with_workspace_lock<T>(
        &self,
        workspace: &str,
        operation: &str,
        wait: Option<std::time::Duration>,
        f: impl std::future::Future<Output = T>,
    ) -> Result<T, fleetform_shared::diag::Diagnostics> {
        let run_id = format!("{operation}-{}", uuid::Uuid::new_v4().simple());
        let want = lock::Want {
            workspace,
            run_id: &run_id,
            operation,
            wait,
            resumed: false,
            local: None,
            on_wait: None,
            on_held: None,
        };
        let guard = lock::acquire(&self.shared, want).await?;
        let out = f.await;
        guard.release().await;
        Ok(out)
    }

    /// Who holds a workspace's lock, if anyone (and if locks are leases).
    pub async fn lock_holder(
        &self,
        workspace: &str,
    ) -> Result<Option<crate::store::LockInfo>, crate::store::LeaseError> {
        match &self.shared.leases {
            Some(l) => l.holder(workspace).await,
            None => Ok(None),
        }
    }

    /// Removes a workspace's lock by its id (`fleetform force-unlock`).
    pub async fn force_unlock(
        &self,
        workspace: &str,
        id: &str,
    ) -> Result<crate::store::LockInfo, crate::store::LeaseError> {
        match &self.shared.leases {
            Some(l) => l.force_unlock(workspace, id).await,
            None => Err(crate::store::LeaseError::NotHeld(id.to_string())),
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into())
}

/// Starts driving run `id` in the background: a new run, or one a
/// restarted coordinator resumes (keeping its id).
pub(crate) fn start_run(
    shared: &Arc<Shared>,
    id: String,
    workspace: &str,
    request: RunRequest,
    start: driver::Start,
) -> Arc<RunHandle> {
    let handle = Arc::new(RunHandle {
        id: id.clone(),
        workspace: workspace.to_string(),
        operation: request.operation,
        incarnation: uuid::Uuid::new_v4().simple().to_string(),
        started_at: fleetform_lang::eval::now_rfc3339(),
        resumed: matches!(start, driver::Start::Resumed(_)),
        events: Arc::default(),
        approval: Mutex::new(None),
        cancel: tokio::sync::watch::Sender::new(false),
        applying: Default::default(),
    });
    shared
        .runs
        .lock()
        .expect("runs lock")
        .insert(id.clone(), handle.clone());
    // Until the run ends (the driver releases it from the dispatcher).
    shared
        .dispatcher
        .watch_run(&id, Arc::new(events::RunNotices(handle.events.clone())));
    // A run nobody follows is cancelled while it has changed nothing; one
    // resumed from its journal was applying, and is not. A run that a
    // restarted coordinator runs again from the start gives its client
    // longer to find the coordinator back.
    let grace = match &start {
        driver::Start::New { .. } => Some(shared.unwatched_grace),
        driver::Start::Resumed(r) if !r.resume.is_some() => Some(shared.unwatched_grace * 3),
        driver::Start::Resumed(_) => None,
    };
    if let Some(grace) = grace {
        tokio::spawn(unwatched::cancel_when_unwatched(handle.clone(), grace));
    }
    let h = handle.clone();
    // Every log line of the run carries its id and workspace.
    let span = tracing::info_span!("run", run_id = %handle.id, workspace = %handle.workspace);
    tokio::spawn(tracing::Instrument::instrument(
        driver::drive(shared.clone(), h, request, start),
        span,
    ));
    handle
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
