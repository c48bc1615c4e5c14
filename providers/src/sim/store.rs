//! The simulated cloud's backing store: one `<id>.json` file per object in a
//! directory, written atomically (temp file + rename) so concurrent calls
//! and crashes never leave a half-written object, and a test can see what
//! exists by listing the directory. Creations and deletions are also
//! recorded in the directory's operation log (see [`super::oplog`]).

use super::oplog::{self, Op};
use super::stored::{SimObject, now_ms};
use std::io;
use std::path::{Path, PathBuf};
use tokio::sync::Semaphore;

#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

/// File operations of this process at once. Each store operation is one
/// blocking call behind this gate (not one thread hand-off per file call):
/// creating files in one directory takes the directory's lock in the
/// kernel, and with hundreds of calls creating at once the waiters spun
/// on it. Measured with 10,000 creates from two provider processes on 2
/// cores: 16% of the providers' CPU was that spinning, and their system
/// time (4 s each) exceeded fleetform's whole CPU time. Two at once keeps
/// a disk busy while one waits.
static FILE_OPS: Semaphore = Semaphore::const_new(2);

/// Runs `f` on the blocking pool, behind [`FILE_OPS`].
async fn file_op<T: Send + 'static>(
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    let _permit = FILE_OPS.acquire().await.map_err(io::Error::other)?;
    tokio::task::spawn_blocking(f)
        .await
        .map_err(io::Error::other)?
}

impl Store {
    pub async fn open(dir: &Path) -> io::Result<Store> {
        tokio::fs::create_dir_all(dir).await?;
        Ok(Store {
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub async fn put(&self, obj: &SimObject) -> io::Result<()> {
        let (dir, obj) = (self.dir.clone(), obj.clone());
        file_op(move || write_object(&dir, &obj)).await
    }

    /// Writes a new object, stamped with its creation time, and records
    /// the creation in the operation log.
    pub async fn create(&self, obj: &SimObject) -> io::Result<SimObject> {
        self.create_for_call(obj, None).await
    }

    /// [`Store::create`] for a provider call that began at `started_ms`,
    /// which the operation log records too.
    pub async fn create_for_call(
        &self,
        obj: &SimObject,
        started_ms: Option<u64>,
    ) -> io::Result<SimObject> {
        let dir = self.dir.clone();
        let obj = SimObject {
            created_ms: Some(now_ms()),
            ..obj.clone()
        };
        file_op(move || {
            write_object(&dir, &obj)?;
            oplog::append(&dir, Op::Create, &obj, started_ms)?;
            Ok(obj)
        })
        .await
    }

    /// Deletes an object and records the deletion; an absent object is
    /// not an error and not recorded (nothing was deleted).
    pub async fn remove(&self, id: &str) -> io::Result<()> {
        let (dir, id) = (self.dir.clone(), id.to_string());
        file_op(move || {
            let Some(obj) = read_object(&dir, &id)? else {
                return Ok(());
            };
            match std::fs::remove_file(object_path(&dir, &id)?) {
                Ok(()) => oplog::append(&dir, Op::Delete, &obj, None),
                // Another call deleted it between our read and our delete.
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// `None` when the object does not exist.
    pub async fn get(&self, id: &str) -> io::Result<Option<SimObject>> {
        let (dir, id) = (self.dir.clone(), id.to_string());
        file_op(move || read_object(&dir, &id)).await
    }

    /// Every stored object, in no particular order.
    pub async fn list(&self) -> io::Result<Vec<SimObject>> {
        let dir = self.dir.clone();
        file_op(move || {
            let mut objects = Vec::new();
            for entry in std::fs::read_dir(&dir)? {
                let name = entry?.file_name();
                let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                    continue;
                };
                // Deleted since the listing started: not there any more.
                if let Some(obj) = read_object(&dir, id)? {
                    objects.push(obj);
                }
            }
            Ok(objects)
        })
        .await
    }

    /// Deleting an absent object succeeds.
    pub async fn delete(&self, id: &str) -> io::Result<()> {
        let (dir, id) = (self.dir.clone(), id.to_string());
        file_op(
            move || match std::fs::remove_file(object_path(&dir, &id)?) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        )
        .await
    }
}

/// Ids are uuids; anything else could escape the directory.
fn object_path(dir: &Path, id: &str) -> io::Result<PathBuf> {
    uuid::Uuid::parse_str(id)
        .map(|u| dir.join(format!("{}.json", u.hyphenated())))
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid object id {id:?}"),
            )
        })
}

fn write_object(dir: &Path, obj: &SimObject) -> io::Result<()> {
    let path = object_path(dir, &obj.id)?;
    // Temp names start with a dot so listings of `*.json` never see them.
    let tmp = dir.join(format!(".{}.{}.tmp", obj.id, uuid::Uuid::new_v4().simple()));
    let bytes = serde_json::to_vec_pretty(obj).map_err(io::Error::other)?;
    std::fs::write(&tmp, bytes)?;
    if let Err(e) = std::fs::rename(&tmp, &path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

fn read_object(dir: &Path, id: &str) -> io::Result<Option<SimObject>> {
    match std::fs::read(object_path(dir, id)?) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(io::Error::other),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::value::Number;

    #[tokio::test]
    async fn put_get_delete_and_concurrent_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).await.unwrap();
        let obj = SimObject {
            id: uuid::Uuid::new_v4().to_string(),
            name: "a".into(),
            tags: None,
            size: Some(Number::Int(2)),
            kind: None,
            created_ms: None,
        };
        store.put(&obj).await.unwrap();
        assert_eq!(store.get(&obj.id).await.unwrap(), Some(obj.clone()));

        let writes = (0..32).map(|i| {
            let (store, mut o) = (store.clone(), obj.clone());
            o.size = Some(Number::Int(i));
            tokio::spawn(async move { store.put(&o).await })
        });
        for w in writes {
            w.await.unwrap().unwrap();
        }
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");

        assert_eq!(
            store.list().await.unwrap(),
            vec![store.get(&obj.id).await.unwrap().unwrap()]
        );
        let big = SimObject {
            size: Number::parse("12345678901234567890123.5"),
            ..obj.clone()
        };
        store.put(&big).await.unwrap();
        assert_eq!(store.get(&obj.id).await.unwrap(), Some(big));
        store.delete(&obj.id).await.unwrap();
        store.delete(&obj.id).await.unwrap();
        assert!(store.list().await.unwrap().is_empty());
        assert_eq!(store.get(&obj.id).await.unwrap(), None);
        assert!(store.get("../etc/passwd").await.is_err());
    }
}
