//! When results are acknowledged to their queue: a journaled task's only
//! once the run says it is journaled, anything else on delivery.

use super::{DispatchError, Dispatcher, LocalQueue, Notice, ResultAck, ResultRouter, TaskQueue};
use async_trait::async_trait;
use fleetform_shared::wire::{ProviderSpec, RunControl, Task, TaskKind};
use fleetform_shared::wire::{TaskOutcome, TaskResult};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Records which deliveries were acknowledged, by label.
#[derive(Clone, Default)]
struct Acks(Arc<Mutex<Vec<&'static str>>>);

struct Ack(Acks, &'static str);

impl ResultAck for Ack {
    fn ack(self: Box<Self>) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(async move { self.0.0.lock().unwrap().push(self.1) })
    }
}

impl Acks {
    fn ack(&self, label: &'static str) -> Option<Box<dyn ResultAck>> {
        Some(Box::new(Ack(self.clone(), label)))
    }

    /// The acknowledgements so far, once spawned acks have run.
    async fn seen(&self) -> Vec<&'static str> {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let mut v = self.0.lock().unwrap().clone();
        v.sort();
        v
    }
}

fn result(task_id: &str) -> TaskResult {
    TaskResult {
        task_id: task_id.into(),
        run_id: "r".into(),
        worker: "w".into(),
        outcome: TaskOutcome::Cancelled,
        incarnation: String::new(),
    }
}

#[tokio::test]
async fn a_journaled_result_is_acknowledged_only_once_journaled() {
    let router = ResultRouter::new();
    let acks = Acks::default();
    let journaled = router.expect("apply", true);
    let planned = router.expect("plan", false);

    assert!(router.deliver(result("plan"), acks.ack("plan")));
    assert!(router.deliver(result("apply"), acks.ack("apply first")));
    assert_eq!(planned.await.unwrap().task_id, "plan");
    assert_eq!(journaled.await.unwrap().task_id, "apply");
    assert_eq!(acks.seen().await, ["plan"], "the apply result waits");

    // Delivered again before the journal write: still not acknowledged.
    assert!(!router.deliver(result("apply"), acks.ack("apply again")));
    assert_eq!(acks.seen().await, ["plan"]);

    router.acknowledge(&["apply".to_string()]);
    assert_eq!(acks.seen().await, ["apply again", "plan"]);
}

#[tokio::test]
async fn a_result_nobody_waits_for_is_acknowledged_and_dropped() {
    let router = ResultRouter::new();
    let acks = Acks::default();
    assert!(!router.deliver(result("stale"), acks.ack("stale")));
    assert_eq!(acks.seen().await, ["stale"]);
    // Acknowledging what is not pending does nothing.
    router.acknowledge(&["stale".to_string(), "never".to_string()]);
    assert_eq!(acks.seen().await, ["stale"]);
}

/// A queue out of reach for its first `failures` publishes.
struct Flaky {
    failures: Mutex<usize>,
    published: Mutex<Vec<String>>,
}

#[async_trait]
impl TaskQueue for Flaky {
    async fn publish(&self, tasks: &[Task]) -> Result<(), DispatchError> {
        let mut left = self.failures.lock().unwrap();
        if *left > 0 {
            *left -= 1;
            return Err(DispatchError::Nats("connection refused".into()));
        }
        let mut published = self.published.lock().unwrap();
        published.extend(tasks.iter().map(|t| t.id.clone()));
        Ok(())
    }

    async fn control(&self, _: &RunControl) -> Result<(), DispatchError> {
        Ok(())
    }
}

fn task(id: &str) -> Task {
    Task {
        id: id.into(),
        run_id: "r".into(),
        provider: std::sync::Arc::new(ProviderSpec {
            addr: fleetform_shared::ProviderAddr::implied("null"),
            version_constraint: None,
            config: fleetform_shared::value::Value::null(),
            lock: Default::default(),
        }),
        kind: TaskKind::Schema { cached: vec![] },
    }
}

/// A journal write that has ended.
fn journaled() -> tokio::sync::watch::Receiver<bool> {
    tokio::sync::watch::channel(true).1
}

#[tokio::test]
async fn in_process_workers_get_the_journal_signal_of_journaled_tasks_only() {
    let router = ResultRouter::new();
    let (queue, mut ends) = LocalQueue::new(router.clone());
    let d = Dispatcher::new(Arc::new(queue), router);
    let (write_done, signal) = tokio::sync::watch::channel(false);
    let _rx = d
        .dispatch_journaled(vec![task("j")], &[], &signal, &|_| {})
        .await
        .unwrap();
    let _rx = d.dispatch(vec![task("p")]).await.unwrap();
    let (t, j) = ends.tasks.recv().await.unwrap();
    assert_eq!(t.id, "j");
    let mut j = j.expect("a journaled task carries the signal");
    assert!(!*j.borrow(), "the write has not ended yet");
    write_done.send(true).unwrap();
    j.wait_for(|done| *done).await.unwrap();
    let (t, j) = ends.tasks.recv().await.unwrap();
    assert_eq!(t.id, "p");
    assert!(j.is_none(), "a planning task waits for no journal");
}

#[tokio::test]
async fn a_queue_out_of_reach_pauses_the_dispatch_and_says_so() {
    let queue = Arc::new(Flaky {
        failures: Mutex::new(3),
        published: Mutex::default(),
    });
    let router = ResultRouter::new();
    let d = Dispatcher::new(queue.clone(), router.clone()).retrying(Duration::from_secs(10));
    let notices = Mutex::new(Vec::new());
    let receivers = d
        .dispatch_journaled(vec![task("t1")], &[], &journaled(), &|n| {
            notices.lock().unwrap().push(n)
        })
        .await
        .unwrap();
    assert_eq!(*queue.published.lock().unwrap(), ["t1"]);
    assert_eq!(
        *notices.lock().unwrap(),
        [Notice::Waiting("connection refused".into()), Notice::Back],
        "said once each"
    );
    assert!(router.deliver(result("t1"), None));
    assert_eq!(
        receivers.into_iter().next().unwrap().await.unwrap().task_id,
        "t1"
    );
}

#[tokio::test]
async fn a_queue_gone_for_good_fails_the_dispatch_and_forgets_its_tasks() {
    let queue = Arc::new(Flaky {
        failures: Mutex::new(usize::MAX),
        published: Mutex::default(),
    });
    let router = ResultRouter::new();
    let d = Dispatcher::new(queue, router.clone()).retrying(Duration::from_millis(50));
    let failed = d
        .dispatch_journaled(vec![task("t1")], &[], &journaled(), &|_| {})
        .await;
    assert!(matches!(failed, Err(DispatchError::Nats(_))));
    assert!(!router.deliver(result("t1"), None), "nobody waits any more");
}

#[tokio::test]
async fn results_of_a_run_taken_over_wait_for_their_waiter() {
    let router = ResultRouter::new();
    let acks = Acks::default();
    // Not held: a result nobody waits for is dropped (and acknowledged).
    assert!(!router.deliver(result("early"), acks.ack("early")));
    let mut rx = router.expect("early", true);
    assert!(rx.try_recv().is_err(), "a dropped result came back");
    // Held: kept until someone waits, then handed over at once.
    router.hold("r");
    assert!(!router.deliver(result("t1"), acks.ack("t1")));
    assert!(
        !router.deliver(result("t1"), None),
        "a duplicate is not kept twice"
    );
    let mut rx = router.expect("t1", true);
    assert_eq!(rx.try_recv().unwrap().task_id, "t1");
    // Acknowledged on arrival: the queue keeps held results anyway.
    assert_eq!(acks.seen().await, ["early", "t1"]);
    // Taken once: a second waiter waits for a new delivery.
    let mut again = router.expect("t1", true);
    assert!(again.try_recv().is_err());
    // Once the run ends, what nobody claimed is dropped, and no more kept.
    assert!(!router.deliver(result("t2"), None));
    router.release("r");
    let mut late = router.expect("t2", true);
    assert!(late.try_recv().is_err(), "kept after the run ended");
    router.forget("t2");
    assert!(!router.deliver(result("t3"), None));
    let mut none = router.expect("t3", true);
    assert!(none.try_recv().is_err(), "held after the run ended");
}

/// Records what a watcher was shown.
#[derive(Default)]
struct Shown(Mutex<Vec<fleetform_shared::wire::ProgressEvent>>);

impl super::ProgressWatcher for Shown {
    fn progress(&self, _step: u32, event: fleetform_shared::wire::ProgressEvent) {
        self.0.lock().unwrap().push(event);
    }
}

#[tokio::test]
async fn throttling_notices_go_to_their_run_while_it_goes_and_task_progress_to_its_task() {
    use fleetform_shared::wire::{ProgressEvent, ProviderThrottled, TaskProgress};
    let router = ResultRouter::new();
    let queue = Arc::new(Flaky {
        failures: Mutex::new(0),
        published: Mutex::default(),
    });
    let dispatcher = Dispatcher::new(queue, router.clone());
    let (run, task) = (Arc::new(Shown::default()), Arc::new(Shown::default()));
    dispatcher.watch_run("r", run.clone());
    dispatcher.watch("t", task.clone());
    let throttled = ProgressEvent::Throttled(ProviderThrottled {
        provider: "fleetform/sim".parse().unwrap(),
        worker: "w".into(),
        limit_before: 32,
        limit: 16,
        limit_max: 64,
        retry_in_ms: 1200,
        errors: 3,
        message: "ThrottlingException: Rate exceeded".into(),
    });
    let line = ProgressEvent::Output {
        seq: 0,
        line: "hello".into(),
    };
    let progress = |run_id: &str, event: &ProgressEvent| TaskProgress {
        task_id: "t".into(),
        run_id: run_id.into(),
        step: 0,
        event: event.clone(),
    };
    router.progress(progress("r", &throttled));
    router.progress(progress("r", &line));
    router.progress(progress("other", &throttled));
    assert_eq!(*run.0.lock().unwrap(), std::slice::from_ref(&throttled));
    assert_eq!(*task.0.lock().unwrap(), [line]);
    dispatcher.release("r");
    router.progress(progress("r", &throttled));
    assert_eq!(run.0.lock().unwrap().len(), 1, "the run has ended");
}

/// The router's tables grow to a run's widest moment and shrink back
/// when the run ends, to what other runs still hold.
#[tokio::test]
async fn the_router_gives_back_its_tables_when_a_run_ends() {
    let router = ResultRouter::new();
    let acks = Acks::default();
    let other = router.expect("other", true);
    let ids: Vec<String> = (0..5000).map(|i| format!("t{i}")).collect();
    let waiting: Vec<_> = ids.iter().map(|id| router.expect(id, true)).collect();
    let grown = router.waiting.lock().unwrap().capacity();
    assert!(grown >= 5001, "{grown}");
    for id in &ids {
        assert!(router.deliver(result(id), acks.ack("r")));
    }
    router.acknowledge(&ids);
    drop(waiting);
    router.release("r");
    let waiting = router.waiting.lock().unwrap().capacity();
    let unjournaled = router.unjournaled.lock().unwrap().capacity();
    assert!(waiting < 64, "{waiting} slots kept for 1 waiter");
    assert!(unjournaled < 64, "{unjournaled} slots kept for none");
    assert!(router.deliver(result("other"), None));
    assert_eq!(other.await.unwrap().task_id, "other");
}
