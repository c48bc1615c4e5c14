//! `DynamicValue` ↔ [`Value`]: msgpack on the way out, msgpack or JSON on
//! the way in, always against a schema type.

use super::ConvertError;
use crate::tfplugin6::DynamicValue;
use fleetform_shared::cty;
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

/// Encodes a value as msgpack, the encoding Terraform itself sends.
pub fn encode_value(value: &Value, ty: &Type) -> Result<DynamicValue, ConvertError> {
    let msgpack = cty::to_msgpack(value, ty).map_err(|source| ConvertError::Codec {
        what: "msgpack encode",
        source,
    })?;
    Ok(DynamicValue {
        msgpack,
        json: Vec::new(),
    })
}

/// Encodes a wholly known value as JSON (for peers that want the JSON form).
pub fn encode_value_json(value: &Value, ty: &Type) -> Result<DynamicValue, ConvertError> {
    let json = cty::to_json(value, ty).map_err(|source| ConvertError::Codec {
        what: "json encode",
        source,
    })?;
    Ok(DynamicValue {
        msgpack: Vec::new(),
        json,
    })
}

/// Decodes a value; an absent or empty `DynamicValue` is null.
pub fn decode_value(dv: Option<&DynamicValue>, ty: &Type) -> Result<Value, ConvertError> {
    let Some(dv) = dv else {
        return Ok(Value::null());
    };
    if !dv.msgpack.is_empty() {
        cty::from_msgpack(&dv.msgpack, ty).map_err(|source| ConvertError::Codec {
            what: "msgpack decode",
            source,
        })
    } else if !dv.json.is_empty() {
        cty::from_json(&dv.json, ty).map_err(|source| ConvertError::Codec {
            what: "json decode",
            source,
        })
    } else {
        Ok(Value::null())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_and_empty_values_decode_as_null() {
        assert_eq!(decode_value(None, &Type::String).unwrap(), Value::null());
        assert_eq!(
            decode_value(Some(&DynamicValue::default()), &Type::String).unwrap(),
            Value::null()
        );
    }

    #[test]
    fn values_round_trip_through_msgpack() {
        let ty = Type::object([("id", Type::String), ("tags", Type::map(Type::String))]);
        let v = Value::object([
            ("id", Value::unknown()),
            ("tags", Value::object([("a", Value::from("b"))])),
        ]);
        let dv = encode_value(&v, &ty).unwrap();
        assert!(dv.json.is_empty());
        assert_eq!(decode_value(Some(&dv), &ty).unwrap(), v);
    }

    #[test]
    fn json_is_accepted_on_decode() {
        let ty = Type::object([("n", Type::Number)]);
        let dv = DynamicValue {
            msgpack: Vec::new(),
            json: br#"{"n":3}"#.to_vec(),
        };
        assert_eq!(
            decode_value(Some(&dv), &ty).unwrap(),
            Value::object([("n", Value::int(3))])
        );
    }
}
