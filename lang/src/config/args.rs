//! What every block decoder uses to read its block: where a range is (for
//! messages), label checks, literal arguments (`const_string`,
//! `const_bool`, `address_text`), refusing what a block does not take
//! (`reject_rest`, `reject_blocks`, `not_implemented`) and condition
//! blocks (`check_rules`). It sits below the decoders and the module
//! assembly (`load.rs`), and calls neither.

pub(super) use super::body::at;
use super::body::{Attribute, Body, NestedBlockSyntax};
use super::model::*;
use crate::eval::{EmptyScope, Expr, convert, evaluate};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::value::Value;

/// Checks the block's labels against the expected names; false when wrong.
pub(super) fn labels(b: &NestedBlockSyntax, names: &[&str], diags: &mut Diagnostics) -> bool {
    let t = &b.type_name;
    let list = names.join(", ");
    if b.labels.len() < names.len() {
        let missing = names[b.labels.len()];
        diags.push(
            Diagnostic::error(
                format!("Missing {missing} for {t}"),
                format!("All {t} blocks must have {} labels ({list}).", names.len()),
            )
            .at(b.decl_range.clone()),
        );
        return false;
    }
    if b.labels.len() > names.len() {
        let detail = if names.is_empty() {
            format!("No labels are expected for {t} blocks.")
        } else {
            format!(
                "Only {} labels ({list}) are expected for {t} blocks.",
                names.len()
            )
        };
        diags.push(
            Diagnostic::error(format!("Extraneous label for {t}"), detail)
                .at(b.label_ranges[names.len()].clone()),
        );
        return false;
    }
    for (label, range) in b.labels.iter().zip(&b.label_ranges) {
        if !valid_name(label) {
            let what = if t == "data" { "resource" } else { t };
            diags.push(
                Diagnostic::error(
                    format!("Invalid {what} name"),
                    "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
                )
                .at(range.clone()),
            );
            return false;
        }
    }
    true
}

pub(super) fn valid_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// Evaluates an argument that must be a constant (no references).
pub(super) fn constant(a: &Attribute, diags: &mut Diagnostics) -> Option<Value> {
    match evaluate(&a.expr, &EmptyScope) {
        Ok(v) => Some(v),
        Err(d) => {
            diags.extend(d);
            None
        }
    }
}

pub(super) fn const_string(a: &Attribute, diags: &mut Diagnostics) -> Option<String> {
    match constant(a, diags)? {
        Value::String(s) => Some(s),
        other => {
            diags.push(
                Diagnostic::error(
                    "Incorrect value type",
                    format!(
                        "Invalid expression value: string required, but have {}.",
                        other.kind()
                    ),
                )
                .at(a.expr.range.clone()),
            );
            None
        }
    }
}

pub(super) fn const_bool(a: &Attribute, diags: &mut Diagnostics) -> Option<bool> {
    match constant(a, diags).map(|v| convert(v, &fleetform_shared::types::Type::Bool)) {
        Some(Ok(Value::Bool(b))) => Some(b),
        Some(_) => {
            diags.push(
                Diagnostic::error(
                    "Incorrect value type",
                    "Invalid expression value: bool required.",
                )
                .at(a.expr.range.clone()),
            );
            None
        }
        None => None,
    }
}

/// Reports every argument and block left in `body` as unsupported.
pub(super) fn reject_rest(body: &Body, diags: &mut Diagnostics) {
    for (name, a) in &body.attributes {
        diags.push(
            Diagnostic::error(
                "Unsupported argument",
                format!("An argument named \"{name}\" is not expected here."),
            )
            .at(a.name_range.clone()),
        );
    }
    for b in &body.blocks {
        diags.push(
            Diagnostic::error(
                "Unsupported block type",
                format!("Blocks of type \"{}\" are not expected here.", b.type_name),
            )
            .at(b.decl_range.clone()),
        );
    }
    // JSON properties no schema named (normally reported while parsing).
    for p in &body.json {
        diags.push(p.extraneous(&[]));
    }
}

pub(super) fn reject_blocks(body: &Body, diags: &mut Diagnostics) {
    reject_rest(
        &Body {
            blocks: body.blocks.clone(),
            ..Body::default()
        },
        diags,
    );
}

pub(super) fn check_rules(
    blocks: Vec<NestedBlockSyntax>,
    diags: &mut Diagnostics,
) -> Vec<CheckRule> {
    let mut out = Vec::new();
    for mut b in blocks {
        let condition = b.body.take_attribute("condition");
        let message = b.body.take_attribute("error_message");
        reject_rest(&b.body, diags);
        match (condition, message) {
            (Some(c), Some(m)) => out.push(CheckRule {
                condition: c.expr,
                error_message: m.expr,
                range: b.range,
                decl_range: b.decl_range,
            }),
            (c, _) => {
                let missing = if c.is_none() {
                    "condition"
                } else {
                    "error_message"
                };
                diags.push(missing_argument(missing, &b.body.missing_item_range));
            }
        }
    }
    out
}

pub(super) fn missing_argument(name: &str, range: &SourceRange) -> Diagnostic {
    Diagnostic::error(
        "Missing required argument",
        format!("The argument \"{name}\" is required, but no definition was found."),
    )
    .at(range.clone())
}

/// A static traversal written as an address (`null_resource.a["k"]`).
pub(super) fn address_text(e: &Expr, diags: &mut Diagnostics) -> Option<String> {
    let Some((root, steps)) = e.as_static_address() else {
        diags.push(
            Diagnostic::error("Invalid address", "A static resource address is required.")
                .at(e.range.clone()),
        );
        return None;
    };
    let mut out = root;
    for s in steps {
        match s {
            crate::eval::TraversalStep::Attr(a) => {
                out.push('.');
                out.push_str(&a);
            }
            crate::eval::TraversalStep::Index(Value::String(k)) => {
                out.push_str(&format!(
                    "[{}]",
                    serde_json::to_string(&k).unwrap_or_default()
                ));
            }
            crate::eval::TraversalStep::Index(v) => out.push_str(&format!(
                "[{}]",
                crate::eval::convert(v, &fleetform_shared::types::Type::String)
                    .ok()?
                    .as_str()?
            )),
        }
    }
    Some(out)
}

/// A construct of the language that fleetform does not carry out yet: an
/// error at its source, never silence (a check that never runs, a script
/// that never happens, a module whose resources are never planned).
pub(super) fn not_implemented(what: &str, range: &SourceRange) -> Diagnostic {
    Diagnostic::error(
        format!("Unsupported feature: {what}"),
        format!("fleetform does not support {what} yet, and will not run a configuration that uses them rather than ignore part of it."),
    )
    .at(range.clone())
}
