//! State storage: the authoritative snapshots in an object store, a redb
//! cache and journal beside them, and the trait both serve behind.
//!
//! A state is named by its *key*: `PROJECT/WORKSPACE` for a configuration
//! bound to a project (`fleetform init -project=NAME`), or a bare
//! `WORKSPACE` for a directory that is not (embedded mode, and states
//! written before projects existed). Each project has its own workspaces,
//! so two configurations on one coordinator never share a state.
//!
//! Layout in the object store, per state key (`<workspace>` below: the bare
//! name, or `projects.d/PROJECT/WORKSPACE`; `.` is in no workspace name, so
//! the two kinds of keys never meet):
//! - `<prefix>/<workspace>/states/<serial>`: immutable snapshots, msgpack
//!   packed with LZ4 in one frame with a content checksum (those written
//!   before snapshots were packed are plain msgpack, and still read);
//! - `<prefix>/<workspace>/head`: `{"serial":N,"lineage":"..."}`, replaced
//!   by compare-and-swap, so two writers can never both win;
//! - `<prefix>/<workspace>/history/<serial>`: JSON [`HistoryEntry`], who
//!   wrote each snapshot and when (`state history`);
//! - `<prefix>/<workspace>/workspace`: written by `workspace new`, so an
//!   empty workspace exists before its first run;
//! - `<prefix>/<workspace>/lock`: the workspace's lease ([`LeaseStore`]);
//! - `<prefix>/<workspace>/runs/<run_id>/...`: a run applying now
//!   ([`RunArchive`]);
//! - `<prefix>/<workspace>/refreshed`: the latest read of each object
//!   ([`Refreshed`]), sealed like the snapshots.

mod archive;
mod cache;
mod claims;
mod fault;
mod journal;
mod lease;
mod object;
mod probe;
mod refreshed;

pub use fleetform_shared::seal;

/// The sealer the `FLEETFORM_ENCRYPTION_*` variables of this process
/// describe (a key file is read here).
pub fn sealer_from_env() -> Result<seal::Sealer, seal::SealError> {
    seal::Sealer::from_vars(
        |k| std::env::var(k).ok().filter(|v| !v.is_empty()),
        |path| std::fs::read_to_string(path),
    )
}

pub(crate) use archive::ArchiveWriter;
pub use archive::{ArchivedRun, RunArchive, Segment, SegmentPolicy};
pub use cache::{CachedStore, SchemaCache, open_db, open_db_or_reset};
pub use claims::{ClaimError, ClaimGuard, ClaimStore, Fence, claimant_worker};
pub use journal::{
    EndedRun, Intent, Journal, JournaledRun, Pending, Provisioning, SubmittedRun, Written,
};
pub use lease::{Lease, LeaseError, LeaseStore, LockInfo, now_unix as lease_now, same_holder};
pub use object::ObjectStateStore;
pub use probe::{StartError, check_at_start};
pub use refreshed::{DriftBoard, Drifted, Refresh, Refreshed};

use async_trait::async_trait;
use fleetform_shared::state::State;
use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The object store failed in a way that may pass (out of reach,
    /// failing, throttling): retried. What does not pass is
    /// [`StoreError::Misconfigured`]; `From` tells them apart.
    #[error("object store: {0}")]
    ObjectStore(object_store::Error),
    /// The object store cannot be used as configured (a missing bucket,
    /// refused credentials, a plain-HTTP endpoint the client refuses):
    /// waiting does not mend it, and the message says what to change.
    #[error("{0}")]
    Misconfigured(String),
    #[error("local cache: {0}")]
    Cache(String),
    #[error("checking the state lock: {0}")]
    LockCheck(String),
    #[error("state snapshot {key} is corrupted: {reason}")]
    Corrupted { key: String, reason: String },
    /// The latest snapshot of a workspace does not read: nothing writes
    /// over it, and the message says how to restore an older one.
    #[error("{}", corrupted_latest(.workspace, *.serial, .key, .reason, *.last_good))]
    CorruptedLatest {
        workspace: String,
        serial: u64,
        key: String,
        reason: String,
        /// The newest earlier snapshot that reads.
        last_good: Option<u64>,
    },
    #[error(
        "state of workspace {workspace} changed concurrently (expected serial {expected}, found {found})"
    )]
    Conflict {
        workspace: String,
        expected: u64,
        found: u64,
    },
    #[error("invalid state store url {url:?}: {reason}")]
    BadUrl { url: String, reason: String },
    /// Encrypted with another key, plaintext where it is refused, or
    /// damaged: nothing is written over it.
    #[error("{0}")]
    Sealed(#[from] seal::SealError),
}

impl From<object_store::Error> for StoreError {
    fn from(e: object_store::Error) -> StoreError {
        match fault::classify(&e, &fault::S3Settings::from_env()) {
            fault::Fault::Passing => StoreError::ObjectStore(e),
            fault::Fault::Lasting(fix) => StoreError::Misconfigured(fix),
        }
    }
}

impl StoreError {
    /// A failure of the local redb database (the cache and the journal).
    pub(crate) fn cache(e: impl std::fmt::Display) -> StoreError {
        StoreError::Cache(e.to_string())
    }

    /// Whether waiting may mend it: the object store out of reach or
    /// failing for a while, the local cache failing, the lock not
    /// checkable. The loops that retry the store retry only these; the
    /// rest (a misconfiguration, a conflict, a corrupted snapshot) end
    /// what met them.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            StoreError::ObjectStore(_) | StoreError::Cache(_) | StoreError::LockCheck(_)
        )
    }
}

/// Whether `e` says the object is not there, and not that the bucket is
/// missing (S3 answers 404 to both).
pub(crate) fn absent(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::NotFound { .. })
        && !matches!(
            fault::classify(e, &fault::S3Settings::default()),
            fault::Fault::Lasting(_)
        )
}

/// What the head pointer says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    pub serial: u64,
    pub lineage: String,
}

/// Who writes a snapshot, as `state history` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The run (or `taint-…`, `untaint-…` for those commands).
    pub run_id: String,
    /// `apply`, `destroy`, `taint`, ...
    pub operation: String,
    /// Where the configuration came from, `HOST:DIRECTORY` as the CLI that
    /// submitted the run saw it; empty when unknown. It lets a refusal say
    /// which configuration wrote a state.
    pub source: String,
}

impl Origin {
    pub fn new(run_id: impl Into<String>, operation: impl Into<String>) -> Origin {
        Origin {
            run_id: run_id.into(),
            operation: operation.into(),
            source: String::new(),
        }
    }

    pub fn from_source(mut self, source: impl Into<String>) -> Origin {
        self.source = source.into();
        self
    }
}

/// One snapshot of a workspace's history.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub serial: u64,
    /// Empty for snapshots written before fleetform kept history records.
    #[serde(default)]
    pub lineage: String,
    #[serde(default)]
    pub run_id: String,
    #[serde(default)]
    pub operation: String,
    /// [`Origin::source`]: `HOST:DIRECTORY` of the configuration.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// RFC 3339, UTC.
    pub written_at: String,
    /// Size of the snapshot object.
    #[serde(default)]
    pub bytes: u64,
}

/// Names of a workspace that can be a key segment in every object store and
/// a file name: letters, digits, `-` and `_`, 1 to 90 characters.
pub fn valid_workspace_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 90
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Project names follow the workspace names' rule, for the same reason.
pub fn valid_project_name(name: &str) -> bool {
    valid_workspace_name(name)
}

/// A state key: `WORKSPACE` or `PROJECT/WORKSPACE`, each part a valid name.
pub fn valid_state_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((project, workspace)) => {
            valid_project_name(project) && valid_workspace_name(workspace)
        }
        None => valid_workspace_name(key),
    }
}

/// The project of a state key, `None` for a bare workspace name.
pub fn project_of(key: &str) -> Option<&str> {
    key.split_once('/').map(|(p, _)| p)
}

/// The workspace name of a state key (`terraform.workspace`).
pub fn workspace_of(key: &str) -> &str {
    key.split_once('/').map_or(key, |(_, w)| w)
}

/// Where a state key's objects live below the store's prefix.
pub fn key_dir(key: &str) -> String {
    match key.split_once('/') {
        Some((project, workspace)) => format!("{PROJECTS_DIR}/{project}/{workspace}"),
        None => key.to_string(),
    }
}

/// The folder of the projects' states below the store's prefix.
pub const PROJECTS_DIR: &str = "projects.d";

/// The state key of `workspace` in `project` (bare when there is none).
pub fn state_key(project: Option<&str>, workspace: &str) -> String {
    match project {
        Some(p) => format!("{p}/{workspace}"),
        None => workspace.to_string(),
    }
}

#[async_trait]
pub trait StateStore: Send + Sync {
    /// The head of a workspace, `None` when it has no state yet.
    async fn head(&self, workspace: &str) -> Result<Option<Head>, StoreError>;
    /// The latest snapshot, `None` when the workspace has no state yet.
    async fn load(&self, workspace: &str) -> Result<Option<State>, StoreError>;
    /// Writes `state` as the next snapshot. `state.serial` must be one more
    /// than the current head's (or 1 for a new workspace); otherwise
    /// [`StoreError::Conflict`] and nothing changes. `origin` goes into the
    /// workspace's history.
    async fn save(&self, workspace: &str, state: &State, origin: &Origin)
    -> Result<(), StoreError>;
    /// The snapshot with this serial, `None` when there is none.
    async fn load_serial(&self, workspace: &str, serial: u64) -> Result<Option<State>, StoreError>;
    /// Every snapshot of the workspace, oldest first.
    async fn history(&self, workspace: &str) -> Result<Vec<HistoryEntry>, StoreError>;
    /// The state keys of `project`'s workspaces (bare names for `None`)
    /// that have a state or were created, sorted.
    async fn workspaces(&self, project: Option<&str>) -> Result<Vec<String>, StoreError>;
    /// Creates an empty workspace; false when it exists already.
    async fn create_workspace(&self, workspace: &str) -> Result<bool, StoreError>;
    /// Removes every snapshot and record of the workspace except its lock,
    /// which the caller holds and releases.
    async fn delete_workspace(&self, workspace: &str) -> Result<(), StoreError>;
    /// The workspace's record of refreshed objects, empty when it has
    /// none. A store that keeps none (a test double) needs neither this
    /// nor [`StateStore::save_refreshed`]: plans then read every object.
    async fn load_refreshed(&self, _workspace: &str) -> Result<Refreshed, StoreError> {
        Ok(Refreshed::default())
    }
    /// Replaces the workspace's record of refreshed objects.
    async fn save_refreshed(
        &self,
        _workspace: &str,
        _record: &Refreshed,
    ) -> Result<(), StoreError> {
        Ok(())
    }
}

/// Deletes one object; one already gone is fine.
pub(crate) async fn delete_object(
    store: &dyn object_store::ObjectStore,
    key: &object_store::path::Path,
) -> Result<(), StoreError> {
    use object_store::ObjectStoreExt;
    match store.delete(key).await {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Deletes every object under `prefix`.
pub(crate) async fn delete_prefix(
    store: &dyn object_store::ObjectStore,
    prefix: &object_store::path::Path,
) -> Result<(), StoreError> {
    use futures::TryStreamExt;
    let keys: Vec<object_store::path::Path> = store
        .list(Some(prefix))
        .map_ok(|m| m.location)
        .try_collect()
        .await?;
    for key in keys {
        delete_object(store, &key).await?;
    }
    Ok(())
}

/// Opens a store from a URL: `file:///path`, `s3://bucket/prefix`,
/// `memory://`. S3 settings come from the usual `AWS_*` variables
/// (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_REGION`, `AWS_ALLOW_HTTP`).
pub fn open(url: &str) -> Result<ObjectStateStore, StoreError> {
    ObjectStateStore::from_url(url)
}

#[cfg(test)]
pub(crate) mod suite;

fn corrupted_latest(
    workspace: &str,
    serial: u64,
    key: &str,
    reason: &str,
    last_good: Option<u64>,
) -> String {
    let ws_flag = if workspace == "default" {
        String::new()
    } else {
        format!("-workspace={workspace} ")
    };
    let restore = match last_good {
        Some(good) => format!(
            "The newest earlier snapshot that reads is serial {good}. Restore it with:\n  fleetform {ws_flag}state pull -serial={good} > restore.tfstate\n  fleetform {ws_flag}state push -force restore.tfstate\nthen run a plan: objects changed after serial {good} show up as drift (refresh records them) or as new (import brings them in)."
        ),
        None => format!(
            "No earlier snapshot of the workspace reads either. Push a state file you trust with `fleetform {ws_flag}state push -force FILE`."
        ),
    };
    format!(
        "The latest state snapshot of workspace {workspace:?} (serial {serial}, {key}) cannot be read: {reason}. fleetform never writes over it, and refuses to run on this workspace until the state is restored. {restore}"
    )
}
