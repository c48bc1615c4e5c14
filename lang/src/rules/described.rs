//! The values a failed condition's expression refers to, in words: what
//! Terraform lists under the quoted condition (`var.rev is 1`), so a reader
//! sees why it was false without adding outputs to find out.

use crate::eval::references::chain;
use crate::eval::{Expr, ExprKind, Scope, TemplatePart, evaluate_marked};
use fleetform_shared::diag::ExprValue;
use fleetform_shared::plan::render_value;
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

/// Each static traversal in `expr` (a root name with its attributes and
/// literal indexes) that evaluates in `scope` to a known, non-sensitive
/// value, described; ordered by traversal text, each once. Sensitive
/// values and unknowns of no known type are left out, and an unknown of a
/// known type is only named by its type (`is a string`): that is what
/// Terraform does when the problem is not about them.
pub fn referenced_values(expr: &Expr, scope: &dyn Scope) -> Vec<ExprValue> {
    let mut found = Vec::new();
    collect(expr, &mut Vec::new(), &mut found);
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for t in found {
        let Some(text) = traversal_text(t) else {
            continue;
        };
        if out.contains_key(&text) {
            continue;
        }
        match evaluate_marked(t, scope) {
            Ok((v, marks)) if marks.is_empty() && v.is_wholly_known() => {
                out.insert(text, format!("is {}", describe(&v)));
            }
            // An unknown of a known type says its type, as Terraform's
            // diagnostics do when the problem is not the unknown value.
            Ok((Value::Unknown(t), marks)) if marks.is_empty() && !t.is_dynamic() => {
                out.insert(text, format!("is a {}", t.ty().friendly_name()));
            }
            _ => {}
        }
    }
    out.into_iter()
        .map(|(traversal, statement)| ExprValue {
            traversal,
            statement,
        })
        .collect()
}

/// The static part of every traversal whose root is not a name a `for`
/// binds.
fn collect<'a>(e: &'a Expr, bound: &mut Vec<String>, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Variable(_) | ExprKind::GetAttr(..) | ExprKind::Index(..) => {
            if let Some(nodes) = chain(e) {
                if let ExprKind::Variable(root) = &nodes[0].kind
                    && !bound.contains(root)
                {
                    out.push(static_end(&nodes));
                }
                for n in &nodes {
                    if let ExprKind::Index(_, key) = &n.kind {
                        collect(key, bound, out);
                    }
                }
                return;
            }
        }
        ExprKind::For(fe) => {
            collect(&fe.collection, bound, out);
            let n = bound.len();
            bound.extend(fe.key_var.iter().cloned());
            bound.push(fe.value_var.clone());
            for x in fe
                .key_expr
                .iter()
                .chain([&fe.value_expr])
                .chain(fe.cond.iter())
            {
                collect(x, bound, out);
            }
            bound.truncate(n);
            return;
        }
        ExprKind::Template(parts) => {
            for p in parts {
                collect_part(p, bound, out);
            }
            return;
        }
        _ => {}
    }
    e.for_each_child(&mut |c| collect(c, bound, out));
}

fn collect_part<'a>(p: &'a TemplatePart, bound: &mut Vec<String>, out: &mut Vec<&'a Expr>) {
    match p {
        TemplatePart::Literal(_) => {}
        TemplatePart::Interpolation(e) => collect(e, bound, out),
        TemplatePart::If {
            cond,
            then,
            otherwise,
        } => {
            collect(cond, bound, out);
            for q in then.iter().chain(otherwise) {
                collect_part(q, bound, out);
            }
        }
        TemplatePart::For {
            key_var,
            value_var,
            collection,
            body,
        } => {
            collect(collection, bound, out);
            let n = bound.len();
            bound.extend(key_var.iter().cloned());
            bound.push(value_var.clone());
            for q in body {
                collect_part(q, bound, out);
            }
            bound.truncate(n);
        }
    }
}

/// The outermost node of `nodes` reached by attributes and literal indexes
/// alone.
fn static_end<'a>(nodes: &[&'a Expr]) -> &'a Expr {
    let mut last = nodes[0];
    for n in &nodes[1..] {
        match &n.kind {
            ExprKind::GetAttr(..) => last = n,
            ExprKind::Index(_, key) if matches!(key.kind, ExprKind::Literal(_)) => last = n,
            _ => break,
        }
    }
    last
}

/// `local.names[0]`, `var.m["k"]`: a static traversal as HCL writes it.
fn traversal_text(e: &Expr) -> Option<String> {
    Some(match &e.kind {
        ExprKind::Variable(root) => root.clone(),
        ExprKind::GetAttr(inner, name) => format!("{}.{name}", traversal_text(inner)?),
        ExprKind::Index(inner, key) => match &key.kind {
            ExprKind::Literal(k @ (Value::String(_) | Value::Number(_))) => {
                format!("{}[{}]", traversal_text(inner)?, render_value(k))
            }
            _ => return None,
        },
        _ => return None,
    })
}

/// A type as Terraform's value descriptions name it: cty's friendly name,
/// where an element of any type is "dynamic" ("empty list of dynamic").
fn type_name(t: &Type) -> String {
    match t {
        Type::Dynamic => "dynamic".into(),
        Type::List(e) => format!("list of {}", type_name(e)),
        Type::Set(e) => format!("set of {}", type_name(e)),
        Type::Map(e) => format!("map of {}", type_name(e)),
        t => crate::eval::friendly_type(t),
    }
}

/// A value in a few words, as Terraform names it by its type: "list of
/// string with 2 elements", "empty map of string", "tuple with 1 element",
/// "object with 1 attribute \"a\"".
fn describe(v: &Value) -> String {
    let count = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let collection = match v {
        Value::List(items) => items.ty().map(|t| (t, items.len())),
        Value::Map(m) => m.ty().map(|t| (t, m.len())),
        _ => None,
    };
    if let Some((t @ (Type::List(_) | Type::Set(_) | Type::Map(_)), n)) = collection {
        let name = type_name(t);
        return if n == 0 {
            format!("empty {name}")
        } else {
            format!("{name} with {}", count(n, "element", "elements"))
        };
    }
    match v {
        Value::List(items) if items.is_empty() => "empty tuple".into(),
        Value::List(items) => format!("tuple with {}", count(items.len(), "element", "elements")),
        Value::Map(m) if m.is_empty() => "object with no attributes".into(),
        Value::Map(m) if m.len() == 1 => {
            let name = m.keys().next().expect("one key");
            format!(
                "object with 1 attribute {}",
                render_value(&Value::string(name))
            )
        }
        Value::Map(m) => format!("object with {} attributes", m.len()),
        scalar => render_value(scalar),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::parse_expression;

    struct Locals(BTreeMap<String, Value>);

    impl Scope for Locals {
        fn variable(&self, _: &str) -> Option<Value> {
            None
        }
        fn local(&self, name: &str) -> Option<Value> {
            self.0.get(name).cloned()
        }
        fn resource(&self, _: &fleetform_shared::addr::Resource) -> Option<Value> {
            None
        }
        fn count_index(&self) -> Option<Value> {
            None
        }
        fn each(&self) -> Option<(Value, Value)> {
            None
        }
    }

    #[test]
    fn each_reference_is_described_once_in_traversal_order() {
        let scope = Locals(BTreeMap::from([
            ("s".to_string(), Value::string("hi")),
            (
                "n".to_string(),
                Value::tuple(vec![Value::int(1), Value::int(2)]),
            ),
            ("o".to_string(), Value::object([("a", Value::int(3))])),
            ("u".to_string(), Value::unknown()),
        ]));
        let expr = parse_expression(
            "main.tf",
            "local.s == \"x\" && length(local.n) > local.n[0] && local.o.a > 1 && local.s != local.u && [for x in local.n : x] == []",
        )
        .unwrap();
        let seen: Vec<String> = referenced_values(&expr, &scope)
            .into_iter()
            .map(|v| format!("{} {}", v.traversal, v.statement))
            .collect();
        assert_eq!(
            seen,
            [
                "local.n is tuple with 2 elements",
                "local.n[0] is 1",
                "local.o.a is 3",
                "local.s is \"hi\"",
            ]
        );
        assert_eq!(
            describe(&Value::object([("a", Value::int(1))])),
            "object with 1 attribute \"a\""
        );
        assert_eq!(describe(&Value::tuple(vec![])), "empty tuple");
        let strings = Type::list(Type::String);
        assert_eq!(
            describe(&Value::typed_list(vec![Value::from("a")], strings.clone())),
            "list of string with 1 element"
        );
        assert_eq!(
            describe(&Value::typed_list(vec![], strings)),
            "empty list of string"
        );
        let m = fleetform_shared::value::ValueMap::new().typed(Type::map(Type::Number));
        assert_eq!(describe(&Value::Map(m)), "empty map of number");
    }
}
