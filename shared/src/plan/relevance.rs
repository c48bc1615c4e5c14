//! Which part of an object's drift a normal plan shows: the attributes
//! the plan's changes read ([`Plan::relevant_attributes`]), as Terraform
//! 1.11 draws it. Drift elsewhere in the object is drawn as unchanged (the
//! state's value), and an object whose relevant attributes did not drift
//! is not shown at all.

use super::shape::{AttrShape, BlockShape};
use super::{Action, Plan, PlanMode, ResourceChange};
use crate::schema::Nesting;
use crate::types::Type;
use crate::value::{PathStep, Value, ValueList};
use std::collections::BTreeMap;

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
                let shape = self
                    .shapes
                    .get(
                        &d.provider,
                        d.addr.resource.resource.mode,
                        &d.addr.resource.resource.type_name,
                    )
                    .map_or(Shape::Unknown, Shape::Block);
                relevant_drift(d, &paths, shape)
            })
            .collect()
    }
}

/// The part of drift `d` that `paths` reach; None when none of it does.
fn relevant_drift(
    d: &ResourceChange,
    paths: &[&[PathStep]],
    shape: Shape<'_>,
) -> Option<ResourceChange> {
    if paths.is_empty() {
        return None;
    }
    if d.action == Action::Delete {
        return Some(d.clone());
    }
    let (before, after) = relevant_pair(&d.before, &d.after, paths, shape);
    (after != before).then(|| ResourceChange {
        before,
        after,
        ..d.clone()
    })
}

/// `after` with what no path reaches put back as it was `before`; see
/// [`relevant_pair`].
#[cfg(test)]
fn relevant_after(before: &Value, after: &Value, paths: &[&[PathStep]], shape: Shape<'_>) -> Value {
    relevant_pair(before, after, paths, shape).1
}

/// `(before, after)` as drawn: `after` with what no path reaches put back
/// as it was `before`. A path that ends reaches all below it; objects and
/// maps are followed key by key; lists of nested blocks or nested
/// attributes and tuples index by index; other lists and sets are reached
/// whole once reached at all, as Terraform draws them. Without a schema
/// shape, a list of objects is taken for nested blocks.
///
/// An element that drift added to a list or map of nested blocks or
/// nested attributes, and that no path reaches, stays on both sides:
/// Terraform 1.11 draws it as an unchanged element ("# (1 unchanged
/// element hidden)", one more of the "unchanged blocks hidden"), where an
/// added key of a plain map is not drawn at all.
fn relevant_pair(
    before: &Value,
    after: &Value,
    paths: &[&[PathStep]],
    shape: Shape<'_>,
) -> (Value, Value) {
    if paths.iter().any(|p| p.is_empty()) {
        return (before.clone(), after.clone());
    }
    if paths.is_empty() {
        return (before.clone(), before.clone());
    }
    let nested = matches!(shape, Shape::Nested(..));
    match (before, after) {
        (Value::Map(b), Value::Map(a)) => {
            let (mut bout, mut out) = (b.clone(), a.clone());
            for (k, av) in a.iter() {
                let child = children(paths, |s| matches!(s, PathStep::Key(s) if s == k));
                if nested && child.is_empty() && !b.contains_key(k) {
                    bout.insert(k.clone(), av.clone());
                    continue;
                }
                let bv = b.get(k).unwrap_or(&crate::value::NULL);
                let (bk, ak) = relevant_pair(bv, av, &child, shape.child(k));
                match ak {
                    Value::Null(_) if !b.contains_key(k) => {
                        out.remove(k);
                    }
                    v => {
                        out.insert(k.clone(), v);
                        if b.contains_key(k) {
                            bout.insert(k.clone(), bk);
                        }
                    }
                }
            }
            for (k, bv) in b.iter().filter(|(k, _)| !a.contains_key(k)) {
                let child = children(paths, |s| matches!(s, PathStep::Key(s) if s == k));
                if child.is_empty() {
                    out.insert(k.clone(), bv.clone());
                }
            }
            (Value::Map(bout), Value::Map(out))
        }
        (Value::List(b), Value::List(a)) if shape.by_index(b, a) => {
            let mut bitems: Vec<Value> = b.iter().cloned().collect();
            let mut items = Vec::new();
            for i in 0..b.len().max(a.len()) {
                let child = children(paths, |s| index_of(s) == Some(i));
                match (b.get(i), a.get(i)) {
                    (bv, Some(av)) if !child.is_empty() => {
                        let (bi, ai) = relevant_pair(
                            bv.unwrap_or(&Value::null()),
                            av,
                            &child,
                            shape.element(i),
                        );
                        if i < bitems.len() {
                            bitems[i] = bi;
                        }
                        items.push(ai);
                    }
                    (None, Some(av)) if nested => {
                        bitems.push(av.clone());
                        items.push(av.clone());
                    }
                    (Some(bv), _) if child.is_empty() => items.push(bv.clone()),
                    _ => {}
                }
            }
            let list = |items: Vec<Value>, of: &ValueList| {
                Value::List(match of.ty() {
                    Some(ty) => ValueList::typed(items, ty.clone()),
                    None => ValueList::from(items),
                })
            };
            (list(bitems, b), list(items, a))
        }
        _ => (before.clone(), after.clone()),
    }
}

/// What the schema says a value is, as far as drawing relevance needs.
#[derive(Clone, Copy)]
enum Shape<'a> {
    /// No schema: told from the value.
    Unknown,
    Block(&'a BlockShape),
    /// An object of nested attributes.
    Attributes(&'a BTreeMap<String, AttrShape>),
    /// Nested blocks or nested attribute objects in a list, set or map.
    Nested(Nesting, NestedElement<'a>),
    Type(&'a Type),
}

/// The element of a [`Shape::Nested`]: a block or an object of nested
/// attributes.
#[derive(Clone, Copy)]
enum NestedElement<'a> {
    Block(&'a BlockShape),
    Attributes(&'a BTreeMap<String, AttrShape>),
}

impl<'a> NestedElement<'a> {
    fn shape(self) -> Shape<'a> {
        match self {
            NestedElement::Block(b) => Shape::Block(b),
            NestedElement::Attributes(a) => Shape::Attributes(a),
        }
    }
}

impl<'a> Shape<'a> {
    fn child(self, key: &str) -> Shape<'a> {
        match self {
            Shape::Block(b) => {
                if let Some(a) = b.attributes.get(key) {
                    return attribute(a);
                }
                match b.blocks.get(key) {
                    Some(nb) if matches!(nb.nesting, Nesting::Single | Nesting::Group) => {
                        Shape::Block(&nb.block)
                    }
                    Some(nb) => Shape::Nested(nb.nesting, NestedElement::Block(&nb.block)),
                    None => Shape::Unknown,
                }
            }
            Shape::Attributes(attrs) => attrs.get(key).map_or(Shape::Unknown, attribute),
            Shape::Nested(Nesting::Map, e) => e.shape(),
            Shape::Type(Type::Object { attrs, .. }) => {
                attrs.get(key).map_or(Shape::Unknown, Shape::Type)
            }
            Shape::Type(Type::Map(t)) => Shape::Type(t),
            _ => Shape::Unknown,
        }
    }

    fn element(self, i: usize) -> Shape<'a> {
        match self {
            Shape::Nested(Nesting::List, e) => e.shape(),
            Shape::Type(Type::Tuple(ts)) => ts.get(i).map_or(Shape::Unknown, Shape::Type),
            _ => Shape::Unknown,
        }
    }

    /// Whether a sequence's elements are told apart by position.
    fn by_index(self, before: &ValueList, after: &ValueList) -> bool {
        match self {
            Shape::Nested(nesting, _) => nesting == Nesting::List,
            Shape::Type(t) => matches!(t, Type::Tuple(_)),
            _ => objects_in_order(before) && objects_in_order(after),
        }
    }
}

fn attribute(a: &AttrShape) -> Shape<'_> {
    match &a.nested {
        Some(n) if matches!(n.nesting, Nesting::Single | Nesting::Group) => {
            Shape::Attributes(&n.attributes)
        }
        Some(n) => Shape::Nested(n.nesting, NestedElement::Attributes(&n.attributes)),
        None => Shape::Type(&a.ty),
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

/// Without a schema: whether a sequence looks like nested blocks, a list
/// (not a set) of objects.
fn objects_in_order(l: &ValueList) -> bool {
    match l.ty() {
        Some(Type::Set(_)) => false,
        Some(Type::List(t)) => matches!(**t, Type::Object { .. }),
        _ => l
            .iter()
            .all(|v| matches!(v, Value::Map(_) | Value::Null(_))),
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
        let d = drift(Action::Delete, object(3, "test", "blue"), Value::null());
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

    /// With the schema's shape, a list attribute is drawn whole once any of
    /// it is relevant (Terraform does not follow plain lists by index);
    /// a list of nested blocks is followed by index.
    #[test]
    fn the_schema_tells_plain_lists_from_nested_blocks() {
        use crate::plan::shape::{AttrShape, NestedBlockShape};
        let object = |x: &str| Value::object([("x", Value::from(x))]);
        let value = |name: &str, x: &str, y: &str| {
            Value::object([(
                name,
                Value::List(ValueList::from(vec![object(x), object(y)])),
            )])
        };
        let element = Type::Object {
            attrs: [("x".to_string(), Type::String)].into(),
            optional: Default::default(),
        };
        let shape = BlockShape {
            attributes: [(
                "plain".to_string(),
                AttrShape {
                    ty: Type::List(Box::new(element)),
                    sensitive: false,
                    nested: None,
                },
            )]
            .into(),
            blocks: [(
                "rule".to_string(),
                NestedBlockShape {
                    nesting: Nesting::List,
                    block: BlockShape {
                        attributes: [(
                            "x".to_string(),
                            AttrShape {
                                ty: Type::String,
                                sensitive: false,
                                nested: None,
                            },
                        )]
                        .into(),
                        blocks: Default::default(),
                    },
                },
            )]
            .into(),
        };
        let second = |name: &str| vec![key(name), PathStep::Index(1)];
        let paths = second("plain");
        let after = relevant_after(
            &value("plain", "a", "b"),
            &value("plain", "c", "d"),
            &[paths.as_slice()],
            Shape::Block(&shape),
        );
        assert_eq!(after, value("plain", "c", "d"));
        let paths = second("rule");
        let after = relevant_after(
            &value("rule", "a", "b"),
            &value("rule", "c", "d"),
            &[paths.as_slice()],
            Shape::Block(&shape),
        );
        assert_eq!(after, value("rule", "a", "d"));
    }
}
