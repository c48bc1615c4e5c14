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
        let mut parts: Vec<PathPart<'static>> = Vec::new();
        for p in self.prefix.split('/').filter(|p| !p.is_empty()) {
            parts.push(PathPart::from(p.to_string()));
        }
        parts.push(PathPart::from("claims"));
        parts.push(PathPart::from(run_id.to_string()));
        parts.push(PathPart::from(task_id.to_string()));
        Path::from_iter(parts)
    }

    /// Records that `worker` takes the task up: `true` when this is the
    /// task's first claim, `false` when it was claimed before (by anyone).
    pub async fn claim(
        &self,
        run_id: &str,
        task_id: &str,
        worker: &str,
    ) -> Result<bool, StoreError> {
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        let body = PutPayload::from(worker.as_bytes().to_vec());
        match self
            .store
            .put_opts(&self.key(run_id, task_id), body, opts)
            .await
        {
            Ok(_) => Ok(true),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
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
        assert!(claims.claim("r1", id, "w1").await.unwrap());
        assert!(!claims.claim("r1", id, "w2").await.unwrap());
        assert!(!claims.claim("r1", id, "w1").await.unwrap());
        assert!(claims.claim("r1", "r1:apply:other", "w2").await.unwrap());
        assert!(claims.claim("r2", id, "w2").await.unwrap());
    }
}
