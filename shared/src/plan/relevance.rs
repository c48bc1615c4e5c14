//! Which part of an object's drift a normal plan shows: the attributes
//! the plan's changes read ([`Plan::relevant_attributes`]), as Terraform
//! 1.11 draws it. Drift elsewhere in the object is drawn as unchanged (the
//! state's value), and an object whose relevant attributes did not drift
//! is not shown at all.

use super::{Action, Plan, PlanMode, ResourceChange};
use crate::types::Type;
use crate::value::{PathStep, Value, ValueList};

impl Plan {
    /// The drift a person is shown: all of it in a refresh-only plan, which
    /// is about nothing else; otherwise, of each object, the drift of the
    /// attributes the planned changes read ([`Plan::relevant_attributes`])
    /// — an object gone whole when any of its attributes is read — and
    /// never an object that only moved (the planned changes show those).
    pub fn drift_shown(&self) -> Vec<ResourceChange> {
        if self.mode == PlanMode::RefreshOnly {
            return self.drift.clone();
        }
        self.drift
            .iter()
            .filter(|d| d.action != Action::NoOp)
            .filter_map(|d| {
                let paths: Vec<&[PathStep]> = self
                    .relevant_attributes
                    .iter()
                    .filter(|r| r.resource == d.addr)
                    .map(|r| r.attribute.as_slice())
                    .collect();
                relevant_drift(d, &paths)
            })
            .collect()
    }
}

/// The part of drift `d` that `paths` reach; None when none of it does.
fn relevant_drift(d: &ResourceChange, paths: &[&[PathStep]]) -> Option<ResourceChange> {
    if paths.is_empty() {
        return None;
    }
    if d.action == Action::Delete {
        return Some(d.clone());
    }
    let after = relevant_after(&d.before, &d.after, paths);
    (after != d.before).then(|| ResourceChange { after, ..d.clone() })
}

/// `after` with what no path reaches put back as it was `before`. A path
/// that ends reaches all below it; an object or map is followed key by
/// key; a list of objects (nested blocks, mostly) index by index; other
/// lists and sets are reached whole once reached at all, as Terraform
/// draws them.
fn relevant_after(before: &Value, after: &Value, paths: &[&[PathStep]]) -> Value {
    if paths.iter().any(|p| p.is_empty()) {
        return after.clone();
    }
    if paths.is_empty() {
        return before.clone();
    }
    match (before, after) {
        (Value::Map(b), Value::Map(a)) => {
            let mut out = a.clone();
            for (k, av) in a.iter() {
                let child = children(paths, |s| matches!(s, PathStep::Key(s) if s == k));
                let bv = b.get(k).unwrap_or(&Value::Null);
                let v = relevant_after(bv, av, &child);
                match v {
                    Value::Null if !b.contains_key(k) => out.remove(k),
                    v => out.insert(k.clone(), v),
                };
            }
            for (k, bv) in b.iter().filter(|(k, _)| !a.contains_key(*k)) {
                let child = children(paths, |s| matches!(s, PathStep::Key(s) if s == k));
                if child.is_empty() {
                    out.insert(k.clone(), bv.clone());
                }
            }
            Value::Map(out)
        }
        (Value::List(b), Value::List(a)) if by_index(b) && by_index(a) => {
            let items = (0..b.len().max(a.len()))
                .filter_map(|i| {
                    let child = children(paths, |s| index_of(s) == Some(i));
                    match (b.get(i), a.get(i)) {
                        (bv, Some(av)) if !child.is_empty() => {
                            Some(relevant_after(bv.unwrap_or(&Value::Null), av, &child))
                        }
                        (Some(bv), _) if child.is_empty() => Some(bv.clone()),
                        _ => None,
                    }
                })
                .collect();
            Value::List(match a.ty() {
                Some(ty) => ValueList::typed(items, ty.clone()),
                None => ValueList::from(items),
            })
        }
        _ => after.clone(),
    }
}

/// The rests of the paths whose first step `matches`.
fn children<'a>(
    paths: &[&'a [PathStep]],
    matches: impl Fn(&PathStep) -> bool,
) -> Vec<&'a [PathStep]> {
    paths
        .iter()
        .filter_map(|p| p.split_first())
        .filter(|(s, _)| matches(s))
        .map(|(_, rest)| rest)
        .collect()
}

/// The element a step names in a list: a number, or a string of one (as
/// Terraform reads `list["0"]`).
fn index_of(s: &PathStep) -> Option<usize> {
    match s {
        PathStep::Index(i) => usize::try_from(*i).ok(),
        PathStep::Key(k) => k.parse().ok(),
    }
}

/// Whether a sequence's elements are told apart by position: a list or
/// tuple of objects (not a set, not a list of primitives, whose elements
/// Terraform draws whole).
fn by_index(l: &ValueList) -> bool {
    match l.ty() {
        Some(Type::Set(_)) => false,
        Some(Type::List(t)) => matches!(**t, Type::Object { .. }),
        _ => l.iter().all(|v| matches!(v, Value::Map(_) | Value::Null)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::ProviderAddr;
    use crate::plan::RelevantAttribute;

    fn object(size: i64, env: &str, team: &str) -> Value {
        Value::object([
            ("name", Value::from("a")),
            ("size", Value::int(size)),
            (
                "tags",
                Value::object([("env", Value::from(env)), ("team", Value::from(team))]),
            ),
        ])
    }

    fn key(k: &str) -> PathStep {
        PathStep::Key(k.into())
    }

    fn plan(drift: ResourceChange, relevant: &[(&str, Vec<PathStep>)]) -> Plan {
        Plan {
            drift: vec![drift],
            relevant_attributes: relevant
                .iter()
                .map(|(r, p)| RelevantAttribute {
                    resource: r.parse().unwrap(),
                    attribute: p.clone(),
                })
                .collect(),
            ..Plan::default()
        }
    }

    fn drift(action: Action, before: Value, after: Value) -> ResourceChange {
        ResourceChange {
            before,
            after,
            ..ResourceChange::new(
                "sim_object.a".parse().unwrap(),
                ProviderAddr::implied("sim"),
                action,
            )
        }
    }

    /// Drift of attributes nothing reads is not shown; drift of one that
    /// is read is, without the rest (drawn as the state has it).
    #[test]
    fn only_the_drift_of_read_attributes_is_shown() {
        let before = object(3, "test", "blue");
        let d = drift(Action::Update, before.clone(), object(7, "test", "red"));
        let env = vec![key("tags"), key("env")];
        assert!(
            plan(d.clone(), &[("sim_object.a", env.clone())])
                .drift_shown()
                .is_empty()
        );
        assert!(
            plan(d.clone(), &[("sim_object.b", vec![])])
                .drift_shown()
                .is_empty()
        );
        let shown = plan(d.clone(), &[("sim_object.a", vec![key("size")])]).drift_shown();
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].after, object(7, "test", "blue"));
        let whole = plan(d.clone(), &[("sim_object.a", vec![])]).drift_shown();
        assert_eq!(whole[0].after, d.after);

        let d = drift(Action::Update, before.clone(), object(7, "prod", "red"));
        let shown = plan(d, &[("sim_object.a", env)]).drift_shown();
        assert_eq!(shown[0].after, object(3, "prod", "blue"));
    }

    /// An object gone is shown when anything of it is read; a refresh-only
    /// plan shows all drift.
    #[test]
    fn deletions_and_refresh_only_plans_show_everything() {
        let d = drift(Action::Delete, object(3, "test", "blue"), Value::Null);
        let shown = plan(d.clone(), &[("sim_object.a", vec![key("name")])]).drift_shown();
        assert_eq!(shown, std::slice::from_ref(&d));
        let mut p = plan(
            drift(Action::Update, object(3, "a", "b"), object(4, "a", "b")),
            &[],
        );
        p.mode = PlanMode::RefreshOnly;
        assert_eq!(p.drift_shown().len(), 1);
    }

    /// A list of objects (nested blocks) is followed by index.
    #[test]
    fn lists_of_objects_are_followed_by_index() {
        let rules = |x: &str, y: &str| {
            Value::object([(
                "rule",
                Value::List(ValueList::from(vec![
                    Value::object([("x", Value::from(x))]),
                    Value::object([("x", Value::from(y))]),
                ])),
            )])
        };
        let d = drift(Action::Update, rules("a", "b"), rules("c", "d"));
        let p = plan(
            d,
            &[("sim_object.a", vec![key("rule"), PathStep::Index(1)])],
        );
        assert_eq!(p.drift_shown()[0].after, rules("a", "d"));
    }
}
