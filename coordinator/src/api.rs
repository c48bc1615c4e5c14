//! The gRPC API (tonic): the fleetform service the CLI talks to.
//!
//! Each handler admits its request first, in one way for every RPC:
//! credentials, then the workspace name the request carries, then the
//! grant for the role the call needs on that workspace ([`Api::admit`];
//! requests about a run take the run's workspace, [`Api::admit_run`]).
//! What the call then does to a workspace lives in [`crate::workspaces`];
//! this file translates messages and errors.

use crate::auth::{Auth, Role, authorize};
use crate::run::Coordinator;
use crate::run::{EVENT_PART as PART, Outgoing};
use crate::workspaces::{WorkspaceError, Workspaces};
use fleetform_proto::fleetform as pb;
use fleetform_proto::fleetform::fleetform_server::{Fleetform, FleetformServer};
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::state::State;
use fleetform_shared::wire::{RunEvent, RunRequest};
use futures::Stream;
use std::pin::Pin;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct Api {
    coordinator: Coordinator,
    /// None: no authentication (a loopback-only or `--insecure` API).
    auth: Option<Arc<Auth>>,
}

/// A request that names the workspace it acts on.
trait ForWorkspace {
    fn workspace(&self) -> &str;
}

macro_rules! for_workspace {
    ($($t:ty),* $(,)?) => {
        $(impl ForWorkspace for $t {
            fn workspace(&self) -> &str {
                &self.workspace
            }
        })*
    };
}

for_workspace!(
    pb::SubmitRunRequest,
    pb::GetStateRequest,
    pb::ForceUnlockRequest,
    pb::CreateWorkspaceRequest,
    pb::DeleteWorkspaceRequest,
    pb::PushStateRequest,
    pb::StateHistoryRequest,
    pb::ListDriftRequest,
    pb::SetTaintedRequest,
    pb::EditStateRequest,
);

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

    /// Admits `req` for `role` on the workspace it names: valid
    /// credentials first (before anything in the request is looked at),
    /// then a valid workspace name, then a grant covering `role` there.
    /// Returns the workspace's state key.
    fn admit<T: ForWorkspace>(&self, req: &Request<T>, role: Role) -> Result<String, Status> {
        self.admit_with(req, |_| Ok(role))
    }

    /// As [`Api::admit`], the role depending on what the request asks
    /// (decoded after the credentials and the name are checked).
    fn admit_with<T: ForWorkspace>(
        &self,
        req: &Request<T>,
        role: impl FnOnce(&T) -> Result<Role, Status>,
    ) -> Result<String, Status> {
        self.authenticated(req)?;
        let workspace = workspace_name(req.get_ref().workspace())?;
        let role = role(req.get_ref())?;
        authorize(self.auth.as_deref(), req, role, Some(&workspace))?;
        Ok(workspace)
    }

    /// Admits `req` for `role` on the workspace of run `id`. A run this
    /// process does not know (being recovered, or none) has no workspace
    /// yet: the caller needs `role` on some workspace.
    fn admit_run<T>(&self, req: &Request<T>, id: &str, role: Role) -> Result<(), Status> {
        self.authenticated(req)?;
        let workspace = self.coordinator.run(id).map(|h| h.workspace.clone());
        authorize(self.auth.as_deref(), req, role, workspace.as_deref())
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

    fn workspaces(&self) -> Workspaces<'_> {
        Workspaces::new(&self.coordinator)
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

fn unavailable(e: crate::store::StoreError) -> Status {
    use crate::store::StoreError;
    match e {
        // A latest snapshot that does not read is no passing trouble:
        // retrying will not help.
        StoreError::CorruptedLatest { .. } => Status::data_loss(e.to_string()),
        // A key that is missing or wrong, or a store that is set up wrong
        // (no bucket, refused credentials): waiting will not help.
        StoreError::Sealed(_) | StoreError::Misconfigured(_) => {
            Status::failed_precondition(e.to_string())
        }
        _ => Status::unavailable(e.to_string()),
    }
}

impl From<WorkspaceError> for Status {
    fn from(e: WorkspaceError) -> Status {
        match e {
            WorkspaceError::Store(e) => unavailable(e),
            WorkspaceError::Lease(e) => Status::unavailable(e.to_string()),
            WorkspaceError::NotFound(m) => Status::not_found(m),
            WorkspaceError::Refused(m) => Status::failed_precondition(m),
            WorkspaceError::AlreadyExists(m) => Status::already_exists(m),
            WorkspaceError::NotWritten(m) => Status::aborted(m),
        }
    }
}

#[tonic::async_trait]
impl Fleetform for Api {
    async fn submit_run(
        &self,
        req: Request<pb::SubmitRunRequest>,
    ) -> Result<Response<pb::SubmitRunResponse>, Status> {
        let mut run: Option<RunRequest> = None;
        let workspace = self.admit_with(&req, |r| {
            let decoded: RunRequest = rmp_serde::from_slice(&r.request)
                .map_err(|e| Status::invalid_argument(format!("undecodable run request: {e}")))?;
            let role = match decoded.operation {
                fleetform_shared::wire::Operation::Plan => Role::Plan,
                _ => Role::Apply,
            };
            run = Some(decoded);
            Ok(role)
        })?;
        let run = run.expect("admitted requests are decoded");
        let handle = self.coordinator.submit_waiting(
            &workspace,
            run,
            lock_wait(req.get_ref().lock_timeout_ms),
        );
        Ok(Response::new(pb::SubmitRunResponse {
            run_id: handle.id.clone(),
        }))
    }

    type WatchRunStream = Pin<Box<dyn Stream<Item = Result<pb::RunEvent, Status>> + Send>>;

    async fn watch_run(
        &self,
        req: Request<pb::WatchRunRequest>,
    ) -> Result<Response<Self::WatchRunStream>, Status> {
        self.admit_run(&req, &req.get_ref().run_id, Role::Read)?;
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
        self.admit_run(&req, &req.get_ref().run_id, Role::Apply)?;
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
        self.admit_run(&req, &req.get_ref().run_id, Role::Apply)?;
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
        let workspace = self.admit(&req, Role::Read)?;
        let req = req.into_inner();
        let workspaces = self.workspaces();
        let state = workspaces.read(&workspace, req.serial).await?;
        let state_file = match (&state, req.state_file) {
            (Some(s), true) => workspaces.state_file(s).await?,
            _ => Vec::new(),
        };
        let shapes = match (&state, req.shapes) {
            (Some(s), true) => rmp_serde::to_vec_named(&workspaces.cached_shapes(s))
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
        let workspace = self.admit(&req, Role::Admin)?;
        let info = self
            .workspaces()
            .force_unlock(&workspace, &req.get_ref().lock_id)
            .await?;
        Ok(Response::new(pb::ForceUnlockResponse {
            run_id: info.run_id,
            owner: info.owner,
        }))
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
        let workspaces = self
            .workspaces()
            .list(project.as_deref(), readable)
            .await?
            .into_iter()
            .map(|w| pb::WorkspaceInfo {
                serial: w.serial,
                resources: w.resources,
                locked_by_run: w.locked_by_run.unwrap_or_default(),
                name: w.name,
            })
            .collect();
        Ok(Response::new(pb::ListWorkspacesResponse { workspaces }))
    }

    async fn create_workspace(
        &self,
        req: Request<pb::CreateWorkspaceRequest>,
    ) -> Result<Response<pb::CreateWorkspaceResponse>, Status> {
        let workspace = self.admit(&req, Role::Apply)?;
        self.workspaces().create(&workspace).await?;
        Ok(Response::new(pb::CreateWorkspaceResponse {}))
    }

    async fn delete_workspace(
        &self,
        req: Request<pb::DeleteWorkspaceRequest>,
    ) -> Result<Response<pb::DeleteWorkspaceResponse>, Status> {
        let workspace = self.admit(&req, Role::Admin)?;
        let req = req.into_inner();
        let forgotten = self
            .workspaces()
            .delete(&workspace, req.force, lock_wait(req.lock_timeout_ms))
            .await?;
        self.coordinator.drift().forget(&workspace);
        Ok(Response::new(pb::DeleteWorkspaceResponse { forgotten }))
    }

    async fn push_state(
        &self,
        req: Request<pb::PushStateRequest>,
    ) -> Result<Response<pb::PushStateResponse>, Status> {
        let workspace = self.admit(&req, Role::Admin)?;
        let req = req.into_inner();
        let pushed = State::decode(&req.state)
            .map_err(|e| Status::invalid_argument(format!("undecodable state: {e}")))?;
        let serial = self
            .workspaces()
            .push(
                &workspace,
                pushed,
                req.force,
                req.source,
                lock_wait(req.lock_timeout_ms),
            )
            .await?;
        Ok(Response::new(pb::PushStateResponse { serial }))
    }

    async fn state_history(
        &self,
        req: Request<pb::StateHistoryRequest>,
    ) -> Result<Response<pb::StateHistoryResponse>, Status> {
        let workspace = self.admit(&req, Role::Read)?;
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

    async fn list_drift(
        &self,
        req: Request<pb::ListDriftRequest>,
    ) -> Result<Response<pb::ListDriftResponse>, Status> {
        let workspace = self.admit(&req, Role::Read)?;
        let store = self.coordinator.store();
        let record = store
            .load_refreshed(&workspace)
            .await
            .map_err(unavailable)?;
        let state = store.load(&workspace).await.map_err(unavailable)?;
        // Only reads of the objects the state holds now: an apply since a
        // read has made what it found old news.
        let objects = record
            .drifted()
            .into_iter()
            .filter(|(addr, _)| {
                let current = state.as_ref().and_then(|s| s.current(addr));
                current.is_some_and(|c| {
                    Some(&c.value) == record.entries.get(*addr).map(|r| &r.refreshed)
                })
            })
            .map(|(addr, read_at_ms)| pb::DriftedObject {
                address: addr.to_string(),
                read_at_ms,
            })
            .collect();
        Ok(Response::new(pb::ListDriftResponse { objects }))
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
        let workspace = self.admit(&req, Role::Apply)?;
        let req = req.into_inner();
        let addr: AbsResourceInstance =
            req.address
                .parse()
                .map_err(|e: fleetform_shared::addr::AddrParseError| {
                    Status::invalid_argument(e.to_string())
                })?;
        self.workspaces()
            .set_tainted(
                &workspace,
                &addr,
                req.tainted,
                lock_wait(req.lock_timeout_ms),
            )
            .await?;
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
        let workspace = self.admit(&req, Role::Admin)?;
        let req = req.into_inner();
        let edit: fleetform_shared::state_edit::StateEdit = rmp_serde::from_slice(&req.edit)
            .map_err(|e| Status::invalid_argument(format!("undecodable state edit: {e}")))?;
        let (lines, serial) = self
            .workspaces()
            .edit(
                &workspace,
                &edit,
                req.dry_run,
                lock_wait(req.lock_timeout_ms),
            )
            .await?;
        Ok(Response::new(pb::EditStateResponse { lines, serial }))
    }
}

/// A request's `-lock-timeout` (0: fail at once when locked).
fn lock_wait(ms: u64) -> Option<std::time::Duration> {
    (ms > 0).then(|| std::time::Duration::from_millis(ms))
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
            for event in handle.events.since_outgoing(next) {
                let event = match event {
                    Outgoing::Parts(p) => p,
                    Outgoing::Plan(plan) if parts => {
                        if !send_plan(&tx, plan, next, &handle.incarnation).await {
                            return;
                        }
                        next += 1;
                        continue;
                    }
                    Outgoing::Plan(plan) => vec![
                        rmp_serde::to_vec_named(&RunEvent::Planned(plan))
                            .expect("events serialise"),
                    ],
                };
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

/// Sends the event of a live run's plan in parts as they are encoded (on
/// a blocking thread, at most a few parts ahead of the stream), so the
/// plan is not encoded whole beside itself; false once the watcher is
/// gone (the encoding stops too).
async fn send_plan(
    tx: &tokio::sync::mpsc::Sender<Result<pb::RunEvent, Status>>,
    plan: std::sync::Arc<fleetform_shared::plan::Plan>,
    sequence: usize,
    incarnation: &str,
) -> bool {
    let (parts_tx, mut parts) = tokio::sync::mpsc::channel::<Vec<u8>>(2);
    let encoder = tokio::task::spawn_blocking(move || {
        let mut w = fleetform_shared::parts::Split::new(PART, |part| {
            parts_tx
                .blocking_send(part)
                .map_err(|_| std::io::Error::other("the watcher is gone"))
        });
        rmp_serde::encode::write_named(&mut w, &RunEvent::Planned(plan))
            .map_err(std::io::Error::other)?;
        w.finish()
    });
    let message = |event, more| pb::RunEvent {
        sequence: sequence as u64,
        event,
        incarnation: incarnation.to_string(),
        more,
    };
    // One part held back: the last one says it is the last.
    let mut held: Option<Vec<u8>> = None;
    while let Some(part) = parts.recv().await {
        if let Some(before) = held.replace(part)
            && tx.send(Ok(message(before, true))).await.is_err()
        {
            return false;
        }
    }
    match encoder.await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::error!(error = %e, "encoding the plan for a watcher failed");
            return false;
        }
        Err(e) => {
            tracing::error!(error = %e, "encoding the plan for a watcher failed");
            return false;
        }
    }
    let last = held.unwrap_or_default();
    tx.send(Ok(message(last, false))).await.is_ok()
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

    /// The plan of a live run goes to a watcher that takes parts as it is
    /// encoded, in parts of at most 1 MiB that put together are its
    /// encoding; one that does not gets it whole.
    #[tokio::test]
    async fn a_live_runs_plan_is_sent_in_parts_as_it_is_encoded() {
        use fleetform_shared::plan::{Action, Plan, ResourceChange};
        let changes = (0..6000)
            .map(|i| {
                ResourceChange::new(
                    format!("sim_object.x[{i}]").parse().unwrap(),
                    fleetform_shared::addr::ProviderAddr::new("fleetform", "sim"),
                    Action::Create,
                )
            })
            .collect();
        let plan = Arc::new(Plan {
            changes,
            ..Plan::default()
        });
        let handle = Arc::new(crate::run::RunHandle::new(
            "r1".into(),
            "default",
            Operation::Plan,
            false,
        ));
        handle.events.push(RunEvent::Planned(plan.clone()));
        handle.events.push(RunEvent::Finished {
            status: fleetform_shared::wire::RunStatus::Succeeded,
            summary: Default::default(),
        });
        let encoded = rmp_serde::to_vec_named(&RunEvent::Planned(plan)).unwrap();
        assert!(encoded.len() > 2 << 20, "{} bytes", encoded.len());
        let parted = watch(&handle, true).await;
        let plan_parts: Vec<&pb::RunEvent> = parted.iter().filter(|m| m.sequence == 0).collect();
        assert!(plan_parts.len() >= 3, "{} parts", plan_parts.len());
        assert!(plan_parts.iter().all(|m| m.event.len() <= PART));
        let (last, before) = plan_parts.split_last().unwrap();
        assert!(before.iter().all(|m| m.more) && !last.more);
        let joined: Vec<u8> = plan_parts.iter().flat_map(|m| m.event.clone()).collect();
        assert_eq!(joined, encoded);
        assert_eq!(
            parted.last().map(|m| (m.sequence, m.more)),
            Some((1, false))
        );
        let whole = watch(&handle, false).await;
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[0].event, encoded);
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
