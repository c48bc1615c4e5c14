//! Runs nobody follows any more. A CLI killed during a plan left its run
//! planning on, holding the workspace's lock, and the next apply was
//! refused ("locked by another run of this coordinator").
//!
//! The rule: a run that has changed nothing yet (it waits for its lock,
//! plans, or waits for its approval: a plan, or an apply before its apply
//! walk starts) and that nobody has watched for [`GRACE`] is cancelled, and
//! so lets go of its lock. An applying run is never cancelled for want of a
//! watcher: it changes infrastructure, stopping it midway is worse than
//! finishing, and it releases the lock when it ends.
//!
//! Watchers are those who follow the run's event log (see
//! `EventLog::watchers`): the API's watch streams (the CLI that submitted
//! the run, `fleetform runs watch`) and the live view's pages, each for as
//! long as its client is connected. The grace lets a CLI re-attach after a
//! network blip or a restart of its coordinator (it retries every 5 s at
//! most), and covers the moment between a submission and its watch. A run
//! a restarted coordinator runs again gets three times as long: its CLI
//! may only be finding out that the coordinator is back.

use super::handle::RunHandle;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::RunEvent;
use std::sync::Arc;
use std::time::Duration;

/// How long a run that changed nothing may go unwatched.
pub(crate) const GRACE: Duration = Duration::from_secs(10);

/// Cancels `handle`'s run once it has gone unwatched for `grace` while it
/// had changed nothing; ends with the run, or once it applies.
pub(crate) async fn cancel_when_unwatched(handle: Arc<RunHandle>, grace: Duration) {
    loop {
        tokio::select! {
            () = handle.events.unwatched() => {}
            () = handle.events.wait_finished() => return,
        }
        tokio::select! {
            () = tokio::time::sleep(grace) => {}
            () = handle.events.wait_finished() => return,
        }
        if handle.is_applying() {
            return;
        }
        if handle.events.watchers() > 0 {
            // Somebody came back: wait until they leave.
            continue;
        }
        tracing::info!(run_id = %handle.id, grace_s = grace.as_secs(), "nobody watches the run, which changed nothing yet: cancelling it");
        handle.events.push(RunEvent::Diagnostics(
            Diagnostic::warning(
                "Nobody follows this run",
                format!(
                    "Its client went away (the CLI was stopped, or lost its connection) and nobody watched the run for {} seconds. A run that has changed nothing yet is cancelled then, so that it lets go of the lock on workspace {}; an applying run goes on to its end.",
                    grace.as_secs(),
                    handle.workspace
                ),
            )
            .into(),
        ));
        handle.cancel();
        return;
    }
}

#[cfg(test)]
mod tests {
    use crate::run::handle::RunHandle;
    use crate::run::testkit::{Harness, answer};
    use fleetform_shared::wire::{Operation, RunEvent, RunStatus, TaskKind};
    use std::time::{Duration, Instant};

    const MAIN: &str = "resource \"test_thing\" \"x\" {\n  name = \"x\"\n}\n";

    /// A harness whose worker answers every task at once but those
    /// `hold` picks, which it answers `after` (never, for None).
    async fn holding(
        hold: fn(&TaskKind) -> bool,
        after: Option<Duration>,
        grace: Duration,
    ) -> Harness {
        Harness::with_worker(move |mut ends| async move {
            let mut held = Vec::new();
            while let Some((task, _)) = ends.tasks.recv().await {
                if !hold(&task.kind) {
                    let _ = ends.results.send(answer(task));
                    continue;
                }
                match after {
                    None => held.push(task),
                    Some(after) => {
                        let results = ends.results.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(after).await;
                            let _ = results.send(answer(task));
                        });
                    }
                }
            }
        })
        .await
        .unwatched_after(grace)
    }

    /// Waits for the end of the run without watching it (a watcher would
    /// keep it going).
    async fn ended(handle: &RunHandle) -> RunStatus {
        tokio::time::timeout(Duration::from_secs(30), handle.events.wait_finished())
            .await
            .expect("the run ended");
        handle.events.status().expect("a status")
    }

    fn said(handle: &RunHandle, summary: &str) -> bool {
        handle.events.since(0).iter().any(
            |e| matches!(e, RunEvent::Diagnostics(d) if d.iter().any(|d| d.summary == summary)),
        )
    }

    /// A plan that nobody watches (its worker never answers: it would
    /// plan for ever) is cancelled once the grace has passed, saying why;
    /// the workspace is free for the next run.
    #[tokio::test]
    async fn an_unwatched_plan_is_cancelled_and_frees_the_workspace() {
        let grace = Duration::from_millis(300);
        let h = holding(|k| matches!(k, TaskKind::Plan(_)), None, grace).await;
        let started = Instant::now();
        let plan = h.submit(&[("main.tf", MAIN)], Operation::Plan);
        assert_eq!(ended(&plan).await, RunStatus::Cancelled);
        assert!(started.elapsed() >= grace, "{:?}", started.elapsed());
        assert!(said(&plan, "Nobody follows this run"));
        // The next run takes the workspace's lock (this one plans for
        // ever too, watched: it is cancelled by hand).
        let next = h.submit(&[("main.tf", MAIN)], Operation::Plan);
        let watching = next.events.subscribe();
        let planning = async {
            while !next
                .events
                .since(0)
                .iter()
                .any(|e| matches!(e, RunEvent::Started { .. }))
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), planning)
            .await
            .expect("started");
        assert!(next.cancel());
        assert_eq!(ended(&next).await, RunStatus::Cancelled);
        assert!(!said(&next, "Error acquiring the state lock"));
        drop(watching);
    }

    /// A watched run is not cancelled however long it plans, nor when
    /// its watcher re-attaches within the grace (a CLI reconnecting); once
    /// its watcher leaves for good, it is, after the grace.
    #[tokio::test]
    async fn a_watched_plan_goes_on_until_its_watcher_leaves() {
        let grace = Duration::from_millis(300);
        let h = holding(|k| matches!(k, TaskKind::Plan(_)), None, grace).await;
        let plan = h.submit(&[("main.tf", MAIN)], Operation::Plan);
        let watcher = plan.events.subscribe();
        tokio::time::sleep(grace * 4).await;
        assert!(!plan.events.is_finished(), "cancelled while watched");
        drop(watcher);
        tokio::time::sleep(grace / 3).await;
        let watcher = plan.events.subscribe();
        tokio::time::sleep(grace * 4).await;
        assert!(!plan.events.is_finished(), "cancelled though re-attached");
        let left = Instant::now();
        drop(watcher);
        assert_eq!(ended(&plan).await, RunStatus::Cancelled);
        assert!(left.elapsed() >= grace, "{:?}", left.elapsed());
    }

    /// An apply that waits for an approval nobody is left to give is
    /// cancelled; an applying one is not, however long nobody watches.
    #[tokio::test]
    async fn only_runs_that_changed_nothing_are_cancelled() {
        let grace = Duration::from_secs(1);
        let h = Harness::new().await.unwatched_after(grace);
        let waiting = h.submit_with(&[("main.tf", MAIN)], Operation::Apply, false);
        assert_eq!(ended(&waiting).await, RunStatus::Cancelled);
        assert!(
            waiting
                .events
                .since(0)
                .contains(&RunEvent::AwaitingApproval)
        );

        let h = holding(|k| matches!(k, TaskKind::Apply(_)), Some(grace * 3), grace).await;
        let applying = h.submit(&[("main.tf", MAIN)], Operation::Apply);
        assert_eq!(
            ended(&applying).await,
            RunStatus::Succeeded,
            "{:?}",
            applying.events.since(0)
        );
        assert!(!said(&applying, "Nobody follows this run"));
    }
}
