//! Reading arguments inside function bodies: an argument as a value of a
//! parameter type (through the one conversion, `eval::convert`), whole
//! numbers, equality with unknowns, and the unification of values some
//! functions do on their own (`coalesce`, `setunion`, `matchkeys`).
//!
//! Unification here is lenient where it meets untyped values: sequences of
//! different lengths (objects with different attributes) unify as lists
//! (maps) of one element type instead of failing as cty's tuples (objects)
//! would. Primitive conflicts fail as in cty.

use super::FnError;
use super::signatures::{NUM, Ty};
use crate::eval::convert::{convert, primitive_string};
use fleetform_shared::types::Type;
use fleetform_shared::value::{Number, Value};
use std::collections::BTreeMap;

/// gocty's message for a number that is not a whole `int`.
pub(super) const WHOLE: &str =
    "value must be a whole number, between -9223372036854775808 and 9223372036854775807";

/// Argument `i` converted to `ty`; null is refused, as cty refuses it for
/// parameters that do not allow it. Errors blame the argument.
pub(super) fn arg(args: &[Value], i: usize, ty: Ty) -> Result<Value, FnError> {
    match &args[i] {
        Value::Null => Err(FnError::arg(i, "argument must not be null")),
        v => convert(v.clone(), &ty.to_type()).map_err(|m| FnError::arg(i, m)),
    }
}

/// Argument `i` as a number.
pub(super) fn number(args: &[Value], i: usize) -> Result<Number, FnError> {
    match arg(args, i, NUM)? {
        Value::Number(n) => Ok(n),
        _ => Err(FnError::arg(i, "number required")),
    }
}

/// Argument `i` as the elements of a list of type `list` (`list(string)`…).
pub(super) fn list(args: &[Value], i: usize, list: Ty) -> Result<Vec<Value>, FnError> {
    match arg(args, i, list)? {
        Value::List(items) => Ok(items.into_vec()),
        _ => Err(FnError::arg(i, "list required")),
    }
}

/// A whole number that fits `i64`, else gocty's message.
pub(super) fn whole(n: &Number) -> Result<i64, String> {
    n.as_i64().ok_or_else(|| WHOLE.to_string())
}

/// How cty names a value's type in messages (its `FriendlyName`): what
/// the value carries (`map of string`), else what its structure makes
/// (`tuple`, `object`).
pub(super) fn type_name(v: &Value) -> String {
    friendly_name(&v.ty())
}

fn friendly_name(t: &Type) -> String {
    match t {
        Type::String => "string".into(),
        Type::Number => "number".into(),
        Type::Bool => "bool".into(),
        Type::Dynamic => "dynamic".into(),
        Type::List(e) => format!("list of {}", friendly_name(e)),
        Type::Set(e) => format!("set of {}", friendly_name(e)),
        Type::Map(e) => format!("map of {}", friendly_name(e)),
        Type::Tuple(_) => "tuple".into(),
        Type::Object { .. } => "object".into(),
    }
}

/// The text of a primitive as cty converts it to a string.
fn primitive_text(v: &Value) -> String {
    primitive_string(v).unwrap_or_default()
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
        let shape = common_shape(&ragged).unwrap();
        assert_eq!(
            Some(ragged.map(|v| conform(v, &shape)).to_vec()),
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
    fn arguments_convert_with_ctys_messages() {
        use super::super::signatures::{BOOL, LIST_STR, SET_DYN};
        let msg = |v: Value, ty: Ty| arg(&[v], 0, ty).err().unwrap().msg;
        assert_eq!(msg(Value::from("x"), NUM), "a number is required");
        assert_eq!(msg(Value::Bool(true), NUM), "number required");
        assert_eq!(
            msg(list(&[list(&[])]), LIST_STR),
            "element 0: string required"
        );
        assert_eq!(
            msg(list(&[Value::int(1), Value::Bool(true)]), SET_DYN),
            "all set elements must have the same type"
        );
        assert_eq!(
            msg(Value::from("TRUE"), BOOL),
            "a bool is required; to convert from string, use lowercase \"true\""
        );
        assert_eq!(msg(Value::Null, BOOL), "argument must not be null");
        assert_eq!(
            arg(&[Value::from("1")], 0, BOOL).ok(),
            Some(Value::Bool(true))
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
