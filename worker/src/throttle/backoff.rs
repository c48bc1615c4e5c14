//! How long a throttled call waits before its next attempt: exponential
//! backoff with full jitter (a uniform draw between zero and the
//! exponential ceiling), so the calls a provider refused together do not
//! come back together.

use rand::Rng;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The ceiling after the first refusal; it doubles with each one.
    pub base: Duration,
    /// The ceiling never grows past this.
    pub cap: Duration,
    /// Attempts in all, the first included; after the last refusal the
    /// error is reported.
    pub attempts: u32,
}

impl Backoff {
    /// 8 attempts, ceilings 0.25 s, 0.5 s, 1 s ... 16 s: at most about 32 s
    /// of waiting in all, long enough for a provider's rate window to
    /// refill several times over, short enough that a provider that never
    /// recovers fails the operation within a minute.
    pub const DEFAULT: Backoff = Backoff {
        base: Duration::from_millis(250),
        cap: Duration::from_secs(20),
        attempts: 8,
    };

    /// The longest wait after the `failed`-th refusal (from 1).
    pub fn ceiling(&self, failed: u32) -> Duration {
        let doublings = failed.saturating_sub(1).min(31);
        self.base.saturating_mul(1 << doublings).min(self.cap)
    }

    /// The wait after the `failed`-th refusal: uniform in `0..=ceiling`.
    pub fn delay(&self, failed: u32, rng: &mut impl Rng) -> Duration {
        self.ceiling(failed).mul_f64(rng.random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceilings_double_up_to_the_cap() {
        let b = Backoff::DEFAULT;
        let ceilings: Vec<u128> = (1..=9).map(|n| b.ceiling(n).as_millis()).collect();
        assert_eq!(
            ceilings,
            [250, 500, 1000, 2000, 4000, 8000, 16000, 20000, 20000]
        );
        assert_eq!(b.ceiling(0), b.base, "before any refusal: the base");
        assert_eq!(b.ceiling(u32::MAX), b.cap, "no overflow");
        let total: Duration = (1..b.attempts).map(|n| b.ceiling(n)).sum();
        assert_eq!(
            total,
            Duration::from_millis(31_750),
            "the most a call waits"
        );
    }

    #[test]
    fn delays_are_spread_over_the_whole_range_below_the_ceiling() {
        let b = Backoff::DEFAULT;
        let mut rng = rand::rng();
        for failed in 1..=b.attempts {
            let ceiling = b.ceiling(failed);
            let delays: Vec<Duration> = (0..2000).map(|_| b.delay(failed, &mut rng)).collect();
            assert!(
                delays.iter().all(|d| *d <= ceiling),
                "{failed}: {ceiling:?}"
            );
            // Full jitter: both ends of the range are reached, not just
            // some spread around the ceiling.
            let low = delays.iter().filter(|d| **d < ceiling / 10).count();
            let high = delays.iter().filter(|d| **d > ceiling * 9 / 10).count();
            assert!(low > 100 && high > 100, "{failed}: {low} low, {high} high");
        }
    }
}
