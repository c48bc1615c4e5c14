//! Conversion of values to a type constraint, with cty's implicit conversions
//! (number ↔ string, "true"/"1" → bool, tuple → list, object → map, `any`
//! unified to a common type) and cty's error texts.
//!
//! Like cty, conversion happens in two steps: a type-level check (is there a
//! conversion from the type the value implies at all?) whose failures read
//! like `element 0: attribute "a" is required`, then the conversion of the
//! value itself, whose failures (a string that is not a number) carry no path,
//! as in Terraform 1.9.

mod common;
mod unify;

pub(crate) use common::{can_convert, unify, unify_known};
pub(crate) use unify::{friendly, infer, mismatch};

use fleetform_shared::types::Type;
use fleetform_shared::value::{Number, Value, ValueMap};
use std::collections::BTreeMap;

/// Converts `value` to `ty`; the error is cty's message, such as
/// `attribute "name" is required` or `a number is required`. Null and
/// unknown convert to any type.
pub fn convert(value: Value, ty: &Type) -> Result<Value, String> {
    let got = infer(&value);
    if !common::can_convert(&got, ty) {
        return Err(mismatch(&got, ty));
    }
    conv(value, ty)
}

/// A primitive's string form (numbers in plain decimal, like cty).
pub(crate) fn primitive_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// cty's string → number conversion. `Number::parse` forgives surrounding
/// whitespace; cty does not.
pub(crate) fn string_to_number(s: &str) -> Result<Number, String> {
    Some(s)
        .filter(|s| s.trim() == *s)
        .and_then(Number::parse)
        .ok_or_else(|| "a number is required".to_string())
}

/// cty's string → bool conversion, with its hints for capitalised words.
pub(crate) fn string_to_bool(s: &str) -> Result<bool, String> {
    match s {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(match s.to_lowercase().as_str() {
            "true" => "a bool is required; to convert from string, use lowercase \"true\"".into(),
            "false" => "a bool is required; to convert from string, use lowercase \"false\"".into(),
            _ => "a bool is required".into(),
        }),
    }
}

/// The value-level conversion; the type-level check has passed (but any
/// combination is handled without panicking). A converted collection or
/// object carries the type it was converted to, with `any` replaced by
/// what the values made of it (`list(any)` of strings is `list(string)`).
fn conv(value: Value, ty: &Type) -> Result<Value, String> {
    let fail = |v: &Value| Err(mismatch(&infer(v), ty));
    if conforms(&infer(&value), ty) {
        return Ok(value);
    }
    match (value, ty) {
        // cty: a null or unknown converts to a null or unknown of the type.
        (v @ (Value::Null(_) | Value::Unknown(_)), _) => {
            Ok(v.with_null_type(&without_optional(ty)))
        }
        (v, Type::Dynamic) => Ok(v),
        (v, Type::String) => match primitive_string(&v) {
            Some(s) => Ok(Value::String(s)),
            None => fail(&v),
        },
        (Value::Number(n), Type::Number) => Ok(Value::Number(n)),
        (Value::String(s), Type::Number) => string_to_number(&s).map(Value::Number),
        (Value::Bool(b), Type::Bool) => Ok(Value::Bool(b)),
        (Value::String(s), Type::Bool) => string_to_bool(&s).map(Value::Bool),
        (Value::List(items), Type::List(elem)) => {
            let elem = &carried_element(items.ty(), elem);
            let (items, elem) = conv_elements(items.into_vec(), elem, false)?;
            Ok(Value::typed_list(items, Type::list(elem)))
        }
        (Value::List(items), Type::Set(elem)) => {
            let elem = &carried_element(items.ty(), elem);
            let (items, elem) = conv_elements(items.into_vec(), elem, false)?;
            Ok(Value::typed_list(set_elements(items), Type::set(elem)))
        }
        (Value::List(items), Type::Tuple(types)) if items.len() == types.len() => {
            let mut out = Vec::with_capacity(types.len());
            let mut out_types = Vec::with_capacity(types.len());
            for (v, t) in items.into_iter().zip(types) {
                let v = conv(v, t)?;
                out_types.push(concrete(&v, t));
                out.push(v);
            }
            Ok(Value::typed_list(out, Type::Tuple(out_types)))
        }
        (Value::Map(items), Type::Map(elem)) => {
            let (keys, values): (Vec<fleetform_shared::name::Name>, Vec<Value>) =
                items.into_iter().unzip();
            let (values, elem) = conv_elements(values, elem, true)?;
            let m: ValueMap = keys.into_iter().zip(values).collect();
            Ok(Value::Map(m.typed(Type::map(elem))))
        }
        (Value::Map(mut items), Type::Object { attrs, optional }) => {
            let mut out = ValueMap::new();
            let mut out_types = BTreeMap::new();
            for (name, t) in attrs {
                let v = match items.remove(name) {
                    Some(v) => conv(v, t)?,
                    None if optional.contains(name) => Value::null_of(without_optional(t)),
                    None => return Err(format!("attribute {name:?} is required")),
                };
                out_types.insert(name.clone(), concrete(&v, t));
                out.insert(name.clone(), v);
            }
            Ok(Value::Map(out.typed(Type::Object {
                attrs: out_types,
                optional: Default::default(),
            })))
        }
        (v, _) => fail(&v),
    }
}

/// The element type to convert to: for `any`, the element type a typed
/// list or set already has (a `list(string)` becomes a `set(string)`, even
/// empty); otherwise the constraint's.
fn carried_element(carried: Option<&Type>, elem: &Type) -> Type {
    match carried {
        Some(Type::List(e) | Type::Set(e)) if *elem == Type::Dynamic => (**e).clone(),
        _ => elem.clone(),
    }
}

/// Whether a value of type `got` is already of the constraint `want`, so
/// that conversion leaves it as it is: a `list(string)` passed where
/// `list(any)` is wanted keeps its element type, even when it is empty.
fn conforms(got: &Type, want: &Type) -> bool {
    match (got, want) {
        (_, Type::Dynamic) => true,
        (Type::List(g), Type::List(w))
        | (Type::Set(g), Type::Set(w))
        | (Type::Map(g), Type::Map(w)) => conforms(g, w),
        (g, w) => g.is_primitive() && g == w,
    }
}

/// The type a value converted to `t` has: its own (a null or unknown
/// converted to `t` carries `t`).
fn concrete(v: &Value, t: &Type) -> Type {
    match v {
        Value::Null(tag) | Value::Unknown(tag) if tag.is_dynamic() => without_optional(t),
        v => v.ty(),
    }
}

/// A type constraint as a type: `optional()` marks are for conversion only.
pub(crate) fn without_optional(t: &Type) -> Type {
    match t {
        Type::List(e) => Type::list(without_optional(e)),
        Type::Set(e) => Type::set(without_optional(e)),
        Type::Map(e) => Type::map(without_optional(e)),
        Type::Tuple(ts) => Type::Tuple(ts.iter().map(without_optional).collect()),
        Type::Object { attrs, .. } => Type::Object {
            attrs: attrs
                .iter()
                .map(|(k, t)| (k.clone(), without_optional(t)))
                .collect(),
            optional: Default::default(),
        },
        t => t.clone(),
    }
}

/// Converts the elements of a list, set or (`map`) map to `elem`; for
/// `any` (also inside, as in `list(map(any))`) the results are then
/// unified to one type. Returns the elements and the element type they now
/// share.
fn conv_elements(items: Vec<Value>, elem: &Type, map: bool) -> Result<(Vec<Value>, Type), String> {
    let types: Vec<Type> = items.iter().map(infer).collect();
    // An object's attributes of no common type but `dynamic` pass the
    // type check; cty refuses them when it builds the map, in these words.
    let target = common::element_type(&types, elem, map).ok_or_else(|| {
        if map {
            "attribute types must all match for conversion to map".to_string()
        } else {
            "cannot find a common base type for all elements".to_string()
        }
    })?;
    let converted = items
        .into_iter()
        .map(|v| conv(v, &target))
        .collect::<Result<Vec<_>, _>>()?;
    if !unify::has_dynamic(elem) || *elem == Type::Dynamic {
        let elem = if *elem == Type::Dynamic {
            // The unified type of the originals; after conversion the
            // values may say more (a tuple became a list), so ask them.
            unify_known(&converted.iter().map(infer).collect::<Vec<_>>()).unwrap_or(target)
        } else {
            without_optional(elem)
        };
        return Ok((converted, elem));
    }
    let types: Vec<Type> = converted.iter().map(infer).collect();
    match unify_known(&types) {
        Some(common) => {
            let out = converted
                .into_iter()
                .map(|v| conv(v, &common))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((out, without_optional(&common)))
        }
        None => Err("cannot find a common base type for all elements".into()),
    }
}

/// A set's elements in cty's order (`fleetform_shared::value::set_order`):
/// known values deduplicated, strings lexically, numbers numerically,
/// false before true, other types by cty's set hash string; then unknowns
/// (never merged: each may become any value), then null.
pub(crate) fn set_elements(items: Vec<Value>) -> Vec<Value> {
    let mut known: Vec<Value> = Vec::new();
    let mut null = None;
    let mut unknown = Vec::new();
    for v in items {
        match v {
            Value::Null(_) => null = Some(v),
            v if !v.is_wholly_known() => unknown.push(v),
            v if !known.contains(&v) => known.push(v),
            _ => {}
        }
    }
    known.sort_by(fleetform_shared::value::set_order::compare);
    // cty's Less: unknown elements after the known ones, null last.
    known.extend(unknown);
    known.extend(null);
    known
}

/// The elements of a set in cty's order (see [`set_elements`]); the name
/// the function library uses.
pub(crate) fn set_items(items: Vec<Value>) -> Vec<Value> {
    set_elements(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_convert_like_cty() {
        assert_eq!(convert(Value::int(5), &Type::String), Ok(Value::from("5")));
        assert_eq!(
            convert(Value::from("2.5"), &Type::Number),
            Ok(Value::Number(fleetform_shared::Number::Float(2.5)))
        );
        assert_eq!(
            convert(Value::from("true"), &Type::Bool),
            Ok(Value::Bool(true))
        );
        assert!(convert(Value::from("x"), &Type::Number).is_err());
        assert_eq!(
            convert(Value::from(" 1"), &Type::Number),
            Err("a number is required".into())
        );
        assert!(convert(Value::tuple(vec![]), &Type::String).is_err());
        assert_eq!(
            convert(Value::unknown(), &Type::String),
            Ok(Value::unknown())
        );
    }

    #[test]
    fn collections_convert_elementwise_with_paths_in_errors() {
        let tags = Value::object([("a", Value::int(1)), ("b", Value::from("x"))]);
        assert_eq!(
            convert(tags, &Type::map(Type::String)),
            Ok(Value::object([
                ("a", Value::from("1")),
                ("b", Value::from("x"))
            ]))
        );
        let bad = Value::object([("a", Value::tuple(vec![]))]);
        assert_eq!(
            convert(bad, &Type::map(Type::String)),
            Err("element \"a\": string required".into())
        );
        let set = Value::tuple(vec![Value::from("a"), Value::from("a"), Value::int(1)]);
        assert_eq!(
            convert(set, &Type::set(Type::String)),
            Ok(Value::tuple(vec![Value::from("1"), Value::from("a")]))
        );
    }

    #[test]
    fn a_typed_collection_keeps_its_type_where_any_is_wanted() {
        let empty = Value::typed_list(vec![], Type::list(Type::String));
        let kept = convert(empty.clone(), &Type::list(Type::Dynamic)).unwrap();
        assert_eq!(kept.ty(), Type::list(Type::String));
        let set = convert(empty, &Type::set(Type::Dynamic)).unwrap();
        assert_eq!(set.ty(), Type::set(Type::String));
    }

    #[test]
    fn objects_fill_optional_attributes_and_drop_extras() {
        let mut ty = Type::object([("name", Type::String), ("size", Type::Number)]);
        if let Type::Object { optional, .. } = &mut ty {
            optional.insert("size".into());
        }
        let v = Value::object([("name", Value::from("a")), ("extra", Value::Bool(true))]);
        assert_eq!(
            convert(v, &ty),
            Ok(Value::object([
                ("name", Value::from("a")),
                ("size", Value::null())
            ]))
        );
        assert_eq!(
            convert(Value::object([("size", Value::int(1))]), &ty),
            Err("attribute \"name\" is required".into())
        );
    }
}
