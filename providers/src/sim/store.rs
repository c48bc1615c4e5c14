//! The simulated cloud's backing store: one `<id>.json` file per object in a
//! directory, written atomically (temp file + rename) so concurrent calls
//! and crashes never leave a half-written object, and a test can see what
//! exists by listing the directory. Creations and deletions are also
//! recorded in the directory's operation log (see [`super::oplog`]).

use super::oplog::{self, Op};
use fleetform_shared::value::Number;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// One simulated object as stored on disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimObject {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
    #[serde(default, with = "exact_size")]
    pub size: Option<Number>,
    /// The resource type when it is not `sim_object` (`sim_misbehaving`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// When [`Store::create`] wrote it (Unix milliseconds), for eventual
    /// consistency; absent on objects written before that existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_ms: Option<u64>,
}

/// A size is stored as a JSON number when an `f64` holds it exactly (as
/// every size was before numbers had arbitrary precision) and as its
/// decimal text otherwise, so no digit is lost in the store.
mod exact_size {
    use fleetform_shared::value::Number;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Float(f64),
        Text(String),
    }

    pub fn serialize<S: Serializer>(size: &Option<Number>, s: S) -> Result<S::Ok, S::Error> {
        let stored = size.as_ref().map(|n| {
            let f = n.as_f64();
            if Number::from_f64(f) == *n {
                Stored::Float(f)
            } else {
                Stored::Text(n.to_string())
            }
        });
        stored.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Number>, D::Error> {
        match Option::<Stored>::deserialize(d)? {
            None => Ok(None),
            Some(Stored::Float(f)) => Ok(Some(Number::from_f64(f))),
            Some(Stored::Text(t)) => Number::parse(&t)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom(format!("invalid size {t:?}"))),
        }
    }
}

impl SimObject {
    /// The resource type the object belongs to.
    pub fn type_name(&self) -> &str {
        self.kind.as_deref().unwrap_or("sim_object")
    }
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
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

    /// Ids are uuids; anything else could escape the directory.
    fn path(&self, id: &str) -> io::Result<PathBuf> {
        uuid::Uuid::parse_str(id)
            .map(|u| self.dir.join(format!("{}.json", u.hyphenated())))
            .map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("invalid object id {id:?}"),
                )
            })
    }

    pub async fn put(&self, obj: &SimObject) -> io::Result<()> {
        let path = self.path(&obj.id)?;
        // Temp names start with a dot so listings of `*.json` never see them.
        let tmp = self
            .dir
            .join(format!(".{}.{}.tmp", obj.id, uuid::Uuid::new_v4().simple()));
        let bytes = serde_json::to_vec_pretty(obj).map_err(io::Error::other)?;
        tokio::fs::write(&tmp, bytes).await?;
        if let Err(e) = tokio::fs::rename(&tmp, &path).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        Ok(())
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
        let obj = SimObject {
            created_ms: Some(now_ms()),
            ..obj.clone()
        };
        self.put(&obj).await?;
        oplog::append(&self.dir, Op::Create, &obj, started_ms).await?;
        Ok(obj)
    }

    /// Deletes an object and records the deletion; an absent object is
    /// not an error and not recorded (nothing was deleted).
    pub async fn remove(&self, id: &str) -> io::Result<()> {
        let Some(obj) = self.get(id).await? else {
            return Ok(());
        };
        match tokio::fs::remove_file(self.path(id)?).await {
            Ok(()) => oplog::append(&self.dir, Op::Delete, &obj, None).await,
            // Another call deleted it between our read and our delete.
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `None` when the object does not exist.
    pub async fn get(&self, id: &str) -> io::Result<Option<SimObject>> {
        match tokio::fs::read(self.path(id)?).await {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(io::Error::other),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Every stored object, in no particular order.
    pub async fn list(&self) -> io::Result<Vec<SimObject>> {
        let mut objects = Vec::new();
        let mut dir = tokio::fs::read_dir(&self.dir).await?;
        while let Some(entry) = dir.next_entry().await? {
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                continue;
            };
            // Deleted since the listing started: not there any more.
            if let Some(obj) = self.get(id).await? {
                objects.push(obj);
            }
        }
        Ok(objects)
    }

    /// Deleting an absent object succeeds.
    pub async fn delete(&self, id: &str) -> io::Result<()> {
        match tokio::fs::remove_file(self.path(id)?).await {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
