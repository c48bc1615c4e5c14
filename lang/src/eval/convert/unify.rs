//! The type side of conversion, as cty 1.16 does it: the type a value
//! implies and cty's mismatch messages. Whether one type converts to
//! another, the element type a collection of `any` takes and unification
//! are in `common` (they call each other).
//!
//! A value's type is the one it carries (see `Value::ty`), else a tuple of
//! its elements' types or an object. A null or unknown carries its type
//! (`tostring(null)` is a string); an untyped one (the literal `null`) is
//! `any`. Beside primitives it takes their type (`[null, "a"]` is a list
//! of strings); beside structures cty's unification is `dynamic`, which a
//! list or set of `any` refuses (see `element_type`).

use super::common::can_convert;
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

/// The type a value has: the one it carries, else tuples and objects from
/// its structure; `any` for null and unknown.
pub(crate) fn infer(v: &Value) -> Type {
    v.ty()
}

/// True when `t` has `any` somewhere inside.
pub(crate) fn has_dynamic(t: &Type) -> bool {
    match t {
        Type::Dynamic => true,
        Type::List(e) | Type::Set(e) | Type::Map(e) => has_dynamic(e),
        Type::Object { attrs, .. } => attrs.values().any(has_dynamic),
        Type::Tuple(ts) => ts.iter().any(has_dynamic),
        _ => false,
    }
}

/// How cty names a type in "X required" messages.
pub(crate) fn friendly(t: &Type) -> String {
    let elem = |e: &Type| match e {
        Type::Dynamic => "any single type".to_string(),
        e => friendly(e),
    };
    match t {
        Type::Bool => "bool".into(),
        Type::Number => "number".into(),
        Type::String => "string".into(),
        Type::Dynamic => "any type".into(),
        Type::List(e) => format!("list of {}", elem(e)),
        Type::Set(e) => format!("set of {}", elem(e)),
        Type::Map(e) => format!("map of {}", elem(e)),
        Type::Object { .. } => "object".into(),
        Type::Tuple(_) => "tuple".into(),
    }
}

/// Why `got` does not convert to `want`, in cty's words (its MismatchMessage).
pub(crate) fn mismatch(got: &Type, want: &Type) -> String {
    let required = || format!("{} required", friendly(want));
    match (got, want) {
        (Type::Object { attrs: ga, .. }, Type::Object { attrs, optional }) => {
            let missing: Vec<&String> = attrs
                .keys()
                .filter(|k| !ga.contains_key(*k) && !optional.contains(*k))
                .collect();
            match missing.as_slice() {
                [] => {}
                [a] => return format!("attribute {a:?} is required"),
                [a, b] => return format!("attributes {a:?} and {b:?} are required"),
                [rest @ .., last] => {
                    let rest: Vec<String> = rest.iter().map(|k| format!("{k:?}")).collect();
                    return format!("attributes {}, and {last:?} are required", rest.join(", "));
                }
            }
            attrs
                .iter()
                .filter_map(|(k, wt)| ga.get(k).map(|gt| (k, gt, wt)))
                .find(|(_, gt, wt)| !can_convert(gt, wt))
                .map(|(k, gt, wt)| format!("attribute {k:?}: {}", mismatch(gt, wt)))
                .unwrap_or_else(|| "incorrect object attributes".into())
        }
        (Type::Tuple(_), Type::List(e)) if **e == Type::Dynamic => {
            "all list elements must have the same type".into()
        }
        (Type::Tuple(_), Type::Set(e)) if **e == Type::Dynamic => {
            "all set elements must have the same type".into()
        }
        (Type::Object { .. }, Type::Map(e)) if **e == Type::Dynamic => {
            "all map elements must have the same type".into()
        }
        (Type::Tuple(gs), Type::List(we) | Type::Set(we)) => gs
            .iter()
            .enumerate()
            .find(|(_, g)| !can_convert(g, we))
            .map(|(i, g)| format!("element {i}: {}", mismatch(g, we)))
            .unwrap_or_else(|| format!("all elements must be {}", friendly(we))),
        (Type::Object { attrs, .. }, Type::Map(we)) => attrs
            .iter()
            .find(|(_, g)| !can_convert(g, we))
            .map(|(k, g)| format!("element {k:?}: {}", mismatch(g, we)))
            .unwrap_or_else(|| format!("all elements must be {}", friendly(we))),
        (Type::List(ge) | Type::Set(ge), Type::List(we) | Type::Set(we)) => format!(
            "incorrect {} element type: {}",
            if matches!(want, Type::List(_)) {
                "list"
            } else {
                "set"
            },
            mismatch(ge, we)
        ),
        (Type::Map(ge), Type::Map(we)) => {
            format!("incorrect map element type: {}", mismatch(ge, we))
        }
        _ => required(),
    }
}
