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
/// cty needs a concrete type on the wire. The value's own type
/// ([`Value::ty`]): the one it carries, else tuples and objects from its
/// structure; nulls and unknowns without a typed container stay `dynamic`.
pub fn infer_type(value: &Value) -> Type {
    value.ty()
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

/// A number as cty's encoders write it: an integer when it is one that
/// fits `i64`, a float when an `f64` holds it, otherwise its decimal text
/// (go-cty `msgpack/marshal.go`; cty JSON always writes the text).
enum WireNumber {
    Int(i64),
    Float(f64),
    Text(String),
}

fn wire_number(n: &Number) -> WireNumber {
    let canonical = match n {
        Number::Int(i) => return WireNumber::Int(*i),
        Number::Float(f) => Number::from_f64(*f),
        // Only a hand-built Big can be non-canonical; re-deriving is cheap enough for those.
        Number::Big(b) => Number::from_decimal(b.decimal().clone()),
    };
    match canonical {
        Number::Int(i) => WireNumber::Int(i),
        Number::Float(f) => WireNumber::Float(f),
        Number::Big(b) => WireNumber::Text(b.to_string()),
    }
}

/// Checks an object value against its type: no attribute the type lacks.
fn object_attrs<'v>(
    value: &'v Value,
    ty: &Type,
    attrs: &BTreeMap<String, Type>,
    path: &Path,
) -> Result<&'v crate::value::ValueMap, CodecError> {
    let Value::Map(items) = value else {
        return Err(path.mismatch(ty, value.kind()));
    };
    if let Some(extra) = items.keys().find(|k| !attrs.contains_key(k.as_str())) {
        return Err(path.error(format!("unsupported attribute {extra:?}")));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_values_infer_structural_types() {
        let v = Value::object([("a", Value::tuple(vec![Value::int(1), Value::null()]))]);
        assert_eq!(
            infer_type(&v),
            Type::object([("a", Type::Tuple(vec![Type::Number, Type::Dynamic]))])
        );
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
    crate::json::Json::from(value).to_string().into_bytes()
}

#[cfg(test)]
mod untyped_tests {
    use super::*;

    #[test]
    fn untyped_json_keeps_the_stored_shape() {
        let v = Value::object([
            ("a", Value::int(1)),
            ("gone", Value::tuple(vec![Value::from("x")])),
        ]);
        assert_eq!(untyped_json(&v), br#"{"a":1,"gone":["x"]}"#);
    }
}
