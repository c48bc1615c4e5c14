//! Pacing a plan's tasks to a rate (a background refresh's
//! `--refresh-rate`): a token bucket holding one second's worth of tasks
//! (at least one), refilled continuously. The plan walk dispatches only
//! as many queued tasks as the bucket holds, and when it holds none waits
//! for the next token alongside the answers it awaits.

use std::time::{Duration, Instant};

pub(in crate::run) struct Pace {
    per_second: f64,
    tokens: f64,
    last: Instant,
}

impl Pace {
    pub fn new(per_second: f64) -> Pace {
        let per_second = per_second.max(0.001);
        Pace {
            per_second,
            tokens: per_second.max(1.0),
            last: Instant::now(),
        }
    }

    fn refill(&mut self, now: Instant) {
        let gained = now.duration_since(self.last).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + gained).min(self.per_second.max(1.0));
        self.last = now;
    }

    /// How many of `wanted` tasks may go now; they are taken.
    pub fn take(&mut self, wanted: usize, now: Instant) -> usize {
        self.refill(now);
        let n = (self.tokens.floor() as usize).min(wanted);
        self.tokens -= n as f64;
        n
    }

    /// How long until the next task may go.
    pub fn until_next(&mut self, now: Instant) -> Duration {
        self.refill(now);
        if self.tokens >= 1.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64((1.0 - self.tokens) / self.per_second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_one_second_then_the_rate() {
        let start = Instant::now();
        let mut p = Pace::new(4.0);
        assert_eq!(p.take(10, start), 4);
        assert_eq!(p.take(10, start), 0);
        let wait = p.until_next(start);
        assert!((wait.as_secs_f64() - 0.25).abs() < 1e-6, "{wait:?}");
        assert_eq!(p.take(10, start + Duration::from_millis(500)), 2);
        // Idle time fills the bucket only up to one second's worth.
        assert_eq!(p.take(10, start + Duration::from_secs(60)), 4);
    }

    #[test]
    fn a_slow_rate_lets_one_go_at_a_time() {
        let start = Instant::now();
        let mut p = Pace::new(0.5);
        assert_eq!(p.take(3, start), 1);
        assert_eq!(p.take(3, start + Duration::from_secs(1)), 0);
        let wait = p.until_next(start + Duration::from_secs(1));
        assert!((wait.as_secs_f64() - 1.0).abs() < 1e-6, "{wait:?}");
        assert_eq!(p.take(3, start + Duration::from_secs(2)), 1);
    }
}
