//! Task claims in the object store: the record of which delivery of a task
//! that must not run twice takes it up, so exactly one claim of a task is
//! ever answered "first". They live here rather than in JetStream because a
//! queue that loses acknowledged writes (lazy fsync and a power loss, a
//! rolled-back or truncated data file) would forget a claim and let a
//! redelivered task run a second time; the object store is the record.
//!
//! A run's claims are answered by the coordinator that runs it (that holds
//! its workspace's lease), and written in batches: one create-only object
//! per batch, `<prefix>/claims/<run_id>/log/<epoch>/<seq>`, holding every
//! claim that came while the previous batch was being written. One object
//! per claim cost a write each, and the object store's writes per second
//! then bounded a fleet's creates (moto: about 4 ms a write, 1,000 creates
//! took 3.5 s instead of 0.5 s; S3 allows about 3,500 writes a second under
//! one prefix). A batch holds as many claims as came during one write, so
//! the rate of claims follows the rate of writes times the batch size.
//!
//! Why this is safe with more than one coordinator:
//! - Only the run's owner answers, from its map of the run's claims, which
//!   it loads from the store before it answers anything: a task is claimed
//!   at most once per owner.
//! - An answer is given only after the batch holding it is written and
//!   while the owner's lease is still safe to act on (the lease's fence:
//!   two thirds of its time to live since its last renewal began, on this
//!   host's monotonic clock). A contender takes the workspace only after
//!   watching the lease unrenewed for its whole time to live, so every
//!   answered claim is in the store before a new owner lists the run's
//!   claims.
//! - Each owner writes under an epoch of its own, taken with a create-only
//!   marker (`log/<epoch>/owner`) above every epoch it found. A claim a
//!   stale owner wrote but never answered may reach the store after the
//!   new owner listed it; the new owner may then give the task to someone
//!   else under its higher epoch. Reading the log, the claim of the highest
//!   (epoch, batch) wins, which is the answered one: an answered claim was
//!   seen by every later owner, which never claims that task again.
//!
//! A claim may be released ([`ClaimStore::release`]): written again with
//! no claimant, after which the task is free to be claimed anew. Only for
//! a claim whose holder said it never took the task up and never will (a
//! task sent to one worker's process directly, which that process
//! refused, or which reached no process at all): nobody can run it under
//! the released claim. A release is written and read like any claim, so
//! the last word in the log says whether the task is held, and by whom.

use object_store::path::{Path, PathPart};
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};

use super::StoreError;
use fleetform_shared::name::Name;

/// Whether the owner may still act on what it writes: the run's lease is
/// held and not overdue for renewal. Runs without a lease (a workspace
/// taken with `-lock=false`) pass one that is always true.
pub type Fence = Arc<dyn Fn() -> bool + Send + Sync>;

/// How long one claim waits for its batch to be written before it goes
/// unanswered (the worker asks again): well under the worker's own wait
/// for an answer (`CLAIM_ANSWER_WAIT`, 5 s).
const ANSWER_WAIT: Duration = Duration::from_secs(4);

/// Claims written in one object at most; more wait for the next batch.
const BATCH_MAX: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// Another coordinator runs the run, or none does: it answers.
    #[error("run {0} is not run here")]
    NotOwned(String),
    /// The claim is not written yet (the store is out of reach or slow, the
    /// run's claims are still being read), or the lease is overdue: the
    /// worker asks again.
    #[error("claim not recorded yet: {0}")]
    NotYet(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Clone)]
pub struct ClaimStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// The runs this process owns, with their claims.
    owned: Arc<Mutex<HashMap<String, Arc<RunClaims>>>>,
}

/// One run's claims, while this process owns the run.
struct RunClaims {
    fence: Fence,
    state: Mutex<LogState>,
    /// Wakes the writer: claims are waiting.
    wake: Notify,
    /// Bumped after every batch written, and once the log is loaded.
    written: watch::Sender<u64>,
}

#[derive(Default)]
struct LogState {
    loaded: bool,
    /// Task id → its claim. A run of a million instances keeps a million
    /// entries here for the whole apply (an entry is never forgotten while
    /// the run is owned: it is what answers a repeated claim), so they are
    /// kept small: the id boxed to its length, the claimant shared (a
    /// worker process's direct claims all name the same claimant).
    entries: HashMap<Box<str>, Entry>,
    /// Task ids whose claims wait for a batch, in order.
    pending: Vec<String>,
}

struct Entry {
    /// Empty: released.
    claimant: Name,
    written: bool,
}

impl RunClaims {
    /// Waits (for [`ANSWER_WAIT`] at most) until `ready` finds what it
    /// looks for in the log's state, looking again after every batch
    /// written; `NotYet(why)` when it did not in time.
    async fn wait_for<T>(
        &self,
        why: &str,
        mut ready: impl FnMut(&LogState) -> Option<T>,
    ) -> Result<T, ClaimError> {
        // Subscribed before the first look: a batch written in between
        // still wakes the wait.
        let mut written = self.written.subscribe();
        let waited = async {
            loop {
                {
                    let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(found) = ready(&st) {
                        return found;
                    }
                }
                if written.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(ANSWER_WAIT, waited)
            .await
            .map_err(|_| ClaimError::NotYet(why.to_string()))
    }

    /// Whether what was written may be answered: the run's lease is safe.
    fn fenced(&self) -> Result<(), ClaimError> {
        match (self.fence)() {
            true => Ok(()),
            false => Err(ClaimError::NotYet(
                "the run's lease is overdue for renewal".into(),
            )),
        }
    }
}

/// Given by [`ClaimStore::own`]: the run's claims are answered here until
/// it is dropped.
pub struct ClaimGuard {
    claims: ClaimStore,
    run_id: String,
    log: Arc<RunClaims>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        self.task.abort();
        let mut owned = self.claims.owned.lock().unwrap_or_else(|e| e.into_inner());
        if owned
            .get(&self.run_id)
            .is_some_and(|l| Arc::ptr_eq(l, &self.log))
        {
            owned.remove(&self.run_id);
        }
    }
}

impl ClaimStore {
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> ClaimStore {
        ClaimStore {
            store,
            prefix: prefix.trim_matches('/').to_string(),
            owned: Arc::default(),
        }
    }

    /// `<prefix>/claims/<run_id>`: the run's claims.
    fn run_dir(&self, run_id: &str) -> Path {
        let mut parts: Vec<PathPart<'static>> = Vec::new();
        for p in self.prefix.split('/').filter(|p| !p.is_empty()) {
            parts.push(PathPart::from(p.to_string()));
        }
        parts.push(PathPart::from("claims"));
        parts.push(PathPart::from(run_id.to_string()));
        Path::from_iter(parts)
    }

    /// `<run dir>/log/<epoch>/<name>`, numbers zero-padded so names sort.
    fn log_key(&self, run_id: &str, epoch: u64, name: &str) -> Path {
        let dir = self.run_dir(run_id);
        let mut parts: Vec<PathPart<'_>> = dir.parts().collect();
        parts.push(PathPart::from("log"));
        parts.push(PathPart::from(format!("{epoch:010}")));
        parts.push(PathPart::from(name.to_string()));
        Path::from_iter(parts)
    }

    /// This process answers `run_id`'s claims from now until the guard is
    /// dropped: it reads the claims earlier owners wrote (retrying while
    /// the store is out of reach; claims wait meanwhile), takes an epoch
    /// above theirs, and writes new claims in batches. `owner` is written
    /// in the epoch's marker, for people reading the store.
    pub fn own(&self, run_id: &str, owner: &str, fence: Fence) -> ClaimGuard {
        let log = Arc::new(RunClaims {
            fence,
            state: Mutex::default(),
            wake: Notify::new(),
            written: watch::channel(0).0,
        });
        self.owned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(run_id.to_string(), log.clone());
        let task = tokio::spawn({
            let (claims, log) = (self.clone(), log.clone());
            let (run_id, owner) = (run_id.to_string(), owner.to_string());
            async move { claims.keep(&run_id, &owner, &log).await }
        });
        ClaimGuard {
            claims: self.clone(),
            run_id: run_id.to_string(),
            log,
            task,
        }
    }

    /// The run's claims, answered here; `NotOwned` for a run not owned here.
    fn log_of(&self, run_id: &str) -> Result<Arc<RunClaims>, ClaimError> {
        self.owned(run_id)
            .ok_or_else(|| ClaimError::NotOwned(run_id.to_string()))
    }

    fn owned(&self, run_id: &str) -> Option<Arc<RunClaims>> {
        self.owned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(run_id)
            .cloned()
    }

    /// Loads the run's log, then writes its claims as they come.
    async fn keep(&self, run_id: &str, owner: &str, log: &RunClaims) {
        let mut pause = Duration::from_millis(100);
        let epoch = loop {
            match self.load(run_id, owner, log).await {
                Ok(epoch) => break epoch,
                Err(e) => {
                    tracing::warn!(%run_id, error = %e, "reading the run's task claims failed; retrying (claims wait meanwhile)");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
            }
        };
        log.written.send_modify(|n| *n += 1);
        let mut seq = 0u64;
        pause = Duration::from_millis(100);
        loop {
            let batch: Vec<(String, String)> = {
                let mut st = log.state.lock().unwrap_or_else(|e| e.into_inner());
                let n = st.pending.len().min(BATCH_MAX);
                let ids: Vec<String> = st.pending.drain(..n).collect();
                ids.into_iter()
                    .filter_map(|id| {
                        let claimant = st.entries.get(id.as_str())?.claimant.to_string();
                        Some((id, claimant))
                    })
                    .collect()
            };
            if batch.is_empty() {
                log.wake.notified().await;
                continue;
            }
            let key = self.log_key(run_id, epoch, &format!("{seq:012}"));
            seq += 1;
            let body = match rmp_serde::to_vec(&batch) {
                Ok(b) => b,
                Err(e) => {
                    tracing::error!(%run_id, error = %e, "encoding task claims failed; they stay unanswered");
                    continue;
                }
            };
            let put = self
                .store
                .put_opts(&key, PutPayload::from(body), create_only())
                .await;
            let failed = {
                let mut st = log.state.lock().unwrap_or_else(|e| e.into_inner());
                match put {
                    Ok(_) => {
                        // An entry changed since it was taken into the
                        // batch (released, then claimed again) waits for
                        // its own batch.
                        for (id, claimant) in &batch {
                            if let Some(e) = st.entries.get_mut(id.as_str())
                                && e.claimant == *claimant
                            {
                                e.written = true;
                            }
                        }
                        None
                    }
                    Err(e) => {
                        // Written or not, the claims are written again
                        // under the next number: the log's reader takes
                        // the last.
                        let ids = batch.into_iter().map(|(id, _)| id);
                        let rest = std::mem::take(&mut st.pending);
                        st.pending = ids.chain(rest).collect();
                        Some(e)
                    }
                }
            };
            match failed {
                None => {
                    pause = Duration::from_millis(100);
                    log.written.send_modify(|n| *n += 1);
                }
                Some(e) => {
                    tracing::warn!(%run_id, error = %e, "writing task claims failed; retrying (their workers wait)");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// Reads every claim written for the run, and takes an epoch above
    /// every earlier owner's.
    async fn load(&self, run_id: &str, owner: &str, log: &RunClaims) -> Result<u64, StoreError> {
        use futures::{StreamExt, TryStreamExt};
        use object_store::ObjectStoreExt;
        let dir = self.run_dir(run_id);
        let listed: Vec<_> = self.store.list(Some(&dir)).try_collect().await?;
        let mut top = 0u64;
        let mut batches: Vec<((u64, u64), Path)> = Vec::new();
        for meta in listed {
            let Some(rest) = meta.location.prefix_match(&dir) else {
                continue;
            };
            let rest: Vec<String> = rest.map(|p| p.as_ref().to_string()).collect();
            // Anything else under the run's directory is not ours to read.
            let [log_dir, epoch, name] = rest.as_slice() else {
                continue;
            };
            let Ok(epoch) = epoch.parse::<u64>() else {
                continue;
            };
            if log_dir != "log" {
                continue;
            }
            top = top.max(epoch);
            if let Ok(seq) = name.parse::<u64>() {
                batches.push(((epoch, seq), meta.location));
            }
        }
        batches.sort();
        let read: Vec<Vec<(String, String)>> = futures::stream::iter(batches)
            .map(|(_, key)| async move {
                let bytes = self.store.get(&key).await?.bytes().await?;
                rmp_serde::from_slice::<Vec<(String, String)>>(&bytes).map_err(|e| {
                    StoreError::Corrupted {
                        key: key.to_string(),
                        reason: e.to_string(),
                    }
                })
            })
            .buffered(16)
            .try_collect()
            .await?;
        let mut epoch = top + 1;
        loop {
            let marker = self.log_key(run_id, epoch, "owner");
            let body = PutPayload::from(owner.as_bytes().to_vec());
            match self.store.put_opts(&marker, body, create_only()).await {
                Ok(_) => break,
                Err(
                    object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. },
                ) => epoch += 1,
                Err(e) => return Err(e.into()),
            }
        }
        let mut st = log.state.lock().unwrap_or_else(|e| e.into_inner());
        let count: usize = read.iter().map(Vec::len).sum();
        // Claims that came while the log was read wait for it, and yield to
        // what it says.
        let waiting: Vec<(String, Name)> = st
            .pending
            .iter()
            .filter_map(|id| Some((id.clone(), st.entries.get(id.as_str())?.claimant.clone())))
            .collect();
        st.entries.clear();
        st.pending.clear();
        for (id, claimant) in read.into_iter().flatten() {
            st.entries.insert(
                id.into_boxed_str(),
                Entry {
                    claimant: Name::new(&claimant),
                    written: true,
                },
            );
        }
        for (id, claimant) in waiting {
            // Free by the log: never claimed, or released last.
            if st
                .entries
                .get(id.as_str())
                .is_none_or(|e| e.claimant.is_empty())
            {
                st.entries.insert(
                    id.as_str().into(),
                    Entry {
                        claimant,
                        written: false,
                    },
                );
                st.pending.push(id);
            }
        }
        st.loaded = true;
        tracing::info!(%run_id, epoch, claims = count, "the run's task claims read");
        Ok(epoch)
    }

    /// Deletes an ended run's claims, unless one was written less than
    /// `kept` ago: a run that claims still goes on somewhere (another
    /// coordinator took it over), and a claim deleted under it would let
    /// a task delivered again run twice. Returns how many objects were
    /// deleted, or None when the run's claims are kept for now.
    pub async fn collect(&self, run_id: &str, kept: Duration) -> Result<Option<usize>, StoreError> {
        use futures::TryStreamExt;
        use object_store::ObjectStoreExt;
        if self.owned(run_id).is_some() {
            return Ok(None);
        }
        let dir = self.run_dir(run_id);
        let claims: Vec<_> = self.store.list(Some(&dir)).try_collect().await?;
        if claims.is_empty() {
            return Ok(Some(0));
        }
        // Ages by the store's clock, which stamped the claims: this host's
        // clock, stepped ahead, would make a claim of a run that goes on
        // elsewhere look old.
        let now = self.store_now().await?;
        let young = claims.iter().any(|c| {
            now.duration_since(std::time::SystemTime::from(c.last_modified))
                .map_or(true, |age| age < kept)
        });
        if young {
            return Ok(None);
        }
        for claim in &claims {
            match self.store.delete(&claim.location).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Some(claims.len()))
    }

    /// "Now" by the object store's clock: the time it gives an object
    /// written now (`<prefix>/claims/_now`).
    async fn store_now(&self) -> Result<std::time::SystemTime, StoreError> {
        use object_store::ObjectStoreExt;
        let key = self.run_dir("_now");
        self.store.put(&key, PutPayload::from_static(b"")).await?;
        Ok(self.store.head(&key).await?.last_modified.into())
    }

    /// Records that `claimant` (a worker and its delivery's attempt id)
    /// takes the task up: `true` when this is the task's first claim, or
    /// the same claimant's claim recorded before (its answer was lost);
    /// `false` when someone else claimed it. Answered only once the claim
    /// is written and the run's lease is safe; only for a run owned here.
    pub async fn claim(
        &self,
        run_id: &str,
        task_id: &str,
        claimant: &str,
    ) -> Result<bool, ClaimError> {
        let log = self.log_of(run_id)?;
        // A request without an attempt id is never anyone's again: its
        // claimant is made unique.
        let anonymous;
        let claimant = if claimant.is_empty() {
            anonymous = anonymous_claimant();
            anonymous.as_str()
        } else {
            claimant
        };
        loop {
            {
                let mut st = log.state.lock().unwrap_or_else(|e| e.into_inner());
                // Free: never claimed, or released (written so: a release
                // not written yet is a claim still held, as far as the
                // store says).
                let free = match st.entries.get(task_id) {
                    None => true,
                    Some(e) => e.claimant.is_empty() && e.written,
                };
                if free {
                    st.entries.insert(
                        task_id.into(),
                        Entry {
                            claimant: Name::new(claimant),
                            written: false,
                        },
                    );
                    st.pending.push(task_id.to_string());
                }
            }
            log.wake.notify_one();
            log.wait_for("its batch is not written", |st| {
                (st.loaded && st.entries.get(task_id).is_some_and(|e| e.written)).then_some(())
            })
            .await?;
            log.fenced()?;
            // Whoever's claim the entry holds (an earlier owner's, read
            // from the log meanwhile, wins over one made while it was
            // read). A release that was being written when this asked is
            // written now: the task is free, and asked for again.
            let st = log.state.lock().unwrap_or_else(|e| e.into_inner());
            match st.entries.get(task_id) {
                Some(e) if e.claimant.is_empty() => continue,
                e => return Ok(e.map(|e| e.claimant.as_str()) == Some(claimant)),
            }
        }
    }

    /// Releases the task's claim if `claimant` holds it: the task may be
    /// claimed anew once this returns `Ok(true)` (the release is written,
    /// under a lease still safe). `Ok(false)`: someone else holds it, or
    /// nobody does; nothing changed. Only for a claim whose holder can no
    /// longer take the task up (see the module's notes).
    pub async fn release(
        &self,
        run_id: &str,
        task_id: &str,
        claimant: &str,
    ) -> Result<bool, ClaimError> {
        let log = self.log_of(run_id)?;
        if claimant.is_empty() {
            return Ok(false);
        }
        log.wait_for("the run's claims are being read", |st| {
            st.loaded.then_some(())
        })
        .await?;
        {
            let mut st = log.state.lock().unwrap_or_else(|e| e.into_inner());
            match st.entries.get_mut(task_id) {
                Some(e) if e.claimant == claimant && e.written => {
                    e.claimant = Name::default();
                    e.written = false;
                }
                _ => return Ok(false),
            }
            st.pending.push(task_id.to_string());
        }
        log.wake.notify_one();
        log.wait_for("its release is not written", |st| {
            match st.entries.get(task_id) {
                // Not written yet.
                Some(e) if e.claimant.is_empty() && !e.written => None,
                // Written; or claimed again meanwhile, which only a written
                // release allows.
                _ => Some(()),
            }
        })
        .await?;
        log.fenced()?;
        Ok(true)
    }

    /// Who holds the task's claim (`<worker> <attempt>`), if anyone does;
    /// only for a run owned here, once its claims are read (waited for
    /// a while).
    pub async fn holder(&self, run_id: &str, task_id: &str) -> Result<Option<String>, ClaimError> {
        let log = self.log_of(run_id)?;
        log.wait_for("the run's claims are being read", |st| {
            st.loaded.then(|| {
                st.entries
                    .get(task_id)
                    .filter(|e| !e.claimant.is_empty())
                    .map(|e| e.claimant.to_string())
            })
        })
        .await
    }
}

/// A claimant nobody else can be: `anonymous <time> <count>`.
fn anonymous_claimant() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    format!("anonymous {now}-{n}-{}", std::process::id())
}

fn create_only() -> PutOptions {
    PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    }
}

/// The worker part of a claimant (`<worker> <attempt>`); the whole of an
/// old request's claimant, which had no attempt id.
pub fn claimant_worker(claimant: &str) -> &str {
    claimant.rsplit_once(' ').map_or(claimant, |(w, _)| w)
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
