//! The local redb database: a cache of the latest snapshot per workspace
//! (so a restart does not download it again) and the operation journal
//! (every applied change, durable before the run moves on).

use super::{Head, StateStore, StoreError};
use async_trait::async_trait;
use fleetform_shared::ProviderAddr;
use fleetform_shared::graph::apply::OpKind;
use fleetform_shared::plan::ResourceChange;
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::state::{State, StateDelta};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

const SNAPSHOTS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("snapshots");
/// Key: provider fingerprint (`<address>@<version>`); value: msgpack schema.
/// Renamed whenever `ProviderSchema` learns something providers always sent
/// (v2: nested attributes), so schemas cached by an older fleetform are
/// fetched again rather than used without it.
const SCHEMAS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("schemas_v2");
/// Key: `<run_id>/<sequence, zero padded>`; value: msgpack [`StateDelta`].
const JOURNAL: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("journal");
/// Key: run id; value: msgpack [`JournaledRun`]: runs whose apply started
/// and whose snapshot is not stored yet.
const RUNS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("journal_runs");
/// Key: `<run_id>/<task_id>`; value: msgpack [`Intent`]: operations handed to
/// workers whose results are not recorded yet.
const INTENTS: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("journal_intents");

fn cache_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Cache(e.to_string())
}

/// Opens (or creates) the local database.
pub fn open_db(path: &Path) -> Result<Arc<Database>, StoreError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(cache_err)?;
    }
    let db = Database::create(path).map_err(cache_err)?;
    let tx = db.begin_write().map_err(cache_err)?;
    tx.open_table(SNAPSHOTS).map_err(cache_err)?;
    tx.open_table(JOURNAL).map_err(cache_err)?;
    tx.open_table(RUNS).map_err(cache_err)?;
    tx.open_table(INTENTS).map_err(cache_err)?;
    tx.open_table(SCHEMAS).map_err(cache_err)?;
    tx.commit().map_err(cache_err)?;
    Ok(Arc::new(db))
}

/// A [`StateStore`] that serves loads from the redb cache when the remote
/// head says the cached snapshot is still the latest.
pub struct CachedStore<S> {
    inner: S,
    db: Arc<Database>,
}

impl<S: StateStore> CachedStore<S> {
    pub fn new(inner: S, db: Arc<Database>) -> CachedStore<S> {
        CachedStore { inner, db }
    }

    fn cached(&self, workspace: &str) -> Result<Option<State>, StoreError> {
        let tx = self.db.begin_read().map_err(cache_err)?;
        let table = tx.open_table(SNAPSHOTS).map_err(cache_err)?;
        let Some(bytes) = table.get(workspace).map_err(cache_err)? else {
            return Ok(None);
        };
        // A damaged cache entry is not fatal: the object store has the truth.
        Ok(State::decode(bytes.value()).ok())
    }

    fn remember(&self, workspace: &str, state: &State) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(cache_err)?;
        {
            let mut table = tx.open_table(SNAPSHOTS).map_err(cache_err)?;
            table
                .insert(workspace, state.encode().as_slice())
                .map_err(cache_err)?;
        }
        tx.commit().map_err(cache_err)
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

    async fn save(&self, workspace: &str, state: &State) -> Result<(), StoreError> {
        self.inner.save(workspace, state).await?;
        self.remember(workspace, state)
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
        let tx = self.db.begin_read().map_err(cache_err)?;
        let table = tx.open_table(SCHEMAS).map_err(cache_err)?;
        let Some(bytes) = table.get(fingerprint).map_err(cache_err)? else {
            return Ok(None);
        };
        // A damaged entry is only a cache miss: the worker sends the schema again.
        Ok(rmp_serde::from_slice(bytes.value()).ok())
    }

    pub fn put(&self, fingerprint: &str, schema: &ProviderSchema) -> Result<(), StoreError> {
        let bytes = rmp_serde::to_vec_named(schema).map_err(cache_err)?;
        let tx = self.db.begin_write().map_err(cache_err)?;
        {
            let mut table = tx.open_table(SCHEMAS).map_err(cache_err)?;
            table
                .insert(fingerprint, bytes.as_slice())
                .map_err(cache_err)?;
        }
        tx.commit().map_err(cache_err)
    }

    /// Fingerprints cached for a provider address.
    pub fn fingerprints(&self, addr: &ProviderAddr) -> Result<Vec<String>, StoreError> {
        let tx = self.db.begin_read().map_err(cache_err)?;
        let table = tx.open_table(SCHEMAS).map_err(cache_err)?;
        let start = format!("{addr}@");
        let end = format!("{addr}A"); // 'A' sorts right after '@'
        let mut out = Vec::new();
        for row in table
            .range(start.as_str()..end.as_str())
            .map_err(cache_err)?
        {
            let (k, _) = row.map_err(cache_err)?;
            out.push(k.value().to_string());
        }
        Ok(out)
    }
}

/// A run whose apply has started: what a restarted coordinator needs to
/// put the journal on top of the right snapshot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JournaledRun {
    pub workspace: String,
    /// The serial of the snapshot the run started from; the run's own
    /// snapshot gets the next one.
    pub prior_serial: u64,
}

/// An operation handed to a worker, with what is needed to record its result
/// should it arrive after a restart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Intent {
    pub change: ResourceChange,
    pub kind: OpKind,
    pub deposed_key: String,
    /// What creation-time provisioners have to do with the operation.
    #[serde(default)]
    pub provisioning: Provisioning,
}

/// An operation's part in running creation-time provisioners, so that a
/// result recorded after a restart never makes an object look provisioned
/// when it was not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Provisioning {
    #[default]
    None,
    /// A create that provisioners were to follow: its object is recorded
    /// tainted, since they did not run.
    Follow,
    /// The provisioners themselves: if they succeed, the object (recorded
    /// tainted after its create) is made ready.
    Run,
}

/// The operation journal of runs: each completed operation's state change,
/// committed to disk before the run moves on, and the operations in flight.
/// Writing costs the same whatever the size of the state. A coordinator that
/// restarts puts the journal of unfinished runs on their snapshot
/// (`run::recover`).
#[derive(Clone)]
pub struct Journal {
    db: Arc<Database>,
}

fn encode<T: Serialize>(v: &T) -> Result<Vec<u8>, StoreError> {
    rmp_serde::to_vec_named(v).map_err(cache_err)
}

impl Journal {
    pub fn new(db: Arc<Database>) -> Journal {
        Journal { db }
    }

    /// Records that `run_id` starts applying (before its first delta).
    pub fn begin(&self, run_id: &str, run: &JournaledRun) -> Result<(), StoreError> {
        let bytes = encode(run)?;
        let tx = self.db.begin_write().map_err(cache_err)?;
        tx.open_table(RUNS)
            .map_err(cache_err)?
            .insert(run_id, bytes.as_slice())
            .map_err(cache_err)?;
        tx.commit().map_err(cache_err)
    }

    /// Records operations about to be handed to workers, in one write.
    pub fn intend(&self, run_id: &str, intents: &[(String, Intent)]) -> Result<(), StoreError> {
        if intents.is_empty() {
            return Ok(());
        }
        let tx = self.db.begin_write().map_err(cache_err)?;
        {
            let mut table = tx.open_table(INTENTS).map_err(cache_err)?;
            for (task_id, intent) in intents {
                let bytes = encode(intent)?;
                table
                    .insert(format!("{run_id}/{task_id}").as_str(), bytes.as_slice())
                    .map_err(cache_err)?;
            }
        }
        tx.commit().map_err(cache_err)
    }

    /// Records state changes and, in the same write, that the operations
    /// `done` (task ids) are no longer in flight.
    pub fn append(
        &self,
        run_id: &str,
        seq: u64,
        deltas: &[StateDelta],
        done: &[String],
    ) -> Result<(), StoreError> {
        let bytes = encode(&deltas)?;
        let tx = self.db.begin_write().map_err(cache_err)?;
        {
            let mut table = tx.open_table(JOURNAL).map_err(cache_err)?;
            table
                .insert(format!("{run_id}/{seq:016}").as_str(), bytes.as_slice())
                .map_err(cache_err)?;
            let mut intents = tx.open_table(INTENTS).map_err(cache_err)?;
            for task_id in done {
                intents
                    .remove(format!("{run_id}/{task_id}").as_str())
                    .map_err(cache_err)?;
            }
        }
        tx.commit().map_err(cache_err)
    }

    /// Runs that started applying and whose snapshot was not stored.
    pub fn runs(&self) -> Result<Vec<(String, JournaledRun)>, StoreError> {
        let tx = self.db.begin_read().map_err(cache_err)?;
        let table = tx.open_table(RUNS).map_err(cache_err)?;
        let mut out = Vec::new();
        for row in table.iter().map_err(cache_err)? {
            let (k, v) = row.map_err(cache_err)?;
            out.push((
                k.value().to_string(),
                rmp_serde::from_slice(v.value()).map_err(cache_err)?,
            ));
        }
        Ok(out)
    }

    /// A run's operations in flight, by task id.
    pub fn intents(&self, run_id: &str) -> Result<Vec<(String, Intent)>, StoreError> {
        let tx = self.db.begin_read().map_err(cache_err)?;
        let table = tx.open_table(INTENTS).map_err(cache_err)?;
        let (start, end) = (format!("{run_id}/"), format!("{run_id}0"));
        let mut out = Vec::new();
        for row in table
            .range(start.as_str()..end.as_str())
            .map_err(cache_err)?
        {
            let (k, v) = row.map_err(cache_err)?;
            let task_id = k.value()[start.len()..].to_string();
            out.push((
                task_id,
                rmp_serde::from_slice(v.value()).map_err(cache_err)?,
            ));
        }
        Ok(out)
    }

    /// Every delta recorded for a run, in order.
    pub fn replay(&self, run_id: &str) -> Result<Vec<StateDelta>, StoreError> {
        let tx = self.db.begin_read().map_err(cache_err)?;
        let table = tx.open_table(JOURNAL).map_err(cache_err)?;
        let start = format!("{run_id}/");
        let end = format!("{run_id}0");
        let mut out = Vec::new();
        for row in table
            .range(start.as_str()..end.as_str())
            .map_err(cache_err)?
        {
            let (_, v) = row.map_err(cache_err)?;
            let deltas: Vec<StateDelta> = rmp_serde::from_slice(v.value()).map_err(cache_err)?;
            out.extend(deltas);
        }
        Ok(out)
    }

    /// Forgets a run's journal once its snapshot is safely stored.
    pub fn clear(&self, run_id: &str) -> Result<(), StoreError> {
        let tx = self.db.begin_write().map_err(cache_err)?;
        {
            let start = format!("{run_id}/");
            let end = format!("{run_id}0");
            for def in [JOURNAL, INTENTS] {
                tx.open_table(def)
                    .map_err(cache_err)?
                    .retain_in(start.as_str()..end.as_str(), |_, _| false)
                    .map_err(cache_err)?;
            }
            tx.open_table(RUNS)
                .map_err(cache_err)?
                .remove(run_id)
                .map_err(cache_err)?;
        }
        tx.commit().map_err(cache_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ObjectStateStore;
    use fleetform_shared::state::OutputState;
    use fleetform_shared::value::Value;

    #[tokio::test]
    async fn cached_store_passes_the_suite() {
        let dir = tempfile::tempdir().unwrap();
        let db = open_db(&dir.path().join("cache.redb")).unwrap();
        let s = CachedStore::new(ObjectStateStore::from_url("memory://").unwrap(), db);
        crate::store::suite::run(&s).await;
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

    #[test]
    fn journal_replays_in_order_per_run_and_clears() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(open_db(&dir.path().join("j.redb")).unwrap());
        let d = |n: i64| StateDelta::SetOutput {
            name: "x".into(),
            value: Some(OutputState {
                value: Value::int(n),
                sensitive: false,
            }),
        };
        let run = JournaledRun {
            workspace: "default".into(),
            prior_serial: 4,
        };
        j.begin("run-a", &run).unwrap();
        let intent = |n: i64| Intent {
            change: fleetform_shared::plan::ResourceChange::new(
                format!("null_resource.x[{n}]").parse().unwrap(),
                ProviderAddr::implied("null"),
                fleetform_shared::plan::Action::Create,
            ),
            kind: OpKind::Apply,
            deposed_key: "k".into(),
            provisioning: Provisioning::None,
        };
        j.intend(
            "run-a",
            &[("t1".into(), intent(1)), ("t2".into(), intent(2))],
        )
        .unwrap();
        j.intend("run-ab", &[("t1".into(), intent(3))]).unwrap();
        j.append("run-a", 2, &[d(2)], &["t1".to_string()]).unwrap();
        j.append("run-a", 1, &[d(1)], &[]).unwrap();
        j.append("run-ab", 1, &[d(9)], &[]).unwrap();
        assert_eq!(j.replay("run-a").unwrap(), vec![d(1), d(2)]);
        assert_eq!(j.runs().unwrap(), vec![("run-a".to_string(), run)]);
        assert_eq!(
            j.intents("run-a").unwrap(),
            vec![("t2".to_string(), intent(2))],
            "a recorded result ends its intent"
        );
        j.clear("run-a").unwrap();
        assert!(j.replay("run-a").unwrap().is_empty());
        assert!(j.intents("run-a").unwrap().is_empty());
        assert!(j.runs().unwrap().is_empty());
        assert_eq!(j.replay("run-ab").unwrap(), vec![d(9)]);
        assert_eq!(j.intents("run-ab").unwrap().len(), 1);
    }
}
