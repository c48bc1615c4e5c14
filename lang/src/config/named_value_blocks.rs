//! Named values: `variable`, `locals` and `output` blocks.

use super::args::{
    at, check_rules, const_bool, const_string, constant, missing_argument, reject_blocks,
    reject_rest,
};
use super::body::{Attribute, NestedBlockSyntax};
use super::model::{Local, Module, Output, Variable};
use crate::eval::{ExprKind, convert, type_constraint_with_defaults};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::value::Value;

pub(super) fn variable(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    let name = b.labels[0].clone();
    let (ty, type_defaults) = match b.body.take_attribute("type") {
        None => (None, None),
        Some(a) => match type_constraint_with_defaults(&a.expr) {
            Ok((t, d)) => (Some(t), d),
            Err(d) => {
                diags.extend(d);
                (None, None)
            }
        },
    };
    let mut default = b
        .body
        .take_attribute("default")
        .and_then(|a| constant(&a, diags).map(|v| (v, a)));
    if let (Some((v, a)), Some(t)) = (&mut default, &ty) {
        let given = match &type_defaults {
            Some(d) => d.apply(v.clone()),
            None => v.clone(),
        };
        match convert(given, t) {
            Ok(c) => *v = c,
            Err(e) => diags.push(
                Diagnostic::error(
                    "Invalid default value for variable",
                    format!("This default value is not compatible with the variable's type constraint: {e}."),
                )
                .at(a.expr.range.clone()),
            ),
        }
    }
    let description = b
        .body
        .take_attribute("description")
        .and_then(|a| const_string(&a, diags));
    let sensitive = b
        .body
        .take_attribute("sensitive")
        .and_then(|a| const_bool(&a, diags))
        .unwrap_or(false);
    let nullable = b
        .body
        .take_attribute("nullable")
        .and_then(|a| const_bool(&a, diags))
        .unwrap_or(true);
    if let Some((Value::Null(_), a)) = &default
        && !nullable
    {
        diags.push(
            Diagnostic::error(
                "Invalid default value for variable",
                "A null default value is not valid when nullable=false.",
            )
            .at(a.expr.range.clone()),
        );
    }
    let validations = check_rules(b.body.take_blocks("validation"), diags);
    let ephemeral = flag(&mut b.body, "ephemeral", diags);
    reject_rest(&b.body, diags);
    let v = Variable {
        name: name.clone(),
        ty,
        type_defaults,
        default: default.map(|(v, _)| v),
        description,
        sensitive,
        nullable,
        ephemeral,
        validations,
        range: b.range,
        decl_range: b.decl_range,
    };
    if let Some(prev) = m.variables.get(&name) {
        diags.push(
            Diagnostic::error(
                "Duplicate variable declaration",
                format!("A variable named {name:?} was already declared at {}. Variable names must be unique within a module.", at(&prev.decl_range)),
            )
            .at(v.decl_range.clone()),
        );
        return;
    }
    m.variables.insert(name, v);
}

pub(super) fn locals(m: &mut Module, b: NestedBlockSyntax, diags: &mut Diagnostics) {
    reject_blocks(&b.body, diags);
    for (name, a) in b.body.attributes {
        if let Some(prev) = m.locals.get(&name) {
            diags.push(
                Diagnostic::error(
                    "Duplicate local value definition",
                    format!("A local value named {name:?} was already defined at {}. Local value names must be unique within a module.", at(&prev.range)),
                )
                .at(a.name_range.clone()),
            );
            continue;
        }
        m.locals.insert(
            name.clone(),
            Local {
                name,
                expr: a.expr,
                range: a.range,
            },
        );
    }
}

pub(super) fn output(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    let name = b.labels[0].clone();
    let Some(value) = b.body.take_attribute("value") else {
        diags.push(missing_argument("value", &b.body.missing_item_range));
        return;
    };
    let description = b
        .body
        .take_attribute("description")
        .and_then(|a| const_string(&a, diags));
    let sensitive = b
        .body
        .take_attribute("sensitive")
        .and_then(|a| const_bool(&a, diags))
        .unwrap_or(false);
    let depends_on = b
        .body
        .take_attribute("depends_on")
        .map(|a| depends_on(&a, diags))
        .unwrap_or_default();
    let preconditions = check_rules(b.body.take_blocks("precondition"), diags);
    let ephemeral = flag(&mut b.body, "ephemeral", diags);
    reject_rest(&b.body, diags);
    if let Some(prev) = m.outputs.get(&name) {
        diags.push(
            Diagnostic::error(
                "Duplicate output definition",
                format!("An output named {name:?} was already defined at {}. Output names must be unique within a module.", at(&prev.decl_range)),
            )
            .at(b.decl_range.clone()),
        );
        return;
    }
    m.outputs.insert(
        name.clone(),
        Output {
            name,
            expr: value.expr,
            description,
            sensitive,
            ephemeral,
            depends_on,
            preconditions,
            range: b.range,
            decl_range: b.decl_range,
        },
    );
}

/// `depends_on = [a.b, var.c]`: each element must be a plain reference.
pub(super) fn depends_on(
    a: &Attribute,
    diags: &mut Diagnostics,
) -> Vec<(crate::eval::Reference, SourceRange)> {
    let ExprKind::Tuple(items) = &a.expr.kind else {
        diags.push(
            Diagnostic::error(
                "Invalid expression",
                "A static list expression is required.",
            )
            .at(a.expr.range.clone()),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items {
        let refs = item.references();
        match (item.as_traversal(), refs.into_iter().next()) {
            (Some(_), Some(r)) => out.push(r),
            _ => diags.push(
                Diagnostic::error("Invalid depends_on reference", "References in depends_on must be to a whole object (resource, etc), not to an attribute of an object.")
                    .at(item.range.clone()),
            ),
        }
    }
    out
}

/// A constant boolean argument, false when absent.
fn flag(body: &mut super::body::Body, name: &str, diags: &mut Diagnostics) -> bool {
    body.take_attribute(name)
        .and_then(|a| const_bool(&a, diags))
        .unwrap_or(false)
}
