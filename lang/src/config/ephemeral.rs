//! Ephemeral values (Terraform 1.10): which expressions of a configuration
//! derive from a value that must never be recorded, and the places that
//! would record one (resource arguments, `count`, `for_each`, outputs and
//! module inputs not declared ephemeral), refused with Terraform's words.
//!
//! Terraform marks values as it evaluates them; fleetform decides it from
//! the configuration instead, since what can be ephemeral is known from the
//! declarations alone: an ephemeral variable, `terraform.applying`, a child
//! module's ephemeral output, or a local whose expression refers to one of
//! these. An expression is ephemeral when it refers to any of them outside
//! an `ephemeralasnull(...)` call. So the check runs once, when the
//! configuration loads, and `validate` reports what `plan` would.

use super::body::{Attribute, Body};
use super::model::Module;
use super::tree::{Config, ModuleNode};
use crate::eval::{Expr, ExprKind, Reference};
use fleetform_shared::addr::{self, ResourceMode};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use std::collections::{BTreeMap, BTreeSet};

/// The function that turns ephemeral values into nulls: references inside
/// its call do not make the enclosing expression ephemeral.
pub const EPHEMERAL_AS_NULL: &str = "ephemeralasnull";

/// Whether `reference`, made in module `node`, names an ephemeral value.
pub fn is_ephemeral_reference(node: &ModuleNode, reference: &Reference) -> bool {
    Ephemeral::of(node).reference(reference)
}

/// The first reference in `expr` (evaluated in module `node`) that makes
/// it ephemeral, as written (`var.token`), with its range.
pub fn ephemeral_source(node: &ModuleNode, expr: &Expr) -> Option<(String, SourceRange)> {
    Ephemeral::of(node).source(expr)
}

/// What is ephemeral in one module: its ephemeral locals, decided once.
/// (Deciding a local by following its references each time it is met
/// took time exponential in the depth of locals that use other locals
/// several times: 86 s to validate cloudposse's null-label example.)
struct Ephemeral<'a> {
    node: &'a ModuleNode,
    locals: BTreeSet<String>,
}

impl<'a> Ephemeral<'a> {
    /// The least set of ephemeral locals: a local is ephemeral when its
    /// expression refers to an ephemeral value or local; grown until
    /// nothing more is added (a cycle of locals adds nothing by itself).
    fn of(node: &'a ModuleNode) -> Ephemeral<'a> {
        let mut e = Ephemeral {
            node,
            locals: BTreeSet::new(),
        };
        loop {
            let found: Vec<String> = node
                .module
                .locals
                .iter()
                .filter(|(n, local)| !e.locals.contains(*n) && e.source(&local.expr).is_some())
                .map(|(n, _)| n.clone())
                .collect();
            if found.is_empty() {
                return e;
            }
            e.locals.extend(found);
        }
    }

    fn source(&self, expr: &Expr) -> Option<(String, SourceRange)> {
        source_by(expr, &|r| self.reference(r))
    }

    fn reference(&self, r: &Reference) -> bool {
        let (node, module) = (self.node, &self.node.module);
        match r {
            Reference::Resource(r) => r.mode == ResourceMode::Ephemeral,
            Reference::Variable(n) => module.variables.get(n).is_some_and(|v| v.ephemeral),
            Reference::Local(n) => self.locals.contains(n),
            Reference::ModuleOutput(call, output) => node
                .children
                .get(call)
                .and_then(|c| c.module.outputs.get(output))
                .is_some_and(|o| o.ephemeral),
            Reference::ModuleCall(call) => node
                .children
                .get(call)
                .is_some_and(|c| c.module.outputs.values().any(|o| o.ephemeral)),
            _ => false,
        }
    }
}

/// The first reference in `expr` that `ephemeral` says is ephemeral (or
/// `terraform.applying`), outside `ephemeralasnull(...)` calls.
fn source_by(expr: &Expr, ephemeral: &dyn Fn(&Reference) -> bool) -> Option<(String, SourceRange)> {
    if let ExprKind::Call { name, .. } = &expr.kind
        && name == EPHEMERAL_AS_NULL
    {
        return None;
    }
    if is_applying(expr) {
        return Some(("terraform.applying".into(), expr.range.clone()));
    }
    if !contains_call(expr, EPHEMERAL_AS_NULL) {
        return expr
            .references()
            .into_iter()
            .find(|(r, _)| ephemeral(r))
            .map(|(r, range)| (r.to_string(), range))
            .or_else(|| applying_inside(expr));
    }
    let mut found = None;
    expr.for_each_child(&mut |c| {
        if found.is_none() {
            found = source_by(c, ephemeral);
        }
    });
    found
}

/// `terraform.applying`: true while applying, so ephemeral.
fn is_applying(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::GetAttr(inner, attr)
        if attr == "applying" && matches!(&inner.kind, ExprKind::Variable(root) if root == "terraform"))
}

fn applying_inside(e: &Expr) -> Option<(String, SourceRange)> {
    if is_applying(e) {
        return Some(("terraform.applying".into(), e.range.clone()));
    }
    let mut found = None;
    e.for_each_child(&mut |c| {
        if found.is_none() {
            found = applying_inside(c);
        }
    });
    found
}

fn contains_call(e: &Expr, function: &str) -> bool {
    if let ExprKind::Call { name, .. } = &e.kind
        && name == function
    {
        return true;
    }
    let mut found = false;
    e.for_each_child(&mut |c| found = found || contains_call(c, function));
    found
}

/// The references each module of `config` can make to an ephemeral value
/// (what [`crate::eval::Scope::is_ephemeral`] answers while evaluating).
pub fn ephemeral_references(config: &Config) -> BTreeMap<addr::Module, BTreeSet<Reference>> {
    let mut out = BTreeMap::new();
    for node in config.modules() {
        let module = &node.module;
        let mut refs: BTreeSet<Reference> = module
            .variables
            .values()
            .filter(|v| v.ephemeral)
            .map(|v| Reference::Variable(v.name.clone()))
            .collect();
        refs.extend(Ephemeral::of(node).locals.into_iter().map(Reference::Local));
        refs.extend(
            module
                .resources
                .keys()
                .filter(|r| r.mode == ResourceMode::Ephemeral)
                .map(|r| Reference::Resource(r.clone())),
        );
        for (call, child) in &node.children {
            for o in child.module.outputs.values().filter(|o| o.ephemeral) {
                refs.insert(Reference::ModuleOutput(call.clone(), o.name.clone()));
                refs.insert(Reference::ModuleCall(call.clone()));
            }
        }
        if !refs.is_empty() {
            out.insert(node.path.clone(), refs);
        }
    }
    out
}

/// Every place of `config` that would record an ephemeral value.
pub fn check(config: &Config) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for node in config.modules() {
        check_module(node, node.path.0.is_empty(), &mut diags);
    }
    // In source order, as Terraform's walk reports them for a module.
    diags
        .0
        .sort_by_key(|d| d.range.as_ref().map(|r| (r.filename.clone(), r.start.byte)));
    diags
}

fn check_module(node: &ModuleNode, root: bool, diags: &mut Diagnostics) {
    let module: &Module = &node.module;
    let eph = Ephemeral::of(node);
    for output in module.outputs.values() {
        if output.ephemeral && root {
            diags.push(
                Diagnostic::error(
                    "Ephemeral output not allowed",
                    "Ephemeral outputs are not allowed in context of a root module",
                )
                .at(output.decl_range.clone()),
            );
        } else if !output.ephemeral && eph.source(&output.expr).is_some() {
            diags.push(
                Diagnostic::error(
                    "Ephemeral value not allowed",
                    "This output value is not declared as returning an ephemeral value, so it cannot be set to a result derived from an ephemeral value.",
                )
                .at(output.expr.range.clone())
                .in_context(format!("output {:?}", output.name)),
            );
        }
    }
    for (name, call) in &module.module_calls {
        let ctx = format!("module {name:?}");
        meta_arguments(
            &eph,
            call.count.as_ref(),
            call.for_each.as_ref(),
            &ctx,
            diags,
        );
        let Some(child) = node.children.get(name) else {
            continue;
        };
        for (arg, a) in &call.arguments {
            let declared_ephemeral = child.module.variables.get(arg).is_some_and(|v| v.ephemeral);
            if !declared_ephemeral && eph.source(&a.expr).is_some() {
                diags.push(
                    Diagnostic::error(
                        "Ephemeral value not allowed",
                        "This input variable is not declared as accepting a ephemeral values, so it cannot be set to a result derived from an ephemeral value.",
                    )
                    .at(a.expr.range.clone())
                    .in_context(ctx.clone()),
                );
            }
        }
    }
    for block in module.resources.values() {
        let ctx = block.header();
        meta_arguments(
            &eph,
            block.count.as_ref(),
            block.for_each.as_ref(),
            &ctx,
            diags,
        );
        // An ephemeral resource's arguments may take ephemeral values; a
        // managed resource's may where they are write-only, which takes its
        // schema: see [`check_resource_arguments`], when it is planned.
        if block.addr.mode != ResourceMode::Data {
            continue;
        }
        let address = if node.path.0.is_empty() {
            block.addr.to_string()
        } else {
            format!("{}.{}", node.path, block.addr)
        };
        arguments(&|e| eph.source(e), &block.body, None, &ctx, &address, diags);
    }
}

/// A managed resource instance's arguments that take an ephemeral value
/// (by `scope`'s answers) and are not write-only in `schema`: each refused
/// with Terraform's words, in the resource's context (`header`) and for
/// `address`.
pub fn check_resource_arguments(
    body: &Body,
    schema: &fleetform_shared::schema::Block,
    scope: &dyn crate::eval::Scope,
    header: &str,
    address: &str,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    arguments(
        &|e| source_by(e, &|r| scope.is_ephemeral(r)),
        body,
        Some(schema),
        header,
        address,
        &mut diags,
    );
    diags
}

fn meta_arguments(
    eph: &Ephemeral<'_>,
    count: Option<&Expr>,
    for_each: Option<&Expr>,
    ctx: &str,
    diags: &mut Diagnostics,
) {
    if let Some(count) = count
        && eph.source(count).is_some()
    {
        diags.push(
            Diagnostic::error(
                "Invalid count argument",
                "The given \"count\" is derived from an ephemeral value, which means that Terraform cannot persist it between plan/apply rounds. Use only non-ephemeral values to specify the number of resource instances.",
            )
            .at(count.range.clone())
            .in_context(ctx),
        );
    }
    if let Some(fe) = for_each
        && eph.source(fe).is_some()
    {
        diags.push(
            Diagnostic::error(
                "Invalid for_each argument",
                "The given \"for_each\" value is derived from an ephemeral value, which means that Terraform cannot persist it between plan/apply rounds. Use only non-ephemeral values to specify a resource's instance keys.",
            )
            .at(fe.range.clone())
            .in_context(ctx),
        );
    }
}

type SourceOf<'a> = dyn Fn(&Expr) -> Option<(String, SourceRange)> + 'a;

/// A resource's arguments, nested blocks' included: each is recorded in
/// state and plans unless `schema` says it is write-only.
fn arguments(
    source: &SourceOf<'_>,
    body: &Body,
    schema: Option<&fleetform_shared::schema::Block>,
    ctx: &str,
    address: &str,
    diags: &mut Diagnostics,
) {
    let mut ignored = Diagnostics::new();
    let json: Vec<Attribute> = body
        .json
        .iter()
        .map(|p| p.to_attribute(super::json_expr::Mode::Template, &mut ignored))
        .collect();
    for a in body.attributes.values().chain(&json) {
        let write_only = schema
            .and_then(|s| s.attributes.get(&a.name))
            .is_some_and(|sa| sa.write_only);
        if !write_only && source(&a.expr).is_some() {
            diags.push(
                Diagnostic::error(
                    "Invalid use of ephemeral value",
                    format!(
                        "Ephemeral values are not valid for {:?}, because it is not a write-only attribute and must be persisted to state.",
                        a.name
                    ),
                )
                .at(a.range.clone())
                .in_context(ctx)
                .for_address(address),
            );
        }
    }
    for b in &body.blocks {
        let nested = schema.and_then(|s| s.block_types.get(&b.type_name).map(|n| &n.block));
        arguments(source, &b.body, nested, ctx, address, diags);
    }
}
