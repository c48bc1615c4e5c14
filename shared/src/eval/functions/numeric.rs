//! Numeric functions: min, max, abs, ceil, floor, pow, parseint, tonumber.

use super::{FnError, FnResult, num_arg, str_arg};
use crate::value::{Number, Value};

fn n(x: f64) -> FnResult {
    Ok(Value::Number(Number::from_f64(x)))
}

pub(super) fn tonumber(a: &[Value]) -> FnResult {
    match &a[0] {
        Value::Null => Ok(Value::Null),
        v => crate::eval::ops::to_number(v)
            .map(Value::Number)
            .ok_or_else(|| FnError::arg(0, format!("cannot convert {} to number", describe(v)))),
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        v => v.kind().to_string(),
    }
}

fn all(a: &[Value]) -> Result<Vec<Number>, FnError> {
    (0..a.len()).map(|i| num_arg(a, i)).collect()
}

pub(super) fn min(a: &[Value]) -> FnResult {
    let nums = all(a)?;
    let best = nums
        .iter()
        .copied()
        .reduce(|x, y| if y.as_f64() < x.as_f64() { y } else { x });
    Ok(Value::Number(best.expect("arity checked")))
}

pub(super) fn max(a: &[Value]) -> FnResult {
    let nums = all(a)?;
    let best = nums
        .iter()
        .copied()
        .reduce(|x, y| if y.as_f64() > x.as_f64() { y } else { x });
    Ok(Value::Number(best.expect("arity checked")))
}

pub(super) fn abs(a: &[Value]) -> FnResult {
    match num_arg(a, 0)? {
        Number::Int(i) => Ok(Value::Number(
            i.checked_abs()
                .map(Number::Int)
                .unwrap_or(Number::Float((i as f64).abs())),
        )),
        Number::Float(f) => n(f.abs()),
    }
}

pub(super) fn ceil(a: &[Value]) -> FnResult {
    n(num_arg(a, 0)?.as_f64().ceil())
}

pub(super) fn floor(a: &[Value]) -> FnResult {
    n(num_arg(a, 0)?.as_f64().floor())
}

pub(super) fn pow(a: &[Value]) -> FnResult {
    n(num_arg(a, 0)?.as_f64().powf(num_arg(a, 1)?.as_f64()))
}

pub(super) fn signum(a: &[Value]) -> FnResult {
    let x = num_arg(a, 0)?.as_f64();
    Ok(Value::int(if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }))
}

pub(super) fn parseint(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let base = num_arg(a, 1)?
        .as_i64()
        .filter(|b| (2..=62).contains(b))
        .ok_or_else(|| FnError::arg(1, "base must be a whole number between 2 and 62 inclusive"))?;
    if base > 36 {
        return Err(FnError::arg(1, "bases above 36 are not supported yet"));
    }
    i64::from_str_radix(&text, base as u32)
        .map(Value::int)
        .map_err(|_| FnError::arg(0, format!("cannot parse {text:?} as a base {base} integer")))
}
