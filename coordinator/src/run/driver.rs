//! The run driver: configuration → variables → plan → approval → apply →
//! snapshot, reporting every step as events.

use super::apply::record::Resume;
use super::apply::walk as apply_walk;
use super::ctx::RunCtx;
use super::handle::{RunHandle, Shared};
use super::plan::walk as plan_walk;
use super::{foreign_state, lock};
use crate::run::values::RunValues;
use crate::store::StoreError;
use fleetform_lang::config::{Module, load_config};
use fleetform_lang::eval::{DiskFiles, EvalEnv, FLEET_FILES_NOTE, MapFiles, now_rfc3339};
use fleetform_lang::graph::config as config_graph;
use fleetform_lang::inputs::input_values;
use fleetform_lang::rules::moved::apply_moves;
use fleetform_shared::addr::{
    AbsProviderConfig, AbsResourceInstance, ConfigResource, LocalProviderConfig,
};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::plan::{ChangeSummary, Plan};
use fleetform_shared::state::{ObjectState, RecordedProvider, State, StateDelta};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{Operation, RunControl, RunEvent, RunRequest, RunStatus};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::sync::oneshot;

/// A run a restarted coordinator takes up: its workspace lock (taken at
/// startup, before any new run could take it) and its journal.
pub(crate) struct Resumed {
    pub guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    pub resume: Resume,
}

/// How a run starts: new (waiting `lock_wait` for a locked workspace), or
/// taken up after a restart.
pub(crate) enum Start {
    New {
        lock_wait: Option<std::time::Duration>,
        /// A background refresh (see `background`).
        background: bool,
    },
    Resumed(Resumed),
}

pub(crate) async fn drive(
    shared: Arc<Shared>,
    handle: Arc<RunHandle>,
    request: RunRequest,
    start: Start,
) {
    // A cancel at any point: tell the run's watchers, and every worker, which
    // interrupts the run's provider calls in progress (StopProvider).
    let on_cancel = tokio::spawn({
        let (shared, handle) = (shared.clone(), handle.clone());
        async move {
            handle.cancelled().await;
            tracing::info!(run_id = %handle.id, "run cancelled");
            handle.events.push(RunEvent::Cancelling);
            shared
                .dispatcher
                .control(RunControl::Stop {
                    run_id: handle.id.clone(),
                })
                .await;
        }
    });
    let (local, resume, wait, resumed) = match start {
        Start::Resumed(r) => (r.guard, r.resume, None, true),
        Start::New { lock_wait, .. } => (None, Resume::default(), lock_wait, false),
    };

    let operation = format!("{:?}", request.operation).to_lowercase();
    let events = handle.events.clone();
    let on_wait = move |why: &str| {
        events.push(RunEvent::Diagnostics(
            Diagnostic::warning(
                "Waiting for the state store",
                format!("Taking the workspace's lock failed ({why}); the run retries until the store answers."),
            )
            .into(),
        ));
    };
    let held_events = handle.events.clone();
    let on_held = move |msg: String| {
        held_events.push(RunEvent::Diagnostics(
            Diagnostic::warning("Acquiring the state lock", msg).into(),
        ));
    };
    let want = lock::Want {
        workspace: &handle.workspace,
        run_id: &handle.id,
        operation: &operation,
        wait,
        resumed,
        local,
        background: handle.background,
        on_wait: Some(&on_wait),
        on_held: Some(&on_held),
    };
    let guard = tokio::select! {
        g = lock::acquire(&shared, want) => Some(g),
        () = handle.cancelled() => None,
    };
    tracing::info!(run_id = %handle.id, workspace = %handle.workspace, operation = ?request.operation, resumed = resume.is_some(), "run started");
    handle.events.push(RunEvent::Started {
        run_id: handle.id.clone(),
        operation: request.operation,
    });
    let operation_label = format!("{:?}", request.operation).to_lowercase();
    crate::metrics::run_started(&operation_label);
    let outcome = match guard {
        Some(Ok(guard)) => {
            // Workers' claims of the run's tasks are answered here while
            // the run holds its workspace.
            let claims = shared.dispatcher.own_claims(&handle.id, guard.fence());
            let outcome = run(&shared, &handle, &request, resume, &guard).await;
            drop(claims);
            guard.release().await;
            outcome
        }
        Some(Err(d)) => Err(d),
        None => Ok((RunStatus::Cancelled, ChangeSummary::default())),
    };
    let (status, summary) = match outcome {
        Ok(done) => done,
        Err(diags) => {
            handle.events.push(RunEvent::Diagnostics(diags));
            (RunStatus::Failed, ChangeSummary::default())
        }
    };
    on_cancel.abort();
    shared.dispatcher.release(&handle.id);
    shared
        .dispatcher
        .control(RunControl::Finished {
            run_id: handle.id.clone(),
        })
        .await;
    let ended = crate::store::EndedRun {
        workspace: handle.workspace.clone(),
        operation: format!("{:?}", request.operation).to_lowercase(),
        status: format!("{status:?}").to_lowercase(),
        started_at: handle.started_at.clone(),
        ended_at: fleetform_lang::eval::now_rfc3339(),
    };
    if let Err(e) = shared.journal.ended(&handle.id, &ended) {
        tracing::warn!(run_id = %handle.id, error = %e, "recording the run's end failed");
    }
    if let (Some(bg), false) = (&shared.background, handle.background) {
        let ok = matches!(status, RunStatus::Succeeded | RunStatus::Planned);
        bg.remember(&handle.workspace, &request, ok);
    }
    tracing::info!(run_id = %handle.id, ?status, "run finished");
    crate::metrics::run_ended(&operation_label, &format!("{status:?}").to_lowercase());
    handle.events.push(RunEvent::Finished { status, summary });
    // After the end is told: watchers need not wait for it. Off the
    // runtime's threads: packing a large run's log takes a fraction of a
    // second that other runs' tasks should not wait for.
    if shared.pack_ended_logs {
        let events = handle.events.clone();
        let spill = shared.ended_logs.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || events.pack(spill.as_deref())).await {
            tracing::warn!(error = %e, "packing the ended run's events failed");
        }
    }
    shared.forget_finished_runs();
    crate::memory::release_after_run();
}

async fn run(
    shared: &Shared,
    handle: &RunHandle,
    request: &RunRequest,
    resume: Resume,
    lock: &lock::WorkspaceGuard,
) -> Result<(RunStatus, ChangeSummary), Diagnostics> {
    let (config, diags) = load_config(&request.files);
    let Some(config) = config.filter(|_| !diags.has_errors()) else {
        return Err(diags);
    };
    let module = &config.root.module;
    if !diags.is_empty() {
        handle.events.push(RunEvent::Diagnostics(diags));
    }
    // A plan too: it could not be applied.
    local_exec_allowed(shared, &config).await?;
    let (variables, apply_time_variables) = variables(handle, module, request, resume.is_some())?;
    unwritten_runs(shared, handle).await?;
    let (prior, moved) = prior_state(shared, handle, request, &config).await?;
    let orphans = orphan_providers(&config, &prior)?;
    let graph = config_graph::build(&config, &orphans)?;
    let mut ctx = RunCtx {
        shared,
        handle,
        config: &config,
        module,
        graph: &graph,
        request,
        prior,
        values: RunValues {
            env: eval_env(request, shared.local_files),
            ephemeral: fleetform_lang::config::ephemeral_references(&config),
            ..RunValues::new(module, variables)
        },
        providers: HashMap::new(),
        moved,
        events: super::emitter::Emitter::new(handle.events.clone()),
        lock,
        opened: Vec::new(),
        ephemeral_walks: 0,
    };

    ctx.values.functions =
        Arc::new(crate::run::eval::functions::prepare(shared, &config, ctx.run_id()).await?);

    let Some(plan) = make_plan(&mut ctx, &graph, apply_time_variables).await? else {
        return Ok((RunStatus::Cancelled, ChangeSummary::default()));
    };
    let summary = plan.summary();
    let notes = interrupted_notes(&ctx.prior);
    if !notes.is_empty() {
        handle.events.push(RunEvent::Diagnostics(notes));
    }
    handle.events.push(RunEvent::Planned(plan.clone()));
    if request.operation == Operation::Plan || request.plan_only {
        let status = if plan.has_changes() {
            RunStatus::Planned
        } else {
            RunStatus::Succeeded
        };
        return Ok((status, summary));
    }
    if !plan.has_changes() {
        save_data_records(shared, handle, lock, &mut ctx, &plan, &request.source).await?;
        return Ok((RunStatus::Succeeded, summary));
    }
    if !request.auto_approve {
        tokio::select! {
            ok = approved(handle) => if !ok {
                return Ok((RunStatus::Discarded, summary));
            },
            () = handle.cancelled() => return Ok((RunStatus::Cancelled, summary)),
        }
    }
    // Impure functions (timestamp, uuid, bcrypt) give values from here on.
    ctx.values.env.apply = true;
    let prior_serial = ctx.prior.serial;
    super::plan::reuse::forget_changed(shared, &handle.workspace, &plan).await;
    // Ephemeral resources open, renew and close inside the walk.
    let report = apply_walk::apply(&mut ctx, &graph, &plan, resume).await;
    // Nothing evaluates after the walk: its values (every instance's
    // object, a second copy of the state's) go before the snapshot is
    // encoded, the run's peak of memory.
    drop(std::mem::take(&mut ctx.values));
    let (stopped_early, failed) = (report.stopped_early, report.failed());
    let archive = report.archive;
    // Taken, not copied: a state of 100,000 objects is over 100 MB.
    let mut state = report.state;
    state.serial = prior_serial + 1;
    save_state(shared, handle, lock, &state, &request.source).await?;
    if let Err(e) = shared.journal.clear(&handle.id) {
        tracing::warn!(run_id = %handle.id, error = %e, "clearing the journal failed");
    }
    if let Some(archive) = archive {
        archive.discard().await;
    }
    handle.events.push(RunEvent::Outputs(state.outputs.clone()));
    // Cancelled wins over failed: operations the cancel interrupted often
    // fail, and what the user needs to know is that the apply was cut short.
    Ok((
        if stopped_early {
            RunStatus::Cancelled
        } else if failed {
            RunStatus::Failed
        } else {
            RunStatus::Succeeded
        },
        summary,
    ))
}

/// The state a run starts from: the workspace's snapshot with `moved`
/// blocks applied (a saved plan replays the moves it was made with), once
/// it is known to be this configuration's (see [`foreign_state`]); and the
/// moves.
async fn prior_state(
    shared: &Shared,
    handle: &RunHandle,
    request: &RunRequest,
    config: &fleetform_lang::config::Config,
) -> Result<(State, Vec<(AbsResourceInstance, AbsResourceInstance)>), Diagnostics> {
    let mut prior = shared
        .store
        .load(&handle.workspace)
        .await
        .map_err(|e| Diagnostics::from(Diagnostic::error("Failed to load state", e.to_string())))?
        .unwrap_or_else(|| State::new(first_lineage(&handle.id)));

    // `moved` blocks rebind objects before anything is planned; a saved
    // plan replays the moves it was made with.
    let moved = match &request.saved_plan {
        Some(saved) => {
            replay_moves(&mut prior, &saved.moved);
            saved.moved.clone()
        }
        None => apply_moves(config, &mut prior)?,
    };
    // A saved plan passed this guard when it was made; an import changes
    // nothing that is there.
    if request.saved_plan.is_none() && !request.options.adopt_state && !request.options.import_only
    {
        let unrelated = foreign_state::unrelated_objects(config, &prior);
        if !unrelated.is_empty() {
            // Without a record of the writer the refusal still stands.
            let history = shared
                .store
                .history(&handle.workspace)
                .await
                .unwrap_or_default();
            if !foreign_state::same_source(history.last(), &request.source) {
                return Err(
                    foreign_state::refusal(&handle.workspace, &unrelated, history.last()).into(),
                );
            }
        }
    }
    Ok((prior, moved))
}

/// The plan a run applies: the saved one it was given (once the state is
/// known to be the one it was made against), or one made now. `None` when
/// the run was cancelled meanwhile: planning changes nothing, so a
/// cancelled plan simply stops.
async fn make_plan(
    ctx: &mut RunCtx<'_>,
    graph: &fleetform_lang::graph::config::ConfigGraph,
    apply_time_variables: Vec<String>,
) -> Result<Option<Arc<Plan>>, Diagnostics> {
    // The handle outlives the context's borrow by the walk.
    let handle = ctx.handle;
    let plan = match &ctx.request.saved_plan {
        Some(saved) => {
            // A workspace without state gets its lineage at the first write, so
            // only the serial identifies it.
            if saved.prior_serial != ctx.prior.serial
                || (ctx.prior.serial > 0 && saved.prior_lineage != ctx.prior.lineage)
            {
                return Err(Diagnostics::from(Diagnostic::error(
                    "Saved plan is stale",
                    "The given plan file can no longer be applied because the state was changed by another operation after the plan was created.",
                )));
            }
            tokio::select! {
                r = plan_walk::providers_only(ctx, graph) => r?,
                () = handle.cancelled() => return Ok(None),
            }
            saved.clone()
        }
        // Planning changes nothing, so a cancelled plan simply stops.
        None => tokio::select! {
            r = plan_walk::plan(ctx, graph) => Arc::new(Plan {
                apply_time_variables,
                ..r?
            }),
            () = handle.cancelled() => return Ok(None),
        },
    };
    Ok(Some(plan))
}

/// Writes the run's snapshot. While the object store fails (out of reach,
/// refusing requests), the run waits and retries with backoff for a while,
/// saying so once; the journal keeps everything meanwhile. Only the lease's
/// holder writes (fencing, checked before each attempt); a conflict is not
/// retried.
/// A run that will run `local-exec` provisioners needs workers that allow
/// them: any task may go to any worker of the pool, so when a live worker
/// of the pool refuses them the run fails before anything changes, at the
/// first such provisioner. (No live worker at all: nothing can be told
/// yet; the provisioner itself then fails on a worker that refuses it.)
async fn local_exec_allowed(
    shared: &Shared,
    config: &fleetform_lang::config::Config,
) -> Result<(), Diagnostics> {
    let first = config.modules().into_iter().find_map(|n| {
        n.module
            .resources
            .values()
            .flat_map(|r| r.provisioners.iter())
            .find(|p| p.kind == "local-exec")
    });
    let Some(provisioner) = first else {
        return Ok(());
    };
    let workers = match shared.dispatcher.workers().await {
        Ok(Some(w)) => w,
        Ok(None) => return Ok(()),
        Err(e) => {
            tracing::warn!(error = %e, "listing the workers failed; local-exec not checked before the run");
            return Ok(());
        }
    };
    let pool = fleetform_shared::wire::DEFAULT_POOL;
    let live: Vec<_> = workers.iter().filter(|w| w.pool == pool).collect();
    let refusing: Vec<&str> = live
        .iter()
        .filter(|w| !w.allow_local_exec)
        .map(|w| w.id.as_str())
        .collect();
    if refusing.is_empty() {
        return Ok(());
    }
    Err(Diagnostics::from(
        Diagnostic::error(
            "local-exec provisioners are not allowed",
            format!(
                "The configuration has local-exec provisioners, and {} of the {} live worker(s) of pool {pool:?} refuse them ({}): they would run commands from the configuration on machines that hold the fleet's credentials. Start the pool's workers with --allow-local-exec, or remove the provisioners.",
                refusing.len(),
                live.len(),
                refusing.join(", ")
            ),
        )
        .at(provisioner.decl_range.clone()),
    ))
}

/// An apply with nothing to change still records what its plan did with
/// data sources (reads made, records of undeclared ones dropped) when
/// that changes the state, as Terraform 1.11 saves its refreshed state
/// after an apply without changes: no provider is called, and the state
/// is written as the run read it (objects pushed undecoded are saved
/// decoded) with those records and the provider configurations of what it
/// holds. When no record differs, nothing is written.
async fn save_data_records(
    shared: &Shared,
    handle: &RunHandle,
    lock: &lock::WorkspaceGuard,
    ctx: &mut RunCtx<'_>,
    plan: &Plan,
    source: &str,
) -> Result<(), Diagnostics> {
    let deltas = plan.data_deltas();
    // The last change to an address is the one that stands.
    let mut last: HashMap<&AbsResourceInstance, Option<&ObjectState>> = HashMap::new();
    for d in &deltas {
        if let StateDelta::SetCurrent { addr, object, .. } = d {
            last.insert(addr, object.as_ref());
        }
    }
    if last
        .iter()
        .all(|(addr, object)| ctx.prior.current(addr) == *object)
    {
        return Ok(());
    }
    let mut state = ctx.take_prior();
    for d in &deltas {
        state.apply_delta(d);
    }
    if let Some(d) = apply_walk::provider_configs(ctx, &state) {
        state.apply_delta(&d);
    }
    state.serial += 1;
    save_state(shared, handle, lock, &state, source).await
}

async fn save_state(
    shared: &Shared,
    handle: &RunHandle,
    lock: &lock::WorkspaceGuard,
    state: &State,
    source: &str,
) -> Result<(), Diagnostics> {
    let since = std::time::Instant::now();
    let mut backoff = std::time::Duration::from_millis(200);
    let mut waiting = false;
    loop {
        let attempt = match lock.check().await {
            Ok(()) => {
                let origin = crate::store::Origin::new(
                    handle.id.clone(),
                    format!("{:?}", handle.operation).to_lowercase(),
                )
                .from_source(source);
                shared.store.save(&handle.workspace, state, &origin).await
            }
            Err(lock::CheckError::Lost(d)) => return Err(d),
            Err(lock::CheckError::Unreachable(e)) => Err(StoreError::LockCheck(e)),
        };
        match attempt {
            Ok(()) => break,
            Err(
                e @ (StoreError::ObjectStore(_) | StoreError::Cache(_) | StoreError::LockCheck(_)),
            ) if since.elapsed() < SAVE_RETRY_FOR => {
                if !waiting {
                    tracing::warn!(run_id = %handle.id, error = %e, "writing the state failed; retrying");
                    handle.events.push(RunEvent::Diagnostics(
                        Diagnostic::warning(
                            "Waiting for the state store",
                            format!("Writing the state failed ({e}); the run retries, and its journal keeps everything meanwhile."),
                        )
                        .into(),
                    ));
                    waiting = true;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
            }
            Err(StoreError::Conflict { found, .. })
                if found == state.serial && saved_by(shared, handle, found).await =>
            {
                // This run's snapshot is there already: written by the run
                // before a restart of its coordinator, from the same
                // journal, the write landing after the restarted one read
                // the head (the chaos test's coordinator was killed while
                // its write was in flight). Writing it again would only
                // fail; the run is done.
                tracing::info!(run_id = %handle.id, serial = found, "the run's snapshot was written before the restart");
                break;
            }
            Err(e) => {
                return Err(Diagnostic::error("Failed to persist state", e.to_string()).into());
            }
        }
    }
    if waiting {
        handle.events.push(RunEvent::Diagnostics(
            Diagnostic::warning("The state store is back", "The state is written.").into(),
        ));
    }
    Ok(())
}

/// The lineage a run gives a workspace's first state: its run id as a
/// UUID, so that a run resumed after a restart of its coordinator writes
/// the same snapshot as it would have before, should the earlier write
/// land too; a fresh one for ids that are not UUIDs.
/// Each resource with objects only in state, with the provider
/// configuration they are destroyed with: the one the state records. A
/// snapshot of an earlier fleetform records none; the root's default
/// configuration is taken then, as before, unless the configuration has
/// others of that provider (an alias, or one in a module): the objects
/// may belong to any of them, and a wrong account or region would find
/// nothing to delete and forget objects that still exist, so the run
/// stops rather than guess.
fn orphan_providers(
    config: &fleetform_lang::config::Config,
    prior: &State,
) -> Result<Vec<(ConfigResource, AbsProviderConfig)>, Diagnostics> {
    let mut out: BTreeMap<ConfigResource, AbsProviderConfig> = BTreeMap::new();
    let mut diags = Diagnostics::new();
    for addr in prior.resources.keys() {
        let r = addr.config_resource();
        if out.contains_key(&r)
            || config
                .module(&r.module)
                .is_some_and(|m| m.module.resources.contains_key(&r.resource))
        {
            continue;
        }
        let p = match prior.provider_config(addr) {
            Some(RecordedProvider::Recorded(p)) => p,
            Some(RecordedProvider::Unrecorded(provider)) => {
                let others: Vec<String> = config
                    .modules()
                    .into_iter()
                    .flat_map(|node| {
                        node.module.providers.keys().filter_map(|k| {
                            let l: LocalProviderConfig = k.parse().ok()?;
                            let p = AbsProviderConfig {
                                module: node.path.clone(),
                                provider: node.module.provider_addr(&l.local_name),
                                alias: l.alias,
                            };
                            (p.provider == provider && (p.alias.is_some() || !p.module.is_root()))
                                .then(|| p.to_string())
                        })
                    })
                    .collect();
                if !others.is_empty() {
                    diags.push(Diagnostic::error(
                        "Provider configuration not recorded",
                        format!(
                            "{r} is no longer in the configuration, so its objects would be destroyed, but its state was written by an earlier fleetform that did not record which configuration of {provider} manages them, and this configuration has several ({}, and the default one). fleetform will not guess: a wrong account or region would find nothing to delete. Put the resource back in the configuration with its provider argument and apply once (the state then records it), or remove it from the state with \"fleetform state rm\" if it is managed elsewhere.",
                            others.join(", ")
                        ),
                    ));
                    continue;
                }
                AbsProviderConfig {
                    module: fleetform_shared::addr::Module::root(),
                    provider,
                    alias: None,
                }
            }
            None => continue,
        };
        out.insert(r, p);
    }
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(out.into_iter().collect())
}

fn first_lineage(run_id: &str) -> String {
    uuid::Uuid::parse_str(run_id)
        .unwrap_or_else(|_| uuid::Uuid::new_v4())
        .to_string()
}

/// Whether the workspace's snapshot `serial` was written by this run (its
/// history record says so). A store that cannot be read says no.
async fn saved_by(shared: &Shared, handle: &RunHandle, serial: u64) -> bool {
    shared
        .store
        .history(&handle.workspace)
        .await
        .is_ok_and(|h| {
            h.iter()
                .any(|e| e.serial == serial && e.run_id == handle.id)
        })
}

/// Before a run plans: an earlier run of the workspace whose results are in
/// this coordinator's journal but whose snapshot was never written (the
/// state store refused it: a bucket removed, credentials revoked) stops
/// it. Planning from the older snapshot would not see what that run made,
/// and would create it again. A restarted coordinator resumes such runs
/// and writes their snapshots before anything else; an entry whose
/// snapshot was written after all (only clearing the journal failed) is
/// cleared here.
async fn unwritten_runs(shared: &Shared, handle: &RunHandle) -> Result<(), Diagnostics> {
    let runs = shared
        .journal
        .runs()
        .map_err(|e| Diagnostic::error("Failed to read the journal", e.to_string()))?;
    for (id, run) in runs {
        if id == handle.id || run.workspace != handle.workspace {
            continue;
        }
        let written = shared
            .store
            .history(&handle.workspace)
            .await
            .is_ok_and(|h| h.iter().any(|e| e.run_id == id));
        if written {
            if let Err(e) = shared.journal.clear(&id) {
                tracing::warn!(run_id = %id, error = %e, "clearing a written run's journal failed");
            }
            continue;
        }
        return Err(Diagnostic::error(
            "An earlier run's results are not in the state",
            format!(
                "Run {id} changed objects of workspace {} (from serial {}), and its snapshot was never written: the state store refused it. This coordinator's journal holds what that run did; a plan now would not see it, and could create those objects again.\n\nOnce the state store works, restart the coordinator (same --data-dir): it writes that run's snapshot before anything else. Then run this command again.",
                handle.workspace, run.prior_serial
            ),
        )
        .into());
    }
    Ok(())
}

/// How long writing a snapshot is retried while the object store fails.
const SAVE_RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// A warning per operation an earlier run could not finish nor repeat (its
/// worker stopped while the provider may have been acting), with what to do.
fn interrupted_notes(prior: &State) -> Diagnostics {
    prior
        .interrupted
        .iter()
        .map(|(addr, op)| {
            let what = match op.operation.as_str() {
                "create" => format!("The object may exist outside the state. If it does, import it (fleetform import {addr} ID, or an import block) so that no second one is created; if it does not, apply creates it."),
                "update" => "The object may differ from what the state says; this plan refreshed it.".to_string(),
                _ => "The object may be gone already; apply deletes it if it is still there.".to_string(),
            };
            Diagnostic::warning(
                "Interrupted operation",
                format!(
                    "A {} of {addr} was interrupted in run {} ({}): what carried it out stopped while the provider may have been acting, and fleetform did not repeat it. {what} This note goes once an operation on {addr} completes.",
                    op.operation, op.run_id, op.at
                ),
            )
            .for_address(addr)
        })
        .collect()
}

fn replay_moves(state: &mut State, moves: &[(AbsResourceInstance, AbsResourceInstance)]) {
    for (from, to) in moves {
        if let Some(obj) = state.resources.remove(from) {
            state.resources.insert(to.clone(), obj);
        }
    }
}

async fn approved(handle: &RunHandle) -> bool {
    let (tx, rx) = oneshot::channel();
    *handle.approval.lock().expect("approval lock") = Some(tx);
    handle.events.push(RunEvent::AwaitingApproval);
    rx.await.unwrap_or(false)
}

/// The run's input variables: a saved plan's own values (and its
/// ephemeral ones, given again), or the request's environment variables,
/// variables files and `-var`s by Terraform's precedence, checked against
/// the declarations and their validation rules; with the ephemeral
/// variables the sources set, which applying a plan of this run will ask
/// for again. Warnings go to the run's events.
fn variables(
    handle: &RunHandle,
    module: &Module,
    request: &RunRequest,
    resumed: bool,
) -> Result<(BTreeMap<String, Value>, Vec<String>), Diagnostics> {
    let sources = fleetform_lang::inputs::run_sources(
        &request.env_variables,
        &request.auto_var_files,
        &request.variables,
    );
    if let Some(saved) = &request.saved_plan {
        let mut values = saved.variables.clone();
        values.extend(ephemeral_again(handle, module, saved, &sources, resumed)?);
        return Ok((values, Vec::new()));
    }
    let inputs = input_values(module, &sources)?;
    if !inputs.warnings.is_empty() {
        handle.events.push(RunEvent::Diagnostics(inputs.warnings));
    }
    let apply_time = module
        .variables
        .values()
        .filter(|v| v.ephemeral && inputs.set.contains(&v.name))
        .map(|v| v.name.clone())
        .collect();
    Ok((inputs.values, apply_time))
}

/// The ephemeral root variables' values when a saved plan is applied: as
/// in Terraform, only they may be given (a `-var` for another variable is
/// one for an undeclared variable), and those set while planning must be
/// set again. A file's value for another variable is one for an
/// undeclared variable, a warning, as Terraform 1.11 words it.
///
/// A run a restarted coordinator resumes (`resumed`) applies its own plan
/// with the sources it was started with, which may set any variable: the
/// others are read past and only the ephemeral ones taken.
fn ephemeral_again(
    handle: &RunHandle,
    module: &Module,
    saved: &Plan,
    sources: &[fleetform_lang::inputs::InputSource],
    resumed: bool,
) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let mut only_ephemeral = Module::default();
    for v in module.variables.values().filter(|v| v.ephemeral || resumed) {
        let mut v = v.clone();
        // Whether it must be set is decided below, by the plan.
        v.default = v.default.or(Some(Value::null()));
        only_ephemeral.variables.insert(v.name.clone(), v);
    }
    let inputs = input_values(&only_ephemeral, sources)?;
    if !inputs.warnings.is_empty() {
        handle
            .events
            .push(RunEvent::Diagnostics(inputs.warnings.clone()));
    }
    let missing: Diagnostics = saved
        .apply_time_variables
        .iter()
        .filter(|n| !inputs.set.contains(*n))
        .map(|n| {
            Diagnostic::error(
                "No value for required variable",
                format!("The ephemeral input variable {n:?} was set during the plan phase, and so must also be set during the apply phase."),
            )
        })
        .collect();
    if !missing.is_empty() {
        return Err(missing);
    }
    let mut values = inputs.values;
    values.retain(|name, _| module.variables.get(name).is_some_and(|v| v.ephemeral));
    Ok(values)
}

/// The evaluation environment of a run: the bundle's files (configuration
/// and data files alike, as `file()` may read either), or in embedded mode
/// (`local`) the CLI's directory itself, read when a function asks; the
/// plan's time (a saved plan's own, so `plantimestamp()` is stable); the
/// CLI's directory.
fn eval_env(request: &RunRequest, local: bool) -> EvalEnv {
    let files = request
        .files
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
        .chain(
            request
                .data_files
                .iter()
                .map(|(k, b)| (k.clone(), b.0.clone())),
        );
    let timestamp = request
        .saved_plan
        .as_ref()
        .and_then(|p| p.timestamp.clone())
        .unwrap_or_else(now_rfc3339);
    let bundle = MapFiles::new(files);
    let files: Arc<dyn fleetform_lang::eval::FileSystem> = if local && !request.cwd.is_empty() {
        Arc::new(DiskFiles::new(&request.cwd, bundle))
    } else {
        Arc::new(bundle.missing_note(FLEET_FILES_NOTE))
    };
    EvalEnv {
        files,
        apply: false,
        plan_timestamp: Some(timestamp),
        cwd: request.cwd.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::first_lineage;

    #[test]
    fn a_run_gives_a_new_workspace_the_same_lineage_each_time_it_runs() {
        let run_id = uuid::Uuid::new_v4().simple().to_string();
        let lineage = first_lineage(&run_id);
        assert_eq!(lineage, first_lineage(&run_id));
        assert_eq!(
            uuid::Uuid::parse_str(&lineage)
                .unwrap()
                .simple()
                .to_string(),
            run_id
        );
        let other = uuid::Uuid::new_v4().simple().to_string();
        assert_ne!(first_lineage(&other), lineage);
        // Not a UUID: a fresh lineage.
        assert_ne!(first_lineage("plan-x"), first_lineage("plan-x"));
    }

    /// An object only in state is destroyed with the configuration its
    /// state records; a snapshot that records none (an earlier fleetform's)
    /// takes the root's default only when it cannot be another.
    #[test]
    fn an_orphan_takes_the_recorded_configuration_and_an_unrecorded_one_is_never_guessed() {
        use super::{RecordedProvider, orphan_providers};
        use fleetform_shared::addr::{AbsProviderConfig, Module, ProviderAddr};
        use fleetform_shared::state::{ObjectState, State, StateDelta};
        let sim = ProviderAddr::new("fleetform", "sim");
        let config = |text: &str| {
            let files = [("main.tf".to_string(), text.to_string())]
                .into_iter()
                .collect();
            let (c, d) = fleetform_lang::config::load_config(&files);
            assert!(!d.has_errors(), "{d}");
            c.unwrap()
        };
        let head = "terraform {\n  required_providers {\n    sim = { source = \"fleetform/sim\" }\n  }\n}\nresource \"sim_object\" \"kept\" {\n  name = \"k\"\n}\n";
        let with_alias = config(&format!("{head}provider \"sim\" {{\n  alias = \"b\"\n}}\n"));
        let without = config(head);
        let mut state = State::new("l");
        for addr in [
            "sim_object.kept",
            "sim_object.gone[0]",
            "sim_object.gone[1]",
        ] {
            state.apply_delta(&StateDelta::SetCurrent {
                addr: addr.parse().unwrap(),
                provider: sim.clone(),
                object: Some(ObjectState::new(fleetform_shared::value::Value::null())),
            });
        }
        let gone: fleetform_shared::addr::AbsResourceInstance =
            "sim_object.gone[0]".parse().unwrap();
        assert!(matches!(
            state.provider_config(&gone),
            Some(RecordedProvider::Unrecorded(_))
        ));
        let root = AbsProviderConfig {
            module: Module::root(),
            provider: sim.clone(),
            alias: None,
        };
        // Unrecorded, one configuration of the provider: the root's default.
        assert_eq!(
            orphan_providers(&without, &state).unwrap(),
            vec![(gone.config_resource(), root.clone())]
        );
        // Unrecorded, and an alias it could be: the run stops.
        let err = orphan_providers(&with_alias, &state).unwrap_err();
        let d = err.iter().next().unwrap();
        assert_eq!(d.summary, "Provider configuration not recorded");
        assert!(d.detail.contains("sim_object.gone"), "{}", d.detail);
        assert!(
            d.detail
                .contains("provider[\"registry.terraform.io/fleetform/sim\"].b"),
            "{}",
            d.detail
        );
        // Recorded: that one, whatever else is configured.
        let b = AbsProviderConfig {
            alias: Some("b".into()),
            ..root
        };
        state.apply_delta(&StateDelta::SetProviderConfigs(vec![(
            gone.config_resource(),
            b.clone(),
        )]));
        assert_eq!(
            orphan_providers(&with_alias, &state).unwrap(),
            vec![(gone.config_resource(), b)]
        );
    }
}
