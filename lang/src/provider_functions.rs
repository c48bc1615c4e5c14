//! Which provider functions a module can call: `provider::LOCAL::NAME`
//! resolves LOCAL through the module's `required_providers` block (as in
//! Terraform, a provider the module does not declare there offers it no
//! functions, even `terraform`). The built-in provider
//! `terraform.io/builtin/terraform`'s functions are computed here
//! ([`terraform`]); every other provider's are the caller's
//! ([`PluginFunctions`]): the coordinator asks a worker, `validate` only
//! needs the signatures. [`calls`] finds every call in a module, for
//! `validate` and for fetching the schemas of the providers called.

pub mod terraform;

use crate::config::{Body, CheckRule, Module};
use crate::eval::{
    EvalEnv, Expr, ExprKind, ProviderFunctions, function_name_range, provider_function_name,
    unknown_provider_function,
};
use fleetform_shared::ProviderAddr;
use fleetform_shared::diag::{Diagnostics, SourceRange};
use fleetform_shared::function::{FunctionError, FunctionSignature};
use fleetform_shared::value::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The functions of providers that run as plugins, by provider address.
pub trait PluginFunctions: Send + Sync {
    fn signature(&self, provider: &ProviderAddr, name: &str) -> Option<FunctionSignature>;
    fn call(
        &self,
        provider: &ProviderAddr,
        name: &str,
        args: Vec<Value>,
    ) -> Result<Value, FunctionError>;
}

/// No plugin offers any function.
pub struct NoPluginFunctions;

impl PluginFunctions for NoPluginFunctions {
    fn signature(&self, _: &ProviderAddr, _: &str) -> Option<FunctionSignature> {
        None
    }
    fn call(&self, _: &ProviderAddr, name: &str, _: Vec<Value>) -> Result<Value, FunctionError> {
        Err(FunctionError::call(format!("no provider offers {name:?}")))
    }
}

/// Plugin providers' functions where no provider can be reached (the
/// console; root variables' validation, checked before a run starts): any
/// call of one, with any arguments, fails at the call with `why`, rather
/// than claiming the function does not exist.
pub struct PluginsUnreachable(pub &'static str);

impl PluginFunctions for PluginsUnreachable {
    fn signature(&self, _: &ProviderAddr, _: &str) -> Option<FunctionSignature> {
        let any = fleetform_shared::function::FunctionParameter {
            allow_null: true,
            allow_unknown: true,
            ..fleetform_shared::function::FunctionParameter::new(
                "args",
                fleetform_shared::types::Type::Dynamic,
            )
        };
        Some(FunctionSignature {
            parameters: Vec::new(),
            variadic: Some(any),
            return_type: fleetform_shared::types::Type::Dynamic,
            summary: String::new(),
            description: String::new(),
            deprecation: String::new(),
        })
    }

    fn call(
        &self,
        provider: &ProviderAddr,
        _: &str,
        _: Vec<Value>,
    ) -> Result<Value, FunctionError> {
        Err(FunctionError::call(format!(
            "the functions of {provider} cannot be called here: {}",
            self.0
        )))
    }
}

/// Functions known by their signatures only (from providers' schemas), for
/// checks that call nothing: `validate`.
pub struct Signatures(pub BTreeMap<ProviderAddr, BTreeMap<String, FunctionSignature>>);

impl PluginFunctions for Signatures {
    fn signature(&self, provider: &ProviderAddr, name: &str) -> Option<FunctionSignature> {
        self.0.get(provider)?.get(name).cloned()
    }
    /// Not computed: unknown, like every reference while validating.
    fn call(&self, _: &ProviderAddr, _: &str, _: Vec<Value>) -> Result<Value, FunctionError> {
        Ok(Value::unknown())
    }
}

/// The functions one module can call.
#[derive(Clone)]
pub struct ModuleFunctions {
    /// Local name → provider, from `required_providers`.
    providers: BTreeMap<String, ProviderAddr>,
    plugins: Arc<dyn PluginFunctions>,
}

impl ModuleFunctions {
    pub fn new(module: &Module, plugins: Arc<dyn PluginFunctions>) -> ModuleFunctions {
        ModuleFunctions {
            providers: module
                .required_providers
                .iter()
                .map(|(local, r)| (local.clone(), r.source.clone()))
                .collect(),
            plugins,
        }
    }

    /// The provider local name `local` means in this module.
    pub fn provider(&self, local: &str) -> Option<&ProviderAddr> {
        self.providers.get(local)
    }
}

fn is_terraform(p: &ProviderAddr) -> bool {
    *p == ProviderAddr::builtin("terraform")
}

impl ProviderFunctions for ModuleFunctions {
    fn declares(&self, local: &str) -> bool {
        self.providers.contains_key(local)
    }

    fn signature(&self, local: &str, name: &str) -> Option<FunctionSignature> {
        let p = self.provider(local)?;
        if is_terraform(p) {
            terraform::signature(name)
        } else {
            self.plugins.signature(p, name)
        }
    }

    fn call(
        &self,
        local: &str,
        name: &str,
        args: Vec<Value>,
        _env: &EvalEnv,
    ) -> Result<Value, FunctionError> {
        let Some(p) = self.provider(local) else {
            return Err(FunctionError::call(format!(
                "no provider is named {local:?} here"
            )));
        };
        if is_terraform(p) {
            terraform::call(name, &args)
        } else {
            self.plugins.call(p, name, args)
        }
    }
}

/// One `provider::LOCAL::NAME(...)` call in a module's source.
#[derive(Clone, Debug, PartialEq)]
pub struct CallSite {
    pub local: String,
    pub name: String,
    /// The whole call expression.
    pub range: SourceRange,
}

impl CallSite {
    fn full(&self) -> String {
        format!("provider::{}::{}", self.local, self.name)
    }
}

/// Every provider function call in `module`'s expressions.
pub fn calls(module: &Module) -> Vec<CallSite> {
    let mut out = Vec::new();
    let mut visit = |e: &Expr| expr_calls(e, &mut out);
    for r in module.resources.values() {
        r.count.iter().chain(&r.for_each).for_each(&mut visit);
        body_exprs(&r.body, &mut visit);
        rules(&r.lifecycle.preconditions, &mut visit);
        rules(&r.lifecycle.postconditions, &mut visit);
        for p in &r.provisioners {
            p.arguments().for_each(|(_, e)| visit(e));
        }
    }
    for l in module.locals.values() {
        visit(&l.expr);
    }
    for o in module.outputs.values() {
        visit(&o.expr);
        rules(&o.preconditions, &mut visit);
    }
    for v in module.variables.values() {
        rules(&v.validations, &mut visit);
    }
    for c in module.module_calls.values() {
        c.count.iter().chain(&c.for_each).for_each(&mut visit);
        c.arguments.values().for_each(|a| visit(&a.expr));
    }
    for p in module.providers.values() {
        body_exprs(&p.body, &mut visit);
    }
    for c in module.checks.values() {
        rules(&c.asserts, &mut visit);
    }
    out
}

fn rules(rules: &[CheckRule], visit: &mut impl FnMut(&Expr)) {
    for r in rules {
        visit(&r.condition);
        visit(&r.error_message);
    }
}

fn body_exprs(body: &Body, visit: &mut impl FnMut(&Expr)) {
    for a in body.attributes.values() {
        visit(&a.expr);
    }
    for b in &body.blocks {
        body_exprs(&b.body, visit);
    }
    for e in body.json_expressions() {
        visit(&e);
    }
}

fn expr_calls(e: &Expr, out: &mut Vec<CallSite>) {
    if let ExprKind::Call { name, .. } = &e.kind
        && let Some((local, f)) = provider_function_name(name)
    {
        out.push(CallSite {
            local: local.to_string(),
            name: f.to_string(),
            range: e.range.clone(),
        });
    }
    e.for_each_child(&mut |c| expr_calls(c, out));
}

/// `validate`'s check: every call names a function its provider has, the
/// provider declared in the module's `required_providers`.
pub fn check_calls(module: &Module, functions: &ModuleFunctions) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for c in calls(module) {
        if functions.signature(&c.local, &c.name).is_none() {
            let full = c.full();
            diags.push(unknown_provider_function(
                &full,
                &c.local,
                &c.name,
                functions.declares(&c.local),
                function_name_range(&c.range, &full),
            ));
        }
    }
    diags
}

#[cfg(test)]
mod tests;
