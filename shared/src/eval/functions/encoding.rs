//! Encoding functions: jsonencode, jsondecode, sha256.

use super::{FnError, FnResult, str_arg};
use crate::value::{Number, Value};
use sha2::{Digest, Sha256};

/// A known value as JSON; objects keep their sorted key order as Terraform's do.
pub(crate) fn to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null | Value::Unknown => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Number(Number::Int(i)) => serde_json::Value::from(*i),
        Value::Number(Number::Float(f)) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null),
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::List(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Map(m) => {
            serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}

pub(crate) fn from_json(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::int(i),
            None => Value::Number(Number::from_f64(n.as_f64().unwrap_or(f64::NAN))),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(items) => Value::List(items.iter().map(from_json).collect()),
        serde_json::Value::Object(m) => {
            Value::Map(m.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

pub(super) fn jsonencode(a: &[Value]) -> FnResult {
    Ok(Value::String(to_json(&a[0]).to_string()))
}

pub(super) fn jsondecode(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    serde_json::from_str::<serde_json::Value>(&text)
        .map(|j| from_json(&j))
        .map_err(|e| FnError::arg(0, format!("invalid JSON: {e}")))
}

pub(super) fn sha256(a: &[Value]) -> FnResult {
    Ok(Value::String(hex::encode(Sha256::digest(
        str_arg(a, 0)?.as_bytes(),
    ))))
}
