//! Numeric functions: min, max, abs, ceil, floor, pow, signum, sum,
//! parseint, tonumber. All exact except `pow`, which cty computes in `f64`.

use super::{Def, FnError, FnResult, Unknowns::Deep, def, list_arg, num_arg, str_arg};
use crate::eval::ops::to_number;
use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::BigInt;
use fleetform_shared::value::{Number, Value};
use std::cmp::Ordering;

pub(super) const DEFS: &[Def] = &[
    def("tonumber", 1, Some(1), Deep, tonumber),
    def("min", 1, None, Deep, min),
    def("max", 1, None, Deep, max),
    def("abs", 1, Some(1), Deep, abs),
    def("ceil", 1, Some(1), Deep, ceil),
    def("floor", 1, Some(1), Deep, floor),
    def("pow", 2, Some(2), Deep, pow),
    def("signum", 1, Some(1), Deep, signum),
    def("parseint", 2, Some(2), Deep, parseint),
    def("sum", 1, Some(1), Deep, sum),
];

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

/// The first of the numbers that `better` prefers to every other.
fn best(a: &[Value], better: Ordering) -> FnResult {
    let best = all(a)?
        .into_iter()
        .reduce(|x, y| if y.compare(&x) == Some(better) { y } else { x });
    Ok(Value::Number(best.expect("arity checked")))
}

pub(super) fn min(a: &[Value]) -> FnResult {
    best(a, Ordering::Less)
}

pub(super) fn max(a: &[Value]) -> FnResult {
    best(a, Ordering::Greater)
}

pub(super) fn abs(a: &[Value]) -> FnResult {
    Ok(Value::Number(num_arg(a, 0)?.abs()))
}

pub(super) fn ceil(a: &[Value]) -> FnResult {
    Ok(Value::Number(num_arg(a, 0)?.ceil()))
}

pub(super) fn floor(a: &[Value]) -> FnResult {
    Ok(Value::Number(num_arg(a, 0)?.floor()))
}

/// The sum of a list, set or tuple of numbers, exact at any size.
pub(super) fn sum(a: &[Value]) -> FnResult {
    let items = list_arg(a, 0)?;
    let mut total: Option<Number> = None;
    for item in items {
        let n = match item {
            Value::Null => {
                return Err(FnError::arg(
                    0,
                    "argument must be list, set, or tuple of number values",
                ));
            }
            v => to_number(v).ok_or_else(|| {
                FnError::arg(0, format!("number required, but have {}", v.kind()))
            })?,
        };
        total = Some(match total {
            Some(t) => t.add(&n),
            None => n,
        });
    }
    total
        .map(Value::Number)
        .ok_or_else(|| FnError::arg(0, "cannot sum an empty list"))
}

pub(super) fn pow(a: &[Value]) -> FnResult {
    n(num_arg(a, 0)?.as_f64().powf(num_arg(a, 1)?.as_f64()))
}

pub(super) fn signum(a: &[Value]) -> FnResult {
    Ok(Value::int(num_arg(a, 0)?.signum()))
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
    let invalid = || FnError::arg(0, format!("cannot parse {text:?} as a base {base} integer"));
    if let Ok(i) = i64::from_str_radix(&text, base as u32) {
        return Ok(Value::int(i));
    }
    // Too large for i64, or not a number: big.Int's rules, which take
    // neither digit separators nor a sign without digits.
    let digits = text.strip_prefix(['+', '-']).unwrap_or(&text);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(invalid());
    }
    BigInt::parse_bytes(text.as_bytes(), base as u32)
        .map(|i| Value::Number(Number::from_decimal(BigDecimal::from(i))))
        .ok_or_else(invalid)
}
