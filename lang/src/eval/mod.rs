//! Expression evaluation with unknown values: our expression AST, the scope
//! the caller provides, references, type conversion and the function library.
//!
//! Values flow through as [`Value`]; anything that depends on an unknown is
//! unknown, except where Terraform knows better (a conditional with a known
//! condition, `length` of a known list with unknown elements). Sensitivity
//! flows beside them as [`Marks`] (see [`fleetform_shared::marks`] for why they are not part
//! of the value): [`evaluate_marked`] returns both.

mod call;
mod convert;
mod env;
mod evaluate;
mod expr;
mod functions;
mod lower;
mod ops;
mod overlay;
mod provider_call;
pub(crate) mod references;
mod typeexpr;
mod vars;

pub use call::derives_from_ephemeral;
pub use convert::convert;
pub use env::{
    DiskFiles, EvalEnv, FLEET_FILES_NOTE, FileSystem, MapFiles, NoFiles, normalize_path,
};
pub use expr::{BinaryOp, Expr, ExprKind, ForExpr, TemplatePart, TraversalStep, UnaryOp};
pub use fleetform_shared::marks::{self, Marks};
pub use functions::{
    exists as function_exists, metadata_json as function_metadata_json, now_rfc3339,
    parse_go_duration, parse_rfc3339,
};
pub use lower::{Lowerer, parse_expression, syntax_error};
pub use overlay::{Iteration, Overlay};
pub use provider_call::{
    ProviderFunctions, name_range as function_name_range, provider_function_name,
    unknown_provider_function,
};
pub use references::{InstanceReference, Reference, ReferencePath, reference_of};
pub use typeexpr::{TypeDefaults, type_constraint, type_constraint_with_defaults};
pub use vars::{parse_var_assignment, parse_var_value};

use fleetform_shared::addr::Resource;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

/// What expressions can refer to; the caller (the coordinator's graph walk)
/// implements it.
pub trait Scope {
    /// `var.NAME`; None → "Reference to undeclared input variable".
    fn variable(&self, name: &str) -> Option<Value>;
    /// `local.NAME`; None → "Reference to undeclared local value".
    fn local(&self, name: &str) -> Option<Value>;
    /// `local.NAME` without copying it, for traversals into it (see
    /// `evaluate/paths.rs`); None → the evaluator copies it through
    /// [`Scope::local`].
    fn local_ref(&self, _name: &str) -> Option<&Value> {
        None
    }
    /// `var.NAME` without copying it; None → [`Scope::variable`].
    fn variable_ref(&self, _name: &str) -> Option<&Value> {
        None
    }
    /// The whole value of a resource: for no count/for_each the object; with
    /// count a List of objects; with for_each a Map. None → "Reference to
    /// undeclared resource". Value::unknown() allowed (e.g. count not yet known).
    fn resource(&self, addr: &Resource) -> Option<Value>;
    /// `module.NAME`: the outputs of the call's instances (an object; a
    /// list or map of objects with count / for_each; unknown while its
    /// expansion is). None → "Reference to undeclared module".
    fn module_call(&self, _name: &str) -> Option<Value> {
        None
    }
    /// `count.index`; None outside a counted resource → error.
    fn count_index(&self) -> Option<Value>;
    /// (`each.key`, `each.value`); None outside a `for_each` resource → error.
    fn each(&self) -> Option<(Value, Value)>;
    /// `path.module`, `path.root`, `path.cwd`.
    fn path(&self, _name: &str) -> Option<Value> {
        None
    }
    /// `terraform.workspace`.
    fn workspace(&self) -> Option<Value> {
        None
    }
    /// The sensitive parts of what `reference` evaluates to (a variable,
    /// local, resource or `each.value`); nothing by default. For a resource
    /// the marks are those of its whole value (paths start with the
    /// instance index or key when it has `count` / `for_each`).
    fn marks(&self, _reference: &Reference) -> Marks {
        Marks::none()
    }
    /// Whether `reference` names an ephemeral value (an ephemeral variable,
    /// a local derived from one, a child module's ephemeral output), which
    /// `ephemeralasnull` turns into null; none by default.
    fn is_ephemeral(&self, _reference: &Reference) -> bool {
        false
    }
    /// Files, the phase and the clock, for functions; by default no files,
    /// planning.
    fn env(&self) -> &EvalEnv {
        &env::DEFAULT_ENV
    }
    /// The provider-defined functions (`provider::LOCAL::NAME`) the module
    /// being evaluated can call; None: it can call none.
    fn provider_functions(&self) -> Option<&dyn ProviderFunctions> {
        None
    }
    /// `self`: the object a postcondition or a provisioner is about; None
    /// where `self` means nothing ("Invalid \"self\" reference").
    fn self_value(&self) -> Option<Value> {
        None
    }
    /// The sensitive parts of [`Scope::self_value`].
    fn self_marks(&self) -> Marks {
        Marks::none()
    }
}

/// Evaluates an expression; problems are diagnostics at the expression's range.
pub fn evaluate(expr: &Expr, scope: &dyn Scope) -> Result<Value, Diagnostics> {
    evaluate_marked(expr, scope).map(|(v, _)| v)
}

/// Evaluates an expression to its value and the sensitive parts of it.
pub fn evaluate_marked(expr: &Expr, scope: &dyn Scope) -> Result<(Value, Marks), Diagnostics> {
    evaluate::Evaluator::new(scope).eval(expr)
}

/// A scope made of plain maps, for tests and simple callers.
#[derive(Clone, Debug, Default)]
pub struct MapScope {
    pub variables: BTreeMap<String, Value>,
    pub locals: BTreeMap<String, Value>,
    pub resources: BTreeMap<Resource, Value>,
    pub module_calls: BTreeMap<String, Value>,
    pub count_index: Option<Value>,
    pub each: Option<(Value, Value)>,
    pub paths: BTreeMap<String, Value>,
    pub workspace: Option<Value>,
    pub marks: BTreeMap<Reference, Marks>,
    /// The references [`Scope::is_ephemeral`] answers true for.
    pub ephemeral: std::collections::BTreeSet<Reference>,
    pub env: EvalEnv,
}

impl MapScope {
    pub fn new() -> MapScope {
        MapScope::default()
    }

    pub fn with_variable(mut self, name: &str, value: Value) -> MapScope {
        self.variables.insert(name.to_string(), value);
        self
    }

    pub fn with_local(mut self, name: &str, value: Value) -> MapScope {
        self.locals.insert(name.to_string(), value);
        self
    }

    pub fn with_resource(mut self, addr: Resource, value: Value) -> MapScope {
        self.resources.insert(addr, value);
        self
    }

    pub fn with_marks(mut self, reference: Reference, marks: Marks) -> MapScope {
        self.marks.insert(reference, marks);
        self
    }
}

impl Scope for MapScope {
    fn variable(&self, name: &str) -> Option<Value> {
        self.variables.get(name).cloned()
    }

    fn local(&self, name: &str) -> Option<Value> {
        self.locals.get(name).cloned()
    }

    fn local_ref(&self, name: &str) -> Option<&Value> {
        self.locals.get(name)
    }

    fn variable_ref(&self, name: &str) -> Option<&Value> {
        self.variables.get(name)
    }

    fn resource(&self, addr: &Resource) -> Option<Value> {
        self.resources.get(addr).cloned()
    }

    fn module_call(&self, name: &str) -> Option<Value> {
        self.module_calls.get(name).cloned()
    }

    fn count_index(&self) -> Option<Value> {
        self.count_index.clone()
    }

    fn each(&self) -> Option<(Value, Value)> {
        self.each.clone()
    }

    fn path(&self, name: &str) -> Option<Value> {
        self.paths.get(name).cloned()
    }

    fn workspace(&self) -> Option<Value> {
        self.workspace.clone()
    }

    fn marks(&self, reference: &Reference) -> Marks {
        self.marks.get(reference).cloned().unwrap_or_default()
    }

    fn is_ephemeral(&self, reference: &Reference) -> bool {
        self.ephemeral.contains(reference)
    }

    fn env(&self) -> &EvalEnv {
        &self.env
    }
}

/// A scope where nothing is defined: constant evaluation (variable defaults).
#[derive(Clone, Copy, Debug, Default)]
pub struct EmptyScope;

impl Scope for EmptyScope {
    fn variable(&self, _: &str) -> Option<Value> {
        None
    }
    fn local(&self, _: &str) -> Option<Value> {
        None
    }
    fn resource(&self, _: &Resource) -> Option<Value> {
        None
    }
    fn count_index(&self) -> Option<Value> {
        None
    }
    fn each(&self) -> Option<(Value, Value)> {
        None
    }
}

#[cfg(test)]
mod differential_tests;
#[cfg(test)]
mod dynamic_type_tests;
#[cfg(test)]
mod ephemeral_tests;
#[cfg(test)]
mod forms_tests;
#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod sensitivity_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod typed_null_tests;
#[cfg(test)]
mod types_tests;

/// How Terraform names a type in messages ("list of string", "map of number").
pub fn friendly_type(t: &fleetform_shared::types::Type) -> String {
    convert::friendly(t)
}
