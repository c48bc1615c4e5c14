//! Where the walks of a run send their events: the run's event log, unless
//! the apply walk holds them back until what they report is durable (see
//! `apply::record`); and how many of them were errors, which is how the
//! apply walk tells that an operation failed while it ran.

use super::events::EventLog;
use fleetform_shared::wire::RunEvent;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub(crate) struct Emitter {
    log: Arc<EventLog>,
    /// Events waiting for [`Emitter::release`]: `None` while nothing is held.
    held: Mutex<Option<Vec<RunEvent>>>,
    /// Failed operations and error diagnostics emitted so far.
    errors: AtomicUsize,
}

impl Emitter {
    pub fn new(log: Arc<EventLog>) -> Emitter {
        Emitter {
            log,
            held: Mutex::new(None),
            errors: AtomicUsize::new(0),
        }
    }

    pub fn emit(&self, event: RunEvent) {
        let error = match &event {
            RunEvent::Diagnostics(d) => d.has_errors(),
            RunEvent::ApplyErrored { .. } => true,
            _ => false,
        };
        if error {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(held) = self.held.lock().expect("held events lock").as_mut() {
            held.push(event);
            return;
        }
        self.log.push(event);
    }

    /// From now on events wait for [`Emitter::release`].
    pub fn hold(&self) {
        self.held
            .lock()
            .expect("held events lock")
            .get_or_insert_with(Vec::new);
    }

    /// Publishes the held events in the order they were emitted, and stops
    /// holding.
    pub fn release(&self) {
        let held = self.held.lock().expect("held events lock").take();
        for event in held.into_iter().flatten() {
            self.log.push(event);
        }
    }

    /// How many errors were emitted so far.
    pub fn errors(&self) -> usize {
        self.errors.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::diag::{Diagnostic, Diagnostics};

    fn warning(text: &str) -> RunEvent {
        RunEvent::Diagnostics(Diagnostic::warning(text, "").into())
    }

    fn texts(log: &EventLog) -> Vec<String> {
        log.since(0)
            .into_iter()
            .filter_map(|e| match e {
                RunEvent::Diagnostics(d) => d.iter().next().map(|d| d.summary.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn held_events_reach_the_log_in_order_once_released() {
        let log = Arc::new(EventLog::default());
        let emitter = Emitter::new(log.clone());
        emitter.emit(warning("a"));
        emitter.hold();
        emitter.emit(warning("b"));
        emitter.hold();
        emitter.emit(warning("c"));
        assert_eq!(texts(&log), ["a"]);
        emitter.release();
        assert_eq!(texts(&log), ["a", "b", "c"]);
        emitter.emit(warning("d"));
        assert_eq!(texts(&log), ["a", "b", "c", "d"]);
    }

    #[test]
    fn errors_are_counted_held_or_not() {
        let emitter = Emitter::new(Arc::new(EventLog::default()));
        emitter.emit(warning("w"));
        emitter.hold();
        let error: Diagnostics = Diagnostic::error("e", "").into();
        emitter.emit(RunEvent::Diagnostics(error));
        assert_eq!(emitter.errors(), 1);
    }
}
