//! What a constant expression is (one without variables or function
//! calls, as values from `-var`, variables files and the `terraform`
//! provider's functions' arguments must be), its value, and the source
//! ranges messages point at (and how HCL prints one). Below both the input variables and the
//! built-in provider functions that use them.

use crate::eval::{EmptyScope, Expr, ExprKind, TemplatePart, evaluate};
use fleetform_shared::diag::{Diagnostic, Diagnostics, Pos, SourceRange};
use fleetform_shared::value::Value;

/// Evaluates a value expression, which (like Terraform evaluating it
/// without a context) may use neither variables nor functions.
pub(crate) fn constant(expr: &Expr) -> Result<Value, Diagnostics> {
    let mut diags = Diagnostics::new();
    not_constant(expr, &mut Vec::new(), &mut diags);
    if diags.has_errors() {
        return Err(diags);
    }
    evaluate(expr, &EmptyScope)
}

/// Reports references and function calls; `bound` holds the names `for`
/// expressions introduce, which are allowed.
fn not_constant(expr: &Expr, bound: &mut Vec<String>, diags: &mut Diagnostics) {
    match &expr.kind {
        ExprKind::Variable(name) if !bound.contains(name) => diags.push(
            Diagnostic::error("Variables not allowed", "Variables may not be used here.")
                .at(expr.range.clone()),
        ),
        ExprKind::Call { .. } => diags.push(
            Diagnostic::error(
                "Function calls not allowed",
                "Functions may not be called here.",
            )
            .at(expr.range.clone()),
        ),
        ExprKind::For(f) => {
            not_constant(&f.collection, bound, diags);
            let before = bound.len();
            bound.extend(f.key_var.iter().cloned());
            bound.push(f.value_var.clone());
            for e in [f.key_expr.as_ref(), Some(&f.value_expr), f.cond.as_ref()]
                .into_iter()
                .flatten()
            {
                not_constant(e, bound, diags);
            }
            bound.truncate(before);
        }
        ExprKind::Template(parts) => template_not_constant(parts, bound, diags),
        _ => expr.for_each_child(&mut |e| not_constant(e, bound, diags)),
    }
}

fn template_not_constant(parts: &[TemplatePart], bound: &mut Vec<String>, diags: &mut Diagnostics) {
    for part in parts {
        match part {
            TemplatePart::Literal(_) => {}
            TemplatePart::Interpolation(e) => not_constant(e, bound, diags),
            TemplatePart::If {
                cond,
                then,
                otherwise,
            } => {
                not_constant(cond, bound, diags);
                template_not_constant(then, bound, diags);
                template_not_constant(otherwise, bound, diags);
            }
            TemplatePart::For {
                key_var,
                value_var,
                collection,
                body,
            } => {
                not_constant(collection, bound, diags);
                let before = bound.len();
                bound.extend(key_var.iter().cloned());
                bound.push(value_var.clone());
                template_not_constant(body, bound, diags);
                bound.truncate(before);
            }
        }
    }
}

/// A range the way HCL prints one in messages: `file:line,col-endcol`, or
/// `file:line,col-endline,endcol` across lines.
pub fn hcl_range(r: &SourceRange) -> String {
    if r.start.line == r.end.line {
        format!(
            "{}:{},{}-{}",
            r.filename, r.start.line, r.start.column, r.end.column
        )
    } else {
        format!(
            "{}:{},{}-{},{}",
            r.filename, r.start.line, r.start.column, r.end.line, r.end.column
        )
    }
}

/// Just the block's type name, which starts its declaration range.
pub(crate) fn type_range(decl: &SourceRange, type_name: &str) -> SourceRange {
    let start = decl.start;
    SourceRange {
        filename: decl.filename.clone(),
        start,
        end: Pos {
            line: start.line,
            column: start.column + type_name.chars().count(),
            byte: start.byte + type_name.len(),
        },
    }
}
