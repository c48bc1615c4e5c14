//! The handler against the in-process [`FakeProvider`]: the plan, apply and
//! read paths, and one test per provider contract it enforces.

use super::valid::ValidConfigs;
use super::{ProviderSource, handle};
use crate::plugin::fake::{FAKE_LOOKUP, FAKE_THING, Misbehaviour};
use crate::plugin::{FakeProvider, Provider};
use async_trait::async_trait;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::provider::ConfigureProviderRequest;
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::value::Value;
use fleetform_shared::wire::*;
use std::sync::Arc;

struct Fake(
    Arc<FakeProvider>,
    /// What the provider found valid, by run (as the pool remembers it).
    std::sync::Mutex<std::collections::HashMap<String, Arc<ValidConfigs>>>,
);

#[async_trait]
impl ProviderSource for Fake {
    async fn fingerprint(&self, spec: &ProviderSpec) -> Result<String, Diagnostics> {
        Ok(format!("{}@1.0.0", spec.addr))
    }

    async fn schema(&self, _: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics> {
        Ok(Arc::new(FakeProvider::schema()))
    }

    async fn configured(
        &self,
        _: &ProviderSpec,
        _: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        let req = ConfigureProviderRequest {
            terraform_version: String::new(),
            config: Value::null(),
        };
        self.0.configure_provider(&req).await.expect("configure");
        let p: Arc<dyn Provider> = self.0.clone();
        Ok((p, Arc::new(FakeProvider::schema())))
    }

    fn valid_configs(&self, _: &ProviderSpec, run_id: &str) -> Option<Arc<ValidConfigs>> {
        Some(
            self.1
                .lock()
                .unwrap()
                .entry(run_id.to_string())
                .or_default()
                .clone(),
        )
    }
}

fn fake(how: Misbehaviour) -> (Arc<FakeProvider>, Fake) {
    let p = Arc::new(FakeProvider::new());
    p.misbehave(how);
    (p.clone(), Fake(p, Default::default()))
}

const ADDR: &str = "fake_thing.a";
const PROVIDER: &str = "registry.terraform.io/fleetform/fake";

fn task(kind: TaskKind) -> Task {
    task_of("r", kind)
}

fn task_of(run_id: &str, kind: TaskKind) -> Task {
    Task {
        id: "t".into(),
        run_id: run_id.into(),
        provider: std::sync::Arc::new(ProviderSpec {
            addr: PROVIDER.parse().unwrap(),
            version_constraint: None,
            config: Value::null(),
            lock: Default::default(),
        }),
        kind,
    }
}

fn config(name: &str) -> Value {
    Value::object([("name", Value::from(name)), ("id", Value::null())])
}

fn unnamed() -> Value {
    Value::object([("name", Value::null()), ("id", Value::null())])
}

async fn plan(src: &Fake, prior: Option<Value>, cfg: Value) -> PlanOutcome {
    let kind = TaskKind::Plan(PlanTask {
        addr: ADDR.parse().unwrap(),
        type_name: FAKE_THING.into(),
        prior: prior.map(|value| PriorObject {
            value,
            private: vec![],
            schema_version: 0,
        }),
        config: cfg,
        refresh: false,
        force_replace: false,
    });
    match handle(src, &task(kind)).await {
        TaskOutcome::Plan(o) => o,
        other => panic!("not a plan outcome: {other:?}"),
    }
}

async fn apply(src: &Fake, op: ApplyOp, cfg: Value, planned: Value) -> ApplyOutcome {
    let (addr, type_name) = match op {
        ApplyOp::Read => ("data.fake_lookup.a", FAKE_LOOKUP),
        _ => (ADDR, FAKE_THING),
    };
    let kind = TaskKind::Apply(ApplyTask {
        addr: addr.parse().unwrap(),
        type_name: type_name.into(),
        op,
        prior: None,
        config: cfg,
        planned,
        planned_private: vec![],
        provisioners: vec![],
    });
    match handle(src, &task(kind)).await {
        TaskOutcome::Apply(o) => o,
        other => panic!("not an apply outcome: {other:?}"),
    }
}

async fn create(src: &Fake, name: &str) -> ApplyOutcome {
    let planned = plan(src, None, config(name)).await;
    assert!(
        !planned.diagnostics.has_errors(),
        "{:?}",
        planned.diagnostics
    );
    apply(src, ApplyOp::Create, config(name), planned.planned).await
}

async fn read(src: &Fake, cfg: Value) -> ReadOutcome {
    let kind = TaskKind::Read(ReadTask {
        addr: "data.fake_lookup.a".parse().unwrap(),
        type_name: FAKE_LOOKUP.into(),
        config: cfg,
    });
    match handle(src, &task(kind)).await {
        TaskOutcome::Read(o) => o,
        other => panic!("not a read outcome: {other:?}"),
    }
}

/// The only error, which must name the provider, the address and `attr`.
fn only_error<'d>(diags: &'d Diagnostics, addr: &str, attr: &str) -> &'d str {
    let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{diags:?}");
    let d = errors[0];
    assert!(d.detail.contains(PROVIDER), "{}", d.detail);
    assert!(d.detail.contains(addr), "{}", d.detail);
    let full = format!("{addr}{attr}");
    let bare = format!("for {attr}:");
    assert!(
        d.detail.contains(&full) || d.detail.contains(&bare),
        "{}",
        d.detail
    );
    assert_eq!(d.address.as_deref(), Some(addr));
    &d.summary
}

#[tokio::test]
async fn plan_validates_before_planning_and_apply_creates() {
    let (p, src) = fake(Misbehaviour::None);
    let planned = plan(&src, None, config("a")).await;
    assert!(
        !planned.diagnostics.has_errors(),
        "{:?}",
        planned.diagnostics
    );
    assert_eq!(planned.planned.get_attr("id"), &Value::from("fake-a"));
    assert_eq!(
        p.calls()[1..],
        ["ValidateResourceConfig", "PlanResourceChange"]
    );

    let applied = apply(&src, ApplyOp::Create, config("a"), planned.planned.clone()).await;
    assert!(
        !applied.diagnostics.has_errors(),
        "{:?}",
        applied.diagnostics
    );
    assert_eq!(applied.new_state, planned.planned);
    assert_eq!(p.objects().len(), 1);
}

#[tokio::test]
async fn invalid_configuration_stops_before_plan() {
    let (p, src) = fake(Misbehaviour::None);
    let planned = plan(&src, None, unnamed()).await;
    assert!(planned.diagnostics.has_errors());
    assert_eq!(
        planned.diagnostics.iter().next().unwrap().summary,
        "Missing required argument"
    );
    assert!(
        !p.calls().contains(&"PlanResourceChange"),
        "{:?}",
        p.calls()
    );
}

#[tokio::test]
async fn renaming_plans_a_replacement_with_a_create_plan() {
    let (_, src) = fake(Misbehaviour::None);
    let created = create(&src, "a").await.new_state;
    let planned = plan(&src, Some(created), config("b")).await;
    assert!(
        !planned.diagnostics.has_errors(),
        "{:?}",
        planned.diagnostics
    );
    assert!(planned.replace);
    assert_eq!(planned.planned.get_attr("id"), &Value::from("fake-b"));
}

#[tokio::test]
async fn a_plan_that_ignores_the_configuration_is_invalid() {
    let (p, src) = fake(Misbehaviour::PlanIgnoresConfig);
    let planned = plan(&src, None, config("a")).await;
    let summary = only_error(&planned.diagnostics, ADDR, ".name");
    assert_eq!(summary, "Provider produced invalid plan");
    assert_eq!(planned.planned, Value::unknown(), "no plan to use");

    // The final plan is checked the same way, and nothing is applied.
    let applied = apply(&src, ApplyOp::Create, config("a"), config("a")).await;
    let summary = only_error(&applied.diagnostics, ADDR, ".name");
    assert_eq!(summary, "Provider produced invalid plan");
    assert!(!p.calls().contains(&"ApplyResourceChange"));
}

#[tokio::test]
async fn a_final_plan_must_keep_the_first_plans_known_values() {
    let (p, src) = fake(Misbehaviour::FinalPlanDiffers);
    let planned = plan(&src, None, config("a")).await;
    assert!(
        !planned.diagnostics.has_errors(),
        "{:?}",
        planned.diagnostics
    );
    let applied = apply(&src, ApplyOp::Create, config("a"), planned.planned).await;
    let summary = only_error(&applied.diagnostics, ADDR, ".id");
    assert_eq!(summary, "Provider produced inconsistent final plan");
    assert_eq!(applied.new_state, Value::null());
    assert!(p.objects().is_empty(), "nothing was created");
}

#[tokio::test]
async fn unknowns_left_by_apply_become_null_with_an_error() {
    let (_, src) = fake(Misbehaviour::ApplyLeavesUnknown);
    let applied = create(&src, "a").await;
    let summary = only_error(&applied.diagnostics, ADDR, ".id");
    assert_eq!(
        summary,
        "Provider returned invalid result object after apply"
    );
    assert_eq!(applied.new_state, config("a"), "known values kept, id null");
}

#[tokio::test]
async fn an_object_returned_with_an_error_is_passed_on() {
    let (p, src) = fake(Misbehaviour::ApplyErrorWithObject);
    let applied = create(&src, "a").await;
    assert!(applied.diagnostics.has_errors());
    assert_eq!(applied.new_state.get_attr("id"), &Value::from("fake-a"));
    assert_eq!(
        p.objects().len(),
        1,
        "the object exists and must be recorded"
    );
}

#[tokio::test]
async fn data_source_reads_validate_then_read() {
    let (p, src) = fake(Misbehaviour::None);
    let created = create(&src, "a").await.new_state;
    let lookup = Value::object([("name", Value::from("a")), ("id", Value::null())]);
    let out = read(&src, lookup.clone()).await;
    assert!(!out.diagnostics.has_errors(), "{:?}", out.diagnostics);
    assert_eq!(out.state, created);
    let calls = p.calls();
    assert_eq!(
        calls[calls.len() - 2..],
        ["ValidateDataResourceConfig", "ReadDataSource"]
    );

    // A read deferred to apply answers with the same object.
    let applied = apply(&src, ApplyOp::Read, lookup, Value::unknown()).await;
    assert!(
        !applied.diagnostics.has_errors(),
        "{:?}",
        applied.diagnostics
    );
    assert_eq!(applied.new_state, created);

    let missing = read(&src, config("nope")).await;
    assert_eq!(
        missing.diagnostics.iter().next().unwrap().summary,
        "object not found"
    );
    assert_eq!(missing.state, Value::null());

    let before = p.calls().len();
    let invalid = read(&src, unnamed()).await;
    assert!(invalid.diagnostics.has_errors());
    assert_eq!(
        p.calls()[before..],
        ["ConfigureProvider", "ValidateDataResourceConfig"]
    );
}

#[tokio::test]
async fn a_data_source_must_echo_its_configuration() {
    let (p, src) = fake(Misbehaviour::None);
    create(&src, "a").await;
    p.misbehave(Misbehaviour::ReadChangesConfig);
    let out = read(&src, config("a")).await;
    let summary = only_error(&out.diagnostics, "data.fake_lookup.a", ".name");
    assert_eq!(summary, "Provider produced invalid object");
    assert_eq!(out.state, Value::null());
}

#[tokio::test]
async fn a_data_source_result_must_be_wholly_known() {
    let (p, src) = fake(Misbehaviour::None);
    create(&src, "a").await;
    p.misbehave(Misbehaviour::ReadLeavesUnknown);
    let out = read(&src, config("a")).await;
    let summary = only_error(&out.diagnostics, "data.fake_lookup.a", ".id");
    assert_eq!(summary, "Provider produced invalid object");
    assert_eq!(out.state, Value::null());
}

#[tokio::test]
async fn a_schema_the_coordinator_holds_is_not_sent_again() {
    let (_, source) = fake(Misbehaviour::None);
    let spec = ProviderSpec {
        addr: fleetform_shared::ProviderAddr::new("fleetform", "fake"),
        version_constraint: None,
        config: Value::null(),
        lock: Default::default(),
    };
    let task = |cached: Vec<String>| Task {
        id: "t".into(),
        run_id: "r".into(),
        provider: spec.clone().into(),
        kind: TaskKind::Schema { cached },
    };
    match handle(&source, &task(vec![])).await {
        TaskOutcome::Schema {
            fingerprint,
            schema,
        } => {
            assert_eq!(fingerprint, "registry.terraform.io/fleetform/fake@1.0.0");
            assert!(schema.is_some(), "first time the schema is sent");
        }
        other => panic!("{other:?}"),
    }
    match handle(
        &source,
        &task(vec!["registry.terraform.io/fleetform/fake@1.0.0".into()]),
    )
    .await
    {
        TaskOutcome::Schema { schema, .. } => {
            assert!(schema.is_none(), "cached schemas are not sent again")
        }
        other => panic!("{other:?}"),
    }
    match handle(
        &source,
        &task(vec!["registry.terraform.io/fleetform/fake@0.9.0".into()]),
    )
    .await
    {
        TaskOutcome::Schema { schema, .. } => {
            assert!(schema.is_some(), "another version's schema does not count")
        }
        other => panic!("{other:?}"),
    }
}

/// A source whose provider cannot start: whatever reaches it fails.
struct NoProvider;

#[async_trait]
impl ProviderSource for NoProvider {
    async fn fingerprint(&self, _: &ProviderSpec) -> Result<String, Diagnostics> {
        Ok("none".into())
    }
    async fn schema(&self, _: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics> {
        Ok(Arc::new(FakeProvider::schema()))
    }
    async fn configured(
        &self,
        _: &ProviderSpec,
        _: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        Err(fleetform_shared::diag::Diagnostic::error("provider reached", "").into())
    }
}

fn delete_with(command: &str) -> Task {
    task(TaskKind::Apply(ApplyTask {
        addr: ADDR.parse().unwrap(),
        type_name: FAKE_THING.into(),
        op: ApplyOp::Delete,
        prior: Some(PriorObject {
            value: config("x"),
            private: vec![],
            schema_version: 0,
        }),
        config: Value::null(),
        planned: Value::null(),
        planned_private: vec![],
        provisioners: vec![ProvisionerSpec {
            kind: "local-exec".into(),
            command: command.into(),
            interpreter: vec![],
            working_dir: None,
            environment: Default::default(),
            quiet: true,
            on_failure: OnFailure::Fail,
            suppress_output: false,
            ephemeral_config: false,
            range: None,
            context: None,
        }],
    }))
}

#[tokio::test]
async fn a_failing_destroy_time_provisioner_stops_the_delete() {
    let TaskOutcome::Apply(o) = handle(&NoProvider, &delete_with("echo bye; exit 1")).await else {
        panic!("an apply outcome");
    };
    let summaries: Vec<&str> = o.diagnostics.iter().map(|d| d.summary.as_str()).collect();
    assert_eq!(
        summaries,
        ["local-exec provisioner error"],
        "the provider was not reached"
    );
    assert_eq!(o.provisioned.len(), 1);
    assert!(o.provisioned[0].errored);
    assert_eq!(o.provisioned[0].output[1], "bye");
    // A provisioner that succeeds lets the delete go on (here: to a provider
    // that cannot start), and its output is kept.
    let TaskOutcome::Apply(o) = handle(&NoProvider, &delete_with("echo bye")).await else {
        panic!("an apply outcome");
    };
    let summaries: Vec<&str> = o.diagnostics.iter().map(|d| d.summary.as_str()).collect();
    assert_eq!(summaries, ["provider reached"]);
    assert!(!o.provisioned[0].errored);
    let (_, src) = fake(Misbehaviour::None);
    let TaskOutcome::Apply(o) = handle(&src, &delete_with("true")).await else {
        panic!("an apply outcome");
    };
    assert!(o.diagnostics.is_empty(), "{}", o.diagnostics);
    assert_eq!(o.new_state, Value::null());
}

#[tokio::test]
async fn a_provision_task_runs_its_provisioners_without_a_provider() {
    let TaskKind::Apply(a) = delete_with("echo made").kind else {
        unreachable!()
    };
    let t = task(TaskKind::Provision(ProvisionTask {
        addr: a.addr,
        provisioners: a.provisioners,
    }));
    let TaskOutcome::Provision(o) = handle(&NoProvider, &t).await else {
        panic!("a provision outcome");
    };
    assert!(o.diagnostics.is_empty());
    assert_eq!(
        o.steps[0].output,
        ["local-exec: Executing: Suppressed by quiet=true", "made"]
    );
}

/// An interrupted create is looked up by the final configuration's values:
/// a name the plan left unknown (made from another object's id) is known
/// by apply time.
#[tokio::test]
async fn a_lookup_finds_an_interrupted_create_by_its_final_configuration() {
    use super::lookup::{LookupRule, Resolved, resolve};
    let (_, src) = fake(Misbehaviour::None);
    let made = create(&src, "made-after-x").await;
    let rule: LookupRule = "fake_thing=fake_lookup(name)".parse().unwrap();
    let interrupted = |name: &str| ApplyTask {
        addr: ADDR.parse().unwrap(),
        type_name: FAKE_THING.into(),
        op: ApplyOp::Create,
        prior: None,
        config: config(name),
        planned: Value::object([("name", Value::unknown()), ("id", Value::unknown())]),
        planned_private: vec![],
        provisioners: vec![],
    };
    let spec = task(TaskKind::Schema { cached: vec![] }).provider;
    match resolve(&src, &spec, "r", &interrupted("made-after-x"), &rule).await {
        Resolved::Found(o) => assert_eq!(o.new_state, made.new_state),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        resolve(&src, &spec, "r", &interrupted("never-made"), &rule).await,
        Resolved::Absent
    ));
}

fn validations(p: &FakeProvider) -> usize {
    p.calls()
        .iter()
        .filter(|c| **c == "ValidateResourceConfig")
        .count()
}

/// The final plan of an instance whose configuration has not changed since
/// its plan does not validate it again in the same run; a configuration
/// that changed (a value unknown at planning), one of another run, and one
/// that drew a warning are validated again, and the warning is told again.
#[tokio::test]
async fn a_configuration_found_valid_is_not_validated_again_in_the_run() {
    let (p, src) = fake(Misbehaviour::None);
    let created = create(&src, "same").await;
    assert!(
        !created.diagnostics.has_errors(),
        "{:?}",
        created.diagnostics
    );
    assert_eq!(validations(&p), 1, "{:?}", p.calls());
    assert_eq!(
        p.calls()
            .iter()
            .filter(|c| **c == "PlanResourceChange")
            .count(),
        2,
        "the final plan is still made"
    );

    let unknown = Value::object([("name", Value::unknown()), ("id", Value::null())]);
    let planned = plan(&src, None, unknown).await;
    let applied = apply(&src, ApplyOp::Create, config("known-now"), planned.planned).await;
    assert!(
        !applied.diagnostics.has_errors(),
        "{:?}",
        applied.diagnostics
    );
    assert_eq!(validations(&p), 3, "a changed configuration is validated");

    let kind = TaskKind::Plan(PlanTask {
        addr: ADDR.parse().unwrap(),
        type_name: FAKE_THING.into(),
        prior: None,
        config: config("same"),
        refresh: false,
        force_replace: false,
    });
    handle(&src, &task_of("another run", kind)).await;
    assert_eq!(validations(&p), 4, "another run validates for itself");

    let warned = create(&src, "deprecated-name").await;
    assert_eq!(validations(&p), 6, "a warning is asked for again");
    assert!(
        warned
            .diagnostics
            .iter()
            .any(|d| d.summary == "Deprecated name"),
        "{:?}",
        warned.diagnostics
    );
}

/// An invalid configuration is refused at every plan, never remembered.
#[tokio::test]
async fn an_invalid_configuration_is_validated_every_time() {
    let (p, src) = fake(Misbehaviour::None);
    for _ in 0..2 {
        let planned = plan(&src, None, unnamed()).await;
        assert!(planned.diagnostics.has_errors());
    }
    assert_eq!(validations(&p), 2);
    assert!(!p.calls().contains(&"PlanResourceChange"));
}
