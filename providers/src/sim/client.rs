//! The configured simulated cloud: what every call costs (a rate-limit
//! slot, then a latency drawn uniformly from `latency_ms` ..= `latency_ms +
//! latency_jitter_ms`), throttling (calls beyond a rate refused with a
//! cloud's throttling error), injected failures, and eventual consistency (an
//! object is invisible to reads for `eventual_consistency_ms` after its
//! creation, across provider processes, since the creation time is stored).

use super::store::Store;
use super::stored::{SimObject, now_ms};
use crate::framework::{CallResult, fail};
use rand::Rng;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

/// The configured simulated cloud.
pub struct SimClient {
    pub store: Store,
    pub latency: Latency,
    /// After a change is made, before it is answered.
    pub response_latency: Duration,
    pub failure_rate: f64,
    /// CPU burnt per call, one call at a time per process (`cpu_ms`).
    pub cpu: Duration,
    pub rate_limit: Option<RateLimiter>,
    /// Calls beyond this rate fail (`throttle_above_per_second`).
    pub throttle: Option<Throttle>,
    pub eventual_consistency: Duration,
    /// The account's read and write limits, shared by every process on
    /// the store (`account_reads_per_second`, `account_writes_per_second`).
    pub account: Option<super::account::AccountLimits>,
}

/// One call at a time per process: the lock of a single-threaded provider.
static CPU_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Keeps a core busy for `cpu` (a busy loop of that long) under
/// [`CPU_LOCK`], on a blocking thread so the runtime keeps serving.
async fn burn_cpu(cpu: Duration) {
    let _one_at_a_time = CPU_LOCK.lock().await;
    let _ = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < cpu {
            for i in 0..1_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
        }
        x
    })
    .await;
}

/// A uniform latency distribution: `base` plus up to `jitter`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    pub base: Duration,
    pub jitter: Duration,
}

impl Latency {
    pub fn sample(&self, rng: &mut impl Rng) -> Duration {
        if self.jitter.is_zero() {
            return self.base;
        }
        self.base + self.jitter.mul_f64(rng.random::<f64>())
    }
}

/// A token bucket holding one second's worth of calls: bursts up to the
/// rate pass at once, later calls wait for their slot. Callers reserve
/// their slot under the lock and sleep outside it, so waiting calls are
/// served in arrival order without holding the lock.
pub struct RateLimiter {
    per_second: f64,
    state: Mutex<(f64, Instant)>,
}

impl RateLimiter {
    pub fn new(per_second: f64) -> RateLimiter {
        RateLimiter {
            per_second,
            state: Mutex::new((per_second.max(1.0), Instant::now())),
        }
    }

    /// How long the caller must wait for its slot (zero when a token is free).
    pub fn reserve(&self) -> Duration {
        self.reserve_at(Instant::now())
    }

    fn reserve_at(&self, now: Instant) -> Duration {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, last) = &mut *state;
        let capacity = self.per_second.max(1.0);
        *tokens =
            (*tokens + now.duration_since(*last).as_secs_f64() * self.per_second).min(capacity);
        *last = now;
        *tokens -= 1.0;
        if *tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-*tokens / self.per_second)
        }
    }
}

/// Refuses calls beyond a rate instead of making them wait, as a cloud API
/// answers "ThrottlingException: Rate exceeded": a bucket of one second's
/// worth of calls, refilled at the rate; a call that finds it empty is
/// refused and takes nothing from it. Per provider process.
pub struct Throttle {
    per_second: f64,
    state: Mutex<(f64, Instant)>,
}

impl Throttle {
    pub fn new(per_second: f64) -> Throttle {
        Throttle {
            per_second,
            state: Mutex::new((per_second.max(1.0), Instant::now())),
        }
    }

    /// Whether a call may go ahead now.
    pub fn admit(&self) -> bool {
        self.admit_at(Instant::now())
    }

    fn admit_at(&self, now: Instant) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, last) = &mut *state;
        let capacity = self.per_second.max(1.0);
        *tokens = (*tokens + now.saturating_duration_since(*last).as_secs_f64() * self.per_second)
            .min(capacity);
        *last = now.max(*last);
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

impl SimClient {
    pub fn new(store: Store) -> SimClient {
        SimClient {
            store,
            latency: Latency::default(),
            response_latency: Duration::ZERO,
            failure_rate: 0.0,
            cpu: Duration::ZERO,
            rate_limit: None,
            throttle: None,
            eventual_consistency: Duration::ZERO,
            account: None,
        }
    }

    /// [`SimClient::call_latency`] for a call that reads the account's
    /// objects, then its read limit.
    pub async fn read_call(&self) -> CallResult<()> {
        self.account_call(super::account::CallKind::Read).await
    }

    /// [`SimClient::call_latency`] for a call that changes an object, then
    /// the account's write limit.
    pub async fn write_call(&self) -> CallResult<()> {
        self.account_call(super::account::CallKind::Write).await
    }

    async fn account_call(&self, kind: super::account::CallKind) -> CallResult<()> {
        self.call_latency().await?;
        match &self.account {
            Some(a) => a.admit(kind).await,
            None => Ok(()),
        }
    }

    /// Every call waits for its rate-limit slot, then costs its latency,
    /// and is refused at the end of it when throttled (a cloud API's
    /// refusal costs its round trip too). All of it comes before the call
    /// does anything, so a throttled call, or one interrupted by
    /// `StopProvider`, fails having changed nothing.
    pub async fn call_latency(&self) -> CallResult<()> {
        if !self.cpu.is_zero() {
            burn_cpu(self.cpu).await;
        }
        let wait = self
            .rate_limit
            .as_ref()
            .map_or(Duration::ZERO, RateLimiter::reserve)
            + self.latency.sample(&mut rand::rng());
        if !wait.is_zero() {
            crate::framework::stoppable_sleep(
                wait,
                "sim: the call was interrupted before it started",
            )
            .await?;
        }
        match &self.throttle {
            Some(t) if !t.admit() => fail(
                "ThrottlingException: Rate exceeded",
                format!(
                    "sim: more than {} calls per second (throttle_above_per_second); the call did nothing",
                    t.per_second
                ),
            ),
            _ => Ok(()),
        }
    }

    /// After a change is made: the answer takes `response_latency` (not
    /// interruptible: the change is done whatever happens to the answer).
    pub async fn response_latency(&self) {
        if !self.response_latency.is_zero() {
            tokio::time::sleep(self.response_latency).await;
        }
    }

    /// A mutating call fails before doing anything with probability `failure_rate`.
    pub fn injected_failure(&self, op: &str) -> CallResult<()> {
        if self.failure_rate > 0.0 && rand::random::<f64>() < self.failure_rate {
            return fail(
                "Simulated failure",
                format!("sim: {op} failed (failure_rate {})", self.failure_rate),
            );
        }
        Ok(())
    }

    /// Whether reads see `obj` yet.
    pub fn visible(&self, obj: &SimObject) -> bool {
        let window = self.eventual_consistency.as_millis() as u64;
        match obj.created_ms {
            Some(created) if window > 0 => now_ms().saturating_sub(created) >= window,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_beyond_the_rate_wait_for_their_slot() {
        let limiter = RateLimiter::new(10.0);
        let t0 = limiter.state.lock().unwrap().1;
        let waits: Vec<Duration> = (0..25).map(|_| limiter.reserve_at(t0)).collect();
        assert!(waits[..10].iter().all(Duration::is_zero), "{waits:?}");
        assert_eq!(waits[10], Duration::from_millis(100));
        assert_eq!(waits[24], Duration::from_millis(1500));
        // Once the backlog has drained, the bucket is full again.
        let later = t0 + Duration::from_secs(3);
        let waits: Vec<Duration> = (0..11).map(|_| limiter.reserve_at(later)).collect();
        assert!(waits[..10].iter().all(Duration::is_zero), "{waits:?}");
        assert_eq!(
            waits[10],
            Duration::from_millis(100),
            "the bucket holds one second"
        );
    }

    #[test]
    fn calls_beyond_the_throttle_rate_are_refused_and_take_nothing() {
        let throttle = Throttle::new(10.0);
        let t0 = throttle.state.lock().unwrap().1;
        let admitted: Vec<bool> = (0..25).map(|_| throttle.admit_at(t0)).collect();
        assert!(admitted[..10].iter().all(|a| *a), "{admitted:?}");
        assert!(admitted[10..].iter().all(|a| !*a), "{admitted:?}");
        // Refusals took no tokens: after 0.35 s, three calls pass.
        let later = t0 + Duration::from_millis(350);
        let admitted = (0..5).filter(|_| throttle.admit_at(later)).count();
        assert_eq!(admitted, 3);
        // The bucket holds one second's worth.
        let much_later = t0 + Duration::from_secs(60);
        let admitted = (0..30).filter(|_| throttle.admit_at(much_later)).count();
        assert_eq!(admitted, 10);
    }

    #[test]
    fn latency_stays_within_its_bounds() {
        let l = Latency {
            base: Duration::from_millis(5),
            jitter: Duration::from_millis(10),
        };
        let mut rng = rand::rng();
        let samples: Vec<Duration> = (0..200).map(|_| l.sample(&mut rng)).collect();
        assert!(samples.iter().all(|d| (5..=15).contains(&d.as_millis())));
        assert!(samples.iter().any(|d| *d != samples[0]), "jitter varies");
    }

    #[tokio::test]
    async fn new_objects_stay_invisible_for_the_consistency_window() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = SimClient::new(Store::open(dir.path()).await.unwrap());
        let obj = |created_ms| SimObject {
            id: uuid::Uuid::new_v4().to_string(),
            name: "a".into(),
            tags: None,
            size: None,
            kind: None,
            created_ms,
        };
        let fresh = c.store.create(&obj(None)).await.unwrap();
        assert!(c.visible(&fresh), "no window, no delay");
        c.eventual_consistency = Duration::from_secs(3600);
        assert!(!c.visible(&fresh));
        assert!(c.visible(&obj(None)), "objects from before the stamp");
        assert!(c.visible(&obj(Some(now_ms() - 3_600_001))));
    }
}
