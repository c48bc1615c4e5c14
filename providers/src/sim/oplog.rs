//! The sim store's operation log, `operations.log` in the store directory:
//! one JSON line per create or delete that really happened,
//! `{"op","id","name","type","ts","operation_id","pid","started_ms"}`, appended with a single
//! `O_APPEND` write so concurrent provider processes never interleave
//! lines. Tests read it to prove that no object was created twice and
//! none was left behind.

use super::stored::{SimObject, now_ms};
use serde::{Deserialize, Serialize};
use std::io;
use std::io::Write;
use std::path::Path;

pub const FILE: &str = "operations.log";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Create,
    Delete,
}

/// One line of the log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    pub op: Op,
    /// The object's id.
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: String,
    /// Unix milliseconds.
    pub ts: u64,
    /// Unique per provider call, so a retried call shows as a second entry.
    pub operation_id: String,
    /// The provider process that made it.
    #[serde(default)]
    pub pid: u32,
    /// When the provider call that made it began (Unix milliseconds), for
    /// creates: with `ts`, the span the call was in the provider, so a
    /// test can count the calls in flight at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
}

/// Blocking: the store calls it on its blocking pool.
pub fn append(dir: &Path, op: Op, obj: &SimObject, started_ms: Option<u64>) -> io::Result<()> {
    let record = Operation {
        op,
        id: obj.id.clone(),
        name: obj.name.clone(),
        type_name: obj.type_name().to_string(),
        ts: now_ms(),
        operation_id: uuid::Uuid::new_v4().to_string(),
        pid: std::process::id(),
        started_ms,
    };
    let mut line = serde_json::to_vec(&record).map_err(io::Error::other)?;
    line.push(b'\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(FILE))?
        .write_all(&line)
}

/// Every operation recorded in the store at `dir`, oldest first (empty
/// when nothing was recorded yet).
pub fn read(dir: &Path) -> io::Result<Vec<Operation>> {
    let text = match std::fs::read_to_string(dir.join(FILE)) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(io::Error::other))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Store;

    #[tokio::test]
    async fn creates_and_real_deletes_are_logged_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).await.unwrap();
        let objects: Vec<SimObject> = (0..16)
            .map(|i| SimObject {
                id: uuid::Uuid::new_v4().to_string(),
                name: format!("o{i}"),
                tags: None,
                size: None,
                kind: None,
                created_ms: None,
            })
            .collect();
        let creates = objects.iter().cloned().map(|o| {
            let store = store.clone();
            tokio::spawn(async move { store.create(&o).await })
        });
        for c in creates.collect::<Vec<_>>() {
            assert!(c.await.unwrap().unwrap().created_ms.is_some());
        }
        store.remove(&objects[0].id).await.unwrap();
        store.remove(&objects[0].id).await.unwrap();
        let log = read(dir.path()).unwrap();
        assert_eq!(log.len(), 17);
        assert_eq!(log.iter().filter(|o| o.op == Op::Create).count(), 16);
        let deletes: Vec<&Operation> = log.iter().filter(|o| o.op == Op::Delete).collect();
        assert_eq!(deletes.len(), 1);
        assert_eq!(
            (deletes[0].id.as_str(), deletes[0].name.as_str()),
            (objects[0].id.as_str(), "o0")
        );
        assert_eq!(deletes[0].type_name, "sim_object");
        let ids: std::collections::BTreeSet<&str> =
            log.iter().map(|o| o.operation_id.as_str()).collect();
        assert_eq!(ids.len(), 17, "operation ids are unique");
        assert_eq!(
            store.list().await.unwrap().len(),
            15,
            "the log is not an object"
        );
    }
}
