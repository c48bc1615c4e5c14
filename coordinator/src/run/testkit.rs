//! An in-process harness for run tests: a coordinator on a memory store and
//! an in-process queue, answered by a fake worker whose provider
//! (`hashicorp/test`, resource `test_thing`) plans and applies by rule, so
//! the walks are tested without processes, plugins or the CLI.
//!
//! The fake provider: `test_thing` has `name` (optional string), `tags`
//! (optional map of strings) and `id` (computed). Planning keeps the
//! configuration, with `id` unknown for a new object and kept otherwise;
//! a changed `name` requires replacement. Applying returns the final
//! configuration with the planned `id`, or for a new object
//! `id-<address>`. Importing id `X` finds `{id = X, name = "imported-X"}`.

use crate::dispatch::{Dispatcher, LocalQueue, ResultRouter};
use crate::run::{Coordinator, RunHandle};
use crate::store::{Journal, SchemaCache, open, open_db};
use fleetform_shared::provider::AttrPath;
use fleetform_shared::schema::{Attribute, Block, ProviderSchema, Schema};
use fleetform_shared::state::State;
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};
use fleetform_shared::wire::{
    ApplyOp, ApplyOutcome, ImportOutcome, Operation, PlanOptions, PlanOutcome, PriorObject,
    RunEvent, RunRequest, RunStatus, Task, TaskKind, TaskOutcome, TaskResult,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub(crate) struct Harness {
    pub coordinator: Coordinator,
    _dir: tempfile::TempDir,
}

/// How a run ended, with what it said.
pub(crate) struct Outcome {
    pub status: RunStatus,
    pub events: Vec<RunEvent>,
}

impl Outcome {
    pub fn plan(&self) -> &fleetform_shared::plan::Plan {
        self.events
            .iter()
            .find_map(|e| match e {
                RunEvent::Planned(p) => Some(p.as_ref()),
                _ => None,
            })
            .expect("the run planned")
    }

    /// Every diagnostic the run reported, as `summary: detail` lines.
    pub fn diagnostics(&self) -> String {
        let mut out = String::new();
        for e in &self.events {
            let d = match e {
                RunEvent::Diagnostics(d) => d,
                RunEvent::ApplyErrored { diagnostics, .. } => diagnostics,
                _ => continue,
            };
            for d in d.iter() {
                out.push_str(&format!("{}: {}\n", d.summary, d.detail));
            }
        }
        out
    }
}

impl Harness {
    pub async fn new() -> Harness {
        Harness::with_worker(|mut ends| async move {
            while let Some((task, _)) = ends.tasks.recv().await {
                let _ = ends.results.send(answer(task));
            }
        })
        .await
    }

    /// A harness whose worker answers plan tasks at once but holds apply
    /// tasks until none has come for 50 ms (a queue whose workers are all
    /// busy); returns the most apply tasks it held unanswered at once.
    pub async fn holding_applies() -> (Harness, Arc<std::sync::atomic::AtomicUsize>) {
        Harness::holding(|t| matches!(t.kind, TaskKind::Apply(_)), false).await
    }

    /// A harness whose provider asks to plan its destroys
    /// (`plan_destroy`) and whose worker holds those plans (a null
    /// proposal) as [`Harness::holding_applies`] holds applies.
    pub async fn holding_plan_destroys() -> (Harness, Arc<std::sync::atomic::AtomicUsize>) {
        Harness::holding(
            |t| matches!(&t.kind, TaskKind::Plan(p) if p.config.is_null() && p.prior.is_some()),
            true,
        )
        .await
    }

    /// A harness whose worker holds the plans of configured instances (not
    /// of destroys) as [`Harness::holding_applies`] holds applies.
    pub async fn holding_plans() -> (Harness, Arc<std::sync::atomic::AtomicUsize>) {
        Harness::holding(
            |t| matches!(&t.kind, TaskKind::Plan(p) if !p.config.is_null()),
            false,
        )
        .await
    }

    /// A harness whose worker counts the provider function calls it is
    /// asked to make.
    pub async fn counting_functions() -> (Harness, Arc<std::sync::atomic::AtomicUsize>) {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = calls.clone();
        let harness = Harness::with_worker(|mut ends| async move {
            while let Some((task, _)) = ends.tasks.recv().await {
                if matches!(task.kind, TaskKind::Function(_)) {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                let _ = ends.results.send(answer(task));
            }
        })
        .await;
        (harness, calls)
    }

    /// A harness whose queue to the worker closes when the worker takes
    /// the first plan task: what was sent before is still answered, and
    /// every later dispatch fails.
    pub async fn closing_at_first_plan() -> Harness {
        Harness::with_worker(|mut ends| async move {
            while let Some((task, _)) = ends.tasks.recv().await {
                if matches!(task.kind, TaskKind::Plan(_)) {
                    ends.tasks.close();
                }
                let _ = ends.results.send(answer(task));
            }
        })
        .await
    }

    /// Its worker holds the tasks `held` picks until none has come for
    /// 50 ms, then answers them; `most` is the most it held at once.
    async fn holding(
        held_kind: fn(&Task) -> bool,
        plan_destroy: bool,
    ) -> (Harness, Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let most = Arc::new(AtomicUsize::new(0));
        let seen = most.clone();
        let h = Harness::with_worker(move |mut ends| async move {
            let mut held = Vec::new();
            let reply = |task: Task| {
                let mut result = answer(task);
                if let TaskOutcome::Schema {
                    schema: Some(s), ..
                } = &mut result.outcome
                {
                    s.capabilities.plan_destroy = plan_destroy;
                }
                result
            };
            loop {
                match tokio::time::timeout(Duration::from_millis(50), ends.tasks.recv()).await {
                    Ok(None) => break,
                    Ok(Some((task, _))) if held_kind(&task) => {
                        held.push(task);
                        seen.fetch_max(held.len(), Ordering::Relaxed);
                    }
                    Ok(Some((task, _))) => {
                        let _ = ends.results.send(reply(task));
                    }
                    Err(_) => {
                        for task in held.drain(..) {
                            let _ = ends.results.send(reply(task));
                        }
                    }
                }
            }
        })
        .await;
        (h, most)
    }

    /// A harness whose provider asks to plan its destroys and whose queue
    /// takes 2 ms to acknowledge each publish (a queue a few milliseconds
    /// away); returns how many publishes carried plans of destroys.
    pub async fn counting_plan_destroy_publishes() -> (Harness, Arc<std::sync::atomic::AtomicUsize>)
    {
        let store = Arc::new(open("memory://").expect("memory store"));
        let dir = tempfile::tempdir().expect("temp dir");
        let db = open_db(&dir.path().join("coordinator.redb")).expect("redb");
        let router = ResultRouter::new();
        let (queue, mut ends) = LocalQueue::new(router.clone());
        tokio::spawn(async move {
            while let Some((task, _)) = ends.tasks.recv().await {
                let mut result = answer(task);
                if let TaskOutcome::Schema {
                    schema: Some(s), ..
                } = &mut result.outcome
                {
                    s.capabilities.plan_destroy = true;
                }
                let _ = ends.results.send(result);
            }
        });
        let publishes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let queue = SlowPublishes {
            inner: queue,
            publishes: publishes.clone(),
        };
        let coordinator = Coordinator::new(
            store,
            Journal::new(db.clone()),
            SchemaCache::new(db),
            Dispatcher::new(Arc::new(queue), router),
        );
        let h = Harness {
            coordinator,
            _dir: dir,
        };
        (h, publishes)
    }

    /// A harness whose states live in `store`.
    pub async fn on_store(store: Arc<dyn crate::store::StateStore>) -> Harness {
        Harness::with_worker_on(store, |mut ends| async move {
            while let Some((task, _)) = ends.tasks.recv().await {
                let _ = ends.results.send(answer(task));
            }
        })
        .await
    }

    /// Runs go unwatched for `grace` before a run that changed nothing
    /// is cancelled (see `unwatched`); call before any run starts.
    pub fn unwatched_after(mut self, grace: Duration) -> Harness {
        self.coordinator = self.coordinator.with_unwatched_grace(grace);
        self
    }

    pub(crate) async fn with_worker<F, W>(worker: W) -> Harness
    where
        W: FnOnce(crate::dispatch::WorkerEnds) -> F,
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let store = Arc::new(open("memory://").expect("memory store"));
        Harness::with_worker_on(store, worker).await
    }

    async fn with_worker_on<F, W>(store: Arc<dyn crate::store::StateStore>, worker: W) -> Harness
    where
        W: FnOnce(crate::dispatch::WorkerEnds) -> F,
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = open_db(&dir.path().join("coordinator.redb")).expect("redb");
        let router = ResultRouter::new();
        let (queue, ends) = LocalQueue::new(router.clone());
        tokio::spawn(worker(ends));
        let coordinator = Coordinator::new(
            store,
            Journal::new(db.clone()),
            SchemaCache::new(db),
            Dispatcher::new(Arc::new(queue), router),
        );
        Harness {
            coordinator,
            _dir: dir,
        }
    }

    /// Runs `operation` on the configuration `files` (auto-approved) and
    /// waits for the run to finish.
    pub async fn run(&self, files: &[(&str, &str)], operation: Operation) -> Outcome {
        finished(&self.submit(files, operation)).await
    }

    /// Starts `operation` on the configuration `files` (auto-approved).
    /// The run makes no progress before the caller awaits (the test
    /// runtime has one thread).
    pub fn submit(&self, files: &[(&str, &str)], operation: Operation) -> Arc<RunHandle> {
        self.submit_with(files, operation, true)
    }

    /// [`Harness::submit`], auto-approved or not: a run that is not waits
    /// for an approval after its plan.
    pub fn submit_with(
        &self,
        files: &[(&str, &str)],
        operation: Operation,
        auto_approve: bool,
    ) -> Arc<RunHandle> {
        let request = request(files, operation, auto_approve);
        self.coordinator.submit("default", request)
    }

    /// The durable writes of the apply journal so far.
    pub fn journal_commits(&self) -> u64 {
        self.coordinator.journal().commits()
    }

    pub async fn state(&self) -> State {
        self.coordinator
            .store()
            .load("default")
            .await
            .expect("load state")
            .unwrap_or_else(|| State::new("none"))
    }
}

/// The request [`Harness::submit_with`] sends: no variables, no saved plan.
pub(crate) fn request(
    files: &[(&str, &str)],
    operation: Operation,
    auto_approve: bool,
) -> RunRequest {
    RunRequest {
        operation,
        files: files
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        variables: Vec::new(),
        auto_approve,
        saved_plan: None,
        plan_only: operation == Operation::Plan,
        options: PlanOptions::default(),
        auto_var_files: Vec::new(),
        env_variables: Vec::new(),
        data_files: BTreeMap::new(),
        cwd: String::new(),
        source: String::new(),
    }
}

pub(crate) async fn finished(handle: &RunHandle) -> Outcome {
    let mut rx = handle.events.subscribe();
    let wait = async {
        while !handle.events.is_finished() {
            if rx.changed().await.is_err() {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .expect("the run finishes within 30 s");
    let events = handle.events.since(0);
    let status = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Finished { status, .. } => Some(*status),
            _ => None,
        })
        .expect("a finished event");
    Outcome { status, events }
}

fn schema() -> ProviderSchema {
    let mut block = Block::default();
    block
        .attributes
        .insert("name".into(), Attribute::new(Type::String).optional());
    block.attributes.insert(
        "tags".into(),
        Attribute::new(Type::map(Type::String)).optional(),
    );
    block
        .attributes
        .insert("id".into(), Attribute::new(Type::String).computed());
    ProviderSchema {
        provider: Schema::default(),
        resources: BTreeMap::from([("test_thing".to_string(), Schema { version: 0, block })]),
        data_sources: BTreeMap::new(),
        ephemeral_resources: BTreeMap::new(),
        capabilities: Default::default(),
        functions: BTreeMap::from([("echo".to_string(), echo_signature())]),
    }
}

/// `provider::test::echo(s)`: `echo:<s>`.
fn echo_signature() -> fleetform_shared::function::FunctionSignature {
    fleetform_shared::function::FunctionSignature {
        parameters: vec![fleetform_shared::function::FunctionParameter::new(
            "s",
            Type::String,
        )],
        variadic: None,
        return_type: Type::String,
        summary: String::new(),
        description: String::new(),
        deprecation: String::new(),
    }
}

pub(crate) fn answer(task: Task) -> TaskResult {
    let outcome = match &task.kind {
        TaskKind::Function(f) => TaskOutcome::Function(match (f.name.as_str(), &f.arguments[..]) {
            ("echo", [Value::String(s)]) => Ok(Value::string(format!("echo:{s}"))),
            _ => Err(fleetform_shared::function::FunctionError::call(format!(
                "the test provider has no function {:?}",
                f.name
            ))),
        }),
        // The test provider has no ephemeral resource types.
        TaskKind::Open(_) | TaskKind::Renew(_) | TaskKind::Close(_) => TaskOutcome::Failed(
            fleetform_shared::diag::Diagnostic::error("no ephemeral resources", "").into(),
        ),
        TaskKind::Schema { .. } => TaskOutcome::Schema {
            fingerprint: format!("{}@0.0.1", task.provider.addr),
            schema: Some(Box::new(schema())),
        },
        TaskKind::Plan(p) => {
            let prior_id = p
                .prior
                .as_ref()
                .map(|o| o.value.get_attr("id").clone())
                .unwrap_or(Value::null());
            let name_changed = p
                .prior
                .as_ref()
                .is_some_and(|o| o.value.get_attr("name") != p.config.get_attr("name"));
            let planned = match &p.config {
                Value::Null(_) => Value::null(),
                Value::Map(m) => {
                    let mut m = m.clone();
                    let id = if prior_id.is_null() || name_changed || p.force_replace {
                        Value::unknown()
                    } else {
                        prior_id
                    };
                    m.insert("id", id);
                    Value::Map(m)
                }
                other => other.clone(),
            };
            TaskOutcome::Plan(PlanOutcome {
                prior: p.prior.clone(),
                upgraded: None,
                planned,
                planned_private: vec![],
                requires_replace: if name_changed {
                    vec![vec![PathStep::Key("name".into())] as AttrPath]
                } else {
                    vec![]
                },
                replace: false,
                diagnostics: Default::default(),
            })
        }
        TaskKind::Apply(a) => {
            let new_state = match a.op {
                ApplyOp::Delete => Value::null(),
                // The final configuration is known; the id is the planned
                // one when it was known (an update), else a new one.
                _ => match &a.config {
                    Value::Map(m) => {
                        let mut m = m.clone();
                        let id = match a.planned.get_attr("id") {
                            Value::String(s) => Value::from(s.as_str()),
                            _ => Value::from(format!("id-{}", a.addr)),
                        };
                        m.insert("id", id);
                        Value::Map(m)
                    }
                    other => other.clone(),
                },
            };
            TaskOutcome::Apply(ApplyOutcome {
                new_state,
                private: vec![],
                diagnostics: Default::default(),
                provisioned: Default::default(),
            })
        }
        // An imported object is found by its id, named after it.
        TaskKind::Import(i) => TaskOutcome::Import(ImportOutcome {
            object: Some(PriorObject {
                value: Value::object([
                    ("id", Value::from(i.id.as_str())),
                    ("name", Value::from(format!("imported-{}", i.id))),
                    ("tags", Value::null()),
                ]),
                private: vec![],
                schema_version: 0,
            }),
            diagnostics: Default::default(),
        }),
        TaskKind::Read(_) | TaskKind::Provision(_) => TaskOutcome::Failed(
            fleetform_shared::diag::Diagnostic::error("not in the fake provider", "").into(),
        ),
    };
    TaskResult {
        task_id: task.id,
        run_id: task.run_id,
        worker: "fake".into(),
        outcome,
        incarnation: String::new(),
    }
}

/// A queue whose publishes are each acknowledged 2 ms later, counting those
/// that carry plans of destroys (a null proposal for an object).
struct SlowPublishes {
    inner: LocalQueue,
    publishes: Arc<std::sync::atomic::AtomicUsize>,
}

#[async_trait::async_trait]
impl crate::dispatch::TaskQueue for SlowPublishes {
    async fn publish(&self, tasks: &[Task]) -> Result<(), crate::dispatch::DispatchError> {
        if tasks.iter().any(
            |t| matches!(&t.kind, TaskKind::Plan(p) if p.config.is_null() && p.prior.is_some()),
        ) {
            self.publishes
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.inner.publish(tasks).await?;
        tokio::time::sleep(Duration::from_millis(2)).await;
        Ok(())
    }

    fn outlives_process(&self) -> bool {
        self.inner.outlives_process()
    }

    async fn control(
        &self,
        message: &fleetform_shared::wire::RunControl,
    ) -> Result<(), crate::dispatch::DispatchError> {
        self.inner.control(message).await
    }
}
