//! The event log of a run: every event kept in order, so a watcher that
//! connects late (or reconnects) sees the run from its beginning.

use crate::dispatch::ProgressWatcher;
use fleetform_shared::wire::{ProgressEvent, RunEvent};
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

pub struct EventLog {
    /// The events and when each was pushed.
    body: Mutex<Body>,
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
            body: Mutex::new(Body::Live {
                chunks: Vec::new(),
                packed: 0,
                events: Vec::new(),
                times: Vec::new(),
            }),
            status: Mutex::new(None),
            len: watch::channel(0).0,
            finished: watch::channel(false).0,
            #[cfg(test)]
            observer: Mutex::new(None),
        }
    }
}

enum Body {
    /// Each event as the API sends it (MessagePack with field names): in
    /// memory a quarter of its size as a value (an apply of 100,000
    /// instances held 100 MB of events as values), and encoded once however
    /// many watch. The plan is the exception while the run goes on.
    Live {
        /// The older events, packed [`CHUNK`] at a time as they come.
        chunks: Vec<Chunk>,
        /// Events in `chunks`: `events` start at this index.
        packed: usize,
        /// The newer events, as pushed.
        events: Vec<Stored>,
        /// When each event was pushed (ms since the Unix epoch), for the
        /// live view's durations and rates; same length as `events`.
        times: Vec<u64>,
    },
    /// An ended run's events, packed ([`EventLog::pack`]).
    Packed { bytes: Arc<[u8]>, count: usize },
    /// Packed and written to a file ([`EndedLogs`]): none of it in memory.
    Spilled {
        file: Arc<SpilledFile>,
        count: usize,
    },
}

/// Where a coordinator keeps its ended runs' packed event logs: files in
/// its data directory, sealed like its journal when encryption at rest is
/// on (the plan in them holds the run's values). In memory, the last few
/// runs' logs were resident after the runs had ended: the heap of a
/// coordinator that applied and destroyed 1,000 instances three times held
/// 1.25 MB where it held 0.37 MB before the first run, 0.29 MB of the
/// difference these logs (heaptrack); at 100,000 instances a log is
/// megabytes.
pub struct EndedLogs {
    dir: std::path::PathBuf,
    sealer: Arc<crate::store::seal::Sealer>,
}

impl EndedLogs {
    /// Logs in `dir`, which is emptied: the runs whose logs a process
    /// left there are no longer kept by anyone (a restarted coordinator
    /// lists ended runs from its journal).
    pub fn new(
        dir: std::path::PathBuf,
        sealer: Arc<crate::store::seal::Sealer>,
    ) -> std::io::Result<EndedLogs> {
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        Ok(EndedLogs { dir, sealer })
    }

    /// Writes a packed log; the file goes when the last reader lets go.
    fn write(&self, packed: Vec<u8>) -> anyhow::Result<SpilledFile> {
        let bytes = self.sealer.seal("an ended run's event log", packed)?;
        // Made on first use: an embedded run never writes one.
        std::fs::create_dir_all(&self.dir)?;
        let path = self
            .dir
            .join(format!("{}.events", uuid::Uuid::new_v4().simple()));
        std::fs::write(&path, bytes)?;
        Ok(SpilledFile {
            path,
            sealer: self.sealer.clone(),
        })
    }
}

/// One ended run's packed log on disk, removed when dropped.
pub struct SpilledFile {
    path: std::path::PathBuf,
    sealer: Arc<crate::store::seal::Sealer>,
}

impl SpilledFile {
    fn read(&self) -> anyhow::Result<Vec<u8>> {
        let data = std::fs::read(&self.path)?;
        Ok(self
            .sealer
            .open("an ended run's event log", &data)?
            .into_owned())
    }
}

impl Drop for SpilledFile {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!(path = %self.path.display(), error = %e, "removing an ended run's event log failed");
        }
    }
}

/// An event as a live log keeps it.
#[derive(Clone)]
enum Stored {
    /// Shared: a watcher takes the events it has not sent yet without
    /// copying them under the lock.
    Encoded(Arc<[u8]>),
    /// The plan, shared with the run that applies it: encoded, it was a
    /// second copy of the plan for the whole apply, and an in-process
    /// watcher (embedded mode) decoded a third.
    Plan(Arc<fleetform_shared::plan::Plan>),
}

/// The size of the parts a large encoded event is sent and packed in.
pub const PART: usize = 1 << 20;

/// An event as a watcher is sent it ([`EventLog::since_outgoing`]).
pub enum Outgoing {
    /// Encoded, in parts of at most [`PART`] bytes.
    Parts(Vec<Vec<u8>>),
    /// The plan, shared with the run: `RunEvent::Planned` of it, to encode.
    Plan(Arc<fleetform_shared::plan::Plan>),
}

/// A live log packs its events this many at a time. A run's events are
/// about three per instance (planned, started, done), 100 to 200 bytes
/// each encoded: a million-instance run held about 500 MB of them in
/// memory until it ended. Packed (LZ4, as an ended log is) they take a
/// fraction of that; a watcher that follows the run reads the newest ones,
/// which are not packed yet, and one that comes late unpacks what it
/// missed, a chunk at a time.
const CHUNK: usize = 4096;

/// Events of a live log, packed: an LZ4 frame of `count` events in
/// [`EventLog::pack`]'s format, where a plan is an event of no parts (the
/// plan stays shared with the run, in `plans`).
#[derive(Clone)]
struct Chunk {
    bytes: Arc<[u8]>,
    count: usize,
    /// The plans among the events, by their place in the chunk.
    plans: Vec<(usize, Arc<fleetform_shared::plan::Plan>)>,
}

impl Chunk {
    fn pack(events: &[Stored], times: &[u64]) -> Chunk {
        let mut out = lz4_flex::frame::FrameEncoder::new(Vec::new());
        let mut plans = Vec::new();
        for (i, (event, time)) in events.iter().zip(times).enumerate() {
            let placeholder = match event {
                Stored::Plan(p) => {
                    plans.push((i, p.clone()));
                    true
                }
                Stored::Encoded(_) => false,
            };
            write_event(&mut out, *time, event, !placeholder)
                .expect("packing into memory cannot fail");
        }
        Chunk {
            bytes: out
                .finish()
                .expect("packing into memory cannot fail")
                .into(),
            count: events.len(),
            plans,
        }
    }

    /// Its events from place `from` on: (time, event).
    fn unpack(&self, from: usize) -> Vec<(u64, Raw)> {
        let mut input = lz4_flex::frame::FrameDecoder::new(&self.bytes[..]);
        let mut plans = self.plans.iter().peekable();
        (0..self.count)
            .filter_map(|i| {
                let (time, parts) =
                    unpack_one(&mut input, i >= from).expect("the log's own events unpack");
                let plan = plans.next_if(|(at, _)| *at == i).map(|(_, p)| p.clone());
                (i >= from).then_some(match plan {
                    Some(p) => (time, Raw::Stored(Stored::Plan(p))),
                    None => (time, Raw::Parts(parts)),
                })
            })
            .collect()
    }
}

/// Writes one event already in parts in the packed format
/// ([`write_event`]); returns the size of its bytes.
fn write_parts(out: &mut impl Write, time: u64, parts: &[Vec<u8>]) -> std::io::Result<usize> {
    out.write_all(&time.to_le_bytes())?;
    for part in parts {
        out.write_all(&(part.len() as u32).to_le_bytes())?;
        out.write_all(part)?;
    }
    out.write_all(&0u32.to_le_bytes())?;
    Ok(parts.iter().map(Vec::len).sum())
}

/// Writes one event in the packed format: its time, its bytes in chunks
/// of at most [`PART`], each after its length (`u32`, little-endian), then
/// a zero length. An event is packed as it is encoded, without first being
/// whole in memory (the plan of 100,000 changes is 45 MB). Without `bytes`
/// the event has no parts (a live chunk's place for a plan). Returns the
/// size of its bytes.
fn write_event(
    out: &mut impl Write,
    time: u64,
    event: &Stored,
    bytes: bool,
) -> std::io::Result<usize> {
    out.write_all(&time.to_le_bytes())?;
    let mut size = 0;
    if bytes {
        let mut chunks = fleetform_shared::parts::Split::new(PART, |chunk| {
            out.write_all(&(chunk.len() as u32).to_le_bytes())?;
            out.write_all(&chunk)
        });
        match event {
            Stored::Encoded(b) => chunks.write_all(b)?,
            Stored::Plan(p) => {
                rmp_serde::encode::write_named(&mut chunks, &RunEvent::Planned(p.clone()))
                    .map_err(std::io::Error::other)?
            }
        }
        size = chunks.finish()?;
    }
    out.write_all(&0u32.to_le_bytes())?;
    Ok(size)
}

/// An event as read from the log: kept, or unpacked in parts.
enum Raw {
    Stored(Stored),
    Parts(Vec<Vec<u8>>),
}

impl Raw {
    fn event(&self) -> RunEvent {
        match self {
            Raw::Stored(Stored::Encoded(b)) => decode(b),
            Raw::Stored(Stored::Plan(p)) => RunEvent::Planned(p.clone()),
            Raw::Parts(parts) => {
                fleetform_shared::parts::decode(parts).expect("the log's own events decode")
            }
        }
    }

    fn parts(self) -> Vec<Vec<u8>> {
        match self {
            Raw::Stored(Stored::Encoded(b)) => vec![b.to_vec()],
            Raw::Stored(Stored::Plan(p)) => {
                fleetform_shared::parts::encode_named(&RunEvent::Planned(p), PART)
            }
            Raw::Parts(parts) => parts,
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

/// Reads the next packed event: its time and its chunks (kept, or skipped).
fn unpack_one(input: &mut impl Read, keep: bool) -> std::io::Result<(u64, Vec<Vec<u8>>)> {
    let mut word = [0u8; 8];
    input.read_exact(&mut word)?;
    let time = u64::from_le_bytes(word);
    let mut parts = Vec::new();
    loop {
        let mut len = [0u8; 4];
        input.read_exact(&mut len)?;
        let len = u32::from_le_bytes(len) as u64;
        if len == 0 {
            return Ok((time, parts));
        }
        if len > PART as u64 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a chunk of {len} bytes"),
            ));
        }
        if keep {
            let mut part = vec![0; len as usize];
            input.read_exact(&mut part)?;
            parts.push(part);
        } else {
            std::io::copy(&mut input.by_ref().take(len), &mut std::io::sink())?;
        }
    }
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
            RunEvent::Planned(plan) => Stored::Plan(plan),
            event => Stored::Encoded(encode(&event).into()),
        };
        let n = {
            let mut body = self.body.lock().expect("event log lock");
            let Body::Live {
                chunks,
                packed,
                events,
                times,
            } = &mut *body
            else {
                // Packed once the run had ended: nothing comes after that.
                tracing::warn!("an event after the end of its run dropped");
                return;
            };
            events.push(stored);
            times.push(now_ms());
            if status.is_some() {
                *self.status.lock().expect("event log lock") = status;
            }
            let n = *packed + events.len();
            // The end stays unpacked: watchers read it last.
            if events.len() >= CHUNK && status.is_none() {
                chunks.push(Chunk::pack(events, times));
                *packed = n;
                events.clear();
                times.clear();
            }
            n
        };
        // The end is told before the length: a watcher woken by the last
        // event's length must find the run finished, or it waits for an
        // event that never comes (and keeps the log). Told the other way
        // round, an API watcher sometimes slipped in between and outlived
        // its client: a soak of 1,000-instance runs kept about one log in
        // five, 70 KB each, for good.
        if status.is_some() {
            self.finished.send_replace(true);
        }
        self.len.send_replace(n);
    }

    /// Once the run has ended: packs its events, compressed (LZ4), for as
    /// long as the log is kept. A coordinator keeps its last few runs'
    /// logs for watchers that come late; as they were (events encoded,
    /// the plan as values) they held 2 to 4 KB per instance of each run,
    /// which a soak of 1,000-instance runs showed as resident memory that
    /// never went back, and which at 100,000 instances is hundreds of MB.
    /// Events keep being read as before, unpacked as they are read. LZ4
    /// (`lz4_flex`, pure Rust, well kept): it packs and unpacks at memory
    /// speed, which matters more here than the last few percent of size.
    /// With `spill`, the packed log goes to a file there and leaves memory
    /// (kept in memory if the file cannot be written).
    pub fn pack(&self, spill: Option<&EndedLogs>) {
        let (chunks, events, times) = match &*self.body.lock().expect("event log lock") {
            Body::Live {
                chunks,
                events,
                times,
                ..
            } if self.is_finished() => (chunks.clone(), events.clone(), times.clone()),
            _ => return,
        };
        // Packed outside the lock: watchers read on meanwhile. The live
        // chunks are unpacked one at a time, a plan in them encoded.
        let started = std::time::Instant::now();
        let mut size = 0;
        let mut count = 0;
        let mut out = lz4_flex::frame::FrameEncoder::new(Vec::new());
        for chunk in &chunks {
            for (time, raw) in chunk.unpack(0) {
                let written = match raw {
                    Raw::Stored(stored) => write_event(&mut out, time, &stored, true),
                    Raw::Parts(parts) => write_parts(&mut out, time, &parts),
                };
                size += written.expect("packing into memory cannot fail");
                count += 1;
            }
        }
        for (event, time) in events.iter().zip(&times) {
            size +=
                write_event(&mut out, *time, event, true).expect("packing into memory cannot fail");
            count += 1;
        }
        let bytes = out.finish().expect("packing into memory cannot fail");
        tracing::info!(
            events = count,
            encoded_bytes = size,
            packed_bytes = bytes.len(),
            took_ms = started.elapsed().as_millis() as u64,
            "ended run's events packed"
        );
        drop((chunks, events));
        let body = match spill.map(|s| s.write(bytes.clone())) {
            Some(Ok(file)) => Body::Spilled {
                file: Arc::new(file),
                count,
            },
            Some(Err(e)) => {
                tracing::warn!(error = %e, "writing an ended run's event log to disk failed; it stays in memory");
                Body::Packed {
                    bytes: bytes.into(),
                    count,
                }
            }
            None => Body::Packed {
                bytes: bytes.into(),
                count,
            },
        };
        *self.body.lock().expect("event log lock") = body;
    }

    /// The events from index `from` on, with their times, as stored; read
    /// outside the lock.
    fn raw(&self, from: usize) -> Vec<(u64, Raw)> {
        /// What the lock is held for: shared parts, read after.
        enum Got {
            Live(Vec<(usize, Chunk)>, Vec<(u64, Raw)>),
            Packed(Arc<[u8]>, usize),
            Spilled(Arc<SpilledFile>, usize),
        }
        let got = match &*self.body.lock().expect("event log lock") {
            Body::Live {
                chunks,
                packed,
                events,
                times,
            } => {
                let mut start = 0;
                let mut needed = Vec::new();
                for chunk in chunks {
                    if start + chunk.count > from {
                        needed.push((from.saturating_sub(start), chunk.clone()));
                    }
                    start += chunk.count;
                }
                let tail = events
                    .iter()
                    .zip(times)
                    .skip(from.saturating_sub(*packed))
                    .map(|(e, t)| (*t, Raw::Stored(e.clone())))
                    .collect();
                Got::Live(needed, tail)
            }
            Body::Packed { bytes, count } => Got::Packed(bytes.clone(), *count),
            Body::Spilled { file, count } => Got::Spilled(file.clone(), *count),
        };
        let (bytes, count) = match got {
            Got::Live(needed, tail) => {
                let mut out = Vec::new();
                for (at, chunk) in needed {
                    out.extend(chunk.unpack(at));
                }
                out.extend(tail);
                return out;
            }
            Got::Packed(bytes, count) => (bytes, count),
            Got::Spilled(file, count) => match file.read() {
                Ok(bytes) => (bytes.into(), count),
                Err(e) => return self.unreadable(&file, e),
            },
        };
        let mut input = lz4_flex::frame::FrameDecoder::new(&bytes[..]);
        (0..count)
            .filter_map(|i| {
                let (time, parts) =
                    unpack_one(&mut input, i >= from).expect("the log's own events unpack");
                (i >= from).then_some((time, Raw::Parts(parts)))
            })
            .collect()
    }

    /// In place of an ended run's events whose file cannot be read (its
    /// data directory damaged, or cleared by hand): an error that says so,
    /// and the end, so a watcher is told instead of waiting forever.
    fn unreadable(&self, file: &SpilledFile, e: anyhow::Error) -> Vec<(u64, Raw)> {
        tracing::error!(path = %file.path.display(), error = %e, "an ended run's event log cannot be read");
        let told = [
            RunEvent::Diagnostics(
                fleetform_shared::diag::Diagnostic::error(
                    "This run's events cannot be read",
                    format!(
                        "The coordinator kept them in {} and cannot read them back: {e:#}. The run itself ended; its state is in the state store.",
                        file.path.display()
                    ),
                )
                .into(),
            ),
            RunEvent::Finished {
                status: self.status().unwrap_or(fleetform_shared::wire::RunStatus::Failed),
                summary: Default::default(),
            },
        ];
        told.into_iter()
            .map(|e| (now_ms(), Raw::Stored(Stored::Encoded(encode(&e).into()))))
            .collect()
    }

    /// Events from index `from` on.
    pub fn since(&self, from: usize) -> Vec<RunEvent> {
        self.raw(from).iter().map(|(_, e)| e.event()).collect()
    }

    /// Events from index `from` on, encoded as the API sends them, each in
    /// parts of at most 1 MiB (one part for almost every event).
    pub fn since_parts(&self, from: usize) -> Vec<Vec<Vec<u8>>> {
        self.raw(from).into_iter().map(|(_, e)| e.parts()).collect()
    }

    /// Events from index `from` on as [`EventLog::since_parts`] gives them,
    /// except the plan of a live run, which is left to the sender to
    /// encode a part at a time as it sends ([`Outgoing::Plan`]): encoded
    /// whole in parts it was as large again as the plan (440 MB at a
    /// million instances) for as long as a watcher took to receive it.
    pub fn since_outgoing(&self, from: usize) -> Vec<Outgoing> {
        self.raw(from)
            .into_iter()
            .map(|(_, e)| match e {
                Raw::Stored(Stored::Plan(p)) => Outgoing::Plan(p),
                e => Outgoing::Parts(e.parts()),
            })
            .collect()
    }

    /// Events from index `from` on, each with when it happened (ms since
    /// the Unix epoch).
    pub fn since_timed(&self, from: usize) -> Vec<(u64, RunEvent)> {
        self.raw(from)
            .iter()
            .map(|(t, e)| (*t, e.event()))
            .collect()
    }

    /// Events in the log.
    pub fn len(&self) -> usize {
        match &*self.body.lock().expect("event log lock") {
            Body::Live { packed, events, .. } => packed + events.len(),
            Body::Packed { count, .. } | Body::Spilled { count, .. } => *count,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Follows the log: the receiver carries its length. Whoever holds
    /// one counts as a watcher of the run (see [`EventLog::watchers`]).
    pub fn subscribe(&self) -> watch::Receiver<usize> {
        self.len.subscribe()
    }

    /// How many follow the log now: the API's watch streams (the CLI that
    /// submitted the run, `fleetform runs watch`) and the live view's
    /// pages, each as long as its client is connected.
    pub fn watchers(&self) -> usize {
        self.len.receiver_count()
    }

    /// Resolves once nobody follows the log (at once if nobody does).
    pub async fn unwatched(&self) {
        self.len.closed().await;
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

    /// Whoever sees the length that counts the end also sees the run
    /// finished: a watcher checks `is_finished` after each length it is
    /// woken by, and waits for the next length otherwise. A thread on the
    /// other core reads the two as the end is pushed, 3,000 times; with
    /// the length told first it found the run unfinished before the
    /// 3,000th try in each of 3 runs here.
    #[test]
    fn the_end_is_told_before_the_length_that_counts_it() {
        for _ in 0..3000 {
            let log = Arc::new(EventLog::default());
            let rx = log.subscribe();
            let go = Arc::new(std::sync::Barrier::new(2));
            let watcher = std::thread::spawn({
                let (log, go) = (log.clone(), go.clone());
                move || {
                    go.wait();
                    loop {
                        if *rx.borrow() == 1 {
                            return log.is_finished();
                        }
                        std::hint::spin_loop();
                    }
                }
            });
            go.wait();
            finish(&log);
            assert!(
                watcher.join().expect("the watcher"),
                "a watcher saw the end's length before the end"
            );
        }
    }

    /// Each event as the API sends it, its parts put together.
    fn whole(log: &EventLog) -> Vec<Vec<u8>> {
        log.since_parts(0).into_iter().map(|p| p.concat()).collect()
    }

    fn finish(log: &EventLog) {
        log.push(RunEvent::Finished {
            status: RunStatus::Succeeded,
            summary: Default::default(),
        });
    }

    #[test]
    fn the_plan_is_shared_while_the_run_goes_on_and_packed_once_it_ended() {
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
        // Not packed while the run goes on.
        log.pack(None);
        assert!(matches!(&*log.body.lock().unwrap(), Body::Live { .. }));
        finish(&log);
        let encoded = whole(&log);
        assert_eq!(
            encoded[0],
            encode(&RunEvent::Planned(plan.clone())).into_vec()
        );
        let times: Vec<u64> = log.since_timed(0).iter().map(|(t, _)| *t).collect();
        log.pack(None);
        assert!(matches!(
            &*log.body.lock().unwrap(),
            Body::Packed { count: 2, .. }
        ));
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
        assert_eq!(whole(&log), encoded);
        let unpacked: Vec<u64> = log.since_timed(0).iter().map(|(t, _)| *t).collect();
        assert_eq!(unpacked, times);
        assert_eq!(log.len(), 2);
        assert!(matches!(&log.since(1)[..], [RunEvent::Finished { .. }]));
        assert!(log.since(2).is_empty());
    }

    fn sealer(key: Option<&str>) -> Arc<crate::store::seal::Sealer> {
        let key = key.map(str::to_string);
        Arc::new(
            crate::store::seal::Sealer::from_vars(
                |k| {
                    (k == "FLEETFORM_ENCRYPTION_KEY")
                        .then(|| key.clone())
                        .flatten()
                },
                |_| Err(std::io::Error::other("no key file in this test")),
            )
            .expect("a sealer"),
        )
    }

    fn files_in(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        match std::fs::read_dir(dir) {
            Ok(entries) => entries.map(|e| e.expect("an entry").path()).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// An ended run's log goes to a file and leaves memory; watchers read
    /// the same events back from it, and the file goes with the log. With a
    /// key, what is on disk is sealed: the plan's values are not in it.
    #[test]
    fn an_ended_log_spilled_to_disk_reads_back_the_same_and_leaves_with_the_log() {
        for key in [None, Some("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")] {
            let tmp = tempfile::tempdir().expect("a temporary directory");
            let dir = tmp.path().join("ended-runs");
            let logs = EndedLogs::new(dir.clone(), sealer(key)).expect("logs");
            let log = EventLog::default();
            let mut plan = Plan {
                prior_serial: 3,
                ..Plan::default()
            };
            plan.variables.insert(
                "marker".into(),
                fleetform_shared::Value::String("a-plan-value-on-disk".into()),
            );
            log.push(RunEvent::Planned(Arc::new(plan)));
            finish(&log);
            let encoded = whole(&log);
            log.pack(Some(&logs));
            assert!(matches!(
                &*log.body.lock().unwrap(),
                Body::Spilled { count: 2, .. }
            ));
            let files = files_in(&dir);
            assert_eq!(files.len(), 1, "{files:?}");
            assert_eq!(whole(&log), encoded);
            assert_eq!(log.len(), 2);
            assert!(matches!(&log.since(1)[..], [RunEvent::Finished { .. }]));
            let on_disk = std::fs::read(&files[0]).expect("the file");
            let plain = lz4_flex::frame::FrameDecoder::new(&on_disk[..])
                .bytes()
                .collect::<Result<Vec<u8>, _>>();
            let readable = plain.is_ok_and(|p| {
                p.windows(b"a-plan-value-on-disk".len())
                    .any(|w| w == b"a-plan-value-on-disk")
            });
            assert_eq!(readable, key.is_none(), "key {key:?}");
            drop(log);
            assert!(files_in(&dir).is_empty(), "the file outlived its log");
        }
    }

    /// A log whose file was lost tells its watchers so, and ends; a new
    /// process's logs start from an empty directory.
    #[test]
    fn a_lost_log_file_is_told_and_ends_the_watch() {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let dir = tmp.path().join("ended-runs");
        let logs = EndedLogs::new(dir.clone(), sealer(None)).expect("logs");
        let log = EventLog::default();
        log.push(RunEvent::Planned(Arc::new(Plan::default())));
        finish(&log);
        log.pack(Some(&logs));
        let files = files_in(&dir);
        std::fs::remove_file(&files[0]).expect("removed");
        match &log.since(0)[..] {
            [RunEvent::Diagnostics(d), RunEvent::Finished { status, .. }] => {
                assert!(d.has_errors());
                assert_eq!(*status, RunStatus::Succeeded);
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(dir.join("left.events"), b"from before").expect("written");
        EndedLogs::new(dir.clone(), sealer(None)).expect("logs");
        assert!(files_in(&dir).is_empty());
    }

    /// A packed log gives watchers the same bytes, a large plan in parts of
    /// at most [`PART`], and holds a fraction of what it held.
    #[test]
    fn a_packed_log_reads_back_the_same_events_in_a_fraction_of_the_memory() {
        use fleetform_shared::addr::{AbsResourceInstance, ProviderAddr};
        use fleetform_shared::plan::{Action, ResourceChange};
        let addrs: Vec<AbsResourceInstance> = (0..6000)
            .map(|i| format!("sim_object.x[{i}]").parse().unwrap())
            .collect();
        let changes = addrs
            .iter()
            .map(|a| {
                ResourceChange::new(
                    a.clone(),
                    ProviderAddr::new("fleetform", "sim"),
                    Action::Create,
                )
            })
            .collect();
        let plan = Arc::new(Plan {
            changes,
            ..Plan::default()
        });
        let log = EventLog::default();
        log.push(RunEvent::Planned(plan.clone()));
        for a in &addrs {
            log.push(RunEvent::ApplyComplete {
                addr: a.clone(),
                deposed: None,
                action: Action::Create,
                op: fleetform_shared::wire::ApplyOp::Create,
                id: Some(format!("id-{a}")),
                elapsed_ms: 3,
                worker: "embedded-1".into(),
            });
        }
        finish(&log);
        let before = whole(&log);
        assert!(before[0].len() > PART, "{} bytes", before[0].len());
        let size: usize = before.iter().map(Vec::len).sum();
        log.pack(None);
        let packed = match &*log.body.lock().unwrap() {
            Body::Packed { bytes, .. } => bytes.len(),
            Body::Live { .. } | Body::Spilled { .. } => panic!("not packed in memory"),
        };
        assert!(packed * 4 < size, "{packed} bytes packed of {size}");
        let plan_parts = &log.since_parts(0)[0];
        assert!(plan_parts.len() > 1);
        assert!(plan_parts.iter().all(|p| p.len() <= PART));
        assert_eq!(whole(&log), before);
        match &log.since(0)[..] {
            [RunEvent::Planned(p), .., RunEvent::Finished { .. }] => assert_eq!(**p, *plan),
            other => panic!("{} events", other.len()),
        }
        assert_eq!(log.since(6000).len(), 2);
    }

    /// A live log packs its older events a chunk at a time: any watcher
    /// reads back what was pushed, from any index, with its time; the plan
    /// among them stays shared; the chunks take a fraction of the memory.
    #[test]
    fn a_live_log_packs_its_older_events_and_reads_them_back_from_anywhere() {
        use fleetform_shared::plan::Action;
        let log = EventLog::default();
        let plan = Arc::new(Plan {
            prior_serial: 3,
            ..Plan::default()
        });
        let done = |i: usize| RunEvent::ApplyComplete {
            addr: format!("sim_object.x[{i}]").parse().unwrap(),
            deposed: None,
            action: Action::Create,
            op: fleetform_shared::wire::ApplyOp::Create,
            id: Some(format!("id-{i}")),
            elapsed_ms: i as u64,
            worker: "w1".into(),
        };
        let mut pushed = Vec::new();
        for i in 0..(2 * CHUNK + 100) {
            let event = if i == CHUNK + 7 {
                RunEvent::Planned(plan.clone())
            } else {
                done(i)
            };
            pushed.push(event.clone());
            log.push(event);
        }
        let encoded: usize = pushed.iter().map(|e| encode(e).len()).sum();
        let held = match &*log.body.lock().unwrap() {
            Body::Live {
                chunks,
                packed,
                events,
                ..
            } => {
                assert_eq!((chunks.len(), *packed, events.len()), (2, 2 * CHUNK, 100));
                chunks.iter().map(|c| c.bytes.len()).sum::<usize>()
            }
            _ => panic!("not live"),
        };
        assert!(
            held * 4 < encoded,
            "{held} bytes held for {encoded} encoded"
        );
        assert_eq!(log.len(), pushed.len());
        for from in [
            0,
            1,
            CHUNK - 1,
            CHUNK,
            CHUNK + 7,
            CHUNK + 8,
            2 * CHUNK,
            2 * CHUNK + 99,
        ] {
            assert_eq!(log.since(from), pushed[from..], "from {from}");
        }
        assert!(log.since(pushed.len()).is_empty());
        match &log.since(CHUNK + 7)[0] {
            RunEvent::Planned(p) => assert!(Arc::ptr_eq(p, &plan), "a copy of the plan"),
            other => panic!("{other:?}"),
        }
        let times: Vec<u64> = log.since_timed(0).iter().map(|(t, _)| *t).collect();
        assert_eq!(times.len(), pushed.len());
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "times in order");
        // Ended and packed: the same events, the same times.
        finish(&log);
        let before = whole(&log);
        log.pack(None);
        assert!(matches!(&*log.body.lock().unwrap(), Body::Packed { .. }));
        assert_eq!(whole(&log), before);
        let after: Vec<u64> = log.since_timed(0).iter().map(|(t, _)| *t).collect();
        assert_eq!(after[..times.len()], times[..]);
        assert_eq!(log.since(CHUNK + 7)[0], RunEvent::Planned(plan));
    }

    /// An event pushed after the run's log was packed is dropped, not
    /// mixed into it.
    #[test]
    fn nothing_is_added_to_a_packed_log() {
        let log = EventLog::default();
        finish(&log);
        log.pack(None);
        log.push(RunEvent::Diagnostics(Default::default()));
        assert_eq!(log.len(), 1);
        assert_eq!(log.since(0).len(), 1);
    }
}
