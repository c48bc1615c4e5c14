//! Map and object functions: `keys`, `values`, `lookup`, `merge`, `zipmap`
//! and `transpose`.
//!
//! Maps and objects are both `Value::Map`; the type a value carries tells
//! them apart where Terraform's functions do (`lookup`, `merge`).
//!
//! Unknowns, as Terraform decides them: `keys`, `values`, `merge` and
//! `lookup` work on a known map whatever its elements; `lookup` returns
//! its default, even unknown, only when the key is missing; `zipmap` needs
//! every key known (keys make the result's shape) but not the values;
//! `transpose` needs everything.

use super::params;
use super::signatures::{LIST_STR, MAP_LIST_STR};
use super::{
    Def, FnError, FnResult,
    Unknowns::{Allow, Deep, Shallow},
    def,
};
use crate::eval::convert::convert;
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

pub(super) const DEFS: &[Def] = &[
    def("keys", Shallow, keys),
    def("values", Shallow, values),
    def("lookup", Allow, lookup),
    def("merge", Shallow, merge),
    def("zipmap", Shallow, zipmap),
    def("transpose", Deep, transpose),
];

/// The keys in lexical (byte) order.
pub(super) fn keys(a: &[Value]) -> FnResult {
    match &a[0] {
        Value::Map(m) => Ok(Value::List(
            m.keys().map(|k| Value::String(k.to_string())).collect(),
        )),
        Value::Null(_) => Err(FnError::arg(0, "argument must not be null")),
        _ => Err(FnError::arg(0, "must have map or object type")),
    }
}

/// The values in the order of their keys.
pub(super) fn values(a: &[Value]) -> FnResult {
    match &a[0] {
        Value::Map(m) => Ok(Value::List(m.values().cloned().collect())),
        Value::Null(_) => Err(FnError::arg(0, "argument must not be null")),
        _ => Err(FnError::call(
            "values() requires a map as the first argument",
        )),
    }
}

/// As Terraform's `lookup`: the result's type is decided first, from the
/// map's type whether or not the map and key are known: a map's element
/// type, which a default must convert to (else an error, even when the key
/// is there); an object's attribute's type, or the default's when the
/// object has no such attribute (without a default, an error). Then a
/// missing key gives the default converted to that type.
pub(super) fn lookup(a: &[Value]) -> FnResult {
    if a.len() > 3 {
        return Err(FnError::call(format!(
            "lookup() takes two or three arguments, got {}",
            a.len()
        )));
    }
    let default = a.get(2);
    let ty = match a[0].ty() {
        Type::Object { attrs, .. } => match &a[1] {
            Value::String(k) => match (attrs.get(k), default) {
                (Some(t), _) => t.clone(),
                (None, Some(d)) => d.ty(),
                (None, None) => {
                    return Err(FnError::arg(
                        0,
                        format!("the given object has no attribute {k:?}"),
                    ));
                }
            },
            _ => Type::Dynamic,
        },
        Type::Map(elem) => {
            if let Some(d) = default {
                convert(d.clone(), &elem).map_err(|_| {
                    FnError::arg(
                        2,
                        "the default value must have the same type as the map elements",
                    )
                })?;
            }
            *elem
        }
        _ => {
            return Err(FnError::arg(
                0,
                "lookup() requires a map as the first argument",
            ));
        }
    };
    let (Value::Map(m), Value::String(key)) = (&a[0], &a[1]) else {
        return Ok(Value::unknown_of(ty));
    };
    match (m.get(key), default) {
        (Some(v), _) => Ok(v.clone()),
        (None, Some(d)) => convert(d.clone(), &ty).map_err(FnError::call),
        (None, None) => Err(FnError::call(format!("lookup failed to find key {key:?}"))),
    }
}

/// Later arguments win; null arguments are skipped.
pub(super) fn merge(a: &[Value]) -> FnResult {
    let mut out = BTreeMap::new();
    for v in a {
        match v {
            Value::Null(_) => {}
            Value::Map(m) => out.extend(m.iter().map(|(k, v)| (k.clone(), v.clone()))),
            v => {
                return Err(FnError::call(format!(
                    "arguments must be maps or objects, got {:?}",
                    crate::eval::convert::friendly(&v.ty())
                )));
            }
        }
    }
    Ok(Value::Map(out.into()))
}

/// A repeated key takes the value with the highest index.
pub(super) fn zipmap(a: &[Value]) -> FnResult {
    let keys = params::list(a, 0, LIST_STR)?;
    let values = match &a[1] {
        Value::List(items) if !matches!(items.ty(), Some(Type::Set(_))) => items,
        Value::Null(_) => return Err(FnError::arg(1, "argument must not be null")),
        _ => {
            return Err(FnError::call(
                "values argument must be a list or tuple value",
            ));
        }
    };
    if !keys.iter().all(Value::is_wholly_known) {
        return Ok(Value::unknown());
    }
    if keys.len() != values.len() {
        return Err(FnError::call(format!(
            "number of keys ({}) does not match number of values ({})",
            keys.len(),
            values.len()
        )));
    }
    let mut out = BTreeMap::new();
    for (i, (k, v)) in keys.into_iter().zip(values).enumerate() {
        match k {
            Value::String(k) => {
                out.insert(k, v.clone());
            }
            _ => {
                return Err(FnError::call(format!(
                    "keys list has null value at index {i}"
                )));
            }
        }
    }
    Ok(Value::Map(out.into()))
}

/// Swaps keys and values of a map of lists of strings; each new list is
/// sorted.
pub(super) fn transpose(a: &[Value]) -> FnResult {
    // A map whose element type cannot be a list fails on its type, not on
    // one of its elements.
    if let Value::Map(m) = &a[0]
        && let Some(Type::Map(elem)) = m.ty()
        && matches!(
            **elem,
            Type::Bool | Type::Number | Type::String | Type::Map(_) | Type::Object { .. }
        )
    {
        return Err(FnError::arg(
            0,
            "incorrect map element type: list of string required",
        ));
    }
    let Value::Map(input) = params::arg(a, 0, MAP_LIST_STR)? else {
        unreachable!("converted to a map")
    };
    let bad = || FnError::call("input must be a map of lists of strings");
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, list) in input {
        let items = match list {
            Value::List(items) => items,
            Value::Null(_) => return Err(FnError::call("input must not contain null list")),
            _ => return Err(bad()),
        };
        for item in items {
            let Value::String(s) = item else {
                return Err(bad());
            };
            out.entry(s).or_default().push(key.to_string());
        }
    }
    Ok(Value::Map(
        out.into_iter()
            .map(|(k, mut vs)| {
                vs.sort();
                (k, Value::List(vs.into_iter().map(Value::String).collect()))
            })
            .collect(),
    ))
}
