//! Imports while planning: targets from `import` blocks and the `import`
//! command, checked against the configuration, and where each id comes from.

use crate::run::ctx::RunCtx;
use crate::run::eval::scope::EvalScope;
use fleetform_lang::eval::evaluate;
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::value::Value;
use std::collections::HashMap;

/// Where an import's id comes from: an `import` block's expression, or the
/// `import` command.
#[derive(Clone)]
pub(in crate::run) enum ImportSource<'a> {
    Block(&'a fleetform_lang::eval::Expr),
    Given(String),
}

impl ImportSource<'_> {
    pub fn id(&self, scope: &EvalScope<'_>) -> Result<String, Diagnostics> {
        match self {
            ImportSource::Given(id) => Ok(id.clone()),
            ImportSource::Block(expr) => match evaluate(expr, scope)? {
                Value::String(s) if !s.is_empty() => Ok(s),
                other => Err(Diagnostic::error(
                    "Invalid import id argument",
                    format!("The import block \"id\" argument must be a non-empty string known while planning, not {}.", other.kind()),
                )
                .at(expr.range.clone())
                .into()),
            },
        }
    }
}
/// Import targets from `import` blocks and the `import` command, checked
/// against the configuration.
pub(in crate::run) fn import_targets<'a>(
    ctx: &RunCtx<'a>,
) -> Result<HashMap<AbsResourceInstance, ImportSource<'a>>, Diagnostics> {
    let module: &'a fleetform_lang::config::Module = ctx.module;
    let config = ctx.config;
    let mut out = HashMap::new();
    let mut diags = Diagnostics::new();
    let mut add = |addr: AbsResourceInstance,
                   source: ImportSource<'a>,
                   range: Option<fleetform_shared::diag::SourceRange>,
                   diags: &mut Diagnostics| {
        let configured = config
            .module(&addr.module.module())
            .is_some_and(|n| n.module.resources.contains_key(&addr.resource.resource));
        if !configured || addr.resource.resource.mode != fleetform_shared::ResourceMode::Managed {
            diags.push(
                Diagnostic::error(
                    "Configuration for import target does not exist",
                    format!("The configuration for the given import target {addr} does not exist. All target instances must have an associated configuration to be imported."),
                )
                .at_opt(range),
            );
            return;
        }
        if out.insert(addr.clone(), source).is_some() {
            diags.push(
                Diagnostic::error(
                    "Duplicate import configuration",
                    format!("{addr} is imported more than once."),
                )
                .at_opt(range),
            );
        }
    };
    for i in &module.imports {
        add(
            i.to.clone(),
            ImportSource::Block(&i.id),
            Some(i.to_range.clone()),
            &mut diags,
        );
    }
    for (to, id) in &ctx.request.options.imports {
        let a = match to.parse::<AbsResourceInstance>() {
            Ok(a) => a,
            Err(e) => {
                diags.push(Diagnostic::error("Invalid import address", format!("{e}")));
                continue;
            }
        };
        if ctx.prior.current(&a).is_some() {
            diags.push(Diagnostic::error(
                "Resource already managed by fleetform",
                format!("fleetform is already managing a remote object for {a}. To import to this address you must first remove the existing object from the state."),
            ));
            continue;
        }
        add(a, ImportSource::Given(id.clone()), None, &mut diags);
    }
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(out)
    }
}
