//! The `sim` provider's functions, so that provider-defined functions are
//! exercised end to end by a real plugin process: `provider::sim::shout`.

use crate::framework::Function;
use fleetform_shared::function::{FunctionError, FunctionParameter, FunctionSignature};
use fleetform_shared::types::Type;
use fleetform_shared::value::{Number, Value};

/// `shout(text, times)`: `text` in capitals followed by `times` `!`;
/// a null `text` reads as empty, a negative `times` is refused.
pub struct Shout;

impl Function for Shout {
    fn name(&self) -> &'static str {
        "shout"
    }

    fn signature(&self) -> FunctionSignature {
        FunctionSignature {
            parameters: vec![
                FunctionParameter {
                    allow_null: true,
                    ..FunctionParameter::new("text", Type::String)
                },
                FunctionParameter::new("times", Type::Number),
            ],
            variadic: None,
            return_type: Type::String,
            summary: "Capitals and exclamation marks".into(),
            description: "Returns text in upper case followed by times exclamation marks.".into(),
            deprecation: String::new(),
        }
    }

    fn call(&self, args: &[Value]) -> Result<Value, FunctionError> {
        let text = match args.first() {
            Some(Value::String(s)) => s.to_uppercase(),
            _ => String::new(),
        };
        let times = match args.get(1) {
            Some(Value::Number(Number::Int(n))) => *n,
            Some(Value::Number(n)) => n.to_string().parse::<f64>().unwrap_or(-1.0) as i64,
            _ => return Err(FunctionError::argument(1, "a number is required")),
        };
        if times < 0 {
            return Err(FunctionError::argument(
                1,
                format!("times must not be negative, got {times}"),
            ));
        }
        if times > 1000 {
            return Err(FunctionError::call("that is too loud"));
        }
        Ok(Value::String(format!(
            "{text}{}",
            "!".repeat(times as usize)
        )))
    }
}
