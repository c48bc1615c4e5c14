//! Starting a run's driver in the background: its handle, its place in
//! the registry, its notices and the guard that cancels it unwatched.

use super::handle::{RunHandle, Shared};
use super::{driver, events, unwatched};
use fleetform_shared::wire::RunRequest;
use std::sync::Arc;

/// Starts driving run `id` in the background: a new run, or one a
/// restarted coordinator resumes (keeping its id).
pub(crate) fn start_run(
    shared: &Arc<Shared>,
    id: String,
    workspace: &str,
    request: RunRequest,
    start: driver::Start,
) -> Arc<RunHandle> {
    let resumed = matches!(start, driver::Start::Resumed(_));
    let background = matches!(
        start,
        driver::Start::New {
            background: true,
            ..
        }
    );
    let mut handle = RunHandle::new(id.clone(), workspace, request.operation, resumed);
    handle.background = background;
    if background {
        handle.read_rate = shared.background.as_ref().and_then(|b| b.rate);
    }
    let handle = Arc::new(handle);
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
        // Nobody watches a background refresh: it ends by itself.
        driver::Start::New {
            background: true, ..
        } => None,
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
