//! The types of function results, as Terraform's functions declare them.
//!
//! A function body builds its result from plain values; this pass gives
//! the result the type Terraform's function would return, where that type
//! is not the one the value's structure implies. A return type the
//! signature fixes (`split`'s `list(string)`, `transpose`'s
//! `map(list(string))`) is applied as it is; for a `dynamic` one the type
//! Terraform's function computes from its arguments is rebuilt here
//! (`tomap` of an object is a `map(...)`, `formatlist` a `list(string)`).
//! (`regex` and `regexall` type their own results: the pattern decides.)
//! Functions missing here return the type their value's structure gives,
//! which is Terraform's for them (`concat` of tuples is a tuple, `merge`
//! of objects an object, `jsondecode` arrays tuples).

use super::signatures::{Signature, Ty};
use crate::eval::convert::{unify, unify_known};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

/// `result` of the function of signature `sig` called with `args`, with
/// its declared type.
pub(super) fn typed(sig: &Signature, args: &[Value], result: Value) -> Value {
    if let Value::Null(_) | Value::Unknown(_) = result {
        // A null or unknown result is of the declared type (`tostring(null)`
        // is a null string), when the signature fixes one.
        return match fixed(sig) {
            Some(ty) => result.with_null_type(&ty),
            None => result,
        };
    }
    let result = match declared(sig.returns, result) {
        Ok(typed) => return typed,
        Err(result) => result,
    };
    match sig.name {
        // Declared dynamic, computed as a list of strings.
        "formatlist" => list_of(result, Some(Type::String), false),
        // The argument's element type, else the items' common type.
        "distinct" | "tolist" => list_of(result, elem_of(args.first()), false),
        // A list of the values' element type even when none matched: a
        // tuple of values gives its items' common type.
        "matchkeys" => {
            let elem = elem_of(args.first()).or_else(|| match args.first() {
                Some(Value::List(items)) => common(items),
                _ => None,
            });
            list_of(result, elem, false)
        }
        "toset" => list_of(result, elem_of(args.first()), true),
        // All the sets' element types unify, empty ones too, and the
        // result's elements convert to that type.
        "setunion" | "setintersection" | "setsubtract" => {
            let types: Vec<Type> = args
                .iter()
                .flat_map(|a| match (elem_of(Some(a)), a) {
                    (Some(t), _) => vec![t],
                    (None, Value::List(items)) => items.iter().map(Value::ty).collect(),
                    _ => Vec::new(),
                })
                .collect();
            match unify_known(&types) {
                Some(elem) => converted(result, elem, true),
                None => list_of(result, None, true),
            }
        }
        "tomap" => map_of(result, elem_of(args.first())),
        "chunklist" => chunks(result, elem_of(args.first())),
        // Like the collection they were given: a list stays a list.
        "reverse" | "slice" if is_list(args.first()) => {
            list_of(result, elem_of(args.first()), false)
        }
        "keys" if is_map(args.first()) => list_of(result, Some(Type::String), false),
        "values" if is_map(args.first()) => list_of(result, elem_of(args.first()), false),
        "zipmap" if is_list(args.get(1)) => map_of(result, elem_of(args.get(1))),
        // Lists' element types unify, empty lists' too.
        "concat" if !args.is_empty() && args.iter().all(|a| is_list(Some(a))) => {
            let types: Vec<Type> = args.iter().filter_map(|a| elem_of(Some(a))).collect();
            match unify_known(&types) {
                Some(elem) => converted(result, elem, false),
                None => list_of(result, None, false),
            }
        }
        "reverse" if is_set(args.first()) => list_of(result, elem_of(args.first()), false),
        "merge" => merged(args, result),
        "setproduct" => {
            let set = args
                .iter()
                .any(|a| matches!(a, Value::List(l) if matches!(l.ty(), Some(Type::Set(_)))));
            list_of(result, None, set)
        }
        _ => result,
    }
}

/// The result of a call with an unknown argument: an unknown of the type
/// Terraform's function declares, where it does not depend on the
/// arguments (`upper` gives an unknown string, `formatlist` an unknown
/// list of strings, `tolist` a list of any type), or of the type the
/// function computes from its arguments' types (the set functions, and
/// `concat` of lists); otherwise of no type.
pub(super) fn unknown(sig: &Signature, args: &[Value]) -> Value {
    if let Some(ty) = fixed(sig) {
        return Value::unknown_of(ty);
    }
    let ty = match sig.name {
        "tolist" | "toset" | "tomap" => Some(sig.returns.to_type()),
        // cty's set operations: the sets' element types unified, empty
        // sets of no element type passed over.
        "setunion" | "setintersection" | "setsubtract" => {
            let elems: Vec<Type> = args
                .iter()
                .filter(|a| {
                    let empty = matches!(a, Value::List(l) if l.is_empty());
                    !(empty && elem_of(Some(a)) == Some(Type::Dynamic))
                })
                .filter_map(|a| a.ty().element().cloned())
                .collect();
            if elems.is_empty() {
                Some(Type::set(Type::Dynamic))
            } else {
                unify(&elems).map(Type::set)
            }
        }
        // Lists (only) concatenate to their unified type.
        "concat" if args.iter().all(|a| matches!(a.ty(), Type::List(_))) => {
            unify(&args.iter().map(Value::ty).collect::<Vec<_>>())
        }
        _ => None,
    };
    Value::unknown_of(ty.unwrap_or(Type::Dynamic))
}

/// The type every result of the function has, when its signature (or, for
/// a few declared dynamic, its documentation) fixes one.
fn fixed(sig: &Signature) -> Option<Type> {
    match sig.name {
        "formatlist" => Some(Type::list(Type::String)),
        _ if !sig.returns.has_dynamic() => Some(sig.returns.to_type()),
        _ => None,
    }
}

/// A collection result of the fixed type its signature declares; the
/// result back when the declared type leaves something to compute.
fn declared(returns: Ty, result: Value) -> Result<Value, Value> {
    match returns {
        Ty::List(e) | Ty::Set(e) if !e.has_dynamic() => Ok(list_of(
            result,
            Some(e.to_type()),
            matches!(returns, Ty::Set(_)),
        )),
        Ty::Map(e) if !e.has_dynamic() => Ok(map_of(result, Some(e.to_type()))),
        _ => Err(result),
    }
}

/// A list (or set) result of `elem`, its items converted (a number joining
/// strings becomes a string); left as it is when one does not convert.
fn converted(result: Value, elem: Type, set: bool) -> Value {
    let Value::List(items) = result else {
        return result;
    };
    let items = items.into_vec();
    let converted: Option<Vec<Value>> = items
        .iter()
        .map(|v| crate::eval::convert::convert(v.clone(), &elem).ok())
        .collect();
    match converted {
        Some(c) if set => Value::typed_list(c, Type::set(elem)),
        Some(c) => Value::typed_list(c, Type::list(elem)),
        None => list_of(Value::tuple(items), None, set),
    }
}

fn is_set(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::List(l)) if matches!(l.ty(), Some(Type::Set(_))))
}

fn is_list(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::List(l)) if matches!(l.ty(), Some(Type::List(_))))
}

fn is_map(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Map(m)) if matches!(m.ty(), Some(Type::Map(_))))
}

/// The element type a typed list, set or map argument declares.
fn elem_of(v: Option<&Value>) -> Option<Type> {
    let ty = match v? {
        Value::List(l) => l.ty()?,
        Value::Map(m) => m.ty()?,
        _ => return None,
    };
    ty.element().cloned()
}

/// The common type of `items`, `any` when they have none to offer (empty,
/// or only nulls and unknowns).
fn common(items: &[Value]) -> Option<Type> {
    unify_known(&items.iter().map(Value::ty).collect::<Vec<_>>())
}

/// A sequence result as a list (or set) of `elem`, or of its items' common
/// type when the function does not fix one. Anything else is left alone.
fn list_of(result: Value, elem: Option<Type>, set: bool) -> Value {
    let Value::List(items) = result else {
        return result;
    };
    let items = items.into_vec();
    let elem = match elem.filter(|e| *e != Type::Dynamic || items.is_empty()) {
        Some(e) => e,
        None => match common(&items) {
            Some(e) => e,
            None => return Value::tuple(items),
        },
    };
    let ty = if set {
        Type::set(elem)
    } else {
        Type::list(elem)
    };
    Value::typed_list(items, ty)
}

fn map_of(result: Value, elem: Option<Type>) -> Value {
    let Value::Map(m) = result else {
        return result;
    };
    let elem = match elem.filter(|e| *e != Type::Dynamic || m.is_empty()) {
        Some(e) => e,
        None => {
            let values: Vec<Value> = m.values().cloned().collect();
            match common(&values) {
                Some(e) => e,
                None => return Value::Map(m),
            }
        }
    };
    Value::Map(m.typed(Type::map(elem)))
}

/// `merge`: maps make a map of their element types' common type (empty
/// ones too); with an object among them the result is an object, and an
/// attribute taken from a map keeps that map's element type.
fn merged(args: &[Value], result: Value) -> Value {
    if !args.is_empty() && args.iter().all(|a| is_map(Some(a)) || a.is_null()) {
        let types: Vec<Type> = args.iter().filter_map(|a| elem_of(Some(a))).collect();
        return map_of(result, unify_known(&types));
    }
    let Value::Map(m) = result else {
        return result;
    };
    let typed = |k: &str, v: Value| {
        let from = args
            .iter()
            .rev()
            .find(|a| matches!(a, Value::Map(m) if m.get(k).is_some()));
        match elem_of(from).filter(|_| is_map(from)) {
            Some(t) => crate::eval::convert::convert(v.clone(), &t).unwrap_or(v),
            None => v,
        }
    };
    Value::Map(
        m.into_iter()
            .map(|(k, v)| {
                let v = typed(&k, v);
                (k, v)
            })
            .collect(),
    )
}

/// `chunklist`: a list of lists of the argument's element type.
fn chunks(result: Value, elem: Option<Type>) -> Value {
    let Value::List(items) = result else {
        return result;
    };
    let chunks: Vec<Value> = items
        .into_vec()
        .into_iter()
        .map(|c| list_of(c, elem.clone(), false))
        .collect();
    let elem = chunks
        .first()
        .map(Value::ty)
        .or_else(|| elem.clone().map(Type::list))
        .unwrap_or_else(|| Type::list(Type::Dynamic));
    Value::typed_list(chunks, Type::list(elem))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::from(x)
    }

    fn typed(name: &str, args: &[Value], result: Value) -> Value {
        super::typed(super::super::signatures::find(name).unwrap(), args, result)
    }

    #[test]
    fn fixed_and_inferred_element_types() {
        let r = typed("split", &[], Value::tuple(vec![s("a")]));
        assert_eq!(r.ty(), Type::list(Type::String));
        let r = typed("sort", &[], Value::tuple(vec![]));
        assert_eq!(
            r.ty(),
            Type::list(Type::String),
            "an empty sort is still strings"
        );
        let r = typed(
            "distinct",
            &[Value::tuple(vec![])],
            Value::tuple(vec![Value::int(1)]),
        );
        assert_eq!(r.ty(), Type::list(Type::Number));
        let r = typed("toset", &[], Value::tuple(vec![]));
        assert_eq!(r.ty(), Type::set(Type::Dynamic));
        let r = typed("tomap", &[], Value::object([("a", Value::int(1))]));
        assert_eq!(r.ty(), Type::map(Type::Number));
        let r = typed("fileset", &[], Value::tuple(vec![s("a")]));
        assert_eq!(r.ty(), Type::set(Type::String));
        let r = typed(
            "transpose",
            &[],
            Value::object([("a", Value::tuple(vec![]))]),
        );
        assert_eq!(r.ty(), Type::map(Type::list(Type::String)));
    }

    #[test]
    fn like_the_collection_given() {
        let list = Value::typed_list(vec![s("a"), s("b")], Type::list(Type::String));
        let r = typed("reverse", &[list], Value::tuple(vec![s("b"), s("a")]));
        assert_eq!(r.ty(), Type::list(Type::String));
        let tuple = Value::tuple(vec![s("a"), Value::int(1)]);
        let r = typed(
            "reverse",
            &[tuple],
            Value::tuple(vec![Value::int(1), s("a")]),
        );
        assert_eq!(r.ty(), Type::Tuple(vec![Type::Number, Type::String]));
    }
}
