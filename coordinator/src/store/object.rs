//! The object-store implementation of [`StateStore`].

use super::{Head, StateStore, StoreError};
use async_trait::async_trait;
use fleetform_shared::state::State;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::sync::Arc;

pub struct ObjectStateStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// `file://` has no conditional update; there we check the head first
    /// and rely on the workspace having one writer (the embedded coordinator).
    cas_update: bool,
}

impl ObjectStateStore {
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str, cas_update: bool) -> ObjectStateStore {
        ObjectStateStore {
            store,
            prefix: prefix.trim_matches('/').to_string(),
            cas_update,
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
                Ok(ObjectStateStore::new(Arc::new(fs), "", false))
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
                let s3 = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_conditional_put(object_store::aws::S3ConditionalPut::ETagMatch)
                    .build()?;
                Ok(ObjectStateStore::new(Arc::new(s3), parsed.path(), true))
            }
            other => Err(bad(format!(
                "unsupported scheme {other:?} (use file://, s3:// or memory://)"
            ))),
        }
    }

    /// The workspace locks kept beside these states.
    pub fn leases(&self) -> super::LeaseStore {
        super::LeaseStore::new(self.store.clone(), &self.prefix, self.cas_update)
    }

    fn key(&self, workspace: &str, rest: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(format!("{workspace}/{rest}"))
        } else {
            Path::from(format!("{}/{workspace}/{rest}", self.prefix))
        }
    }

    fn snapshot_key(&self, workspace: &str, serial: u64) -> Path {
        self.key(workspace, &format!("states/{serial:020}"))
    }

    async fn read_head(
        &self,
        workspace: &str,
    ) -> Result<Option<(Head, UpdateVersion)>, StoreError> {
        let key = self.key(workspace, "head");
        let got = match self.store.get(&key).await {
            Ok(g) => g,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
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
        let bytes = self.store.get(&key).await?.bytes().await?;
        let state = State::decode(&bytes).map_err(|e| StoreError::Corrupted {
            key: key.to_string(),
            reason: e.to_string(),
        })?;
        if state.serial != head.serial || state.lineage != head.lineage {
            return Err(StoreError::Corrupted {
                key: key.to_string(),
                reason: format!(
                    "snapshot says serial {} lineage {}, head says {} {}",
                    state.serial, state.lineage, head.serial, head.lineage
                ),
            });
        }
        Ok(Some(state))
    }

    async fn save(&self, workspace: &str, state: &State) -> Result<(), StoreError> {
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
        match self
            .store
            .put_opts(&snap, PutPayload::from(state.encode()), create)
            .await
        {
            Ok(_) => {}
            Err(object_store::Error::AlreadyExists { .. }) => {
                return Err(StoreError::Conflict {
                    workspace: workspace.into(),
                    expected: found,
                    found: state.serial,
                });
            }
            Err(e) => return Err(e.into()),
        }
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
