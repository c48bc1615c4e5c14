//! The event log of a run: every event kept in order, so a watcher that
//! connects late (or reconnects) sees the run from its beginning.

use crate::dispatch::ProgressWatcher;
use fleetform_shared::wire::{ProgressEvent, RunEvent};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

pub struct EventLog {
    events: Mutex<Vec<RunEvent>>,
    /// When each event was pushed (ms since the Unix epoch), for the live
    /// view's durations and rates; same length as `events`.
    times: Mutex<Vec<u64>>,
    /// Carries the number of events; watchers wait for it to grow.
    len: watch::Sender<usize>,
    finished: watch::Sender<bool>,
}

impl Default for EventLog {
    fn default() -> Self {
        EventLog {
            events: Mutex::new(Vec::new()),
            times: Mutex::new(Vec::new()),
            len: watch::channel(0).0,
            finished: watch::channel(false).0,
        }
    }
}

impl EventLog {
    pub fn push(&self, event: RunEvent) {
        let finished = matches!(event, RunEvent::Finished { .. });
        let n = {
            let mut ev = self.events.lock().expect("event log lock");
            ev.push(event);
            self.times.lock().expect("event log lock").push(now_ms());
            ev.len()
        };
        self.len.send_replace(n);
        if finished {
            self.finished.send_replace(true);
        }
    }

    /// Events from index `from` on.
    pub fn since(&self, from: usize) -> Vec<RunEvent> {
        let ev = self.events.lock().expect("event log lock");
        ev.get(from..).map(<[RunEvent]>::to_vec).unwrap_or_default()
    }

    /// Events from index `from` on, each with when it happened (ms since
    /// the Unix epoch).
    pub fn since_timed(&self, from: usize) -> Vec<(u64, RunEvent)> {
        let ev = self.events.lock().expect("event log lock");
        let times = self.times.lock().expect("event log lock");
        ev.iter()
            .zip(times.iter())
            .skip(from)
            .map(|(e, t)| (*t, e.clone()))
            .collect()
    }

    pub fn subscribe(&self) -> watch::Receiver<usize> {
        self.len.subscribe()
    }

    pub fn is_finished(&self) -> bool {
        *self.finished.borrow()
    }

    /// Resolves once the run has finished.
    pub async fn wait_finished(&self) {
        let mut rx = self.finished.subscribe();
        // The sender lives as long as the log.
        let _ = rx.wait_for(|f| *f).await;
    }

    /// How the run ended, once it has.
    pub fn status(&self) -> Option<fleetform_shared::wire::RunStatus> {
        let ev = self.events.lock().expect("event log lock");
        match ev.last() {
            Some(RunEvent::Finished { status, .. }) => Some(*status),
            _ => None,
        }
    }
}

/// What workers report about a run rather than one of its tasks, shown in
/// its event log: a provider that throttles the run's calls, as a warning
/// (each worker sends one every few seconds at most).
pub struct RunNotices(pub Arc<EventLog>);

impl ProgressWatcher for RunNotices {
    fn progress(&self, _step: u32, event: ProgressEvent) {
        if let ProgressEvent::Throttled(t) = event
            && !self.0.is_finished()
        {
            self.0.push(RunEvent::Diagnostics(t.diagnostic().into()));
        }
    }
}

/// Now, in ms since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
