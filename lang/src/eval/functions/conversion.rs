//! Explicit type conversions: `tostring`, `tonumber`, `tobool`, `tolist`,
//! `toset` and `tomap`, with Terraform's messages for explicit conversion.
//!
//! Null converts to a null of the target type (`tostring(null)` is a null
//! string). An unknown argument gives an unknown result, and unknown
//! elements of a known collection stay in place: an untyped one fits
//! whatever type its neighbours unify to. Collections
//! convert their elements to the one type they all unify to (`tolist(["a",
//! 3])` is `["a", "3"]`), or fail when there is none (a number and a bool).

use super::signatures::{BOOL, LIST_DYN, MAP_DYN, NUM, SET_DYN, STR, Ty};
use super::{Def, FnError, FnResult, Unknowns::Shallow, def};
use crate::eval::convert::{can_convert, convert, friendly, infer};
use fleetform_shared::value::Value;

pub(super) const DEFS: &[Def] = &[
    def("tostring", Shallow, tostring),
    def("tonumber", Shallow, tonumber),
    def("tobool", Shallow, tobool),
    def("tolist", Shallow, tolist),
    def("toset", Shallow, toset),
    def("tomap", Shallow, tomap),
];

/// Converts the one argument to `want`, as Terraform's `to…` functions
/// do, with their messages: a type that does not convert names both
/// types, a string that does not convert is quoted.
fn to(a: &[Value], want: Ty) -> FnResult {
    let v = &a[0];
    let (got, ty) = (infer(v), want.to_type());
    let cannot = || {
        format!(
            "cannot convert {} to {}",
            got.friendly_name(),
            friendly(&ty)
        )
    };
    if !can_convert(&got, &ty) {
        return Err(FnError::arg(0, cannot()));
    }
    convert(v.clone(), &ty).map_err(|_| {
        let msg = match (v, want) {
            (Value::String(s), BOOL) => format!(
                "cannot convert {s:?} to bool; only the strings \"true\" or \"false\" are allowed"
            ),
            (Value::String(s), NUM) => format!(
                "cannot convert {s:?} to number; given string must be a decimal representation of a number"
            ),
            _ => cannot(),
        };
        FnError::arg(0, msg)
    })
}

pub(super) fn tostring(a: &[Value]) -> FnResult {
    to(a, STR)
}

/// Decimal text converts; hex, `inf` and surrounding spaces do not.
pub(super) fn tonumber(a: &[Value]) -> FnResult {
    to(a, NUM)
}

/// "true" and "false" convert, and so (as cty has it, though Terraform's
/// documentation does not say so) do "1" and "0".
pub(super) fn tobool(a: &[Value]) -> FnResult {
    to(a, BOOL)
}

/// A set converts in its set order.
pub(super) fn tolist(a: &[Value]) -> FnResult {
    to(a, LIST_DYN)
}

/// Duplicates go, and the elements take cty's set order (see `set_items`).
pub(super) fn toset(a: &[Value]) -> FnResult {
    to(a, SET_DYN)
}

pub(super) fn tomap(a: &[Value]) -> FnResult {
    to(a, MAP_DYN)
}
