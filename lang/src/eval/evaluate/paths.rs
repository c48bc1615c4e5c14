//! A fast path for static traversals into named values (`local.az.app.regex`,
//! `var.settings["region"]`): the steps are walked on the stored value by
//! reference and only what they reach is copied. The general path copies the
//! whole root value first (`local.az`), which for a large map costs time in
//! proportion to the map at every reference.
//!
//! Anything out of the ordinary (an unknown or null on the way, a missing
//! key, a number used as a map key, a `for` variable named like a root)
//! returns None and the general path evaluates it, with its diagnostics.

use super::Evaluator;
use crate::eval::expr::{Expr, ExprKind};
use crate::eval::references::Reference;
use fleetform_shared::marks::Marks;
use fleetform_shared::value::{PathStep, Value};

impl Evaluator<'_> {
    /// The value and marks of `e` when it is a static traversal of at least
    /// two steps into `local.NAME` or `var.NAME` that resolves plainly.
    pub(super) fn static_path(&self, e: &Expr) -> Option<(Value, Marks)> {
        let mut steps: Vec<PathStep> = Vec::new();
        let mut cur = e;
        let root = loop {
            match &cur.kind {
                ExprKind::GetAttr(inner, name) => {
                    steps.push(PathStep::Key(name.clone()));
                    cur = inner;
                }
                ExprKind::Index(inner, key) => {
                    steps.push(match &key.kind {
                        ExprKind::Literal(Value::String(s)) => PathStep::Key(s.clone()),
                        ExprKind::Literal(Value::Number(n)) => PathStep::Index(n.as_i64()?),
                        _ => return None,
                    });
                    cur = inner;
                }
                ExprKind::Variable(root) => break root,
                _ => return None,
            }
        };
        // The name plus at least one step into it: otherwise the whole value
        // is what is wanted anyway.
        if steps.len() < 2 || self.is_bound(root) {
            return None;
        }
        steps.reverse();
        let PathStep::Key(name) = &steps[0] else {
            return None;
        };
        let (base, reference) = match root.as_str() {
            "local" => (self.scope.local_ref(name)?, Reference::Local(name.clone())),
            "var" => (
                self.scope.variable_ref(name)?,
                Reference::Variable(name.clone()),
            ),
            _ => return None,
        };
        let mut value = base;
        let mut marks = self.scope.marks(&reference);
        for step in &steps[1..] {
            value = match (step, value) {
                (PathStep::Key(k), Value::Map(m)) => m.get(k)?,
                (PathStep::Index(i), Value::List(l)) => l.get(usize::try_from(*i).ok()?)?,
                _ => return None,
            };
            marks = marks.child(step);
        }
        Some((value.clone(), marks))
    }
}

#[cfg(test)]
mod tests {
    use crate::eval::{MapScope, Marks, Reference, evaluate_marked, parse_expression};
    use fleetform_shared::value::{PathStep, Value};

    fn scope() -> MapScope {
        let az = Value::object([
            (
                "app",
                Value::object([
                    ("regex", Value::from("^[a-z]+$")),
                    ("sizes", Value::tuple(vec![Value::int(1), Value::int(2)])),
                    ("secret", Value::from("s")),
                ]),
            ),
            ("gone", Value::null()),
            ("later", Value::unknown()),
        ]);
        let secret = Marks::from_paths([vec![
            PathStep::Key("app".into()),
            PathStep::Key("secret".into()),
        ]]);
        MapScope::new()
            .with_local("az", az)
            .with_marks(Reference::Local("az".into()), secret)
    }

    fn eval(src: &str) -> Result<(Value, Marks), String> {
        let e = parse_expression("t.tf", src).unwrap();
        evaluate_marked(&e, &scope()).map_err(|d| d.to_string())
    }

    #[test]
    fn static_paths_give_what_the_general_path_gives() {
        assert_eq!(
            eval("local.az.app.regex").unwrap().0,
            Value::from("^[a-z]+$")
        );
        assert_eq!(eval("local.az[\"app\"].sizes[1]").unwrap().0, Value::int(2));
        // Marks narrow along the path.
        assert!(eval("local.az.app.secret").unwrap().1.is_whole());
        assert!(eval("local.az.app.regex").unwrap().1.is_empty());
        // Unknowns, nulls and missing keys go the general way, errors included.
        assert_eq!(eval("local.az.later.x").unwrap().0, Value::unknown());
        assert!(eval("local.az.gone.x").is_err());
        let missing = eval("local.az.app.nope").unwrap_err();
        assert!(missing.contains("nope"), "{missing}");
        // A `for` variable named like a root is the variable, not the root.
        let e = parse_expression(
            "t.tf",
            "[for local in [{ az = { app = 1 } }] : local.az.app]",
        )
        .unwrap();
        assert_eq!(
            evaluate_marked(&e, &scope()).unwrap().0,
            Value::tuple(vec![Value::int(1)])
        );
    }
}
