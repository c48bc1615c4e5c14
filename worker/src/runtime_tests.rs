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

/// `task`'s first delivery, if there is one left.
fn first_delivery(task: Option<Task>) -> Option<Delivery> {
    Some(Delivery {
        task: task?,
        attempt: 1,
        acker: Box::new(NoAck),
        headers: None,
        journaled: None,
        direct: None,
    })
}

#[async_trait::async_trait]
impl TaskSource for OneTask {
    async fn next(&self) -> Option<Delivery> {
        first_delivery(self.0.lock().unwrap().take())
    }
    async fn claim(&self, _: &Task, _: &str) -> Claim {
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
        provider: std::sync::Arc::new(ProviderSpec {
            addr: "registry.terraform.io/fleetform/fake".parse().unwrap(),
            version_constraint: None,
            config: Value::null(),
            lock: Default::default(),
        }),
        kind: TaskKind::Apply(ApplyTask {
            addr: "x.a".parse().unwrap(),
            type_name: "x".into(),
            op: ApplyOp::Create,
            prior: None,
            config: Value::null(),
            planned: Value::null(),
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
    // A claim nobody confirmed (no coordinator answered): not run as new,
    // since a queue that lost writes may also have lost the delivery count.
    assert!(matches!(
        outcome(Claim::Unknown("down".into())).await,
        TaskOutcome::Interrupted { attempt: 1 }
    ));
}

/// A delivery the coordinator calls a duplicate (another worker has the
/// task) is dropped: no result, which could only say "interrupted", and
/// nothing remembered here to answer for.
#[tokio::test]
async fn a_duplicate_delivery_is_dropped_without_a_result() {
    let worker = Worker::new("w", 1, Arc::new(Unreachable));
    let taken = worker.taken.clone();
    let source = Arc::new(OneTask(Mutex::new(Some(create())), Claim::Duplicate));
    let results = Arc::new(Results::default());
    let sink: Arc<dyn ResultSink> = results.clone();
    worker
        .run(source, sink, tokio::time::sleep(Duration::from_millis(500)))
        .await;
    assert!(
        results.0.lock().unwrap().is_empty(),
        "{:?}",
        results.0.lock().unwrap()
    );
    assert_eq!(taken.status("r:apply:x.a"), None);
}

/// Hands out the same create twice at once, and answers its claims
/// `Duplicate` after a while: another worker has it.
struct TwiceDuplicate(Mutex<u32>);

#[async_trait::async_trait]
impl TaskSource for TwiceDuplicate {
    async fn next(&self) -> Option<Delivery> {
        let more = {
            let mut left = self.0.lock().unwrap();
            let more = *left > 0;
            *left = left.saturating_sub(1);
            more
        };
        if !more {
            return std::future::pending().await;
        }
        first_delivery(Some(create()))
    }
    async fn claim(&self, _: &Task, _: &str) -> Claim {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Claim::Duplicate
    }
}

/// A second delivery that comes while the first waits for its claim (the
/// queue delivered it again, and the coordinator published it again) is
/// dropped with the first when that is a duplicate. Seen in
/// `tests/tests/partitions.rs` before: it waited for the first's outcome,
/// found none, and reported the create "interrupted" 4 ms before the
/// paused worker that had it sent the real result, so the run failed.
#[tokio::test]
async fn a_delivery_waiting_on_a_dropped_duplicate_is_dropped_too() {
    let worker = Worker::new("w", 2, Arc::new(Unreachable));
    let source = Arc::new(TwiceDuplicate(Mutex::new(2)));
    let results = Arc::new(Results::default());
    let sink: Arc<dyn ResultSink> = results.clone();
    worker
        .run(source, sink, tokio::time::sleep(Duration::from_millis(800)))
        .await;
    assert!(
        results.0.lock().unwrap().is_empty(),
        "{:?}",
        results.0.lock().unwrap()
    );
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

/// The fake provider, configured.
struct Fake(Arc<crate::plugin::FakeProvider>);

#[async_trait::async_trait]
impl ProviderSource for Fake {
    async fn fingerprint(&self, _: &ProviderSpec) -> Result<String, Diagnostics> {
        Ok("fake@1.0.0".into())
    }
    async fn schema(&self, _: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics> {
        Ok(Arc::new(crate::plugin::FakeProvider::schema()))
    }
    async fn configured(
        &self,
        _: &ProviderSpec,
        _: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        let req = fleetform_shared::provider::ConfigureProviderRequest {
            terraform_version: String::new(),
            config: Value::null(),
        };
        self.0.configure_provider(&req).await.expect("configure");
        let p: Arc<dyn Provider> = self.0.clone();
        Ok((p, Arc::new(crate::plugin::FakeProvider::schema())))
    }
}

/// Hands out one create of a `fake_thing` and answers its claim only once
/// the provider has been asked for the final plan.
struct ClaimAfterPlan {
    task: Mutex<Option<Task>>,
    claim: Claim,
    provider: Arc<crate::plugin::FakeProvider>,
    /// The provider's calls before the task.
    before: usize,
    /// The provider's calls when the claim was answered.
    seen: Mutex<Option<Vec<&'static str>>>,
}

#[async_trait::async_trait]
impl TaskSource for ClaimAfterPlan {
    async fn next(&self) -> Option<Delivery> {
        first_delivery(self.task.lock().unwrap().take())
    }
    async fn claim(&self, _: &Task, _: &str) -> Claim {
        for _ in 0..200 {
            if self.provider.calls()[self.before..].contains(&"PlanResourceChange") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        *self.seen.lock().unwrap() = Some(self.provider.calls());
        self.claim.clone()
    }
}

/// A create of a `fake_thing` as the coordinator hands it out: planned by
/// the provider once already.
async fn planned_fake_create(provider: &Arc<crate::plugin::FakeProvider>) -> Task {
    use crate::plugin::fake::FAKE_THING;
    let source = Fake(provider.clone());
    let config = Value::object([("name", Value::from("a")), ("id", Value::null())]);
    let mut planned = create();
    let TaskKind::Apply(a) = &mut planned.kind else {
        unreachable!()
    };
    a.type_name = FAKE_THING.into();
    a.addr = "fake_thing.a".parse().unwrap();
    a.config = config.clone();
    let plan = Task {
        kind: TaskKind::Plan(fleetform_shared::wire::PlanTask {
            addr: a.addr.clone(),
            type_name: FAKE_THING.into(),
            prior: None,
            config,
            refresh: false,
            force_replace: false,
        }),
        ..create()
    };
    let TaskOutcome::Plan(p) = crate::handler::handle(&source, &plan).await else {
        panic!("no plan");
    };
    a.planned = p.planned;
    planned
}

/// One in-process delivery whose intent is journaled when `journaled` says.
struct InProcess {
    task: Mutex<Option<Task>>,
    journaled: tokio::sync::watch::Receiver<bool>,
}

#[async_trait::async_trait]
impl TaskSource for InProcess {
    async fn next(&self) -> Option<Delivery> {
        let mut d = first_delivery(self.task.lock().unwrap().take())?;
        d.journaled = Some(self.journaled.clone());
        Some(d)
    }
}

/// An in-process create is planned at once, but applied only once the
/// coordinator's journal write of its intent has ended; if that write
/// never ends (its writer is gone), nothing is applied and the task says
/// it never started.
#[tokio::test]
async fn an_in_process_create_is_applied_only_once_its_intent_is_journaled() {
    for written in [true, false] {
        let provider = Arc::new(crate::plugin::FakeProvider::new());
        let planned = planned_fake_create(&provider).await;
        let before = provider.calls().len();
        let (write, journaled) = tokio::sync::watch::channel(false);
        let tasks = Arc::new(InProcess {
            task: Mutex::new(Some(planned)),
            journaled,
        });
        let results = Arc::new(Results::default());
        let sink: Arc<dyn ResultSink> = results.clone();
        let worker = Worker::new("w", 1, Arc::new(Fake(provider.clone())));
        let running = tokio::spawn(async move {
            worker
                .run(tasks, sink, tokio::time::sleep(Duration::from_millis(1500)))
                .await
        });
        for _ in 0..200 {
            if provider.calls()[before..].contains(&"PlanResourceChange") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let calls = provider.calls()[before..].to_vec();
        assert!(calls.contains(&"PlanResourceChange"), "{calls:?}");
        assert!(
            !calls.contains(&"ApplyResourceChange"),
            "applied before the journal write ended: {calls:?}"
        );
        assert!(results.0.lock().unwrap().is_empty());
        if written {
            write.send(true).unwrap();
        } else {
            drop(write);
        }
        running.await.unwrap();
        let applies = provider.calls()[before..]
            .iter()
            .filter(|c| **c == "ApplyResourceChange")
            .count();
        let got = results.0.lock().unwrap().clone();
        if written {
            assert_eq!(applies, 1);
            assert!(
                matches!(&got[..], [r] if matches!(&r.outcome, TaskOutcome::Apply(o) if !o.diagnostics.has_errors())),
                "{got:?}"
            );
        } else {
            assert_eq!(applies, 0);
            assert!(
                matches!(&got[..], [r] if r.outcome == TaskOutcome::Cancelled),
                "{got:?}"
            );
            assert!(provider.objects().is_empty());
        }
    }
}

/// A create is claimed while the provider plans it again, and applied only
/// once the claim says it is the first: taken before, nothing is applied.
#[tokio::test]
async fn a_create_is_claimed_while_it_is_planned_and_applied_only_after_the_claim() {
    for (claim, applies) in [(Claim::First, 1), (Claim::Taken, 0)] {
        let provider = Arc::new(crate::plugin::FakeProvider::new());
        let planned = planned_fake_create(&provider).await;
        let before = provider.calls().len();

        let worker = Worker::new("w", 1, Arc::new(Fake(provider.clone())));
        let tasks = Arc::new(ClaimAfterPlan {
            task: Mutex::new(Some(planned)),
            claim: claim.clone(),
            provider: provider.clone(),
            before,
            seen: Mutex::default(),
        });
        let results = Arc::new(Results::default());
        let sink: Arc<dyn ResultSink> = results.clone();
        worker
            .run(
                tasks.clone(),
                sink,
                tokio::time::sleep(Duration::from_millis(800)),
            )
            .await;
        let calls = provider.calls()[before..].to_vec();
        let seen = tasks.seen.lock().unwrap().clone().expect("claimed")[before..].to_vec();
        assert!(seen.contains(&"PlanResourceChange"), "{claim:?}: {seen:?}");
        assert!(
            !seen.contains(&"ApplyResourceChange"),
            "{claim:?}: applied before the claim: {seen:?}"
        );
        assert_eq!(
            calls
                .iter()
                .filter(|c| **c == "ApplyResourceChange")
                .count(),
            applies,
            "{claim:?}: {calls:?}"
        );
        let got = results.0.lock().unwrap().clone();
        match (&claim, &got[..]) {
            (Claim::First, [r]) => assert!(
                matches!(&r.outcome, TaskOutcome::Apply(o) if !o.diagnostics.has_errors()),
                "{r:?}"
            ),
            (Claim::Taken, [r]) => assert!(
                matches!(r.outcome, TaskOutcome::Interrupted { attempt: 1 }),
                "{r:?}"
            ),
            _ => panic!("{claim:?}: {got:?}"),
        }
        assert_eq!(provider.objects().len(), applies);
    }
}

/// Hands out one task sent directly; its claim must not be asked for.
struct OneDirect {
    task: Mutex<Option<Task>>,
    answers: Arc<Mutex<Vec<DirectAnswer>>>,
    claims_asked: Arc<std::sync::atomic::AtomicUsize>,
}

struct RecordAnswer(Arc<Mutex<Vec<DirectAnswer>>>);

impl crate::source::DirectReply for RecordAnswer {
    fn answer(&self, answer: DirectAnswer) {
        self.0.lock().unwrap().push(answer);
    }
}

/// `task` as sent directly, its answers recorded in `answers`.
fn sent_directly(task: Task, answers: &Arc<Mutex<Vec<DirectAnswer>>>) -> Delivery {
    Delivery {
        task,
        attempt: 1,
        acker: Box::new(NoAck),
        headers: None,
        journaled: None,
        direct: Some(Box::new(RecordAnswer(answers.clone()))),
    }
}

#[async_trait::async_trait]
impl TaskSource for OneDirect {
    async fn next(&self) -> Option<Delivery> {
        let task = self.task.lock().unwrap().take()?;
        Some(sent_directly(task, &self.answers))
    }
    async fn claim(&self, _: &Task, _: &str) -> Claim {
        self.claims_asked.fetch_add(1, Ordering::SeqCst);
        Claim::Taken
    }
}

/// Runs `create()` sent directly to a worker whose memory is `taken`:
/// what it answered the sender, how many claims it asked for, and the
/// results it published.
async fn run_direct(worker: Worker) -> (Vec<DirectAnswer>, usize, Vec<TaskResult>) {
    let source = Arc::new(OneDirect {
        task: Mutex::new(Some(create())),
        answers: Arc::default(),
        claims_asked: Arc::default(),
    });
    let results = Arc::new(Results::default());
    let sink: Arc<dyn ResultSink> = results.clone();
    let until = tokio::time::sleep(Duration::from_millis(500));
    worker.run(source.clone(), sink, until).await;
    let answers = source.answers.lock().unwrap().clone();
    let got = results.0.lock().unwrap().clone();
    (answers, source.claims_asked.load(Ordering::SeqCst), got)
}

/// A task sent directly has its claim written for this process already:
/// it runs without asking (a claim asked for would say "taken": its own),
/// and its result names the process.
#[tokio::test]
async fn a_task_sent_directly_runs_without_asking_for_its_claim() {
    let worker = Worker::new("w", 1, Arc::new(Unreachable));
    let incarnation = worker.incarnation.clone();
    let (answers, asked, results) = run_direct(worker).await;
    assert_eq!(answers, [DirectAnswer::Accepted]);
    assert_eq!(asked, 0);
    assert_eq!(results.len(), 1, "{results:?}");
    // It ran: the provider was reached (and failed, as this one does).
    assert!(matches!(results[0].outcome, TaskOutcome::Failed(_)));
    assert_eq!(results[0].incarnation, incarnation);
}

/// Asked about a task sent to it directly before it arrived, the process
/// said it never got it: arriving after, it is refused, and nothing runs.
#[tokio::test]
async fn a_task_sent_directly_that_was_refused_before_it_arrived_does_not_run() {
    let worker = Worker::new("w", 1, Arc::new(Unreachable));
    assert_eq!(
        worker.taken.status_or_refuse(&create().id),
        DirectStatus::Refused
    );
    let (answers, asked, results) = run_direct(worker).await;
    assert_eq!(answers, [DirectAnswer::Refused]);
    assert_eq!(asked, 0);
    assert!(results.is_empty(), "{results:?}");
}

#[test]
fn a_process_answers_for_what_was_sent_to_it_directly_and_refuses_what_never_came() {
    let taken = Taken::keeping(2);
    // Taken directly: running, then finished.
    let tx = taken.take_direct("a").unwrap().unwrap();
    assert_eq!(taken.status_or_refuse("a"), DirectStatus::Taken(None));
    tx.send_replace(Some(TaskOutcome::Cancelled));
    assert_eq!(
        taken.status_or_refuse("a"),
        DirectStatus::Taken(Some(TaskOutcome::Cancelled))
    );
    // Never came: refused, then and later.
    assert_eq!(taken.status_or_refuse("b"), DirectStatus::Refused);
    assert!(matches!(taken.take_direct("b"), Err(Refused)));
    assert_eq!(taken.status_or_refuse("b"), DirectStatus::Refused);
    // Taken through the queue, not directly: the direct delivery never
    // came, so it is refused (the queue's delivery is another matter).
    let _queued = taken.claim("c").unwrap();
    assert_eq!(taken.status_or_refuse("c"), DirectStatus::Refused);
}

#[test]
fn a_process_that_forgot_tasks_it_took_directly_cannot_say_one_never_came() {
    // Ids of tasks taken directly: ten times the outcomes kept.
    let taken = Taken::keeping(1);
    for i in 0..10 {
        let _ = taken.take_direct(&format!("t{i}")).unwrap();
    }
    assert_eq!(taken.status_or_refuse("never"), DirectStatus::Refused);
    let _ = taken.take_direct("t10").unwrap();
    // "t0" is forgotten: any task may have been it.
    assert_eq!(taken.status_or_refuse("t0"), DirectStatus::Forgotten);
    assert_eq!(taken.status_or_refuse("other"), DirectStatus::Forgotten);
    // What it remembers it still answers for (its outcome is forgotten).
    assert_eq!(taken.status_or_refuse("t10"), DirectStatus::Taken(None));
}

#[test]
fn a_question_about_another_process_of_the_same_worker_is_not_answered_for_it() {
    let taken = Taken::default();
    let ask = |incarnation: &str| fleetform_shared::wire::TaskStatusRequest {
        run_id: "r".into(),
        task_id: "t".into(),
        incarnation: incarnation.into(),
    };
    assert_eq!(
        crate::status::status_of(&taken, "w", "mine", &ask("earlier")),
        fleetform_shared::wire::TaskStatus::Unknown
    );
    // ...and refuses nothing for it.
    assert!(taken.take_direct("t").is_ok());
    assert_eq!(
        crate::status::status_of(&taken, "w", "mine", &ask("mine")),
        fleetform_shared::wire::TaskStatus::Running
    );
    assert_eq!(
        crate::status::status_of(&taken, "w", "mine", &ask("")),
        fleetform_shared::wire::TaskStatus::Running
    );
}

/// Holds one task sent directly that the worker had not taken when it
/// was told to stop; the queue has nothing.
struct SentBeforeStop {
    task: Mutex<Option<Task>>,
    closed: std::sync::atomic::AtomicBool,
    answers: Arc<Mutex<Vec<DirectAnswer>>>,
}

#[async_trait::async_trait]
impl TaskSource for SentBeforeStop {
    async fn next(&self) -> Option<Delivery> {
        std::future::pending().await
    }
    async fn close_direct(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }
    async fn next_direct(&self) -> Option<Delivery> {
        assert!(self.closed.load(Ordering::SeqCst), "closed first");
        let task = self.task.lock().unwrap().take()?;
        Some(sent_directly(task, &self.answers))
    }
}

/// A worker told to stop still runs what was sent to it directly: its
/// claim names this process, so left untaken it could only be reported
/// interrupted.
#[tokio::test]
async fn a_stopping_worker_runs_what_was_sent_to_it_directly_first() {
    let worker = Worker::new("w", 1, Arc::new(Unreachable));
    let source = Arc::new(SentBeforeStop {
        task: Mutex::new(Some(create())),
        closed: Default::default(),
        answers: Arc::default(),
    });
    let results = Arc::new(Results::default());
    let sink: Arc<dyn ResultSink> = results.clone();
    worker.run(source.clone(), sink, async {}).await;
    assert_eq!(
        source.answers.lock().unwrap().clone(),
        [DirectAnswer::Accepted]
    );
    let got = results.0.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(matches!(got[0].outcome, TaskOutcome::Failed(_)));
}
