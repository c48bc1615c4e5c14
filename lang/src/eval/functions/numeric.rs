//! Numeric functions: min, max, abs, ceil, floor, pow, log, signum, sum,
//! parseint. All exact except `pow` and `log`, which cty computes in `f64`.
//! Any unknown argument, or element of `sum`'s list, makes the result
//! unknown.

use super::params;
use super::{
    Def, FnError, FnResult,
    Unknowns::{Deep, Shallow},
    def,
};
use crate::eval::convert::convert;
use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::BigInt;
use fleetform_shared::types::Type;
use fleetform_shared::value::{Number, Value};
use std::cmp::Ordering;

pub(super) const DEFS: &[Def] = &[
    def("min", Deep, min),
    def("max", Deep, max),
    def("abs", Deep, abs),
    def("ceil", Deep, ceil),
    def("floor", Deep, floor),
    def("pow", Deep, pow),
    def("log", Deep, log),
    def("signum", Deep, signum),
    def("parseint", Deep, parseint),
    def("sum", Shallow, sum),
];

/// The first of the numbers that `better` prefers to every other.
fn best(a: &[Value], better: Ordering) -> FnResult {
    let nums = (0..a.len())
        .map(|i| params::number(a, i))
        .collect::<Result<Vec<_>, _>>()?;
    nums.into_iter()
        .reduce(|x, y| if y.compare(&x) == Some(better) { y } else { x })
        .map(Value::Number)
        .ok_or_else(|| FnError::call("must pass at least one number"))
}

pub(super) fn min(a: &[Value]) -> FnResult {
    best(a, Ordering::Less)
}

pub(super) fn max(a: &[Value]) -> FnResult {
    best(a, Ordering::Greater)
}

pub(super) fn abs(a: &[Value]) -> FnResult {
    Ok(Value::Number(params::number(a, 0)?.abs()))
}

pub(super) fn ceil(a: &[Value]) -> FnResult {
    Ok(Value::Number(params::number(a, 0)?.ceil()))
}

pub(super) fn floor(a: &[Value]) -> FnResult {
    Ok(Value::Number(params::number(a, 0)?.floor()))
}

pub(super) fn pow(a: &[Value]) -> FnResult {
    float(
        params::number(a, 0)?
            .as_f64()
            .powf(params::number(a, 1)?.as_f64()),
    )
}

/// `ln(number) / ln(base)` in `f64`, as Terraform computes it.
pub(super) fn log(a: &[Value]) -> FnResult {
    float(params::number(a, 0)?.as_f64().ln() / params::number(a, 1)?.as_f64().ln())
}

/// cty cannot hold NaN (its function call fails on it); infinities it has.
fn float(x: f64) -> FnResult {
    if x.is_nan() {
        return Err(FnError::call("the result is not a number"));
    }
    Ok(Value::Number(Number::from_f64(x)))
}

/// The sign of any number. (cty reads the argument as a Go `int` first, so
/// Terraform refuses fractions and numbers beyond 64 bits here; the sign
/// of those is no less clear, so they are accepted.)
/// Terraform reads the number as a 64-bit integer first, so a fraction or
/// a number past that range fails the call.
pub(super) fn signum(a: &[Value]) -> FnResult {
    let n = params::whole(&params::number(a, 0)?).map_err(FnError::call)?;
    Ok(Value::int(n.signum()))
}

/// A list, set or tuple of numbers (numeric strings convert), not empty.
pub(super) fn sum(a: &[Value]) -> FnResult {
    let items = match &a[0] {
        Value::Null(_) => return Err(FnError::arg(0, "argument must not be null")),
        Value::List(items) if !items.is_empty() => items,
        // cty checks for emptiness before the kind of collection.
        Value::List(_) => return Err(FnError::arg(0, "cannot sum an empty list")),
        Value::Map(m) if m.is_empty() => {
            return Err(FnError::arg(0, "cannot sum an empty list"));
        }
        Value::Map(_) => {
            return Err(FnError::arg(
                0,
                "argument must be list, set, or tuple. Received object",
            ));
        }
        _ => return Err(FnError::arg(0, "cannot sum noniterable")),
    };
    if !items.iter().all(Value::is_wholly_known) {
        return Ok(Value::unknown());
    }
    let mut total: Option<Number> = None;
    for v in items {
        let n = match convert(v.clone(), &Type::Number) {
            Ok(Value::Number(n)) => n,
            _ => {
                return Err(FnError::arg(
                    0,
                    "argument must be list, set, or tuple of number values",
                ));
            }
        };
        total = Some(match total {
            Some(t) => t.add(&n),
            None => n,
        });
    }
    Ok(Value::Number(total.expect("not empty")))
}

/// An integer in base 2 to 62 as Go's `big.Int` reads it: an optional
/// sign, then digits 0-9, then letters (either case up to base 36; above
/// it a-z before A-Z), no prefix, no separators.
pub(super) fn parseint(a: &[Value]) -> FnResult {
    let text = match &a[0] {
        Value::String(s) => s.clone(),
        Value::Null(_) => return Err(FnError::arg(0, "argument must not be null")),
        v => {
            return Err(FnError::arg(
                0,
                format!(
                    "first argument must be a string, not {}",
                    params::type_name(v)
                ),
            ));
        }
    };
    let base = params::whole(&params::number(a, 1)?).map_err(|e| FnError::arg(1, e))?;
    if !(2..=62).contains(&base) {
        return Err(FnError::arg(
            1,
            "base must be a whole number between 2 and 62 inclusive",
        ));
    }
    parse_int(&text, base as u32)
        .map(|i| Value::Number(Number::from_decimal(BigDecimal::from(i))))
        .ok_or_else(|| FnError::arg(0, format!("cannot parse {text:?} as a base {base} integer")))
}

fn parse_int(text: &str, base: u32) -> Option<BigInt> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n = BigInt::from(0u32);
    for c in digits.chars() {
        let d = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 10,
            'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
            'A'..='Z' => c as u32 - 'A' as u32 + 36,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        n = n * base + d;
    }
    Some(if negative { -n } else { n })
}
