//! Task claims in the object store: one object per task that must not run
//! twice, written create-only, so exactly one claim of a task is ever
//! answered "first". They live here rather than in JetStream because a
//! queue that loses acknowledged writes (lazy fsync and a power loss, a
//! rolled-back or truncated data file) would forget a claim and let a
//! redelivered task run a second time; the object store is the record.

use object_store::path::{Path, PathPart};
use object_store::{ObjectStore, PutMode, PutOptions, PutPayload};
use std::sync::Arc;

use super::StoreError;

#[derive(Clone)]
pub struct ClaimStore {
    store: Arc<dyn ObjectStore>,
    prefix: String,
}

impl ClaimStore {
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> ClaimStore {
        ClaimStore {
            store,
            prefix: prefix.trim_matches('/').to_string(),
        }
    }

    /// `<prefix>/claims/<run_id>/<task_id>`; each id one path part (a task
    /// id may hold any character, `/` included, and is escaped as a part).
    fn key(&self, run_id: &str, task_id: &str) -> Path {
        let dir = self.run_dir(run_id);
        let mut parts: Vec<PathPart<'_>> = dir.parts().collect();
        parts.push(PathPart::from(task_id.to_string()));
        Path::from_iter(parts)
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

    /// Deletes an ended run's claims, unless one was written less than
    /// `kept` ago: a run that claims still goes on somewhere (another
    /// coordinator took it over), and a claim deleted under it would let
    /// a task delivered again run twice. Returns how many were deleted,
    /// or None when the run's claims are kept for now.
    pub async fn collect(
        &self,
        run_id: &str,
        kept: std::time::Duration,
    ) -> Result<Option<usize>, StoreError> {
        use futures::TryStreamExt;
        use object_store::ObjectStoreExt;
        let dir = self.run_dir(run_id);
        let claims: Vec<_> = self.store.list(Some(&dir)).try_collect().await?;
        // A claim from the future (clocks apart) counts as young.
        let young = claims.iter().any(|c| {
            std::time::SystemTime::from(c.last_modified)
                .elapsed()
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

    /// Records that `claimant` (a worker and its delivery's attempt id)
    /// takes the task up: `true` when this is the task's first claim, or
    /// the same claimant's claim recorded before (its answer was lost);
    /// `false` when someone else claimed it.
    pub async fn claim(
        &self,
        run_id: &str,
        task_id: &str,
        claimant: &str,
    ) -> Result<bool, StoreError> {
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        let key = self.key(run_id, task_id);
        let body = PutPayload::from(claimant.as_bytes().to_vec());
        match self.store.put_opts(&key, body, opts).await {
            Ok(_) => Ok(true),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => {
                use object_store::ObjectStoreExt;
                let held = self.store.get(&key).await?.bytes().await?;
                // An empty claimant (a request without an attempt id) is
                // never anyone's again.
                Ok(!claimant.is_empty() && held.as_ref() == claimant.as_bytes())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Who holds the task's claim (`<worker> <attempt>`), if anyone does.
    pub async fn holder(&self, run_id: &str, task_id: &str) -> Result<Option<String>, StoreError> {
        use object_store::ObjectStoreExt;
        match self.store.get(&self.key(run_id, task_id)).await {
            Ok(got) => {
                let bytes = got.bytes().await?;
                Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// The worker part of a claimant (`<worker> <attempt>`); the whole of an
/// old request's claimant, which had no attempt id.
pub fn claimant_worker(claimant: &str) -> &str {
    claimant.rsplit_once(' ').map_or(claimant, |(w, _)| w)
}

#[cfg(test)]
mod tests {
    use super::ClaimStore;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_task_is_claimed_first_once() {
        let mem = Arc::new(object_store::memory::InMemory::new());
        let claims = ClaimStore::new(mem, "p/");
        let id = "r1:apply:mod.a/b.sim_object.x[\"k\"]";
        assert!(claims.claim("r1", id, "w1 a1").await.unwrap());
        assert!(!claims.claim("r1", id, "w2 a2").await.unwrap());
        // The same claimant asking again (its answer was lost): still its.
        assert!(claims.claim("r1", id, "w1 a1").await.unwrap());
        // The same worker on another delivery is someone else.
        assert!(!claims.claim("r1", id, "w1 a3").await.unwrap());
        assert!(claims.claim("r1", "r1:apply:other", "w2").await.unwrap());
        assert!(claims.claim("r2", id, "w2").await.unwrap());
        assert_eq!(
            claims.holder("r1", id).await.unwrap().as_deref(),
            Some("w1 a1")
        );
        assert_eq!(claims.holder("r1", "r1:apply:none").await.unwrap(), None);
        assert_eq!(super::claimant_worker("w1 a1"), "w1");
    }

    #[tokio::test]
    async fn an_ended_runs_claims_are_collected_only_once_none_is_young() {
        use std::time::Duration;
        let mem = Arc::new(object_store::memory::InMemory::new());
        let claims = ClaimStore::new(mem, "p");
        claims.claim("r1", "a", "w1 x").await.unwrap();
        claims.claim("r1", "b/c", "w1 y").await.unwrap();
        claims.claim("r2", "a", "w1 z").await.unwrap();
        assert_eq!(
            claims
                .collect("r1", Duration::from_secs(3600))
                .await
                .unwrap(),
            None
        );
        assert!(claims.holder("r1", "a").await.unwrap().is_some());
        assert_eq!(claims.collect("r1", Duration::ZERO).await.unwrap(), Some(2));
        assert_eq!(claims.holder("r1", "a").await.unwrap(), None);
        assert_eq!(claims.holder("r1", "b/c").await.unwrap(), None);
        // Another run's are left alone.
        assert!(claims.holder("r2", "a").await.unwrap().is_some());
    }
}
