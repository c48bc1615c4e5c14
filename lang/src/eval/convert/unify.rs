//! The type side of conversion, as cty 1.14 does it: the type a value
//! implies, whether one type converts to another, the common type of several
//! (unification, for `any`), and cty's mismatch messages.
//!
//! A value's type is the one it carries (see `Value::ty`), else a tuple of
//! its elements' types or an object. A null or unknown carries its type
//! (`tostring(null)` is a string); an untyped one (the literal `null`) is
//! `any`, and unification passes over it, as cty's does beside primitives
//! (`[null, "a"]` unifies to string). Beside collections cty gives up
//! where a list or set is wanted (see `null_beside_structure`).

use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

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
        (Type::Tuple(gs), Type::List(we) | Type::Set(we)) => elements_convert(gs.iter(), we),
        (Type::Object { attrs, .. }, Type::Map(we)) => elements_convert(attrs.values(), we),
        _ => false,
    }
}

/// Whether structural elements convert to a collection's element type; for
/// `any` elements, whether they have a common type.
fn elements_convert<'a>(mut elems: impl Iterator<Item = &'a Type>, want: &Type) -> bool {
    if *want == Type::Dynamic {
        let elems: Vec<Type> = elems.cloned().collect();
        return unify(&elems).is_some();
    }
    elems.all(|e| can_convert(e, want))
}

/// The element type a collection of `any` gets from these elements.
pub(crate) fn element_type(elems: &[Type], want: &Type) -> Option<Type> {
    if *want == Type::Dynamic {
        unify(elems)
    } else {
        Some(want.clone())
    }
}

/// The most general type all of `types` convert to, as cty's unification
/// finds it; None when there is none. `any` entries are passed over.
pub(crate) fn unify(types: &[Type]) -> Option<Type> {
    let types: Vec<&Type> = types.iter().filter(|t| **t != Type::Dynamic).collect();
    let Some(first) = types.first() else {
        return Some(Type::Dynamic);
    };
    if types.iter().all(|t| t == first) {
        return Some((*first).clone());
    }
    if types.iter().all(|t| t.is_primitive()) {
        return types.contains(&&Type::String).then_some(Type::String);
    }
    let count = |f: fn(&Type) -> bool| types.iter().filter(|t| f(t)).count();
    let (maps, lists, sets) = (
        count(|t| matches!(t, Type::Map(_))),
        count(|t| matches!(t, Type::List(_))),
        count(|t| matches!(t, Type::Set(_))),
    );
    let objects = count(|t| matches!(t, Type::Object { .. }));
    let tuples = count(|t| matches!(t, Type::Tuple(_)));
    let n = types.len();
    if maps + objects == n && maps > 0 {
        // Objects are often maps in disguise.
        return unify(&members(&types)).map(Type::map);
    }
    if lists + tuples == n && lists > 0 {
        return unify(&members(&types)).map(Type::list);
    }
    if sets == n {
        return unify(&members(&types)).map(Type::set);
    }
    if objects == n {
        return unify_objects(&types);
    }
    if tuples == n {
        return unify_tuples(&types);
    }
    if objects > 0 && tuples > 0 {
        return None;
    }
    // Otherwise one of the types itself must take all the others.
    types
        .iter()
        .find(|cand| types.iter().all(|t| can_convert(t, cand)))
        .map(|t| (*t).clone())
}

/// Element types of collections, attribute types of objects, element types of tuples.
fn members(types: &[&Type]) -> Vec<Type> {
    let mut out = Vec::new();
    for t in types {
        match t {
            Type::List(e) | Type::Set(e) | Type::Map(e) => out.push((**e).clone()),
            Type::Object { attrs, .. } => out.extend(attrs.values().cloned()),
            Type::Tuple(ts) => out.extend(ts.iter().cloned()),
            other => out.push((*other).clone()),
        }
    }
    out
}

/// Objects with the same attribute names unify attribute by attribute (and
/// fail if one attribute cannot); otherwise they may unify into a map.
fn unify_objects(types: &[&Type]) -> Option<Type> {
    let attrs_of = |t: &Type| match t {
        Type::Object { attrs, .. } => attrs.clone(),
        _ => BTreeMap::new(),
    };
    let first = attrs_of(types[0]);
    let same_names = types.iter().all(|t| {
        let a = attrs_of(t);
        a.len() == first.len() && a.keys().all(|k| first.contains_key(k))
    });
    if !same_names {
        return unify(&members(types)).map(Type::map);
    }
    let mut out = BTreeMap::new();
    for name in first.keys() {
        let across: Vec<Type> = types.iter().map(|t| attrs_of(t)[name].clone()).collect();
        out.insert(name.clone(), unify(&across)?);
    }
    Some(Type::Object {
        attrs: out,
        optional: Default::default(),
    })
}

/// Tuples of one length unify element by element; of different lengths into a list.
fn unify_tuples(types: &[&Type]) -> Option<Type> {
    let elems = |t: &Type| match t {
        Type::Tuple(ts) => ts.clone(),
        _ => Vec::new(),
    };
    let len = elems(types[0]).len();
    if types.iter().any(|t| elems(t).len() != len) {
        return unify(&members(types)).map(Type::list);
    }
    (0..len)
        .map(|i| {
            let across: Vec<Type> = types.iter().map(|t| elems(t)[i].clone()).collect();
            unify(&across)
        })
        .collect::<Option<Vec<_>>>()
        .map(Type::Tuple)
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
