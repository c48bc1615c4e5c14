//! `removed` blocks: which objects only in state are forgotten rather than
//! destroyed (`lifecycle { destroy = false }`), the check that what a block
//! names is really gone from the configuration, and the warning that lists
//! what a plan forgets.

use crate::run::ctx::RunCtx;
use fleetform_lang::config::{Removed, RemovedTarget};
use fleetform_shared::addr::{AbsResourceInstance, Module};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::plan::{Action, Plan, ResourceChange};
use fleetform_shared::state::StateDelta;

/// A removed block and what it names, resolved from its module to the root.
fn blocks<'c>(ctx: &'c RunCtx<'_>) -> impl Iterator<Item = (&'c Removed, RemovedTarget)> + 'c {
    ctx.config.modules().into_iter().flat_map(|node| {
        node.module.removed.iter().map(move |r| {
            let join = |m: &Module| Module(node.path.0.iter().chain(&m.0).cloned().collect());
            let target = match &r.from {
                RemovedTarget::Module(m) => RemovedTarget::Module(join(m)),
                RemovedTarget::Resource(cr) => {
                    let mut cr = cr.clone();
                    cr.module = join(&cr.module);
                    RemovedTarget::Resource(cr)
                }
            };
            (r, target)
        })
    })
}

/// "Removed resource still exists": a removed block must name something
/// no longer configured.
pub(in crate::run) fn validate(ctx: &RunCtx<'_>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for (r, target) in blocks(ctx) {
        let (still, what) = match &target {
            RemovedTarget::Resource(cr) => (
                ctx.config
                    .module(&cr.module)
                    .is_some_and(|n| n.module.resources.contains_key(&cr.resource)),
                "resource",
            ),
            RemovedTarget::Module(m) => (ctx.config.module(m).is_some(), "module"),
        };
        if still {
            diags.push(
                Diagnostic::error(
                    format!("Removed {what} still exists"),
                    format!("This statement declares that {target} was removed, but it is still declared in configuration."),
                )
                .at(r.decl_range.clone()),
            );
        }
    }
    diags
}

/// Whether the object at `addr` (only in state) is to be forgotten: the
/// most specific removed block naming it says `destroy = false`.
pub(in crate::run) fn forgets(ctx: &RunCtx<'_>, addr: &AbsResourceInstance) -> bool {
    let module = addr.module.module();
    let mut best: Option<(usize, bool)> = None;
    for (r, target) in blocks(ctx) {
        let depth = match &target {
            RemovedTarget::Resource(cr)
                if cr.module == module && cr.resource == addr.resource.resource =>
            {
                usize::MAX
            }
            RemovedTarget::Module(m) if m.contains(&module) => m.0.len(),
            _ => continue,
        };
        if best.is_none_or(|(d, _)| depth >= d) {
            best = Some((depth, r.destroy));
        }
    }
    best.is_some_and(|(_, destroy)| !destroy)
}

/// Terraform's warning listing the objects a plan forgets.
pub(in crate::run) fn forget_warning(changes: &[ResourceChange]) -> Option<Diagnostic> {
    let list: Vec<String> = changes
        .iter()
        .filter(|c| c.action == Action::Forget)
        .map(|c| match &c.deposed {
            Some(d) => format!(" - {} (deposed object {d})", c.addr),
            None => format!(" - {}", c.addr),
        })
        .collect();
    if list.is_empty() {
        return None;
    }
    Some(Diagnostic::warning(
        "Some objects will no longer be managed by fleetform",
        format!(
            "If you apply this plan, fleetform will discard its tracking information for the following objects, but it will not delete them:\n{}\n\nAfter applying this plan, fleetform will no longer manage these objects. You will need to import them into fleetform to manage them again.",
            list.join("\n")
        ),
    ))
}

/// The state changes that forget what the plan forgets, drop the data
/// sources it no longer declares and record the ones it read: no provider
/// is called, the objects simply leave the state.
pub(in crate::run) fn forget_deltas(plan: &Plan) -> Vec<StateDelta> {
    let data = plan.data_deltas();
    plan.changes
        .iter()
        .filter(|c| c.action == Action::Forget)
        .map(|c| match &c.deposed {
            Some(key) => StateDelta::SetDeposed {
                addr: c.addr.clone(),
                provider: c.provider.clone(),
                key: key.clone(),
                object: None,
            },
            None => StateDelta::SetCurrent {
                addr: c.addr.clone(),
                provider: c.provider.clone(),
                object: None,
            },
        })
        .chain(data)
        .collect()
}
