//! Functions over any collection: `length`, `coalesce`, `coalescelist`,
//! `one`, `alltrue`, `anytrue`, and the removed `list` and `map`.
//!
//! Unknowns, as Terraform decides them: `length` of a known collection is
//! known whatever its elements; `coalesce` and `coalescelist` are unknown
//! only when an unknown comes before the first usable argument;
//! `alltrue` is unknown at the first unknown element unless a `false`
//! came before it, `anytrue` is true at any known `true` and otherwise
//! unknown if any element is.

use super::params;
use super::signatures::LIST_BOOL;
use super::{
    Def, FnError, FnResult,
    Unknowns::{Allow, Shallow},
    def,
};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use unicode_segmentation::UnicodeSegmentation;

pub(super) const DEFS: &[Def] = &[
    def("length", Shallow, length),
    def("coalesce", Allow, coalesce),
    def("coalescelist", Allow, coalescelist),
    def("one", Shallow, one),
    def("alltrue", Shallow, alltrue),
    def("anytrue", Shallow, anytrue),
    def("list", Allow, list),
    def("map", Allow, map),
];

/// Characters of a string are grapheme clusters (`length("👾🕹️")` is 2).
pub(super) fn length(a: &[Value]) -> FnResult {
    let n = match &a[0] {
        Value::String(s) => s.graphemes(true).count(),
        Value::List(items) => items.len(),
        Value::Map(m) => m.len(),
        Value::Null(_) => return Err(FnError::arg(0, "argument must not be null")),
        _ => {
            return Err(FnError::call(
                "argument must be a string, a collection type, or a structural type",
            ));
        }
    };
    Ok(Value::int(n as i64))
}

/// All arguments convert to the one type they unify to (`coalesce(1, "a")`
/// is `"1"`); the empty string is skipped only when that type is string.
/// A `null` beside arguments of different kinds makes that type `dynamic`
/// (`coalesce(null, {a = 1}, "s")` is the object), as cty unifies.
pub(super) fn coalesce(a: &[Value]) -> FnResult {
    // No arguments have no type in common either, to cty.
    let ty = Some(a)
        .filter(|a| !a.is_empty())
        .and_then(params::unified_type)
        .ok_or_else(|| FnError::call("all arguments must have the same type"))?;
    for v in a {
        match params::conform(v.clone(), &ty) {
            Value::Unknown(_) => return Ok(Value::unknown_of(ty)),
            Value::Null(_) => {}
            Value::String(s) if s.is_empty() && ty == Type::String => {}
            v => return Ok(v),
        }
    }
    Err(FnError::call("no non-null, non-empty-string arguments"))
}

pub(super) fn coalescelist(a: &[Value]) -> FnResult {
    if a.is_empty() {
        return Err(FnError::call("at least one argument is required"));
    }
    // cty checks the arguments' types up to the first unknown one (whose
    // type it would not know).
    for v in a.iter().take_while(|v| !v.is_unknown()) {
        if !matches!(v, Value::List(_) | Value::Null(_)) {
            return Err(FnError::call(
                "coalescelist arguments must be lists or tuples",
            ));
        }
    }
    for v in a {
        match v {
            Value::Unknown(_) => return Ok(Value::unknown()),
            Value::List(items) if !items.is_empty() => return Ok(v.clone()),
            _ => {}
        }
    }
    Err(FnError::call("no non-null arguments"))
}

pub(super) fn one(a: &[Value]) -> FnResult {
    match &a[0] {
        Value::Null(_) => Err(FnError::arg(0, "argument must not be null")),
        Value::List(items) if items.len() <= 1 => Ok(items.first().cloned().unwrap_or_default()),
        _ => Err(FnError::arg(
            0,
            "must be a list, set, or tuple value with either zero or one elements",
        )),
    }
}

/// A null element counts as false.
pub(super) fn alltrue(a: &[Value]) -> FnResult {
    for v in params::list(a, 0, LIST_BOOL)? {
        match v {
            Value::Bool(true) => {}
            Value::Unknown(_) => return Ok(Value::unknown()),
            _ => return Ok(Value::Bool(false)),
        }
    }
    Ok(Value::Bool(true))
}

/// A null element counts as false.
pub(super) fn anytrue(a: &[Value]) -> FnResult {
    let mut unknown = false;
    for v in params::list(a, 0, LIST_BOOL)? {
        match v {
            Value::Bool(true) => return Ok(Value::Bool(true)),
            Value::Unknown(_) => unknown = true,
            _ => {}
        }
    }
    Ok(if unknown {
        Value::unknown()
    } else {
        Value::Bool(false)
    })
}

/// Removed in Terraform 0.12's language (and gone since 0.15); Terraform
/// still knows the name to say what to write instead.
pub(super) fn list(_: &[Value]) -> FnResult {
    Err(FnError::call(
        "the \"list\" function was deprecated in Terraform v0.12 and is no longer available; use tolist([ ... ]) syntax to write a literal list",
    ))
}

pub(super) fn map(_: &[Value]) -> FnResult {
    Err(FnError::call(
        "the \"map\" function was deprecated in Terraform v0.12 and is no longer available; use tomap({ ... }) syntax to write a literal map",
    ))
}
