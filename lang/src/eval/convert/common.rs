//! Unification: the one type several types convert to, as cty 1.16's
//! `convert.UnifyUnsafe` finds it (HCL's conditionals, `coalesce`,
//! `concat`, the set functions, and collections of `any`); and whether one
//! type converts to another ([`can_convert`]), which unification asks and
//! which asks unification for collections of `any`, so both live here.
//!
//! A `dynamic` type taking part counts: beside types of one structural
//! kind (all maps, all lists, all objects…) cty cannot tell what the
//! dynamic one will become and answers `dynamic`; otherwise a dynamic type
//! converts to any candidate (`null` beside `"a"` is a string), and
//! `dynamic` itself is the candidate of last resort, so `coalesce(null,
//! {a = 1}, "s")` is typed `dynamic` and succeeds.
//!
//! [`unify_known`] is the other rule cty has for the same question: a list
//! or map value built from elements takes its element type from the
//! elements that have one, passing over those of no type.

use fleetform_shared::types::Type;
use std::collections::BTreeMap;

/// The most general type all of `types` convert to (cty's `UnifyUnsafe`);
/// None when there is none. No types at all unify to `dynamic`.
pub(crate) fn unify(types: &[Type]) -> Option<Type> {
    if types.is_empty() {
        return Some(Type::Dynamic);
    }
    unify_types(types)
}

/// The common type of the types that are not `dynamic`; `dynamic` when
/// there are none. This is how cty types a list or map value made of
/// elements some of which are nulls or unknowns of no type.
pub(crate) fn unify_known(types: &[Type]) -> Option<Type> {
    let known: Vec<Type> = types
        .iter()
        .filter(|t| **t != Type::Dynamic)
        .cloned()
        .collect();
    unify(&known)
}

/// How many of each kind of type a list of types has.
#[derive(Default)]
struct Kinds {
    maps: usize,
    lists: usize,
    sets: usize,
    objects: usize,
    tuples: usize,
    dynamic: usize,
}

impl Kinds {
    fn of(types: &[Type]) -> Kinds {
        let mut k = Kinds::default();
        for t in types {
            match t {
                Type::Map(_) => k.maps += 1,
                Type::List(_) => k.lists += 1,
                Type::Set(_) => k.sets += 1,
                Type::Object { .. } => k.objects += 1,
                Type::Tuple(_) => k.tuples += 1,
                Type::Dynamic => k.dynamic += 1,
                _ => {}
            }
        }
        k
    }
}

fn unify_types(types: &[Type]) -> Option<Type> {
    let first = types.first()?;
    if types.iter().all(|t| t == first) {
        return Some(first.clone());
    }
    let k = Kinds::of(types);
    let n = types.len();
    let with_dynamic = k.dynamic > 0;
    // Types all of one structural kind (with dynamic ones among them) may
    // unify to a type none of them is; this comes before the general rule.
    if k.maps > 0 && k.maps + k.dynamic == n {
        return collections(Type::map, types, with_dynamic);
    }
    if k.maps > 0 && k.maps + k.objects + k.dynamic == n {
        if let Some(t @ Type::Map(_)) = objects_as_maps(types) {
            return Some(t);
        }
    } else if k.lists > 0 && k.lists + k.dynamic == n {
        return collections(Type::list, types, with_dynamic);
    } else if k.lists > 0 && k.lists + k.tuples + k.dynamic == n {
        if let Some(t @ Type::List(_)) = tuples_as_list(types) {
            return Some(t);
        }
    } else if k.sets > 0 && k.sets + k.dynamic == n {
        return collections(Type::set, types, with_dynamic);
    } else if k.objects > 0 && k.objects + k.dynamic == n {
        return if with_dynamic {
            Some(Type::Dynamic)
        } else {
            objects(types)
        };
    } else if k.tuples > 0 && k.tuples + k.dynamic == n {
        return if with_dynamic {
            Some(Type::Dynamic)
        } else {
            tuples(types)
        };
    } else if k.objects > 0 && k.tuples > 0 {
        return None;
    }
    // Otherwise one of the types itself, the most general first, must take
    // all the others.
    preference_order(types)
        .into_iter()
        .map(|i| &types[i])
        .find(|want| types.iter().all(|t| t == *want || can_convert(t, want)))
        .cloned()
}

/// Collections of one kind: their element types unified; `dynamic` when a
/// dynamic type is among them.
fn collections(kind: fn(Type) -> Type, types: &[Type], with_dynamic: bool) -> Option<Type> {
    if with_dynamic {
        return Some(Type::Dynamic);
    }
    let elems: Vec<Type> = types.iter().filter_map(|t| t.element().cloned()).collect();
    unify_types(&elems).map(kind)
}

/// Maps, objects (and dynamic types): the objects unified as a map, then
/// that map with the others; a map or nothing.
fn objects_as_maps(types: &[Type]) -> Option<Type> {
    let objs: Vec<Type> = types
        .iter()
        .filter(|t| matches!(t, Type::Object { .. }))
        .cloned()
        .collect();
    let as_map = objects_to_map(&objs)?;
    let replaced: Vec<Type> = types
        .iter()
        .map(|t| match t {
            Type::Object { .. } => as_map.clone(),
            t => t.clone(),
        })
        .collect();
    unify_types(&replaced).filter(|t| matches!(t, Type::Map(_)))
}

/// Lists, tuples (and dynamic types): the tuples unified as a list, then
/// that list with the others; a list or nothing.
fn tuples_as_list(types: &[Type]) -> Option<Type> {
    let tups: Vec<Type> = types
        .iter()
        .filter(|t| matches!(t, Type::Tuple(_)))
        .cloned()
        .collect();
    let as_list = tuples_to_list(&tups)?;
    let replaced: Vec<Type> = types
        .iter()
        .map(|t| match t {
            Type::Tuple(_) => as_list.clone(),
            t => t.clone(),
        })
        .collect();
    unify_types(&replaced).filter(|t| matches!(t, Type::List(_)))
}

fn attrs_of(t: &Type) -> BTreeMap<String, Type> {
    match t {
        Type::Object { attrs, .. } => attrs.clone(),
        _ => BTreeMap::new(),
    }
}

fn elems_of(t: &Type) -> Vec<Type> {
    match t {
        Type::Tuple(ts) => ts.clone(),
        _ => Vec::new(),
    }
}

/// Objects with the same attribute names unify attribute by attribute
/// (and fail when one attribute does not); otherwise into a map.
fn objects(types: &[Type]) -> Option<Type> {
    let first = attrs_of(&types[0]);
    let same_names = types.iter().all(|t| {
        let a = attrs_of(t);
        a.len() == first.len() && a.keys().all(|k| first.contains_key(k))
    });
    if !same_names {
        return objects_to_map(types);
    }
    let mut out = BTreeMap::new();
    for name in first.keys() {
        let across: Vec<Type> = types.iter().map(|t| attrs_of(t)[name].clone()).collect();
        out.insert(name.clone(), unify_types(&across)?);
    }
    let ty = Type::Object {
        attrs: out,
        optional: Default::default(),
    };
    if types.iter().all(|t| can_convert(t, &ty)) {
        Some(ty)
    } else {
        objects_to_map(types)
    }
}

/// Objects as a map of all their attributes' common type.
fn objects_to_map(types: &[Type]) -> Option<Type> {
    let attrs: Vec<Type> = types
        .iter()
        .flat_map(|t| attrs_of(t).into_values())
        .collect();
    let ty = Type::map(unify_types(&attrs)?);
    types.iter().all(|t| can_convert(t, &ty)).then_some(ty)
}

/// Tuples of one length unify element by element; otherwise (or when an
/// element does not) into a list.
fn tuples(types: &[Type]) -> Option<Type> {
    let len = elems_of(&types[0]).len();
    if types.iter().any(|t| elems_of(t).len() != len) {
        return tuples_to_list(types);
    }
    let mut out = Vec::with_capacity(len);
    for i in 0..len {
        let across: Vec<Type> = types.iter().map(|t| elems_of(t)[i].clone()).collect();
        out.push(unify_types(&across)?);
    }
    let ty = Type::Tuple(out);
    if types.iter().all(|t| can_convert(t, &ty)) {
        Some(ty)
    } else {
        tuples_to_list(types)
    }
}

/// Tuples as a list of all their elements' common type.
fn tuples_to_list(types: &[Type]) -> Option<Type> {
    let elems: Vec<Type> = types.iter().flat_map(elems_of).collect();
    let ty = Type::list(unify_types(&elems)?);
    types.iter().all(|t| can_convert(t, &ty)).then_some(ty)
}

/// Indices of `types`, most general first, as cty orders unification
/// candidates: a topological order of "more general than", types that
/// compare equal keeping their order.
fn preference_order(types: &[Type]) -> Vec<usize> {
    let n = types.len();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut in_degree = vec![0usize; n];
    for i in 0..n {
        for j in i + 1..n {
            match compare(&types[i], &types[j]) {
                std::cmp::Ordering::Less => edges[i].push(j),
                std::cmp::Ordering::Greater => edges[j].push(i),
                std::cmp::Ordering::Equal => {}
            }
        }
    }
    for outs in &edges {
        for &j in outs {
            in_degree[j] += 1;
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&i| in_degree[i] == 0).collect();
    let mut next = 0;
    while next < order.len() {
        let i = order[next];
        next += 1;
        for &j in &edges[i] {
            in_degree[j] -= 1;
            if in_degree[j] == 0 {
                order.push(j);
            }
        }
    }
    order
}

/// cty's preference between two types for unification: Less when `a` is
/// the more general (string before other primitives, collections before
/// the structures they can hold, dynamic last).
fn compare(a: &Type, b: &Type) -> std::cmp::Ordering {
    use std::cmp::Ordering::{Equal, Greater, Less};
    match (a, b) {
        (Type::Dynamic, Type::Dynamic) => return Equal,
        (Type::Dynamic, _) => return Greater,
        (_, Type::Dynamic) => return Less,
        (x, y) if x.is_primitive() && y.is_primitive() => {
            return match (x, y) {
                (Type::String, Type::String) => Equal,
                (Type::String, _) => Less,
                (_, Type::String) => Greater,
                _ => Equal,
            };
        }
        (Type::List(x), Type::List(y))
        | (Type::Set(x), Type::Set(y))
        | (Type::Map(x), Type::Map(y)) => {
            return compare(x, y);
        }
        _ => {}
    }
    // The pairs cty orders by swapping them first.
    let swapped = matches!(
        (a, b),
        (Type::Tuple(_), Type::List(_))
            | (Type::Object { .. }, Type::Map(_))
            | (Type::Set(_), Type::Tuple(_) | Type::List(_))
    );
    let (a, b) = if swapped { (b, a) } else { (a, b) };
    let flip = |o: std::cmp::Ordering| if swapped { o.reverse() } else { o };
    match (a, b) {
        (Type::Tuple(_) | Type::List(_), Type::Set(_))
        | (Type::List(_), Type::Tuple(_))
        | (Type::Map(_), Type::Object { .. }) => flip(Less),
        (Type::Object { attrs: x, .. }, Type::Object { attrs: y, .. }) => {
            if x.len() != y.len() || x.keys().any(|k| !y.contains_key(k)) {
                return Equal;
            }
            flip(members_compare(x.keys().map(|k| (&x[k], &y[k]))))
        }
        (Type::Tuple(x), Type::Tuple(y)) if x.len() == y.len() => {
            flip(members_compare(x.iter().zip(y)))
        }
        _ => Equal,
    }
}

/// Structures compare by their members: more general when some member is
/// and none is less.
fn members_compare<'a>(pairs: impl Iterator<Item = (&'a Type, &'a Type)>) -> std::cmp::Ordering {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let (mut a_super, mut b_super) = (false, false);
    for (x, y) in pairs {
        match compare(x, y) {
            Less => a_super = true,
            Greater => b_super = true,
            Equal => {}
        }
    }
    match (a_super, b_super) {
        (true, false) => Less,
        (false, true) => Greater,
        _ => Equal,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(attrs: &[(&str, Type)]) -> Type {
        Type::object(attrs.iter().cloned())
    }

    #[test]
    fn a_dynamic_type_beside_one_structural_kind_is_dynamic() {
        let o = obj(&[("a", Type::Number)]);
        assert_eq!(unify(&[Type::Dynamic, o.clone()]), Some(Type::Dynamic));
        let l = Type::list(Type::String);
        assert_eq!(unify(&[l.clone(), Type::Dynamic]), Some(Type::Dynamic));
        // Beside a primitive the dynamic type converts to it.
        assert_eq!(
            unify(&[Type::Dynamic, Type::Number, Type::Bool]),
            Some(Type::Dynamic)
        );
        assert_eq!(
            unify(&[Type::Dynamic, Type::Number, Type::String]),
            Some(Type::String)
        );
        assert_eq!(
            unify(&[Type::Dynamic, o.clone(), Type::String]),
            Some(Type::Dynamic)
        );
        assert_eq!(unify(&[Type::Number, Type::Bool]), None);
        assert_eq!(
            unify(&[Type::Dynamic, o, Type::Tuple(vec![])]),
            None,
            "objects and tuples never unify"
        );
        assert_eq!(unify_known(&[Type::Dynamic, l.clone()]), Some(l));
    }

    #[test]
    fn maps_objects_and_dynamic_unify_as_a_map() {
        let m = Type::map(Type::String);
        let o = obj(&[("b", Type::Number)]);
        assert_eq!(unify(&[m.clone(), o.clone()]), Some(m.clone()));
        // The map of the objects beside a dynamic type is dynamic, so the
        // general rule decides: the map is the most general.
        assert_eq!(unify(&[Type::Dynamic, m.clone(), o]), Some(m));
        let empty_dyn = Type::map(Type::Dynamic);
        assert_eq!(
            unify(&[obj(&[("a", Type::Number)]), empty_dyn]),
            Some(Type::map(Type::Number))
        );
    }

    #[test]
    fn structures_unify_member_by_member_or_as_collections() {
        let t = |ts: &[Type]| Type::Tuple(ts.to_vec());
        assert_eq!(
            unify(&[t(&[Type::Number]), t(&[Type::String])]),
            Some(t(&[Type::String]))
        );
        assert_eq!(
            unify(&[t(&[]), t(&[Type::Dynamic])]),
            Some(Type::list(Type::Dynamic))
        );
        assert_eq!(
            unify(&[obj(&[("a", Type::Dynamic)]), obj(&[("a", obj(&[]))])]),
            Some(obj(&[("a", Type::Dynamic)]))
        );
        assert_eq!(
            unify(&[obj(&[("a", Type::Number)]), obj(&[("b", Type::Bool)])]),
            None
        );
    }
}
