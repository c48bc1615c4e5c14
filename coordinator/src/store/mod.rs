//! State storage: the authoritative snapshots in an object store, a redb
//! cache and journal beside them, and the trait both serve behind.
//!
//! Layout in the object store, per workspace:
//! - `<prefix>/<workspace>/states/<serial>`: immutable msgpack snapshots;
//! - `<prefix>/<workspace>/head`: `{"serial":N,"lineage":"..."}`, replaced
//!   by compare-and-swap, so two writers can never both win.

mod cache;
mod journal;
mod lease;
mod object;

pub use cache::{CachedStore, SchemaCache, open_db};
pub use journal::{Intent, Journal, JournaledRun, Provisioning, SubmittedRun};
pub use lease::{Lease, LeaseError, LeaseStore, LockInfo, now_unix as lease_now};
pub use object::ObjectStateStore;

use async_trait::async_trait;
use fleetform_shared::state::State;
use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("object store: {0}")]
    ObjectStore(#[from] object_store::Error),
    #[error("local cache: {0}")]
    Cache(String),
    #[error("state snapshot {key} is corrupted: {reason}")]
    Corrupted { key: String, reason: String },
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
}

/// What the head pointer says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    pub serial: u64,
    pub lineage: String,
}

#[async_trait]
pub trait StateStore: Send + Sync {
    /// The head of a workspace, `None` when it has no state yet.
    async fn head(&self, workspace: &str) -> Result<Option<Head>, StoreError>;
    /// The latest snapshot, `None` when the workspace has no state yet.
    async fn load(&self, workspace: &str) -> Result<Option<State>, StoreError>;
    /// Writes `state` as the next snapshot. `state.serial` must be one more
    /// than the current head's (or 1 for a new workspace); otherwise
    /// [`StoreError::Conflict`] and nothing changes.
    async fn save(&self, workspace: &str, state: &State) -> Result<(), StoreError>;
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
