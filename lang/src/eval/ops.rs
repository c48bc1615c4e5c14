//! Operators, attribute and index access on values, and the primitive
//! conversions HCL applies implicitly (numbers ↔ strings, "true" ↔ true).

use super::expr::{BinaryOp, UnaryOp};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::value::{Number, Value};
use std::cmp::Ordering;

type R = Result<Value, Diagnostics>;

pub(crate) fn err(range: &SourceRange, summary: &str, detail: &str) -> Diagnostics {
    Diagnostic::error(summary, detail).at(range.clone()).into()
}

/// The string form of a primitive, as templates and `tostring` produce it.
pub(crate) fn to_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A number from a number or a numeric string.
pub(crate) fn to_number(v: &Value) -> Option<Number> {
    match v {
        Value::Number(n) => Some(n.clone()),
        Value::String(s) => Number::parse(s),
        _ => None,
    }
}

/// A condition's truth: None when unknown.
pub(crate) fn to_bool(
    v: &Value,
    range: &SourceRange,
    summary: &str,
) -> Result<Option<bool>, Diagnostics> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Unknown => Ok(None),
        Value::String(s) if s == "true" => Ok(Some(true)),
        Value::String(s) if s == "false" => Ok(Some(false)),
        Value::Null => Err(err(
            range,
            summary,
            "The condition value is null. Conditions must either be true or false.",
        )),
        other => Err(err(
            range,
            summary,
            &format!(
                "The condition expression must be of type bool, not {}.",
                other.kind()
            ),
        )),
    }
}

/// The (key, value) pairs a `for` iterates over; None when the collection is unknown.
pub(crate) fn iterate(
    v: &Value,
    range: &SourceRange,
) -> Result<Option<Vec<(Value, Value)>>, Diagnostics> {
    match v {
        Value::Unknown => Ok(None),
        Value::List(items) => Ok(Some(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::int(i as i64), v.clone()))
                .collect(),
        )),
        Value::Map(items) => Ok(Some(
            items
                .iter()
                .map(|(k, v)| (Value::String(k.clone()), v.clone()))
                .collect(),
        )),
        Value::Null => Err(err(
            range,
            "Iteration over null value",
            "A null value cannot be used as the collection in a 'for' expression.",
        )),
        other => Err(err(
            range,
            "Iteration over non-iterable value",
            &format!(
                "A value of type {} cannot be used as the collection in a 'for' expression.",
                other.kind()
            ),
        )),
    }
}

pub(crate) fn get_attr(v: &Value, name: &str, range: &SourceRange) -> R {
    match v {
        Value::Unknown => Ok(Value::Unknown),
        Value::Map(m) => m.get(name).cloned().ok_or_else(|| {
            err(
                range,
                "Unsupported attribute",
                &format!("This object does not have an attribute named \"{name}\"."),
            )
        }),
        Value::Null => Err(err(
            range,
            "Attempt to get attribute from null value",
            "This value is null, so it does not have any attributes.",
        )),
        Value::List(_) => Err(err(
            range,
            "Unsupported attribute",
            &format!(
                "Can't access attributes on a list of objects. Did you mean to access attribute \"{name}\" for a specific element of the list, or across all elements of the list?"
            ),
        )),
        other => Err(err(
            range,
            "Unsupported attribute",
            &format!(
                "Can't access attributes on a primitive-typed value ({}).",
                other.kind()
            ),
        )),
    }
}

pub(crate) fn index(v: &Value, key: &Value, range: &SourceRange) -> R {
    if key.is_unknown() || v.is_unknown() {
        return Ok(Value::Unknown);
    }
    let missing = || {
        err(
            range,
            "Invalid index",
            "The given key does not identify an element in this collection value.",
        )
    };
    match v {
        Value::List(items) => {
            let i = to_number(key)
                .and_then(|n| n.as_i64())
                .ok_or_else(|| err(range, "Invalid index", "The given key does not identify an element in this collection value: a number is required."))?;
            let i = usize::try_from(i).map_err(|_| {
                err(range, "Invalid index", "The given key does not identify an element in this collection value: a negative number is not a valid index for a sequence.")
            })?;
            items.get(i).cloned().ok_or_else(missing)
        }
        Value::Map(m) => {
            let k = to_string(key).ok_or_else(|| err(range, "Invalid index", "The given key does not identify an element in this collection value: string required."))?;
            m.get(&k).cloned().ok_or_else(missing)
        }
        Value::Null => Err(err(
            range,
            "Attempt to index null value",
            "This value is null, so it does not have any indices.",
        )),
        other => Err(err(
            range,
            "Invalid index",
            &format!("This value does not have any indices ({}).", other.kind()),
        )),
    }
}

pub(crate) fn unary(op: UnaryOp, v: Value, range: &SourceRange) -> R {
    if v.is_unknown() {
        return Ok(Value::Unknown);
    }
    match op {
        UnaryOp::Not => match to_bool(&v, range, "Invalid operand")? {
            Some(b) => Ok(Value::Bool(!b)),
            None => Ok(Value::Unknown),
        },
        UnaryOp::Neg => {
            let n = to_number(&v).ok_or_else(|| operand_error(range, "number", &v))?;
            Ok(Value::Number(n.neg()))
        }
    }
}

fn operand_error(range: &SourceRange, want: &str, got: &Value) -> Diagnostics {
    err(
        range,
        "Invalid operand",
        &format!(
            "Unsuitable value for operand: a {want} is required, but have {}.",
            got.kind()
        ),
    )
}

pub(crate) fn binary(op: BinaryOp, a: Value, b: Value, range: &SourceRange) -> R {
    match op {
        BinaryOp::Eq | BinaryOp::NotEq => {
            if !a.is_wholly_known() || !b.is_wholly_known() {
                return Ok(Value::Unknown);
            }
            let eq = a == b;
            Ok(Value::Bool(if op == BinaryOp::Eq { eq } else { !eq }))
        }
        BinaryOp::And | BinaryOp::Or => {
            let x = to_bool(&a, range, "Invalid operand")?;
            let y = to_bool(&b, range, "Invalid operand")?;
            let and = op == BinaryOp::And;
            Ok(match (x, y) {
                (Some(x), Some(y)) => Value::Bool(if and { x && y } else { x || y }),
                // A known false (for &&) or true (for ||) decides alone.
                (Some(k), None) | (None, Some(k)) if k != and => Value::Bool(k),
                _ => Value::Unknown,
            })
        }
        _ => {
            if a.is_unknown() || b.is_unknown() {
                return Ok(Value::Unknown);
            }
            let x = to_number(&a).ok_or_else(|| operand_error(range, "number", &a))?;
            let y = to_number(&b).ok_or_else(|| operand_error(range, "number", &b))?;
            arithmetic(op, x, y, range)
        }
    }
}

fn arithmetic(op: BinaryOp, x: Number, y: Number, range: &SourceRange) -> R {
    let order = || x.compare(&y);
    Ok(match op {
        BinaryOp::Add => Value::Number(x.add(&y)),
        BinaryOp::Sub => Value::Number(x.sub(&y)),
        BinaryOp::Mul => Value::Number(x.mul(&y)),
        BinaryOp::Div => Value::Number(x.div(&y).ok_or_else(|| {
            err(
                range,
                "Operation failed",
                "Error during operation: can't divide by zero.",
            )
        })?),
        BinaryOp::Mod => Value::Number(x.rem(&y).ok_or_else(|| {
            err(
                range,
                "Operation failed",
                "Error during operation: can't use modulo with zero.",
            )
        })?),
        BinaryOp::Lt => Value::Bool(order().is_some_and(Ordering::is_lt)),
        BinaryOp::LtEq => Value::Bool(order().is_some_and(Ordering::is_le)),
        BinaryOp::Gt => Value::Bool(order().is_some_and(Ordering::is_gt)),
        BinaryOp::GtEq => Value::Bool(order().is_some_and(Ordering::is_ge)),
        BinaryOp::Eq | BinaryOp::NotEq | BinaryOp::And | BinaryOp::Or => {
            unreachable!("handled by binary")
        }
    })
}
