//! The event log of a run: every event kept in order, so a watcher that
//! connects late (or reconnects) sees the run from its beginning.

use crate::dispatch::ProgressWatcher;
use fleetform_shared::wire::{ProgressEvent, RunEvent};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

pub struct EventLog {
    /// Each event as the API sends it (MessagePack with field names): in
    /// memory a quarter of its size as a value (an apply of 100,000
    /// instances held 100 MB of events as values), and encoded once however
    /// many watch. The plan is the exception while the run goes on.
    events: Mutex<Vec<Stored>>,
    /// When each event was pushed (ms since the Unix epoch), for the live
    /// view's durations and rates; same length as `events`.
    times: Mutex<Vec<u64>>,
    /// How the run ended, once it has.
    status: Mutex<Option<fleetform_shared::wire::RunStatus>>,
    /// Carries the number of events; watchers wait for it to grow.
    len: watch::Sender<usize>,
    finished: watch::Sender<bool>,
    /// Called with each event as it is pushed, in the pushing thread.
    #[cfg(test)]
    observer: Mutex<Option<Observer>>,
}

#[cfg(test)]
type Observer = Box<dyn Fn(&RunEvent) + Send + Sync>;

impl Default for EventLog {
    fn default() -> Self {
        EventLog {
            events: Mutex::new(Vec::new()),
            times: Mutex::new(Vec::new()),
            status: Mutex::new(None),
            len: watch::channel(0).0,
            finished: watch::channel(false).0,
            #[cfg(test)]
            observer: Mutex::new(None),
        }
    }
}

/// An event as the log keeps it.
#[derive(Clone)]
enum Stored {
    Encoded(Box<[u8]>),
    /// The plan, shared with the run that applies it until the run ends
    /// (then encoded): encoded, it was a second copy of the plan for the
    /// whole apply, and an in-process watcher (embedded mode) decoded a
    /// third.
    Plan(Arc<fleetform_shared::plan::Plan>),
    /// An encoded event of more than [`PART`] bytes (a plan, once the run
    /// has ended), in parts of that size: encoded whole, the plan of
    /// 100,000 changes took up to twice its 45 MB in one buffer at the end
    /// of the run, the process's peak. Shared, as the log hands it out.
    Parts(Arc<[Box<[u8]>]>),
}

/// The size of the parts a large encoded event is kept in.
const PART: usize = 1 << 20;

impl Stored {
    fn event(&self) -> RunEvent {
        match self {
            Stored::Encoded(b) => decode(b),
            Stored::Plan(p) => RunEvent::Planned(p.clone()),
            Stored::Parts(parts) => {
                fleetform_shared::parts::decode(parts).expect("the log's own events decode")
            }
        }
    }
}

pub fn encode(event: &RunEvent) -> Box<[u8]> {
    rmp_serde::to_vec_named(event)
        .expect("events serialise")
        .into_boxed_slice()
}

fn decode(bytes: &[u8]) -> RunEvent {
    rmp_serde::from_slice(bytes).expect("the log's own events decode")
}

impl EventLog {
    /// Tests see each event the moment it is pushed, before anything else
    /// the pusher does next.
    #[cfg(test)]
    pub fn observe(&self, f: impl Fn(&RunEvent) + Send + Sync + 'static) {
        *self.observer.lock().expect("event log lock") = Some(Box::new(f));
    }

    pub fn push(&self, event: RunEvent) {
        #[cfg(test)]
        if let Some(f) = self.observer.lock().expect("event log lock").as_ref() {
            f(&event);
        }
        let status = match &event {
            RunEvent::Finished { status, .. } => Some(*status),
            _ => None,
        };
        let stored = match event {
            RunEvent::Planned(plan) if status.is_none() => Stored::Plan(plan),
            event => Stored::Encoded(encode(&event)),
        };
        let n = {
            let mut ev = self.events.lock().expect("event log lock");
            ev.push(stored);
            self.times.lock().expect("event log lock").push(now_ms());
            if status.is_some() {
                *self.status.lock().expect("event log lock") = status;
            }
            ev.len()
        };
        self.len.send_replace(n);
        if status.is_some() {
            self.finished.send_replace(true);
        }
    }

    /// Once the run has ended and let its plan go: the log keeps the plan
    /// encoded, a quarter of its size as a value, for as long as it keeps
    /// the ended run's events.
    pub fn compact(&self) {
        let plans: Vec<(usize, Arc<fleetform_shared::plan::Plan>)> = {
            let ev = self.events.lock().expect("event log lock");
            ev.iter()
                .enumerate()
                .filter_map(|(i, e)| match e {
                    Stored::Plan(p) => Some((i, p.clone())),
                    Stored::Encoded(_) | Stored::Parts(_) => None,
                })
                .collect()
        };
        // Encoded outside the lock: watchers read on meanwhile.
        for (i, plan) in plans {
            let parts: Vec<Vec<u8>> =
                fleetform_shared::parts::encode_named(&RunEvent::Planned(plan), PART);
            let stored = match <[Vec<u8>; 1]>::try_from(parts) {
                Ok([one]) => Stored::Encoded(one.into_boxed_slice()),
                Err(parts) => Stored::Parts(parts.into_iter().map(Vec::into_boxed_slice).collect()),
            };
            self.events.lock().expect("event log lock")[i] = stored;
        }
    }

    /// Events from index `from` on.
    pub fn since(&self, from: usize) -> Vec<RunEvent> {
        let ev = self.events.lock().expect("event log lock");
        ev.get(from..)
            .unwrap_or_default()
            .iter()
            .map(Stored::event)
            .collect()
    }

    /// Events from index `from` on, encoded as the API sends them, each in
    /// parts of at most 1 MiB (one part for almost every event).
    pub fn since_parts(&self, from: usize) -> Vec<Vec<Vec<u8>>> {
        // A plan is encoded outside the lock: the run goes on meanwhile.
        let stored: Vec<Stored> = {
            let ev = self.events.lock().expect("event log lock");
            ev.get(from..).unwrap_or_default().to_vec()
        };
        stored
            .iter()
            .map(|s| match s {
                Stored::Encoded(b) => vec![b.to_vec()],
                Stored::Plan(p) => {
                    fleetform_shared::parts::encode_named(&RunEvent::Planned(p.clone()), PART)
                }
                Stored::Parts(parts) => parts.iter().map(|p| p.to_vec()).collect(),
            })
            .collect()
    }

    /// Events from index `from` on, each with when it happened (ms since
    /// the Unix epoch).
    pub fn since_timed(&self, from: usize) -> Vec<(u64, RunEvent)> {
        let ev = self.events.lock().expect("event log lock");
        let times = self.times.lock().expect("event log lock");
        ev.iter()
            .zip(times.iter())
            .skip(from)
            .map(|(e, t)| (*t, e.event()))
            .collect()
    }

    /// Events in the log.
    pub fn len(&self) -> usize {
        self.events.lock().expect("event log lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        *self.status.lock().expect("event log lock")
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

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::plan::Plan;
    use fleetform_shared::wire::RunStatus;

    /// Each event as the API sends it, its parts put together.
    fn whole(log: &EventLog) -> Vec<Vec<u8>> {
        log.since_parts(0).into_iter().map(|p| p.concat()).collect()
    }

    #[test]
    fn the_plan_is_shared_while_the_run_goes_on_and_encoded_once_it_ended() {
        let log = EventLog::default();
        let plan = Arc::new(Plan {
            prior_serial: 7,
            ..Plan::default()
        });
        log.push(RunEvent::Planned(plan.clone()));
        match &log.since(0)[..] {
            [RunEvent::Planned(p)] => assert!(Arc::ptr_eq(p, &plan), "a copy of the plan"),
            other => panic!("{other:?}"),
        }
        let encoded = whole(&log);
        assert_eq!(
            encoded,
            vec![encode(&RunEvent::Planned(plan.clone())).into_vec()]
        );
        log.push(RunEvent::Finished {
            status: RunStatus::Succeeded,
            summary: Default::default(),
        });
        log.compact();
        match &log.since(0)[..] {
            [RunEvent::Planned(p), RunEvent::Finished { .. }] => {
                assert!(
                    !Arc::ptr_eq(p, &plan),
                    "the ended run's log still holds the plan"
                );
                assert_eq!(p.prior_serial, 7);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(whole(&log)[0], encoded[0]);
    }

    /// A plan larger than a part is kept in parts once the run has ended:
    /// watchers get the same bytes and the same plan.
    #[test]
    fn a_large_plan_is_kept_in_parts_and_read_back_whole() {
        use fleetform_shared::addr::{AbsResourceInstance, ProviderAddr};
        use fleetform_shared::plan::{Action, ResourceChange};
        let changes = (0..6000)
            .map(|i| {
                let addr: AbsResourceInstance = format!("sim_object.x[{i}]").parse().unwrap();
                ResourceChange::new(addr, ProviderAddr::new("fleetform", "sim"), Action::Create)
            })
            .collect();
        let plan = Arc::new(Plan {
            changes,
            ..Plan::default()
        });
        let log = EventLog::default();
        log.push(RunEvent::Planned(plan.clone()));
        let encoded = whole(&log);
        assert!(encoded[0].len() > PART, "{} bytes", encoded[0].len());
        log.push(RunEvent::Finished {
            status: RunStatus::Succeeded,
            summary: Default::default(),
        });
        log.compact();
        assert!(matches!(
            &log.events.lock().unwrap()[0],
            Stored::Parts(p) if p.len() > 1
        ));
        assert_eq!(whole(&log)[0], encoded[0]);
        match &log.since(0)[..] {
            [RunEvent::Planned(p), RunEvent::Finished { .. }] => assert_eq!(**p, *plan),
            other => panic!("{other:?}"),
        }
    }
}
