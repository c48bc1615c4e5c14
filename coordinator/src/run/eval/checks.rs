//! `check` blocks: their assertions are evaluated as the last step of a
//! plan and of an apply, in every instance of their module, and only ever
//! warn ("Check block assertion failed"). An assertion still unknown while
//! planning says nothing until apply. A check's scoped data source is
//! planned and read like any data source; its problems are warnings too.

use crate::run::ctx::RunCtx;
use crate::run::eval::scope::EvalScope;
use fleetform_lang::rules::conditions::{RuleKind, check_rules};
use fleetform_shared::diag::{Diagnostic, Diagnostics};

/// Every check's assertions, with the values known now.
pub(in crate::run) fn run_checks(ctx: &RunCtx<'_>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for node in ctx.config.modules() {
        // In the order they are written, as Terraform reports them.
        let mut checks: Vec<_> = node.module.checks.values().collect();
        checks.sort_by(|a, b| {
            (&a.decl_range.filename, a.decl_range.start.byte)
                .cmp(&(&b.decl_range.filename, b.decl_range.start.byte))
        });
        for check in checks {
            let context = format!("check {:?}", check.name);
            for inst in ctx.values.instances_of(&node.path) {
                let scope = EvalScope::in_module(&ctx.values, &inst, &node.dir, ctx.workspace());
                let (_, d) = check_rules(&check.asserts, &scope, RuleKind::CheckAssertion);
                diags.extend(
                    d.into_iter()
                        .map(|x: Diagnostic| match x.context {
                            Some(_) => x,
                            None => x.in_context(context.clone()),
                        })
                        .collect(),
                );
            }
        }
    }
    diags
}
