//! cty value codecs for the provider wire: msgpack (DynamicValue.msgpack) and
//! JSON (DynamicValue.json, RawState.json), plus the JSON encoding of types
//! used in schemas. Encoding is driven by the schema type, because the wire
//! format of a value depends on it (objects vs maps, dynamic wrapping).

use crate::types::Type;
use crate::value::Value;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CodecError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

/// Encodes `value` as cty msgpack of type `ty`. Unknown values use cty's
/// unknown extension.
pub fn to_msgpack(value: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    let _ = (value, ty);
    unimplemented!("cty msgpack encoder")
}

/// Decodes cty msgpack of type `ty`, including unknowns (plain and refined).
pub fn from_msgpack(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    let _ = (bytes, ty);
    unimplemented!("cty msgpack decoder")
}

/// Encodes a wholly known value as cty JSON of type `ty`.
pub fn to_json(value: &Value, ty: &Type) -> Result<Vec<u8>, CodecError> {
    let _ = (value, ty);
    unimplemented!("cty json encoder")
}

/// Decodes cty JSON of type `ty`.
pub fn from_json(bytes: &[u8], ty: &Type) -> Result<Value, CodecError> {
    let _ = (bytes, ty);
    unimplemented!("cty json decoder")
}

/// The JSON encoding of a cty type (`"string"`, `["map","string"]`, ...).
pub fn type_to_json(ty: &Type) -> Vec<u8> {
    let _ = ty;
    unimplemented!("cty type json encoder")
}

pub fn type_from_json(bytes: &[u8]) -> Result<Type, CodecError> {
    let _ = bytes;
    unimplemented!("cty type json decoder")
}
