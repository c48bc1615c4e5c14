//! The registry of runs: the [`Coordinator`] that accepts runs, starts
//! their drivers, recovers and adopts unfinished ones, and answers for the
//! runs it knows.

use super::eval::providers;
use super::handle::{RunHandle, Shared};
use super::{adopt, driver, events, lock, recover, start, unwatched};
use crate::dispatch::Dispatcher;
use crate::store::{Journal, SchemaCache, StateStore};
use fleetform_shared::wire::RunRequest;
use std::sync::{Arc, Mutex};

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
                background: None,
                drift: Default::default(),
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

    /// Refreshes each workspace's objects every `every` in the background
    /// (see `background`), from now on, at most `rate` reads per second
    /// per workspace.
    pub fn with_background_refresh(
        mut self,
        every: std::time::Duration,
        rate: Option<f64>,
    ) -> Coordinator {
        let bg = Arc::new(super::handle::Background::new(
            every,
            rate,
            Some(self.shared.journal.clone()),
        ));
        Arc::get_mut(&mut self.shared)
            .expect("no run started yet")
            .background = Some(bg.clone());
        super::background::spawn(self.shared.clone(), bg);
        self
    }

    /// The drift each workspace's record of refreshed objects holds, as
    /// far as this coordinator has seen it written.
    pub fn drift(&self) -> &crate::store::DriftBoard {
        &self.shared.drift
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
        start::start_run(
            &self.shared,
            id,
            workspace,
            request,
            driver::Start::New {
                lock_wait,
                background: false,
            },
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
            background: false,
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
