//! `dynamic "name" { for_each, iterator, labels, content {} }` blocks:
//! expansion into one nested block per element, each evaluated with the
//! iterator (`name.key`, `name.value`) in scope.

use super::body::{Body, NestedBlockSyntax};
use crate::eval::{Expr, ExprKind, Iteration, Marks, Overlay, Scope, convert, evaluate_marked};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};

/// One element of an expanded dynamic block.
pub(super) struct Expanded<'a> {
    pub content: &'a Body,
    pub labels: Vec<String>,
    pub decl_range: &'a SourceRange,
    pub iteration: Iteration,
}

/// Expands a `dynamic` block; None when `for_each` is not known yet.
/// Problems are reported with hcl's dynblock diagnostics.
pub(super) fn expand<'a>(
    b: &'a NestedBlockSyntax,
    ctx: &dyn Scope,
    diags: &mut Diagnostics,
) -> Option<Vec<Expanded<'a>>> {
    match expand_checked(b, ctx) {
        Ok(out) => out,
        Err(d) => {
            diags.extend(d);
            Some(Vec::new())
        }
    }
}

fn error(summary: &str, detail: &str, range: &SourceRange) -> Diagnostics {
    Diagnostic::error(summary, detail).at(range.clone()).into()
}

fn expand_checked<'a>(
    b: &'a NestedBlockSyntax,
    ctx: &dyn Scope,
) -> Result<Option<Vec<Expanded<'a>>>, Diagnostics> {
    let Some(for_each) = b.body.attributes.get("for_each") else {
        return Err(error(
            "Missing required argument",
            "The argument \"for_each\" is required, but no definition was found.",
            &b.body.missing_item_range,
        ));
    };
    if let Some(it) = b.body.attributes.get("iterator") {
        check_iterator(&it.expr)?;
    }
    let (value, marks) = evaluate_marked(&for_each.expr, ctx)?;
    let invalid_for_each = |detail: &str| {
        error(
            "Invalid dynamic for_each value",
            detail,
            &for_each.expr.range,
        )
    };
    if marks.is_whole() {
        // The number of blocks (and their keys) would give the value away.
        return Err(invalid_for_each(
            "This for_each value is sensitive, and the blocks it generates would reveal it. Use a value that is not sensitive, or lift the sensitivity with nonsensitive() if revealing it is acceptable.",
        ));
    }
    let unknown = value.is_unknown();
    let items: Vec<(Value, Value, Marks)> = match value {
        Value::Null(_) => return Err(invalid_for_each("Cannot use a null value in for_each.")),
        Value::List(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let m = marks.child(&PathStep::Index(i as i64));
                (Value::int(i as i64), v, m)
            })
            .collect(),
        Value::Map(m) => m
            .into_iter()
            .map(|(k, v)| {
                let m = marks.child(&PathStep::Key(k.to_string()));
                (Value::String(k.to_string()), v, m)
            })
            .collect(),
        Value::Unknown(_) => Vec::new(),
        other => {
            return Err(invalid_for_each(&format!(
                "Cannot use a {} value in for_each. An iterable collection is required.",
                other.kind()
            )));
        }
    };
    let labels = match b.body.attributes.get("labels") {
        None => Vec::new(),
        Some(a) => match &a.expr.kind {
            ExprKind::Tuple(items) => items.iter().collect(),
            _ => {
                return Err(error(
                    "Invalid expression",
                    "A static list expression is required.",
                    &a.expr.range,
                ));
            }
        },
    };
    let mut contents = b.body.blocks.iter().filter(|c| c.type_name == "content");
    let Some(content) = contents.next() else {
        return Err(error(
            "Missing dynamic content block",
            "A dynamic block must have a nested block of type \"content\" to describe the body of each generated block.",
            &b.body.missing_item_range,
        ));
    };
    if let Some(extra) = contents.next() {
        return Err(error(
            "Extraneous dynamic content block",
            "Only one nested content block is allowed for each dynamic block.",
            &extra.decl_range,
        ));
    }
    if unknown {
        return Ok(None);
    }
    let name = b.dynamic_iterator_name();
    let mut out = Vec::new();
    for (key, value, marks) in items {
        let iteration = Iteration {
            name: name.clone(),
            key,
            value,
            marks,
        };
        let scope = Overlay::with_iteration(ctx, &iteration);
        let labels = labels
            .iter()
            .map(|l| label(l, &scope))
            .collect::<Result<Vec<_>, _>>()?;
        out.push(Expanded {
            content: &content.body,
            labels,
            decl_range: &b.decl_range,
            iteration,
        });
    }
    Ok(Some(out))
}

/// `iterator` must name a single variable.
fn check_iterator(e: &Expr) -> Result<(), Diagnostics> {
    match e.as_traversal() {
        Some((_, steps)) if steps.is_empty() => Ok(()),
        Some(_) => Err(error(
            "Invalid dynamic iterator name",
            "Dynamic iterator must be a single variable name.",
            &e.range,
        )),
        None => Err(error(
            "Invalid expression",
            "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.",
            &e.range,
        )),
    }
}

/// One label of a generated block: a known, non-null, non-sensitive string.
fn label(e: &Expr, scope: &dyn Scope) -> Result<String, Diagnostics> {
    let invalid = |detail: &str| error("Invalid dynamic block label", detail, &e.range);
    let (v, marks) = evaluate_marked(e, scope)?;
    let v = convert(v, &Type::String).map_err(|why| {
        invalid(&format!(
            "Cannot use this value as a dynamic block label: {why}."
        ))
    })?;
    match v {
        Value::Null(_) => Err(invalid("Cannot use a null value as a dynamic block label.")),
        Value::Unknown(_) => Err(invalid(
            "This value is not yet known. Dynamic block labels must be immediately-known values.",
        )),
        _ if !marks.is_empty() => Err(invalid(
            "This value has dynamic marks that make it unsuitable for use as a block label.",
        )),
        Value::String(s) => Ok(s),
        _ => Err(invalid("Cannot use this value as a dynamic block label.")),
    }
}

#[cfg(test)]
#[path = "dynamic_tests.rs"]
mod tests;
