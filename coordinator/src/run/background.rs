//! Background refresh (`--refresh-every`): the coordinator keeps its
//! workspaces' record of refreshed objects young, so that a plan with
//! `-refresh-max-age` reuses reads instead of waiting on the cloud's rate
//! limits, and drift shows in `fleetform drift` before anyone plans.
//!
//! Outside a run the coordinator has no provider configurations: they come
//! from the configuration, variables and credentials of a run. So each
//! workspace's latest plan or apply that ended well is remembered (kept in
//! the journal's database, sealed like it, so a restarted coordinator goes
//! on refreshing the same workspaces), and every `--refresh-every` it is
//! run again as a refresh-only
//! plan that reads only the objects whose recorded read is older than half
//! of `--refresh-every`: each object is read about once per interval, and
//! none is read younger than that unless a run reads it. Such a
//! run changes neither the state nor any object: it adds its reads to the
//! record, and an object that differs from its state is drift there.
//!
//! A background run gives way: it starts only while the workspace is free,
//! and a run (or state edit) that finds the workspace locked by it cancels
//! it and waits for its lock (see `Background::give_way` in `handle.rs`, where the state of
//! background refresh lives, below the runs that use it). Its reads go through the providers
//! like any others, so a throttling provider slows it, as its retry-after
//! says, rather than failing it; `--refresh-rate` keeps it below a share
//! of the provider's limit, leaving the rest to users' runs (the plan walk
//! paces its tasks: `plan/pace.rs`).

use super::handle::{Background, Shared};
use fleetform_shared::wire::RunRequest;
use std::sync::Arc;

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
