//! Map and object functions: `keys`, `values`, `lookup`, `merge`, `zipmap`
//! and `transpose`.
//!
//! Maps and objects are both `Value::Map`. Terraform's distinction shows
//! only in result types (merging maps of one element type gives a map,
//! anything else an object), which untyped values do not carry; the
//! elements are the same either way.
//!
//! Unknowns, as Terraform decides them: `keys`, `values`, `merge` and
//! `lookup` work on a known map whatever its elements; `lookup` returns
//! its default, even unknown, only when the key is missing; `zipmap` needs
//! every key known (keys make the result's shape) but not the values;
//! `transpose` needs everything.

use super::params;
use super::signatures::{LIST_STR, MAP_LIST_STR, STR};
use super::{
    Def, FnError, FnResult,
    Unknowns::{Allow, Deep, Shallow},
    def,
};
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
        Value::Map(m) => Ok(Value::List(m.keys().cloned().map(Value::String).collect())),
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

/// Without a default a missing key is an error (Terraform's message for a
/// map; for an object-typed value it names the missing attribute instead,
/// which untyped values cannot tell apart). A map element's type would
/// convert the default; untyped, the default is returned as given.
pub(super) fn lookup(a: &[Value]) -> FnResult {
    if a.len() > 3 {
        return Err(FnError::call(format!(
            "lookup() takes two or three arguments, got {}",
            a.len()
        )));
    }
    if a[0].is_unknown() || a[1].is_unknown() {
        return Ok(Value::unknown());
    }
    let key = match params::arg(a, 1, STR)? {
        Value::String(k) => k,
        _ => unreachable!("converted to string"),
    };
    let m = match &a[0] {
        Value::Map(m) => m,
        Value::Null(_) => return Err(FnError::arg(0, "argument must not be null")),
        _ => {
            return Err(FnError::arg(
                0,
                "lookup() requires a map as the first argument",
            ));
        }
    };
    // A map's default must convert to its element type, whether or not
    // the key is there: Terraform decides the result's type first.
    if let (Some(default), Some(Type::Map(elem))) = (a.get(2), m.ty()) {
        let default = crate::eval::convert::convert(default.clone(), elem).map_err(|_| {
            FnError::arg(
                2,
                "the default value must have the same type as the map elements",
            )
        })?;
        return Ok(m.get(&key).cloned().unwrap_or(default));
    }
    match (m.get(&key), a.get(2)) {
        (Some(v), _) => Ok(v.clone()),
        (None, Some(default)) => Ok(default.clone()),
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
            out.entry(s).or_default().push(key.clone());
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
