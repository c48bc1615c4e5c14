//! Settling tasks whose results are overdue. The queue is transport, not
//! the record: JetStream can lose messages it acknowledged (lazy fsync and
//! a power loss, a truncated or rolled-back data file), so a task may
//! vanish before any worker took it, and a result after its task was
//! acknowledged. Either would leave its run waiting forever. The router
//! knows every task still waited for; what became of an overdue one is
//! decided from the record that does not forget (its claim in the object
//! store) and from the worker holding that claim:
//!
//! - nobody claimed it: unless a live worker says it runs the task (one
//!   that reads or plans for long) or finished it (its result is then
//!   delivered), it is published again. A task that must not run twice is
//!   still run at most once, since its claim decides; any other is
//!   idempotent. Not while the pool's queue holds undelivered tasks: the
//!   overdue one may simply wait among them.
//! - its claim's holder runs it still: it waits.
//! - the holder finished it: the holder's answer carries the result again
//!   (the published one was lost), and it is delivered.
//! - the holder is gone, or does not know the task: it is published
//!   again, and the worker that gets it finds the claim taken, so it looks
//!   the object up (`--lookup-rule`) or reports the operation interrupted
//!   with what to do, as for any create delivered twice.
//! - the task was sent to one worker process directly (its claim names the
//!   process), and that process says it never got it: it refuses the task
//!   from then on, so the claim is released and the task published again,
//!   for any worker to take up as new.
//!
//! A run resumed after a restart awaits the operations that were in flight
//! at the stop; it rebuilds their tasks (same ids) and hands them to the
//! router ([`super::Dispatcher::awaiting`]), so they are settled the same
//! way when the queue lost them or their results while no coordinator ran.
//!
//! The same loop deletes the claims of runs that ended here a while ago
//! ([`ClaimStore::collect`]): they are needed only while the run's tasks
//! may still be delivered. Which runs ended is kept in memory, and taken
//! from the journal's record of ended runs at a start
//! ([`spawn_settler`]'s `ended_before`), so the claims of runs that ended
//! before a restart go too (of the latest runs the journal remembers).

use super::{ResultRouter, TaskQueue};
use crate::store::{ClaimStore, claimant_worker};
use fleetform_shared::wire::{Task, TaskStatus};
use futures::StreamExt;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a task's result may be awaited with nothing heard of the task
/// before it is settled: about the workers' ack wait, after which the queue
/// itself would have delivered an unanswered task again.
pub const SETTLE_EVERY: Duration = Duration::from_secs(30);

/// Overdue tasks settled at once (each may wait for a worker's answer).
const SETTLE_AT_ONCE: usize = 32;
/// Overdue tasks settled in one round, the longest awaited first; the
/// rest wait for the next. A run whose tasks wait behind a long backlog
/// has them all overdue, and each costs a read of its claim.
const SETTLE_PER_ROUND: usize = 256;

/// How long an ended run's claims are kept by default: far longer than any
/// task of it could still be in a queue.
pub const CLAIMS_KEPT: Duration = Duration::from_secs(24 * 3600);

/// Runs that ended, oldest first, while someone collects their claims.
#[derive(Default)]
pub(super) struct EndedRuns {
    collecting: AtomicBool,
    /// Each run, when it was pushed, and how long it had ended already
    /// then (a run taken from the journal at a start).
    runs: Mutex<std::collections::VecDeque<(String, Instant, Duration)>>,
}

impl EndedRuns {
    pub(super) fn push(&self, run_id: &str) {
        if self.collecting.load(Ordering::Relaxed) {
            self.push_at(run_id.to_string(), Instant::now());
        }
    }

    fn push_at(&self, run_id: String, at: Instant) {
        self.runs
            .lock()
            .expect("ended runs lock")
            .push_back((run_id, at, Duration::ZERO));
    }

    /// Runs that ended before this process started, `ago` each (by the
    /// journal's record), the longest ago first.
    pub(super) fn seed(&self, mut runs: Vec<(String, Duration)>) {
        runs.sort_by_key(|r| std::cmp::Reverse(r.1));
        let now = Instant::now();
        let mut queue = self.runs.lock().expect("ended runs lock");
        for (run_id, ago) in runs {
            queue.push_back((run_id, now, ago));
        }
    }

    /// Takes the runs that ended `age` ago or longer.
    fn take_older(&self, age: Duration) -> Vec<(String, Instant)> {
        let mut runs = self.runs.lock().expect("ended runs lock");
        let mut out = Vec::new();
        while runs
            .front()
            .is_some_and(|(_, at, ago)| at.elapsed() + *ago >= age)
        {
            out.extend(runs.pop_front().map(|(id, at, _)| (id, at)));
        }
        out
    }
}

/// A task in the queue, awaited since `since` (its publication, its last
/// progress, or the last settling of it).
pub(super) struct Sent {
    task: Task,
    since: Instant,
    /// How often it was published again.
    rounds: u32,
}

/// What was done about one overdue task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Settled {
    /// Published again.
    Republished,
    /// Its worker had finished it and sent the result again.
    ResultResent,
    /// Its worker runs it still.
    StillRunning,
    /// Nobody claimed it, and the queue has tasks not yet delivered: it
    /// may be one of them.
    Queued,
    /// Nothing could be done now (its claim could not be read, or the
    /// queue took no republication): tried again later.
    Undecided,
}

impl Settled {
    fn label(self) -> &'static str {
        match self {
            Settled::Republished => "republished",
            Settled::ResultResent => "result_resent",
            Settled::StillRunning => "still_running",
            Settled::Queued => "queued",
            Settled::Undecided => "undecided",
        }
    }
}

impl ResultRouter {
    /// `tasks` are in the queue: from now on their results are awaited.
    /// A task whose result came already (or that nobody waits for) is
    /// dropped.
    pub(super) fn published(&self, tasks: Vec<Task>) {
        let now = Instant::now();
        let mut waiting = self.waiting.lock().expect("router lock");
        for task in tasks {
            if let Some(w) = waiting.get_mut(&task.id) {
                w.sent = Some(Sent {
                    task,
                    since: now,
                    rounds: 0,
                });
            }
        }
    }

    /// Something was heard of the task (its progress): it is not lost.
    pub(super) fn heard_of(&self, task_id: &str) {
        if let Some(sent) = self
            .waiting
            .lock()
            .expect("router lock")
            .get_mut(task_id)
            .and_then(|w| w.sent.as_mut())
        {
            sent.since = Instant::now();
        }
    }

    /// At most `most` queued tasks nothing was heard of for `after`, the
    /// longest awaited first, with how often each was published again.
    /// Those whose waiter gave up are left out.
    fn overdue(&self, after: Duration, most: usize) -> Vec<(Task, u32)> {
        let waiting = self.waiting.lock().expect("router lock");
        let mut overdue: Vec<&Sent> = waiting
            .values()
            .filter(|w| !w.tx.is_closed())
            .filter_map(|w| w.sent.as_ref())
            .filter(|s| s.since.elapsed() >= after)
            .collect();
        overdue.sort_by_key(|s| s.since);
        overdue
            .into_iter()
            .take(most)
            .map(|s| (s.task.clone(), s.rounds))
            .collect()
    }

    /// The task was settled: its clock starts again.
    fn settled(&self, task_id: &str, how: Settled) {
        if let Some(sent) = self
            .waiting
            .lock()
            .expect("router lock")
            .get_mut(task_id)
            .and_then(|w| w.sent.as_mut())
        {
            sent.since = Instant::now();
            if how == Settled::Republished {
                sent.rounds += 1;
            }
        }
    }
}

/// Checks for overdue tasks every third of `every`, for as long as the
/// process lives; a task is overdue once nothing was heard of it for
/// `every`. Runs that end from now on, and those that `ended_before` this
/// start (run id, how long ago), have their claims deleted `claims_kept`
/// after they ended.
pub fn spawn_settler(
    router: Arc<ResultRouter>,
    queue: Arc<dyn TaskQueue>,
    claims: ClaimStore,
    every: Duration,
    claims_kept: Duration,
    ended_before: Vec<(String, Duration)>,
) {
    router.ended.collecting.store(true, Ordering::Relaxed);
    router.ended.seed(ended_before);
    let tick = (every / 3).max(Duration::from_millis(100));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(tick).await;
            settle_once(&router, queue.as_ref(), &claims, every).await;
            collect_claims(&router, &claims, claims_kept).await;
        }
    });
}

/// Deletes the claims of runs that ended `kept` ago or longer; those the
/// store keeps for now (a claim is younger, or the store failed) are
/// looked at again later.
pub(crate) async fn collect_claims(router: &ResultRouter, claims: &ClaimStore, kept: Duration) {
    for (run_id, ended) in router.ended.take_older(kept) {
        match claims.collect(&run_id, kept).await {
            Ok(Some(n)) => tracing::info!(%run_id, claims = n, "an ended run's claims deleted"),
            // Claimed lately: the run goes on elsewhere; asked again in a while.
            Ok(None) => router.ended.push_at(run_id, Instant::now()),
            Err(e) => {
                tracing::warn!(%run_id, error = %e, "deleting an ended run's claims failed; tried again later");
                router.ended.push_at(run_id, ended);
                // The rest wait for the next round rather than fail alike.
                break;
            }
        }
    }
}

/// Settles every task overdue by `every`; returns what was done to each.
pub(crate) async fn settle_once(
    router: &ResultRouter,
    queue: &dyn TaskQueue,
    claims: &ClaimStore,
    every: Duration,
) -> Vec<(String, Settled)> {
    let overdue = router.overdue(every, SETTLE_PER_ROUND);
    if overdue.is_empty() {
        return Vec::new();
    }
    // Asked once a round: a claim held by a worker without a recent
    // heartbeat is a dead worker's, and is not asked about.
    let live: Option<HashSet<String>> = match queue.workers().await {
        Ok(Some(list)) => Some(list.into_iter().map(|w| w.id).collect()),
        _ => None,
    };
    let undelivered = queue.undelivered().await;
    let settle = |(task, rounds): (Task, u32)| {
        let live = live.as_ref();
        async move {
            let how = settle_task(router, queue, claims, &task, rounds, live, undelivered).await;
            router.settled(&task.id, how);
            crate::metrics::settled(how.label());
            (task.id, how)
        }
    };
    futures::stream::iter(overdue)
        .map(settle)
        .buffer_unordered(SETTLE_AT_ONCE)
        .collect()
        .await
}

async fn settle_task(
    router: &ResultRouter,
    queue: &dyn TaskQueue,
    claims: &ClaimStore,
    task: &Task,
    rounds: u32,
    live: Option<&HashSet<String>>,
    undelivered: Option<u64>,
) -> Settled {
    let (run_id, task_id) = (&task.run_id, &task.id);
    let holder = match claims.holder(run_id, task_id).await {
        Ok(h) => h,
        Err(e) => {
            tracing::warn!(%run_id, %task_id, error = %e, "overdue task: its claim could not be read; asked again later");
            return Settled::Undecided;
        }
    };
    let republish = async |why: &str| match queue.republish(task, rounds + 1).await {
        Ok(()) => {
            tracing::warn!(%run_id, %task_id, round = rounds + 1, why, "overdue task published again");
            Settled::Republished
        }
        Err(e) => {
            tracing::warn!(%run_id, %task_id, error = %e, "overdue task: publishing it again failed; tried again later");
            Settled::Undecided
        }
    };
    let Some(claimant) = holder else {
        if undelivered != Some(0) {
            tracing::debug!(%run_id, %task_id, ?undelivered, "overdue task unclaimed, and the queue may hold it still");
            return Settled::Queued;
        }
        // Tasks that are not claimed (reads, plans) may be running anywhere:
        // every live worker is asked. The queue holds none undelivered, so
        // they are at most as many as the workers run at once.
        let workers: Vec<&String> = live.map(|l| l.iter().collect()).unwrap_or_default();
        let answers =
            futures::future::join_all(workers.iter().map(|w| queue.ask_worker(w, task, ""))).await;
        if answers.contains(&TaskStatus::Running) {
            tracing::debug!(%run_id, %task_id, "overdue task still running");
            return Settled::StillRunning;
        }
        if let Some(result) = answers.into_iter().find_map(|a| match a {
            TaskStatus::Finished(r) => Some(r),
            _ => None,
        }) {
            tracing::warn!(%run_id, %task_id, worker = %result.worker, "overdue task: a worker had finished it, and sent the result again");
            router.deliver(result, None);
            return Settled::ResultResent;
        }
        return republish("nobody claimed it, no worker has it, and the queue holds no task undelivered: it was lost").await;
    };
    let worker = claimant_worker(&claimant);
    if live.is_some_and(|l| !l.contains(worker)) {
        return republish("its claim's holder sends no heartbeat").await;
    }
    // Sent to one process of the worker directly: that process is asked
    // about that delivery.
    let incarnation = fleetform_shared::wire::nats::direct_incarnation(&claimant).unwrap_or("");
    match queue.ask_worker(worker, task, incarnation).await {
        TaskStatus::Running => {
            tracing::debug!(%run_id, %task_id, %worker, "overdue task still running");
            Settled::StillRunning
        }
        TaskStatus::Finished(result) => {
            tracing::warn!(%run_id, %task_id, %worker, "overdue task: its worker had finished it, and sent the result again");
            router.deliver(result, None);
            Settled::ResultResent
        }
        TaskStatus::Unknown => {
            republish("its claim's holder does not know it, or did not answer (gone, restarted, paused or cut off)").await
        }
        // It never reached the process, which refuses it from now on: the
        // claim is released, and any worker may take the task up.
        TaskStatus::Refused => match claims.release(run_id, task_id, &claimant).await {
            Ok(_) => republish("it was sent to a worker process directly and never reached it (the process refuses it now)").await,
            Err(e) => {
                tracing::warn!(%run_id, %task_id, error = %e, "overdue task: its claim could not be released; asked again later");
                Settled::Undecided
            }
        },
    }
}

#[cfg(test)]
#[path = "settle_tests.rs"]
mod tests;
