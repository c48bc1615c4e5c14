//! cty's JSON encoding (go-cty `json` package), driven by the type.
//!
//! JSON has no unknowns. A `dynamic` value is `{"value": ..., "type": ...}`.
//! Decoding is as lenient as cty's: numbers and bools may arrive as strings
//! (legacy SDK state does this) and strings may arrive as numbers or bools.
//! Numbers are written and read as JSON literals with all their digits
//! ([`crate::json`]), as cty does.

use super::types_json::{
    from_json_value as type_from_json_value, to_json_value as type_to_json_value,
};
use super::{CodecError, Path, infer_type, object_attrs};
use crate::json::{Json, Map};
use crate::types::Type;
use crate::value::{Number, Value, ValueMap};

pub(super) fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    let json = to_json(value, ty, &mut Path::default())?;
    Ok(json.to_string().into_bytes())
}

pub(super) fn decode(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    let json =
        Json::parse(bytes).map_err(|e| Path::default().error(format!("invalid JSON: {e}")))?;
    from_json(&json, ty, &mut Path::default())
}

fn to_json(value: &Value, ty: &Type, path: &mut Path) -> Result<Json, CodecError> {
    match (ty, value) {
        (_, Value::Unknown(_)) => Err(path.error("value must be known to be encoded as JSON")),
        // A typed null where the type says `dynamic` is `{"value": null,
        // "type": T}`, as cty writes it.
        (Type::Dynamic, Value::Null(t)) if !t.is_dynamic() => {
            let mut obj = Map::new();
            obj.insert("value".into(), Json::Null);
            obj.insert("type".into(), type_to_json_value(&t.ty()).into());
            Ok(Json::Object(obj))
        }
        (_, Value::Null(_)) => Ok(Json::Null),
        (Type::Dynamic, _) => {
            let inner = infer_type(value);
            let mut obj = Map::new();
            obj.insert("value".into(), to_json(value, &inner, path)?);
            obj.insert("type".into(), type_to_json_value(&inner).into());
            Ok(Json::Object(obj))
        }
        (Type::Bool, Value::Bool(b)) => Ok(Json::Bool(*b)),
        (Type::Number, Value::Number(n)) if !n.as_f64().is_finite() => {
            Err(path.error(format!("number {n} cannot be represented in JSON")))
        }
        (Type::Number, Value::Number(n)) => Ok(Json::Number(n.clone())),
        (Type::String, Value::String(s)) => Ok(Json::String(s.clone())),
        (Type::List(elem), Value::List(items)) => elements(items, |_| elem, path).map(Json::Array),
        (Type::Set(elem), Value::List(items)) => {
            let mut out = elements(items, |_| elem, path)?;
            // Deterministic order and no duplicates, as in the msgpack encoding.
            out.sort_by_cached_key(Json::to_string);
            out.dedup();
            Ok(Json::Array(out))
        }
        (Type::Tuple(elems), Value::List(items)) => {
            if elems.len() != items.len() {
                return Err(path.error(format!(
                    "expected {} tuple elements, found {}",
                    elems.len(),
                    items.len()
                )));
            }
            elements(items, |i| &elems[i], path).map(Json::Array)
        }
        (Type::Map(elem), Value::Map(items)) => {
            let mut out = Map::new();
            for (k, v) in items {
                path.push_key(k);
                out.insert(k.to_string(), to_json(v, elem, path)?);
                path.pop();
            }
            Ok(Json::Object(out))
        }
        (Type::Object { attrs, .. }, _) => {
            let items = object_attrs(value, ty, attrs, path)?;
            let mut out = Map::new();
            for (k, aty) in attrs {
                path.push_key(k);
                out.insert(
                    k.clone(),
                    to_json(items.get(k).unwrap_or(&Value::null()), aty, path)?,
                );
                path.pop();
            }
            Ok(Json::Object(out))
        }
        _ => Err(path.mismatch(ty, value.kind())),
    }
}

fn elements<'t>(
    items: &[Value],
    ty_of: impl Fn(usize) -> &'t Type,
    path: &mut Path,
) -> Result<Vec<Json>, CodecError> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        path.push_index(i);
        out.push(to_json(item, ty_of(i), path)?);
        path.pop();
    }
    Ok(out)
}

fn json_kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "bool",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn from_json(json: &Json, ty: &Type, path: &mut Path) -> Result<Value, CodecError> {
    if json.is_null() {
        return Ok(Value::null_of(ty.clone()));
    }
    match (ty, json) {
        (Type::Dynamic, Json::Object(obj)) => {
            let (Some(type_json), Some(value_json)) = (obj.get("type"), obj.get("value")) else {
                return Err(path.error("dynamic value must have \"value\" and \"type\""));
            };
            if obj.len() != 2 {
                return Err(path.error("dynamic value must have only \"value\" and \"type\""));
            }
            let inner = type_from_json_value(&type_json.to_serde(), path)?;
            from_json(value_json, &inner, path)
        }
        (Type::Bool, Json::Bool(b)) => Ok(Value::Bool(*b)),
        (Type::Bool, Json::String(s)) if s == "true" || s == "false" => {
            Ok(Value::Bool(s == "true"))
        }
        (Type::Number, Json::Number(n)) => Ok(Value::Number(n.clone())),
        (Type::Number, Json::String(s)) => Number::parse(s)
            .map(Value::Number)
            .ok_or_else(|| path.error(format!("invalid number {s:?}"))),
        (Type::String, Json::String(s)) => Ok(Value::String(s.clone())),
        (Type::String, Json::Number(n)) => Ok(Value::String(n.to_string())),
        (Type::String, Json::Bool(b)) => Ok(Value::String(b.to_string())),
        (Type::List(elem) | Type::Set(elem), Json::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                path.push_index(i);
                out.push(from_json(item, elem, path)?);
                path.pop();
            }
            Ok(Value::typed_list(out, ty.clone()))
        }
        (Type::Tuple(elems), Json::Array(items)) => {
            if elems.len() != items.len() {
                return Err(path.error(format!(
                    "expected {} tuple elements, found {}",
                    elems.len(),
                    items.len()
                )));
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, (item, elem)) in items.iter().zip(elems).enumerate() {
                path.push_index(i);
                out.push(from_json(item, elem, path)?);
                path.pop();
            }
            Ok(Value::typed_list(out, ty.clone()))
        }
        (Type::Map(elem), Json::Object(obj)) => {
            let mut out = ValueMap::new();
            for (k, v) in obj {
                path.push_key(k);
                out.insert(k.clone(), from_json(v, elem, path)?);
                path.pop();
            }
            Ok(Value::Map(out.typed(ty.clone())))
        }
        (Type::Object { attrs, .. }, Json::Object(obj)) => {
            let mut out = ValueMap::new();
            for (k, v) in obj {
                let Some(aty) = attrs.get(k) else {
                    return Err(path.error(format!("unsupported attribute {k:?}")));
                };
                path.push_key(k);
                out.insert(k.clone(), from_json(v, aty, path)?);
                path.pop();
            }
            for (k, aty) in attrs {
                out.entry(k.clone())
                    .or_insert_with(|| Value::null_of(aty.clone()));
            }
            Ok(Value::Map(out))
        }
        _ => Err(path.mismatch(ty, json_kind(json))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &Value, ty: &Type) -> String {
        String::from_utf8(encode(value, ty).unwrap()).unwrap()
    }

    /// go-cty's JSON: a typed null where the type is `dynamic` is
    /// `{"value": null, "type": T}` (keys in our sorted order, as for
    /// every dynamic value); where a type is given, `null`.
    #[test]
    fn a_typed_null_keeps_its_type_where_the_type_is_dynamic() {
        let null = Value::null_of(Type::map(Type::String));
        assert_eq!(text(&null, &Type::map(Type::String)), "null");
        let dynamic = text(&null, &Type::Dynamic);
        assert_eq!(dynamic, r#"{"type":["map","string"],"value":null}"#);
        let back = decode(dynamic.as_bytes(), &Type::Dynamic).unwrap();
        assert!(back.is_null());
        assert_eq!(back.ty(), Type::map(Type::String));
    }

    #[test]
    fn dynamic_values_carry_their_type() {
        let v = Value::object([("a", Value::int(1)), ("b", Value::tuple(vec!["x".into()]))]);
        let t = text(&v, &Type::Dynamic);
        assert_eq!(
            t,
            r#"{"type":["object",{"a":"number","b":["tuple",["string"]]}],"value":{"a":1,"b":["x"]}}"#
        );
        assert_eq!(decode(t.as_bytes(), &Type::Dynamic).unwrap(), v);
        assert_eq!(text(&Value::null(), &Type::Dynamic), "null");
    }

    #[test]
    fn unknowns_cannot_be_json() {
        let ty = Type::object([("id", Type::String)]);
        let err = encode(&Value::object([("id", Value::unknown())]), &ty).unwrap_err();
        assert_eq!(
            err.to_string(),
            "id: value must be known to be encoded as JSON"
        );
    }

    #[test]
    fn legacy_state_strings_convert_like_cty() {
        let ty = Type::object([("n", Type::Number), ("b", Type::Bool), ("s", Type::String)]);
        let v = decode(br#"{"n":"2.5","b":"true","s":12}"#, &ty).unwrap();
        assert_eq!(
            v,
            Value::object([
                ("n", Value::Number(Number::Float(2.5))),
                ("b", Value::from(true)),
                ("s", Value::from("12"))
            ])
        );
        assert!(decode(br#"{"n":"abc"}"#, &ty).is_err());
        assert!(
            decode(br#"{"zz":1}"#, &ty)
                .unwrap_err()
                .to_string()
                .contains("unsupported attribute")
        );
    }

    #[test]
    fn numbers_are_literals_with_all_their_digits() {
        let num = |t: &str| Value::Number(Number::parse(t).unwrap());
        let ty = Type::object([("n", Type::list(Type::Number))]);
        let v = Value::object([(
            "n",
            Value::tuple(vec![
                num("12345678901234567890123"),
                num("-12345678901234567890123"),
                num("18446744073709551615"),
                num("0.1000000000000000000001"),
                num("1e20"),
                num("0.1"),
            ]),
        )]);
        let t = text(&v, &ty);
        assert_eq!(
            t,
            r#"{"n":[12345678901234567890123,-12345678901234567890123,18446744073709551615,0.1000000000000000000001,100000000000000000000,0.1]}"#
        );
        assert_eq!(decode(t.as_bytes(), &ty).unwrap(), v);
        // Exponent forms and the legacy string form read exactly as well.
        let ty = Type::object([("a", Type::Number), ("b", Type::Number)]);
        assert_eq!(
            decode(
                br#"{"a":1.2345678901234567890123e22,"b":"-0.1000000000000000000001"}"#,
                &ty
            )
            .unwrap(),
            Value::object([
                ("a", num("12345678901234567890123")),
                ("b", num("-0.1000000000000000000001"))
            ])
        );
        let inf = Value::Number(Number::Float(f64::INFINITY));
        assert!(encode(&inf, &Type::Number).is_err());
    }

    #[test]
    fn objects_fill_missing_attributes_with_null() {
        let ty = Type::object([("a", Type::String), ("b", Type::list(Type::Number))]);
        assert_eq!(
            text(&Value::object([("a", Value::from("x"))]), &ty),
            r#"{"a":"x","b":null}"#
        );
        assert_eq!(
            decode(br#"{"b":[1,2.5]}"#, &ty).unwrap(),
            Value::object([
                ("a", Value::null()),
                (
                    "b",
                    Value::tuple(vec![Value::int(1), Value::Number(Number::Float(2.5))])
                )
            ])
        );
    }
}
