//! The local redb database: a cache of the latest snapshot per workspace
//! (so a restart does not download it again) and the operation journal
//! (every applied change, durable before the run moves on).

use super::{Head, HistoryEntry, Origin, StateStore, StoreError};
use async_trait::async_trait;
use fleetform_shared::ProviderAddr;
use fleetform_shared::addr::ResourceMode;
use fleetform_shared::schema::{ProviderSchema, Schema};
use fleetform_shared::state::State;
use fleetform_shared::types::Type;
use redb::{Database, ReadableDatabase, TableDefinition};
use std::path::Path;
use std::sync::Arc;

const SNAPSHOTS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("snapshots");
/// Key: provider fingerprint (`<address>@<version>`); value: msgpack schema.
/// Renamed whenever `ProviderSchema` learns something providers always sent
/// (v2: nested attributes; v3: write-only attributes), so schemas cached by
/// an older fleetform are fetched again rather than used without it.
const SCHEMAS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("schemas_v3");

/// Opens (or creates) the local database.
pub fn open_db(path: &Path) -> Result<Arc<Database>, StoreError> {
    match try_open(path) {
        Ok(db) => Ok(db),
        Err(Opening::Unreadable(e)) | Err(Opening::Other(e)) => Err(e),
    }
}

/// Why the local database did not open.
enum Opening {
    /// Not a redb database of this version: corrupted, truncated, a
    /// foreign file, or one of a different layout.
    Unreadable(StoreError),
    /// Anything else (another process has it open, the disk is full).
    Other(StoreError),
}

/// redb's page cache. Its default, 1 GiB, filled up as the journal's pages
/// turned over: a coordinator's RSS rose from 54 MB to 224 MB over 20
/// applies and destroys of 1,000 instances with nothing else kept. The
/// journal's working set is the pages of the runs in flight; the system's
/// page cache serves the rest. A single 10,000-instance run grows the file
/// to 20 MB, which a 32 MB cache can keep in memory after the run; with
/// 8 MB the embedded apply of 100,000 instances took 22.2 and 22.9 s at
/// 529 and 542 MB peak RSS, against 22.2 and 24.0 s at 557 and 560 MB
/// with 32.
const DB_CACHE_BYTES: usize = 8 << 20;

fn try_open(path: &Path) -> Result<Arc<Database>, Opening> {
    use redb::{DatabaseError, StorageError, TableError};
    let unreadable_storage = |e: &StorageError| match e {
        StorageError::Corrupted(_) => true,
        StorageError::Io(io) => io.kind() == std::io::ErrorKind::InvalidData,
        _ => false,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Opening::Other(StoreError::cache(e)))?;
    }
    let mut db = Database::builder()
        .set_cache_size(DB_CACHE_BYTES)
        .create(path)
        .map_err(|e| match &e {
            DatabaseError::Storage(s) if unreadable_storage(s) => {
                Opening::Unreadable(StoreError::cache(e))
            }
            DatabaseError::UpgradeRequired(_) | DatabaseError::RepairAborted => {
                Opening::Unreadable(StoreError::cache(e))
            }
            _ => Opening::Other(StoreError::cache(e)),
        })?;
    let table = |e: TableError| match &e {
        TableError::Storage(s) if !unreadable_storage(s) => Opening::Other(StoreError::cache(e)),
        _ => Opening::Unreadable(StoreError::cache(e)),
    };
    let tx = db
        .begin_write()
        .map_err(|e| Opening::Other(StoreError::cache(e)))?;
    tx.open_table(SNAPSHOTS).map_err(table)?;
    tx.open_table(SCHEMAS).map_err(table)?;
    super::journal::create_tables(&tx).map_err(Opening::Unreadable)?;
    tx.commit()
        .map_err(|e| Opening::Other(StoreError::cache(e)))?;
    compact_if_large(path, &mut db);
    Ok(Arc::new(db))
}

/// A file with more free space than this is compacted when it is opened.
const COMPACT_ABOVE_BYTES: u64 = 64 << 20;

/// Gives the pages of journals already cleared back to the file system.
/// A run's journal is deleted once its snapshot is stored, but the file
/// keeps its size (about 400 MB after an apply of 100,000 instances, all
/// of it free pages reused by later runs). Compacting needs the database
/// to itself, which it has only here, before it is shared: the embedded
/// mode opens it for every command, a coordinator when it starts. A
/// failure only leaves the file as large as it was.
fn compact_if_large(path: &Path, db: &mut Database) {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    if size <= COMPACT_ABOVE_BYTES {
        return;
    }
    // Pages in use: a file that holds mostly live data (a large cached
    // snapshot) is left alone rather than rewritten at every start.
    let used = db.begin_write().ok().and_then(|tx| {
        let stats = tx.stats().ok()?;
        let _ = tx.abort();
        Some(stats.allocated_pages() * stats.page_size() as u64)
    });
    if used.is_some_and(|u| size.saturating_sub(u) <= COMPACT_ABOVE_BYTES) {
        return;
    }
    let started = std::time::Instant::now();
    match db.compact() {
        Ok(_) => {
            let after = std::fs::metadata(path).map_or(0, |m| m.len());
            tracing::debug!(before = size, after, elapsed = ?started.elapsed(), "compacted the local database");
        }
        Err(e) => tracing::warn!(error = %e, "compacting the local database failed"),
    }
}

/// Opens the local database; one that cannot be read (corrupted, or not a
/// database of this fleetform) is moved aside and replaced by an empty
/// one, with the notice that says so. It holds caches (snapshots and
/// provider schemas, fetched again) and the journal of runs in progress;
/// the state itself lives in the state store and is not touched.
pub fn open_db_or_reset(path: &Path) -> Result<(Arc<Database>, Option<String>), StoreError> {
    match try_open(path) {
        Ok(db) => Ok((db, None)),
        Err(Opening::Other(e)) => Err(e),
        Err(Opening::Unreadable(e)) => {
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let mut aside = path.as_os_str().to_owned();
            aside.push(format!(".unreadable-{stamp}"));
            let aside = std::path::PathBuf::from(aside);
            std::fs::rename(path, &aside).map_err(|re| {
                StoreError::Cache(format!(
                    "{} cannot be read ({e}), and moving it aside failed: {re}. Move or delete it yourself; it holds only caches and the journal of runs in progress",
                    path.display()
                ))
            })?;
            let db = open_db(path)?;
            let notice = format!(
                "The local database {} could not be read ({e}). It was moved to {} and an empty one was created. It held only caches, fetched again from the state store, and the journal of runs in progress: the state itself is untouched. If a run was applying when the file broke, objects it created may be missing from the state; `plan` shows them as to create, and `import` brings them in.",
                path.display(),
                aside.display()
            );
            Ok((db, Some(notice)))
        }
    }
}

/// A [`StateStore`] that serves loads from the redb cache when the remote
/// head says the cached snapshot is still the latest.
pub struct CachedStore<S> {
    inner: S,
    db: Arc<Database>,
    sealer: Arc<super::seal::Sealer>,
}

impl<S: StateStore> CachedStore<S> {
    pub fn new(inner: S, db: Arc<Database>) -> CachedStore<S> {
        CachedStore {
            inner,
            db,
            sealer: Arc::new(super::seal::Sealer::none()),
        }
    }

    /// Cached snapshots written and read through `sealer`.
    pub fn with_sealer(mut self, sealer: Arc<super::seal::Sealer>) -> CachedStore<S> {
        self.sealer = sealer;
        self
    }

    fn cached(&self, workspace: &str) -> Result<Option<State>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::cache)?;
        let table = tx.open_table(SNAPSHOTS).map_err(StoreError::cache)?;
        let Some(bytes) = table.get(workspace).map_err(StoreError::cache)? else {
            return Ok(None);
        };
        // A damaged cache entry (or one sealed with a key no longer set)
        // is not fatal: the object store has the truth.
        let Ok(plain) = self.sealer.open("the cached snapshot", bytes.value()) else {
            return Ok(None);
        };
        Ok(State::decode_stored(&plain).ok())
    }

    fn remember(&self, workspace: &str, state: &State) -> Result<(), StoreError> {
        // Packed, as the snapshot is stored.
        let bytes = self
            .sealer
            .seal("the cached snapshot", state.encode_packed())?;
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        {
            let mut table = tx.open_table(SNAPSHOTS).map_err(StoreError::cache)?;
            table
                .insert(workspace, bytes.as_slice())
                .map_err(StoreError::cache)?;
        }
        tx.commit().map_err(StoreError::cache)
    }
}

#[async_trait]
impl<S: StateStore> StateStore for CachedStore<S> {
    async fn head(&self, workspace: &str) -> Result<Option<Head>, StoreError> {
        self.inner.head(workspace).await
    }

    async fn load(&self, workspace: &str) -> Result<Option<State>, StoreError> {
        let Some(head) = self.inner.head(workspace).await? else {
            return Ok(None);
        };
        if let Some(c) = self.cached(workspace)?
            && c.serial == head.serial
            && c.lineage == head.lineage
        {
            return Ok(Some(c));
        }
        let state = self.inner.load(workspace).await?;
        if let Some(s) = &state {
            self.remember(workspace, s)?;
        }
        Ok(state)
    }

    async fn save(
        &self,
        workspace: &str,
        state: &State,
        origin: &Origin,
    ) -> Result<(), StoreError> {
        let started = std::time::Instant::now();
        self.inner.save(workspace, state, origin).await?;
        crate::metrics::snapshot_write(started.elapsed());
        self.remember(workspace, state)
    }

    async fn load_serial(&self, workspace: &str, serial: u64) -> Result<Option<State>, StoreError> {
        self.inner.load_serial(workspace, serial).await
    }

    async fn history(&self, workspace: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        self.inner.history(workspace).await
    }

    async fn workspaces(&self, project: Option<&str>) -> Result<Vec<String>, StoreError> {
        self.inner.workspaces(project).await
    }

    async fn create_workspace(&self, workspace: &str) -> Result<bool, StoreError> {
        self.inner.create_workspace(workspace).await
    }

    async fn load_refreshed(&self, workspace: &str) -> Result<super::Refreshed, StoreError> {
        self.inner.load_refreshed(workspace).await
    }

    async fn save_refreshed(
        &self,
        workspace: &str,
        record: &super::Refreshed,
    ) -> Result<(), StoreError> {
        self.inner.save_refreshed(workspace, record).await
    }

    async fn delete_workspace(&self, workspace: &str) -> Result<(), StoreError> {
        self.inner.delete_workspace(workspace).await?;
        // A workspace made again under this name must not find this one.
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        {
            let mut table = tx.open_table(SNAPSHOTS).map_err(StoreError::cache)?;
            table.remove(workspace).map_err(StoreError::cache)?;
        }
        tx.commit().map_err(StoreError::cache)
    }
}

/// Provider schemas by fingerprint, so a restarted coordinator (and every
/// run after the first) gets them without a provider being started.
#[derive(Clone)]
pub struct SchemaCache {
    db: Arc<Database>,
}

impl SchemaCache {
    pub fn new(db: Arc<Database>) -> SchemaCache {
        SchemaCache { db }
    }

    pub fn get(&self, fingerprint: &str) -> Result<Option<ProviderSchema>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::cache)?;
        let table = tx.open_table(SCHEMAS).map_err(StoreError::cache)?;
        let Some(bytes) = table.get(fingerprint).map_err(StoreError::cache)? else {
            return Ok(None);
        };
        // A damaged entry is only a cache miss: the worker sends the schema again.
        Ok(rmp_serde::from_slice(bytes.value()).ok())
    }

    pub fn put(&self, fingerprint: &str, schema: &ProviderSchema) -> Result<(), StoreError> {
        let bytes = rmp_serde::to_vec_named(schema).map_err(StoreError::cache)?;
        let tx = self.db.begin_write().map_err(StoreError::cache)?;
        {
            let mut table = tx.open_table(SCHEMAS).map_err(StoreError::cache)?;
            table
                .insert(fingerprint, bytes.as_slice())
                .map_err(StoreError::cache)?;
        }
        tx.commit().map_err(StoreError::cache)
    }

    /// The object type of `type_name` (a resource, or a data source for
    /// [`ResourceMode::Data`]) at schema version `version`, from any cached
    /// schema of `addr` that has it, the highest-sorting version first.
    /// What writes a state file for Terraform needs ([`fleetform_shared::statefile`]).
    pub fn object_type(
        &self,
        addr: &ProviderAddr,
        mode: ResourceMode,
        type_name: &str,
        version: i64,
    ) -> Result<Option<Type>, StoreError> {
        let found = self.schema_of(addr, mode, type_name, Some(version))?;
        Ok(found.map(|s| s.block.implied_type()))
    }

    /// The schema of `type_name` (at `version`, or the newest cached
    /// provider's when `None`), from any cached schema of `addr` that has
    /// it, the highest-sorting version first.
    pub fn schema_of(
        &self,
        addr: &ProviderAddr,
        mode: ResourceMode,
        type_name: &str,
        version: Option<i64>,
    ) -> Result<Option<Schema>, StoreError> {
        for fingerprint in self.fingerprints(addr)?.iter().rev() {
            let Some(mut schema) = self.get(fingerprint)? else {
                continue;
            };
            let types = match mode {
                ResourceMode::Managed => &mut schema.resources,
                ResourceMode::Data => &mut schema.data_sources,
                ResourceMode::Ephemeral => &mut schema.ephemeral_resources,
            };
            if let Some(s) = types
                .remove(type_name)
                .filter(|s| version.is_none_or(|v| s.version == v))
            {
                return Ok(Some(s));
            }
        }
        Ok(None)
    }

    /// Fingerprints cached for a provider address.
    pub fn fingerprints(&self, addr: &ProviderAddr) -> Result<Vec<String>, StoreError> {
        let tx = self.db.begin_read().map_err(StoreError::cache)?;
        let table = tx.open_table(SCHEMAS).map_err(StoreError::cache)?;
        let start = format!("{addr}@");
        let end = format!("{addr}A"); // 'A' sorts right after '@'
        let mut out = Vec::new();
        for row in table
            .range(start.as_str()..end.as_str())
            .map_err(StoreError::cache)?
        {
            let (k, _) = row.map_err(StoreError::cache)?;
            out.push(k.value().to_string());
        }
        Ok(out)
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ObjectStateStore;

    #[tokio::test]
    async fn cached_store_passes_the_suite() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_db(&dir.path().join("cache.redb")).unwrap();
        let s = CachedStore::new(ObjectStateStore::from_url("memory://").unwrap(), db);
        crate::store::suite::run(&s).await;
    }

    /// A saved snapshot is cached as its encoding, sealed when a key is
    /// set: encoded into the database's page without a key, so it must
    /// read back whole either way.
    #[tokio::test]
    async fn a_saved_snapshot_reads_back_from_the_cache_with_and_without_a_key() {
        for key in [None, Some("a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s=")] {
            let dir = tempfile::tempdir().unwrap();
            let db = open_db(&dir.path().join("cache.redb")).unwrap();
            let sealer = Arc::new(
                crate::store::seal::Sealer::from_vars(
                    |k| {
                        (k == "FLEETFORM_ENCRYPTION_KEY")
                            .then(|| key.map(str::to_string))
                            .flatten()
                    },
                    |_| Err(std::io::Error::other("no key file in this test")),
                )
                .expect("a sealer"),
            );
            let s = CachedStore::new(ObjectStateStore::from_url("memory://").unwrap(), db)
                .with_sealer(sealer);
            for serial in 1..=2 {
                let state = crate::store::suite::sample(serial, 300 * serial as usize);
                s.save("default", &state, &Origin::default()).await.unwrap();
                assert_eq!(s.cached("default").unwrap(), Some(state), "key {key:?}");
            }
        }
    }

    #[test]
    fn schemas_are_cached_by_fingerprint_per_address() {
        let dir = tempfile::tempdir().unwrap();
        let c = SchemaCache::new(open_db(&dir.path().join("s.redb")).unwrap());
        let null = ProviderAddr::implied("null");
        let mut schema = ProviderSchema::default();
        schema.capabilities.plan_destroy = true;
        c.put(&format!("{null}@3.2.1"), &schema).unwrap();
        c.put(
            &format!("{}@1.0.0", ProviderAddr::implied("nullx")),
            &ProviderSchema::default(),
        )
        .unwrap();
        assert_eq!(c.fingerprints(&null).unwrap(), [format!("{null}@3.2.1")]);
        assert_eq!(c.get(&format!("{null}@3.2.1")).unwrap(), Some(schema));
        assert_eq!(c.get(&format!("{null}@9.9.9")).unwrap(), None);
    }

    /// A state file's writer finds an object's type by provider, mode,
    /// type and schema version, in whichever cached version has it.
    #[test]
    fn object_types_are_found_by_schema_version_in_any_cached_version() {
        use fleetform_shared::schema::{Attribute, Schema};
        let dir = tempfile::tempdir().unwrap();
        let c = SchemaCache::new(open_db(&dir.path().join("s.redb")).unwrap());
        let tf = ProviderAddr::builtin("terraform");
        let schema = |version: i64| {
            let mut s = Schema {
                version,
                ..Default::default()
            };
            s.block
                .attributes
                .insert("input".into(), Attribute::new(Type::Dynamic).optional());
            let mut p = ProviderSchema::default();
            p.resources.insert("terraform_data".into(), s.clone());
            p.data_sources.insert("terraform_remote_state".into(), s);
            p
        };
        c.put(&format!("{tf}@1.0.0"), &schema(0)).unwrap();
        c.put(&format!("{tf}@2.0.0"), &schema(1)).unwrap();
        let want = Some(Type::object([("input", Type::Dynamic)]));
        let managed = ResourceMode::Managed;
        for version in [0, 1] {
            assert_eq!(
                c.object_type(&tf, managed, "terraform_data", version)
                    .unwrap(),
                want
            );
        }
        assert_eq!(
            c.object_type(&tf, managed, "terraform_data", 2).unwrap(),
            None
        );
        assert_eq!(
            c.object_type(&tf, ResourceMode::Data, "terraform_remote_state", 1)
                .unwrap(),
            want
        );
        // A data source is not a resource type.
        assert_eq!(
            c.object_type(&tf, managed, "terraform_remote_state", 1)
                .unwrap(),
            None
        );
        let other = ProviderAddr::implied("null");
        assert_eq!(
            c.object_type(&other, managed, "terraform_data", 0).unwrap(),
            None
        );
    }
}

#[cfg(test)]
mod reset_tests {
    use super::*;

    #[test]
    fn a_large_database_is_compacted_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("coordinator.redb");
        let db = open_db(&path).unwrap();
        let chunk = vec![7u8; 1 << 20];
        let tx = db.begin_write().unwrap();
        {
            let mut t = tx.open_table(SNAPSHOTS).unwrap();
            for i in 0..72 {
                t.insert(format!("w{i}").as_str(), chunk.as_slice())
                    .unwrap();
            }
        }
        tx.commit().unwrap();
        // Something that stays, written after: the free pages are not
        // all at the end of the file, where closing would cut them off.
        let tx = db.begin_write().unwrap();
        tx.open_table(SCHEMAS)
            .unwrap()
            .insert("kept", chunk.as_slice())
            .unwrap();
        tx.commit().unwrap();
        let tx = db.begin_write().unwrap();
        {
            let mut t = tx.open_table(SNAPSHOTS).unwrap();
            for i in 0..72 {
                t.remove(format!("w{i}").as_str()).unwrap();
            }
        }
        tx.commit().unwrap();
        drop(db);
        let before = std::fs::metadata(&path).unwrap().len();
        assert!(before > COMPACT_ABOVE_BYTES, "{before}");
        let db = open_db(&path).unwrap();
        let after = std::fs::metadata(&path).unwrap().len();
        assert!(after < 8 << 20, "{before} bytes, then {after}");
        // Still a working database, with what it kept.
        let tx = db.begin_read().unwrap();
        let kept = tx
            .open_table(SCHEMAS)
            .unwrap()
            .get("kept")
            .unwrap()
            .unwrap();
        assert_eq!(kept.value(), chunk.as_slice());
        drop(kept);
        drop(tx);
        let tx = db.begin_write().unwrap();
        tx.open_table(SNAPSHOTS)
            .unwrap()
            .insert("w", chunk.as_slice())
            .unwrap();
        tx.commit().unwrap();
    }

    #[test]
    fn an_unreadable_database_is_moved_aside_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("coordinator.redb");
        std::fs::write(&path, b"this is not a database at all, just some text").unwrap();
        assert!(matches!(open_db(&path), Err(StoreError::Cache(_))));
        let (db, notice) = open_db_or_reset(&path).unwrap();
        let notice = notice.expect("a notice");
        assert!(notice.contains("could not be read"), "{notice}");
        assert!(notice.contains(".unreadable-"), "{notice}");
        // The new one works, and the old file is kept for a post-mortem.
        let cache = SchemaCache::new(db);
        drop(cache);
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains(".unreadable-"))
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(
            std::fs::read(aside[0].path()).unwrap(),
            b"this is not a database at all, just some text"
        );
    }

    #[test]
    fn a_good_database_opens_without_a_notice_and_a_busy_one_is_not_reset() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("coordinator.redb");
        let (db, notice) = open_db_or_reset(&path).unwrap();
        assert!(notice.is_none());
        // Open in this process: an error, never "unreadable".
        assert!(open_db_or_reset(&path).is_err());
        drop(db);
        let (_db, notice) = open_db_or_reset(&path).unwrap();
        assert!(notice.is_none());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "nothing moved aside");
    }
}
