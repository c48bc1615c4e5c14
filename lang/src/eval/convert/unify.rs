//! The type side of conversion, as cty 1.16 does it: the type a value
//! implies, whether one type converts to another, the element type a
//! collection of `any` takes, and cty's mismatch messages. Unification
//! itself is in `common`.
//!
//! A value's type is the one it carries (see `Value::ty`), else a tuple of
//! its elements' types or an object. A null or unknown carries its type
//! (`tostring(null)` is a string); an untyped one (the literal `null`) is
//! `any`. Beside primitives it takes their type (`[null, "a"]` is a list
//! of strings); beside structures cty's unification is `dynamic`, which a
//! list or set of `any` refuses (see `element_type`).

use super::common::unify;
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

/// Whether cty has a conversion (unsafe ones included) from `got` to `want`.
pub(crate) fn can_convert(got: &Type, want: &Type) -> bool {
    if got == want || *want == Type::Dynamic || *got == Type::Dynamic {
        return true;
    }
    match (got, want) {
        (g, w) if g.is_primitive() && w.is_primitive() => {
            // Everything becomes a string; strings may parse as anything;
            // numbers and bools never convert into each other.
            *w == Type::String || *g == Type::String
        }
        (Type::Object { attrs: ga, .. }, Type::Object { attrs, optional }) => {
            attrs.iter().all(|(name, wt)| match ga.get(name) {
                Some(gt) => can_convert(gt, wt),
                None => optional.contains(name),
            })
        }
        (Type::Map(ge), Type::Object { attrs, optional }) => attrs
            .iter()
            .all(|(name, wt)| can_convert(ge, wt) || optional.contains(name)),
        (Type::Tuple(gs), Type::Tuple(ws)) => {
            gs.len() == ws.len() && gs.iter().zip(ws).all(|(g, w)| can_convert(g, w))
        }
        (Type::List(ge) | Type::Set(ge), Type::List(we) | Type::Set(we)) => can_convert(ge, we),
        (Type::Map(ge), Type::Map(we)) => can_convert(ge, we),
        (Type::Tuple(gs), Type::List(we) | Type::Set(we)) => elements_convert(gs.iter(), we, false),
        (Type::Object { attrs, .. }, Type::Map(we)) => elements_convert(attrs.values(), we, true),
        _ => false,
    }
}

/// Whether structural elements convert to a collection's element type; for
/// `any` elements, whether they have a common type: for a list or set one
/// [`element_type`] accepts; for a map any unification, `dynamic` too (cty
/// checks the elements when it builds the map, as `element_type` does).
fn elements_convert<'a>(mut elems: impl Iterator<Item = &'a Type>, want: &Type, map: bool) -> bool {
    if *want == Type::Dynamic {
        let elems: Vec<Type> = elems.cloned().collect();
        return if map {
            unify(&elems).is_some()
        } else {
            element_type(&elems, want, false).is_some()
        };
    }
    elems.all(|e| can_convert(e, want))
}

/// The element type a list or set (or, `map`, a map) of `any` gets from
/// elements of these types: their unification. Where that is `dynamic`
/// while some elements have a type (a `null` beside structures), cty's
/// list and set conversions refuse the elements, and a map takes them when
/// those with a type all have the same one (`tomap({a = null, b = ["x"]})`
/// is a map of tuples), as cty's map values take the elements' type.
pub(crate) fn element_type(elems: &[Type], want: &Type, map: bool) -> Option<Type> {
    if *want != Type::Dynamic {
        return Some(want.clone());
    }
    match unify(elems)? {
        Type::Dynamic if elems.iter().any(|t| *t != Type::Dynamic) => {
            let mut typed = elems.iter().filter(|t| **t != Type::Dynamic);
            let first = typed.next()?;
            (map && typed.all(|t| t == first)).then(|| first.clone())
        }
        t => Some(t),
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
