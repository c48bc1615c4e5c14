//! What of other resources one resource instance's configuration reads,
//! instance by instance where its expressions say which:
//! `sim_object.a[count.index]` in `sim_object.b[3]` reads `sim_object.a[3]`
//! once the index is evaluated in the instance's scope. References are
//! followed through local values, a child module's input variables (to the
//! call's argument, evaluated with the module instance's own key) and
//! module outputs (to the output's expression in that module instance),
//! so what the answer names is everything the instance reads. The apply
//! walk uses it to isolate failures: when `sim_object.a[7]` fails,
//! `sim_object.b[3]` still applies (see `apply::walk`,
//! docs/planning/failures.md).
//!
//! A reference without an index, a splat, a `for` over a resource, an
//! index not known while planning, `depends_on`, `count`/`for_each`,
//! `replace_triggered_by`, provisioners and `dynamic` blocks read the
//! resource as a whole. Where a reference cannot be followed (a cycle, a
//! module or value the run does not know, a provider configuration that
//! reads resources) there is no answer, and the instance keeps Terraform's
//! rule: any failure before it holds it back.

use crate::run::ctx::RunCtx;
use crate::run::eval::scope::EvalScope;
use fleetform_lang::config::ResourceBlock;
use fleetform_lang::eval::{Expr, InstanceReference, Reference, evaluate};
use fleetform_shared::addr::{AbsResource, InstanceKey, ModuleInstance};
use fleetform_shared::plan::InstanceRefs;
use fleetform_shared::value::{PathStep, Value};
use std::collections::HashMap;

/// A named value of a module instance whose reads are remembered.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Named {
    Local(String),
    Variable(String),
    Output(String),
}

/// What the named values of a run read, found once each (`None` while
/// being found: a cycle, which has no answer).
#[derive(Default)]
pub(crate) struct Memo {
    reads: HashMap<(ModuleInstance, Named), Option<Option<InstanceRefs>>>,
}

/// What `block`'s instance in `module` (its key and `each` in `scope`)
/// reads; None when not everything could be followed.
pub(crate) fn narrowed(
    ctx: &RunCtx<'_>,
    memo: &mut Memo,
    block: &ResourceBlock,
    module: &ModuleInstance,
    scope: &EvalScope<'_>,
) -> Option<InstanceRefs> {
    if !provider_reads_nothing(ctx, block, module) {
        return None;
    }
    let mut refs: Vec<InstanceReference> = block.body.instance_references();
    for rule in block
        .lifecycle
        .preconditions
        .iter()
        .chain(&block.lifecycle.postconditions)
    {
        refs.extend(rule.condition.instance_references());
        refs.extend(rule.error_message.instance_references());
    }
    // Read as a whole: evaluated without the instance's key, or ordering
    // only.
    let whole_refs = block
        .count
        .iter()
        .chain(&block.for_each)
        .chain(&block.lifecycle.replace_triggered_by)
        .flat_map(Expr::references)
        .chain(block.depends_on.iter().cloned())
        .chain(block.provisioners.iter().flat_map(|p| p.references()));
    refs.extend(whole_refs.map(|(r, _)| InstanceReference::whole(r)));
    let mut out = InstanceRefs::default();
    for r in &refs {
        reads_of(ctx, memo, r, module, scope, &mut out)?;
    }
    Some(out)
}

/// Adds what reference `r`, made in `module` with `scope`, reads.
fn reads_of(
    ctx: &RunCtx<'_>,
    memo: &mut Memo,
    r: &InstanceReference,
    module: &ModuleInstance,
    scope: &EvalScope<'_>,
    out: &mut InstanceRefs,
) -> Option<()> {
    let key = r.index.as_ref().map(|i| key_of(i, scope));
    match &r.reference {
        Reference::Resource(resource) => {
            let abs = AbsResource {
                module: module.clone(),
                resource: resource.clone(),
            };
            match key {
                // Indexed by a known key; or a resource without count or
                // for_each read by its name.
                Some(Some(k)) => {
                    out.instances.entry(abs).or_default().insert(k);
                }
                None if is_single(ctx, &abs) => {
                    out.instances
                        .entry(abs)
                        .or_default()
                        .insert(InstanceKey::None);
                }
                _ => {
                    out.whole.insert(abs);
                }
            }
        }
        Reference::Local(name) => merge(out, named(ctx, memo, module, Named::Local(name.clone()))?),
        Reference::Variable(name) if !module.is_root() => merge(
            out,
            named(ctx, memo, module, Named::Variable(name.clone()))?,
        ),
        Reference::ModuleOutput(call, output) => {
            let child = module.child(call, InstanceKey::None);
            merge(
                out,
                named(ctx, memo, &child, Named::Output(output.clone()))?,
            )
        }
        Reference::ModuleCall(call) => {
            let instances: Vec<ModuleInstance> = match key {
                Some(Some(k)) => vec![module.child(call, k)],
                Some(None) => return None,
                None => {
                    let path = module.module().child(call);
                    ctx.values
                        .instances_of(&path)
                        .into_iter()
                        .filter(|i| i.parent().is_some_and(|(p, _, _)| &p == module))
                        .collect()
                }
            };
            // The output read first when the traversal names one; else all.
            let outputs: Vec<String> = match (&r.index, r.path.first()) {
                (Some(_), Some(PathStep::Key(o))) => vec![o.clone()],
                _ => {
                    let node = ctx.module_of(instances.first()?)?;
                    node.module.outputs.keys().cloned().collect()
                }
            };
            for inst in instances {
                for o in &outputs {
                    merge(out, named(ctx, memo, &inst, Named::Output(o.clone()))?);
                }
            }
        }
        // Input variables of the root, `count`, `each`, `path`,
        // `terraform`: no resource behind them.
        _ => {}
    }
    Some(())
}

/// What a named value of module instance `module` reads, found once.
fn named(
    ctx: &RunCtx<'_>,
    memo: &mut Memo,
    module: &ModuleInstance,
    name: Named,
) -> Option<InstanceRefs> {
    let slot = (module.clone(), name);
    match memo.reads.get(&slot) {
        Some(Some(found)) => return found.clone(),
        // Being found: a cycle.
        Some(None) => return None,
        None => {}
    }
    memo.reads.insert(slot.clone(), None);
    let found = find_named(ctx, memo, module, &slot.1);
    memo.reads.insert(slot, Some(found.clone()));
    found
}

fn find_named(
    ctx: &RunCtx<'_>,
    memo: &mut Memo,
    module: &ModuleInstance,
    name: &Named,
) -> Option<InstanceRefs> {
    let mut out = InstanceRefs::default();
    match name {
        Named::Local(n) => {
            let node = ctx.module_of(module)?;
            let expr = &node.module.locals.get(n)?.expr;
            let scope = EvalScope::in_module(&ctx.values, module, &node.dir, ctx.workspace());
            for r in expr.instance_references() {
                reads_of(ctx, memo, &r, module, &scope, &mut out)?;
            }
        }
        Named::Output(n) => {
            let node = ctx.module_of(module)?;
            let expr = &node.module.outputs.get(n)?.expr;
            let scope = EvalScope::in_module(&ctx.values, module, &node.dir, ctx.workspace());
            for r in expr.instance_references() {
                reads_of(ctx, memo, &r, module, &scope, &mut out)?;
            }
        }
        // The call's argument, evaluated in the calling module with this
        // instance's key and `each.value`; a default reads nothing.
        Named::Variable(n) => {
            let (parent, call, key) = module.parent()?;
            let parent_node = ctx.module_of(&parent)?;
            let Some(arg) = parent_node.module.module_calls.get(call)?.arguments.get(n) else {
                return Some(out);
            };
            let each = ctx
                .values
                .modules
                .get(module)
                .and_then(|v| v.each_value.as_ref());
            let scope = EvalScope {
                key,
                each_value: each.map(|(v, _)| v),
                each_marks: each.map(|(_, m)| m),
                ..EvalScope::in_module(&ctx.values, &parent, &parent_node.dir, ctx.workspace())
            };
            for r in arg.expr.instance_references() {
                reads_of(ctx, memo, &r, &parent, &scope, &mut out)?;
            }
        }
    }
    Some(out)
}

fn merge(out: &mut InstanceRefs, more: InstanceRefs) {
    for (r, keys) in more.instances {
        out.instances.entry(r).or_default().extend(keys);
    }
    out.whole.extend(more.whole);
}

/// Whether a resource has no `count` or `for_each`: its name alone reads
/// its one instance.
fn is_single(ctx: &RunCtx<'_>, r: &AbsResource) -> bool {
    ctx.module_of(&r.module)
        .and_then(|n| n.module.resources.get(&r.resource))
        .is_some_and(|b| b.count.is_none() && b.for_each.is_none())
}

/// Whether the provider configuration of `block` reads no resource, local
/// or module: what a provider configured from another resource's object
/// reads is not followed.
fn provider_reads_nothing(
    ctx: &RunCtx<'_>,
    block: &ResourceBlock,
    module: &ModuleInstance,
) -> bool {
    let config = fleetform_shared::addr::ConfigResource {
        module: module.module(),
        resource: block.addr.clone(),
    };
    let Some(p) = ctx.graph.resource_providers.get(&config) else {
        return true;
    };
    let Some(node) = ctx.config.module(&p.module) else {
        return true;
    };
    let key = match &p.alias {
        Some(a) => format!("{}.{a}", p.provider.type_name),
        None => p.provider.type_name.to_string(),
    };
    let Some(provider) = node.module.providers.get(&key) else {
        return true;
    };
    provider.body.references().iter().all(|(r, _)| match r {
        Reference::Variable(_) => p.module.is_root(),
        Reference::Path(_) | Reference::Workspace => true,
        _ => false,
    })
}

/// The instance key an index expression gives in the instance's scope,
/// when it is known.
fn key_of(index: &Expr, scope: &EvalScope<'_>) -> Option<InstanceKey> {
    match evaluate(index, scope).ok()? {
        Value::Number(n) => n.as_i64().map(InstanceKey::Int),
        Value::String(s) => Some(InstanceKey::Str(s.to_string())),
        _ => None,
    }
}
