//! Background refresh (`--refresh-every`): the coordinator keeps its
//! workspaces' record of refreshed objects young, so that a plan with
//! `-refresh-max-age` reuses reads instead of waiting on the cloud's rate
//! limits, and drift shows in `fleetform drift` before anyone plans.
//!
//! Outside a run the coordinator has no provider configurations: they come
//! from the configuration, variables and credentials of a run. So each
//! workspace's latest plan or apply that ended well is remembered (in
//! memory: after a restart a workspace is refreshed again once it has had
//! a run), and every `--refresh-every` it is run again as a refresh-only
//! plan that reads only the objects whose recorded read is older than half
//! of `--refresh-every`: each object is read about once per interval, and
//! none is read younger than that unless a run reads it. Such a
//! run changes neither the state nor any object: it adds its reads to the
//! record, and an object that differs from its state is drift there.
//!
//! A background run gives way: it starts only while the workspace is free,
//! and a run (or state edit) that finds the workspace locked by it cancels
//! it and waits for its lock (see [`Background::give_way`]). Its reads go through the providers
//! like any others, so a throttling provider slows it, as its retry-after
//! says, rather than failing it; `--refresh-rate` keeps it below a share
//! of the provider's limit, leaving the rest to users' runs (the plan walk
//! paces its tasks: `plan/pace.rs`).

use super::handle::{RunHandle, Shared};
use fleetform_shared::wire::{Operation, RunRequest};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a user's run waits at most for a cancelled background run to
/// let go of the workspace, when it would otherwise not wait at all.
const GIVE_WAY_WAIT: Duration = Duration::from_secs(60);

pub(crate) struct Background {
    every: Duration,
    /// Reads per second at most, per workspace (`--refresh-rate`).
    pub rate: Option<f64>,
    /// Each workspace's latest run that ended well, as a refresh run.
    sources: Mutex<HashMap<String, RunRequest>>,
    /// Background runs going, by workspace.
    going: Mutex<HashMap<String, Arc<RunHandle>>>,
}

impl Background {
    pub fn new(every: Duration, rate: Option<f64>) -> Background {
        Background {
            every,
            rate,
            sources: Mutex::default(),
            going: Mutex::default(),
        }
    }

    /// A user's run ended with `ok` (planned or applied): its request, made
    /// a refresh run, is what the workspace is refreshed with from now on.
    /// A destroy forgets the workspace (nothing of it is left to refresh);
    /// a saved plan's apply and a targeted run are not a whole
    /// configuration's view, and leave the earlier source in place.
    pub fn remember(&self, workspace: &str, request: &RunRequest, ok: bool) {
        let mut sources = self.sources.lock().expect("sources lock");
        if request.operation == Operation::Destroy {
            if ok {
                sources.remove(workspace);
            }
            return;
        }
        let partial = request.saved_plan.is_some()
            || request.files.is_empty()
            || !request.options.targets.is_empty()
            || !request.options.excludes.is_empty()
            || request.options.import_only;
        if ok && !partial {
            sources.insert(workspace.to_string(), self.refresh_request(request));
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
    fn ended(&self, workspace: &str, run_id: &str) {
        let mut going = self.going.lock().expect("going lock");
        if going.get(workspace).is_some_and(|h| h.id == run_id) {
            going.remove(workspace);
        }
    }
}

/// Refreshes every remembered workspace each `every`, for as long as the
/// coordinator lives.
pub(crate) fn spawn(shared: Arc<Shared>, background: Arc<Background>) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(background.every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let sources: Vec<(String, RunRequest)> = background
                .sources
                .lock()
                .expect("sources lock")
                .iter()
                .map(|(w, r)| (w.clone(), r.clone()))
                .collect();
            for (workspace, request) in sources {
                refresh(&shared, &background, &workspace, request).await;
            }
        }
    });
}

/// One workspace's refresh, started if the workspace is free (a run going
/// there is left alone: the next tick tries again). It does not wait for
/// the run to end.
async fn refresh(shared: &Arc<Shared>, bg: &Arc<Background>, workspace: &str, request: RunRequest) {
    if bg.going.lock().expect("going lock").contains_key(workspace) {
        return;
    }
    if shared.workspace_lock(workspace).try_lock().is_err() {
        return;
    }
    let id = uuid::Uuid::new_v4().simple().to_string();
    tracing::info!(workspace, run_id = %id, "background refresh");
    let handle = super::start::start_run(
        shared,
        id,
        workspace,
        request,
        super::driver::Start::New {
            lock_wait: None,
            background: true,
        },
    );
    bg.going
        .lock()
        .expect("going lock")
        .insert(workspace.to_string(), handle.clone());
    let (bg, workspace) = (bg.clone(), workspace.to_string());
    tokio::spawn(async move {
        handle.events.wait_finished().await;
        bg.ended(&workspace, &handle.id);
    });
}
