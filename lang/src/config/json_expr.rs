//! JSON values as expressions, in the three ways HCL's JSON syntax reads
//! them: full expressions (a string is a template, so `"${var.x}"` is the
//! expression `var.x`), literals (a string is only a string: variable
//! defaults, descriptions, `terraform` settings), and static references
//! (a string holds native syntax: `depends_on`, `provider`, `type`,
//! `ignore_changes`, `moved` addresses).

use super::json_parse::{Escapes, JsonKind, JsonValue};
use crate::eval::{Expr, ExprKind, Lowerer, TemplatePart, parse_expression, syntax_error};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::value::{Number, Value};

/// How a JSON value is read as an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Strings (and object keys) are string templates.
    Template,
    /// Strings are taken as they are.
    Literal,
    /// Strings are native-syntax expressions (references, keywords, type
    /// constraints); arrays and objects hold such strings.
    Static,
}

/// The expression a JSON value stands for; problems in embedded templates
/// or native syntax go to `diags`, the value then reads as null.
pub fn lower(v: &JsonValue, mode: Mode, diags: &mut Diagnostics) -> Expr {
    let kind = match &v.kind {
        JsonKind::Null => ExprKind::Literal(Value::null()),
        JsonKind::Bool(b) => ExprKind::Literal(Value::Bool(*b)),
        JsonKind::Number(text) => match Number::parse(text) {
            Some(n) => ExprKind::Literal(Value::Number(n)),
            None => {
                diags.push(
                    Diagnostic::error(
                        "Invalid JSON number",
                        "There is a syntax error in the given JSON number.",
                    )
                    .at(v.range.clone()),
                );
                ExprKind::Literal(Value::null())
            }
        },
        JsonKind::String(s, escapes) => return string(s, escapes, &v.range, mode, diags),
        JsonKind::Array(items) => {
            ExprKind::Tuple(items.iter().map(|i| lower(i, mode, diags)).collect())
        }
        JsonKind::Object { members, .. } => ExprKind::Object(
            members
                .iter()
                .map(|m| {
                    (
                        string(&m.name, &m.name_escapes, &m.name_range, mode, diags),
                        lower(&m.value, mode, diags),
                    )
                })
                .collect(),
        ),
    };
    Expr::new(kind, v.range.clone())
}

/// One JSON string in `mode`; `range` is the quoted string's.
fn string(
    s: &str,
    escapes: &Escapes,
    range: &SourceRange,
    mode: Mode,
    diags: &mut Diagnostics,
) -> Expr {
    let literal = || {
        Expr::new(
            ExprKind::Literal(Value::String(s.to_string())),
            range.clone(),
        )
    };
    // Without `${` or `%{` a template is its own text: skip the parser.
    if mode == Mode::Literal || (mode == Mode::Template && !s.contains("${") && !s.contains("%{")) {
        return literal();
    }
    // Ranges in the content map back through the escapes to the file.
    let to_file = |r: &mut SourceRange| {
        r.start = escapes.position(s, range.start, r.start.byte);
        r.end = escapes.position(s, range.start, r.end.byte);
    };
    let parsed = match mode {
        Mode::Template => parse_template(&range.filename, s),
        _ => parse_expression(&range.filename, s),
    };
    match parsed {
        Ok(mut e) => {
            map_ranges(&mut e, &mut |r| to_file(r));
            // The whole value is the quoted string, as in HCL.
            e.range = range.clone();
            e
        }
        Err(d) => {
            for mut d in d {
                if let Some(r) = &mut d.range {
                    to_file(r);
                }
                diags.push(d);
            }
            Expr::new(ExprKind::Literal(Value::null()), range.clone())
        }
    }
}

/// Parses a JSON string's content as a bare template (JSON has already
/// resolved the escapes, so backslashes are plain text here), unwrapped to
/// its interpolation's value when it is only one, as HCL requires.
fn parse_template(filename: &str, s: &str) -> Result<Expr, Diagnostics> {
    let t = hcl_edit::parser::parse_template(s)
        .map_err(|e| Diagnostics::from(syntax_error(filename, s, &e)))?;
    // HCL reads it with a literal token per line, as a template file: a
    // `~` strip marker trims only the adjacent line.
    Ok(Lowerer::new(filename, s).bare_template(&t))
}

/// Applies `f` to the range of every node of an expression.
pub fn map_ranges(e: &mut Expr, f: &mut dyn FnMut(&mut SourceRange)) {
    f(&mut e.range);
    match &mut e.kind {
        ExprKind::Literal(_) | ExprKind::Variable(_) | ExprKind::SplatItem => {}
        ExprKind::Template(parts) => parts.iter_mut().for_each(|p| map_part(p, f)),
        ExprKind::Tuple(items) => items.iter_mut().for_each(|i| map_ranges(i, f)),
        ExprKind::Object(items) => items.iter_mut().for_each(|(k, v)| {
            map_ranges(k, f);
            map_ranges(v, f);
        }),
        ExprKind::GetAttr(inner, _) | ExprKind::Unary(_, inner) | ExprKind::Parens(inner) => {
            map_ranges(inner, f)
        }
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
            map_ranges(a, f);
            map_ranges(b, f);
        }
        ExprKind::Splat { source, each } => {
            map_ranges(source, f);
            map_ranges(each, f);
        }
        ExprKind::Call { args, .. } => args.iter_mut().for_each(|a| map_ranges(a, f)),
        ExprKind::Conditional(a, b, c) => {
            map_ranges(a, f);
            map_ranges(b, f);
            map_ranges(c, f);
        }
        ExprKind::For(fe) => {
            map_ranges(&mut fe.collection, f);
            if let Some(k) = &mut fe.key_expr {
                map_ranges(k, f);
            }
            map_ranges(&mut fe.value_expr, f);
            if let Some(c) = &mut fe.cond {
                map_ranges(c, f);
            }
        }
    }
}

fn map_part(p: &mut TemplatePart, f: &mut dyn FnMut(&mut SourceRange)) {
    match p {
        TemplatePart::Literal(_) => {}
        TemplatePart::Interpolation(e) => map_ranges(e, f),
        TemplatePart::If {
            cond,
            then,
            otherwise,
        } => {
            map_ranges(cond, f);
            then.iter_mut()
                .chain(otherwise.iter_mut())
                .for_each(|p| map_part(p, f));
        }
        TemplatePart::For {
            collection, body, ..
        } => {
            map_ranges(collection, f);
            body.iter_mut().for_each(|p| map_part(p, f));
        }
    }
}
