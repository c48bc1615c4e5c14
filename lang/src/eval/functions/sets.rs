//! Set functions: `setunion`, `setintersection`, `setsubtract` and
//! `setproduct`.
//!
//! A set is a `Value::List` of distinct elements in cty's set order (see
//! [`set_items`]): strings lexically, numbers numerically, then unknowns,
//! then null; lists and objects keep their first-seen order. Every
//! argument's elements convert to one type first, so `setunion([1], ["a"])`
//! is `["1", "a"]`.
//!
//! Unknowns, as Terraform decides them: a union keeps unknown elements
//! (each stays distinct, as it may or may not equal another); an
//! intersection or difference is unknown while any element is, since an
//! unknown may turn out to match. `setproduct` is unknown when an argument
//! is; an unknown element of a list argument stays in its place in the
//! tuples that use it (a list's length is known: Terraform does the same
//! for lists and tuples, though a set with unknown elements has an unknown
//! length there, which an untyped value cannot tell).

use super::params;
use super::signatures::SET_DYN;
use super::{
    Def, FnError, FnResult,
    Unknowns::{Allow, Deep, Shallow},
    def,
};
use crate::eval::convert::set_items;
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

pub(super) const DEFS: &[Def] = &[
    def("setunion", Shallow, setunion),
    def("setintersection", Deep, setintersection),
    def("setsubtract", Deep, setsubtract),
    def("setproduct", Allow, setproduct),
];

/// Every argument as a set, all converted to one element type.
fn sets(a: &[Value]) -> Result<Vec<Vec<Value>>, FnError> {
    let sets = (0..a.len())
        .map(|i| match params::arg(a, i, SET_DYN)? {
            Value::List(items) => Ok(items),
            _ => unreachable!("converted to a set"),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let ty = params::common_type(sets.iter().flatten())
        .ok_or_else(|| FnError::call("given sets must all have compatible element types"))?;
    Ok(sets
        .into_iter()
        .map(|s| set_items(s.into_iter().map(|v| params::conform(v, &ty)).collect()))
        .collect())
}

pub(super) fn setunion(a: &[Value]) -> FnResult {
    Ok(Value::tuple(set_items(sets(a)?.concat())))
}

pub(super) fn setintersection(a: &[Value]) -> FnResult {
    let mut sets = sets(a)?.into_iter();
    let mut out = sets.next().unwrap_or_default();
    for other in sets {
        out.retain(|v| other.contains(v));
    }
    Ok(Value::tuple(out))
}

pub(super) fn setsubtract(a: &[Value]) -> FnResult {
    let [mut first, second] = <[Vec<Value>; 2]>::try_from(sets(a)?).expect("arity checked");
    first.retain(|v| !second.contains(v));
    Ok(Value::tuple(first))
}

/// Every combination of one element from each argument, the first
/// argument varying slowest; each argument's elements convert to their
/// common type (`setproduct(["a"], ["b", 2])` pairs "a" with "2").
pub(super) fn setproduct(a: &[Value]) -> FnResult {
    if a.len() < 2 {
        return Err(FnError::call("at least two arguments are required"));
    }
    // As cty checks arguments: a null one is an error, but one without a
    // type (an unknown here) ends the checks with an unknown result.
    for (i, v) in a.iter().enumerate() {
        match v {
            Value::Null(_) => return Err(FnError::arg(i, "argument must not be null")),
            Value::Unknown(_) => return Ok(Value::unknown()),
            _ => {}
        }
    }
    let mut columns = Vec::with_capacity(a.len());
    for (i, v) in a.iter().enumerate() {
        let Value::List(items) = v else {
            return Err(FnError::arg(i, "a set or a list is required"));
        };
        let ty = params::common_type(items)
            .ok_or_else(|| FnError::arg(i, "all elements must be of the same type"))?;
        columns.push(conform_all(items, &ty));
    }
    let mut rows: Vec<Vec<Value>> = vec![vec![]];
    for column in &columns {
        rows = rows
            .iter()
            .flat_map(|row| {
                column.iter().map(move |v| {
                    let mut row = row.clone();
                    row.push(v.clone());
                    row
                })
            })
            .collect();
    }
    let rows: Vec<Value> = rows.into_iter().map(Value::tuple).collect();
    // cty: the product of sets is a set, so equal rows (from a list
    // argument that repeats an element) are one.
    let any_set = a.iter().any(|v| matches!(v.ty(), Type::Set(_)));
    Ok(Value::List(
        if any_set { set_items(rows) } else { rows }.into(),
    ))
}

fn conform_all(items: &[Value], ty: &Type) -> Vec<Value> {
    items
        .iter()
        .map(|v| params::conform(v.clone(), ty))
        .collect()
}
