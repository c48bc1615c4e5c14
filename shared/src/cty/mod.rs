//! cty value codecs for the provider wire: msgpack (DynamicValue.msgpack) and
//! JSON (DynamicValue.json, RawState.json), plus the JSON encoding of types
//! used in schemas. Encoding is driven by the schema type, because the wire
//! format of a value depends on it (objects vs maps, dynamic wrapping).
//!
//! The formats follow go-cty's `msgpack` and `json` packages, so values
//! round-trip with real Terraform providers.

mod json;
mod msgpack;
#[cfg(test)]
mod proptests;
mod types_json;

use crate::types::Type;
use crate::value::{Number, PathStep, Value, path_string};
use std::collections::BTreeMap;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CodecError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// Encodes `value` as cty msgpack of type `ty`. Unknown values use cty's
/// unknown extension.
pub fn to_msgpack(value: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    msgpack::encode(value, ty)
}

/// Decodes cty msgpack of type `ty`, including unknowns (plain and refined).
pub fn from_msgpack(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    msgpack::decode(bytes, ty)
}

/// Encodes a wholly known value as cty JSON of type `ty`.
pub fn to_json(value: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    json::encode(value, ty)
}

/// Decodes cty JSON of type `ty`.
pub fn from_json(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    json::decode(bytes, ty)
}

/// The JSON encoding of a cty type (`"string"`, `["map","string"]`, ...).
pub fn type_to_json(ty: &Type) -> Vec<u8> {
    types_json::encode(ty)
}

pub fn type_from_json(bytes: &[u8]) -> Result<Type, CodecError> {
    types_json::decode(bytes)
}

/// The type a value has when it is sent where the schema says `dynamic`:
/// cty needs a concrete type on the wire, and an untyped [`Value`] gives the
/// most specific one it can (lists become tuples, maps become objects).
/// Nulls and unknowns inside stay `dynamic`.
pub fn infer_type(value: &Value) -> Type {
    match value {
        Value::Null | Value::Unknown => Type::Dynamic,
        Value::Bool(_) => Type::Bool,
        Value::Number(_) => Type::Number,
        Value::String(_) => Type::String,
        Value::List(items) => Type::Tuple(items.iter().map(infer_type).collect()),
        Value::Map(items) => Type::Object {
            attrs: items
                .iter()
                .map(|(k, v)| (k.clone(), infer_type(v)))
                .collect(),
            optional: Default::default(),
        },
    }
}

/// The attribute path being encoded or decoded, for error messages.
#[derive(Default)]
struct Path(Vec<PathStep>);

impl Path {
    fn error(&self, message: impl Into<String>) -> CodecError {
        let path = if self.0.is_empty() {
            "value".to_string()
        } else {
            path_string(&self.0)
        };
        CodecError::Invalid {
            path,
            message: message.into(),
        }
    }

    fn mismatch(&self, ty: &Type, found: &str) -> CodecError {
        self.error(format!("expected {ty}, found {found}"))
    }

    fn push_key(&mut self, key: &str) {
        self.0.push(PathStep::Key(key.to_string()));
    }

    fn push_index(&mut self, index: usize) {
        self.0.push(PathStep::Index(index as i64));
    }

    fn pop(&mut self) {
        self.0.pop();
    }
}

/// A number in the representation cty uses on the wire: exact integers as
/// integers, everything else as a float.
fn wire_number(n: Number) -> Number {
    match n {
        Number::Int(_) => n,
        Number::Float(f) => Number::from_f64(f),
    }
}

/// Parses the decimal text cty uses for numbers that fit no msgpack/JSON number.
fn parse_number(text: &str) -> Option<Number> {
    let text = text.trim();
    if let Ok(i) = text.parse::<i64>() {
        return Some(Number::Int(i));
    }
    let f = text.parse::<f64>().ok()?;
    if f.is_nan() {
        return None;
    }
    Some(Number::from_f64(f))
}

/// Checks an object value against its type: no attribute the type lacks.
fn object_attrs<'v>(
    value: &'v Value,
    ty: &Type,
    attrs: &BTreeMap<String, Type>,
    path: &Path,
) -> Result<&'v BTreeMap<String, Value>, CodecError> {
    let Value::Map(items) = value else {
        return Err(path.mismatch(ty, value.kind()));
    };
    if let Some(extra) = items.keys().find(|k| !attrs.contains_key(*k)) {
        return Err(path.error(format!("unsupported attribute {extra:?}")));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_values_infer_structural_types() {
        let v = Value::object([("a", Value::List(vec![Value::int(1), Value::Null]))]);
        assert_eq!(
            infer_type(&v),
            Type::object([("a", Type::Tuple(vec![Type::Number, Type::Dynamic]))])
        );
    }

    #[test]
    fn numbers_parse_from_decimal_text() {
        assert_eq!(parse_number("12"), Some(Number::Int(12)));
        assert_eq!(parse_number("1.5"), Some(Number::Float(1.5)));
        assert_eq!(parse_number("1e3"), Some(Number::Int(1000)));
        assert_eq!(parse_number("x"), None);
    }

    #[test]
    fn errors_name_the_path() {
        let ty = Type::object([("tags", Type::map(Type::String))]);
        let v = Value::object([("tags", Value::object([("a", Value::int(1))]))]);
        let err = to_msgpack(&v, &ty).unwrap_err();
        assert_eq!(err.to_string(), "tags.a: expected string, found number");
    }
}

/// A wholly known value as plain JSON, without a type: what Terraform stores
/// in state and sends in `RawState.json`, so a provider can upgrade an
/// object written under an older schema (whose shape the current schema
/// type no longer describes). Unknowns become null; state never holds them.
pub fn untyped_json(value: &Value) -> Vec<u8> {
    fn conv(v: &Value) -> serde_json::Value {
        match v {
            Value::Null | Value::Unknown => serde_json::Value::Null,
            Value::Bool(b) => (*b).into(),
            Value::Number(crate::value::Number::Int(i)) => (*i).into(),
            Value::Number(crate::value::Number::Float(f)) => serde_json::Number::from_f64(*f)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            Value::String(s) => s.clone().into(),
            Value::List(items) => items.iter().map(conv).collect(),
            Value::Map(m) => m
                .iter()
                .map(|(k, x)| (k.clone(), conv(x)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }
    serde_json::to_vec(&conv(value)).expect("json values serialise")
}

#[cfg(test)]
mod untyped_tests {
    use super::*;

    #[test]
    fn untyped_json_keeps_the_stored_shape() {
        let v = Value::object([
            ("a", Value::int(1)),
            ("gone", Value::List(vec![Value::from("x")])),
        ]);
        assert_eq!(untyped_json(&v), br#"{"a":1,"gone":["x"]}"#);
    }
}
