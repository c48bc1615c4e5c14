//! The object-store implementation of [`StateStore`].

use super::{Head, HistoryEntry, Origin, StateStore, StoreError};
use async_trait::async_trait;
use fleetform_shared::state::State;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::sync::Arc;

/// The S3 client for `bucket` as the `AWS_*` variables configure it (the
/// store's and the check at start's, which sets its own retries).
pub(super) fn s3_builder(bucket: &str) -> object_store::aws::AmazonS3Builder {
    object_store::aws::AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_conditional_put(object_store::aws::S3ConditionalPut::ETagMatch)
}

pub struct ObjectStateStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// `file://` has no conditional update; there we check the head first
    /// and rely on the workspace having one writer (the embedded coordinator).
    cas_update: bool,
    /// For `file://`: the directory, whose emptied subdirectories are
    /// removed (object stores have no directories to leave behind).
    local_dir: Option<std::path::PathBuf>,
    /// Encrypts snapshots and run archives (see [`super::seal`]).
    sealer: Arc<super::seal::Sealer>,
}

impl ObjectStateStore {
    /// Snapshots and run archives written and read through `sealer`.
    pub fn with_sealer(mut self, sealer: Arc<super::seal::Sealer>) -> ObjectStateStore {
        self.sealer = sealer;
        self
    }

    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str, cas_update: bool) -> ObjectStateStore {
        ObjectStateStore {
            store,
            prefix: prefix.trim_matches('/').to_string(),
            cas_update,
            local_dir: None,
            sealer: Arc::new(super::seal::Sealer::none()),
        }
    }

    pub fn from_url(url: &str) -> Result<ObjectStateStore, StoreError> {
        let bad = |reason: String| StoreError::BadUrl {
            url: url.to_string(),
            reason,
        };
        let parsed = url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
        match parsed.scheme() {
            "file" => {
                let path = parsed
                    .to_file_path()
                    .map_err(|_| bad("not a local path".into()))?;
                std::fs::create_dir_all(&path).map_err(|e| bad(e.to_string()))?;
                let fs = object_store::local::LocalFileSystem::new_with_prefix(&path)?;
                let mut store = ObjectStateStore::new(Arc::new(fs), "", false);
                store.local_dir = Some(path);
                Ok(store)
            }
            "memory" => Ok(ObjectStateStore::new(
                Arc::new(object_store::memory::InMemory::new()),
                "",
                true,
            )),
            "s3" => {
                let bucket = parsed
                    .host_str()
                    .ok_or_else(|| bad("missing bucket".into()))?;
                // Short retries inside the client: fleetform's own loops
                // retry longer, and say in the run's events that they wait
                // (the client's default would sit silently for 3 minutes).
                let retry = object_store::RetryConfig {
                    max_retries: 4,
                    retry_timeout: std::time::Duration::from_secs(10),
                    ..Default::default()
                };
                let s3 = s3_builder(bucket).with_retry(retry).build()?;
                Ok(ObjectStateStore::new(Arc::new(s3), parsed.path(), true))
            }
            other => Err(bad(format!(
                "unsupported scheme {other:?} (use file://, s3:// or memory://)"
            ))),
        }
    }

    /// The archive of applying runs kept beside these states.
    pub fn archive(&self) -> super::RunArchive {
        super::RunArchive::new(self.store.clone(), &self.prefix, self.local_dir.clone())
            .with_sealer(self.sealer.clone())
    }

    /// The task claims kept beside these states.
    pub fn claims(&self) -> super::ClaimStore {
        super::ClaimStore::new(self.store.clone(), &self.prefix)
    }

    /// The workspace locks kept beside these states.
    pub fn leases(&self) -> super::LeaseStore {
        super::LeaseStore::new(self.store.clone(), &self.prefix, self.cas_update)
    }

    fn key(&self, workspace: &str, rest: &str) -> Path {
        let dir = super::key_dir(workspace);
        if self.prefix.is_empty() {
            Path::from(format!("{dir}/{rest}"))
        } else {
            Path::from(format!("{}/{dir}/{rest}", self.prefix))
        }
    }

    fn snapshot_key(&self, workspace: &str, serial: u64) -> Path {
        self.key(workspace, &format!("states/{serial:020}"))
    }

    fn history_key(&self, workspace: &str, serial: u64) -> Path {
        self.key(workspace, &format!("history/{serial:020}"))
    }

    fn root(&self) -> Option<Path> {
        (!self.prefix.is_empty()).then(|| Path::from(self.prefix.as_str()))
    }

    async fn exists(&self, key: &Path) -> Result<bool, StoreError> {
        match self.store.head(key).await {
            Ok(_) => Ok(true),
            Err(e) if super::absent(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Objects under `<workspace>/<dir>/` as (serial, meta), by serial.
    async fn serials(
        &self,
        workspace: &str,
        dir: &str,
    ) -> Result<Vec<(u64, object_store::ObjectMeta)>, StoreError> {
        let prefix = self.key(workspace, dir);
        let metas: Vec<object_store::ObjectMeta> =
            self.store.list(Some(&prefix)).try_collect().await?;
        let mut out: Vec<_> = metas
            .into_iter()
            .filter_map(|m| {
                let serial = m.location.filename()?.parse::<u64>().ok()?;
                Some((serial, m))
            })
            .collect();
        out.sort_by_key(|(s, _)| *s);
        Ok(out)
    }

    async fn read_head(
        &self,
        workspace: &str,
    ) -> Result<Option<(Head, UpdateVersion)>, StoreError> {
        let key = self.key(workspace, "head");
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
        let head: Head = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupted {
            key: key.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Some((head, version)))
    }
}

impl ObjectStateStore {
    /// The newest serial the head has taken (0 without a head): a snapshot
    /// past it was left by a writer that stopped before the head, and is
    /// no state. `None` when the head cannot be read, so that the history
    /// still helps with a damaged head.
    async fn committed(&self, workspace: &str) -> Option<u64> {
        match self.read_head(workspace).await {
            Ok(head) => Some(head.map_or(0, |(h, _)| h.serial)),
            Err(_) => None,
        }
    }

    /// The newest snapshot before `serial` that reads, looking back at
    /// most 100 snapshots.
    async fn last_good(&self, workspace: &str, serial: u64) -> Option<u64> {
        for s in (serial.saturating_sub(100).max(1)..serial).rev() {
            if let Ok(Some(_)) = self.load_serial(workspace, s).await {
                return Some(s);
            }
        }
        None
    }
}

#[async_trait]
impl StateStore for ObjectStateStore {
    async fn head(&self, workspace: &str) -> Result<Option<Head>, StoreError> {
        Ok(self.read_head(workspace).await?.map(|(h, _)| h))
    }

    async fn load(&self, workspace: &str) -> Result<Option<State>, StoreError> {
        let Some((head, _)) = self.read_head(workspace).await? else {
            return Ok(None);
        };
        let key = self.snapshot_key(workspace, head.serial);
        let bytes = match self.store.get(&key).await {
            Ok(g) => Some(g.bytes().await?),
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        let what = format!("state snapshot {key}");
        let bytes = match bytes {
            Some(b) => Some(self.sealer.open(&what, &b)?.into_owned()),
            None => None,
        };
        let problem = match bytes.as_deref().map(State::decode_stored) {
            None => "the snapshot object is missing".to_string(),
            Some(Err(e)) => e.to_string(),
            Some(Ok(state)) if state.serial == head.serial && state.lineage == head.lineage => {
                return Ok(Some(state));
            }
            Some(Ok(state)) => format!(
                "the snapshot says serial {} lineage {}, the head says {} {}",
                state.serial, state.lineage, head.serial, head.lineage
            ),
        };
        Err(StoreError::CorruptedLatest {
            workspace: workspace.to_string(),
            serial: head.serial,
            key: key.to_string(),
            reason: problem,
            last_good: self.last_good(workspace, head.serial).await,
        })
    }

    async fn save(
        &self,
        workspace: &str,
        state: &State,
        origin: &Origin,
    ) -> Result<(), StoreError> {
        let current = self.read_head(workspace).await?;
        let found = current.as_ref().map(|(h, _)| h.serial).unwrap_or(0);
        if state.serial != found + 1 {
            return Err(StoreError::Conflict {
                workspace: workspace.into(),
                expected: state.serial.saturating_sub(1),
                found,
            });
        }
        // The snapshot first, immutable: a lost race leaves an unreferenced
        // object, never a head pointing at nothing.
        let snap = self.snapshot_key(workspace, state.serial);
        let create = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        let what = format!("state snapshot {snap}");
        // Packed (LZ4): about a fifth of the encoding's size, which is
        // never whole in memory.
        let payload = PutPayload::from(self.sealer.seal(&what, state.encode_packed())?);
        let size = payload.content_length() as u64;
        match self.store.put_opts(&snap, payload.clone(), create).await {
            Ok(_) => {}
            Err(object_store::Error::AlreadyExists { .. }) => {
                // Either a writer that saw the same head got there first, or
                // one stopped between its snapshot and its head (a process
                // killed in that window), leaving a snapshot the head never
                // took. The head is the commit point: while it has not
                // moved, that snapshot is no state at all, and refusing to
                // write over it would leave the workspace unwritable at
                // this serial for good (a resumed run met it after its
                // coordinator was killed there: the chaos test). Writers
                // are fenced by the workspace lease, checked before each
                // save, and the head's conditional update below still lets
                // only one of two racing writers commit.
                let now = self
                    .read_head(workspace)
                    .await?
                    .map(|(h, _)| h.serial)
                    .unwrap_or(0);
                if now != found {
                    return Err(StoreError::Conflict {
                        workspace: workspace.into(),
                        expected: found,
                        found: now,
                    });
                }
                tracing::warn!(%workspace, serial = state.serial, key = %snap, "replacing a snapshot that a writer left uncommitted (it stopped before it moved the head)");
                let overwrite = PutOptions {
                    mode: PutMode::Overwrite,
                    ..Default::default()
                };
                self.store.put_opts(&snap, payload, overwrite).await?;
            }
            Err(e) => return Err(e.into()),
        }
        // The writer that wrote the snapshot last gets here, so the record
        // describes it; one left by a writer that stopped before the head
        // is overwritten with the snapshot, above.
        let entry = HistoryEntry {
            serial: state.serial,
            lineage: state.lineage.clone(),
            run_id: origin.run_id.clone(),
            operation: origin.operation.clone(),
            source: origin.source.clone(),
            written_at: fleetform_lang::eval::now_rfc3339(),
            bytes: size,
        };
        self.store
            .put(
                &self.history_key(workspace, state.serial),
                PutPayload::from(serde_json::to_vec(&entry).expect("history serialises")),
            )
            .await?;
        let head = Head {
            serial: state.serial,
            lineage: state.lineage.clone(),
        };
        let body = PutPayload::from(serde_json::to_vec(&head).expect("head serialises"));
        let mode = match current {
            None => PutMode::Create,
            Some((_, v)) if self.cas_update => PutMode::Update(v),
            Some(_) => PutMode::Overwrite,
        };
        match self
            .store
            .put_opts(
                &self.key(workspace, "head"),
                body,
                PutOptions {
                    mode,
                    ..Default::default()
                },
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(
                object_store::Error::Precondition { .. }
                | object_store::Error::AlreadyExists { .. },
            ) => {
                let now = self
                    .read_head(workspace)
                    .await?
                    .map(|(h, _)| h.serial)
                    .unwrap_or(0);
                Err(StoreError::Conflict {
                    workspace: workspace.into(),
                    expected: found,
                    found: now,
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn load_serial(&self, workspace: &str, serial: u64) -> Result<Option<State>, StoreError> {
        if self.committed(workspace).await.is_some_and(|c| serial > c) {
            return Ok(None);
        }
        let key = self.snapshot_key(workspace, serial);
        let bytes = match self.store.get(&key).await {
            Ok(g) => g.bytes().await?,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let bytes = self.sealer.open(&format!("state snapshot {key}"), &bytes)?;
        let state = State::decode_stored(&bytes).map_err(|e| StoreError::Corrupted {
            key: key.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Some(state))
    }

    async fn history(&self, workspace: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        let committed = self.committed(workspace).await;
        let mut snapshots = self.serials(workspace, "states").await?;
        snapshots.retain(|(serial, _)| committed.is_none_or(|c| *serial <= c));
        let records: std::collections::BTreeMap<u64, HistoryEntry> =
            futures::stream::iter(self.serials(workspace, "history").await?)
                .map(|(serial, meta)| async move {
                    let bytes = self.store.get(&meta.location).await?.bytes().await?;
                    // A damaged record only loses its details.
                    Ok::<_, StoreError>(
                        serde_json::from_slice::<HistoryEntry>(&bytes)
                            .ok()
                            .map(|e| (serial, e)),
                    )
                })
                .buffer_unordered(16)
                .try_filter_map(|e| async move { Ok(e) })
                .try_collect()
                .await?;
        Ok(snapshots
            .into_iter()
            .map(|(serial, meta)| {
                let mut e = records
                    .get(&serial)
                    .cloned()
                    .unwrap_or_else(|| HistoryEntry {
                        serial,
                        written_at: meta.last_modified.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
                        ..HistoryEntry::default()
                    });
                e.bytes = meta.size;
                e
            })
            .collect())
    }

    async fn workspaces(&self, project: Option<&str>) -> Result<Vec<String>, StoreError> {
        let under = match (self.root(), project) {
            (root, None) => root,
            (None, Some(p)) => Some(Path::from(format!("{}/{p}", super::PROJECTS_DIR))),
            (Some(root), Some(p)) => {
                Some(Path::from(format!("{root}/{}/{p}", super::PROJECTS_DIR)))
            }
        };
        let listing = self.store.list_with_delimiter(under.as_ref()).await?;
        let mut out = Vec::new();
        for dir in listing.common_prefixes {
            let Some(name) = dir.filename() else {
                continue;
            };
            if !super::valid_workspace_name(name) {
                continue;
            }
            let name = super::state_key(project, name);
            if self.exists(&self.key(&name, "head")).await?
                || self.exists(&self.key(&name, "workspace")).await?
            {
                out.push(name);
            }
        }
        out.sort();
        Ok(out)
    }

    async fn create_workspace(&self, workspace: &str) -> Result<bool, StoreError> {
        if self.exists(&self.key(workspace, "head")).await? {
            return Ok(false);
        }
        let body = serde_json::json!({ "created_at": fleetform_lang::eval::now_rfc3339() });
        let create = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self
            .store
            .put_opts(
                &self.key(workspace, "workspace"),
                PutPayload::from(body.to_string().into_bytes()),
                create,
            )
            .await
        {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    async fn load_refreshed(&self, workspace: &str) -> Result<super::Refreshed, StoreError> {
        let key = self.key(workspace, "refreshed");
        let bytes = match self.store.get(&key).await {
            Ok(got) => got.bytes().await?,
            Err(e) if super::absent(&e) => return Ok(super::Refreshed::default()),
            Err(e) => return Err(e.into()),
        };
        let what = format!("refresh record {key}");
        let plain = self.sealer.open(&what, &bytes)?;
        // A record that does not read is only a cache lost: the next plan
        // reads every object again.
        Ok(super::Refreshed::decode(&plain).unwrap_or_default())
    }

    async fn save_refreshed(
        &self,
        workspace: &str,
        record: &super::Refreshed,
    ) -> Result<(), StoreError> {
        let key = self.key(workspace, "refreshed");
        let what = format!("refresh record {key}");
        let body = if self.sealer.encrypts() {
            self.sealer.seal(&what, record.encode())?
        } else {
            record.encode()
        };
        self.store.put(&key, PutPayload::from(body)).await?;
        Ok(())
    }

    async fn delete_workspace(&self, workspace: &str) -> Result<(), StoreError> {
        // The head first: from then on the workspace has no state, whatever
        // else a failure below leaves behind (deleting again removes it).
        for key in [
            self.key(workspace, "head"),
            self.key(workspace, "workspace"),
            self.key(workspace, "refreshed"),
        ] {
            super::delete_object(self.store.as_ref(), &key).await?;
        }
        for dir in ["states", "history", "runs"] {
            super::delete_prefix(self.store.as_ref(), &self.key(workspace, dir)).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_store_passes_the_suite() {
        let s = ObjectStateStore::from_url("memory://").unwrap();
        crate::store::suite::run(&s).await;
    }

    #[tokio::test]
    async fn file_store_passes_the_suite() {
        let dir = tempfile::tempdir().unwrap();
        let s = ObjectStateStore::from_url(&format!("file://{}", dir.path().display())).unwrap();
        crate::store::suite::run(&s).await;
    }

    /// A writer killed between its snapshot and its head leaves a snapshot
    /// the head never took: the next writer of that serial replaces it
    /// (it was refused for good before), its history record included.
    async fn an_uncommitted_snapshot_is_replaced(s: &ObjectStateStore) {
        let first = crate::store::suite::sample(1, 2);
        s.save("ws", &first, &Origin::new("run-1", "apply"))
            .await
            .unwrap();
        let left = crate::store::suite::sample(2, 7);
        s.store
            .put(&s.snapshot_key("ws", 2), PutPayload::from(left.encode()))
            .await
            .unwrap();
        s.store
            .put(
                &s.history_key("ws", 2),
                PutPayload::from(&b"{\"serial\":2,\"run_id\":\"dead\",\"written_at\":\"x\"}"[..]),
            )
            .await
            .unwrap();
        assert_eq!(s.load("ws").await.unwrap().unwrap(), first, "not committed");
        let serials: Vec<u64> = s
            .history("ws")
            .await
            .unwrap()
            .iter()
            .map(|e| e.serial)
            .collect();
        assert_eq!(
            serials,
            vec![1],
            "the history lists committed snapshots only"
        );
        assert_eq!(s.load_serial("ws", 2).await.unwrap(), None);
        let second = crate::store::suite::sample(2, 4);
        s.save("ws", &second, &Origin::new("run-2", "apply"))
            .await
            .unwrap();
        assert_eq!(s.load("ws").await.unwrap().unwrap(), second);
        let history = s.history("ws").await.unwrap();
        assert_eq!(history.last().unwrap().run_id, "run-2");
        // A writer that did not see serial 2 still loses.
        let stale = crate::store::suite::sample(2, 9);
        assert!(matches!(
            s.save("ws", &stale, &Origin::new("run-3", "apply")).await,
            Err(StoreError::Conflict {
                expected: 1,
                found: 2,
                ..
            })
        ));
        assert_eq!(s.load("ws").await.unwrap().unwrap(), second);
    }

    /// Snapshots are stored packed (LZ4); one stored unpacked, as they
    /// were before, still loads.
    #[tokio::test]
    async fn snapshots_are_stored_packed_and_unpacked_ones_still_load() {
        let s = ObjectStateStore::new(Arc::new(object_store::memory::InMemory::new()), "p", true);
        let first = crate::store::suite::sample(1, 500);
        s.save("ws", &first, &Origin::new("run-1", "apply"))
            .await
            .unwrap();
        let stored = s
            .store
            .get(&s.snapshot_key("ws", 1))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(stored[..], first.encode_packed()[..]);
        assert!(
            stored.len() * 4 < first.encode().len(),
            "{} bytes",
            stored.len()
        );
        // Serial 1 as it was written before snapshots were packed.
        s.store
            .put(&s.snapshot_key("ws", 1), PutPayload::from(first.encode()))
            .await
            .unwrap();
        assert_eq!(s.load("ws").await.unwrap().unwrap(), first);
        assert_eq!(s.load_serial("ws", 1).await.unwrap().unwrap(), first);
    }

    #[tokio::test]
    async fn an_uncommitted_snapshot_is_replaced_in_memory() {
        let s = ObjectStateStore::new(Arc::new(object_store::memory::InMemory::new()), "p", true);
        an_uncommitted_snapshot_is_replaced(&s).await;
    }

    #[tokio::test]
    async fn an_uncommitted_snapshot_is_replaced_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let s = ObjectStateStore::from_url(&format!("file://{}", dir.path().display())).unwrap();
        an_uncommitted_snapshot_is_replaced(&s).await;
    }

    #[test]
    fn bad_urls_are_rejected() {
        assert!(matches!(
            ObjectStateStore::from_url("ftp://x"),
            Err(StoreError::BadUrl { .. })
        ));
        assert!(matches!(
            ObjectStateStore::from_url("not a url"),
            Err(StoreError::BadUrl { .. })
        ));
    }
}
