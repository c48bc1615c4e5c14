//! The gRPC API (tonic): the fleetform service the CLI talks to.

use crate::auth::{Auth, Role, authorize};
use crate::run::Coordinator;
use fleetform_proto::fleetform as pb;
use fleetform_proto::fleetform::fleetform_server::{Fleetform, FleetformServer};
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::state::{ObjectStatus, State};
use fleetform_shared::wire::RunRequest;
use futures::Stream;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct Api {
    coordinator: Coordinator,
    /// None: no authentication (a loopback-only or `--insecure` API).
    auth: Option<Arc<Auth>>,
}

impl Api {
    pub fn new(coordinator: Coordinator) -> Api {
        Api {
            coordinator,
            auth: None,
        }
    }

    /// Every request must carry credentials that `auth` grants.
    pub fn with_auth(mut self, auth: Option<Arc<Auth>>) -> Api {
        self.auth = auth;
        self
    }

    /// Checks `req`'s credentials for `role` on `workspace`.
    fn check<T>(&self, req: &Request<T>, role: Role, workspace: &str) -> Result<(), Status> {
        authorize(self.auth.as_deref(), req, role, Some(workspace))
    }

    /// Checks that `req` carries valid credentials at all (before its
    /// content is looked at).
    fn authenticated<T>(&self, req: &Request<T>) -> Result<(), Status> {
        match &self.auth {
            Some(a) => a.identify(req).map(|_| ()),
            None => Ok(()),
        }
    }

    /// Which workspaces `req` may read (for listings).
    fn readable<T>(&self, req: &Request<T>) -> Result<impl Fn(&str) -> bool + use<T>, Status> {
        let who = match &self.auth {
            Some(a) => Some(a.identify(req)?.clone()),
            None => None,
        };
        Ok(move |w: &str| who.as_ref().is_none_or(|i| i.allows(Role::Read, w)))
    }

    /// The workspace of a run this process knows.
    fn run_workspace(&self, id: &str) -> Option<String> {
        self.coordinator.run(id).map(|h| h.workspace.clone())
    }

    /// The tonic service, with message limits large enough for big plans.
    pub fn into_service(self) -> FleetformServer<Api> {
        FleetformServer::new(self)
            .max_decoding_message_size(1 << 30)
            .max_encoding_message_size(1 << 30)
    }
}

/// A request's state key: `WORKSPACE` or `PROJECT/WORKSPACE`.
fn workspace_name(w: &str) -> Result<String, Status> {
    let w = if w.is_empty() { "default" } else { w };
    if crate::store::valid_state_key(w) {
        Ok(w.to_string())
    } else {
        Err(Status::invalid_argument(format!(
            "invalid workspace name {w:?}: use letters, digits, - and _ (up to 90 characters), with a project in front (PROJECT/WORKSPACE) or none"
        )))
    }
}

/// Whether a state key names a `default` workspace, which always exists.
fn is_default(key: &str) -> bool {
    crate::store::workspace_of(key) == "default"
}

fn unavailable<E: std::fmt::Display + 'static>(e: E) -> Status {
    // A latest snapshot that does not read is no passing trouble: retrying
    // will not help.
    let any: &dyn std::any::Any = &e;
    match any.downcast_ref() {
        Some(crate::store::StoreError::CorruptedLatest { .. }) => {
            return Status::data_loss(e.to_string());
        }
        // A key that is missing or wrong, or a store that is set up wrong
        // (no bucket, refused credentials): waiting will not help.
        Some(crate::store::StoreError::Sealed(_) | crate::store::StoreError::Misconfigured(_)) => {
            return Status::failed_precondition(e.to_string());
        }
        _ => {}
    }
    Status::unavailable(e.to_string())
}

#[tonic::async_trait]
impl Fleetform for Api {
    async fn submit_run(
        &self,
        req: Request<pb::SubmitRunRequest>,
    ) -> Result<Response<pb::SubmitRunResponse>, Status> {
        self.authenticated(&req)?;
        let workspace = workspace_name(&req.get_ref().workspace)?;
        let run: RunRequest = rmp_serde::from_slice(&req.get_ref().request)
            .map_err(|e| Status::invalid_argument(format!("undecodable run request: {e}")))?;
        let role = match run.operation {
            fleetform_shared::wire::Operation::Plan => Role::Plan,
            _ => Role::Apply,
        };
        self.check(&req, role, &workspace)?;
        let req = req.into_inner();
        let handle =
            self.coordinator
                .submit_waiting(&workspace, run, lock_wait(req.lock_timeout_ms));
        Ok(Response::new(pb::SubmitRunResponse {
            run_id: handle.id.clone(),
        }))
    }

    type WatchRunStream = Pin<Box<dyn Stream<Item = Result<pb::RunEvent, Status>> + Send>>;

    async fn watch_run(
        &self,
        req: Request<pb::WatchRunRequest>,
    ) -> Result<Response<Self::WatchRunStream>, Status> {
        self.authenticated(&req)?;
        if let Some(w) = self.run_workspace(&req.get_ref().run_id) {
            self.check(&req, Role::Read, &w)?;
        } else {
            // A run being recovered: its workspace is not known yet.
            authorize(self.auth.as_deref(), &req, Role::Read, None)?;
        }
        let req = req.into_inner();
        let id = req.run_id;
        let Some(handle) = self.coordinator.run(&id) else {
            // Not running yet after a restart: the watcher waits for it as
            // for a coordinator out of reach.
            if self.coordinator.recovering(&id) {
                return Err(Status::unavailable(format!(
                    "run {id} is being recovered after a restart (waiting for the state store or its workspace)"
                )));
            }
            if let Some((_, ended)) = self
                .coordinator
                .ended_runs()
                .into_iter()
                .find(|(run, _)| *run == id)
            {
                return Err(Status::not_found(format!(
                    "run {id} ({} of workspace \"{}\") {} at {}; the coordinator keeps the events of its latest finished runs only",
                    ended.operation, ended.workspace, ended.status, ended.ended_at
                )));
            }
            return Err(Status::not_found(format!("no run {id}")));
        };
        let stream = async_stream(handle, req.from_sequence as usize, req.parts);
        Ok(Response::new(Box::pin(stream)))
    }

    async fn approve_run(
        &self,
        req: Request<pb::ApproveRunRequest>,
    ) -> Result<Response<pb::ApproveRunResponse>, Status> {
        self.authenticated(&req)?;
        if let Some(w) = self.run_workspace(&req.get_ref().run_id) {
            self.check(&req, Role::Apply, &w)?;
        }
        let req = req.into_inner();
        let handle = self
            .coordinator
            .run(&req.run_id)
            .ok_or_else(|| Status::not_found(format!("no run {}", req.run_id)))?;
        if !handle.decide(req.approve) {
            return Err(Status::failed_precondition(
                "the run is not waiting for approval",
            ));
        }
        Ok(Response::new(pb::ApproveRunResponse {}))
    }

    async fn cancel_run(
        &self,
        req: Request<pb::CancelRunRequest>,
    ) -> Result<Response<pb::CancelRunResponse>, Status> {
        self.authenticated(&req)?;
        if let Some(w) = self.run_workspace(&req.get_ref().run_id) {
            self.check(&req, Role::Apply, &w)?;
        }
        let id = req.into_inner().run_id;
        let handle = self
            .coordinator
            .run(&id)
            .ok_or_else(|| Status::not_found(format!("no run {id}")))?;
        Ok(Response::new(pb::CancelRunResponse {
            cancelling: handle.cancel(),
        }))
    }

    async fn get_state(
        &self,
        req: Request<pb::GetStateRequest>,
    ) -> Result<Response<pb::GetStateResponse>, Status> {
        self.authenticated(&req)?;
        self.check(&req, Role::Read, &workspace_name(&req.get_ref().workspace)?)?;
        let req = req.into_inner();
        let workspace = workspace_name(&req.workspace)?;
        let store = self.coordinator.store();
        let state = if req.serial == 0 {
            let mut state = store.load(&workspace).await.map_err(unavailable)?;
            // A run applying now: its changes so far, as its segments say.
            if let Some(archive) = self.coordinator.archive() {
                let head = store.head(&workspace).await.map_err(unavailable)?;
                let mut fresh = state.clone().unwrap_or_else(|| State::new(String::new()));
                if archive
                    .freshen(&workspace, head.as_ref(), &mut fresh)
                    .await
                    .map_err(unavailable)?
                {
                    state = Some(fresh);
                }
            }
            state
        } else {
            let found = store
                .load_serial(&workspace, req.serial)
                .await
                .map_err(unavailable)?;
            Some(found.ok_or_else(|| {
                Status::not_found(format!(
                    "workspace {workspace} has no snapshot with serial {} (fleetform state history lists them)",
                    req.serial
                ))
            })?)
        };
        // What reads the snapshot (show, state show, output) sees values,
        // not a state file's wrappers, wherever the schema is cached.
        let mut state = state;
        if let Some(s) = state.as_mut() {
            self.decode_cached(s);
        }
        let state_file = match (&state, req.state_file) {
            (Some(s), true) => self.state_file(s).await?,
            _ => Vec::new(),
        };
        let shapes = match (&state, req.shapes) {
            (Some(s), true) => rmp_serde::to_vec_named(&self.cached_shapes(s))
                .map_err(|e| Status::internal(e.to_string()))?,
            _ => Vec::new(),
        };
        Ok(Response::new(pb::GetStateResponse {
            state: state.map(|s| s.encode()).unwrap_or_default(),
            state_file,
            shapes,
        }))
    }

    async fn force_unlock(
        &self,
        req: Request<pb::ForceUnlockRequest>,
    ) -> Result<Response<pb::ForceUnlockResponse>, Status> {
        self.authenticated(&req)?;
        self.check(
            &req,
            Role::Admin,
            &workspace_name(&req.get_ref().workspace)?,
        )?;
        let req = req.into_inner();
        let workspace = workspace_name(&req.workspace)?;
        match self
            .coordinator
            .force_unlock(&workspace, &req.lock_id)
            .await
        {
            Ok(info) => Ok(Response::new(pb::ForceUnlockResponse {
                run_id: info.run_id,
                owner: info.owner,
            })),
            Err(crate::store::LeaseError::NotHeld(id)) => Err(Status::not_found(format!(
                "workspace {workspace} has no lock with id {id}"
            ))),
            Err(e) => Err(Status::unavailable(e.to_string())),
        }
    }

    async fn list_workspaces(
        &self,
        req: Request<pb::ListWorkspacesRequest>,
    ) -> Result<Response<pb::ListWorkspacesResponse>, Status> {
        let readable = self.readable(&req)?;
        let project = match req.get_ref().project.as_str() {
            "" => None,
            p if crate::store::valid_project_name(p) => Some(p.to_string()),
            p => {
                return Err(Status::invalid_argument(format!(
                    "invalid project name {p:?}: use letters, digits, - and _ (up to 90 characters)"
                )));
            }
        };
        let store = self.coordinator.store();
        // "default" first, as Terraform lists them; it always exists.
        let default = crate::store::state_key(project.as_deref(), "default");
        let mut names = store
            .workspaces(project.as_deref())
            .await
            .map_err(unavailable)?;
        names.retain(|n| *n != default);
        names.insert(0, default);
        names.retain(|n| readable(n));
        let mut workspaces = Vec::new();
        for name in names {
            let state = store.load(&name).await.map_err(unavailable)?;
            let holder = self
                .coordinator
                .lock_holder(&name)
                .await
                .map_err(unavailable)?;
            workspaces.push(pb::WorkspaceInfo {
                serial: state.as_ref().map_or(0, |s| s.serial),
                resources: state.as_ref().map_or(0, |s| s.resources.len() as u64),
                locked_by_run: holder.map(|h| h.run_id).unwrap_or_default(),
                name,
            });
        }
        Ok(Response::new(pb::ListWorkspacesResponse { workspaces }))
    }

    async fn create_workspace(
        &self,
        req: Request<pb::CreateWorkspaceRequest>,
    ) -> Result<Response<pb::CreateWorkspaceResponse>, Status> {
        self.authenticated(&req)?;
        self.check(
            &req,
            Role::Apply,
            &workspace_name(&req.get_ref().workspace)?,
        )?;
        let workspace = workspace_name(&req.into_inner().workspace)?;
        let store = self.coordinator.store();
        let exists = is_default(&workspace)
            || !store
                .create_workspace(&workspace)
                .await
                .map_err(unavailable)?;
        if exists {
            return Err(Status::already_exists(format!(
                "workspace {workspace:?} already exists"
            )));
        }
        Ok(Response::new(pb::CreateWorkspaceResponse {}))
    }

    async fn delete_workspace(
        &self,
        req: Request<pb::DeleteWorkspaceRequest>,
    ) -> Result<Response<pb::DeleteWorkspaceResponse>, Status> {
        self.authenticated(&req)?;
        self.check(
            &req,
            Role::Admin,
            &workspace_name(&req.get_ref().workspace)?,
        )?;
        let req = req.into_inner();
        let workspace = workspace_name(&req.workspace)?;
        if is_default(&workspace) {
            return Err(Status::failed_precondition(
                "the default workspace cannot be deleted",
            ));
        }
        let store = self.coordinator.store().clone();
        if !store
            .workspaces(crate::store::project_of(&workspace))
            .await
            .map_err(unavailable)?
            .contains(&workspace)
        {
            return Err(Status::not_found(format!(
                "workspace {workspace:?} does not exist"
            )));
        }
        let wait = lock_wait(req.lock_timeout_ms);
        let forgotten = self
            .coordinator
            .with_workspace_lock(&workspace, "workspace delete", wait, async {
                let state = store.load(&workspace).await.map_err(unavailable)?;
                let tracked: Vec<String> = state
                    .iter()
                    .flat_map(|s| s.resources.keys().chain(s.interrupted.keys()))
                    .map(|a| a.to_string())
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                if !tracked.is_empty() && !req.force {
                    let shown = tracked.iter().take(20).map(|a| format!("\n  - {a}"));
                    let more = tracked.len().saturating_sub(20);
                    return Err(Status::failed_precondition(format!(
                        "workspace {workspace:?} still tracks {} resource instance(s):{}{}\n\nDeleting it would leave their objects running with nothing that manages them. Destroy them first (fleetform -workspace={workspace} destroy), or add -force to delete the workspace and forget them.",
                        tracked.len(),
                        shown.collect::<String>(),
                        if more > 0 { format!("\n  ... and {more} more") } else { String::new() },
                    )));
                }
                store
                    .delete_workspace(&workspace)
                    .await
                    .map_err(unavailable)?;
                Ok(tracked.len() as u64)
            })
            .await
            .map_err(|d| Status::failed_precondition(diagnostics_text(&d)))??;
        Ok(Response::new(pb::DeleteWorkspaceResponse { forgotten }))
    }

    async fn push_state(
        &self,
        req: Request<pb::PushStateRequest>,
    ) -> Result<Response<pb::PushStateResponse>, Status> {
        self.authenticated(&req)?;
        self.check(
            &req,
            Role::Admin,
            &workspace_name(&req.get_ref().workspace)?,
        )?;
        let req = req.into_inner();
        let workspace = workspace_name(&req.workspace)?;
        let mut pushed = State::decode(&req.state)
            .map_err(|e| Status::invalid_argument(format!("undecodable state: {e}")))?;
        let store = self.coordinator.store().clone();
        let wait = lock_wait(req.lock_timeout_ms);
        let serial = self
            .coordinator
            .with_workspace_lock(&workspace, "state push", wait, async {
                // -force replaces even a state whose latest snapshot does
                // not read (that snapshot stays, in the history).
                let (current, serial) = match store.load(&workspace).await {
                    Ok(c) => {
                        let serial = c.as_ref().map_or(0, |c| c.serial);
                        (c, serial)
                    }
                    Err(crate::store::StoreError::CorruptedLatest { serial, .. }) if req.force => {
                        (None, serial)
                    }
                    Err(e) => return Err(unavailable(e)),
                };
                if let Some(c) = &current
                    && !req.force
                {
                    // Terraform's two safety checks, in its words' spirit.
                    if c.lineage != pushed.lineage {
                        return Err(Status::failed_precondition(format!(
                            "the pushed state has lineage {:?}, workspace {workspace} has {:?}: it is the state of something else. Use -force to replace it anyway.",
                            pushed.lineage, c.lineage
                        )));
                    }
                    if pushed.serial < c.serial {
                        return Err(Status::failed_precondition(format!(
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
                        &workspace,
                        &pushed,
                        &crate::store::Origin::new("", "push").from_source(req.source.clone()),
                    )
                    .await
                    .map_err(|e| Status::aborted(e.to_string()))?;
                Ok(pushed.serial)
            })
            .await
            .map_err(|d| Status::failed_precondition(diagnostics_text(&d)))??;
        Ok(Response::new(pb::PushStateResponse { serial }))
    }

    async fn state_history(
        &self,
        req: Request<pb::StateHistoryRequest>,
    ) -> Result<Response<pb::StateHistoryResponse>, Status> {
        self.authenticated(&req)?;
        self.check(&req, Role::Read, &workspace_name(&req.get_ref().workspace)?)?;
        let workspace = workspace_name(&req.into_inner().workspace)?;
        let history = self
            .coordinator
            .store()
            .history(&workspace)
            .await
            .map_err(unavailable)?;
        let snapshots = history
            .into_iter()
            .map(|h| pb::StateSnapshotInfo {
                serial: h.serial,
                lineage: h.lineage,
                run_id: h.run_id,
                operation: h.operation,
                written_at: h.written_at,
                bytes: h.bytes,
            })
            .collect();
        Ok(Response::new(pb::StateHistoryResponse { snapshots }))
    }

    async fn list_runs(
        &self,
        req: Request<pb::ListRunsRequest>,
    ) -> Result<Response<pb::ListRunsResponse>, Status> {
        let readable = self.readable(&req)?;
        let workspace = req.into_inner().workspace;
        let runs = run_infos(&self.coordinator, &workspace, readable);
        Ok(Response::new(pb::ListRunsResponse { runs }))
    }

    async fn set_tainted(
        &self,
        req: Request<pb::SetTaintedRequest>,
    ) -> Result<Response<pb::SetTaintedResponse>, Status> {
        self.authenticated(&req)?;
        self.check(
            &req,
            Role::Apply,
            &workspace_name(&req.get_ref().workspace)?,
        )?;
        let req = req.into_inner();
        let workspace = workspace_name(&req.workspace)?;
        let addr: AbsResourceInstance =
            req.address
                .parse()
                .map_err(|e: fleetform_shared::addr::AddrParseError| {
                    Status::invalid_argument(e.to_string())
                })?;
        let store = self.coordinator.store().clone();
        self.coordinator
            .with_workspace_lock(&workspace, "taint", lock_wait(req.lock_timeout_ms), async {
                let mut state: State = store
                    .load(&workspace)
                    .await
                    .map_err(|e| Status::unavailable(e.to_string()))?
                    .ok_or_else(|| Status::not_found("the workspace has no state"))?;
                let obj = state
                    .resources
                    .get_mut(&addr)
                    .and_then(|i| i.current.as_mut())
                    .ok_or_else(|| {
                        Status::not_found(format!("no resource instance {addr} in state"))
                    })?;
                obj.status = if req.tainted {
                    ObjectStatus::Tainted
                } else {
                    ObjectStatus::Ready
                };
                state.serial += 1;
                let operation = if req.tainted { "taint" } else { "untaint" };
                store
                    .save(
                        &workspace,
                        &state,
                        &crate::store::Origin::new("", operation),
                    )
                    .await
                    .map_err(|e| Status::aborted(e.to_string()))
            })
            .await
            .map_err(|d| Status::failed_precondition(diagnostics_text(&d)))??;
        Ok(Response::new(pb::SetTaintedResponse {}))
    }

    async fn list_workers(
        &self,
        req: Request<pb::ListWorkersRequest>,
    ) -> Result<Response<pb::ListWorkersResponse>, Status> {
        authorize(self.auth.as_deref(), &req, Role::Read, None)?;
        let workers = self
            .coordinator
            .dispatcher()
            .workers()
            .await
            .map_err(|e| Status::unavailable(e.to_string()))?;
        Ok(Response::new(pb::ListWorkersResponse {
            known: workers.is_some(),
            workers: rmp_serde::to_vec_named(&workers.unwrap_or_default())
                .map_err(|e| Status::internal(e.to_string()))?,
        }))
    }

    async fn edit_state(
        &self,
        req: Request<pb::EditStateRequest>,
    ) -> Result<Response<pb::EditStateResponse>, Status> {
        self.authenticated(&req)?;
        self.check(
            &req,
            Role::Admin,
            &workspace_name(&req.get_ref().workspace)?,
        )?;
        Ok(Response::new(self.edit_state_now(req.into_inner()).await?))
    }
}

impl Api {
    /// Decodes the undecoded objects of `state` whose schema is cached; the
    /// others stay as they are, for the next run to decode or report.
    /// The shapes of `state`'s resource types whose schema is cached, each
    /// read once (at the schema version of the first object of its type).
    fn cached_shapes(&self, state: &State) -> fleetform_shared::plan::shape::Shapes {
        let cache = self.coordinator.schema_cache();
        let mut shapes = fleetform_shared::plan::shape::Shapes::default();
        let mut tried = std::collections::HashSet::new();
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

    /// `state` as Terraform's state file, its attributes written through
    /// the provider schemas this coordinator has cached; an object whose
    /// schema it lacks fails the request rather than giving a file
    /// Terraform cannot read.
    async fn state_file(&self, state: &State) -> Result<Vec<u8>, Status> {
        let cache = self.coordinator.schema_cache();
        // Providers with an object whose schema is not cached: fetched once.
        let mut missing = std::collections::BTreeSet::new();
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
            Status::failed_precondition(failures.join("; "))
        })?;
        Ok(doc.to_string_pretty().into_bytes())
    }

    async fn edit_state_now(
        &self,
        req: pb::EditStateRequest,
    ) -> Result<pb::EditStateResponse, Status> {
        let workspace = workspace_name(&req.workspace)?;
        let edit: fleetform_shared::state_edit::StateEdit = rmp_serde::from_slice(&req.edit)
            .map_err(|e| Status::invalid_argument(format!("undecodable state edit: {e}")))?;
        let store = self.coordinator.store().clone();
        let operation = match &edit {
            fleetform_shared::state_edit::StateEdit::Move { .. } => "state mv",
            fleetform_shared::state_edit::StateEdit::Remove { .. } => "state rm",
            fleetform_shared::state_edit::StateEdit::ReplaceProvider { .. } => {
                "state replace-provider"
            }
        };
        self.coordinator
            .with_workspace_lock(
                &workspace,
                operation,
                lock_wait(req.lock_timeout_ms),
                async {
                    let mut state: State = store
                        .load(&workspace)
                        .await
                        .map_err(unavailable)?
                        .ok_or_else(|| {
                            Status::failed_precondition(format!(
                                "workspace {workspace} has no state yet: nothing to edit"
                            ))
                        })?;
                    let lines = state.edit(&edit).map_err(Status::failed_precondition)?;
                    if req.dry_run {
                        return Ok(pb::EditStateResponse { lines, serial: 0 });
                    }
                    state.serial += 1;
                    store
                        .save(
                            &workspace,
                            &state,
                            &crate::store::Origin::new("", operation),
                        )
                        .await
                        .map_err(|e| Status::aborted(e.to_string()))?;
                    Ok(pb::EditStateResponse {
                        lines,
                        serial: state.serial,
                    })
                },
            )
            .await
            .map_err(|d| Status::failed_precondition(diagnostics_text(&d)))?
    }
}

/// A request's `-lock-timeout` (0: fail at once when locked).
fn lock_wait(ms: u64) -> Option<std::time::Duration> {
    (ms > 0).then(|| std::time::Duration::from_millis(ms))
}

fn diagnostics_text(d: &fleetform_shared::diag::Diagnostics) -> String {
    d.iter()
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The runs of `workspace` (all when empty) that `readable` lets through:
/// those that ended before this process started first (from disk), then
/// the ones it drives or drove.
pub(crate) fn run_infos(
    coordinator: &Coordinator,
    workspace: &str,
    readable: impl Fn(&str) -> bool,
) -> Vec<pb::RunInfo> {
    let earlier = coordinator
        .ended_runs()
        .into_iter()
        .filter(|(_, e)| workspace.is_empty() || e.workspace == workspace)
        .filter(|(_, e)| readable(&e.workspace))
        .map(|(id, e)| pb::RunInfo {
            run_id: id,
            workspace: e.workspace,
            operation: e.operation,
            status: e.status,
            started_at: e.started_at,
            resumed: false,
        });
    earlier
        .chain(
            coordinator
                .runs()
                .into_iter()
                .filter(|r| workspace.is_empty() || r.workspace == workspace)
                .filter(|r| readable(&r.workspace))
                .map(|r| pb::RunInfo {
                    run_id: r.id.clone(),
                    workspace: r.workspace.clone(),
                    operation: format!("{:?}", r.operation).to_lowercase(),
                    status: r
                        .events
                        .status()
                        .map_or("running".to_string(), |s| format!("{s:?}").to_lowercase()),
                    started_at: r.started_at.clone(),
                    resumed: r.resumed,
                }),
        )
        .collect()
}

/// Replays a run's events from `from` and follows it until it finishes.
/// A watcher that takes `parts` gets an event of more than 1 MiB (a large
/// plan) as several messages of at most that size: the plan of 100,000
/// creates is a 45 MB event, and in one message it kept encode and decode
/// buffers of that size on both ends for the rest of the stream.
fn async_stream(
    handle: std::sync::Arc<crate::run::RunHandle>,
    from: usize,
    parts: bool,
) -> impl Stream<Item = Result<pb::RunEvent, Status>> + Send {
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    tokio::spawn(async move {
        let mut sub = handle.events.subscribe();
        let mut next = from;
        loop {
            for event in handle.events.since_parts(next) {
                let pieces = match <[Vec<u8>; 1]>::try_from(event) {
                    Ok([whole]) => vec![whole],
                    Err(pieces) if parts => pieces,
                    Err(pieces) => vec![pieces.concat()],
                };
                let last = pieces.len() - 1;
                for (i, bytes) in pieces.into_iter().enumerate() {
                    let msg = pb::RunEvent {
                        sequence: next as u64,
                        event: bytes,
                        incarnation: handle.incarnation.clone(),
                        more: i < last,
                    };
                    if tx.send(Ok(msg)).await.is_err() {
                        return;
                    }
                }
                next += 1;
            }
            if handle.events.is_finished() && handle.events.len() <= next {
                return;
            }
            // A client that has gone lets the run go too: waiting on, the
            // task would keep the run's handle and log for as long as the
            // run waits (for an approval, say).
            tokio::select! {
                changed = sub.changed() => if changed.is_err() { return },
                () = tx.closed() => return,
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::testkit::{Harness, finished};
    use fleetform_shared::wire::{Operation, RunEvent};
    use futures::StreamExt;

    async fn watch(handle: &Arc<crate::run::RunHandle>, parts: bool) -> Vec<pb::RunEvent> {
        async_stream(handle.clone(), 0, parts)
            .map(|m| m.expect("an event"))
            .collect()
            .await
    }

    /// A client that stops watching a run that goes on (here it waits for
    /// an approval that never comes) lets the run's handle go: the task
    /// that fed it ends instead of waiting for the run's next event.
    #[tokio::test]
    async fn a_watcher_that_leaves_a_waiting_run_lets_it_go() {
        let h = Harness::new().await;
        let main = "resource \"test_thing\" \"x\" {\n  name = \"x\"\n}\n";
        let handle = h.submit_with(&[("main.tf", main)], Operation::Apply, false);
        let mut rx = handle.events.subscribe();
        let awaiting = async {
            while !handle.events.since(0).contains(&RunEvent::AwaitingApproval) {
                rx.changed().await.expect("the log lives");
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), awaiting)
            .await
            .expect("the run waits for its approval");
        let before = Arc::strong_count(&handle);
        let mut stream = Box::pin(async_stream(handle.clone(), 0, false));
        stream
            .next()
            .await
            .expect("an event")
            .expect("not an error");
        drop(stream);
        let let_go = async {
            while Arc::strong_count(&handle) > before {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(5), let_go)
            .await
            .expect("the watcher's task let the run go once its client left");
        assert!(!handle.events.is_finished(), "the run still waits");
        assert!(handle.cancel());
    }

    /// A watcher that takes parts gets a large event (the plan) in parts
    /// of at most 1 MiB, which put together are what a watcher that does
    /// not gets in one message.
    #[tokio::test]
    async fn a_large_event_goes_in_parts_to_a_watcher_that_takes_them() {
        let h = Harness::new().await;
        let main =
            "resource \"test_thing\" \"x\" {\n  count = 6000\n  name  = \"x-${count.index}\"\n}\n";
        let handle = h.submit(&[("main.tf", main)], Operation::Plan);
        finished(&handle).await;
        let whole = watch(&handle, false).await;
        assert!(whole.iter().all(|m| !m.more));
        assert!(
            whole.iter().any(|m| m.event.len() > 1 << 20),
            "the plan of 6,000 creates is a large event"
        );
        let parted = watch(&handle, true).await;
        assert!(parted.iter().all(|m| m.event.len() <= 1 << 20));
        assert!(parted.len() > whole.len());
        // Put back together by sequence: the same events.
        let mut joined: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut open = false;
        for m in parted {
            match joined.last_mut() {
                Some((seq, bytes)) if open && *seq == m.sequence => bytes.extend(m.event),
                _ => {
                    assert!(!open, "a part without the rest");
                    joined.push((m.sequence, m.event));
                }
            }
            open = m.more;
        }
        let whole: Vec<(u64, Vec<u8>)> = whole.into_iter().map(|m| (m.sequence, m.event)).collect();
        assert_eq!(joined, whole);
    }
}
