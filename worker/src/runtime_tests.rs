//! The worker loop's claims: a task taken up before is not run again.

use super::*;
use crate::handler::ProviderSource;
use crate::plugin::Provider;
use crate::source::{Acker, Claim, Delivery, ResultSink, TaskSource};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ApplyTask, ProviderSpec, TaskProgress};
use std::sync::Mutex;

/// Hands out one create, first delivery, and answers claims as told.
struct OneTask(Mutex<Option<Task>>, Claim);

struct NoAck;

#[async_trait::async_trait]
impl Acker for NoAck {
    async fn ack(&self) {}
    async fn in_progress(&self) {}
}

#[async_trait::async_trait]
impl TaskSource for OneTask {
    async fn next(&self) -> Option<Delivery> {
        let task = self.0.lock().unwrap().take()?;
        Some(Delivery {
            task,
            attempt: 1,
            acker: Box::new(NoAck),
            headers: None,
        })
    }
    async fn claim(&self, _: &str, _: &str) -> Claim {
        self.1.clone()
    }
}

#[derive(Default)]
struct Results(Mutex<Vec<TaskResult>>);

#[async_trait::async_trait]
impl ResultSink for Results {
    async fn publish(&self, r: &TaskResult) -> Result<(), String> {
        self.0.lock().unwrap().push(r.clone());
        Ok(())
    }
    fn progress(&self, _: TaskProgress) {}
}

/// Any provider call fails: a task that ran says so.
struct Unreachable;

#[async_trait::async_trait]
impl ProviderSource for Unreachable {
    async fn fingerprint(&self, _: &ProviderSpec) -> Result<String, Diagnostics> {
        Ok("none".into())
    }
    async fn schema(&self, _: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics> {
        Err(Diagnostic::error("provider reached", "").into())
    }
    async fn configured(
        &self,
        _: &ProviderSpec,
        _: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        Err(Diagnostic::error("provider reached", "").into())
    }
}

fn create() -> Task {
    Task {
        id: "r:apply:x.a".into(),
        run_id: "r".into(),
        provider: ProviderSpec {
            addr: "registry.terraform.io/fleetform/fake".parse().unwrap(),
            version_constraint: None,
            config: Value::Null,
            lock: Default::default(),
        },
        kind: TaskKind::Apply(ApplyTask {
            addr: "x.a".parse().unwrap(),
            type_name: "x".into(),
            op: ApplyOp::Create,
            prior: None,
            config: Value::Null,
            planned: Value::Null,
            planned_private: vec![],
            provisioners: vec![],
        }),
    }
}

async fn outcome(claim: Claim) -> TaskOutcome {
    let worker = Worker::new("w", 1, Arc::new(Unreachable));
    let source = Arc::new(OneTask(Mutex::new(Some(create())), claim));
    let results = Arc::new(Results::default());
    let sink: Arc<dyn ResultSink> = results.clone();
    let until = tokio::time::sleep(Duration::from_millis(500));
    worker.run(source, sink, until).await;
    let got = results.0.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "{got:?}");
    got[0].outcome.clone()
}

/// A first delivery of a create that a crashed queue forgot it had
/// delivered: the claim says it was taken up, so it does not run again.
#[tokio::test]
async fn a_create_claimed_before_is_not_run_again_even_on_a_first_delivery() {
    assert!(matches!(
        outcome(Claim::Taken).await,
        TaskOutcome::Interrupted { attempt: 1 }
    ));
    // Unclaimed, it runs (and reaches the provider).
    assert!(matches!(
        outcome(Claim::First).await,
        TaskOutcome::Failed(_)
    ));
    // A claim that cannot be recorded: the delivery count decides.
    assert!(matches!(
        outcome(Claim::Unknown("down".into())).await,
        TaskOutcome::Failed(_)
    ));
}

/// A worker remembers the last tasks it took, as many as it keeps: a
/// second delivery of one of them waits for (or reports) its outcome, and
/// one older than that is taken as new.
#[test]
fn taken_tasks_are_remembered_up_to_the_number_kept() {
    let taken = Taken::keeping(2);
    let a = taken.claim("a").expect("first delivery of a");
    assert!(taken.claim("a").is_err(), "a second delivery of a waits");
    let _b = taken.claim("b").expect("b");
    let _c = taken.claim("c").expect("c");
    assert!(taken.claim("c").is_err(), "c is remembered");
    assert!(taken.claim("b").is_err(), "b is remembered");
    drop(a);
    assert!(taken.claim("a").is_ok(), "a was forgotten");
    assert_eq!(Taken::default().keep, Taken::KEEP);
}
