//! Runs in the object store while they apply: what a coordinator on
//! another host needs to finish a run whose coordinator died with its disk,
//! and what makes the state readable mid-run.
//!
//! Per run, beside the workspace's snapshots:
//! - `<ws>/runs/<run_id>/run`: the [`JournaledRun`] (request, plan, the
//!   serial it started from), packed with LZ4, written when the apply
//!   starts;
//! - `<ws>/runs/<run_id>/seg/<n>`: [`Segment`]s, each the state changes,
//!   results and operations in flight since the one before, written every
//!   N operations or T seconds ([`SegmentPolicy`]). A segment costs what its
//!   window holds, whatever the size of the state.
//!
//! All of it is deleted once the run's snapshot is stored. The local redb
//! journal stays the record a run commits to before moving on; the archive
//! trails it by at most one window.

use super::journal::{Intent, JournaledRun};
use super::{Head, StoreError};
use fleetform_shared::state::{State, StateDelta};
use fleetform_shared::wire::TaskResult;
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// When a running apply writes a segment: after `ops` recorded changes or
/// `interval` after the first unwritten one, whichever comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentPolicy {
    pub ops: usize,
    pub interval: Duration,
}

impl Default for SegmentPolicy {
    /// 200 operations or 5 seconds: a few objects a second at most, and
    /// at most 5 seconds of a run that only NATS still holds.
    fn default() -> Self {
        SegmentPolicy {
            ops: 200,
            interval: Duration::from_secs(5),
        }
    }
}

/// What a run recorded in one window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// The serial of the snapshot the run started from: a reader puts the
    /// segments on that snapshot only (without reading the run's record,
    /// which holds the whole plan).
    #[serde(default)]
    pub prior_serial: u64,
    /// State changes, in the order the run applied them.
    pub deltas: Vec<StateDelta>,
    /// Results recorded, by task.
    pub answers: Vec<TaskResult>,
    /// Operations handed to workers (their results may be in a later
    /// segment, or still to come).
    pub intents: Vec<(String, Intent)>,
}

impl Segment {
    fn is_empty(&self) -> bool {
        self.deltas.is_empty() && self.answers.is_empty() && self.intents.is_empty()
    }

    /// Operations recorded: each brings a result, one state change or more.
    fn ops(&self) -> usize {
        self.answers.len().max(self.deltas.len())
    }
}

/// A run read back from the archive.
#[derive(Clone, Debug, PartialEq)]
pub struct ArchivedRun {
    pub workspace: String,
    pub run_id: String,
    pub run: JournaledRun,
    pub segments: Vec<Segment>,
}

#[derive(Clone)]
pub struct RunArchive {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// A `file://` store's directory: a deleted run's directories go too.
    local_dir: Option<std::path::PathBuf>,
    sealer: Arc<super::seal::Sealer>,
}

fn corrupted(key: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupted {
        key: key.to_string(),
        reason: e.to_string(),
    }
}

impl RunArchive {
    pub fn new(
        store: Arc<dyn ObjectStore>,
        prefix: &str,
        local_dir: Option<std::path::PathBuf>,
    ) -> RunArchive {
        RunArchive {
            store,
            prefix: prefix.trim_matches('/').to_string(),
            local_dir,
            sealer: Arc::new(super::seal::Sealer::none()),
        }
    }

    /// Records and segments (resource values) written and read through
    /// `sealer`.
    pub fn with_sealer(mut self, sealer: Arc<super::seal::Sealer>) -> RunArchive {
        self.sealer = sealer;
        self
    }

    fn key(&self, rest: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(rest)
        } else {
            Path::from(format!("{}/{rest}", self.prefix))
        }
    }

    pub async fn put_run(
        &self,
        workspace: &str,
        run_id: &str,
        run: &JournaledRun,
    ) -> Result<(), StoreError> {
        // Packed: it holds the run's whole plan.
        let bytes = fleetform_shared::parts::pack_named(run);
        let key = self.key(&format!("{}/runs/{run_id}/run", super::key_dir(workspace)));
        let bytes = self.sealer.seal(&format!("run record {key}"), bytes)?;
        self.store.put(&key, PutPayload::from(bytes)).await?;
        Ok(())
    }

    pub async fn put_segment(
        &self,
        workspace: &str,
        run_id: &str,
        n: u64,
        segment: &Segment,
    ) -> Result<(), StoreError> {
        let bytes = rmp_serde::to_vec_named(segment).map_err(StoreError::cache)?;
        let key = self.key(&format!(
            "{}/runs/{run_id}/seg/{n:010}",
            super::key_dir(workspace)
        ));
        let bytes = self.sealer.seal(&format!("run segment {key}"), bytes)?;
        self.store.put(&key, PutPayload::from(bytes)).await?;
        Ok(())
    }

    /// Deletes a run's archive: its segments, then its record.
    pub async fn delete(&self, workspace: &str, run_id: &str) -> Result<(), StoreError> {
        self.delete_segments(workspace, run_id).await?;
        let driver = self.key(&format!(
            "{}/runs/{run_id}/driver",
            super::key_dir(workspace)
        ));
        super::delete_object(self.store.as_ref(), &driver).await?;
        let key = self.key(&format!("{}/runs/{run_id}/run", super::key_dir(workspace)));
        super::delete_object(self.store.as_ref(), &key).await?;
        if let Some(dir) = &self.local_dir {
            let runs = dir.join(&self.prefix).join(workspace).join("runs");
            let _ = std::fs::remove_dir_all(runs.join(run_id));
            // Only when no other run is there.
            let _ = std::fs::remove_dir(&runs);
        }
        Ok(())
    }

    /// Records that `owner` drives the run from now on. A coordinator that
    /// takes a run over says so before it resumes the run: the coordinator
    /// it took the run from learns, if it comes back, that the copy of the
    /// run in its own journal is stale (see `recover`).
    pub async fn set_driver(
        &self,
        workspace: &str,
        run_id: &str,
        owner: &str,
    ) -> Result<(), StoreError> {
        let key = self.key(&format!(
            "{}/runs/{run_id}/driver",
            super::key_dir(workspace)
        ));
        self.store
            .put(&key, PutPayload::from(owner.as_bytes().to_vec()))
            .await?;
        Ok(())
    }

    /// Who took the run over last (`None`: nobody; its first coordinator
    /// drives it).
    pub async fn driver(
        &self,
        workspace: &str,
        run_id: &str,
    ) -> Result<Option<String>, StoreError> {
        let key = self.key(&format!(
            "{}/runs/{run_id}/driver",
            super::key_dir(workspace)
        ));
        match self.store.get(&key).await {
            Ok(g) => Ok(Some(
                String::from_utf8_lossy(&g.bytes().await?).into_owned(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Deletes a run's segments (a resumed run writes them again).
    pub async fn delete_segments(&self, workspace: &str, run_id: &str) -> Result<(), StoreError> {
        let prefix = self.key(&format!("{}/runs/{run_id}/seg", super::key_dir(workspace)));
        super::delete_prefix(self.store.as_ref(), &prefix).await
    }

    /// Every archived run: (state key, run id), projects' included.
    pub async fn runs(&self) -> Result<Vec<(String, String)>, StoreError> {
        let root = (!self.prefix.is_empty()).then(|| Path::from(self.prefix.as_str()));
        let top = self.store.list_with_delimiter(root.as_ref()).await?;
        let mut keys = Vec::new();
        for dir in top.common_prefixes {
            match dir.filename() {
                Some(super::PROJECTS_DIR) => {
                    let projects = self.store.list_with_delimiter(Some(&dir)).await?;
                    for project_dir in projects.common_prefixes {
                        let Some(project) = project_dir.filename() else {
                            continue;
                        };
                        let inner = self.store.list_with_delimiter(Some(&project_dir)).await?;
                        keys.extend(inner.common_prefixes.iter().filter_map(|w| {
                            w.filename().map(|w| super::state_key(Some(project), w))
                        }));
                    }
                }
                Some(ws) => keys.push(ws.to_string()),
                None => {}
            }
        }
        let mut out = Vec::new();
        for ws in keys {
            out.extend(
                self.runs_of(&ws)
                    .await?
                    .into_iter()
                    .map(|r| (ws.clone(), r)),
            );
        }
        Ok(out)
    }

    /// Run ids archived in a workspace.
    pub async fn runs_of(&self, workspace: &str) -> Result<Vec<String>, StoreError> {
        let dir = self.key(&format!("{}/runs", super::key_dir(workspace)));
        let listing = self.store.list_with_delimiter(Some(&dir)).await?;
        Ok(listing
            .common_prefixes
            .iter()
            .filter_map(|p| p.filename().map(str::to_string))
            .collect())
    }

    /// A run's record and segments, `None` when it has no record (it
    /// finished meanwhile, or its record was never written).
    pub async fn load(
        &self,
        workspace: &str,
        run_id: &str,
    ) -> Result<Option<ArchivedRun>, StoreError> {
        let key = self.key(&format!("{}/runs/{run_id}/run", super::key_dir(workspace)));
        let bytes = match self.store.get(&key).await {
            Ok(g) => g.bytes().await?,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let bytes = self.sealer.open(&format!("run record {key}"), &bytes)?;
        let run: JournaledRun =
            fleetform_shared::parts::unpack_named(&bytes).map_err(|e| corrupted(&key, e))?;
        let Some(segments) = self.segments(workspace, run_id).await? else {
            return Ok(None);
        };
        Ok(Some(ArchivedRun {
            workspace: workspace.to_string(),
            run_id: run_id.to_string(),
            run,
            segments,
        }))
    }

    /// A run's segments in order; `None` when one went missing while
    /// reading (the run finished and deleted its archive meanwhile).
    async fn segments(
        &self,
        workspace: &str,
        run_id: &str,
    ) -> Result<Option<Vec<Segment>>, StoreError> {
        let prefix = self.key(&format!("{}/runs/{run_id}/seg", super::key_dir(workspace)));
        let mut keys: Vec<Path> = self
            .store
            .list(Some(&prefix))
            .map_ok(|m| m.location)
            .try_collect()
            .await?;
        keys.sort();
        let mut segments = Vec::with_capacity(keys.len());
        for key in keys {
            let bytes = match self.store.get(&key).await {
                Ok(g) => g.bytes().await?,
                // Deleted by a run finishing meanwhile.
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(e.into()),
            };
            let bytes = self.sealer.open(&format!("run segment {key}"), &bytes)?;
            segments.push(rmp_serde::from_slice(&bytes).map_err(|e| corrupted(&key, e))?);
        }
        Ok(Some(segments))
    }

    /// `state` (the workspace's latest snapshot, at `head`) with the
    /// changes of the run applying on top of it so far, if one is.
    pub async fn freshen(
        &self,
        workspace: &str,
        head: Option<&Head>,
        state: &mut State,
    ) -> Result<bool, StoreError> {
        let serial = head.map_or(0, |h| h.serial);
        for run_id in self.runs_of(workspace).await? {
            let Some(segments) = self.segments(workspace, &run_id).await? else {
                continue;
            };
            if segments.first().is_none_or(|s| s.prior_serial != serial) {
                continue;
            }
            for segment in &segments {
                for d in &segment.deltas {
                    state.apply_delta(d);
                }
            }
            return Ok(true);
        }
        Ok(false)
    }
}

enum Msg {
    Record {
        deltas: Vec<StateDelta>,
        answers: Vec<TaskResult>,
    },
    Intents(Vec<(String, Intent)>),
    /// The run's snapshot is stored: delete the archive.
    Discard(tokio::sync::oneshot::Sender<()>),
}

/// Writes a running apply's archive in the background: the run only hands
/// over what it journaled, never waits for the object store.
pub(crate) struct ArchiveWriter {
    tx: tokio::sync::mpsc::UnboundedSender<Msg>,
}

impl ArchiveWriter {
    /// Starts writing run `run_id`'s archive: its record first, and (for a
    /// resumed run, which records everything again) no old segments.
    pub fn start(
        archive: RunArchive,
        policy: SegmentPolicy,
        run_id: &str,
        run: JournaledRun,
        resumed: bool,
    ) -> ArchiveWriter {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(write_loop(
            archive,
            policy,
            run_id.to_string(),
            run,
            resumed,
            rx,
        ));
        ArchiveWriter { tx }
    }

    pub fn record(&self, deltas: Vec<StateDelta>, answers: Vec<TaskResult>) {
        let _ = self.tx.send(Msg::Record { deltas, answers });
    }

    pub fn intents(&self, intents: &[(String, Intent)]) {
        let _ = self.tx.send(Msg::Intents(intents.to_vec()));
    }

    /// The run's snapshot is stored: deletes the archive, and returns once
    /// it is deleted (or deleting failed, which only leaves garbage that a
    /// later reader ignores: its serial is behind the head).
    pub async fn discard(self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.tx.send(Msg::Discard(tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

async fn write_loop(
    archive: RunArchive,
    policy: SegmentPolicy,
    run_id: String,
    run: JournaledRun,
    resumed: bool,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Msg>,
) {
    let ws = run.workspace.clone();
    if resumed && let Err(e) = archive.delete_segments(&ws, &run_id).await {
        tracing::warn!(%run_id, error = %e, "clearing the archived segments of a resumed run failed");
    }
    let mut archived = retry("run record", &run_id, || {
        archive.put_run(&ws, &run_id, &run)
    })
    .await;
    let mut pending = Segment::default();
    let mut n = 0u64;
    let mut deadline: Option<tokio::time::Instant> = None;
    loop {
        let msg = match deadline {
            Some(d) => match tokio::time::timeout_at(d, rx.recv()).await {
                Ok(m) => m,
                Err(_) => {
                    flush(
                        &archive,
                        &ws,
                        &run_id,
                        &mut n,
                        &mut pending,
                        archived,
                        run.prior_serial,
                    )
                    .await;
                    deadline = None;
                    continue;
                }
            },
            None => rx.recv().await,
        };
        match msg {
            Some(Msg::Record { deltas, answers }) => {
                pending.deltas.extend(deltas);
                pending.answers.extend(answers);
            }
            Some(Msg::Intents(i)) => pending.intents.extend(i),
            Some(Msg::Discard(done)) => {
                if let Err(e) = archive.delete(&ws, &run_id).await {
                    tracing::warn!(%run_id, error = %e, "deleting the run's archive failed");
                }
                let _ = done.send(());
                return;
            }
            // The run ended without its snapshot: what is left is written,
            // for whoever finishes it.
            None => {
                flush(
                    &archive,
                    &ws,
                    &run_id,
                    &mut n,
                    &mut pending,
                    archived,
                    run.prior_serial,
                )
                .await;
                return;
            }
        }
        if !archived {
            // The record failed earlier: try again before any segment.
            archived = archive.put_run(&ws, &run_id, &run).await.is_ok();
        }
        if pending.ops() >= policy.ops {
            flush(
                &archive,
                &ws,
                &run_id,
                &mut n,
                &mut pending,
                archived,
                run.prior_serial,
            )
            .await;
            deadline = None;
        } else if deadline.is_none() && !pending.is_empty() {
            deadline = Some(tokio::time::Instant::now() + policy.interval);
        }
    }
}

/// Writes the pending segment. A segment that cannot be written stays
/// pending and goes out with the next one: segments never skip changes.
async fn flush(
    archive: &RunArchive,
    ws: &str,
    run_id: &str,
    n: &mut u64,
    pending: &mut Segment,
    archived: bool,
    prior_serial: u64,
) {
    if pending.is_empty() || !archived {
        return;
    }
    pending.prior_serial = prior_serial;
    match archive.put_segment(ws, run_id, *n + 1, pending).await {
        Ok(()) => {
            *n += 1;
            *pending = Segment::default();
        }
        Err(e) => {
            tracing::warn!(%run_id, error = %e, "writing a state segment failed; it goes out with the next one");
        }
    }
}

async fn retry<F, Fut>(what: &str, run_id: &str, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), StoreError>>,
{
    let mut backoff = Duration::from_millis(100);
    for attempt in 0..3 {
        match f().await {
            Ok(()) => return true,
            Err(e) if attempt == 2 || !e.is_transient() => {
                tracing::warn!(%run_id, error = %e, "writing the {what} to the object store failed; retried with the next segment");
                return false;
            }
            Err(_) => {
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::ProviderAddr;
    use fleetform_shared::state::ObjectState;
    use fleetform_shared::value::Value;
    use fleetform_shared::wire::TaskOutcome;

    fn archive() -> RunArchive {
        RunArchive::new(Arc::new(object_store::memory::InMemory::new()), "p", None)
    }

    fn run(prior_serial: u64) -> JournaledRun {
        JournaledRun {
            workspace: "ws".into(),
            prior_serial,
            resume: None,
        }
    }

    fn created(i: usize) -> StateDelta {
        StateDelta::SetCurrent {
            addr: format!("sim_object.x[{i}]").parse().unwrap(),
            provider: ProviderAddr::new("fleetform", "sim"),
            object: Some(ObjectState::new(Value::object([(
                "id",
                Value::from(format!("id-{i}")),
            )]))),
        }
    }

    fn answer(i: usize) -> TaskResult {
        TaskResult {
            task_id: format!("t{i}"),
            run_id: "r1".into(),
            worker: "w".into(),
            outcome: TaskOutcome::Interrupted { attempt: 0 },
            incarnation: String::new(),
        }
    }

    #[tokio::test]
    async fn a_written_run_reads_back_and_freshens_the_state_it_started_from() {
        let a = archive();
        assert!(a.load("ws", "r1").await.unwrap().is_none());
        a.put_run("ws", "r1", &run(3)).await.unwrap();
        for n in 1..=2 {
            let seg = Segment {
                prior_serial: 3,
                deltas: vec![created(n)],
                answers: vec![answer(n)],
                intents: vec![],
            };
            a.put_segment("ws", "r1", n as u64, &seg).await.unwrap();
        }
        assert_eq!(
            a.runs().await.unwrap(),
            [("ws".to_string(), "r1".to_string())]
        );
        let got = a.load("ws", "r1").await.unwrap().unwrap();
        assert_eq!(got.run, run(3));
        assert_eq!(got.segments.len(), 2);
        assert_eq!(got.segments[1].answers, [answer(2)]);

        let head = Head {
            serial: 3,
            lineage: "l".into(),
        };
        let mut state = State::new("l");
        assert!(a.freshen("ws", Some(&head), &mut state).await.unwrap());
        assert_eq!(state.instance_count(), 2);
        // A run that started from another snapshot says nothing about this one.
        let stale = Head { serial: 4, ..head };
        let mut other = State::new("l");
        assert!(!a.freshen("ws", Some(&stale), &mut other).await.unwrap());
        assert_eq!(other.instance_count(), 0);

        a.delete("ws", "r1").await.unwrap();
        assert!(a.load("ws", "r1").await.unwrap().is_none());
        assert!(a.runs().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn the_writer_writes_a_segment_per_n_operations_or_interval_and_deletes_all_on_discard() {
        let a = archive();
        let policy = SegmentPolicy {
            ops: 2,
            interval: Duration::from_millis(200),
        };
        let w = ArchiveWriter::start(a.clone(), policy, "r1", run(5), false);
        w.record(vec![created(1)], vec![answer(1)]);
        w.record(vec![created(2)], vec![answer(2)]);
        // Two operations: one segment, at once.
        let segs = wait_segments(&a, 1).await;
        assert_eq!(segs[0].deltas, [created(1), created(2)]);
        // Each says which snapshot it goes on.
        assert_eq!(segs[0].prior_serial, 5);
        // One more: written when the interval ends.
        w.record(vec![created(3)], vec![answer(3)]);
        let segs = wait_segments(&a, 2).await;
        assert_eq!(segs[1].answers, [answer(3)]);
        w.discard().await;
        assert!(a.load("ws", "r1").await.unwrap().is_none());

        // A writer dropped without discard (the run ended without its
        // snapshot) writes what it has, for whoever finishes the run.
        let w = ArchiveWriter::start(a.clone(), SegmentPolicy::default(), "r2", run(0), false);
        w.record(vec![created(4)], vec![answer(4)]);
        drop(w);
        let start = tokio::time::Instant::now();
        loop {
            if let Some(r) = a.load("ws", "r2").await.unwrap()
                && r.segments.len() == 1
            {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(5), "never written");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A resumed run starts its segments again.
        let w = ArchiveWriter::start(a.clone(), SegmentPolicy::default(), "r2", run(0), true);
        w.intents(&[]);
        let start = tokio::time::Instant::now();
        while !a
            .load("ws", "r2")
            .await
            .unwrap()
            .unwrap()
            .segments
            .is_empty()
        {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "old segments kept"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(w);
    }

    async fn wait_segments(a: &RunArchive, n: usize) -> Vec<Segment> {
        let start = tokio::time::Instant::now();
        loop {
            if let Some(r) = a.load("ws", "r1").await.unwrap()
                && r.segments.len() >= n
            {
                return r.segments;
            }
            assert!(start.elapsed() < Duration::from_secs(5), "no segment {n}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
