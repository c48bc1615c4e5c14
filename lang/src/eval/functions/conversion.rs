//! Explicit type conversions: `tostring`, `tonumber`, `tobool`, `tolist`,
//! `toset` and `tomap`, with Terraform's messages for explicit conversion.
//!
//! Null converts to null. An unknown argument gives an unknown result, but
//! unknown elements of a known collection stay in place: they have no type
//! here, so they fit whatever type their neighbours unify to. Collections
//! convert their elements to the one type they all unify to (`tolist(["a",
//! 3])` is `["a", "3"]`), or fail when there is none (a number and a bool).

use super::params::{self, Mismatch, Param, SET_ANY};
use super::{Def, FnError, FnResult, Unknowns::Shallow, def};
use fleetform_shared::value::Value;

pub(super) const DEFS: &[Def] = &[
    def("tostring", Shallow, tostring),
    def("tonumber", Shallow, tonumber),
    def("tobool", Shallow, tobool),
    def("tolist", Shallow, tolist),
    def("toset", Shallow, toset),
    def("tomap", Shallow, tomap),
];

/// Converts the one argument to `want`, as Terraform's `to…` functions do.
fn to(a: &[Value], want: Param) -> FnResult {
    let v = &a[0];
    params::convert(v, want).map_err(|m| {
        let msg = match (m, v) {
            // The type converts but the value does not: say which value.
            (Mismatch::Value(_), Value::String(s)) if matches!(want, Param::Bool) => format!(
                "cannot convert {s:?} to bool; only the strings \"true\" or \"false\" are allowed"
            ),
            (Mismatch::Value(_), Value::String(s)) if matches!(want, Param::Number) => format!(
                "cannot convert {s:?} to number; given string must be a decimal representation of a number"
            ),
            _ => format!(
                "cannot convert {} to {}",
                params::type_name(v),
                params::constraint_name(want)
            ),
        };
        FnError::arg(0, msg)
    })
}

pub(super) fn tostring(a: &[Value]) -> FnResult {
    to(a, Param::String)
}

/// Decimal text converts; hex, `inf` and surrounding spaces do not.
pub(super) fn tonumber(a: &[Value]) -> FnResult {
    to(a, Param::Number)
}

/// "true" and "false" convert, and so (as cty has it, though Terraform's
/// documentation does not say so) do "1" and "0".
pub(super) fn tobool(a: &[Value]) -> FnResult {
    to(a, Param::Bool)
}

/// A set converts in its set order.
pub(super) fn tolist(a: &[Value]) -> FnResult {
    to(a, params::LIST_ANY)
}

/// Duplicates go, and the elements take cty's set order (see `set_items`).
pub(super) fn toset(a: &[Value]) -> FnResult {
    to(a, SET_ANY)
}

pub(super) fn tomap(a: &[Value]) -> FnResult {
    to(a, Param::Map(&Param::Any))
}
