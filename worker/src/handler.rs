//! Carrying out one task: the provider calls of a plan, an apply or a data
//! source read of one resource instance, and the checks Terraform core makes
//! on the provider's answers (docs/planning/change-lifecycle.md).
//!
//! # Layout
//! - `plan`: ValidateResourceConfig, refresh, PlanResourceChange (twice for
//!   a replacement).
//! - `apply`: the final plan, ApplyResourceChange; deferred data reads.
//! - `read`: ValidateDataResourceConfig + ReadDataSource.
//! - `import`: ImportResourceState + ReadResource.
//! - `upgrade`: UpgradeResourceState before a stored object is used.
//! - `contracts`: the provider contract checks and their diagnostics.
//! - `provision`: provisioners (`local-exec`), creation-time ones as their
//!   own task, destroy-time ones before a delete; `local_exec` runs one.
//! - provider functions: `CallFunction` on an unconfigured provider.

mod apply;
mod contracts;
mod ephemeral;
mod import;
pub mod local_exec;
pub mod lookup;
mod plan;
mod provision;
mod read;
#[cfg(test)]
mod tests;
mod upgrade;
pub mod valid;

use crate::plugin::Provider;
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::function::FunctionSignature;
use fleetform_shared::provider::{CallFunctionRequest, CallFunctionResponse};
use fleetform_shared::schema::{ProviderSchema, Schema};
use fleetform_shared::wire::{
    FunctionTask, ProgressEvent, ProviderSpec, Task, TaskKind, TaskOutcome,
};
use std::sync::Arc;

/// A Schema task: the fingerprint of the provider this worker resolves to,
/// and its schema unless the coordinator has it cached.
async fn schema(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    cached: &[String],
) -> Result<TaskOutcome, Diagnostics> {
    let fingerprint = source.fingerprint(spec).await?;
    if cached.contains(&fingerprint) {
        return Ok(TaskOutcome::Schema {
            fingerprint,
            schema: None,
        });
    }
    let schema = source.schema(spec).await?;
    Ok(TaskOutcome::Schema {
        fingerprint,
        schema: Some(Box::new((*schema).clone())),
    })
}

/// Calls a provider function on an unconfigured instance of the provider
/// (functions see only their arguments, never the provider's configuration).
async fn function(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    task: &FunctionTask,
) -> Result<TaskOutcome, Diagnostics> {
    let req = CallFunctionRequest {
        name: task.name.clone(),
        arguments: task.arguments.clone(),
    };
    let resp = source.call_function(spec, &req, &task.signature).await?;
    Ok(TaskOutcome::Function(resp.result))
}

/// Where the handler gets providers from: the plugin pool, or a fake in tests.
#[async_trait]
pub trait ProviderSource: Send + Sync {
    /// Which provider `spec` resolves to on this worker, as
    /// `<address>@<version>`; nothing is started.
    async fn fingerprint(&self, spec: &ProviderSpec) -> Result<String, Diagnostics>;
    /// The provider's schema; starts the provider if needed, without configuring it.
    async fn schema(&self, spec: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics>;
    /// A provider configured with `spec.config` for run `run_id`, with its
    /// schema. Runs get their own processes so that stopping one run's
    /// provider (`StopProvider` cancels every call in the process) never
    /// interrupts another run.
    async fn configured(
        &self,
        spec: &ProviderSpec,
        run_id: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics>;
    /// [`ProviderSource::configured`] for closing what run `run_id` opened,
    /// which happens after a cancel too: the run's own processes were told
    /// to stop then, so the close gets a process of its own.
    async fn configured_for_cleanup(
        &self,
        spec: &ProviderSpec,
        run_id: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        self.configured(spec, run_id).await
    }
    /// What the provider of `spec` found valid so far in run `run_id`
    /// ([`valid::ValidConfigs`]); none where nothing is remembered.
    fn valid_configs(
        &self,
        _spec: &ProviderSpec,
        _run_id: &str,
    ) -> Option<Arc<valid::ValidConfigs>> {
        None
    }
    /// Calls a function of the provider of `spec`, unconfigured.
    async fn call_function(
        &self,
        spec: &ProviderSpec,
        req: &CallFunctionRequest,
        signature: &FunctionSignature,
    ) -> Result<CallFunctionResponse, Diagnostics> {
        let _ = (req, signature);
        Err(Diagnostic::error(
            "Provider functions unavailable",
            format!("this worker cannot call the functions of {}", spec.addr),
        )
        .into())
    }
    /// The run was cancelled: ask the providers of its calls in progress to
    /// stop (`StopProvider`), and start new processes for anything later.
    async fn stop_run(&self, _run_id: &str) {}
    /// The run ended: its provider processes can go once nobody uses them.
    async fn finish_run(&self, _run_id: &str) {}
}

/// Tells a task in progress that its run was cancelled. Provider calls are
/// stopped through the provider (`StopProvider`); what the worker runs
/// itself (a provisioner's command) watches this.
#[async_trait]
pub trait StopSignal: Send + Sync {
    /// Resolves once the task's run is cancelled; never, if it is not.
    async fn stopped(&self);
}

/// A run that is never cancelled.
pub struct NeverStopped;

#[async_trait]
impl StopSignal for NeverStopped {
    async fn stopped(&self) {
        std::future::pending::<()>().await
    }
}

/// Whether an apply may go on to ApplyResourceChange, the call that
/// changes something. A worker claims a task that must not run twice while
/// the provider plans it again (the final plan), instead of before: a
/// round trip to the claims bucket less on every create or update, which
/// is a link of a chain of dependent operations.
#[async_trait]
pub trait ApplyGate: Send + Sync {
    /// Resolves to false when the apply must not go on.
    async fn open(&self) -> bool;
}

/// A gate that is always open.
pub struct Open;

#[async_trait]
impl ApplyGate for Open {
    async fn open(&self) -> bool {
        true
    }
}

/// Where a task in progress reports what it shows before its result (a
/// provisioner's start, output lines and end). Called from any thread; must
/// not block.
pub trait Progress: Send + Sync {
    fn report(&self, step: u32, event: ProgressEvent);
}

/// Progress nobody watches.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _step: u32, _event: ProgressEvent) {}
}

/// Runs a task to its outcome. Never panics on provider misbehaviour: every
/// problem becomes diagnostics in the outcome.
pub async fn handle(source: &dyn ProviderSource, task: &Task) -> TaskOutcome {
    let progress: Arc<dyn Progress> = Arc::new(NoProgress);
    handle_until(source, task, &NeverStopped, &progress).await
}

/// [`handle`], with commands the task runs itself killed once `stop` fires,
/// and their progress reported as it happens.
pub async fn handle_until(
    source: &dyn ProviderSource,
    task: &Task,
    stop: &dyn StopSignal,
    progress: &Arc<dyn Progress>,
) -> TaskOutcome {
    handle_gated(source, task, stop, progress, &Open).await
}

/// [`handle_until`], where an apply goes on to ApplyResourceChange only once
/// `gate` opens (a closed gate fails the task without changing anything).
pub async fn handle_gated(
    source: &dyn ProviderSource,
    task: &Task,
    stop: &dyn StopSignal,
    progress: &Arc<dyn Progress>,
    gate: &dyn ApplyGate,
) -> TaskOutcome {
    let result = match &task.kind {
        TaskKind::Schema { cached } => schema(source, &task.provider, cached).await,
        TaskKind::Plan(p) => plan::plan(source, &task.provider, &task.run_id, p)
            .await
            .map(TaskOutcome::Plan),
        TaskKind::Apply(a) => apply::apply(
            source,
            &task.provider,
            &task.run_id,
            a,
            stop,
            progress,
            gate,
        )
        .await
        .map(TaskOutcome::Apply),
        TaskKind::Provision(p) => Ok(TaskOutcome::Provision(
            provision::run(&p.addr, &p.provisioners, stop, progress).await,
        )),
        TaskKind::Read(r) => read::read(source, &task.provider, &task.run_id, r)
            .await
            .map(TaskOutcome::Read),
        TaskKind::Import(i) => import::import(source, &task.provider, &task.run_id, i)
            .await
            .map(TaskOutcome::Import),
        TaskKind::Function(f) => function(source, &task.provider, f).await,
        TaskKind::Open(o) => ephemeral::open(source, &task.provider, &task.run_id, o)
            .await
            .map(TaskOutcome::Open),
        TaskKind::Renew(r) => ephemeral::renew(source, &task.provider, &task.run_id, r)
            .await
            .map(TaskOutcome::Renew),
        TaskKind::Close(c) => ephemeral::close(source, &task.provider, &task.run_id, c)
            .await
            .map(TaskOutcome::Close),
    };
    result.unwrap_or_else(TaskOutcome::Failed)
}

fn resource_schema<'s>(
    schema: &'s ProviderSchema,
    spec: &ProviderSpec,
    type_name: &str,
) -> Result<&'s Schema, Diagnostics> {
    schema.resources.get(type_name).ok_or_else(|| {
        Diagnostic::error(
            "Invalid resource type",
            format!(
                "The provider {} does not support resource type \"{type_name}\".",
                spec.addr
            ),
        )
        .into()
    })
}

fn data_source_schema<'s>(
    schema: &'s ProviderSchema,
    spec: &ProviderSpec,
    type_name: &str,
) -> Result<&'s Schema, Diagnostics> {
    schema.data_sources.get(type_name).ok_or_else(|| {
        Diagnostic::error(
            "Invalid data source",
            format!(
                "The provider {} does not support data source \"{type_name}\".",
                spec.addr
            ),
        )
        .into()
    })
}

fn call_failed(spec: &ProviderSpec, what: &str, e: impl std::fmt::Display) -> Diagnostics {
    Diagnostic::error(
        format!("Plugin error during {what}"),
        format!("The plugin {} failed: {e}", spec.addr),
    )
    .into()
}
