//! When results are acknowledged to their queue: a journaled task's only
//! once the run says it is journaled, anything else on delivery.

use super::{ResultAck, ResultRouter};
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
