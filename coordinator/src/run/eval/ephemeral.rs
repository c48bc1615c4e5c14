//! Ephemeral resources (Terraform 1.10) in a run: each walk that needs
//! them opens its own instances and closes them. The plan walk opens them
//! as it reaches them (like data sources, see [`crate::run::plan::ephemeral`]) and closes
//! them when it ends ([`close_all`]); the apply walk opens each one as a
//! node of its own once what it depends on is applied, renews it while it
//! is needed and closes it after its last dependent
//! ([`crate::run::apply::ephemeral`]). Their values live in the walk's values
//! only, never in a change, the plan or the state.
//!
//! Where the open happens: a worker task ([`TaskKind::Open`]), like a data
//! source read, since only workers run providers. The value comes back in
//! the task's result; a renewal and the close are other tasks, carrying
//! the `private` data the provider answered (see
//! [`crate::run::apply::ephemeral`] for which worker takes them). Embedded mode
//! runs the same tasks in process. The plan walk does not renew: an
//! instance whose provider asks for a renewal (`renew_at`) before the plan
//! ends gets a warning.
//!
//! An instance whose configuration is not wholly known is not opened: its
//! value is unknown, as in Terraform.

use crate::run::ctx::{Opened, RunCtx};
use crate::run::eval::expand::expand;
use crate::run::eval::scope::EvalScope;
use crate::run::eval::sensitivity::{object_marks, schema_of};
use fleetform_lang::eval::Marks;
use fleetform_lang::rules::conditions::RuleStatus;
use fleetform_shared::addr::{AbsResourceInstance, ConfigResource};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::plan::Action;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{
    ApplyOp, CloseTask, OpenTask, ProviderSpec, RunEvent, Task, TaskKind, TaskOutcome, TaskResult,
};
use std::sync::Arc;
use std::time::Instant;

/// One instance to open: its task, or none when its configuration is not
/// wholly known (its value is then unknown).
pub(in crate::run) struct Prepared {
    pub addr: AbsResourceInstance,
    pub task: Option<OpenTask>,
}

/// Expands ephemeral resource `r` in every instance of its module and
/// decodes each instance's configuration; the resource's values start
/// unknown until the opens answer. None when its provider is not
/// configured or does not know the type (reported in `diags`).
pub(in crate::run) fn prepare(
    ctx: &mut RunCtx<'_>,
    r: &ConfigResource,
    diags: &mut Diagnostics,
) -> Option<(Arc<ProviderSpec>, Vec<Prepared>)> {
    let config = ctx.config;
    let node = config.module(&r.module)?;
    let block = &node.module.resources[&r.resource];
    let provider = ctx.graph.resource_providers.get(r)?;
    let (spec, schema) = ctx.providers.get(provider).cloned()?;
    let type_name = &r.resource.type_name;
    let Some(type_schema) = schema.ephemeral_resources.get(type_name.as_str()) else {
        diags.push(
            Diagnostic::error(
                "Invalid ephemeral resource",
                format!(
                    "The provider {} does not support ephemeral resource \"{type_name}\".",
                    spec.addr
                ),
            )
            .at(block.decl_range.clone())
            .in_context(block.header()),
        );
        return None;
    };
    let mut out = Vec::new();
    for inst in ctx.values.instances_of(&r.module) {
        let abs = r.absolute(inst.clone());
        let scope = EvalScope::in_module(&ctx.values, &inst, &node.dir, ctx.workspace());
        let instances = match expand(block, &scope) {
            Ok(i) => i,
            Err(d) => {
                diags.extend(d);
                continue;
            }
        };
        let mut values = ctx.resource_values(r, instances.expansion);
        for (key, each) in &instances.keys {
            let addr = abs.instance(key.clone());
            let scope = EvalScope {
                key,
                each_value: each.as_ref(),
                each_marks: instances.each_marks.get(key),
                ..EvalScope::in_module(&ctx.values, &inst, &node.dir, ctx.workspace())
            };
            values.instances.insert(key.clone(), Value::unknown());
            let (pre, d) = crate::run::eval::conditions::preconditions(block, &scope);
            diags.extend(d);
            if pre != RuleStatus::Passed {
                continue;
            }
            let (config, marks, d) = block.body.decode_marked(&type_schema.block, &scope);
            let failed = d.has_errors();
            diags.extend(d.into_iter().map(|x| x.for_address(&addr)).collect());
            if failed {
                continue;
            }
            values.set_marks(key, marks);
            let task = config.is_wholly_known().then(|| OpenTask {
                addr: addr.clone(),
                type_name: type_name.to_string(),
                config,
            });
            out.push(Prepared { addr, task });
        }
        ctx.values.set_resource(&abs, values);
    }
    Some((spec, out))
}

/// "ADDR: Opening..."
pub(in crate::run) fn open_started(ctx: &RunCtx<'_>, addr: &AbsResourceInstance) {
    ctx.emit(RunEvent::ApplyStart {
        addr: addr.clone(),
        deposed: None,
        action: Action::Read,
        op: ApplyOp::Open,
    });
}

/// Takes an open's answer: the instance's value (with its configuration's
/// and its schema's marks), "Opening complete", and what closing it takes;
/// or the diagnostics saying why it did not open.
pub(in crate::run) fn record_open(
    ctx: &mut RunCtx<'_>,
    addr: &AbsResourceInstance,
    provider: &Arc<ProviderSpec>,
    result: Option<TaskResult>,
    started: Instant,
    diags: &mut Diagnostics,
) -> Option<Opened> {
    let worker = result
        .as_ref()
        .map(|r| r.worker.clone())
        .unwrap_or_default();
    let o = match result.map(|r| r.outcome) {
        Some(TaskOutcome::Open(o)) => o,
        Some(TaskOutcome::Failed(d)) => {
            diags.extend_at(d, addr);
            return None;
        }
        _ => {
            diags.push(
                Diagnostic::error("Lost an ephemeral resource's open", "no answer came")
                    .for_address(addr),
            );
            return None;
        }
    };
    if diags.extend_at(o.diagnostics, addr) {
        return None;
    }
    ctx.emit(RunEvent::ApplyComplete {
        addr: addr.clone(),
        deposed: None,
        action: Action::Read,
        op: ApplyOp::Open,
        id: None,
        elapsed_ms: started.elapsed().as_millis() as u64,
        worker,
    });
    let opened = Opened {
        addr: addr.clone(),
        provider: provider.clone(),
        private: o.private,
        renew_at: o.renew_at,
    };
    let config_marks = ctx
        .values
        .resource(&addr.containing_resource())
        .and_then(|v| v.marks.get(addr.key()))
        .cloned()
        .unwrap_or_default();
    let marks: Marks = object_marks(
        config_marks,
        schema_of(ctx, &provider.addr, addr),
        &o.result,
    );
    if let Some(values) = ctx.values.resource_mut(&addr.containing_resource()) {
        values.instances.insert(addr.resource.key.clone(), o.result);
        values.set_marks(&addr.resource.key, marks);
    }
    Some(opened)
}

/// The id of an ephemeral resource's task in the current walk: a
/// restarted coordinator's walks (another incarnation) never reuse one,
/// which the queue would drop as a duplicate.
pub(in crate::run) fn task_id(ctx: &RunCtx<'_>, what: &str, addr: &AbsResourceInstance) -> String {
    format!(
        "{}:ephemeral{}:{what}:{addr}",
        ctx.planning_prefix(),
        ctx.ephemeral_walks
    )
}

/// Closes what the walk opened ("Closing..." / "Closing complete"), and
/// reports what closing said, with a warning for a renewal that was due.
pub(crate) async fn close_all(ctx: &mut RunCtx<'_>) {
    let opened = std::mem::take(&mut ctx.opened);
    if opened.is_empty() {
        return;
    }
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default();
    let mut diags = Diagnostics::new();
    let mut tasks = Vec::new();
    for o in &opened {
        if o.renew_at.is_some_and(|at| at <= now_ms) {
            diags.push(
                Diagnostic::warning(
                    "Ephemeral resource not renewed",
                    "The provider asked for this ephemeral resource to be renewed before the operation ended; fleetform does not renew ephemeral resources yet, so what it opened may have expired.",
                )
                .for_address(&o.addr),
            );
        }
        ctx.emit(RunEvent::ApplyStart {
            addr: o.addr.clone(),
            deposed: None,
            action: Action::Read,
            op: ApplyOp::Close,
        });
        tasks.push(Task {
            id: task_id(ctx, "close", &o.addr),
            run_id: ctx.run_id().to_string(),
            provider: o.provider.clone(),
            kind: TaskKind::Close(CloseTask {
                addr: o.addr.clone(),
                type_name: o.addr.resource.resource.type_name.to_string(),
                private: o.private.clone(),
            }),
        });
    }
    let started = Instant::now();
    match ctx.shared.dispatcher.dispatch(tasks).await {
        Ok(receivers) => {
            for (o, rx) in opened.iter().zip(receivers) {
                let result = rx.await.ok();
                let worker = result
                    .as_ref()
                    .map(|r| r.worker.clone())
                    .unwrap_or_default();
                match result.map(|r| r.outcome) {
                    Some(TaskOutcome::Close(d)) | Some(TaskOutcome::Failed(d)) => {
                        let failed = d.has_errors();
                        diags.extend(d.into_iter().map(|x| x.for_address(&o.addr)).collect());
                        if failed {
                            continue;
                        }
                    }
                    _ => continue,
                }
                ctx.emit(RunEvent::ApplyComplete {
                    addr: o.addr.clone(),
                    deposed: None,
                    action: Action::Read,
                    op: ApplyOp::Close,
                    id: None,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    worker,
                });
            }
        }
        Err(e) => diags.push(Diagnostic::error(
            "Failed to dispatch ephemeral resource closes",
            e.to_string(),
        )),
    }
    if !diags.is_empty() {
        ctx.emit(RunEvent::Diagnostics(diags));
    }
}
