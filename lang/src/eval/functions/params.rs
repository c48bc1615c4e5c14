//! Function parameters as cty types them, for untyped values: conversion of
//! an argument to a parameter type (`list(string)`, `set(any)`, `number`…)
//! with cty's messages, the element type unification behind "list of any
//! single type", equality with unknowns, and whole-number arguments.
//!
//! Values carry no type here. A `Value::List` is taken for what an HCL
//! literal makes of it, a tuple, and a `Value::Map` for an object; where a
//! typed Terraform value would be a list or map, unification is lenient:
//! sequences of different lengths (objects with different attributes)
//! unify as lists (maps) of one element type instead of failing as cty's
//! tuples (objects) would. Primitive conflicts fail as in cty.

use super::FnError;
use crate::eval::convert::set_items;
use fleetform_shared::value::{Number, Value};
use std::collections::BTreeMap;

/// A parameter type.
#[derive(Clone, Copy)]
pub(super) enum Param {
    /// Anything (cty's `DynamicPseudoType`).
    Any,
    String,
    Number,
    Bool,
    List(&'static Param),
    Set(&'static Param),
    Map(&'static Param),
}

pub(super) const LIST_ANY: Param = Param::List(&Param::Any);
pub(super) const SET_ANY: Param = Param::Set(&Param::Any);

/// Why an argument does not convert.
#[derive(Debug, PartialEq)]
pub(super) enum Mismatch {
    /// Its type cannot convert; cty says so before calling and names where
    /// ("element 0: string required").
    Type(String),
    /// Its type converts but this value does not ("a number is required");
    /// cty reports these without the path.
    Value(String),
}

impl Mismatch {
    pub(super) fn message(self) -> String {
        match self {
            Mismatch::Type(m) | Mismatch::Value(m) => m,
        }
    }

    fn within(self, step: impl FnOnce() -> String) -> Mismatch {
        match self {
            Mismatch::Type(m) => Mismatch::Type(format!("{}: {m}", step())),
            v => v,
        }
    }
}

/// gocty's message for a number that is not a whole `int`.
pub(super) const WHOLE: &str =
    "value must be a whole number, between -9223372036854775808 and 9223372036854775807";

/// Argument `i` converted to `p`; null is refused, as cty refuses it for
/// parameters that do not allow it. Errors blame the argument.
pub(super) fn arg(args: &[Value], i: usize, p: Param) -> Result<Value, FnError> {
    match &args[i] {
        Value::Null => Err(FnError::arg(i, "argument must not be null")),
        v => convert(v, p).map_err(|m| FnError::arg(i, m.message())),
    }
}

/// Argument `i` as a number.
pub(super) fn number(args: &[Value], i: usize) -> Result<Number, FnError> {
    match arg(args, i, Param::Number)? {
        Value::Number(n) => Ok(n),
        _ => Err(FnError::arg(i, "number required")),
    }
}

/// Argument `i` as the elements of a list of `elem`.
pub(super) fn list(args: &[Value], i: usize, elem: &'static Param) -> Result<Vec<Value>, FnError> {
    match arg(args, i, Param::List(elem))? {
        Value::List(items) => Ok(items.into_vec()),
        _ => Err(FnError::arg(i, "list required")),
    }
}

/// A whole number that fits `i64`, else gocty's message.
pub(super) fn whole(n: &Number) -> Result<i64, String> {
    n.as_i64().ok_or_else(|| WHOLE.to_string())
}

/// How cty names a value's type in messages. A list is named "tuple" and
/// a map "object": that is what HCL's brackets and braces make.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::List(_) => "tuple",
        Value::Map(_) => "object",
        Value::Null | Value::Unknown => "dynamic",
    }
}

/// How cty names a parameter type in "X required" messages.
pub(super) fn constraint_name(p: Param) -> String {
    let of = |kind: &str, e: &Param| match e {
        Param::Any => format!("{kind} of any single type"),
        e => format!("{kind} of {}", constraint_name(*e)),
    };
    match p {
        Param::Any => "any type".into(),
        Param::String => "string".into(),
        Param::Number => "number".into(),
        Param::Bool => "bool".into(),
        Param::List(e) => of("list", e),
        Param::Set(e) => of("set", e),
        Param::Map(e) => of("map", e),
    }
}

/// Converts a value to a parameter type as cty's unsafe conversion does
/// for function arguments. Null and unknown convert to anything.
pub(super) fn convert(v: &Value, p: Param) -> Result<Value, Mismatch> {
    if matches!(v, Value::Null | Value::Unknown) {
        return Ok(v.clone());
    }
    let required = || Mismatch::Type(format!("{} required", constraint_name(p)));
    match (p, v) {
        (Param::Any, v) => Ok(v.clone()),
        (Param::String, Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
            Ok(Value::String(primitive_text(v)))
        }
        (Param::Number, Value::Number(_)) => Ok(v.clone()),
        (Param::Number, Value::String(s)) => parse_number(s)
            .map(Value::Number)
            .ok_or_else(|| Mismatch::Value("a number is required".into())),
        (Param::Bool, Value::Bool(_)) => Ok(v.clone()),
        (Param::Bool, Value::String(s)) => parse_bool(s).map(Value::Bool),
        (Param::List(e) | Param::Set(e), Value::List(items)) => {
            let items = match e {
                Param::Any => unify_values(items).ok_or_else(|| {
                    let kind = if matches!(p, Param::Set(_)) {
                        "set"
                    } else {
                        "list"
                    };
                    Mismatch::Type(format!("all {kind} elements must have the same type"))
                })?,
                e => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| convert(v, *e).map_err(|m| m.within(|| format!("element {i}"))))
                    .collect::<Result<_, _>>()?,
            };
            Ok(Value::tuple(match p {
                Param::Set(_) => set_items(items),
                _ => items,
            }))
        }
        (Param::Map(Param::Any), Value::Map(m)) => {
            let shape = common_shape(m.values())
                .ok_or_else(|| Mismatch::Type("all map elements must have the same type".into()))?;
            Ok(Value::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), conform(v.clone(), &shape)))
                    .collect(),
            ))
        }
        (Param::Map(e), Value::Map(m)) => m
            .iter()
            .map(|(k, v)| {
                let v = convert(v, *e).map_err(|m| m.within(|| format!("element {k:?}")))?;
                Ok((k.clone(), v))
            })
            .collect::<Result<fleetform_shared::value::ValueMap, _>>()
            .map(Value::Map),
        _ => Err(required()),
    }
}

/// The text of a primitive as cty converts it to a string.
fn primitive_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

/// A number from its decimal text; unlike cty, `Number::parse` forgives
/// surrounding whitespace, so refuse it here.
pub(super) fn parse_number(s: &str) -> Option<Number> {
    if s.trim() != s {
        return None;
    }
    Number::parse(s)
}

/// cty's string to bool conversion: it also takes "1" and "0".
fn parse_bool(s: &str) -> Result<bool, Mismatch> {
    match s {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(Mismatch::Value(match s.to_lowercase().as_str() {
            "true" => "a bool is required; to convert from string, use lowercase \"true\"".into(),
            "false" => "a bool is required; to convert from string, use lowercase \"false\"".into(),
            _ => "a bool is required".into(),
        })),
    }
}

/// The type a value would have, for unification.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Shape {
    /// Null or unknown: no type of its own, so it fits any.
    Any,
    Bool,
    Number,
    String,
    Tuple(Vec<Shape>),
    /// A sequence whose elements all have one shape.
    List(Box<Shape>),
    Object(BTreeMap<String, Shape>),
    /// A mapping whose elements all have one shape.
    Map(Box<Shape>),
}

fn shape_of(v: &Value) -> Shape {
    match v {
        Value::Null | Value::Unknown => Shape::Any,
        Value::Bool(_) => Shape::Bool,
        Value::Number(_) => Shape::Number,
        Value::String(_) => Shape::String,
        Value::List(items) => Shape::Tuple(items.iter().map(shape_of).collect()),
        Value::Map(m) => Shape::Object(m.iter().map(|(k, v)| (k.clone(), shape_of(v))).collect()),
    }
}

/// The shape all of `values` convert to, as cty's unsafe unification
/// chooses it: string is the most general primitive (numbers and bools
/// convert to it), number and bool have none in common.
pub(super) fn common_shape<'a>(values: impl IntoIterator<Item = &'a Value>) -> Option<Shape> {
    unify(values.into_iter().map(shape_of).collect())
}

fn unify(shapes: Vec<Shape>) -> Option<Shape> {
    let shapes: Vec<Shape> = shapes.into_iter().filter(|s| *s != Shape::Any).collect();
    let Some(first) = shapes.first() else {
        return Some(Shape::Any);
    };
    if shapes.iter().all(|s| s == first) {
        return Some(first.clone());
    }
    let is = |f: fn(&Shape) -> bool| shapes.iter().all(f);
    if is(|s| matches!(s, Shape::Bool | Shape::Number | Shape::String)) {
        return shapes.contains(&Shape::String).then_some(Shape::String);
    }
    if is(|s| matches!(s, Shape::Tuple(_) | Shape::List(_))) {
        return unify_sequences(shapes);
    }
    if is(|s| matches!(s, Shape::Object(_) | Shape::Map(_))) {
        return unify_mappings(shapes);
    }
    None
}

/// Tuples of one length unify element by element; anything else as lists.
fn unify_sequences(shapes: Vec<Shape>) -> Option<Shape> {
    let tuples: Vec<&Vec<Shape>> = shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Tuple(t) => Some(t),
            _ => None,
        })
        .collect();
    if tuples.len() == shapes.len() && tuples.iter().all(|t| t.len() == tuples[0].len()) {
        let by_position = (0..tuples[0].len())
            .map(|i| unify(tuples.iter().map(|t| t[i].clone()).collect()))
            .collect::<Option<Vec<_>>>();
        if let Some(elems) = by_position {
            return Some(Shape::Tuple(elems));
        }
    }
    let elems = shapes
        .into_iter()
        .flat_map(|s| match s {
            Shape::Tuple(t) => t,
            Shape::List(e) => vec![*e],
            _ => vec![],
        })
        .collect();
    unify(elems).map(|e| Shape::List(Box::new(e)))
}

/// Objects with one set of attributes unify attribute by attribute;
/// anything else as maps.
fn unify_mappings(shapes: Vec<Shape>) -> Option<Shape> {
    let objects: Vec<&BTreeMap<String, Shape>> = shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Object(o) => Some(o),
            _ => None,
        })
        .collect();
    if objects.len() == shapes.len() && objects.iter().all(|o| o.keys().eq(objects[0].keys())) {
        let by_name = objects[0]
            .keys()
            .map(|k| {
                Some((
                    k.clone(),
                    unify(objects.iter().map(|o| o[k].clone()).collect())?,
                ))
            })
            .collect::<Option<BTreeMap<_, _>>>();
        if let Some(attrs) = by_name {
            return Some(Shape::Object(attrs));
        }
    }
    let elems = shapes
        .into_iter()
        .flat_map(|s| match s {
            Shape::Object(o) => o.into_values().collect(),
            Shape::Map(e) => vec![*e],
            _ => vec![],
        })
        .collect();
    unify(elems).map(|e| Shape::Map(Box::new(e)))
}

/// Converts a value to a shape that unification chose for it: only
/// numbers and bools ever change (to strings).
pub(super) fn conform(v: Value, shape: &Shape) -> Value {
    match (v, shape) {
        (v @ (Value::Number(_) | Value::Bool(_)), Shape::String) => {
            Value::String(primitive_text(&v))
        }
        (Value::List(items), Shape::Tuple(shapes)) => Value::List(
            items
                .into_iter()
                .zip(shapes)
                .map(|(v, s)| conform(v, s))
                .collect(),
        ),
        (Value::List(items), Shape::List(e)) => {
            Value::List(items.into_iter().map(|v| conform(v, e)).collect())
        }
        (Value::Map(m), Shape::Object(attrs)) => Value::Map(
            m.into_iter()
                .map(|(k, v)| {
                    let v = match attrs.get(&k) {
                        Some(s) => conform(v, s),
                        None => v,
                    };
                    (k, v)
                })
                .collect(),
        ),
        (Value::Map(m), Shape::Map(e)) => {
            Value::Map(m.into_iter().map(|(k, v)| (k, conform(v, e))).collect())
        }
        (v, _) => v,
    }
}

/// Values converted to the one type they unify to; None when they have none.
pub(super) fn unify_values(items: &[Value]) -> Option<Vec<Value>> {
    let shape = common_shape(items)?;
    Some(items.iter().map(|v| conform(v.clone(), &shape)).collect())
}

/// cty's `Equals`: None when unknowns leave it open. Collections compare
/// in order and the first undecided element leaves the whole undecided,
/// as cty's does.
pub(super) fn equal(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Unknown, _) | (_, Value::Unknown) => None,
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            all_equal(x.iter().zip(y))
        }
        (Value::Map(x), Value::Map(y)) => {
            if !x.keys().eq(y.keys()) {
                return Some(false);
            }
            all_equal(x.values().zip(y.values()))
        }
        (a, b) => Some(a == b),
    }
}

fn all_equal<'a>(pairs: impl Iterator<Item = (&'a Value, &'a Value)>) -> Option<bool> {
    for (x, y) in pairs {
        match equal(x, y) {
            Some(true) => {}
            other => return other,
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[Value]) -> Value {
        Value::tuple(items.to_vec())
    }

    #[test]
    fn unification_prefers_string_and_refuses_number_with_bool() {
        let n = Value::int(1);
        let s = Value::from("a");
        let b = Value::Bool(true);
        assert_eq!(common_shape(&[n.clone(), s.clone()]), Some(Shape::String));
        assert_eq!(common_shape(&[b.clone(), s.clone()]), Some(Shape::String));
        assert_eq!(common_shape(&[n.clone(), b.clone()]), None);
        assert_eq!(common_shape(&[Value::Null, n.clone()]), Some(Shape::Number));
        assert_eq!(common_shape(&[n.clone(), list(&[])]), None);
        assert_eq!(common_shape(&[]), Some(Shape::Any));
    }

    #[test]
    fn sequences_unify_by_position_then_as_lists() {
        let pair = |a: Value, b: Value| list(&[a, b]);
        let items = [
            pair(Value::int(1), Value::from("a")),
            pair(Value::int(2), Value::from("b")),
        ];
        assert_eq!(
            common_shape(&items),
            Some(Shape::Tuple(vec![Shape::Number, Shape::String]))
        );
        let ragged = [
            pair(Value::int(1), Value::from("a")),
            list(&[Value::int(2)]),
        ];
        assert_eq!(
            unify_values(&ragged),
            Some(vec![
                pair(Value::from("1"), Value::from("a")),
                list(&[Value::from("2")])
            ])
        );
        let maps = [
            Value::object([("a", Value::int(1))]),
            Value::object([("b", Value::Bool(true))]),
        ];
        assert_eq!(common_shape(&maps), None);
    }

    #[test]
    fn conversion_messages_follow_cty() {
        let msg = |v: Value, p: Param| convert(&v, p).unwrap_err();
        assert_eq!(
            msg(Value::from("x"), Param::Number),
            Mismatch::Value("a number is required".into())
        );
        assert_eq!(
            msg(Value::Bool(true), Param::Number),
            Mismatch::Type("number required".into())
        );
        assert_eq!(
            msg(list(&[list(&[])]), Param::List(&Param::String)),
            Mismatch::Type("element 0: string required".into())
        );
        assert_eq!(
            msg(Value::from("x"), LIST_ANY),
            Mismatch::Type("list of any single type required".into())
        );
        assert_eq!(
            msg(list(&[Value::int(1), Value::Bool(true)]), SET_ANY),
            Mismatch::Type("all set elements must have the same type".into())
        );
        assert_eq!(
            msg(Value::from("TRUE"), Param::Bool),
            Mismatch::Value(
                "a bool is required; to convert from string, use lowercase \"true\"".into()
            )
        );
        assert_eq!(
            convert(&Value::from("1"), Param::Bool),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            convert(&Value::from(" 1"), Param::Number),
            Err(Mismatch::Value("a number is required".into()))
        );
    }

    #[test]
    fn equality_is_open_only_where_unknowns_decide_it() {
        let a = Value::from("a");
        assert_eq!(equal(&a, &Value::Unknown), None);
        assert_eq!(equal(&a, &Value::from("a")), Some(true));
        assert_eq!(equal(&Value::int(1), &Value::from("1")), Some(false));
        let partial = list(&[Value::Unknown, Value::int(1)]);
        assert_eq!(equal(&partial, &list(&[Value::int(1)])), Some(false));
        assert_eq!(
            equal(&partial, &list(&[Value::int(2), Value::int(1)])),
            None
        );
    }
}
