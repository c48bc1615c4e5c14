//! Collection functions: length, concat, merge, lookup, element, range, tolist…

use super::{
    Def, FnError, FnResult,
    Unknowns::{Deep, Shallow},
    def, int_arg, list_arg, map_arg, num_arg, str_arg,
};
use crate::eval::convert::set_items;
use fleetform_shared::value::{Number, Value};
use std::collections::BTreeMap;

pub(super) const DEFS: &[Def] = &[
    def("length", 1, Some(1), Shallow, length),
    def("concat", 0, None, Shallow, concat),
    def("merge", 0, None, Shallow, merge),
    def("keys", 1, Some(1), Shallow, keys),
    def("values", 1, Some(1), Shallow, values),
    def("lookup", 2, Some(3), Shallow, lookup),
    def("element", 2, Some(2), Shallow, element),
    def("contains", 2, Some(2), Deep, contains),
    def("coalesce", 1, None, Shallow, coalesce),
    def("coalescelist", 1, None, Shallow, coalescelist),
    def("compact", 1, Some(1), Deep, compact),
    def("distinct", 1, Some(1), Deep, distinct),
    def("flatten", 1, Some(1), Shallow, flatten),
    def("reverse", 1, Some(1), Shallow, reverse),
    def("slice", 3, Some(3), Shallow, slice),
    def("index", 2, Some(2), Deep, index),
    def("zipmap", 2, Some(2), Shallow, zipmap),
    def("one", 1, Some(1), Shallow, one),
    def("sort", 1, Some(1), Deep, sort),
    def("range", 1, Some(3), Deep, range),
    def("tolist", 1, Some(1), Shallow, tolist),
    def("toset", 1, Some(1), Deep, toset),
    def("tomap", 1, Some(1), Shallow, tomap),
];

pub(super) fn length(a: &[Value]) -> FnResult {
    let n = match &a[0] {
        Value::String(s) => s.chars().count(),
        Value::List(items) => items.len(),
        Value::Map(m) => m.len(),
        Value::Null => return Err(FnError::arg(0, "argument must not be null")),
        v => {
            return Err(FnError::arg(
                0,
                format!("collection or string required, but have {}", v.kind()),
            ));
        }
    };
    Ok(Value::int(n as i64))
}

pub(super) fn concat(a: &[Value]) -> FnResult {
    let mut out = Vec::new();
    for i in 0..a.len() {
        out.extend(list_arg(a, i)?.iter().cloned());
    }
    Ok(Value::List(out))
}

pub(super) fn merge(a: &[Value]) -> FnResult {
    let mut out = BTreeMap::new();
    for (i, v) in a.iter().enumerate() {
        match v {
            Value::Null => {}
            Value::Map(m) => out.extend(m.iter().map(|(k, v)| (k.clone(), v.clone()))),
            v => {
                return Err(FnError::arg(
                    i,
                    format!("map or object required, but have {}", v.kind()),
                ));
            }
        }
    }
    Ok(Value::Map(out))
}

pub(super) fn keys(a: &[Value]) -> FnResult {
    Ok(Value::List(
        map_arg(a, 0)?
            .keys()
            .map(|k| Value::String(k.clone()))
            .collect(),
    ))
}

pub(super) fn values(a: &[Value]) -> FnResult {
    Ok(Value::List(map_arg(a, 0)?.values().cloned().collect()))
}

pub(super) fn lookup(a: &[Value]) -> FnResult {
    let m = map_arg(a, 0)?;
    let key = str_arg(a, 1)?;
    match (m.get(&key), a.get(2)) {
        (Some(v), _) => Ok(v.clone()),
        (None, Some(default)) => Ok(default.clone()),
        (None, None) => Err(FnError::call(format!(
            "the given key {key:?} does not identify an element in this collection value"
        ))),
    }
}

pub(super) fn element(a: &[Value]) -> FnResult {
    let items = list_arg(a, 0)?;
    let i = int_arg(a, 1)?;
    if i < 0 {
        return Err(FnError::arg(
            1,
            "cannot use element function with a negative index",
        ));
    }
    if items.is_empty() {
        return Err(FnError::arg(
            0,
            "cannot use element function with an empty list",
        ));
    }
    Ok(items[(i as usize) % items.len()].clone())
}

pub(super) fn contains(a: &[Value]) -> FnResult {
    Ok(Value::Bool(list_arg(a, 0)?.contains(&a[1])))
}

pub(super) fn coalesce(a: &[Value]) -> FnResult {
    for v in a {
        match v {
            Value::Unknown => return Ok(Value::Unknown),
            Value::Null => {}
            Value::String(s) if s.is_empty() => {}
            v => return Ok(v.clone()),
        }
    }
    Err(FnError::call("no non-null, non-empty-string arguments"))
}

pub(super) fn coalescelist(a: &[Value]) -> FnResult {
    for (i, v) in a.iter().enumerate() {
        match v {
            Value::Unknown => return Ok(Value::Unknown),
            Value::List(items) if items.is_empty() => {}
            Value::List(_) => return Ok(v.clone()),
            Value::Null => {}
            v => {
                return Err(FnError::arg(
                    i,
                    format!("list required, but have {}", v.kind()),
                ));
            }
        }
    }
    Err(FnError::call("no non-null arguments"))
}

pub(super) fn compact(a: &[Value]) -> FnResult {
    Ok(Value::List(
        list_arg(a, 0)?
            .iter()
            .filter(|v| !v.is_null() && v.as_str() != Some(""))
            .cloned()
            .collect(),
    ))
}

pub(super) fn distinct(a: &[Value]) -> FnResult {
    Ok(Value::List(set_items(list_arg(a, 0)?.clone())))
}

pub(super) fn flatten(a: &[Value]) -> FnResult {
    fn flat(items: &[Value], out: &mut Vec<Value>) -> bool {
        for v in items {
            match v {
                Value::List(inner) => {
                    if !flat(inner, out) {
                        return false;
                    }
                }
                // An unknown element may be a list: the result's shape is unknown.
                Value::Unknown => return false,
                v => out.push(v.clone()),
            }
        }
        true
    }
    let mut out = Vec::new();
    Ok(if flat(list_arg(a, 0)?, &mut out) {
        Value::List(out)
    } else {
        Value::Unknown
    })
}

pub(super) fn reverse(a: &[Value]) -> FnResult {
    Ok(Value::List(list_arg(a, 0)?.iter().rev().cloned().collect()))
}

pub(super) fn slice(a: &[Value]) -> FnResult {
    let items = list_arg(a, 0)?;
    let (start, end) = (int_arg(a, 1)?, int_arg(a, 2)?);
    if start < 0 || start as usize > items.len() {
        return Err(FnError::arg(1, "start index out of range"));
    }
    if end < start || end as usize > items.len() {
        return Err(FnError::arg(2, "end index out of range"));
    }
    Ok(Value::List(items[start as usize..end as usize].to_vec()))
}

pub(super) fn index(a: &[Value]) -> FnResult {
    let items = list_arg(a, 0)?;
    items
        .iter()
        .position(|v| v == &a[1])
        .map(|i| Value::int(i as i64))
        .ok_or_else(|| FnError::call("item not found"))
}

pub(super) fn zipmap(a: &[Value]) -> FnResult {
    let (ks, vs) = (list_arg(a, 0)?, list_arg(a, 1)?);
    if ks.len() != vs.len() {
        return Err(FnError::call(format!(
            "number of keys ({}) does not match number of values ({})",
            ks.len(),
            vs.len()
        )));
    }
    let mut out = BTreeMap::new();
    for (i, (k, v)) in ks.iter().zip(vs).enumerate() {
        match k {
            Value::Unknown => return Ok(Value::Unknown),
            k => {
                let k = crate::eval::ops::to_string(k)
                    .ok_or_else(|| FnError::arg(0, format!("element {i}: string required")))?;
                out.insert(k, v.clone());
            }
        }
    }
    Ok(Value::Map(out))
}

pub(super) fn one(a: &[Value]) -> FnResult {
    match list_arg(a, 0)?.as_slice() {
        [] => Ok(Value::Null),
        [v] => Ok(v.clone()),
        _ => Err(FnError::arg(
            0,
            "must be a list, set, or tuple value with either zero or one elements",
        )),
    }
}

pub(super) fn sort(a: &[Value]) -> FnResult {
    let mut strings = (0..list_arg(a, 0)?.len())
        .map(|i| {
            str_arg(list_arg(a, 0)?, i).map_err(|_| FnError::arg(0, "list of string required"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    strings.sort();
    Ok(Value::List(
        strings.into_iter().map(Value::String).collect(),
    ))
}

/// `range`, stepping with exact arithmetic so `range(0, 1, 0.1)` yields
/// 0.1, 0.2, 0.3... rather than accumulated float error.
pub(super) fn range(a: &[Value]) -> FnResult {
    let nums = (0..a.len())
        .map(|i| num_arg(a, i))
        .collect::<Result<Vec<_>, _>>()?;
    let (start, limit, step) = match nums.as_slice() {
        [limit] => (Number::Int(0), limit.clone(), Number::Int(1)),
        [start, limit] => {
            let step = if start <= limit { 1 } else { -1 };
            (start.clone(), limit.clone(), Number::Int(step))
        }
        [start, limit, step] => (start.clone(), limit.clone(), step.clone()),
        _ => unreachable!("arity checked"),
    };
    let up = match step.signum() {
        0 => return Err(FnError::arg(2, "step must not be zero")),
        s => s > 0,
    };
    if (up && start > limit) || (!up && start < limit) {
        return Err(FnError::call("the step must move from start towards limit"));
    }
    let mut out = Vec::new();
    let mut x = start;
    while (up && x < limit) || (!up && x > limit) {
        if out.len() >= 1024 {
            return Err(FnError::call(
                "more than 1024 values were generated; either decrease the difference between start and end or use a smaller step",
            ));
        }
        let next = x.add(&step);
        out.push(Value::Number(x));
        x = next;
    }
    Ok(Value::List(out))
}

pub(super) fn tolist(a: &[Value]) -> FnResult {
    match &a[0] {
        v @ (Value::List(_) | Value::Null) => Ok(v.clone()),
        v => Err(FnError::arg(
            0,
            format!("cannot convert {} to list", v.kind()),
        )),
    }
}

pub(super) fn toset(a: &[Value]) -> FnResult {
    match &a[0] {
        Value::List(items) => Ok(Value::List(set_items(items.clone()))),
        Value::Null => Ok(Value::Null),
        v => Err(FnError::arg(
            0,
            format!("cannot convert {} to set", v.kind()),
        )),
    }
}

pub(super) fn tomap(a: &[Value]) -> FnResult {
    match &a[0] {
        v @ (Value::Map(_) | Value::Null) => Ok(v.clone()),
        v => Err(FnError::arg(
            0,
            format!("cannot convert {} to map", v.kind()),
        )),
    }
}
