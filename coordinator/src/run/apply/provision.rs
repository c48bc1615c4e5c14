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

use crate::dispatch::ProgressWatcher;
use crate::run::ctx::RunCtx;
use crate::run::ctx::provider_of;
use crate::run::eval::expand::expand;
use crate::run::eval::scope::EvalScope;
use crate::run::events::EventLog;
use fleetform_lang::config::{ProvisionerWhen, ResourceBlock};
use fleetform_lang::eval::{Marks, Overlay, Scope};
use fleetform_shared::addr::{AbsResourceInstance, InstanceKey};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::apply::OpKind;
use fleetform_shared::plan::{Action, ResourceChange};
use fleetform_shared::state::{ObjectState, ObjectStatus, State, StateDelta};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{
    ProgressEvent, ProvisionStep, ProvisionTask, ProvisionerSpec, RunEvent, Task, TaskKind,
    TaskOutcome, TaskResult,
};
use std::sync::{Arc, Mutex};

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
pub(crate) fn taint_until_provisioned(deltas: &mut [StateDelta]) {
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
    let each_value = matches!(key, InstanceKey::Str(_)).then_some(Value::null());
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

/// What of one task's provisioner output has been shown: its live progress
/// as it comes, then, from the result, whatever did not come live (all of
/// it, when nothing did). Either way each provisioner's start, lines and
/// end are shown once each, in order, as Terraform's hooks report them.
pub(crate) struct ProvisionStream {
    events: Arc<EventLog>,
    addr: AbsResourceInstance,
    shown: Mutex<Shown>,
}

#[derive(Default)]
struct Shown {
    /// Per provisioner started: its kind, lines shown, whether its end was.
    steps: Vec<(String, u32, bool)>,
    /// The result is in: live progress is late now, and ignored.
    closed: bool,
}

impl ProvisionStream {
    pub fn new(ctx: &RunCtx<'_>, addr: &AbsResourceInstance) -> Arc<ProvisionStream> {
        Self::into_log(ctx.handle.events.clone(), addr)
    }

    fn into_log(events: Arc<EventLog>, addr: &AbsResourceInstance) -> Arc<ProvisionStream> {
        Arc::new(ProvisionStream {
            events,
            addr: addr.clone(),
            shown: Mutex::default(),
        })
    }

    fn start(&self, kind: &str) -> RunEvent {
        RunEvent::ProvisionStart {
            addr: self.addr.clone(),
            provisioner: kind.to_string(),
        }
    }

    fn line(&self, kind: &str, line: String) -> RunEvent {
        RunEvent::ProvisionOutput {
            addr: self.addr.clone(),
            provisioner: kind.to_string(),
            line,
        }
    }

    fn done(&self, kind: &str, errored: bool) -> RunEvent {
        RunEvent::ProvisionDone {
            addr: self.addr.clone(),
            provisioner: kind.to_string(),
            errored,
        }
    }

    /// Shows what the result says the provisioners did, less what was
    /// shown live; nothing live is shown after this.
    pub fn finish(&self, steps: &[ProvisionStep]) {
        let mut shown = self.shown.lock().expect("provision stream lock");
        shown.closed = true;
        for (i, s) in steps.iter().enumerate() {
            let (lines, ended) = match shown.steps.get(i) {
                Some((_, lines, ended)) => (*lines as usize, *ended),
                None => {
                    self.events.push(self.start(&s.kind));
                    (0, false)
                }
            };
            for line in s.output.iter().skip(lines) {
                self.events.push(self.line(&s.kind, line.clone()));
            }
            if !ended {
                self.events.push(self.done(&s.kind, s.errored));
            }
        }
    }
}

impl ProgressWatcher for ProvisionStream {
    /// Shows a provisioner's start, next line or end; anything out of order
    /// (a gap, a duplicate) is left for [`ProvisionStream::finish`].
    fn progress(&self, step: u32, event: ProgressEvent) {
        let mut shown = self.shown.lock().expect("provision stream lock");
        if shown.closed {
            return;
        }
        let current = shown.steps.len().checked_sub(1);
        match event {
            // Only once the one before has ended.
            ProgressEvent::Started { provisioner }
                if step as usize == shown.steps.len() && shown.steps.last().is_none_or(|s| s.2) =>
            {
                self.events.push(self.start(&provisioner));
                shown.steps.push((provisioner, 0, false));
            }
            ProgressEvent::Output { seq, line } if current == Some(step as usize) => {
                let (kind, lines, ended) = shown.steps.last_mut().expect("a step");
                if !*ended && *lines == seq {
                    self.events.push(self.line(kind, line));
                    *lines += 1;
                }
            }
            ProgressEvent::Finished {
                errored,
                lines: all,
            } if current == Some(step as usize) => {
                let (kind, lines, ended) = shown.steps.last_mut().expect("a step");
                // With lines missed, its end waits for the result, which
                // has them: they come before it.
                if !*ended && *lines == all {
                    self.events.push(self.done(kind, errored));
                    *ended = true;
                }
            }
            _ => {}
        }
    }
}

/// A Provision task's result: the worker, and the object made ready; on a
/// failure it stays tainted, as recorded after the create.
pub(super) fn finish(
    c: &ResourceChange,
    state: &State,
    stream: &ProvisionStream,
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
    stream.finish(&outcome.steps);
    if outcome.diagnostics.has_errors() {
        return (Err(outcome.diagnostics), vec![]);
    }
    (
        Ok(result.worker),
        provisioned(c, state).into_iter().collect(),
    )
}

/// The object `c` created, its provisioners done: ready, no longer tainted.
pub(crate) fn provisioned(c: &ResourceChange, state: &State) -> Option<StateDelta> {
    state.current(&c.addr).map(|o| StateDelta::SetCurrent {
        addr: c.addr.clone(),
        provider: c.provider.clone(),
        object: Some(ObjectState {
            status: ObjectStatus::Ready,
            ..o.clone()
        }),
    })
}

#[cfg(test)]
#[path = "provision_tests.rs"]
mod tests;
