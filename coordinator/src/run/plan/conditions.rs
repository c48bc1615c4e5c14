//! Conditions as the plan walk checks them: a check-scoped data source's
//! problems as warnings, and postconditions against a planned object (the
//! rules themselves are in [`crate::run::eval::conditions`]).

use crate::run::eval::conditions::{block_of, resource_rules};
use crate::run::eval::scope::EvalScope;
use crate::run::plan::walk::Walker;
use fleetform_lang::eval::{Marks, Overlay};
use fleetform_lang::rules::conditions::RuleKind;
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::diag::Severity;
use fleetform_shared::value::Value;

impl Walker<'_, '_> {
    /// A check-scoped data source's problems are warnings: those recorded
    /// since `first` for `addr`.
    pub(in crate::run) fn check_scoped_warnings(
        &mut self,
        addr: &AbsResourceInstance,
        first: usize,
    ) {
        if block_of(self.ctx, addr).is_some_and(|b| b.check.is_some()) {
            for d in &mut self.diags.0[first..] {
                d.severity = Severity::Warning;
            }
        }
    }

    /// An instance's postconditions against its planned new object; unknown
    /// ones are checked again after apply.
    pub(in crate::run) fn postconditions_planned(
        &mut self,
        addr: &AbsResourceInstance,
        planned: &Value,
    ) {
        let ctx = &*self.ctx;
        let (Some(block), Some(node)) = (block_of(ctx, addr), ctx.module_of(&addr.module)) else {
            return;
        };
        if block.lifecycle.postconditions.is_empty() || planned.is_null() {
            return;
        }
        let each = self.condition_each.get(addr);
        let scope = EvalScope {
            key: addr.key(),
            each_value: each,
            ..EvalScope::in_module(&ctx.values, &addr.module, &node.dir, ctx.workspace())
        };
        // The object's sensitive parts are not tracked here.
        let with_self = Overlay::with_self(&scope, planned.clone(), Marks::none());
        let (_, d) = resource_rules(
            block,
            &block.lifecycle.postconditions,
            &with_self,
            RuleKind::ResourcePostcondition,
        );
        self.diags.extend(d);
    }
}
