//! The throttled provider over a scripted one: what is retried, what is
//! not, what the run is told.

use super::*;
use crate::handler::NeverStopped;
use fleetform_shared::value::Value;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Answers ApplyResourceChange from a script (new state, errors), then
/// with a success; every other resource call fails.
#[derive(Default)]
struct Scripted {
    answers: Mutex<VecDeque<(Value, Diagnostics)>>,
    applies: AtomicUsize,
}

impl Scripted {
    fn new(answers: Vec<(Value, Diagnostics)>) -> Arc<Scripted> {
        Arc::new(Scripted {
            answers: Mutex::new(answers.into()),
            applies: AtomicUsize::new(0),
        })
    }
}

fn unused<T>(method: &'static str) -> Result<T, ProviderError> {
    Err(ProviderError::Protocol {
        method,
        message: "not scripted".into(),
    })
}

#[async_trait]
impl Provider for Scripted {
    async fn get_provider_schema(&self) -> Result<GetProviderSchemaResponse, ProviderError> {
        unused("GetProviderSchema")
    }
    async fn validate_provider_config(
        &self,
        _: &ValidateProviderConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        unused("ValidateProviderConfig")
    }
    async fn validate_resource_config(
        &self,
        _: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        unused("ValidateResourceConfig")
    }
    async fn validate_data_resource_config(
        &self,
        _: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        unused("ValidateDataResourceConfig")
    }
    async fn configure_provider(
        &self,
        _: &ConfigureProviderRequest,
    ) -> Result<Diagnostics, ProviderError> {
        unused("ConfigureProvider")
    }
    async fn upgrade_resource_state(
        &self,
        _: &UpgradeResourceStateRequest,
    ) -> Result<UpgradeResourceStateResponse, ProviderError> {
        unused("UpgradeResourceState")
    }
    async fn read_resource(
        &self,
        _: &ReadResourceRequest,
    ) -> Result<ReadResourceResponse, ProviderError> {
        unused("ReadResource")
    }
    async fn plan_resource_change(
        &self,
        _: &PlanResourceChangeRequest,
    ) -> Result<PlanResourceChangeResponse, ProviderError> {
        unused("PlanResourceChange")
    }
    async fn apply_resource_change(
        &self,
        req: &ApplyResourceChangeRequest,
    ) -> Result<ApplyResourceChangeResponse, ProviderError> {
        self.applies.fetch_add(1, Ordering::SeqCst);
        let next = self.answers.lock().unwrap().pop_front();
        let (new_state, diagnostics) =
            next.unwrap_or_else(|| (req.planned_state.clone(), Diagnostics::new()));
        Ok(ApplyResourceChangeResponse {
            new_state,
            private: vec![],
            diagnostics,
            legacy_type_system: false,
        })
    }
    async fn read_data_source(
        &self,
        _: &ReadDataSourceRequest,
    ) -> Result<ReadDataSourceResponse, ProviderError> {
        unused("ReadDataSource")
    }
    async fn stop(&self) -> Result<(), ProviderError> {
        Ok(())
    }
}

/// Hands out the one scripted provider.
struct One(Arc<Scripted>);

#[async_trait]
impl ProviderSource for One {
    async fn fingerprint(&self, _: &ProviderSpec) -> Result<String, Diagnostics> {
        Ok("scripted".into())
    }
    async fn schema(&self, _: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics> {
        Ok(Arc::default())
    }
    async fn configured(
        &self,
        _: &ProviderSpec,
        _: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        Ok((self.0.clone(), Arc::default()))
    }
}

#[derive(Default)]
struct Notices(Mutex<Vec<ProgressEvent>>);

impl Progress for Notices {
    fn report(&self, _: u32, event: ProgressEvent) {
        self.0.lock().unwrap().push(event);
    }
}

/// A run that is cancelled already.
struct Cancelled;

#[async_trait]
impl StopSignal for Cancelled {
    async fn stopped(&self) {}
}

fn spec() -> ProviderSpec {
    ProviderSpec {
        addr: "fleetform/sim".parse().unwrap(),
        version_constraint: None,
        config: Value::null(),
        lock: Default::default(),
    }
}

fn throttles(limit: usize) -> Arc<Throttles> {
    let mut t = Throttles::new(super::super::ProviderLimits::default(), limit);
    t.backoff = super::super::Backoff {
        base: Duration::from_millis(1),
        cap: Duration::from_millis(4),
        attempts: 8,
    };
    Arc::new(t)
}

fn create() -> ApplyResourceChangeRequest {
    ApplyResourceChangeRequest {
        type_name: "sim_object".into(),
        prior_state: Value::null(),
        planned_state: Value::object([("name", Value::from("a"))]),
        config: Value::null(),
        planned_private: vec![],
    }
}

fn throttling() -> Diagnostics {
    Diagnostic::error("ThrottlingException: Rate exceeded", "").into()
}

/// Applies `create()` through a throttled provider answering `script`.
async fn apply(
    script: Vec<(Value, Diagnostics)>,
    throttles: &Arc<Throttles>,
    stop: Arc<dyn StopSignal>,
) -> (ApplyResourceChangeResponse, usize, Vec<ProgressEvent>) {
    let scripted = Scripted::new(script);
    let notices = Arc::new(Notices::default());
    let inner = One(scripted.clone());
    let source = ThrottledSource {
        inner: &inner,
        throttles: throttles.clone(),
        context: Arc::new(CallContext {
            worker: "w1".into(),
            progress: notices.clone(),
            stop,
        }),
    };
    let (provider, _) = source.configured(&spec(), "run").await.unwrap();
    let resp = provider.apply_resource_change(&create()).await.unwrap();
    let applies = scripted.applies.load(Ordering::SeqCst);
    let shown = notices.0.lock().unwrap().clone();
    (resp, applies, shown)
}

#[tokio::test]
async fn a_throttled_create_that_did_nothing_is_retried_and_the_run_told_once() {
    let t = throttles(32);
    let script = vec![(Value::null(), throttling()), (Value::null(), throttling())];
    let (resp, applies, shown) = apply(script, &t, Arc::new(NeverStopped)).await;
    assert!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
    assert_eq!(applies, 3);
    let [ProgressEvent::Throttled(n)] = &shown[..] else {
        panic!("one notice, not one per refusal: {shown:?}");
    };
    assert_eq!((n.limit_before, n.limit, n.limit_max), (32, 1, 32));
    assert_eq!(n.message, "ThrottlingException: Rate exceeded");
    assert!(n.retry_in_ms <= 1);
    let warning = n.diagnostic();
    assert_eq!(
        warning.summary,
        format!(
            "Provider registry.terraform.io/fleetform/sim throttled: concurrency 32 → 1, retrying in {:.1}s",
            n.retry_in_ms as f64 / 1000.0
        )
    );
    assert_eq!(
        t.gate(&spec().addr).limit(),
        2,
        "halved to 1 (one call in flight), then the success, a window of 1, added one"
    );
}

#[tokio::test]
async fn other_errors_and_creates_that_made_an_object_are_not_retried() {
    let t = throttles(8);
    let denied: Diagnostics = Diagnostic::error("AccessDenied", "not authorized").into();
    let (resp, applies, shown) = apply(
        vec![(Value::null(), denied.clone())],
        &t,
        Arc::new(NeverStopped),
    )
    .await;
    assert_eq!((resp.diagnostics, applies), (denied, 1));
    assert!(shown.is_empty());
    assert_eq!(t.gate(&spec().addr).limit(), 8, "not a throttling error");
    // Throttled after the object was made: repeating would make another.
    let made = Value::object([("id", Value::from("i-1"))]);
    let (resp, applies, _) = apply(
        vec![(made.clone(), throttling())],
        &t,
        Arc::new(NeverStopped),
    )
    .await;
    assert_eq!((resp.new_state, applies), (made, 1));
    assert!(resp.diagnostics.has_errors());
}

/// A refusal that says when to try again, as a rate-limited account's.
fn rate_limited() -> Diagnostics {
    Diagnostic::error(
        "ThrottlingException: Rate exceeded",
        "the account allows 100 reads per second; retry after 0.002s",
    )
    .into()
}

#[tokio::test]
async fn a_provider_that_says_when_to_retry_is_asked_again_past_the_attempts() {
    let t = throttles(4);
    let mut script = vec![(Value::null(), rate_limited()); 12];
    let made = Value::object([("id", Value::from("i-1"))]);
    script.push((made.clone(), Diagnostics::new()));
    let (resp, applies, _) = apply(script, &t, Arc::new(NeverStopped)).await;
    assert_eq!(
        applies, 13,
        "12 refusals past the 8 attempts, then the answer"
    );
    assert!(!resp.diagnostics.has_errors(), "{:?}", resp.diagnostics);
    assert_eq!(resp.new_state, made);
}

#[tokio::test]
async fn a_refusal_that_says_when_to_retry_holds_the_workers_other_calls_until_then() {
    let t = throttles(4);
    let refused: Diagnostics = Diagnostic::error(
        "ThrottlingException: Rate exceeded",
        "the account allows 100 reads per second; retry after 0.4s",
    )
    .into();
    let first = {
        let t = t.clone();
        tokio::spawn(async move {
            apply(vec![(Value::null(), refused)], &t, Arc::new(NeverStopped)).await
        })
    };
    // The first call has been refused by now; another call of this worker
    // to the same provider waits for the retry-after, though slots are free.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let asked = std::time::Instant::now();
    let slot = t.gate(&spec().addr).acquire().await;
    assert!(
        asked.elapsed() >= Duration::from_millis(250),
        "{:?}",
        asked.elapsed()
    );
    drop(slot);
    let (resp, applies, _) = first.await.unwrap();
    assert_eq!(applies, 2);
    assert!(!resp.diagnostics.has_errors());
}

#[tokio::test]
async fn a_provider_that_keeps_throttling_fails_after_the_last_attempt_or_at_cancellation() {
    let t = throttles(4);
    let always = vec![(Value::null(), throttling()); 20];
    let (resp, applies, _) = apply(always.clone(), &t, Arc::new(NeverStopped)).await;
    assert_eq!(applies, 8, "the attempts allowed");
    assert!(resp.diagnostics.has_errors());
    let (resp, applies, _) = apply(always, &t, Arc::new(Cancelled)).await;
    assert_eq!(applies, 1, "a cancelled run does not wait to try again");
    assert!(resp.diagnostics.has_errors());
}
