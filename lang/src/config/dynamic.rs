//! `dynamic "name" { for_each, iterator, labels, content {} }` blocks:
//! expansion into one nested block per element, each evaluated with the
//! iterator (`name.key`, `name.value`) in scope.

use super::body::{Body, NestedBlockSyntax};
use crate::eval::{Marks, Reference, Scope, evaluate, evaluate_marked};
use fleetform_shared::addr::{Resource, ResourceMode};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::value::{PathStep, Value};

/// The iterator of one expanded `dynamic` block element.
#[derive(Clone, Debug)]
pub(super) struct Iteration {
    pub name: String,
    pub key: Value,
    pub value: Value,
    /// The sensitive parts of `value`.
    pub marks: Marks,
}

/// A scope that adds a `dynamic` block's iterator to an outer scope. The
/// evaluator reads `rule.value` as a root name with one attribute, which
/// is the shape of a managed resource reference, so that is what it intercepts.
pub(super) struct IteratorScope<'a> {
    pub inner: &'a dyn Scope,
    pub iteration: &'a Iteration,
}

impl Scope for IteratorScope<'_> {
    fn variable(&self, name: &str) -> Option<Value> {
        self.inner.variable(name)
    }
    fn local(&self, name: &str) -> Option<Value> {
        self.inner.local(name)
    }
    fn resource(&self, addr: &Resource) -> Option<Value> {
        if addr.mode == ResourceMode::Managed && addr.type_name == self.iteration.name {
            match addr.name.as_str() {
                "key" => return Some(self.iteration.key.clone()),
                "value" => return Some(self.iteration.value.clone()),
                _ => {}
            }
        }
        self.inner.resource(addr)
    }
    fn count_index(&self) -> Option<Value> {
        self.inner.count_index()
    }
    fn each(&self) -> Option<(Value, Value)> {
        self.inner.each()
    }
    fn path(&self, name: &str) -> Option<Value> {
        self.inner.path(name)
    }
    fn workspace(&self) -> Option<Value> {
        self.inner.workspace()
    }
    fn marks(&self, reference: &Reference) -> Marks {
        match reference {
            Reference::Resource(addr)
                if addr.mode == ResourceMode::Managed && addr.type_name == self.iteration.name =>
            {
                match addr.name.as_str() {
                    "value" => self.iteration.marks.clone(),
                    "key" => Marks::none(),
                    _ => self.inner.marks(reference),
                }
            }
            _ => self.inner.marks(reference),
        }
    }
}

/// The iterator name of a `dynamic` block: `iterator = x`, else its label.
pub(super) fn iterator_name(b: &NestedBlockSyntax) -> String {
    b.body
        .attributes
        .get("iterator")
        .and_then(|a| a.expr.as_keyword().map(str::to_string))
        .or_else(|| b.labels.first().cloned())
        .unwrap_or_default()
}

/// References of a `dynamic` block, without those to its own iterator.
pub(super) fn references(b: &NestedBlockSyntax) -> Vec<(Reference, SourceRange)> {
    let name = iterator_name(b);
    b.body
        .references()
        .into_iter()
        .filter(|(r, _)| !matches!(r, Reference::Resource(res) if res.mode == ResourceMode::Managed && res.type_name == name))
        .collect()
}

/// One element of an expanded dynamic block.
pub(super) struct Expanded<'a> {
    pub content: &'a Body,
    pub labels: Vec<String>,
    pub decl_range: &'a SourceRange,
    pub iteration: Iteration,
}

/// Expands a `dynamic` block; None when `for_each` is not known yet.
pub(super) fn expand<'a>(
    b: &'a NestedBlockSyntax,
    ctx: &dyn Scope,
    diags: &mut Diagnostics,
) -> Option<Vec<Expanded<'a>>> {
    let invalid = |detail: &str, range: &SourceRange| {
        Diagnostic::error("Invalid dynamic block", detail).at(range.clone())
    };
    let Some(content) = b.body.blocks.iter().find(|c| c.type_name == "content") else {
        diags.push(invalid(
            "A dynamic block must have a nested block of type \"content\".",
            &b.body.missing_item_range,
        ));
        return Some(Vec::new());
    };
    let Some(for_each) = b.body.attributes.get("for_each") else {
        diags.push(invalid(
            "The argument \"for_each\" is required.",
            &b.body.missing_item_range,
        ));
        return Some(Vec::new());
    };
    let (value, marks) = match evaluate_marked(&for_each.expr, ctx) {
        Ok(v) => v,
        Err(d) => {
            diags.extend(d);
            return Some(Vec::new());
        }
    };
    if marks.is_whole() {
        // The number of blocks (and their keys) would give the value away.
        diags.push(
            Diagnostic::error(
                "Invalid dynamic for_each value",
                "This for_each value is sensitive, and the blocks it generates would reveal it. Use a value that is not sensitive, or lift the sensitivity with nonsensitive() if revealing it is acceptable.",
            )
            .at(for_each.expr.range.clone()),
        );
        return Some(Vec::new());
    }
    let items: Vec<(Value, Value, Marks)> = match value {
        Value::Unknown => return None,
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
                let m = marks.child(&PathStep::Key(k.clone()));
                (Value::String(k), v, m)
            })
            .collect(),
        other => {
            diags.push(
                Diagnostic::error(
                    "Invalid dynamic for_each value",
                    format!(
                        "Cannot use a {} value in for_each. An iterable collection is required.",
                        other.kind()
                    ),
                )
                .at(for_each.expr.range.clone()),
            );
            return Some(Vec::new());
        }
    };
    let name = iterator_name(b);
    let mut out = Vec::new();
    for (key, value, marks) in items {
        let iteration = Iteration {
            name: name.clone(),
            key,
            value,
            marks,
        };
        let labels = match b.body.attributes.get("labels") {
            None => Vec::new(),
            Some(a) => {
                let scope = IteratorScope {
                    inner: ctx,
                    iteration: &iteration,
                };
                match evaluate(&a.expr, &scope) {
                    Ok(Value::List(ls)) => ls
                        .iter()
                        .filter_map(|l| l.as_str().map(str::to_string))
                        .collect(),
                    Ok(_) => {
                        diags.push(invalid(
                            "The labels argument must be a list of strings.",
                            &a.expr.range,
                        ));
                        continue;
                    }
                    Err(d) => {
                        diags.extend(d);
                        continue;
                    }
                }
            }
        };
        out.push(Expanded {
            content: &content.body,
            labels,
            decl_range: &b.decl_range,
            iteration,
        });
    }
    Some(out)
}
