//! Per-provider concurrency on a worker, and what it does when a provider
//! throttles: a limit per provider ([`ProviderLimits`]), calls that wait
//! for a slot under it ([`aimd::Gate`]), throttled calls retried with
//! backoff ([`Backoff`]), the limit halved by throttling and raised again
//! by successes ([`aimd::Aimd`]), and a notice to the run now and then.
//!
//! # Layout
//! - `classify`: which provider errors are throttling errors.
//! - `backoff`: exponential backoff with full jitter.
//! - `aimd`: the adaptive limit and the gate calls wait at.
//! - `limits`: the `NAME=N` settings.
//! - `provider`: the provider and provider source wrappers that apply it all.

pub mod aimd;
pub mod backoff;
pub mod classify;
pub mod limits;
mod provider;

pub use backoff::Backoff;
pub use limits::{ProviderLimit, ProviderLimits};
pub use provider::{CallContext, ThrottledSource};

use aimd::Gate;
use fleetform_shared::addr::ProviderAddr;
use fleetform_shared::wire::ProviderThrottled;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The per-provider state of a worker (of every in-process worker in
/// embedded mode), shared by all runs: a provider's rate limits are the
/// cloud account's, not one run's.
pub struct Throttles {
    limits: ProviderLimits,
    /// The limit of a provider that has none configured: the worker's
    /// concurrency, which bounds its calls anyway.
    default_max: usize,
    pub backoff: Backoff,
    gates: Mutex<HashMap<ProviderAddr, Arc<Gate>>>,
    notices: Mutex<HashMap<(ProviderAddr, String), Notices>>,
}

/// What a run has been told about a provider's throttling, and what it
/// has not been told yet.
struct Notices {
    last: Option<Instant>,
    /// Throttling errors since the last notice.
    errors: u64,
    /// The limit before the first decrease since the last notice.
    from: Option<usize>,
    /// The latest error's message and retry wait.
    message: String,
    retry_in: Duration,
    worker: String,
    /// A notice of what happens during this window is to be sent at its end.
    trailing: bool,
    seen: Instant,
}

/// A run hears about a provider's throttling at most this often (from
/// each worker): at the first error, then at the end of each window with
/// errors, with the limit in force then.
pub const NOTICE_EVERY: Duration = Duration::from_secs(5);

/// Runs whose notices are remembered; older ones are forgotten.
const NOTICES_KEPT: usize = 1024;

/// What to do about a throttling error's notice.
#[derive(Debug)]
pub enum Notice {
    /// Send this now.
    Now(ProviderThrottled),
    /// Call [`Throttles::trailing`] after this long, and send what it gives.
    After(Duration),
    /// Nothing: it is told with a notice already due.
    Quiet,
}

impl Throttles {
    pub fn new(limits: ProviderLimits, default_max: usize) -> Throttles {
        Throttles {
            limits,
            default_max: default_max.max(1),
            backoff: Backoff::DEFAULT,
            gates: Mutex::default(),
            notices: Mutex::default(),
        }
    }

    /// The gate of `provider`'s calls, made on first use.
    pub fn gate(&self, provider: &ProviderAddr) -> Arc<Gate> {
        let mut gates = self.gates.lock().unwrap_or_else(|e| e.into_inner());
        gates
            .entry(provider.clone())
            .or_insert_with(|| {
                let max = self
                    .limits
                    .for_provider(provider)
                    .unwrap_or(self.default_max);
                crate::metrics::provider_limit(provider, max);
                Gate::new(max)
            })
            .clone()
    }

    /// A call of `run_id` to `provider` was throttled and is retried in
    /// `retry_in`: whether to tell the run now, later, or not, and what
    /// `lower` did (the limit went from one value to another because of
    /// this call).
    ///
    /// `lower` runs under the lock the notices are kept under. Two calls
    /// throttled together race: only the first to reach the gate lowers
    /// it, and if the other recorded its error first, the run's first
    /// notice would show the lowered limit as unchanged and the decrease
    /// would wait for the window's end (after a short run had ended: seen
    /// in CI). Lowering and recording together keep the first notice
    /// holding the first decrease.
    pub fn throttled(
        &self,
        provider: &ProviderAddr,
        run_id: &str,
        lower: impl FnOnce() -> Option<(usize, usize)>,
        retry_in: Duration,
        message: &str,
        worker: &str,
    ) -> (Notice, Option<(usize, usize)>) {
        let now = Instant::now();
        let mut notices = self.notices.lock().unwrap_or_else(|e| e.into_inner());
        let lowered = lower();
        if notices.len() >= NOTICES_KEPT {
            // The oldest half goes: their runs have most likely ended.
            let mut seen: Vec<Instant> = notices.values().map(|n| n.seen).collect();
            seen.sort();
            let cut = seen[seen.len() / 2];
            notices.retain(|_, n| n.seen > cut);
        }
        let n = notices
            .entry((provider.clone(), run_id.to_string()))
            .or_insert(Notices {
                last: None,
                errors: 0,
                from: None,
                message: String::new(),
                retry_in: Duration::ZERO,
                worker: String::new(),
                trailing: false,
                seen: now,
            });
        n.seen = now;
        n.errors += 1;
        if let Some((before, _)) = lowered {
            n.from.get_or_insert(before);
        }
        n.message = message.to_string();
        n.retry_in = retry_in;
        n.worker = worker.to_string();
        let notice = match n.last.map(|t| now.duration_since(t)) {
            Some(since) if since < NOTICE_EVERY => {
                if n.trailing {
                    Notice::Quiet
                } else {
                    n.trailing = true;
                    Notice::After(NOTICE_EVERY - since)
                }
            }
            _ => Notice::Now(self.notice(provider, n, now)),
        };
        (notice, lowered)
    }

    /// The notice due at the end of a window: the errors since the last
    /// one and the limit in force now (none when there were none).
    pub fn trailing(&self, provider: &ProviderAddr, run_id: &str) -> Option<ProviderThrottled> {
        let mut notices = self.notices.lock().unwrap_or_else(|e| e.into_inner());
        let n = notices.get_mut(&(provider.clone(), run_id.to_string()))?;
        n.trailing = false;
        (n.errors > 0).then(|| self.notice(provider, n, Instant::now()))
    }

    fn notice(&self, provider: &ProviderAddr, n: &mut Notices, now: Instant) -> ProviderThrottled {
        let gate = self.gate(provider);
        let limit = gate.limit();
        let notice = ProviderThrottled {
            provider: provider.clone(),
            worker: n.worker.clone(),
            limit_before: n.from.unwrap_or(limit) as u32,
            limit: limit as u32,
            limit_max: gate.max() as u32,
            retry_in_ms: n.retry_in.as_millis() as u64,
            errors: n.errors,
            message: n.message.clone(),
        };
        n.last = Some(now);
        n.errors = 0;
        n.from = None;
        notice
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_told_at_the_first_error_then_once_per_window_with_the_limit_then() {
        let t = Throttles::new(ProviderLimits::default(), 64);
        let sim: ProviderAddr = "fleetform/sim".parse().unwrap();
        let wait = Duration::from_millis(300);
        let (first, lowered) =
            t.throttled(&sim, "r", || Some((64, 32)), wait, "Rate exceeded", "w");
        assert_eq!(lowered, Some((64, 32)));
        let Notice::Now(n) = first else {
            panic!("{first:?}")
        };
        assert_eq!((n.limit_before, n.errors), (64, 1));
        let (later, _) = t.throttled(&sim, "r", || Some((32, 16)), wait, "Rate exceeded", "w");
        assert!(
            matches!(later, Notice::After(d) if d <= NOTICE_EVERY && d > NOTICE_EVERY / 2),
            "{later:?}"
        );
        for _ in 0..10 {
            let (quiet, _) = t.throttled(&sim, "r", || None, wait, "Rate exceeded", "w");
            assert!(matches!(quiet, Notice::Quiet), "{quiet:?}");
        }
        // Another run hears of it on its own.
        assert!(matches!(
            t.throttled(&sim, "s", || None, wait, "Rate exceeded", "w")
                .0,
            Notice::Now(_)
        ));
        let n = t
            .trailing(&sim, "r")
            .expect("errors since the first notice");
        assert_eq!((n.limit_before, n.errors), (32, 11));
        assert!(t.trailing(&sim, "r").is_none(), "nothing new");
        assert!(t.trailing(&sim, "other").is_none());
    }
}
