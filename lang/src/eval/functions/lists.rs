//! Sequence functions: `concat`, `element`, `contains`, `index`, `compact`,
//! `distinct`, `flatten`, `reverse`, `slice`, `sort`, `chunklist`,
//! `matchkeys` and `range`.
//!
//! Unknowns, as Terraform decides them: functions that only move elements
//! (`concat`, `element`, `reverse`, `slice`, `chunklist`) keep unknown
//! elements in place; `contains` and `index` are known when a known
//! element decides them before an unknown could; `compact`, `distinct`,
//! `sort` and `range` need every element; `flatten` is unknown when an
//! unknown element could itself be a list.

use super::params;
use super::signatures::{LIST_DYN, LIST_STR};
use super::{
    Def, FnError, FnResult,
    Unknowns::{Deep, Shallow},
    def,
};
use fleetform_shared::types::Type;
use fleetform_shared::value::{Number, Value};

pub(super) const DEFS: &[Def] = &[
    def("concat", Shallow, concat),
    def("element", Shallow, element),
    def("contains", Shallow, contains),
    def("index", Shallow, index),
    def("compact", Deep, compact),
    def("distinct", Deep, distinct),
    def("flatten", Shallow, flatten),
    def("reverse", Shallow, reverse),
    def("slice", Shallow, slice),
    def("sort", Shallow, sort),
    def("chunklist", Shallow, chunklist),
    def("matchkeys", Shallow, matchkeys),
    def("range", Deep, range),
];

/// Argument `i` as a list, set or tuple (null refused), or `wrong` for
/// anything else.
fn seq(a: &[Value], i: usize, wrong: impl FnOnce(&Value) -> FnError) -> Result<&[Value], FnError> {
    match &a[i] {
        Value::List(items) => Ok(items),
        Value::Null(_) => Err(FnError::arg(i, "argument must not be null")),
        v => Err(wrong(v)),
    }
}

/// Like [`seq`], but a set is a wrong argument too: Terraform's `concat`
/// and `index` want an order, which a set does not have.
fn ordered(
    a: &[Value],
    i: usize,
    wrong: impl FnOnce(&Value) -> FnError,
) -> Result<&[Value], FnError> {
    if matches!(&a[i], Value::List(l) if matches!(l.ty(), Some(fleetform_shared::types::Type::Set(_))))
    {
        return Err(wrong(&a[i]));
    }
    seq(a, i, wrong)
}

pub(super) fn concat(a: &[Value]) -> FnResult {
    if a.is_empty() {
        return Err(FnError::call("at least one argument is required"));
    }
    let mut out = Vec::new();
    for i in 0..a.len() {
        out.extend_from_slice(ordered(a, i, |v| {
            FnError::arg(
                i,
                format!(
                    "all arguments must be lists or tuples; got {}",
                    crate::eval::convert::friendly(&v.ty())
                ),
            )
        })?);
    }
    Ok(Value::tuple(out))
}

/// Wraps around: the index is taken modulo the length, as cty 1.16 takes
/// it (Go's remainder, with the sign of the index). A negative remainder
/// counts from the end of a list; for a tuple cty indexes its element
/// types with it and Terraform 1.11 crashes, so that stays an error here.
pub(super) fn element(a: &[Value]) -> FnResult {
    let index = params::number(a, 1)?;
    let is_list = matches!(a[0].ty(), Type::List(_));
    let items = seq(a, 0, |v| {
        FnError::call(format!(
            "cannot read elements from {}",
            params::type_name(v)
        ))
    })?;
    let index = params::whole(&index)
        .map(i128::from)
        .map_err(|e| FnError::call(format!("invalid index: {e}")))?;
    if items.is_empty() {
        return Err(FnError::call(
            "cannot use element function with an empty list",
        ));
    }
    let len = items.len() as i128;
    let at = match index % len {
        r if r >= 0 => r,
        r if is_list => r + len,
        _ => {
            return Err(FnError::call(
                "cannot use element function with a negative index into a tuple (Terraform 1.11 crashes there)",
            ));
        }
    };
    Ok(items[at as usize].clone())
}

/// Known as soon as an element equals the value; unknown when no element
/// does but an unknown one might.
pub(super) fn contains(a: &[Value]) -> FnResult {
    let items = seq(a, 0, |_| {
        FnError::call("argument must be list, tuple, or set")
    })?;
    if a[1].is_null() {
        return Err(FnError::arg(1, "argument must not be null"));
    }
    let mut open = false;
    for v in items {
        match params::equal(&a[1], v) {
            Some(true) => return Ok(Value::Bool(true)),
            Some(false) => {}
            None => open = true,
        }
    }
    Ok(if open {
        Value::unknown()
    } else {
        Value::Bool(false)
    })
}

/// Unknown when an element before the first match might equal the value.
pub(super) fn index(a: &[Value]) -> FnResult {
    // Terraform checks for a null value before it looks at the list.
    if a[1].is_null() {
        return Err(FnError::arg(1, "argument must not be null"));
    }
    let items = ordered(a, 0, |_| FnError::call("argument must be a list or tuple"))?;
    if items.is_empty() {
        return Err(FnError::call("cannot search an empty list"));
    }
    for (i, v) in items.iter().enumerate() {
        match params::equal(v, &a[1]) {
            Some(true) => return Ok(Value::int(i as i64)),
            Some(false) => {}
            None => return Ok(Value::unknown()),
        }
    }
    Err(FnError::call("item not found"))
}

/// Removes null and empty-string elements of a list of strings.
pub(super) fn compact(a: &[Value]) -> FnResult {
    let items = params::list(a, 0, LIST_STR)?;
    Ok(Value::List(
        items
            .into_iter()
            .filter(|v| !v.is_null() && v.as_str() != Some(""))
            .collect(),
    ))
}

/// The first occurrence of each element, in order, after the elements
/// convert to their common type (`distinct([1, "1"])` is `["1"]`).
pub(super) fn distinct(a: &[Value]) -> FnResult {
    let mut out: Vec<Value> = Vec::new();
    for v in params::list(a, 0, LIST_DYN)? {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(Value::tuple(out))
}

/// Flattens nested sequences (not sequences inside maps); null elements stay.
pub(super) fn flatten(a: &[Value]) -> FnResult {
    fn flat(items: &[Value], out: &mut Vec<Value>) -> bool {
        for v in items {
            match v {
                Value::List(inner) => {
                    if !flat(inner, out) {
                        return false;
                    }
                }
                // An unknown element has no type here: it may be a list,
                // so the result's length is unknown.
                Value::Unknown(_) => return false,
                v => out.push(v.clone()),
            }
        }
        true
    }
    let items = seq(a, 0, |_| {
        FnError::call("can only flatten lists, sets and tuples")
    })?;
    let mut out = Vec::new();
    Ok(if flat(items, &mut out) {
        Value::tuple(out)
    } else {
        Value::unknown()
    })
}

pub(super) fn reverse(a: &[Value]) -> FnResult {
    let items = seq(a, 0, |v| {
        FnError::arg(
            0,
            format!(
                "can only reverse list or tuple values, not {}",
                params::type_name(v)
            ),
        )
    })?;
    Ok(Value::List(items.iter().rev().cloned().collect()))
}

/// Elements from `start` (inclusive) to `end` (exclusive).
pub(super) fn slice(a: &[Value]) -> FnResult {
    // Terraform refuses a set before it looks at the indices.
    let items = ordered(a, 0, |v| match v {
        Value::List(_) => FnError::arg(
            0,
            "cannot slice a set, because its elements do not have indices; explicitly convert to a list if the ordering of the result is not important",
        ),
        _ => FnError::arg(0, "must be a list or tuple value"),
    })?;
    let len = items.len() as i64;
    let bound = |i: usize, which: &str| -> Result<i64, FnError> {
        let n = params::whole(&params::number(a, i)?)
            .map_err(|e| FnError::arg(i, format!("invalid {which} index: {e}")))?;
        if n < 0 {
            return Err(FnError::arg(
                i,
                format!("{which} index must not be less than zero"),
            ));
        }
        if n > len {
            return Err(FnError::arg(
                i,
                format!("{which} index must not be greater than the length of the list"),
            ));
        }
        Ok(n)
    };
    let (start, end) = (bound(1, "start")?, bound(2, "end")?);
    if start > end {
        return Err(FnError::arg(
            1,
            "start index must not be greater than end index",
        ));
    }
    Ok(Value::tuple(items[start as usize..end as usize].to_vec()))
}

/// Sorts strings by their bytes (numbers and bools sort as their text);
/// unknown until every element is known.
pub(super) fn sort(a: &[Value]) -> FnResult {
    let items = params::list(a, 0, LIST_STR)?;
    if !items.iter().all(Value::is_wholly_known) {
        return Ok(Value::unknown());
    }
    let mut strings = Vec::with_capacity(items.len());
    for (i, v) in items.into_iter().enumerate() {
        match v {
            Value::String(s) => strings.push(s),
            _ => {
                return Err(FnError::call(format!(
                    "given list element {i} is null; a null string cannot be sorted"
                )));
            }
        }
    }
    strings.sort();
    Ok(Value::List(
        strings.into_iter().map(Value::String).collect(),
    ))
}

/// Chunks of `size` elements, the last one shorter; size 0 makes one chunk.
pub(super) fn chunklist(a: &[Value]) -> FnResult {
    let items = params::list(a, 0, LIST_DYN)?;
    let size = params::whole(&params::number(a, 1)?)
        .map_err(|e| FnError::call(format!("invalid size: {e}")))?;
    if size < 0 {
        return Err(FnError::call("the size argument must be positive"));
    }
    if items.is_empty() {
        return Ok(Value::tuple(vec![]));
    }
    if size == 0 {
        return Ok(Value::tuple(vec![Value::tuple(items)]));
    }
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    Ok(Value::List(
        items
            .chunks(size)
            .map(|c| Value::tuple(c.to_vec()))
            .collect(),
    ))
}

/// The values whose keys (at the same index) are in the search set; keys
/// and search set convert to their common type first.
///
/// Terraform 1.9 returns a known empty list when a key meets an unknown
/// element of the search set; the result may well be non-empty once that
/// element is known, so it is unknown here instead.
pub(super) fn matchkeys(a: &[Value]) -> FnResult {
    let values = params::list(a, 0, LIST_DYN)?;
    let keys = params::list(a, 1, LIST_DYN)?;
    let search = params::list(a, 2, LIST_DYN)?;
    let ty = params::common_type(keys.iter().chain(&search))
        .ok_or_else(|| FnError::call("keys and searchset must be of the same type"))?;
    if values.len() != keys.len() {
        return Err(FnError::call("length of keys and values should be equal"));
    }
    if search.is_empty() {
        return Ok(Value::tuple(vec![]));
    }
    if !values.iter().chain(&keys).all(Value::is_wholly_known) {
        return Ok(Value::unknown());
    }
    let search: Vec<Value> = search
        .into_iter()
        .map(|v| params::conform(v, &ty))
        .collect();
    let mut out = Vec::new();
    for (value, key) in values.into_iter().zip(keys) {
        let key = params::conform(key, &ty);
        for s in &search {
            match params::equal(&key, s) {
                Some(true) => {
                    out.push(value);
                    break;
                }
                Some(false) => {}
                None => return Ok(Value::unknown()),
            }
        }
    }
    Ok(Value::tuple(out))
}

/// Numbers from `start` towards `limit` (exclusive) by `step`, computed
/// exactly so `range(0, 1, 0.1)` yields 0.1, 0.2, 0.3… as cty's 512-bit
/// floats print them, and at most 1024 of them.
pub(super) fn range(a: &[Value]) -> FnResult {
    if !(1..=3).contains(&a.len()) {
        return Err(FnError::call("must have one, two, or three arguments"));
    }
    let nums = (0..a.len())
        .map(|i| params::number(a, i))
        .collect::<Result<Vec<_>, _>>()?;
    let toward = |from: &Number, to: &Number| Number::Int(if to < from { -1 } else { 1 });
    let (start, limit, step) = match nums.as_slice() {
        [limit] => (
            Number::Int(0),
            limit.clone(),
            toward(&Number::Int(0), limit),
        ),
        [start, limit] => (start.clone(), limit.clone(), toward(start, limit)),
        [start, limit, step] => (start.clone(), limit.clone(), step.clone()),
        _ => unreachable!("arity checked"),
    };
    // cty 1.16 refuses a zero step by comparing it with its own `cty.Zero`
    // as Go structs (a pointer comparison), which a zero from the
    // configuration never passes: a zero step counts as positive, and
    // runs into the ordering check or the 1,024-value limit, as in
    // Terraform 1.11.
    let down = step.signum() < 0;
    if down && limit > start {
        return Err(FnError::arg(
            1,
            "end must be less than start when step is negative",
        ));
    }
    if !down && limit < start {
        return Err(FnError::arg(
            1,
            "end must be greater than start when step is positive",
        ));
    }
    let mut out = Vec::new();
    let mut x = start;
    while if down { x > limit } else { x < limit } {
        if out.len() >= 1024 {
            return Err(FnError::call(
                "more than 1024 values were generated; either decrease the difference between start and end or use a smaller step",
            ));
        }
        let next = x.add(&step);
        out.push(Value::Number(x));
        x = next;
    }
    Ok(Value::tuple(out))
}
