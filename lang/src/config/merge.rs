//! Override files (`override.tf`, `*_override.tf`, and their `.tf.json`
//! forms): each of their top-level blocks is merged into the block of the
//! primary files with the same header, by Terraform's rules, before the
//! merged blocks are validated into the model. Working on the blocks as
//! written keeps "set in the override" and "left alone" apart for every
//! argument, which is what the rules are stated in.

use super::body::{Body, NestedBlockSyntax};
use crate::eval::{EmptyScope, ExprKind, convert, evaluate, type_constraint};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::value::Value;
use std::collections::BTreeSet;

/// Merges the top-level blocks of one override file into `primary`.
/// `terraform` blocks are returned: their settings merge into the model
/// (see `load`), not into one block.
pub(super) fn apply_override_file(
    primary: &mut Vec<NestedBlockSyntax>,
    file: Body,
    diags: &mut Diagnostics,
) -> Vec<NestedBlockSyntax> {
    let mut terraform = Vec::new();
    for over in file.blocks {
        match over.type_name.as_str() {
            "terraform" => terraform.push(over),
            "resource" | "data" | "variable" | "output" | "module" => {
                match primary.iter_mut().find(|b| same_header(b, &over)) {
                    Some(base) => merge_block(base, over, diags),
                    None => diags.push(missing_base(&over)),
                }
            }
            "provider" => provider(primary, over, diags),
            "locals" => locals(primary, over, diags),
            "moved" => diags.push(
                Diagnostic::error(
                    "Cannot override 'moved' blocks",
                    "Records of moved objects can appear only in normal files, not in override files.",
                )
                .at(over.decl_range.clone()),
            ),
            "import" => diags.push(
                Diagnostic::error(
                    "Cannot override 'import' blocks",
                    "Import blocks can appear only in normal files, not in override files.",
                )
                .at(over.decl_range.clone()),
            ),
            // Terraform reads `check` and `removed` blocks in override files
            // but merges them nowhere; anything else is the loader's to report.
            "check" | "removed" => {}
            _ => primary.push(over),
        }
    }
    terraform
}

fn same_header(a: &NestedBlockSyntax, b: &NestedBlockSyntax) -> bool {
    a.type_name == b.type_name && a.labels == b.labels
}

fn missing_base(over: &NestedBlockSyntax) -> Diagnostic {
    let label = |i: usize| over.labels.get(i).cloned().unwrap_or_default();
    let (summary, detail) = match over.type_name.as_str() {
        "variable" => (
            "Missing base variable declaration to override",
            format!(
                "There is no variable named {:?}. An override file can only override a variable that was already declared in a primary configuration file.",
                label(0)
            ),
        ),
        "output" => (
            "Missing base output definition to override",
            format!(
                "There is no output named {:?}. An override file can only override an output that was already defined in a primary configuration file.",
                label(0)
            ),
        ),
        "module" => (
            "Missing module call to override",
            format!(
                "There is no module call named {:?}. An override file can only override a module call that was defined in a primary configuration file.",
                label(0)
            ),
        ),
        "data" => (
            "Missing data resource to override",
            format!(
                "There is no {} data resource named {:?}. An override file can only override a data block defined in a primary configuration file.",
                label(0),
                label(1)
            ),
        ),
        _ => (
            "Missing resource to override",
            format!(
                "There is no {} resource named {:?}. An override file can only override a resource block defined in a primary configuration file.",
                label(0),
                label(1)
            ),
        ),
    };
    Diagnostic::error(summary, detail).at(over.decl_range.clone())
}

fn merge_block(base: &mut NestedBlockSyntax, mut over: NestedBlockSyntax, diags: &mut Diagnostics) {
    if matches!(
        over.type_name.as_str(),
        "resource" | "data" | "output" | "module"
    ) && let Some(d) = over.body.take_attribute("depends_on")
    {
        // The first element is the closest range Terraform has.
        let range = match &d.expr.kind {
            ExprKind::Tuple(items) if !items.is_empty() => items[0].range.clone(),
            _ => d.expr.range.clone(),
        };
        diags.push(
            Diagnostic::error(
                "Unsupported override",
                "The depends_on argument may not be overridden.",
            )
            .at(range),
        );
    }
    match over.type_name.as_str() {
        "resource" | "data" => resource(base, over),
        "variable" => variable(base, over, diags),
        "output" => output(base, over),
        "module" => module(base, over),
        _ => merge_body(&mut base.body, over.body),
    }
}

/// Terraform's `MergeBodies`: an argument in the override replaces the
/// base's argument of that name, and blocks of a type in the override
/// replace all the base's blocks of that type (`dynamic` ones included).
/// A JSON property not read yet is an argument or a block type: either
/// way it replaces whatever the base has under that name.
pub(super) fn merge_body(base: &mut Body, over: Body) {
    let mut names: BTreeSet<String> = over.attributes.keys().cloned().collect();
    for b in &over.blocks {
        match (b.type_name.as_str(), b.labels.first()) {
            ("dynamic", Some(t)) => names.insert(t.clone()),
            (t, _) => names.insert(t.to_string()),
        };
    }
    names.extend(over.json.iter().map(|p| p.name.clone()));
    base.attributes.retain(|n, _| !names.contains(n));
    base.blocks.retain(|b| {
        let t = match (b.type_name.as_str(), b.labels.first()) {
            ("dynamic", Some(t)) => t,
            (t, _) => t,
        };
        !names.contains(t)
    });
    base.json.retain(|p| !names.contains(&p.name));
    base.attributes.extend(over.attributes);
    base.blocks.extend(over.blocks);
    base.json.extend(over.json);
}

/// Resources and data sources: meta-arguments and configuration as in
/// [`merge_body`], except the `lifecycle` of a managed resource, which
/// merges argument by argument; `replace_triggered_by` and conditions stay
/// the base's (Terraform 1.9 does not merge them).
fn resource(base: &mut NestedBlockSyntax, mut over: NestedBlockSyntax) {
    let lifecycles = over.body.take_blocks("lifecycle");
    if base.type_name == "resource" {
        for mut l in lifecycles {
            let mut set = Body::default();
            for name in ["create_before_destroy", "prevent_destroy", "ignore_changes"] {
                if let Some(a) = l.body.take_attribute(name) {
                    // An empty ignore_changes list overrides nothing.
                    if name == "ignore_changes"
                        && matches!(&a.expr.kind, ExprKind::Tuple(items) if items.is_empty())
                    {
                        continue;
                    }
                    set.attributes.insert(name.to_string(), a);
                }
            }
            match base
                .body
                .blocks
                .iter_mut()
                .find(|b| b.type_name == "lifecycle")
            {
                Some(existing) => existing.body.attributes.extend(set.attributes),
                None => {
                    l.body = Body {
                        attributes: set.attributes,
                        ..l.body
                    };
                    l.body.blocks.clear();
                    l.body.json.clear();
                    base.body.blocks.push(l);
                }
            }
        }
    }
    merge_body(&mut base.body, over.body);
}

/// Variables: each argument given replaces the base's; validations stay
/// the base's. A default and a type that no longer fit are reported with
/// Terraform's texts for the override, at the override.
fn variable(base: &mut NestedBlockSyntax, mut over: NestedBlockSyntax, diags: &mut Diagnostics) {
    over.body.blocks.clear();
    let touched_type = over.body.attributes.contains_key("type");
    let touched_default = over.body.attributes.contains_key("default");
    let touched_nullable = over.body.attributes.contains_key("nullable");
    let decl = over.decl_range.clone();
    merge_body(&mut base.body, over.body);
    if !(touched_type || touched_default || touched_nullable) {
        return;
    }
    let attrs = &base.body.attributes;
    let Some(default) = attrs.get("default").and_then(|a| quiet_constant(&a.expr)) else {
        return;
    };
    let ty = attrs
        .get("type")
        .and_then(|a| type_constraint(&a.expr).ok());
    let nullable = attrs
        .get("nullable")
        .and_then(|a| quiet_constant(&a.expr))
        .and_then(|v| convert(v, &fleetform_shared::types::Type::Bool).ok())
        != Some(Value::Bool(false));
    let mut problem = None;
    if let Some(t) = &ty
        && let Err(e) = convert(default.clone(), t)
    {
        problem = Some(match (touched_type, touched_default) {
            (true, false) => format!(
                "Overriding this variable's type constraint has made its default value invalid: {e}."
            ),
            (false, true) => format!(
                "The overridden default value for this variable is not compatible with the variable's type constraint: {e}."
            ),
            _ => format!(
                "This variable's default value is not compatible with its type constraint: {e}."
            ),
        });
    } else if !nullable && default.is_null() {
        problem = Some("A null default value is not valid when nullable=false.".to_string());
    }
    if let Some(detail) = problem {
        diags.push(Diagnostic::error("Invalid default value for variable", detail).at(decl));
        // Reported here for the override; not again for the merged block.
        base.body.attributes.remove("default");
    }
}

fn quiet_constant(e: &crate::eval::Expr) -> Option<Value> {
    evaluate(e, &EmptyScope).ok()
}

/// Outputs: value, description (unless empty) and sensitive replace the
/// base's; preconditions stay the base's.
fn output(base: &mut NestedBlockSyntax, mut over: NestedBlockSyntax) {
    over.body.blocks.clear();
    if let Some(d) = over.body.attributes.get("description")
        && quiet_constant(&d.expr) == Some(Value::String(String::new()))
    {
        over.body.attributes.remove("description");
    }
    merge_body(&mut base.body, over.body);
}

/// Module calls: every argument replaces the base's, except an empty
/// `providers` map, which leaves the base's in place.
fn module(base: &mut NestedBlockSyntax, mut over: NestedBlockSyntax) {
    if let Some(p) = over.body.attributes.get("providers")
        && matches!(&p.expr.kind, ExprKind::Object(items) if items.is_empty())
    {
        over.body.attributes.remove("providers");
    }
    merge_body(&mut base.body, over.body);
}

/// The `alias` a provider block sets, if it is a constant string.
fn alias_of(b: &NestedBlockSyntax) -> Option<String> {
    match quiet_constant(&b.body.attributes.get("alias")?.expr)? {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// Providers merge by name and alias. An absent default configuration is
/// an empty one, so overriding it adds it; an aliased one must exist.
fn provider(
    primary: &mut Vec<NestedBlockSyntax>,
    over: NestedBlockSyntax,
    diags: &mut Diagnostics,
) {
    let alias = alias_of(&over);
    let found = primary
        .iter_mut()
        .find(|b| same_header(b, &over) && alias_of(b) == alias);
    match (found, alias) {
        (Some(base), _) => merge_body(&mut base.body, over.body),
        (None, None) => primary.push(over),
        (None, Some(alias)) => diags.push(
            Diagnostic::error(
                "Missing base provider configuration for override",
                format!(
                    "There is no {} provider configuration with the alias {alias:?}. An override file can only override an aliased provider configuration that was already defined in a primary configuration file.",
                    over.labels.first().cloned().unwrap_or_default()
                ),
            )
            .at(over.decl_range.clone()),
        ),
    }
}

/// Local values merge one by one, whichever `locals` block holds them.
fn locals(primary: &mut [NestedBlockSyntax], over: NestedBlockSyntax, diags: &mut Diagnostics) {
    for (name, attr) in over.body.attributes {
        let base = primary
            .iter_mut()
            .filter(|b| b.type_name == "locals")
            .find_map(|b| b.body.attributes.get_mut(&name));
        match base {
            Some(existing) => *existing = attr,
            None => diags.push(
                Diagnostic::error(
                    "Missing base local value definition to override",
                    format!(
                        "There is no local value named {name:?}. An override file can only override a local value that was already defined in a primary configuration file."
                    ),
                )
                .at(attr.name_range.clone()),
            ),
        }
    }
}

/// A `terraform` block of an override file, merged into the module:
/// `required_version` constraints replace all of the module's, and each
/// `required_providers` entry replaces the module's entry for that name.
pub(super) fn terraform_settings(
    m: &mut super::model::Module,
    file_blocks: Vec<NestedBlockSyntax>,
    diags: &mut Diagnostics,
) {
    let mut scratch = super::model::Module::default();
    for b in file_blocks {
        super::terraform_block::terraform(&mut scratch, b, diags);
    }
    if !scratch.required_version.is_empty() {
        m.required_version = scratch.required_version;
    }
    m.required_providers.extend(scratch.required_providers);
}
