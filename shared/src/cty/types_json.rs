//! The JSON encoding of cty types, as schemas and dynamic values carry them:
//! `"string"`, `["list","number"]`, `["object",{"a":"bool"},["a"]]`, ...

use super::{CodecError, Path};
use crate::types::Type;
use serde_json::{Value as Json, json};
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn encode(ty: &Type) -> Vec<u8> {
    serde_json::to_vec(&to_json_value(ty)).expect("type JSON always serialises")
}

pub(super) fn decode(bytes: &[u8]) -> Result<Type, CodecError> {
    let json: Json = serde_json::from_slice(bytes)
        .map_err(|e| Path::default().error(format!("invalid type JSON: {e}")))?;
    from_json_value(&json, &mut Path::default())
}

pub(super) fn to_json_value(ty: &Type) -> Json {
    match ty {
        Type::Bool => json!("bool"),
        Type::Number => json!("number"),
        Type::String => json!("string"),
        Type::Dynamic => json!("dynamic"),
        Type::List(t) => json!(["list", to_json_value(t)]),
        Type::Set(t) => json!(["set", to_json_value(t)]),
        Type::Map(t) => json!(["map", to_json_value(t)]),
        Type::Object { attrs, optional } => {
            let attrs: serde_json::Map<String, Json> = attrs
                .iter()
                .map(|(k, t)| (k.clone(), to_json_value(t)))
                .collect();
            if optional.is_empty() {
                json!(["object", attrs])
            } else {
                json!(["object", attrs, optional])
            }
        }
        Type::Tuple(ts) => json!(["tuple", ts.iter().map(to_json_value).collect::<Vec<_>>()]),
    }
}

pub(super) fn from_json_value(json: &Json, path: &mut Path) -> Result<Type, CodecError> {
    match json {
        Json::String(s) => match s.as_str() {
            "bool" => Ok(Type::Bool),
            "number" => Ok(Type::Number),
            "string" => Ok(Type::String),
            "dynamic" => Ok(Type::Dynamic),
            other => Err(path.error(format!("unsupported primitive type {other:?}"))),
        },
        Json::Array(parts) => {
            let Some(kind) = parts.first().and_then(Json::as_str) else {
                return Err(path.error("a type array must start with its kind"));
            };
            let arg = |i: usize| {
                parts
                    .get(i)
                    .ok_or_else(|| path.error(format!("{kind} type is missing its argument")))
            };
            match kind {
                "list" | "set" | "map" => {
                    if parts.len() != 2 {
                        return Err(
                            path.error(format!("{kind} type takes exactly one element type"))
                        );
                    }
                    let elem = Box::new(from_json_value(&parts[1], path)?);
                    Ok(match kind {
                        "list" => Type::List(elem),
                        "set" => Type::Set(elem),
                        _ => Type::Map(elem),
                    })
                }
                "object" => object(arg(1)?, parts.get(2), path),
                "tuple" => {
                    let Json::Array(elems) = arg(1)? else {
                        return Err(path.error("tuple type needs an array of element types"));
                    };
                    let mut types = Vec::with_capacity(elems.len());
                    for (i, e) in elems.iter().enumerate() {
                        path.push_index(i);
                        types.push(from_json_value(e, path)?);
                        path.pop();
                    }
                    Ok(Type::Tuple(types))
                }
                other => Err(path.error(format!("unsupported type kind {other:?}"))),
            }
        }
        other => Err(path.error(format!("invalid type JSON {other}"))),
    }
}

fn object(
    attrs_json: &Json,
    optional_json: Option<&Json>,
    path: &mut Path,
) -> Result<Type, CodecError> {
    let Json::Object(attrs_json) = attrs_json else {
        return Err(path.error("object type needs a JSON object of attribute types"));
    };
    let mut attrs = BTreeMap::new();
    for (k, t) in attrs_json {
        path.push_key(k);
        attrs.insert(k.clone(), from_json_value(t, path)?);
        path.pop();
    }
    let mut optional = BTreeSet::new();
    if let Some(list) = optional_json {
        let Some(list) = list.as_array() else {
            return Err(path.error("optional attributes of an object type must be an array"));
        };
        for name in list {
            match name.as_str() {
                Some(n) if attrs.contains_key(n) => {
                    optional.insert(n.to_string());
                }
                _ => {
                    return Err(path.error(format!(
                        "optional attribute {name} is not an attribute of the object"
                    )));
                }
            }
        }
    }
    Ok(Type::Object { attrs, optional })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_have_cty_json_text() {
        let ty = Type::object([
            ("tags", Type::map(Type::String)),
            ("ports", Type::list(Type::Number)),
            ("pair", Type::Tuple(vec![Type::Bool, Type::Dynamic])),
            ("ids", Type::set(Type::String)),
        ]);
        let text = String::from_utf8(encode(&ty)).unwrap();
        assert_eq!(
            text,
            r#"["object",{"ids":["set","string"],"pair":["tuple",["bool","dynamic"]],"ports":["list","number"],"tags":["map","string"]}]"#
        );
        assert_eq!(decode(text.as_bytes()).unwrap(), ty);
    }

    #[test]
    fn optional_attributes_are_the_third_element() {
        let text = br#"["object",{"a":"string","b":"number"},["b"]]"#;
        let ty = decode(text).unwrap();
        let Type::Object { optional, .. } = &ty else {
            panic!("not an object: {ty:?}")
        };
        assert!(optional.contains("b") && optional.len() == 1);
        assert_eq!(encode(&ty), text.to_vec());
        assert!(decode(br#"["object",{"a":"string"},["zz"]]"#).is_err());
    }

    #[test]
    fn malformed_types_are_rejected_with_a_path() {
        let err = decode(br#"["object",{"a":["list","strin"]}]"#).unwrap_err();
        assert_eq!(err.to_string(), "a: unsupported primitive type \"strin\"");
        assert!(decode(br#"["list"]"#).is_err());
        assert!(decode(br#"42"#).is_err());
    }
}
