//! The operation journal of runs, in the local redb database beside the
//! snapshot cache: each completed operation's state change and result,
//! durable before its result is acknowledged to the queue and before the
//! operations it makes ready are handed out (in the same write as their
//! intents); the operations in flight; and what a restarted coordinator
//! needs to resume the run.

use super::StoreError;
use fleetform_shared::graph::apply::OpKind;
use fleetform_shared::plan::ResourceChange;
use fleetform_shared::state::StateDelta;
use fleetform_shared::wire::{RunRequest, TaskResult};
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// Key: `<run_id>/<sequence, zero padded>`; value: msgpack [`StateDelta`]s.
const JOURNAL: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("journal");
/// Key: run id; value: msgpack [`JournaledRun`]: runs whose apply started
/// and whose snapshot is not stored yet.
const RUNS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("journal_runs");
/// Key: `<run_id>/<task_id>`; value: msgpack [`Intent`]: operations handed to
/// workers whose results are not recorded yet.
const INTENTS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("journal_intents");
/// Key: run id; value: msgpack [`SubmittedRun`]: runs accepted and not
/// finished, so that a restarted coordinator runs them again.
const SUBMITTED: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("runs_submitted");
/// Key: `<run_id>/<task_id>`; value: msgpack [`TaskResult`]: the results
/// recorded, which a resumed run takes instead of dispatching again.
const ANSWERS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("journal_answers");
/// Key: `<run_id>/<task_id>`; value: empty: operations in flight whose
/// tasks reached the queue. An intent without this mark may never have
/// been published (the coordinator died in between): a resumed run
/// publishes it again rather than wait for a result that cannot come.
const PUBLISHED: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("journal_published");
/// Key: run id; value: msgpack [`EndedRun`]: how the latest runs ended, so
/// `runs list` still shows them after a restart.
const ENDED: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("runs_ended");

/// Key: workspace; value: packed [`RunRequest`]: what background refresh
/// refreshes the workspace with (`run::background`), so that a restarted
/// coordinator goes on refreshing it without waiting for a run there.
const REFRESH_SOURCES: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("refresh_sources");

/// How many ended runs are remembered.
const ENDED_KEPT: usize = 1000;

/// A run that ended, as `runs list` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EndedRun {
    pub workspace: String,
    /// `apply`, `destroy`, `plan`.
    pub operation: String,
    /// `succeeded`, `failed`, ...
    pub status: String,
    /// RFC 3339.
    pub started_at: String,
    pub ended_at: String,
}

/// A run whose apply has started: what a restarted coordinator needs to
/// put the journal on top of the right snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournaledRun {
    pub workspace: String,
    /// The serial of the snapshot the run started from; the run's own
    /// snapshot gets the next one.
    pub prior_serial: u64,
    /// What a restarted coordinator runs to finish the run: the request,
    /// with the plan being applied as its saved plan. `None` in journals
    /// written before runs could resume: those are only recovered.
    #[serde(default)]
    pub resume: Option<Box<RunRequest>>,
}

/// A run accepted and not finished: a restarted coordinator runs it again
/// from the start unless it had started applying (then it is resumed from
/// its journal).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubmittedRun {
    pub workspace: String,
    pub request: RunRequest,
}

/// An operation handed to a worker, with what is needed to record its result
/// should it arrive after a restart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Intent {
    pub change: ResourceChange,
    pub kind: OpKind,
    pub deposed_key: String,
    /// What creation-time provisioners have to do with the operation.
    #[serde(default)]
    pub provisioning: Provisioning,
}

/// What a run recorded and has not written yet: journal rows (sequence,
/// state changes), the operations they answer (task ids, no longer in
/// flight) and those operations' results.
#[derive(Clone, Debug, Default)]
pub struct Pending {
    pub rows: Vec<(u64, Vec<StateDelta>)>,
    pub done: Vec<String>,
    pub results: Vec<TaskResult>,
    /// Operations that reached the queue, so that a restart waits for
    /// their results rather than publishing them again: written with the
    /// next write that has anything else, never on their own.
    pub published: Vec<String>,
}

impl Pending {
    /// Nothing that needs a write: marks of what reached the queue wait for
    /// the next one.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.done.is_empty() && self.results.is_empty()
    }
}

/// An operation's part in running creation-time provisioners, so that a
/// result recorded after a restart never makes an object look provisioned
/// when it was not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Provisioning {
    #[default]
    None,
    /// A create that provisioners were to follow: its object is recorded
    /// tainted, since they did not run.
    Follow,
    /// The provisioners themselves: if they succeed, the object (recorded
    /// tainted after its create) is made ready.
    Run,
}

/// The operation journal of runs: each completed operation's state change,
/// committed to disk before its result is acknowledged and before the
/// operations it makes ready are handed out, and the operations in flight.
/// Writing costs the same whatever the size of the state. A coordinator that
/// restarts puts the journal of unfinished runs on their snapshot
/// (`run::recover`).
#[derive(Clone)]
pub struct Journal {
    db: Arc<Database>,
    sealer: Arc<super::seal::Sealer>,
    /// Writes by [`Journal::commit`] so far, each flushed to disk.
    commits: Arc<std::sync::atomic::AtomicU64>,
    /// The ids of the runs in [`RUNS`], once read ([`Journal::run_ids`]):
    /// a record holds the run's whole plan (440 MB at a million
    /// instances), and reading the table to learn which runs it holds
    /// read every record in full.
    run_ids: Arc<std::sync::Mutex<Option<std::collections::BTreeSet<String>>>>,
}

/// Creates the journal's tables in a new database.
pub(super) fn create_tables(tx: &redb::WriteTransaction) -> Result<(), StoreError> {
    for table in [
        JOURNAL,
        RUNS,
        INTENTS,
        ANSWERS,
        SUBMITTED,
        ENDED,
        PUBLISHED,
        REFRESH_SOURCES,
    ] {
        tx.open_table(table).map_err(StoreError::cache)?;
    }
    Ok(())
}

impl Journal {
    /// Every row of `table`, decoded: (key, value).
    fn all_rows<T: serde::de::DeserializeOwned>(
        &self,
        table: TableDefinition<'_, &str, &[u8]>,
    ) -> Result<Vec<(String, T)>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::cache)?;
        let table = tx.open_table(table).map_err(StoreError::cache)?;
        let mut out = Vec::new();
        for row in table.iter().map_err(StoreError::cache)? {
            let (k, v) = row.map_err(StoreError::cache)?;
            out.push((k.value().to_string(), self.decode(v.value())?));
        }
        Ok(out)
    }

    /// A run's rows of `table` (keys `<run_id>/<rest>`), decoded, in key
    /// order: (rest, value).
    fn run_rows<T: serde::de::DeserializeOwned>(
        &self,
        table: TableDefinition<'_, &str, &[u8]>,
        run_id: &str,
    ) -> Result<Vec<(String, T)>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::cache)?;
        let table = tx.open_table(table).map_err(StoreError::cache)?;
        let (start, end) = (format!("{run_id}/"), format!("{run_id}0"));
        let mut out = Vec::new();
        for row in table
            .range(start.as_str()..end.as_str())
            .map_err(StoreError::cache)?
        {
            let (k, v) = row.map_err(StoreError::cache)?;
            out.push((
                k.value()[start.len()..].to_string(),
                self.decode(v.value())?,
            ));
        }
        Ok(out)
    }

    /// A row's bytes: sealed when encryption is on (rows hold values).
    fn encode<T: Serialize>(&self, v: &T) -> Result<Vec<u8>, StoreError> {
        let bytes = rmp_serde::to_vec_named(v).map_err(StoreError::cache)?;
        Ok(self.sealer.seal("a journal row", bytes)?)
    }

    /// [`Journal::encode`] packed ([`fleetform_shared::parts::pack_named`]):
    /// for the rows that hold a run's request or plan, which are large (a
    /// million instances' plan encodes to 440 MB, the largest allocation
    /// when a 100,000-instance apply started, heaptrack), and never for the
    /// small rows written with each result.
    fn encode_packed<T: Serialize>(&self, v: &T) -> Result<Vec<u8>, StoreError> {
        let bytes = fleetform_shared::parts::pack_named(v);
        Ok(self.sealer.seal("a journal row", bytes)?)
    }

    /// A row, packed or not.
    fn decode<T: serde::de::DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, StoreError> {
        let bytes = self.sealer.open("a journal row", bytes)?;
        fleetform_shared::parts::unpack_named(&bytes).map_err(StoreError::cache)
    }
}

impl Journal {
    pub fn new(db: Arc<Database>) -> Journal {
        Journal {
            db,
            sealer: Arc::new(super::seal::Sealer::none()),
            commits: Default::default(),
            run_ids: Default::default(),
        }
    }

    /// Rows written and read through `sealer`.
    pub fn with_sealer(mut self, sealer: Arc<super::seal::Sealer>) -> Journal {
        self.sealer = sealer;
        self
    }

    /// Records a run as accepted, before it starts.
    pub fn submitted(&self, run_id: &str, run: &SubmittedRun) -> Result<(), StoreError> {
        let bytes = self.encode_packed(run)?;
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        tx.open_table(SUBMITTED)
            .map_err(StoreError::cache)?
            .insert(run_id, bytes.as_slice())
            .map_err(StoreError::cache)?;
        tx.commit().map_err(StoreError::cache)
    }

    /// Records that a run finished: it is not run again after a restart.
    pub fn finished(&self, run_id: &str) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        tx.open_table(SUBMITTED)
            .map_err(StoreError::cache)?
            .remove(run_id)
            .map_err(StoreError::cache)?;
        tx.commit().map_err(StoreError::cache)
    }

    /// Records how a run ended (and, as [`Journal::finished`], that it is
    /// not run again); only the latest [`ENDED_KEPT`] are kept.
    pub fn ended(&self, run_id: &str, ended: &EndedRun) -> Result<(), StoreError> {
        let bytes = self.encode(ended)?;
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        {
            tx.open_table(SUBMITTED)
                .map_err(StoreError::cache)?
                .remove(run_id)
                .map_err(StoreError::cache)?;
            let mut table = tx.open_table(ENDED).map_err(StoreError::cache)?;
            table
                .insert(run_id, bytes.as_slice())
                .map_err(StoreError::cache)?;
            if table.len().map_err(StoreError::cache)? as usize > ENDED_KEPT {
                let mut all: Vec<(String, String)> = Vec::new();
                for row in table.iter().map_err(StoreError::cache)? {
                    let (k, v) = row.map_err(StoreError::cache)?;
                    let e: EndedRun = self.decode(v.value())?;
                    all.push((e.ended_at, k.value().to_string()));
                }
                all.sort();
                let excess = all.len() - ENDED_KEPT;
                for (_, id) in all.into_iter().take(excess) {
                    table.remove(id.as_str()).map_err(StoreError::cache)?;
                }
            }
        }
        tx.commit().map_err(StoreError::cache)
    }

    /// The runs remembered as ended, by id.
    pub fn ended_runs(&self) -> Result<Vec<(String, EndedRun)>, StoreError> {
        self.all_rows(ENDED)
    }

    /// Sets (or with `None` forgets) what background refresh refreshes
    /// `workspace` with.
    pub fn set_refresh_source(
        &self,
        workspace: &str,
        request: Option<&RunRequest>,
    ) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        {
            let mut table = tx.open_table(REFRESH_SOURCES).map_err(StoreError::cache)?;
            match request {
                Some(r) => {
                    let bytes = self.encode_packed(r)?;
                    table
                        .insert(workspace, bytes.as_slice())
                        .map_err(StoreError::cache)?;
                }
                None => {
                    table.remove(workspace).map_err(StoreError::cache)?;
                }
            }
        }
        tx.commit().map_err(StoreError::cache)
    }

    /// What background refresh refreshes each workspace with, as
    /// [`Journal::set_refresh_source`] left it.
    pub fn refresh_sources(&self) -> Result<Vec<(String, RunRequest)>, StoreError> {
        self.all_rows(REFRESH_SOURCES)
    }

    /// Runs accepted and not finished, oldest id order.
    pub fn unfinished(&self) -> Result<Vec<(String, SubmittedRun)>, StoreError> {
        self.all_rows(SUBMITTED)
    }

    /// Records that `run_id` starts applying (before its first delta).
    pub fn begin(&self, run_id: &str, run: &JournaledRun) -> Result<(), StoreError> {
        let bytes = self.encode_packed(run)?;
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        tx.open_table(RUNS)
            .map_err(StoreError::cache)?
            .insert(run_id, bytes.as_slice())
            .map_err(StoreError::cache)?;
        tx.commit().map_err(StoreError::cache)?;
        // After the commit, under the lock a first reading of the ids
        // holds throughout: that reading saw this run or it is added here.
        if let Some(ids) = self.run_ids.lock().expect("run ids lock").as_mut() {
            ids.insert(run_id.to_string());
        }
        Ok(())
    }

    /// Records operations about to be handed to workers, in one write.
    pub fn intend(&self, run_id: &str, intents: &[(String, Intent)]) -> Result<(), StoreError> {
        self.commit(run_id, &Pending::default(), intents)
    }

    /// The tasks of a run marked as queued ([`Pending::published`]).
    pub fn published_tasks(
        &self,
        run_id: &str,
    ) -> Result<std::collections::HashSet<String>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::cache)?;
        let table = tx.open_table(PUBLISHED).map_err(StoreError::cache)?;
        let (start, end) = (format!("{run_id}/"), format!("{run_id}0"));
        let mut out = std::collections::HashSet::new();
        for row in table
            .range(start.as_str()..end.as_str())
            .map_err(StoreError::cache)?
        {
            let (k, _) = row.map_err(StoreError::cache)?;
            out.insert(k.value()[start.len()..].to_string());
        }
        Ok(out)
    }

    /// Records state changes and, in the same write, the results of the
    /// operations `done` (task ids), no longer in flight.
    pub fn append(
        &self,
        run_id: &str,
        seq: u64,
        deltas: &[StateDelta],
        done: &[String],
        results: &[&TaskResult],
    ) -> Result<(), StoreError> {
        let pending = Pending {
            rows: vec![(seq, deltas.to_vec())],
            done: done.to_vec(),
            results: results.iter().map(|r| (*r).clone()).collect(),
            published: Vec::new(),
        };
        self.commit(run_id, &pending, &[])
    }

    /// One durable write of what a run recorded since its last one (state
    /// changes, results, operations no longer in flight) and of the
    /// operations it is about to hand to workers: an operation that
    /// completes and makes the next ready costs one disk flush, not two.
    pub fn commit(
        &self,
        run_id: &str,
        pending: &Pending,
        intents: &[(String, Intent)],
    ) -> Result<(), StoreError> {
        if pending.is_empty() && intents.is_empty() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let _timed = scopeguard_timer(started);
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        {
            let mut table = tx.open_table(JOURNAL).map_err(StoreError::cache)?;
            for (seq, deltas) in &pending.rows {
                let bytes = self.encode(deltas)?;
                table
                    .insert(format!("{run_id}/{seq:016}").as_str(), bytes.as_slice())
                    .map_err(StoreError::cache)?;
            }
            let mut table = tx.open_table(INTENTS).map_err(StoreError::cache)?;
            for task_id in &pending.done {
                table
                    .remove(format!("{run_id}/{task_id}").as_str())
                    .map_err(StoreError::cache)?;
            }
            for (task_id, intent) in intents {
                let bytes = self.encode(intent)?;
                table
                    .insert(format!("{run_id}/{task_id}").as_str(), bytes.as_slice())
                    .map_err(StoreError::cache)?;
            }
            if !pending.published.is_empty() {
                let mut table = tx.open_table(PUBLISHED).map_err(StoreError::cache)?;
                for id in &pending.published {
                    table
                        .insert(format!("{run_id}/{id}").as_str(), &[][..])
                        .map_err(StoreError::cache)?;
                }
            }
            let mut answers = tx.open_table(ANSWERS).map_err(StoreError::cache)?;
            for result in &pending.results {
                let bytes = self.encode(result)?;
                answers
                    .insert(
                        format!("{run_id}/{}", result.task_id).as_str(),
                        bytes.as_slice(),
                    )
                    .map_err(StoreError::cache)?;
            }
        }
        tx.commit().map_err(StoreError::cache)?;
        self.commits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// [`Journal::commit`] on the one thread that makes every journal
    /// write ([`writer`]), returning at once. `ended` turns true as soon as
    /// the write has ended, durable or failed (the operations it covers go
    /// on as they would have had it failed before they were handed out);
    /// should the write panic, it is dropped unsent. The answer brings back
    /// what was written, and how it went.
    pub fn commit_on_writer(
        &self,
        run_id: &str,
        pending: Pending,
        intents: Vec<(String, Intent)>,
        ended: tokio::sync::watch::Sender<bool>,
    ) -> tokio::sync::oneshot::Receiver<Written> {
        let journal = self.clone();
        let run_id = run_id.to_string();
        let (answer, written) = tokio::sync::oneshot::channel();
        let job: WriteJob = Box::new(move || {
            let result = journal.commit(&run_id, &pending, &intents);
            let _ = ended.send(true);
            let _ = answer.send((result, pending, intents));
        });
        // The thread only ends with the process; a job it cannot take is
        // dropped, and its caller hears so from the dropped answer.
        let _ = writer().send(job);
        written
    }

    /// How many writes [`Journal::commit`] made (each one disk flush).
    pub fn commits(&self) -> u64 {
        self.commits.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The results recorded for a run, by task id.
    pub fn answers(&self, run_id: &str) -> Result<HashMap<String, TaskResult>, StoreError> {
        Ok(self.run_rows(ANSWERS, run_id)?.into_iter().collect())
    }

    /// Drops a run's state changes, keeping its results and operations in
    /// flight: a resumed run derives the changes again from the results,
    /// from the snapshot it started from.
    pub fn reset_deltas(&self, run_id: &str) -> Result<(), StoreError> {
        let (start, end) = (format!("{run_id}/"), format!("{run_id}0"));
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        tx.open_table(JOURNAL)
            .map_err(StoreError::cache)?
            .retain_in(start.as_str()..end.as_str(), |_, _| false)
            .map_err(StoreError::cache)?;
        tx.commit().map_err(StoreError::cache)
    }

    /// Runs that started applying and whose snapshot was not stored.
    pub fn runs(&self) -> Result<Vec<(String, JournaledRun)>, StoreError> {
        self.all_rows(RUNS)
    }

    /// The ids of [`Journal::runs`], without their records: read from the
    /// database once, then kept as runs begin and are cleared.
    pub fn run_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut cached = self.run_ids.lock().expect("run ids lock");
        if cached.is_none() {
            let tx = self.db.begin_read().map_err(StoreError::cache)?;
            let table = tx.open_table(RUNS).map_err(StoreError::cache)?;
            let mut ids = std::collections::BTreeSet::new();
            for row in table.iter().map_err(StoreError::cache)? {
                let (k, _) = row.map_err(StoreError::cache)?;
                ids.insert(k.value().to_string());
            }
            *cached = Some(ids);
        }
        Ok(cached.iter().flatten().cloned().collect())
    }

    /// A run's operations in flight, by task id.
    pub fn intents(&self, run_id: &str) -> Result<Vec<(String, Intent)>, StoreError> {
        self.run_rows(INTENTS, run_id)
    }

    /// Every delta recorded for a run, in order.
    pub fn replay(&self, run_id: &str) -> Result<Vec<StateDelta>, StoreError> {
        let batches: Vec<(String, Vec<StateDelta>)> = self.run_rows(JOURNAL, run_id)?;
        Ok(batches.into_iter().flat_map(|(_, d)| d).collect())
    }

    /// Forgets a run's journal once its snapshot is safely stored.
    pub fn clear(&self, run_id: &str) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        {
            let start = format!("{run_id}/");
            let end = format!("{run_id}0");
            for def in [JOURNAL, INTENTS, ANSWERS, PUBLISHED] {
                tx.open_table(def)
                    .map_err(StoreError::cache)?
                    .retain_in(start.as_str()..end.as_str(), |_, _| false)
                    .map_err(StoreError::cache)?;
            }
            tx.open_table(RUNS)
                .map_err(StoreError::cache)?
                .remove(run_id)
                .map_err(StoreError::cache)?;
        }
        tx.commit().map_err(StoreError::cache)?;
        if let Some(ids) = self.run_ids.lock().expect("run ids lock").as_mut() {
            ids.remove(run_id);
        }
        Ok(())
    }
}

/// What [`Journal::commit_on_writer`] wrote, and how it went.
pub type Written = (Result<(), StoreError>, Pending, Vec<(String, Intent)>);

/// A write for the [`writer`] thread.
type WriteJob = Box<dyn FnOnce() + Send>;

/// The one thread that makes every run's journal writes. The database takes
/// one write at a time anyway; on the runtime's blocking pool, writes
/// spread over threads that each kept a heap and a stack (the soak's
/// coordinator grew by several MB of anonymous memory).
fn writer() -> &'static std::sync::mpsc::Sender<WriteJob> {
    static WRITER: std::sync::OnceLock<std::sync::mpsc::Sender<WriteJob>> =
        std::sync::OnceLock::new();
    WRITER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<WriteJob>();
        std::thread::Builder::new()
            .name("journal-writer".into())
            .spawn(move || {
                // Idle: what a run freed here goes back to the system.
                // Looked at again each second: the run's last write comes
                // before the release its end asks for, and the next run's
                // first may not come for hours.
                serve_writes(&rx, std::time::Duration::from_secs(1), || {
                    crate::memory::collect_when_idle();
                });
            })
            .expect("starting the journal writer thread");
        tx
    })
}

/// Runs the jobs `rx` brings, one at a time, until its senders are gone;
/// calls `idle` after each batch of jobs and after every `every` without
/// one.
fn serve_writes(
    rx: &std::sync::mpsc::Receiver<WriteJob>,
    every: std::time::Duration,
    idle: impl Fn(),
) {
    use std::sync::mpsc::RecvTimeoutError;
    // A write that panics fails alone (its run hears it from its dropped
    // answer); the thread goes on.
    let run = |job: WriteJob| {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    };
    loop {
        match rx.recv_timeout(every) {
            Ok(job) => {
                run(job);
                while let Ok(next) = rx.try_recv() {
                    run(next);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        idle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::open_db;

    /// The writer looks at its idle work while no write comes, not only
    /// after one (a run's end asks for a release after its last write); it
    /// runs the writes that come, survives one that panics, and ends when
    /// nobody can send any more.
    #[test]
    fn the_writer_is_idle_between_writes_too() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (tx, rx) = std::sync::mpsc::channel::<WriteJob>();
        let idles = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let thread = std::thread::spawn({
            let idles = idles.clone();
            move || {
                serve_writes(&rx, std::time::Duration::from_millis(10), || {
                    idles.fetch_add(1, Ordering::Relaxed);
                })
            }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while idles.load(Ordering::Relaxed) < 3 {
            assert!(
                std::time::Instant::now() < deadline,
                "never idle without a write"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        tx.send(Box::new(|| panic!("a write that fails"))).unwrap();
        let d = done.clone();
        tx.send(Box::new(move || {
            d.fetch_add(1, Ordering::Relaxed);
        }))
        .unwrap();
        drop(tx);
        thread
            .join()
            .expect("the writer ends when its senders are gone");
        assert_eq!(done.load(Ordering::Relaxed), 1);
    }
    use fleetform_shared::ProviderAddr;
    use fleetform_shared::state::OutputState;
    use fleetform_shared::value::Value;

    #[test]
    fn journal_replays_in_order_per_run_and_clears() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(open_db(&dir.path().join("j.redb")).unwrap());
        let d = |n: i64| StateDelta::SetOutput {
            name: "x".into(),
            value: Some(OutputState {
                value: Value::int(n),
                sensitive: false,
            }),
        };
        let run = JournaledRun {
            workspace: "default".into(),
            prior_serial: 4,
            resume: None,
        };
        j.begin("run-a", &run).unwrap();
        let intent = |n: i64| Intent {
            change: fleetform_shared::plan::ResourceChange::new(
                format!("null_resource.x[{n}]").parse().unwrap(),
                ProviderAddr::implied("null"),
                fleetform_shared::plan::Action::Create,
            ),
            kind: OpKind::Apply,
            deposed_key: "k".into(),
            provisioning: Provisioning::None,
        };
        j.intend(
            "run-a",
            &[("t1".into(), intent(1)), ("t2".into(), intent(2))],
        )
        .unwrap();
        j.intend("run-ab", &[("t1".into(), intent(3))]).unwrap();
        let answer = TaskResult {
            task_id: "t1".into(),
            run_id: "run-a".into(),
            worker: "w".into(),
            outcome: fleetform_shared::wire::TaskOutcome::Cancelled,
            incarnation: String::new(),
        };
        j.append("run-a", 2, &[d(2)], &["t1".to_string()], &[&answer])
            .unwrap();
        j.append("run-a", 1, &[d(1)], &[], &[]).unwrap();
        j.append("run-ab", 1, &[d(9)], &[], &[]).unwrap();
        assert_eq!(j.replay("run-a").unwrap(), vec![d(1), d(2)]);
        assert_eq!(
            j.answers("run-a").unwrap(),
            HashMap::from([("t1".to_string(), answer.clone())])
        );
        assert!(j.answers("run-ab").unwrap().is_empty());
        j.reset_deltas("run-a").unwrap();
        assert!(j.replay("run-a").unwrap().is_empty(), "changes dropped");
        assert_eq!(j.answers("run-a").unwrap().len(), 1, "results kept");
        assert_eq!(j.replay("run-ab").unwrap(), vec![d(9)]);
        assert_eq!(j.runs().unwrap(), vec![("run-a".to_string(), run)]);
        assert_eq!(
            j.intents("run-a").unwrap(),
            vec![("t2".to_string(), intent(2))],
            "a recorded result ends its intent"
        );
        j.clear("run-a").unwrap();
        assert!(j.replay("run-a").unwrap().is_empty());
        assert!(j.intents("run-a").unwrap().is_empty());
        assert!(j.answers("run-a").unwrap().is_empty());
        assert!(j.runs().unwrap().is_empty());
        assert_eq!(j.replay("run-ab").unwrap(), vec![d(9)]);
        assert_eq!(j.intents("run-ab").unwrap().len(), 1);
    }

    #[test]
    fn run_ids_follow_runs_begun_and_cleared_after_the_first_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.redb");
        let run = |serial| JournaledRun {
            workspace: "default".into(),
            prior_serial: serial,
            resume: None,
        };
        {
            let j = Journal::new(open_db(&path).unwrap());
            // Begun before the ids were ever read: found by the reading.
            j.begin("run-a", &run(1)).unwrap();
            j.begin("run-b", &run(2)).unwrap();
        }
        let j = Journal::new(open_db(&path).unwrap());
        assert_eq!(j.run_ids().unwrap(), vec!["run-a", "run-b"]);
        j.begin("run-c", &run(3)).unwrap();
        j.clear("run-a").unwrap();
        assert_eq!(j.run_ids().unwrap(), vec!["run-b", "run-c"]);
        let listed: Vec<String> = j.runs().unwrap().into_iter().map(|(id, _)| id).collect();
        assert_eq!(j.run_ids().unwrap(), listed, "the same as the records");
    }

    /// A run's record is stored packed; one stored before records were
    /// packed (plain MessagePack) still reads.
    #[test]
    fn run_records_are_packed_and_unpacked_ones_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(open_db(&dir.path().join("j.redb")).unwrap());
        let run = JournaledRun {
            workspace: "default".into(),
            prior_serial: 4,
            resume: None,
        };
        j.begin("new", &run).unwrap();
        let plain = rmp_serde::to_vec_named(&run).unwrap();
        {
            let tx = j.db.begin_write().unwrap();
            tx.open_table(RUNS)
                .unwrap()
                .insert("old", plain.as_slice())
                .unwrap();
            tx.commit().unwrap();
        }
        let tx = j.db.begin_read().unwrap();
        let stored = tx
            .open_table(RUNS)
            .unwrap()
            .get("new")
            .unwrap()
            .unwrap()
            .value()
            .to_vec();
        assert_eq!(stored, fleetform_shared::parts::pack_named(&run));
        assert_eq!(
            j.runs().unwrap(),
            vec![("new".to_string(), run.clone()), ("old".to_string(), run)]
        );
    }
}

#[cfg(test)]
mod ended_tests {
    use super::*;
    use fleetform_shared::wire::{Operation, PlanOptions, RunRequest};

    #[test]
    fn an_ended_run_is_remembered_and_not_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(crate::store::open_db(&dir.path().join("j.redb")).unwrap());
        let request = RunRequest {
            operation: Operation::Apply,
            files: Default::default(),
            variables: Vec::new(),
            auto_approve: true,
            saved_plan: None,
            plan_only: false,
            options: PlanOptions::default(),
            auto_var_files: Vec::new(),
            env_variables: Vec::new(),
            data_files: Default::default(),
            cwd: String::new(),
            source: String::new(),
        };
        j.submitted(
            "r1",
            &SubmittedRun {
                workspace: "ws".into(),
                request,
            },
        )
        .unwrap();
        let ended = EndedRun {
            workspace: "ws".into(),
            operation: "apply".into(),
            status: "succeeded".into(),
            started_at: "2026-11-24T00:00:00Z".into(),
            ended_at: "2026-11-24T00:01:00Z".into(),
        };
        j.ended("r1", &ended).unwrap();
        assert!(j.unfinished().unwrap().is_empty());
        assert_eq!(j.ended_runs().unwrap(), [("r1".to_string(), ended)]);
    }

    /// A write on the writer thread says when it has ended, then answers
    /// with what it wrote; what it wrote is in the journal.
    #[tokio::test]
    async fn a_write_on_the_writer_thread_signals_its_end_and_is_durable() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(crate::store::open_db(&dir.path().join("j.redb")).unwrap());
        let intent = Intent {
            change: fleetform_shared::plan::ResourceChange::new(
                "null_resource.x".parse().unwrap(),
                fleetform_shared::ProviderAddr::implied("null"),
                fleetform_shared::plan::Action::Create,
            ),
            kind: OpKind::Apply,
            deposed_key: "k".into(),
            provisioning: Provisioning::None,
        };
        let (ended, mut signal) = tokio::sync::watch::channel(false);
        let answer = j.commit_on_writer(
            "r",
            Pending::default(),
            vec![("t1".into(), intent.clone())],
            ended,
        );
        signal.wait_for(|e| *e).await.unwrap();
        let (written, pending, intents) = answer.await.unwrap();
        written.unwrap();
        assert!(pending.is_empty());
        assert_eq!(intents, vec![("t1".to_string(), intent.clone())]);
        assert_eq!(j.intents("r").unwrap(), vec![("t1".to_string(), intent)]);
    }

    #[test]
    fn published_marks_are_per_run_and_go_with_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(crate::store::open_db(&dir.path().join("j.redb")).unwrap());
        let marks = |ids: &[&str]| Pending {
            published: ids.iter().map(|i| i.to_string()).collect(),
            ..Pending::default()
        };
        // Marks alone wait for a write that has something else.
        j.commit("r1", &marks(&["t1", "t2"]), &[]).unwrap();
        assert!(j.published_tasks("r1").unwrap().is_empty());
        let with_result = |ids: &[&str], seq: u64| Pending {
            rows: vec![(seq, Vec::new())],
            ..marks(ids)
        };
        j.commit("r1", &with_result(&["t1", "t2"], 1), &[]).unwrap();
        j.commit("r10", &with_result(&["t3"], 1), &[]).unwrap();
        let marked = j.published_tasks("r1").unwrap();
        assert_eq!(marked.len(), 2);
        assert!(marked.contains("t1") && marked.contains("t2"));
        j.clear("r1").unwrap();
        assert!(j.published_tasks("r1").unwrap().is_empty());
        assert_eq!(j.published_tasks("r10").unwrap().len(), 1);
    }
}

/// Records how long a journal write took when dropped (whatever way the
/// write ends).
struct WriteTimer(std::time::Instant);

fn scopeguard_timer(started: std::time::Instant) -> WriteTimer {
    WriteTimer(started)
}

impl Drop for WriteTimer {
    fn drop(&mut self) {
        crate::metrics::journal_write(self.0.elapsed());
    }
}
