//! Custom conditions while a run plans and applies: resource preconditions
//! (before an instance is planned, again before it is applied),
//! postconditions (against the planned object, again against the applied
//! one, with `self` in scope) and output preconditions. Conditions still
//! unknown while planning are decided at apply. Check blocks are in
//! [`crate::run::eval::checks`].

use crate::run::ctx::RunCtx;
use crate::run::eval::expand::expand;
use crate::run::eval::scope::EvalScope;
use fleetform_lang::config::{CheckRule, ResourceBlock};
use fleetform_lang::eval::{Marks, Overlay, Scope};
use fleetform_lang::rules::conditions::{RuleKind, RuleStatus, check_rules};
use fleetform_shared::addr::{AbsResourceInstance, InstanceKey};
use fleetform_shared::diag::{Diagnostic, Diagnostics, Severity};
use fleetform_shared::graph::apply::OpKind;
use fleetform_shared::plan::{Action, Plan, ResourceChange};
use fleetform_shared::state::{CheckResult, CheckStatus, CheckedObject};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ApplyOp, RunEvent};

/// Rules of a resource, their diagnostics placed in its block.
pub(in crate::run) fn resource_rules(
    block: &ResourceBlock,
    rules: &[CheckRule],
    scope: &dyn Scope,
    kind: RuleKind,
) -> (RuleStatus, Diagnostics) {
    if rules.is_empty() {
        return (RuleStatus::Passed, Diagnostics::new());
    }
    let (status, diags) = check_rules(rules, scope, kind);
    let header = block.header();
    let diags = diags
        .into_iter()
        .map(|d| match d.context {
            Some(_) => d,
            None => d.in_context(header.clone()),
        })
        .collect();
    (status, diags)
}

/// An instance's preconditions while planning, in its own scope.
pub(in crate::run) fn preconditions(
    block: &ResourceBlock,
    scope: &EvalScope<'_>,
) -> (RuleStatus, Diagnostics) {
    resource_rules(
        block,
        &block.lifecycle.preconditions,
        scope,
        RuleKind::ResourcePrecondition,
    )
}

pub(in crate::run) fn block_of<'c>(
    ctx: &'c RunCtx<'_>,
    addr: &AbsResourceInstance,
) -> Option<&'c ResourceBlock> {
    ctx.module_of(&addr.module)?
        .module
        .resources
        .get(&addr.resource.resource)
}

/// Runs `f` in the scope of one instance at apply time (its module
/// instance, `count.index` or `each`).
fn in_instance_scope<T>(
    ctx: &RunCtx<'_>,
    addr: &AbsResourceInstance,
    block: &ResourceBlock,
    f: impl FnOnce(&EvalScope<'_>) -> T,
) -> Result<T, Diagnostics> {
    let dir = ctx.module_of(&addr.module).map_or(".", |n| n.dir.as_str());
    let scope = EvalScope::in_module(&ctx.values, &addr.module, dir, ctx.workspace());
    let each = match addr.key() {
        InstanceKey::Str(_) => expand(block, &scope)?
            .keys
            .into_iter()
            .find(|(k, _)| k == addr.key())
            .and_then(|(_, v)| v),
        _ => None,
    };
    let scope = EvalScope {
        key: addr.key(),
        each_value: each.as_ref(),
        ..scope
    };
    Ok(f(&scope))
}

/// Preconditions again, just before an instance is applied: what they use
/// is final now.
pub(in crate::run) fn before_apply(
    ctx: &RunCtx<'_>,
    c: &ResourceChange,
    kind: OpKind,
) -> Result<(), Diagnostics> {
    if kind != OpKind::Apply || c.deposed.is_some() {
        return Ok(());
    }
    let Some(block) = block_of(ctx, &c.addr).filter(|b| !b.lifecycle.preconditions.is_empty())
    else {
        return Ok(());
    };
    let (status, d) = in_instance_scope(ctx, &c.addr, block, |s| preconditions(block, s))?;
    match status {
        RuleStatus::Failed => Err(d),
        _ => Ok(()),
    }
}

/// An applied operation's outcome with the conditions that follow it: the
/// postconditions against the new object (a failure fails the operation;
/// the object is already in state, as in Terraform), and a check-scoped
/// data source whose read failed, which only warns.
pub(in crate::run) fn after_apply(
    ctx: &RunCtx<'_>,
    c: &ResourceChange,
    kind: OpKind,
    outcome: Result<String, Diagnostics>,
) -> Result<String, Diagnostics> {
    if kind != OpKind::Apply || c.deposed.is_some() {
        return outcome;
    }
    let Some(block) = block_of(ctx, &c.addr) else {
        return outcome;
    };
    if block.check.is_some() {
        return outcome.or_else(|d| {
            ctx.emit(RunEvent::Diagnostics(as_warnings(d)));
            Ok(String::new())
        });
    }
    let worker = outcome?;
    let d = postconditions_applied(ctx, block, &c.addr)?;
    if d.has_errors() { Err(d) } else { Ok(worker) }
}

fn postconditions_applied(
    ctx: &RunCtx<'_>,
    block: &ResourceBlock,
    addr: &AbsResourceInstance,
) -> Result<Diagnostics, Diagnostics> {
    if block.lifecycle.postconditions.is_empty() {
        return Ok(Diagnostics::new());
    }
    let object = ctx
        .values
        .resource(&addr.containing_resource())
        .and_then(|v| v.instances.get(addr.key()))
        .cloned()
        .unwrap_or(Value::null());
    if object.is_null() {
        return Ok(Diagnostics::new());
    }
    in_instance_scope(ctx, addr, block, |scope| {
        let with_self = Overlay::with_self(scope, object, Marks::none());
        resource_rules(
            block,
            &block.lifecycle.postconditions,
            &with_self,
            RuleKind::ResourcePostcondition,
        )
        .1
    })
}

/// Diagnostics turned into warnings (a check-scoped data source's).
pub(in crate::run) fn as_warnings(d: Diagnostics) -> Diagnostics {
    d.into_iter()
        .map(|mut d| {
            d.severity = Severity::Warning;
            d
        })
        .collect()
}

/// After the apply walk: the conditions of instances the plan left
/// unchanged (what they depend on may have changed), the output
/// preconditions of every module instance (failures are errors of the run)
/// and the check blocks (warnings).
pub(in crate::run) fn after_apply_walk(ctx: &RunCtx<'_>, plan: &Plan) {
    for c in &plan.changes {
        if c.action != Action::NoOp || c.deposed.is_some() {
            continue;
        }
        let Some(block) = block_of(ctx, &c.addr) else {
            continue;
        };
        let lc = &block.lifecycle;
        if lc.preconditions.is_empty() && lc.postconditions.is_empty() {
            continue;
        }
        let pre = in_instance_scope(ctx, &c.addr, block, |s| preconditions(block, s).1);
        let diags = match pre {
            Ok(d) if !d.has_errors() => {
                postconditions_applied(ctx, block, &c.addr).unwrap_or_else(|d| d)
            }
            Ok(d) | Err(d) => d,
        };
        if diags.has_errors() {
            ctx.emit(RunEvent::ApplyErrored {
                addr: c.addr.clone(),
                deposed: None,
                action: c.action,
                op: ApplyOp::Update,
                diagnostics: diags,
            });
        }
    }
    let mut diags = output_preconditions(ctx);
    diags.extend(crate::run::eval::checks::run_checks(ctx));
    if !diags.is_empty() {
        ctx.emit(RunEvent::Diagnostics(diags));
    }
}

/// One output's preconditions in one module instance's scope; diagnostics
/// in the output block.
pub(in crate::run) fn output_rules(
    output: &fleetform_lang::config::Output,
    scope: &EvalScope<'_>,
) -> (RuleStatus, Diagnostics) {
    if output.preconditions.is_empty() {
        return (RuleStatus::Passed, Diagnostics::new());
    }
    let (status, d) = check_rules(&output.preconditions, scope, RuleKind::OutputPrecondition);
    let context = format!("output {:?}", output.name);
    let d = d
        .into_iter()
        .map(|x: Diagnostic| match x.context {
            Some(_) => x,
            None => x.in_context(context.clone()),
        })
        .collect();
    (status, d)
}

/// Every output precondition of every module instance, with final values.
fn output_preconditions(ctx: &RunCtx<'_>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for node in ctx.config.modules() {
        for output in node.module.outputs.values() {
            if output.preconditions.is_empty() {
                continue;
            }
            for inst in ctx.values.instances_of(&node.path) {
                let scope = EvalScope::in_module(&ctx.values, &inst, &node.dir, ctx.workspace());
                diags.extend(output_rules(output, &scope).1);
            }
        }
    }
    diags
}

/// A rule set's outcome as a check status, with the messages of the rules
/// that failed.
fn check_status(status: RuleStatus, diags: &Diagnostics) -> (CheckStatus, Vec<String>) {
    match status {
        RuleStatus::Passed => (CheckStatus::Pass, Vec::new()),
        RuleStatus::Unknown => (CheckStatus::Unknown, Vec::new()),
        RuleStatus::Failed => {
            let messages: Vec<String> = diags
                .iter()
                .filter(|d| d.summary.ends_with("failed"))
                .map(|d| d.detail.clone())
                .collect();
            // A condition that could not be evaluated at all is an error,
            // as Terraform records it; a false one a failure.
            if messages.is_empty() {
                (CheckStatus::Error, Vec::new())
            } else {
                (CheckStatus::Fail, messages)
            }
        }
    }
}

/// `module.a.` for a module path, nothing for the root.
fn prefix(path: impl std::fmt::Display) -> String {
    let p = path.to_string();
    if p.is_empty() { p } else { format!("{p}.") }
}

/// The outcome of every checkable object after an apply, as Terraform
/// records it in the state's `check_results`: each resource with
/// preconditions or postconditions (one object per instance), each output
/// with preconditions (one per module instance) and each `check` block
/// (one per module instance). The rules are evaluated again with the final
/// values, which is what the apply's own evaluations saw last. None when
/// the configuration has nothing to check, as Terraform writes null then.
pub(in crate::run) fn check_results(ctx: &RunCtx<'_>) -> Option<Vec<CheckResult>> {
    let mut out = Vec::new();
    for node in ctx.config.modules() {
        for (r, block) in &node.module.resources {
            let lc = &block.lifecycle;
            if lc.preconditions.is_empty() && lc.postconditions.is_empty() {
                continue;
            }
            let mut objects = Vec::new();
            for inst in ctx.values.instances_of(&node.path) {
                let resource = fleetform_shared::addr::AbsResource {
                    module: inst.clone(),
                    resource: r.clone(),
                };
                let Some(values) = ctx.values.resource(&resource) else {
                    continue;
                };
                for (key, object) in &values.instances {
                    if object.is_null() {
                        continue;
                    }
                    let addr = resource.instance(key.clone());
                    let (status, diags) =
                        match in_instance_scope(ctx, &addr, block, |s| preconditions(block, s)) {
                            Ok((RuleStatus::Passed, _)) if !lc.postconditions.is_empty() => {
                                in_instance_scope(ctx, &addr, block, |scope| {
                                    let with_self =
                                        Overlay::with_self(scope, object.clone(), Marks::none());
                                    resource_rules(
                                        block,
                                        &lc.postconditions,
                                        &with_self,
                                        RuleKind::ResourcePostcondition,
                                    )
                                })
                                .unwrap_or_else(|d| (RuleStatus::Failed, d))
                            }
                            Ok(pre) => pre,
                            Err(d) => (RuleStatus::Failed, d),
                        };
                    let (status, failure_messages) = check_status(status, &diags);
                    objects.push(CheckedObject {
                        object_addr: addr.to_string(),
                        status,
                        failure_messages,
                    });
                }
            }
            out.push(CheckResult {
                object_kind: "resource".into(),
                config_addr: format!("{}{r}", prefix(&node.path)),
                status: CheckStatus::aggregate(objects.iter().map(|o| o.status)),
                objects,
            });
        }
        for output in node.module.outputs.values() {
            if output.preconditions.is_empty() {
                continue;
            }
            let mut objects = Vec::new();
            for inst in ctx.values.instances_of(&node.path) {
                let scope = EvalScope::in_module(&ctx.values, &inst, &node.dir, ctx.workspace());
                let (status, diags) = output_rules(output, &scope);
                let (status, failure_messages) = check_status(status, &diags);
                objects.push(CheckedObject {
                    object_addr: format!("{}output.{}", prefix(&inst), output.name),
                    status,
                    failure_messages,
                });
            }
            out.push(CheckResult {
                object_kind: "output".into(),
                config_addr: format!("{}output.{}", prefix(&node.path), output.name),
                status: CheckStatus::aggregate(objects.iter().map(|o| o.status)),
                objects,
            });
        }
        for check in node.module.checks.values() {
            let mut objects = Vec::new();
            for inst in ctx.values.instances_of(&node.path) {
                let scope = EvalScope::in_module(&ctx.values, &inst, &node.dir, ctx.workspace());
                let (status, diags) = check_rules(&check.asserts, &scope, RuleKind::CheckAssertion);
                let (status, failure_messages) = check_status(status, &diags);
                objects.push(CheckedObject {
                    object_addr: format!("{}check.{}", prefix(&inst), check.name),
                    status,
                    failure_messages,
                });
            }
            out.push(CheckResult {
                object_kind: "check".into(),
                config_addr: format!("{}check.{}", prefix(&node.path), check.name),
                status: CheckStatus::aggregate(objects.iter().map(|o| o.status)),
                objects,
            });
        }
    }
    (!out.is_empty()).then_some(out)
}
