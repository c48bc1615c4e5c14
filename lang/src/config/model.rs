//! The validated configuration model of one module: what each top-level
//! block means, with expressions still unevaluated.

use super::body::{Attribute, Body};
use crate::eval::{Expr, Reference, TypeDefaults};
use fleetform_shared::addr::{
    AbsResourceInstance, LocalProviderConfig, ProviderAddr, Resource, Target,
};
use fleetform_shared::diag::SourceRange;
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};
use std::collections::BTreeMap;

/// One module's configuration (today: the root module).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    /// Every `required_version` constraint given (one per `terraform` block).
    pub required_version: Vec<String>,
    /// Provider local name → requirement.
    pub required_providers: BTreeMap<String, ProviderRequirement>,
    /// Provider configurations by `name` or `name.alias`.
    pub providers: BTreeMap<String, ProviderBlock>,
    pub variables: BTreeMap<String, Variable>,
    pub locals: BTreeMap<String, Local>,
    pub resources: BTreeMap<Resource, ResourceBlock>,
    pub outputs: BTreeMap<String, Output>,
    pub moved: Vec<Moved>,
    /// `import { to, id }` blocks.
    pub imports: Vec<Import>,
    pub module_calls: BTreeMap<String, ModuleCall>,
    /// `check` blocks by name (their scoped data sources are in `resources`).
    pub checks: BTreeMap<String, Check>,
    /// `removed` blocks.
    pub removed: Vec<Removed>,
}

impl Module {
    /// Adds a resource or data source, refusing a second one of the same address.
    pub(super) fn add_resource(
        &mut self,
        r: ResourceBlock,
        diags: &mut fleetform_shared::diag::Diagnostics,
    ) {
        let Some(prev) = self.resources.get(&r.addr) else {
            self.resources.insert(r.addr.clone(), r);
            return;
        };
        let kind = kind_word(r.addr.mode);
        let detail = format!(
            "A {kind} block named {:?} {:?} was already declared at {}. Resource names must be unique per type in each module.",
            r.addr.type_name,
            r.addr.name,
            super::body::at(&prev.decl_range)
        );
        diags.push(
            fleetform_shared::diag::Diagnostic::error(
                format!("Duplicate {kind} configuration"),
                detail,
            )
            .at(r.decl_range.clone()),
        );
    }

    /// The provider source address for a local name: from
    /// `required_providers`, else implied (`hashicorp/<name>`, or the
    /// built-in `terraform.io/builtin/terraform` for `terraform`).
    pub fn provider_addr(&self, local_name: &str) -> ProviderAddr {
        let base = local_name.split('.').next().unwrap_or(local_name);
        self.required_providers
            .get(base)
            .map(|r| r.source.clone())
            .unwrap_or_else(|| ProviderAddr::implied(base))
    }

    /// Every provider local name the module needs (configured, required or
    /// used by a resource), without aliases.
    pub fn provider_local_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.required_providers.keys().cloned().collect();
        names.extend(self.providers.values().map(|p| p.name.clone()));
        names.extend(
            self.resources
                .values()
                .map(|r| r.provider.split('.').next().unwrap_or_default().to_string()),
        );
        names.sort();
        names.dedup();
        names
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProviderRequirement {
    pub source: ProviderAddr,
    pub version: Option<String>,
    pub range: SourceRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProviderBlock {
    pub name: String,
    pub alias: Option<String>,
    /// The provider's own arguments (`alias` and `version` removed).
    pub body: Body,
    pub range: SourceRange,
    pub decl_range: SourceRange,
}

impl ProviderBlock {
    /// `name` or `name.alias`: the key in [`Module::providers`].
    pub fn key(&self) -> String {
        match &self.alias {
            Some(a) => format!("{}.{a}", self.name),
            None => self.name.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub ty: Option<Type>,
    /// The defaults of `optional(type, default)` attributes in `ty`: applied
    /// to a value before it is converted to `ty` ([`Variable::convert`]).
    pub type_defaults: Option<TypeDefaults>,
    /// Already converted to `ty`.
    pub default: Option<Value>,
    pub description: Option<String>,
    pub sensitive: bool,
    /// Whether null is an acceptable value (Terraform's default: true).
    pub nullable: bool,
    /// `ephemeral = true`: the value is never written to plans or state,
    /// so a root variable is given again when a saved plan is applied.
    pub ephemeral: bool,
    pub validations: Vec<CheckRule>,
    pub range: SourceRange,
    pub decl_range: SourceRange,
}

impl Variable {
    /// A given value as the variable holds it: optional attributes' defaults
    /// filled in, then converted to the type constraint (cty's message on
    /// failure). Without a type constraint the value is kept as it is.
    pub fn convert(&self, value: Value) -> Result<Value, String> {
        let value = match &self.type_defaults {
            Some(d) => d.apply(value),
            None => value,
        };
        match &self.ty {
            Some(t) => crate::eval::convert(value, t),
            None => Ok(value),
        }
    }
}

/// A `validation`, `precondition` or `postcondition` block.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckRule {
    pub condition: Expr,
    pub error_message: Expr,
    pub range: SourceRange,
    /// The block's type name (`validation`): where Terraform says a rule is.
    pub decl_range: SourceRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    pub name: String,
    pub expr: Expr,
    pub range: SourceRange,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ResourceBlock {
    pub addr: Resource,
    /// Local provider name, `name` or `name.alias`.
    pub provider: String,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub depends_on: Vec<(Reference, SourceRange)>,
    pub lifecycle: Lifecycle,
    /// `provisioner "local-exec"` blocks, in order (managed resources only).
    pub provisioners: Vec<Provisioner>,
    /// Everything else: the arguments the provider's schema decodes.
    pub body: Body,
    pub range: SourceRange,
    pub decl_range: SourceRange,
    /// For a data source scoped in a `check` block: the check's name. Its
    /// problems are warnings, never errors.
    pub check: Option<String>,
}

impl ResourceBlock {
    /// `resource "type" "name"` / `data "type" "name"`, for diagnostic context.
    pub fn header(&self) -> String {
        let kind = kind_word(self.addr.mode);
        format!("{kind} {:?} {:?}", self.addr.type_name, self.addr.name)
    }
}

/// The block type that declares a resource of `mode`.
pub fn kind_word(mode: fleetform_shared::addr::ResourceMode) -> &'static str {
    match mode {
        fleetform_shared::addr::ResourceMode::Managed => "resource",
        fleetform_shared::addr::ResourceMode::Data => "data",
        fleetform_shared::addr::ResourceMode::Ephemeral => "ephemeral",
    }
}

/// When a provisioner runs: after its instance's object is created, or
/// before it is destroyed (`when = destroy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProvisionerWhen {
    Create,
    Destroy,
}

/// What a failing provisioner does to the operation (`on_failure`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProvisionerOnFailure {
    /// The operation fails: a new object is tainted, a delete does not happen.
    Fail,
    /// The failure is ignored.
    Continue,
}

/// A `provisioner "local-exec"` block: its arguments as expressions, which
/// are evaluated while applying (they may refer to `self`).
#[derive(Clone, Debug, PartialEq)]
pub struct Provisioner {
    /// The block's label: `local-exec`.
    pub kind: String,
    pub command: Expr,
    pub interpreter: Option<Expr>,
    pub working_dir: Option<Expr>,
    pub environment: Option<Expr>,
    pub quiet: Option<Expr>,
    pub when: ProvisionerWhen,
    pub on_failure: ProvisionerOnFailure,
    /// The whole block.
    pub range: SourceRange,
    /// `provisioner "local-exec"`: where a failure of the command is reported.
    pub decl_range: SourceRange,
}

impl Provisioner {
    /// The provisioner's own arguments (not `when` / `on_failure`), by name.
    pub fn arguments(&self) -> impl Iterator<Item = (&'static str, &Expr)> {
        [
            ("command", Some(&self.command)),
            ("interpreter", self.interpreter.as_ref()),
            ("working_dir", self.working_dir.as_ref()),
            ("environment", self.environment.as_ref()),
            ("quiet", self.quiet.as_ref()),
        ]
        .into_iter()
        .filter_map(|(name, e)| e.map(|e| (name, e)))
    }

    /// Every reference its arguments make (`self` is none).
    pub fn references(&self) -> Vec<(Reference, SourceRange)> {
        self.arguments().flat_map(|(_, e)| e.references()).collect()
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lifecycle {
    pub create_before_destroy: bool,
    pub prevent_destroy: bool,
    pub ignore_changes: IgnoreChanges,
    /// Each expression is a reference to a resource (instance) or one of its attributes.
    pub replace_triggered_by: Vec<Expr>,
    pub preconditions: Vec<CheckRule>,
    pub postconditions: Vec<CheckRule>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub enum IgnoreChanges {
    #[default]
    None,
    /// `ignore_changes = all`.
    All,
    /// Attribute paths (`tags`, `tags["a"]`).
    Paths(Vec<(Vec<PathStep>, SourceRange)>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    pub name: String,
    pub expr: Expr,
    pub description: Option<String>,
    pub sensitive: bool,
    /// `ephemeral = true` (child modules only): the value may derive from
    /// ephemeral values and is never recorded.
    pub ephemeral: bool,
    pub depends_on: Vec<(Reference, SourceRange)>,
    pub preconditions: Vec<CheckRule>,
    pub range: SourceRange,
    pub decl_range: SourceRange,
}

/// An `import { to = ADDR, id = "..." }` block: bring an existing object
/// under management at `to` while planning. `id` is evaluated like any
/// expression (it may use variables and locals).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub to: AbsResourceInstance,
    pub id: Expr,
    pub to_range: SourceRange,
    pub range: SourceRange,
}

/// A `moved { from = a, to = b }` block: its addresses parsed once,
/// relative to the module that holds the block (`null_resource.a[0]`,
/// `module.x`, `module.x["k"].null_resource.y`).
#[derive(Clone, Debug, PartialEq)]
pub struct Moved {
    pub from: Target,
    pub to: Target,
    pub from_range: SourceRange,
    pub to_range: SourceRange,
    pub range: SourceRange,
}

/// A `module "NAME" { source = ... }` block: where the child module comes
/// from, its meta-arguments, and the input variable arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleCall {
    pub name: String,
    pub source: String,
    pub source_range: SourceRange,
    /// The `version` constraint of a registry source.
    pub version: Option<String>,
    pub count: Option<Expr>,
    pub for_each: Option<Expr>,
    pub depends_on: Vec<(Reference, SourceRange)>,
    /// `providers = { child = parent }`: the child's local provider
    /// configuration name → the parent's, with the range of the pair.
    pub providers: Vec<(LocalProviderConfig, LocalProviderConfig, SourceRange)>,
    /// Every other argument: the child's input variables.
    pub arguments: BTreeMap<String, Attribute>,
    pub range: SourceRange,
    pub decl_range: SourceRange,
}

/// A `check "NAME" { assert {...} }` block: assertions that only warn,
/// evaluated after everything else is planned or applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub name: String,
    pub asserts: Vec<CheckRule>,
    /// The scoped data source, if any; its block is in [`Module::resources`]
    /// with [`ResourceBlock::check`] set.
    pub data: Option<Resource>,
    pub range: SourceRange,
    pub decl_range: SourceRange,
}

/// What a `removed` block's `from` names, relative to its module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemovedTarget {
    Resource(fleetform_shared::addr::ConfigResource),
    Module(fleetform_shared::addr::Module),
}

impl std::fmt::Display for RemovedTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemovedTarget::Resource(r) => write!(f, "{r}"),
            RemovedTarget::Module(m) => write!(f, "{m}"),
        }
    }
}

/// A `removed { from = ADDR  lifecycle { destroy = BOOL } }` block: the
/// objects of a resource or module no longer configured are destroyed
/// (`destroy = true`, the default) or forgotten from state.
#[derive(Clone, Debug, PartialEq)]
pub struct Removed {
    pub from: RemovedTarget,
    pub destroy: bool,
    pub from_range: SourceRange,
    pub range: SourceRange,
    pub decl_range: SourceRange,
}
