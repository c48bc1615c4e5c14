//! What the coordinator does to workspaces and their state outside runs:
//! reading a snapshot (with the changes of a run applying now), listing,
//! creating and deleting workspaces, `state push`, `taint`/`untaint`,
//! `state mv`/`rm`/`replace-provider`, `force-unlock`.
//!
//! Every change takes the workspace's lock, loads the latest snapshot,
//! checks what it must (lineage and serial for a push, tracked objects for
//! a delete) and writes the next snapshot, or changes nothing. The API
//! ([`crate::api`]) checks who may ask and translates [`WorkspaceError`]
//! into gRPC statuses; nothing here knows about requests.

use crate::run::Coordinator;
use crate::store::{LeaseError, LockInfo, Origin, StoreError};
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::plan::shape::Shapes;
use fleetform_shared::state::{ObjectStatus, State};
use fleetform_shared::state_edit::StateEdit;
use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

/// Why a workspace operation did nothing.
#[derive(Debug)]
pub enum WorkspaceError {
    /// The state store failed; whether waiting helps depends on how.
    Store(StoreError),
    /// Checking or breaking a lock failed.
    Lease(LeaseError),
    NotFound(String),
    /// The workspace is not in a state that allows it (locked, a check
    /// failed, nothing to edit).
    Refused(String),
    AlreadyExists(String),
    /// Writing the next snapshot failed: the change was not made.
    NotWritten(String),
}

impl From<StoreError> for WorkspaceError {
    fn from(e: StoreError) -> WorkspaceError {
        WorkspaceError::Store(e)
    }
}

/// A workspace as listings show it.
pub struct WorkspaceSummary {
    pub name: String,
    pub serial: u64,
    pub resources: u64,
    /// The run holding its lock, if any.
    pub locked_by_run: Option<String>,
}

/// The workspace operations of one coordinator.
pub struct Workspaces<'a> {
    coordinator: &'a Coordinator,
}

/// Whether a state key names a `default` workspace, which always exists.
fn is_default(key: &str) -> bool {
    crate::store::workspace_of(key) == "default"
}

fn lock_refused(d: &Diagnostics) -> WorkspaceError {
    WorkspaceError::Refused(
        d.iter()
            .map(|d| format!("{}: {}", d.summary, d.detail))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

fn not_written(e: StoreError) -> WorkspaceError {
    WorkspaceError::NotWritten(e.to_string())
}

impl<'a> Workspaces<'a> {
    pub fn new(coordinator: &'a Coordinator) -> Workspaces<'a> {
        Workspaces { coordinator }
    }

    /// The snapshot `serial` of `workspace`, or (serial 0) its latest with
    /// the changes a run applying now has recorded so far; objects whose
    /// schema is cached are decoded, so readers see values rather than a
    /// state file's wrappers.
    pub async fn read(
        &self,
        workspace: &str,
        serial: u64,
    ) -> Result<Option<State>, WorkspaceError> {
        let store = self.coordinator.store();
        let mut state = if serial == 0 {
            let mut state = store.load(workspace).await?;
            if let Some(archive) = self.coordinator.archive() {
                let head = store.head(workspace).await?;
                let mut fresh = state.clone().unwrap_or_else(|| State::new(String::new()));
                if archive
                    .freshen(workspace, head.as_ref(), &mut fresh)
                    .await?
                {
                    state = Some(fresh);
                }
            }
            state
        } else {
            Some(store.load_serial(workspace, serial).await?.ok_or_else(|| {
                WorkspaceError::NotFound(format!(
                    "workspace {workspace} has no snapshot with serial {serial} (fleetform state history lists them)"
                ))
            })?)
        };
        if let Some(s) = state.as_mut() {
            self.decode_cached(s);
        }
        Ok(state)
    }

    /// Decodes the undecoded objects of `state` whose schema is cached; the
    /// others stay as they are, for the next run to decode or report.
    fn decode_cached(&self, state: &mut State) {
        let cache = self.coordinator.schema_cache();
        for (addr, inst) in state.resources.iter_mut() {
            let r = &addr.resource.resource;
            for obj in inst.current.iter_mut().chain(inst.deposed.values_mut()) {
                if !obj.undecoded {
                    continue;
                }
                let ty = cache
                    .object_type(&inst.provider, r.mode, &r.type_name, obj.schema_version)
                    .ok()
                    .flatten();
                let mut decoded = obj.clone();
                if let Some(ty) = ty
                    && fleetform_shared::statefile::decode_as(&mut decoded, &ty).is_ok()
                {
                    *obj = decoded;
                }
            }
        }
    }

    /// The shapes of `state`'s resource types whose schema is cached, each
    /// read once (at the schema version of the first object of its type).
    pub fn cached_shapes(&self, state: &State) -> Shapes {
        let cache = self.coordinator.schema_cache();
        let mut shapes = Shapes::default();
        let mut tried = HashSet::new();
        for (addr, inst) in &state.resources {
            let r = &addr.resource.resource;
            if !tried.insert((&inst.provider, r.mode, &r.type_name)) {
                continue;
            }
            let version = inst
                .current
                .iter()
                .chain(inst.deposed.values())
                .map(|o| o.schema_version)
                .next();
            if let Ok(Some(schema)) = cache.schema_of(&inst.provider, r.mode, &r.type_name, version)
            {
                shapes.insert(&inst.provider, r.mode, &r.type_name, &schema.block);
            }
        }
        shapes
    }

    /// `state` as Terraform's state file, its attributes written through
    /// the provider schemas this coordinator has cached (fetching those of
    /// providers it lacks); an object whose schema it cannot get fails
    /// rather than giving a file Terraform cannot read.
    pub async fn state_file(&self, state: &State) -> Result<Vec<u8>, WorkspaceError> {
        let cache = self.coordinator.schema_cache();
        let mut missing = BTreeSet::new();
        for (addr, inst) in &state.resources {
            let r = &addr.resource.resource;
            for obj in inst.current.iter().chain(inst.deposed.values()) {
                let known = obj.undecoded
                    || cache
                        .object_type(&inst.provider, r.mode, &r.type_name, obj.schema_version)
                        .ok()
                        .flatten()
                        .is_some();
                if !known {
                    missing.insert(inst.provider.clone());
                }
            }
        }
        let mut failures = Vec::new();
        for provider in &missing {
            // A failure shows with the object's missing schema below.
            if let Err(d) = self.coordinator.fetch_schema(provider).await {
                let why: Vec<String> = d.iter().map(|d| d.summary.clone()).collect();
                failures.push(format!(
                    "fetching the schema of {provider} failed: {}",
                    why.join("; ")
                ));
            }
        }
        let lookup = |provider: &fleetform_shared::ProviderAddr, mode, type_name: &str, version| {
            cache
                .object_type(provider, mode, type_name, version)
                .unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "reading the schema cache failed");
                    None
                })
        };
        let doc = fleetform_shared::statefile::to_v4(
            state,
            fleetform_shared::statefile::TERRAFORM_VERSION,
            &lookup,
        )
        .map_err(|e| {
            failures.insert(0, e);
            WorkspaceError::Refused(failures.join("; "))
        })?;
        Ok(doc.to_string_pretty().into_bytes())
    }

    /// Breaks the lock `id` of `workspace`; says whose it was.
    pub async fn force_unlock(
        &self,
        workspace: &str,
        id: &str,
    ) -> Result<LockInfo, WorkspaceError> {
        match self.coordinator.force_unlock(workspace, id).await {
            Ok(info) => Ok(info),
            Err(LeaseError::NotHeld(id)) => Err(WorkspaceError::NotFound(format!(
                "workspace {workspace} has no lock with id {id}"
            ))),
            Err(e) => Err(WorkspaceError::Lease(e)),
        }
    }

    /// The workspaces of `project` (or of no project) that `readable` lets
    /// through, "default" first as Terraform lists them (it always exists).
    pub async fn list(
        &self,
        project: Option<&str>,
        readable: impl Fn(&str) -> bool,
    ) -> Result<Vec<WorkspaceSummary>, WorkspaceError> {
        let store = self.coordinator.store();
        let default = crate::store::state_key(project, "default");
        let mut names = store.workspaces(project).await?;
        names.retain(|n| *n != default);
        names.insert(0, default);
        names.retain(|n| readable(n));
        let mut out = Vec::new();
        for name in names {
            let state = store.load(&name).await?;
            let holder = self
                .coordinator
                .lock_holder(&name)
                .await
                .map_err(WorkspaceError::Lease)?;
            out.push(WorkspaceSummary {
                serial: state.as_ref().map_or(0, |s| s.serial),
                resources: state.as_ref().map_or(0, |s| s.resources.len() as u64),
                locked_by_run: holder.map(|h| h.run_id),
                name,
            });
        }
        Ok(out)
    }

    pub async fn create(&self, workspace: &str) -> Result<(), WorkspaceError> {
        let exists =
            is_default(workspace) || !self.coordinator.store().create_workspace(workspace).await?;
        if exists {
            return Err(WorkspaceError::AlreadyExists(format!(
                "workspace {workspace:?} already exists"
            )));
        }
        Ok(())
    }

    /// Deletes `workspace` and its snapshots; refused while it tracks
    /// objects unless `force` (which forgets them). Returns how many
    /// resource instances were forgotten.
    pub async fn delete(
        &self,
        workspace: &str,
        force: bool,
        wait: Option<Duration>,
    ) -> Result<u64, WorkspaceError> {
        if is_default(workspace) {
            return Err(WorkspaceError::Refused(
                "the default workspace cannot be deleted".into(),
            ));
        }
        let store = self.coordinator.store().clone();
        if !store
            .workspaces(crate::store::project_of(workspace))
            .await?
            .iter()
            .any(|w| w == workspace)
        {
            return Err(WorkspaceError::NotFound(format!(
                "workspace {workspace:?} does not exist"
            )));
        }
        self.coordinator
            .with_workspace_lock(workspace, "workspace delete", wait, async {
                let state = store.load(workspace).await?;
                let tracked: Vec<String> = state
                    .iter()
                    .flat_map(|s| s.resources.keys().chain(s.interrupted.keys()))
                    .map(|a| a.to_string())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                if !tracked.is_empty() && !force {
                    let shown = tracked.iter().take(20).map(|a| format!("\n  - {a}"));
                    let more = tracked.len().saturating_sub(20);
                    return Err(WorkspaceError::Refused(format!(
                        "workspace {workspace:?} still tracks {} resource instance(s):{}{}\n\nDeleting it would leave their objects running with nothing that manages them. Destroy them first (fleetform -workspace={workspace} destroy), or add -force to delete the workspace and forget them.",
                        tracked.len(),
                        shown.collect::<String>(),
                        if more > 0 { format!("\n  ... and {more} more") } else { String::new() },
                    )));
                }
                store.delete_workspace(workspace).await?;
                Ok(tracked.len() as u64)
            })
            .await
            .map_err(|d| lock_refused(&d))?
    }

    /// `state push`: `pushed` becomes the next snapshot, unless it is the
    /// state of something else (another lineage) or older than the
    /// workspace's, which `force` overrides (Terraform's two checks).
    /// Returns the serial it was stored at.
    pub async fn push(
        &self,
        workspace: &str,
        mut pushed: State,
        force: bool,
        source: String,
        wait: Option<Duration>,
    ) -> Result<u64, WorkspaceError> {
        let store = self.coordinator.store().clone();
        self.coordinator
            .with_workspace_lock(workspace, "state push", wait, async {
                // -force replaces even a state whose latest snapshot does
                // not read (that snapshot stays, in the history).
                let (current, serial) = match store.load(workspace).await {
                    Ok(c) => {
                        let serial = c.as_ref().map_or(0, |c| c.serial);
                        (c, serial)
                    }
                    Err(StoreError::CorruptedLatest { serial, .. }) if force => (None, serial),
                    Err(e) => return Err(WorkspaceError::Store(e)),
                };
                if let Some(c) = &current
                    && !force
                {
                    if c.lineage != pushed.lineage {
                        return Err(WorkspaceError::Refused(format!(
                            "the pushed state has lineage {:?}, workspace {workspace} has {:?}: it is the state of something else. Use -force to replace it anyway.",
                            pushed.lineage, c.lineage
                        )));
                    }
                    if pushed.serial < c.serial {
                        return Err(WorkspaceError::Refused(format!(
                            "the pushed state has serial {}, older than workspace {workspace}'s {}: pushing it would lose changes. Use -force to push it anyway.",
                            pushed.serial, c.serial
                        )));
                    }
                }
                // Stored as the next snapshot; the pushed serial is kept in
                // the history's record only through its lineage.
                pushed.serial = serial + 1;
                store
                    .save(
                        workspace,
                        &pushed,
                        &Origin::new("", "push").from_source(source),
                    )
                    .await
                    .map_err(not_written)?;
                Ok(pushed.serial)
            })
            .await
            .map_err(|d| lock_refused(&d))?
    }

    /// `taint` (or `untaint`) of the current object of `addr`.
    pub async fn set_tainted(
        &self,
        workspace: &str,
        addr: &AbsResourceInstance,
        tainted: bool,
        wait: Option<Duration>,
    ) -> Result<(), WorkspaceError> {
        let store = self.coordinator.store().clone();
        let operation = if tainted { "taint" } else { "untaint" };
        self.coordinator
            .with_workspace_lock(workspace, "taint", wait, async {
                let mut state = store
                    .load(workspace)
                    .await?
                    .ok_or_else(|| WorkspaceError::NotFound("the workspace has no state".into()))?;
                let obj = state
                    .resources
                    .get_mut(addr)
                    .and_then(|i| i.current.as_mut())
                    .ok_or_else(|| {
                        WorkspaceError::NotFound(format!("no resource instance {addr} in state"))
                    })?;
                obj.status = if tainted {
                    ObjectStatus::Tainted
                } else {
                    ObjectStatus::Ready
                };
                state.serial += 1;
                store
                    .save(workspace, &state, &Origin::new("", operation))
                    .await
                    .map_err(not_written)
            })
            .await
            .map_err(|d| lock_refused(&d))?
    }

    /// `state mv`, `state rm`, `state replace-provider`: the lines that
    /// say what moved or went, and the serial written (0 for a dry run,
    /// which writes nothing).
    pub async fn edit(
        &self,
        workspace: &str,
        edit: &StateEdit,
        dry_run: bool,
        wait: Option<Duration>,
    ) -> Result<(Vec<String>, u64), WorkspaceError> {
        let store = self.coordinator.store().clone();
        let operation = match edit {
            StateEdit::Move { .. } => "state mv",
            StateEdit::Remove { .. } => "state rm",
            StateEdit::ReplaceProvider { .. } => "state replace-provider",
        };
        self.coordinator
            .with_workspace_lock(workspace, operation, wait, async {
                let mut state = store.load(workspace).await?.ok_or_else(|| {
                    WorkspaceError::Refused(format!(
                        "workspace {workspace} has no state yet: nothing to edit"
                    ))
                })?;
                let lines = state.edit(edit).map_err(WorkspaceError::Refused)?;
                if dry_run {
                    return Ok((lines, 0));
                }
                state.serial += 1;
                store
                    .save(workspace, &state, &Origin::new("", operation))
                    .await
                    .map_err(not_written)?;
                Ok((lines, state.serial))
            })
            .await
            .map_err(|d| lock_refused(&d))?
    }
}
