//! Provider-defined functions on the wire: signatures (in the schema and
//! in `GetFunctions`) and `CallFunction` in both directions. Each argument
//! travels as its own value, encoded with the type of the parameter it is
//! given for (the variadic parameter's for the arguments after the
//! positional ones).

use super::ConvertError;
use super::value::{decode_value, encode_value};
use crate::tfplugin6 as pb;
use fleetform_shared::cty;
use fleetform_shared::function::{FunctionError, FunctionParameter, FunctionSignature};
use fleetform_shared::provider::{CallFunctionRequest, CallFunctionResponse};
use fleetform_shared::types::Type;

fn type_of(bytes: &[u8], what: &str) -> Result<Type, ConvertError> {
    if bytes.is_empty() {
        return Ok(Type::Dynamic);
    }
    cty::type_from_json(bytes).map_err(|e| ConvertError::Schema {
        name: what.to_string(),
        message: e.to_string(),
    })
}

impl TryFrom<pb::function::Parameter> for FunctionParameter {
    type Error = ConvertError;
    fn try_from(p: pb::function::Parameter) -> Result<Self, ConvertError> {
        Ok(FunctionParameter {
            ty: type_of(&p.r#type, &p.name)?,
            name: p.name,
            allow_null: p.allow_null_value,
            allow_unknown: p.allow_unknown_values,
        })
    }
}

impl From<&FunctionParameter> for pb::function::Parameter {
    fn from(p: &FunctionParameter) -> Self {
        pb::function::Parameter {
            name: p.name.clone(),
            r#type: cty::type_to_json(&p.ty),
            allow_null_value: p.allow_null,
            allow_unknown_values: p.allow_unknown,
            description: String::new(),
            description_kind: 0,
        }
    }
}

impl TryFrom<pb::Function> for FunctionSignature {
    type Error = ConvertError;
    fn try_from(f: pb::Function) -> Result<Self, ConvertError> {
        Ok(FunctionSignature {
            parameters: f
                .parameters
                .into_iter()
                .map(FunctionParameter::try_from)
                .collect::<Result<_, _>>()?,
            variadic: f
                .variadic_parameter
                .map(FunctionParameter::try_from)
                .transpose()?,
            return_type: type_of(&f.r#return.map(|r| r.r#type).unwrap_or_default(), "return")?,
            summary: f.summary,
            description: f.description,
            deprecation: f.deprecation_message,
        })
    }
}

impl From<&FunctionSignature> for pb::Function {
    fn from(f: &FunctionSignature) -> Self {
        pb::Function {
            parameters: f.parameters.iter().map(Into::into).collect(),
            variadic_parameter: f.variadic.as_ref().map(Into::into),
            r#return: Some(pb::function::Return {
                r#type: cty::type_to_json(&f.return_type),
            }),
            summary: f.summary.clone(),
            description: f.description.clone(),
            description_kind: 0,
            deprecation_message: f.deprecation.clone(),
        }
    }
}

/// The type argument `i` travels as; an argument no parameter takes is an
/// error (the caller checked the count against the signature).
fn argument_type(sig: &FunctionSignature, i: usize) -> Result<&Type, ConvertError> {
    sig.parameter(i)
        .map(|p| &p.ty)
        .ok_or(ConvertError::Unsupported(
            "function argument beyond its parameters",
        ))
}

pub fn call_function_request_to_proto(
    req: &CallFunctionRequest,
    sig: &FunctionSignature,
) -> Result<pb::call_function::Request, ConvertError> {
    Ok(pb::call_function::Request {
        name: req.name.clone(),
        arguments: req
            .arguments
            .iter()
            .enumerate()
            .map(|(i, v)| encode_value(v, argument_type(sig, i)?))
            .collect::<Result<_, _>>()?,
    })
}

pub fn call_function_request_from_proto(
    p: pb::call_function::Request,
    sig: &FunctionSignature,
) -> Result<CallFunctionRequest, ConvertError> {
    Ok(CallFunctionRequest {
        name: p.name,
        arguments: p
            .arguments
            .iter()
            .enumerate()
            .map(|(i, dv)| decode_value(Some(dv), argument_type(sig, i)?))
            .collect::<Result<_, _>>()?,
    })
}

pub fn call_function_response_to_proto(
    r: &CallFunctionResponse,
    return_type: &Type,
) -> Result<pb::call_function::Response, ConvertError> {
    Ok(match &r.result {
        Ok(v) => pb::call_function::Response {
            result: Some(encode_value(v, return_type)?),
            error: None,
        },
        Err(e) => pb::call_function::Response {
            result: None,
            error: Some(pb::FunctionError {
                text: e.text.clone(),
                function_argument: e.argument.map(|i| i as i64),
            }),
        },
    })
}

pub fn call_function_response_from_proto(
    p: pb::call_function::Response,
    return_type: &Type,
) -> Result<CallFunctionResponse, ConvertError> {
    if let Some(e) = p.error {
        return Ok(CallFunctionResponse {
            result: Err(FunctionError {
                text: e.text,
                argument: e.function_argument.and_then(|i| usize::try_from(i).ok()),
            }),
        });
    }
    Ok(CallFunctionResponse {
        result: Ok(decode_value(p.result.as_ref(), return_type)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::value::Value;

    fn sig() -> FunctionSignature {
        FunctionSignature {
            parameters: vec![FunctionParameter::new("s", Type::String)],
            variadic: Some(FunctionParameter {
                allow_null: true,
                ..FunctionParameter::new("rest", Type::Number)
            }),
            return_type: Type::list(Type::String),
            summary: "x".into(),
            description: String::new(),
            deprecation: String::new(),
        }
    }

    #[test]
    fn signatures_and_calls_round_trip() {
        let s = sig();
        assert_eq!(
            FunctionSignature::try_from(pb::Function::from(&s)).unwrap(),
            s
        );
        let req = CallFunctionRequest {
            name: "f".into(),
            arguments: vec![Value::from("a"), Value::int(1), Value::null()],
        };
        let p = call_function_request_to_proto(&req, &s).unwrap();
        assert_eq!(p.arguments.len(), 3);
        assert_eq!(call_function_request_from_proto(p, &s).unwrap(), req);
        for result in [
            Ok(Value::tuple(vec![Value::from("x")])),
            Err(FunctionError::argument(1, "bad")),
        ] {
            let r = CallFunctionResponse { result };
            let p = call_function_response_to_proto(&r, &s.return_type).unwrap();
            assert_eq!(
                call_function_response_from_proto(p, &s.return_type).unwrap(),
                r
            );
        }
    }
}
