//! `templatefile(path, vars)`: a bundle file rendered as an HCL template by
//! the project's own parser and evaluator, with the keys of `vars` as its
//! only names.
//!
//! As in Terraform: the file is read as `file()` reads it; `vars` must be a
//! map or object whose keys are identifiers; every name the template uses
//! (outside its own `for` variables) must be among them, checked before
//! rendering so the error names the key; a template that is a single
//! interpolation yields that value unconverted; and a template may not
//! call templatefile again. Errors from inside the template are reported
//! as Terraform reports HCL diagnostics in an error string
//! (`file:line,col-col: summary; detail`).

#[cfg(test)]
mod tests;

use super::files::read_text;
use super::{Def, FnError, FnResult, Unknowns::Shallow, def_env, str_arg};
use crate::eval::Scope;
use crate::eval::env::EvalEnv;
use crate::eval::evaluate::Evaluator;
use crate::eval::expr::{Expr, ExprKind, TemplatePart};
use crate::eval::lower::parse_template;
use fleetform_shared::addr::Resource;
use fleetform_shared::diag::{Diagnostics, SourceRange};
use fleetform_shared::marks::Marks;
use fleetform_shared::value::Value;
use std::cell::Cell;

pub(super) const DEFS: &[Def] = &[
    def_env("templatefile", Shallow, templatefile),
    def_env("templatestring", Shallow, templatestring),
];

thread_local! {
    /// Set while a template renders, so a templatefile call inside it fails.
    static RENDERING: Cell<bool> = const { Cell::new(false) };
}

/// Marks a render in progress until dropped (also when rendering fails).
struct Rendering;

impl Rendering {
    fn start() -> Rendering {
        RENDERING.set(true);
        Rendering
    }
}

impl Drop for Rendering {
    fn drop(&mut self) {
        RENDERING.set(false);
    }
}

fn templatefile(env: &EvalEnv, a: &[Value]) -> FnResult {
    if RENDERING.get() {
        return Err(FnError::call(
            "cannot recursively call templatefile from inside another template function",
        ));
    }
    let path = str_arg(a, 0)?;
    if a[1].is_null() {
        return Err(FnError::arg(1, "argument must not be null"));
    }
    let source = read_text(env, &path)?;
    render(env, &path, &source, &a[1])
}

/// `templatestring(ref, vars)` (Terraform 1.9): a string value rendered as
/// `templatefile` renders a file. That the first argument is a reference,
/// not a literal template, is checked by the caller (`call.rs`), which sees
/// the expression.
fn templatestring(env: &EvalEnv, a: &[Value]) -> FnResult {
    if RENDERING.get() {
        return Err(FnError::call(
            "cannot recursively call templatestring from inside another template function",
        ));
    }
    // The signature has made the template a string and refused nulls.
    let source = str_arg(a, 0)?;
    render(env, "<templatestring argument>", &source, &a[1])
}

/// Renders `source` (named `name` in errors) with the keys of `vars` as its
/// only names.
fn render(env: &EvalEnv, name: &str, source: &str, vars: &Value) -> FnResult {
    let expr = parse_template(name, source).map_err(|d| FnError::call(hcl_error(&d)))?;
    let a = [Value::null(), vars.clone()];
    let Value::Map(vars) = &a[1] else {
        return Err(FnError::arg(1, "invalid vars value: must be a map"));
    };
    if let Some(bad) = vars.keys().find(|k| !is_identifier(k)) {
        return Err(FnError::arg(
            1,
            format!(
                "invalid template variable name {bad:?}: must start with a letter, followed by zero or more letters, digits, and underscores"
            ),
        ));
    }
    let mut used = Vec::new();
    free_names(&expr, &mut Vec::new(), &mut used);
    if let Some((name, range)) = used.into_iter().find(|(n, _)| !vars.contains_key(n)) {
        return Err(FnError::arg(
            1,
            format!(
                "vars map does not contain key {name:?}, referenced at {}",
                hcl_range(range)
            ),
        ));
    }
    let scope = TemplateScope { env };
    let mut evaluator = Evaluator::new(&scope);
    for (name, value) in vars {
        evaluator.bind(name, value.clone(), Marks::none());
    }
    let _rendering = Rendering::start();
    evaluator
        .eval(&expr)
        .map(|(v, _)| v)
        .map_err(|d| FnError::call(hcl_error(&d)))
}

/// HCL's `ValidIdentifier`: a letter or underscore, then letters, digits,
/// underscores and dashes.
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// The root names `e` uses that no enclosing `for` binds, in source order.
fn free_names<'e>(
    e: &'e Expr,
    bound: &mut Vec<&'e str>,
    out: &mut Vec<(&'e str, &'e SourceRange)>,
) {
    match &e.kind {
        ExprKind::Variable(name) => {
            if !bound.contains(&name.as_str()) {
                out.push((name, &e.range));
            }
        }
        ExprKind::For(fe) => {
            free_names(&fe.collection, bound, out);
            let n = bound.len();
            bound.extend(fe.key_var.as_deref());
            bound.push(&fe.value_var);
            for x in fe.key_expr.iter().chain([&fe.value_expr]).chain(&fe.cond) {
                free_names(x, bound, out);
            }
            bound.truncate(n);
        }
        ExprKind::Template(parts) => parts.iter().for_each(|p| free_in_part(p, bound, out)),
        _ => e.for_each_child(&mut |c| free_names(c, bound, out)),
    }
}

fn free_in_part<'e>(
    p: &'e TemplatePart,
    bound: &mut Vec<&'e str>,
    out: &mut Vec<(&'e str, &'e SourceRange)>,
) {
    match p {
        TemplatePart::Literal(_) => {}
        TemplatePart::Interpolation(e) => free_names(e, bound, out),
        TemplatePart::If {
            cond,
            then,
            otherwise,
        } => {
            free_names(cond, bound, out);
            for part in then.iter().chain(otherwise) {
                free_in_part(part, bound, out);
            }
        }
        TemplatePart::For {
            key_var,
            value_var,
            collection,
            body,
        } => {
            free_names(collection, bound, out);
            let n = bound.len();
            bound.extend(key_var.as_deref());
            bound.push(value_var);
            for part in body {
                free_in_part(part, bound, out);
            }
            bound.truncate(n);
        }
    }
}

/// HCL's `Range.String()`: `file:line,col-col`, or `file:line,col-line,col`
/// across lines.
fn hcl_range(r: &SourceRange) -> String {
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

/// HCL's `Diagnostics.Error()`: the first diagnostic, and how many more.
fn hcl_error(d: &Diagnostics) -> String {
    let Some(first) = d.0.first() else {
        return "no diagnostics".into();
    };
    let subject = first.range.as_ref().map_or("<nil>".into(), hcl_range);
    let text = format!("{subject}: {}; {}", first.summary, first.detail);
    match d.0.len() {
        1 => text,
        n => format!("{text}, and {} other diagnostic(s)", n - 1),
    }
}

/// A template's scope: no variables, locals or resources of the
/// configuration (its names are bound in the evaluator), only the
/// environment, so functions inside the template read the same bundle.
struct TemplateScope<'a> {
    env: &'a EvalEnv,
}

impl Scope for TemplateScope<'_> {
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
    fn env(&self) -> &EvalEnv {
        self.env
    }
}
