//! Taking over runs whose coordinator died, from another host: a run that
//! was applying left its archive in the object store (`store::archive`),
//! and its workspace's lease expires once nobody renews it. A coordinator
//! that sees both (at its start, and then every half lease) takes the run
//! over under its id:
//!
//! 1. it reads the run's record and segments, and asks the queue for
//!    every result of the run it keeps (JetStream keeps them whether or not
//!    the dead coordinator acknowledged them), holding those still to come;
//! 2. it writes all that into its own journal, as if it had driven the run;
//! 3. it resumes the run as after its own restart: recorded results are
//!    taken, operations in flight awaited, the rest dispatched. An operation
//!    the dead coordinator dispatched after its last segment is dispatched
//!    again under the same task id, which JetStream drops as a duplicate
//!    within its duplicate window (15 minutes), and its result is taken.
//!
//! No two coordinators drive one run: a run is taken over only once its
//! lease has expired, and the taker's lease fences the other out of the
//! state store should it come back.

use super::handle::Shared;
use super::recover::Recovery;
use crate::store::{Intent, StoreError};
use fleetform_shared::wire::TaskResult;
use std::collections::HashMap;
use std::sync::Arc;

/// Takes over every run whose coordinator is gone; returns the recoveries
/// to start (their workspaces are not locked by anyone alive).
pub(crate) async fn orphans(shared: &Arc<Shared>) -> anyhow::Result<Vec<Recovery>> {
    let (Some(archive), Some(leases)) = (&shared.archive, &shared.leases) else {
        return Ok(Vec::new());
    };
    let known: Vec<String> = shared
        .journal
        .run_ids()?
        .into_iter()
        .chain(shared.runs.lock().expect("runs lock").keys().cloned())
        .collect();
    let mut out = Vec::new();
    for (workspace, run_id) in archive.runs().await? {
        if known.contains(&run_id) {
            continue;
        }
        if leases.holder(&workspace).await?.is_some() {
            // Its coordinator (or whoever took it) is alive.
            continue;
        }
        let Some(archived) = archive.load(&workspace, &run_id).await? else {
            continue;
        };
        let serial = shared.store.head(&workspace).await?.map_or(0, |h| h.serial);
        if serial != archived.run.prior_serial {
            // Its snapshot was stored; only deleting the archive was missed.
            if let Err(e) = archive.delete(&workspace, &run_id).await {
                tracing::warn!(%run_id, error = %e, "deleting a finished run's archive failed");
            }
            continue;
        }
        match take_over(shared, archived).await {
            Ok(r) => out.push(r),
            Err(e) => {
                tracing::error!(%run_id, %workspace, error = %e, "taking over the run failed; trying again later");
            }
        }
    }
    Ok(out)
}

async fn take_over(
    shared: &Arc<Shared>,
    archived: crate::store::ArchivedRun,
) -> anyhow::Result<Recovery> {
    let run_id = archived.run_id.clone();
    let mut answers: HashMap<String, TaskResult> = HashMap::new();
    let mut intents: HashMap<String, Intent> = HashMap::new();
    for segment in archived.segments {
        answers.extend(segment.answers.into_iter().map(|r| (r.task_id.clone(), r)));
        intents.extend(segment.intents);
    }
    let from_segments = answers.len();
    let replayed = shared.dispatcher.take_over(&run_id).await?;
    let from_queue = replayed.len();
    for r in replayed {
        answers.entry(r.task_id.clone()).or_insert(r);
    }
    intents.retain(|task_id, _| !answers.contains_key(task_id));
    // Before anything is resumed: the coordinator the run is taken from
    // must find, should it come back, that its journal is stale.
    if let Some(archive) = &shared.archive {
        archive
            .set_driver(&archived.workspace, &run_id, &shared.owner)
            .await?;
    }
    // Into this coordinator's journal, as if it had driven the run so far.
    let journal = &shared.journal;
    let store_err = |e: StoreError| anyhow::anyhow!("journaling the run taken over: {e}");
    journal.begin(&run_id, &archived.run).map_err(store_err)?;
    let recorded: Vec<&TaskResult> = answers.values().collect();
    journal
        .append(&run_id, 0, &[], &[], &recorded)
        .map_err(store_err)?;
    // Whether the dead coordinator published these, the archive cannot
    // say: the resumed run publishes them again under the same ids, which
    // the queue drops as duplicates if they were; their results, held since
    // the take-over began, answer them either way.
    let pending: Vec<(String, Intent)> = intents.into_iter().collect();
    journal.intend(&run_id, &pending).map_err(store_err)?;
    let in_flight = Vec::new();
    tracing::info!(
        %run_id,
        workspace = %archived.workspace,
        from_segments,
        from_queue,
        recorded = answers.len(),
        dispatched_again = pending.len(),
        "taking over a run whose coordinator is gone"
    );
    Ok(Recovery::adopted(run_id, archived.run, in_flight))
}
