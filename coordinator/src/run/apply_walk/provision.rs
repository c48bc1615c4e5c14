//! Provisioners in the apply walk.
//!
//! Creation-time provisioners run after their instance's create, as a
//! follow-up [`ProvisionTask`]: their arguments may use `self`, the object
//! the create returned, beside anything else in the module's scope
//! (variables, locals, other resources) that only the coordinator holds. So
//! the coordinator evaluates them when the create's result is in and sends
//! them fully evaluated; the worker only runs commands. Until they succeed
//! the new object is recorded tainted: a coordinator that stops in between
//! leaves an object the next plan replaces (running its provisioners
//! again), never one that looks provisioned but was not.
//!
//! Destroy-time provisioners may refer only to `self` (the object being
//! deleted, known before the delete), `count.index` and `each.key`, so they
//! are evaluated when the delete task is built and travel with it; the
//! worker runs them before the delete and keeps the object if one fails.

use super::super::ctx::RunCtx;
use super::super::expand::expand;
use super::super::scope::EvalScope;
use super::provider_of;
use fleetform_lang::config::{ProvisionerWhen, ResourceBlock};
use fleetform_lang::eval::{Marks, Overlay, Scope};
use fleetform_shared::addr::{AbsResourceInstance, InstanceKey};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::apply::OpKind;
use fleetform_shared::plan::{Action, ResourceChange};
use fleetform_shared::state::{ObjectState, ObjectStatus, State, StateDelta};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{
    ProvisionStep, ProvisionTask, ProvisionerSpec, RunEvent, Task, TaskKind, TaskOutcome,
    TaskResult,
};

fn block<'c>(ctx: &'c RunCtx<'_>, c: &ResourceChange) -> Option<&'c ResourceBlock> {
    ctx.module_of(&c.addr.module)?
        .module
        .resources
        .get(&c.addr.resource.resource)
}

fn has(block: &ResourceBlock, when: ProvisionerWhen) -> bool {
    block.provisioners.iter().any(|p| p.when == when)
}

/// Whether a successful operation is a create that creation-time
/// provisioners follow (a replacement's create too; an update never).
pub(super) fn after_create(ctx: &RunCtx<'_>, c: &ResourceChange, kind: OpKind) -> bool {
    kind == OpKind::Apply
        && matches!(
            c.action,
            Action::Create | Action::DeleteThenCreate | Action::CreateThenDelete
        )
        && block(ctx, c).is_some_and(|b| has(b, ProvisionerWhen::Create))
}

/// Records the created object tainted until its provisioners succeed.
pub(super) fn taint_until_provisioned(deltas: &mut [StateDelta]) {
    for d in deltas {
        if let StateDelta::SetCurrent {
            object: Some(o), ..
        } = d
        {
            o.status = ObjectStatus::Tainted;
        }
    }
}

/// The task running the creation-time provisioners of `c`'s new object,
/// which is `self` (the state holds it by now).
pub(super) fn create_task(
    ctx: &RunCtx<'_>,
    state: &State,
    c: &ResourceChange,
) -> Result<Task, Diagnostics> {
    let gone = || {
        Diagnostics::from(
            Diagnostic::error(
                "Provisioners not run",
                format!(
                    "{} was created, but its configuration or its new object is gone from the run",
                    c.addr
                ),
            )
            .for_address(&c.addr),
        )
    };
    let block = block(ctx, c).ok_or_else(gone)?;
    let object = state.current(&c.addr).ok_or_else(gone)?;
    let (spec, _) = provider_of(ctx, c).ok_or_else(gone)?;
    let dir = ctx
        .module_of(&c.addr.module)
        .map_or(".", |n| n.dir.as_str());
    let key = &c.addr.resource.key;
    let scope = EvalScope::in_module(&ctx.values, &c.addr.module, dir, ctx.workspace());
    let (each_value, each_marks) = match key {
        InstanceKey::Str(_) => {
            let mut instances = expand(block, &scope)?;
            let value = instances
                .keys
                .into_iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| v);
            (value, instances.each_marks.remove(key))
        }
        _ => (None, None),
    };
    let scope = EvalScope {
        key,
        each_value: each_value.as_ref(),
        each_marks: each_marks.as_ref(),
        ..scope
    };
    let provisioners = evaluate(block, ProvisionerWhen::Create, &scope, object, &c.addr)?;
    Ok(Task {
        id: format!("{}:provision:{}", ctx.run_id(), c.addr),
        run_id: ctx.run_id().to_string(),
        // Not used: provisioners need no provider; a task names one anyway.
        provider: spec.clone(),
        kind: TaskKind::Provision(ProvisionTask {
            addr: c.addr.clone(),
            provisioners,
        }),
    })
}

/// The destroy-time provisioners to run before deleting `prior`. Terraform
/// runs none for a deposed object (a create_before_destroy replacement's
/// old one), a tainted one, or an instance whose resource is no longer
/// configured.
pub(super) fn before_delete(
    ctx: &RunCtx<'_>,
    c: &ResourceChange,
    prior: Option<&ObjectState>,
    deposed: bool,
) -> Result<Vec<ProvisionerSpec>, Diagnostics> {
    let (Some(block), Some(object)) = (block(ctx, c), prior) else {
        return Ok(vec![]);
    };
    if deposed || object.status == ObjectStatus::Tainted || !has(block, ProvisionerWhen::Destroy) {
        return Ok(vec![]);
    }
    let dir = ctx
        .module_of(&c.addr.module)
        .map_or(".", |n| n.dir.as_str());
    let key = &c.addr.resource.key;
    // `each.key` without `each.value` (which a destroy-time provisioner may
    // not use): the key may be gone from `for_each` by now.
    let each_value = matches!(key, InstanceKey::Str(_)).then_some(Value::Null);
    let scope = EvalScope {
        key,
        each_value: each_value.as_ref(),
        ..EvalScope::in_module(&ctx.values, &c.addr.module, dir, ctx.workspace())
    };
    evaluate(block, ProvisionerWhen::Destroy, &scope, object, &c.addr)
}

fn evaluate(
    block: &ResourceBlock,
    when: ProvisionerWhen,
    scope: &dyn Scope,
    object: &ObjectState,
    addr: &AbsResourceInstance,
) -> Result<Vec<ProvisionerSpec>, Diagnostics> {
    let scope = Overlay::with_self(
        scope,
        object.value.clone(),
        Marks::from_paths(object.sensitive_paths.iter().cloned()),
    );
    let header = block.header();
    let mut out = Vec::new();
    let mut diags = Diagnostics::new();
    for p in block.provisioners.iter().filter(|p| p.when == when) {
        match p.evaluate(&scope, &header) {
            Ok(spec) => out.push(spec),
            Err(d) => diags.extend(d),
        }
    }
    if diags.has_errors() {
        let placed = diags.0.into_iter().map(|mut d| {
            d.context.get_or_insert_with(|| header.clone());
            d.for_address(addr)
        });
        return Err(placed.collect());
    }
    Ok(out)
}

/// Reports what provisioners did, as Terraform's hooks do.
pub(super) fn emit_steps(ctx: &RunCtx<'_>, addr: &AbsResourceInstance, steps: &[ProvisionStep]) {
    for s in steps {
        ctx.emit(RunEvent::ProvisionStart {
            addr: addr.clone(),
            provisioner: s.kind.clone(),
        });
        for line in &s.output {
            ctx.emit(RunEvent::ProvisionOutput {
                addr: addr.clone(),
                provisioner: s.kind.clone(),
                line: line.clone(),
            });
        }
        ctx.emit(RunEvent::ProvisionDone {
            addr: addr.clone(),
            provisioner: s.kind.clone(),
            errored: s.errored,
        });
    }
}

/// A Provision task's result: the worker, and the object made ready; on a
/// failure it stays tainted, as recorded after the create.
pub(super) fn finish(
    ctx: &RunCtx<'_>,
    c: &ResourceChange,
    state: &State,
    result: Option<TaskResult>,
) -> (Result<String, Diagnostics>, Vec<StateDelta>) {
    let not_run = |why: &str| {
        Diagnostics::from(
            Diagnostic::error(
                "Provisioners not run",
                format!("{} was created, but its creation-time provisioners did not run: {why}. The object is tainted, so the next apply replaces it.", c.addr),
            )
            .for_address(&c.addr),
        )
    };
    let Some(result) = result else {
        return (
            Err(not_run("the coordinator stopped waiting for them")),
            vec![],
        );
    };
    let outcome = match result.outcome {
        TaskOutcome::Provision(o) => o,
        TaskOutcome::Cancelled => {
            return (
                Err(not_run("the run was cancelled before they started")),
                vec![],
            );
        }
        TaskOutcome::Interrupted { .. } => {
            let why = "the worker running them stopped answering, and they were not started again, since commands may not be safe to repeat";
            return (Err(not_run(why)), vec![]);
        }
        TaskOutcome::Failed(d) => return (Err(d), vec![]),
        other => {
            let d = Diagnostic::error("Unexpected worker answer", format!("{other:?}"));
            return (Err(d.into()), vec![]);
        }
    };
    emit_steps(ctx, &c.addr, &outcome.steps);
    if outcome.diagnostics.has_errors() {
        return (Err(outcome.diagnostics), vec![]);
    }
    let ready = state.current(&c.addr).map(|o| StateDelta::SetCurrent {
        addr: c.addr.clone(),
        provider: c.provider.clone(),
        object: Some(ObjectState {
            status: ObjectStatus::Ready,
            ..o.clone()
        }),
    });
    (Ok(result.worker), ready.into_iter().collect())
}
