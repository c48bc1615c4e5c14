//! What the settler does with overdue tasks, against an in-process queue
//! that loses everything it is given and claims in an in-memory store.

use super::{Settled, settle_once};
use crate::dispatch::{DispatchError, Dispatcher, ResultRouter, TaskQueue};
use crate::store::ClaimStore;
use async_trait::async_trait;
use fleetform_shared::wire::{
    ProviderSpec, RunControl, Task, TaskKind, TaskOutcome, TaskResult, TaskStatus, WorkerInfo,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A queue that drops every task (as a rolled-back JetStream would), and
/// records the republications; its workers answer from `status`.
#[derive(Default)]
struct Losing {
    republished: Mutex<Vec<(String, u32)>>,
    /// Workers with a recent heartbeat.
    live: Vec<&'static str>,
    /// What each worker says of any task.
    status: HashMap<&'static str, TaskStatus>,
    undelivered: Option<u64>,
    /// Who was asked, naming which incarnation.
    asked: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl TaskQueue for Losing {
    async fn publish(&self, _tasks: &[Task]) -> Result<(), DispatchError> {
        Ok(())
    }
    async fn republish(&self, task: &Task, round: u32) -> Result<(), DispatchError> {
        self.republished
            .lock()
            .unwrap()
            .push((task.id.clone(), round));
        Ok(())
    }
    async fn control(&self, _message: &RunControl) -> Result<(), DispatchError> {
        Ok(())
    }
    async fn workers(&self) -> Result<Option<Vec<WorkerInfo>>, DispatchError> {
        Ok(Some(self.live.iter().map(|id| info(id)).collect()))
    }
    async fn ask_worker(&self, worker: &str, _task: &Task, incarnation: &str) -> TaskStatus {
        self.asked
            .lock()
            .unwrap()
            .push((worker.to_string(), incarnation.to_string()));
        match self.status.get(worker).cloned() {
            // A refusal answers only a question naming the process.
            Some(TaskStatus::Refused) if incarnation.is_empty() => TaskStatus::Unknown,
            Some(status) => status,
            None => TaskStatus::Unknown,
        }
    }
    async fn undelivered(&self) -> Option<u64> {
        self.undelivered
    }
}

fn info(id: &str) -> WorkerInfo {
    WorkerInfo {
        id: id.into(),
        pool: "default".into(),
        host: "h".into(),
        version: "0".into(),
        concurrency: 1,
        in_flight: 0,
        completed: 0,
        allow_local_exec: false,
        started_at: String::new(),
        seen_at: String::new(),
    }
}

fn task(id: &str) -> Task {
    Task {
        id: id.into(),
        run_id: "r".into(),
        provider: Arc::new(ProviderSpec {
            addr: fleetform_shared::ProviderAddr::implied("null"),
            version_constraint: None,
            config: fleetform_shared::value::Value::null(),
            lock: Default::default(),
        }),
        kind: TaskKind::Schema { cached: vec![] },
    }
}

fn finished(id: &str, worker: &str) -> TaskResult {
    TaskResult {
        task_id: id.into(),
        run_id: "r".into(),
        worker: worker.into(),
        outcome: TaskOutcome::Cancelled,
        incarnation: String::new(),
    }
}

struct Setup {
    queue: Arc<Losing>,
    router: Arc<ResultRouter>,
    claims: ClaimStore,
    /// Run "r"'s claims are answered here, as while a coordinator runs it.
    _owned: crate::store::ClaimGuard,
}

impl Setup {
    fn new(queue: Losing) -> Setup {
        let claims = ClaimStore::new(Arc::new(object_store::memory::InMemory::new()), "p");
        Setup {
            queue: Arc::new(queue),
            router: ResultRouter::new(),
            _owned: claims.own("r", "c", Arc::new(|| true)),
            claims,
        }
    }

    async fn dispatch(&self, ids: &[&str]) -> Vec<tokio::sync::oneshot::Receiver<TaskResult>> {
        let dispatcher = Dispatcher::new(self.queue.clone(), self.router.clone());
        dispatcher
            .dispatch(ids.iter().map(|id| task(id)).collect())
            .await
            .unwrap()
    }

    /// One settling round over tasks awaited `after` or longer.
    async fn settle(&self, after: Duration) -> Vec<(String, Settled)> {
        let mut done = settle_once(&self.router, self.queue.as_ref(), &self.claims, after).await;
        done.sort_by(|a, b| a.0.cmp(&b.0));
        done
    }

    fn republished(&self) -> Vec<(String, u32)> {
        let mut v = self.queue.republished.lock().unwrap().clone();
        v.sort();
        v
    }
}

#[tokio::test]
async fn a_lost_task_nobody_claimed_is_published_again_once_the_queue_is_drained() {
    let mut s = Setup::new(Losing {
        undelivered: Some(3),
        ..Default::default()
    });
    let _rx = s.dispatch(&["a"]).await;
    assert!(
        s.settle(Duration::from_secs(3600)).await.is_empty(),
        "not overdue yet"
    );
    // Tasks wait undelivered: "a" may be one of them.
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("a".into(), Settled::Queued)]
    );
    assert!(s.republished().is_empty());

    Arc::get_mut(&mut s.queue).unwrap().undelivered = Some(0);
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("a".into(), Settled::Republished)]
    );
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("a".into(), Settled::Republished)]
    );
    // Each republication is a new message.
    assert_eq!(s.republished(), [("a".into(), 1), ("a".into(), 2)]);
}

#[tokio::test]
async fn a_lost_result_is_sent_again_by_the_worker_that_finished_the_task() {
    let s = Setup::new(Losing {
        live: vec!["w1"],
        status: HashMap::from([("w1", TaskStatus::Finished(finished("a", "w1")))]),
        undelivered: Some(0),
        ..Default::default()
    });
    let mut rx = s.dispatch(&["a"]).await;
    assert!(s.claims.claim("r", "a", "w1 att1").await.unwrap());
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("a".into(), Settled::ResultResent)]
    );
    assert_eq!(rx.remove(0).await.unwrap().worker, "w1");
    assert!(
        s.republished().is_empty(),
        "a claimed task is not published again"
    );
    // Its result came: nothing is overdue any more.
    assert!(s.settle(Duration::ZERO).await.is_empty());
}

#[tokio::test]
async fn an_unclaimed_task_a_live_worker_runs_is_not_published_again() {
    let s = Setup::new(Losing {
        live: vec!["w1", "w2"],
        status: HashMap::from([("w1", TaskStatus::Running)]),
        undelivered: Some(0),
        ..Default::default()
    });
    let _rx = s.dispatch(&["long"]).await;
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("long".into(), Settled::StillRunning)]
    );
    assert!(s.republished().is_empty());
}

#[tokio::test]
async fn an_unclaimed_tasks_lost_result_is_sent_again_by_a_live_worker() {
    let s = Setup::new(Losing {
        live: vec!["w1", "w2"],
        status: HashMap::from([("w2", TaskStatus::Finished(finished("read", "w2")))]),
        undelivered: Some(0),
        ..Default::default()
    });
    let mut rx = s.dispatch(&["read"]).await;
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("read".into(), Settled::ResultResent)]
    );
    assert_eq!(rx.remove(0).await.unwrap().worker, "w2");
    assert!(s.republished().is_empty());
}

#[tokio::test]
async fn a_task_its_claims_holder_still_runs_waits() {
    let s = Setup::new(Losing {
        live: vec!["w1"],
        status: HashMap::from([("w1", TaskStatus::Running)]),
        undelivered: Some(0),
        ..Default::default()
    });
    let _rx = s.dispatch(&["a"]).await;
    s.claims.claim("r", "a", "w1 att1").await.unwrap();
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("a".into(), Settled::StillRunning)]
    );
    assert!(s.republished().is_empty());
}

#[tokio::test]
async fn a_task_claimed_by_a_gone_or_forgetful_worker_is_published_again() {
    let s = Setup::new(Losing {
        // w1 sends no heartbeat (it would say Running if asked: a live
        // list decides first); w2 is alive but does not know its task.
        live: vec!["w2"],
        status: HashMap::from([("w1", TaskStatus::Running)]),
        undelivered: Some(5),
        ..Default::default()
    });
    let _rx = s.dispatch(&["a", "b"]).await;
    s.claims.claim("r", "a", "w1 att1").await.unwrap();
    s.claims.claim("r", "b", "w2 att2").await.unwrap();
    // Claimed tasks are not waiting in the queue: undelivered tasks do not
    // hold them back.
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [
            ("a".into(), Settled::Republished),
            ("b".into(), Settled::Republished)
        ]
    );
    assert_eq!(s.republished(), [("a".into(), 1), ("b".into(), 1)]);
}

#[tokio::test]
async fn tasks_answered_or_given_up_are_not_settled() {
    let s = Setup::new(Losing {
        undelivered: Some(0),
        ..Default::default()
    });
    let mut rx = s.dispatch(&["answered", "dropped"]).await;
    assert!(s.router.deliver(finished("answered", "w"), None));
    drop(rx.remove(1));
    assert!(s.settle(Duration::ZERO).await.is_empty());
    assert!(s.republished().is_empty());
}

#[tokio::test]
async fn an_ended_runs_claims_are_deleted_once_kept_long_enough() {
    let Setup {
        router,
        claims,
        _owned: owned,
        ..
    } = Setup::new(Losing::default());
    router
        .ended
        .collecting
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let live = claims.own("live", "c", Arc::new(|| true));
    claims.claim("r", "a", "w1 att1").await.unwrap();
    claims.claim("live", "a", "w1 att2").await.unwrap();
    super::collect_claims(&router, &claims, Duration::ZERO).await;
    // Read by whoever runs the run next (a restart, a standby).
    let held = async |run: &str| {
        let _g = claims.own(run, "next", Arc::new(|| true));
        claims.holder(run, "a").await.unwrap().is_some()
    };
    drop(owned);
    assert!(held("r").await, "the run goes on");

    router.release("r");
    super::collect_claims(&router, &claims, Duration::from_secs(3600)).await;
    assert!(held("r").await, "ended too lately");
    super::collect_claims(&router, &claims, Duration::ZERO).await;
    assert!(!held("r").await, "collected");
    assert!(claims.holder("live", "a").await.unwrap().is_some());
    drop(live);
}

/// Runs that ended before a restart (from the journal) are collected once
/// they ended `kept` ago, counting the time before the start.
#[test]
fn runs_that_ended_before_a_start_are_collected_by_when_they_ended() {
    let ended = super::EndedRuns::default();
    let hour = Duration::from_secs(3600);
    ended.seed(vec![
        ("recent".to_string(), hour),
        ("old".to_string(), 25 * hour),
        ("older".to_string(), 30 * hour),
    ]);
    ended.push_at("now".to_string(), std::time::Instant::now());
    let taken: Vec<String> = ended
        .take_older(24 * hour)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(taken, ["older", "old"]);
    let rest: Vec<String> = ended
        .take_older(Duration::ZERO)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(rest, ["recent", "now"]);
}

#[tokio::test]
async fn a_round_settles_a_bounded_number_the_longest_awaited_first() {
    let s = Setup::new(Losing {
        undelivered: Some(5),
        ..Default::default()
    });
    let ids: Vec<String> = (0..300).map(|i| format!("t{i}")).collect();
    let _rx = s
        .dispatch(&ids.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    let first: Vec<String> = s
        .settle(Duration::ZERO)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(first.len(), super::SETTLE_PER_ROUND);
    // Those left out wait longest now: the next round takes them first.
    let second: Vec<String> = s
        .settle(Duration::ZERO)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let left: Vec<&String> = ids.iter().filter(|id| !first.contains(id)).collect();
    assert_eq!(left.len(), 300 - super::SETTLE_PER_ROUND);
    assert!(left.iter().all(|id| second.contains(id)), "{left:?}");
}

#[tokio::test]
async fn a_task_sent_directly_that_never_reached_its_process_is_released_and_published_again() {
    let s = Setup::new(Losing {
        live: vec!["w1"],
        status: HashMap::from([("w1", TaskStatus::Refused)]),
        undelivered: Some(0),
        ..Default::default()
    });
    let _rx = s.dispatch(&["a"]).await;
    assert!(s.claims.claim("r", "a", "w1 direct.i1").await.unwrap());
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("a".into(), Settled::Republished)]
    );
    // The process the claim names was asked, about that delivery.
    assert_eq!(
        s.queue.asked.lock().unwrap().clone(),
        [("w1".to_string(), "i1".to_string())]
    );
    assert_eq!(s.republished(), [("a".into(), 1)]);
    // Released: the delivery that comes next is first.
    assert_eq!(s.claims.holder("r", "a").await.unwrap(), None);
    assert!(s.claims.claim("r", "a", "w2 att").await.unwrap());
}

#[tokio::test]
async fn a_task_sent_directly_whose_process_cannot_say_keeps_its_claim() {
    // The worker answers for another process of its id (it restarted):
    // the task may have run there, so its claim stays and the delivery
    // published again finds it taken.
    let s = Setup::new(Losing {
        live: vec!["w1"],
        status: HashMap::from([("w1", TaskStatus::Unknown)]),
        undelivered: Some(0),
        ..Default::default()
    });
    let _rx = s.dispatch(&["a"]).await;
    assert!(s.claims.claim("r", "a", "w1 direct.i1").await.unwrap());
    assert_eq!(
        s.settle(Duration::ZERO).await,
        [("a".into(), Settled::Republished)]
    );
    assert_eq!(
        s.claims.holder("r", "a").await.unwrap().as_deref(),
        Some("w1 direct.i1")
    );
    assert!(!s.claims.claim("r", "a", "w2 att").await.unwrap());
}
