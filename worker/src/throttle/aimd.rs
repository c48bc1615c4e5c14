//! The adaptive concurrency of one provider on a worker: [`Aimd`] decides
//! the limit (additive increase, multiplicative decrease, as TCP does with
//! its window), and [`Gate`] holds calls back to it, first come first
//! served.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// The limit: halved by a throttling error, raised by one after each
/// window of successful calls (as many as the limit), between 1 and `max`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aimd {
    max: usize,
    limit: usize,
    /// Counts decreases. A call remembers the epoch it was admitted in; a
    /// throttling error of a call admitted before the latest decrease was
    /// answered already (a burst refused together halves the limit once,
    /// not once per call).
    epoch: u64,
    /// Successes since the limit last changed.
    successes: usize,
}

impl Aimd {
    pub fn new(max: usize) -> Aimd {
        let max = max.max(1);
        Aimd {
            max,
            limit: max,
            epoch: 0,
            successes: 0,
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// A call admitted in `epoch` was throttled while `in_flight` calls
    /// ran (itself included). Returns the limit before and after when it
    /// was lowered now. It halves what is in use: a limit far above the
    /// calls in flight restrains nothing, and halving it would not slow
    /// the provider down.
    pub fn throttled(&mut self, epoch: u64, in_flight: usize) -> Option<(usize, usize)> {
        if epoch != self.epoch {
            return None;
        }
        let before = self.limit;
        self.limit = (before.min(in_flight.max(1)) / 2).max(1);
        self.epoch += 1;
        self.successes = 0;
        Some((before, self.limit))
    }

    /// A call succeeded (answered without a throttling error); returns the
    /// new limit when it went up.
    pub fn succeeded(&mut self) -> Option<usize> {
        if self.limit >= self.max {
            return None;
        }
        self.successes += 1;
        if self.successes < self.limit {
            return None;
        }
        self.successes = 0;
        self.limit += 1;
        Some(self.limit)
    }
}

/// Calls of one provider wait here for a slot under the [`Aimd`] limit.
pub struct Gate {
    state: Mutex<GateState>,
}

struct GateState {
    aimd: Aimd,
    in_flight: usize,
    /// The most calls in flight at once, for tests and metrics.
    peak: usize,
    waiting: VecDeque<oneshot::Sender<Permit>>,
    /// No call starts before this: the provider asked to be left alone
    /// until then (a throttling error's retry-after).
    held_until: Option<tokio::time::Instant>,
}

/// A call's slot; dropping it frees the slot.
pub struct Permit {
    gate: Arc<Gate>,
    epoch: u64,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let ready = {
            let mut s = self.gate.lock();
            s.in_flight -= 1;
            s.take_ready()
        };
        Gate::hand_over(&self.gate, ready);
    }
}

impl GateState {
    /// Waiting calls that fit under the limit now, counted in.
    fn take_ready(&mut self) -> Vec<(oneshot::Sender<Permit>, u64)> {
        let mut ready = Vec::new();
        while self.in_flight < self.aimd.limit()
            && let Some(tx) = self.waiting.pop_front()
        {
            self.in_flight += 1;
            self.peak = self.peak.max(self.in_flight);
            ready.push((tx, self.aimd.epoch()));
        }
        ready
    }
}

impl Gate {
    pub fn new(max: usize) -> Arc<Gate> {
        Arc::new(Gate {
            state: Mutex::new(GateState {
                aimd: Aimd::new(max),
                in_flight: 0,
                peak: 0,
                waiting: VecDeque::new(),
                held_until: None,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends slots to the calls they were given to, outside the lock: a
    /// call that stopped waiting drops its slot, which frees it again.
    fn hand_over(gate: &Arc<Gate>, ready: Vec<(oneshot::Sender<Permit>, u64)>) {
        for (tx, epoch) in ready {
            let _ = tx.send(Permit {
                gate: gate.clone(),
                epoch,
            });
        }
    }

    /// Holds every call back until `until` (or later, if already held
    /// longer): a provider that refused a call saying when to retry is
    /// asked again no sooner by any call of this worker, so the calls
    /// waiting for its rate go out at the rate it gives back instead of
    /// all refused together.
    pub fn hold(&self, until: tokio::time::Instant) {
        let mut s = self.lock();
        s.held_until = Some(s.held_until.map_or(until, |t| t.max(until)));
    }

    /// Waits for a slot (after any hold).
    pub async fn acquire(self: &Arc<Gate>) -> Permit {
        loop {
            let held = self.lock().held_until;
            match held {
                Some(t) if t > tokio::time::Instant::now() => {
                    tokio::time::sleep_until(t).await;
                    continue;
                }
                _ => {}
            }
            let rx = {
                let mut s = self.lock();
                if s.waiting.is_empty() && s.in_flight < s.aimd.limit() {
                    s.in_flight += 1;
                    s.peak = s.peak.max(s.in_flight);
                    return Permit {
                        gate: self.clone(),
                        epoch: s.aimd.epoch(),
                    };
                }
                let (tx, rx) = oneshot::channel();
                s.waiting.push_back(tx);
                rx
            };
            // A sender is only dropped after sending.
            if let Ok(permit) = rx.await {
                return permit;
            }
        }
    }

    /// The call holding `permit` was throttled: see [`Aimd::throttled`].
    pub fn throttled(&self, permit: &Permit) -> Option<(usize, usize)> {
        let mut s = self.lock();
        let in_flight = s.in_flight;
        s.aimd.throttled(permit.epoch, in_flight)
    }

    /// The call holding `permit` succeeded: see [`Aimd::succeeded`].
    pub fn succeeded(self: &Arc<Gate>, _permit: &Permit) -> Option<usize> {
        let (raised, ready) = {
            let mut s = self.lock();
            let raised = s.aimd.succeeded();
            (raised, s.take_ready())
        };
        Gate::hand_over(self, ready);
        raised
    }

    pub fn limit(&self) -> usize {
        self.lock().aimd.limit()
    }

    pub fn max(&self) -> usize {
        self.lock().aimd.max()
    }

    /// The most calls that were ever in flight at once.
    pub fn peak(&self) -> usize {
        self.lock().peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_hold_keeps_new_calls_back_until_its_end_and_is_never_shortened() {
        let gate = Gate::new(4);
        let start = tokio::time::Instant::now();
        gate.hold(start + Duration::from_millis(150));
        gate.hold(start + Duration::from_millis(20));
        let first = gate.acquire().await;
        assert!(
            start.elapsed() >= Duration::from_millis(150),
            "{:?}",
            start.elapsed()
        );
        drop(first);
        // Over: calls go at once.
        let again = tokio::time::Instant::now();
        let _second = gate.acquire().await;
        assert!(again.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn a_throttled_burst_halves_the_limit_once_then_windows_of_successes_add_one_each() {
        let mut a = Aimd::new(32);
        let admitted = a.epoch();
        assert_eq!(a.throttled(admitted, 32), Some((32, 16)));
        // The rest of the burst was admitted under the old limit.
        for _ in 0..10 {
            assert_eq!(a.throttled(admitted, 31), None);
        }
        assert_eq!(a.limit(), 16);
        // A call admitted under the new limit and throttled again halves again.
        assert_eq!(a.throttled(a.epoch(), 16), Some((16, 8)));
        // Additive increase: a window of `limit` successes adds one.
        let raised: Vec<usize> = (0..8 + 9 + 10).filter_map(|_| a.succeeded()).collect();
        assert_eq!(raised, [9, 10, 11]);
        // Never past the maximum, never below one.
        let mut a = Aimd::new(3);
        for _ in 0..100 {
            a.succeeded();
        }
        assert_eq!(a.limit(), 3);
        for _ in 0..10 {
            a.throttled(a.epoch(), 3);
        }
        assert_eq!(a.limit(), 1);
        assert_eq!(a.throttled(a.epoch(), 1), Some((1, 1)));
    }

    #[test]
    fn the_limit_halves_from_what_is_in_use() {
        let mut a = Aimd::new(256);
        assert_eq!(
            a.throttled(0, 40),
            Some((256, 20)),
            "40 calls in flight under a limit of 256: 20, not 128"
        );
        assert_eq!(Aimd::new(0).limit(), 1, "at least one");
    }

    #[tokio::test]
    async fn calls_beyond_the_limit_wait_in_order_and_a_lower_limit_holds_back_new_ones() {
        let gate = Gate::new(2);
        let a = gate.acquire().await;
        let b = gate.acquire().await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let waiter = |n: u32| {
            let (gate, order) = (gate.clone(), order.clone());
            tokio::spawn(async move {
                let p = gate.acquire().await;
                order.lock().unwrap().push(n);
                tokio::time::sleep(Duration::from_millis(20)).await;
                drop(p);
            })
        };
        let c = waiter(1);
        tokio::task::yield_now().await;
        let d = waiter(2);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(order.lock().unwrap().is_empty(), "both wait");
        // Throttled: the limit goes to 1, so freeing one slot lets nobody in.
        assert_eq!(gate.throttled(&a), Some((2, 1)));
        drop(a);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(order.lock().unwrap().is_empty(), "still one call in flight");
        drop(b);
        c.await.unwrap();
        d.await.unwrap();
        assert_eq!(*order.lock().unwrap(), [1, 2], "first come, first served");
        assert_eq!(gate.peak(), 2);
    }

    #[tokio::test]
    async fn a_call_that_stops_waiting_gives_its_slot_back() {
        let gate = Gate::new(1);
        let held = gate.acquire().await;
        let gone = tokio::time::timeout(Duration::from_millis(10), gate.acquire()).await;
        assert!(gone.is_err());
        drop(held);
        let again = tokio::time::timeout(Duration::from_secs(5), gate.acquire()).await;
        assert!(again.is_ok(), "the abandoned wait did not keep the slot");
    }

    #[tokio::test]
    async fn many_calls_never_exceed_the_limit() {
        let gate = Gate::new(4);
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let calls: Vec<_> = (0..64)
            .map(|i| {
                let (gate, running, most) = (gate.clone(), running.clone(), most.clone());
                tokio::spawn(async move {
                    let p = gate.acquire().await;
                    let now = running.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(1 + i % 3)).await;
                    running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    if i == 10 {
                        gate.throttled(&p);
                    } else {
                        gate.succeeded(&p);
                    }
                })
            })
            .collect();
        for c in calls {
            c.await.unwrap();
        }
        assert!(most.load(std::sync::atomic::Ordering::SeqCst) <= 4);
        assert_eq!(gate.peak(), 4);
        // Halved by the throttled call, and back up after two windows of
        // successes (the calls after it are dozens).
        assert_eq!(gate.limit(), 4);
    }
}
