//! Workspace locks as leases in the object store, beside the state they
//! guard: `<prefix>/<workspace>/lock` names its holder (lock id, owner, run,
//! operation, since when) and when it expires. The holder renews it well
//! before then; a holder that died loses it once it expires, and whoever
//! takes it over does so by a conditional write on the expired object, so
//! two never both win. A snapshot is written only while the writer still
//! holds its lease (fencing): a coordinator that lost its lease cannot
//! overwrite the state of the one that took it over.
//!
//! Decision: the object store rather than NATS KV, because the state lives
//! there and embedded mode (no NATS) needs locks too.
//!
//! Expiry does not trust clocks to agree: a lock is taken over only once
//! this process has seen the same lock object, unrenewed, for its time to
//! live on its own monotonic clock. The `expires` a holder writes is a
//! hint: a lock whose `expires` has passed is watched for that long
//! before it is taken (a contender whose clock was stepped forward waits,
//! it does not take a live lock); one whose `expires` has not passed is
//! held, however long it has gone unrenewed, until watched that long too
//! (a holder whose clock was stepped forward is not kept forever). The
//! holder, for its part, counts its lease from when its last renewal
//! began, on its monotonic clock (`run/lock.rs`).

use super::StoreError;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Who holds a workspace's lock, as `fleetform force-unlock` and the
/// "Error acquiring the state lock" message show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    /// The lock's id: what `force-unlock` takes.
    pub id: String,
    /// The process holding it: `coordinator@host:pid` or `embedded@host:pid`.
    pub owner: String,
    pub run_id: String,
    /// `plan`, `apply`, `destroy`, `taint`...
    pub operation: String,
    /// When it was taken (RFC 3339).
    pub created: String,
    /// Unix seconds after which it may be taken over, by the holder's
    /// clock: a hint (see the module's documentation).
    pub expires: u64,
    /// How long the lock lives unrenewed (milliseconds), as its holder
    /// took it; contenders watch it this long. Absent in locks written
    /// before 2026-11-28: the contender's own time to live then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
}

/// A lock this process holds, with the version of the lock object it wrote
/// last (the fencing token).
#[derive(Clone, Debug)]
pub struct Lease {
    pub workspace: String,
    pub info: LockInfo,
    version: UpdateVersion,
}

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("the workspace is locked")]
    Held(LockInfo),
    #[error("the lock was lost: another process took it over after it expired")]
    Lost,
    #[error("no lock with id {0} is held on this workspace")]
    NotHeld(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl LeaseError {
    /// Whether waiting may mend it (see [`StoreError::is_transient`]).
    pub fn is_transient(&self) -> bool {
        matches!(self, LeaseError::Store(e) if e.is_transient())
    }
}

impl From<object_store::Error> for LeaseError {
    fn from(e: object_store::Error) -> LeaseError {
        LeaseError::Store(e.into())
    }
}

/// Whether two lock owners (`name@host:pid`) are one coordinator across a
/// restart: the same name on the same host, whatever the process id.
pub fn same_holder(a: &str, b: &str) -> bool {
    let identity = |o: &str| o.rsplit_once(':').map_or(o, |(id, _)| id).to_string();
    identity(a) == identity(b)
}

/// Whether `owner` is an embedded-mode process on this host that is no
/// longer running. Such a process holds its lock only while it lives, as
/// Terraform's local backend holds a file lock the system drops when the
/// process ends: a `fleetform apply | head -1` killed by SIGPIPE mid-run
/// must not leave its directory locked for the lease's 30 seconds. A
/// process id now used by another program counts as gone; a coordinator's
/// lock (a fleet, maybe another host) waits for its lease as before.
pub fn embedded_holder_gone(owner: &str) -> bool {
    let Some(rest) = owner.strip_prefix("embedded@") else {
        return false;
    };
    let Some((host, pid)) = rest.rsplit_once(':') else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    let here = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    if here.is_empty() || host != here {
        return false;
    }
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        // argv[0]: a fleetform binary (any path, any name with it).
        Ok(cmdline) => {
            let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
            !String::from_utf8_lossy(argv0).contains("fleetform")
        }
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[derive(Clone)]
pub struct LeaseStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// The store has conditional updates (S3, memory); `file://` has only
    /// conditional creates, which a single host's processes make do with.
    cas_update: bool,
    /// Each workspace's lock object as this process last saw it, and since
    /// when (monotonic) it has been the same.
    seen: Arc<std::sync::Mutex<std::collections::HashMap<String, (String, Instant)>>>,
}

/// How often [`LeaseStore::acquire`] looks again at a lock it watches.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// What tells one writing of a lock object from another.
fn identity(info: &LockInfo, version: &UpdateVersion) -> String {
    format!(
        "{}|{}|{:?}|{:?}",
        info.id, info.expires, version.e_tag, version.version
    )
}

impl LeaseStore {
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str, cas_update: bool) -> LeaseStore {
        LeaseStore {
            store,
            prefix: prefix.trim_matches('/').to_string(),
            cas_update,
            seen: Arc::default(),
        }
    }

    /// Notes the lock object of `workspace` as read or written now; how
    /// long it has been the same, as far as this process has seen.
    fn watch(&self, workspace: &str, info: &LockInfo, version: &UpdateVersion) -> Duration {
        let id = identity(info, version);
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let entry = seen
            .entry(workspace.to_string())
            .or_insert_with(|| (id.clone(), Instant::now()));
        if entry.0 != id {
            *entry = (id, Instant::now());
        }
        entry.1.elapsed()
    }

    /// Whether `held` has gone unrenewed for its time to live, by this
    /// process's watch (see [`LeaseStore::watch`]), or its holder was an
    /// embedded process on this host that has ended.
    fn stale(
        &self,
        workspace: &str,
        held: &LockInfo,
        version: &UpdateVersion,
        ttl: Duration,
    ) -> bool {
        let ttl = held.ttl_ms.map_or(ttl, Duration::from_millis);
        self.watch(workspace, held, version) >= ttl || embedded_holder_gone(&held.owner)
    }

    fn key(&self, workspace: &str) -> Path {
        let dir = super::key_dir(workspace);
        if self.prefix.is_empty() {
            Path::from(format!("{dir}/lock"))
        } else {
            Path::from(format!("{}/{dir}/lock", self.prefix))
        }
    }

    /// The lock of a workspace, if any (expired or not), and its version.
    async fn read(&self, workspace: &str) -> Result<Option<(LockInfo, UpdateVersion)>, LeaseError> {
        let key = self.key(workspace);
        let got = match self.store.get(&key).await {
            Ok(g) => g,
            Err(e) if super::absent(&e) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let version = UpdateVersion {
            e_tag: got.meta.e_tag.clone(),
            version: got.meta.version.clone(),
        };
        let bytes = got.bytes().await?;
        let info = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupted {
            key: key.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Some((info, version)))
    }

    /// Who holds the workspace's lock, if anyone does: a lock this process
    /// has watched go unrenewed for its time to live counts as nobody
    /// (`ttl` for a lock that does not say its own).
    pub async fn holder_within(
        &self,
        workspace: &str,
        ttl: Duration,
    ) -> Result<Option<LockInfo>, LeaseError> {
        Ok(match self.read(workspace).await? {
            Some((info, version)) if !self.stale(workspace, &info, &version, ttl) => Some(info),
            _ => None,
        })
    }

    /// [`LeaseStore::holder_within`] the time to live of fleetform's locks
    /// (`--lock-ttl`'s default; a lock says its own since 2026-11-28).
    pub async fn holder(&self, workspace: &str) -> Result<Option<LockInfo>, LeaseError> {
        self.holder_within(workspace, Duration::from_secs(30)).await
    }

    async fn write(
        &self,
        workspace: &str,
        info: &LockInfo,
        mode: PutMode,
    ) -> Result<Option<UpdateVersion>, LeaseError> {
        let body = PutPayload::from(serde_json::to_vec(info).expect("lock info serialises"));
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        match self.store.put_opts(&self.key(workspace), body, opts).await {
            Ok(r) => Ok(Some(UpdateVersion {
                e_tag: r.e_tag,
                version: r.version,
            })),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Takes the workspace's lock for `ttl`. A lock that expired is taken
    /// over, as is one of `take_over_run` held by this process's
    /// predecessor (a run it resumes after a restart: the same name on the
    /// same host, see [`same_holder`]); any other is [`LeaseError::Held`],
    /// including a run another coordinator took over meanwhile.
    pub async fn acquire(
        &self,
        workspace: &str,
        mut info: LockInfo,
        ttl: Duration,
        take_over_run: Option<&str>,
    ) -> Result<Lease, LeaseError> {
        let ttl = ttl.max(Duration::from_secs(1));
        info.expires = now_unix() + ttl.as_secs();
        info.ttl_ms = Some(ttl.as_millis() as u64);
        // The lock being watched before it is taken: renewed meanwhile, it
        // is held after all.
        let mut watching: Option<String> = None;
        loop {
            let mode = match self.read(workspace).await? {
                None => PutMode::Create,
                Some((held, version)) => {
                    let ours = take_over_run.is_some_and(|r| r == held.run_id)
                        && same_holder(&held.owner, &info.owner);
                    if !ours && !self.stale(workspace, &held, &version, ttl) {
                        let now_seen = identity(&held, &version);
                        let renewed = watching.as_ref().is_some_and(|w| *w != now_seen);
                        if held.expires > now_unix() || renewed {
                            return Err(LeaseError::Held(held));
                        }
                        watching = Some(now_seen);
                        // Past its holder's `expires` by our clock: watch
                        // it for its time to live before taking it.
                        tracing::info!(workspace, holder = %held.owner, "the state lock was not renewed in time by this host's clock; watching it before taking it over");
                        tokio::time::sleep(WATCH_EVERY).await;
                        continue;
                    }
                    if self.cas_update {
                        PutMode::Update(version)
                    } else {
                        // Create-only store: remove the stale lock, then
                        // race for a fresh one.
                        match self.store.delete(&self.key(workspace)).await {
                            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                            Err(e) => return Err(e.into()),
                        }
                        PutMode::Create
                    }
                }
            };
            if let Some(version) = self.write(workspace, &info, mode).await? {
                self.watch(workspace, &info, &version);
                return Ok(Lease {
                    workspace: workspace.to_string(),
                    info,
                    version,
                });
            }
            // Someone else wrote in between: look again.
        }
    }

    /// Extends the lease by `ttl` from now; [`LeaseError::Lost`] when the
    /// lock object is no longer the one this process wrote.
    pub async fn renew(&self, lease: &mut Lease, ttl: Duration) -> Result<(), LeaseError> {
        let mut info = lease.info.clone();
        let ttl = ttl.max(Duration::from_secs(1));
        info.expires = now_unix() + ttl.as_secs();
        info.ttl_ms = Some(ttl.as_millis() as u64);
        let mode = if self.cas_update {
            PutMode::Update(lease.version.clone())
        } else {
            if !self.holds(lease).await? {
                return Err(LeaseError::Lost);
            }
            PutMode::Overwrite
        };
        match self.write(&lease.workspace, &info, mode).await? {
            Some(version) => {
                lease.info = info;
                lease.version = version;
                Ok(())
            }
            None if self.cas_update => {
                // The object changed. If it still has this lease's id, the
                // change was ours: a write that landed though its answer
                // was lost (the client retried it, and the retry found the
                // version it had just replaced). Only this lease's holder
                // writes its id, so the lock is still held: renew on that
                // version.
                match self.read(&lease.workspace).await? {
                    Some((current, version)) if current.id == lease.info.id => {
                        match self
                            .write(&lease.workspace, &info, PutMode::Update(version))
                            .await?
                        {
                            Some(version) => {
                                lease.info = info;
                                lease.version = version;
                                Ok(())
                            }
                            None => Err(LeaseError::Lost),
                        }
                    }
                    _ => Err(LeaseError::Lost),
                }
            }
            None => Err(LeaseError::Lost),
        }
    }

    /// Whether the lock object is still the one `lease` wrote: checked
    /// before every snapshot write. By its id, which each acquisition
    /// draws anew and only its holder writes, not by its version: a renewal
    /// that landed with its answer lost leaves the holder a stale version
    /// of its own lock, which is still its lock.
    pub async fn holds(&self, lease: &Lease) -> Result<bool, LeaseError> {
        Ok(match self.read(&lease.workspace).await? {
            Some((info, _)) => info.id == lease.info.id,
            None => false,
        })
    }

    /// Gives the lock up, if it is still this lease's.
    pub async fn release(&self, lease: &Lease) -> Result<(), LeaseError> {
        if self.holds(lease).await? {
            match self.store.delete(&self.key(&lease.workspace)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Removes the lock `id` whoever holds it (`fleetform force-unlock`).
    pub async fn force_unlock(&self, workspace: &str, id: &str) -> Result<LockInfo, LeaseError> {
        match self.read(workspace).await? {
            Some((info, _)) if info.id == id => {
                match self.store.delete(&self.key(workspace)).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(info),
                    Err(e) => Err(e.into()),
                }
            }
            _ => Err(LeaseError::NotHeld(id.to_string())),
        }
    }
}

#[cfg(test)]
#[path = "lease_tests.rs"]
mod tests;
