//! Operators, attribute and index access on values, and the primitive
//! conversions HCL applies implicitly (numbers ↔ strings, "true" ↔ true),
//! with HCL's diagnostics (`hcl.Index`, `hcl.GetAttr`, operand conversion).

use super::convert::{convert, infer, string_to_bool};
use super::expr::{BinaryOp, UnaryOp};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::types::Type;
use fleetform_shared::value::{Number, Value};
use std::cmp::Ordering;

type R = Result<Value, Diagnostics>;

pub(crate) fn err(range: &SourceRange, summary: &str, detail: &str) -> Diagnostics {
    Diagnostic::error(summary, detail).at(range.clone()).into()
}

/// The string form of a primitive, as templates and `tostring` produce it.
pub(crate) fn to_string(v: &Value) -> Option<String> {
    super::convert::primitive_string(v)
}

/// A number from a number or a numeric string.
pub(crate) fn to_number(v: &Value) -> Option<Number> {
    match v {
        Value::Number(n) => Some(n.clone()),
        Value::String(s) => Number::parse(s),
        _ => None,
    }
}

/// A known, non-null value as a bool the way cty converts it: the error is
/// cty's message ("a bool is required", "bool required").
pub(crate) fn as_bool(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) => string_to_bool(s),
        other => Err(super::convert::mismatch(&infer(other), &Type::Bool)),
    }
}

/// A conditional's condition: None when unknown.
pub(crate) fn condition(v: &Value, range: &SourceRange) -> Result<Option<bool>, Diagnostics> {
    match v {
        Value::Unknown(_) => Ok(None),
        Value::Null(_) => Err(err(
            range,
            "Null condition",
            "The condition value is null. Conditions must either be true or false.",
        )),
        v => as_bool(v).map(Some).map_err(|_| {
            err(
                range,
                "Incorrect condition type",
                "The condition expression must be of type bool.",
            )
        }),
    }
}

/// The (key, value) pairs a `for` iterates over; None when the collection is unknown.
pub(crate) fn iterate(
    v: &Value,
    range: &SourceRange,
) -> Result<Option<Vec<(Value, Value)>>, Diagnostics> {
    match v {
        Value::Unknown(_) => Ok(None),
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
                .map(|(k, v)| (Value::String(k.to_string()), v.clone()))
                .collect(),
        )),
        Value::Null(_) => Err(err(
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

/// `value.name` as `hcl.GetAttr` does it, by the value's type: an object's
/// attribute, a map's element, and otherwise HCL's explanations (a list or
/// set of objects, a primitive). Unknown objects and maps give an unknown
/// of the attribute's or element's type.
pub(crate) fn get_attr(v: &Value, name: &str, range: &SourceRange) -> R {
    let unsupported = |detail: &str| err(range, "Unsupported attribute", detail);
    if v.is_null() {
        return Err(err(
            range,
            "Attempt to get attribute from null value",
            "This value is null, so it does not have any attributes.",
        ));
    }
    match v.ty() {
        Type::Object { attrs, .. } => match (attrs.get(name), v) {
            (None, _) => Err(unsupported(&format!(
                "This object does not have an attribute named \"{name}\"."
            ))),
            (Some(t), Value::Unknown(_)) => Ok(Value::unknown_of(t.clone())),
            (Some(_), v) => Ok(v
                .as_map()
                .and_then(|m| m.get(name))
                .cloned()
                .unwrap_or_default()),
        },
        Type::Map(e) => match v {
            Value::Unknown(_) => Ok(Value::unknown_of(*e)),
            v => v
                .as_map()
                .and_then(|m| m.get(name))
                .cloned()
                .ok_or_else(|| {
                    err(
                        range,
                        "Missing map element",
                        &format!("This map does not have an element with the key \"{name}\"."),
                    )
                }),
        },
        Type::Dynamic => Ok(Value::unknown()),
        Type::List(e) if matches!(*e, Type::Object { .. }) => {
            let has = matches!(&*e, Type::Object { attrs, .. } if attrs.contains_key(name));
            Err(unsupported(&if has {
                format!(
                    "Can't access attributes on a list of objects. Did you mean to access attribute \"{name}\" for a specific element of the list, or across all elements of the list?"
                )
            } else {
                "Can't access attributes on a list of objects. Did you mean to access an attribute for a specific element of the list, or across all elements of the list?".to_string()
            }))
        }
        Type::Set(e) if matches!(*e, Type::Object { .. }) => Err(unsupported(
            "Can't access attributes on a set of objects. Did you mean to access an attribute across all elements of the set?",
        )),
        t if t.is_primitive() => Err(unsupported(&format!(
            "Can't access attributes on a primitive-typed value ({}).",
            t.friendly_name()
        ))),
        _ => Err(unsupported("This value does not have any attributes.")),
    }
}

/// `collection[key]` as `hcl.Index` does it: the key converts to a number
/// for sequences and to a string for maps and objects.
pub(crate) fn index(v: &Value, key: &Value, range: &SourceRange) -> R {
    const INVALID: &str = "The given key does not identify an element in this collection value";
    let invalid = |why: &str| err(range, "Invalid index", &format!("{INVALID}{why}"));
    if v.is_null() {
        return Err(err(
            range,
            "Attempt to index null value",
            "This value is null, so it does not have any indices.",
        ));
    }
    if key.is_null() {
        return Err(err(
            range,
            "Invalid index",
            "Can't use a null value as an indexing key.",
        ));
    }
    if key.is_unknown() || v.is_unknown() {
        // An element of a collection is of its element type; of a tuple,
        // of the type a known index selects; of an object, of no type yet.
        return Ok(match v.ty() {
            Type::List(e) | Type::Set(e) | Type::Map(e) => Value::unknown_of(*e),
            Type::Tuple(ts) => {
                let i = to_number(key).and_then(|n| n.as_i64());
                let ty = i
                    .and_then(|i| usize::try_from(i).ok())
                    .and_then(|i| ts.get(i));
                Value::unknown_of(ty.cloned().unwrap_or(Type::Dynamic))
            }
            _ => Value::unknown(),
        });
    }
    match v {
        Value::List(items) => {
            let n = match convert(key.clone(), &Type::Number) {
                Ok(Value::Number(n)) => n,
                Ok(_) => return Err(invalid(".")),
                Err(e) => return Err(invalid(&format!(": {e}."))),
            };
            if !n.is_integer() {
                return Err(invalid(
                    ": indexing a sequence requires a whole number, but the given index has a fractional part.",
                ));
            }
            if n.compare(&Number::Int(0)) == Some(Ordering::Less) {
                return Err(invalid(
                    ": a negative number is not a valid index for a sequence.",
                ));
            }
            match n.as_i64().and_then(|i| usize::try_from(i).ok()) {
                Some(i) if i < items.len() => Ok(items[i].clone()),
                _ if items.is_empty() => Err(invalid(": the collection has no elements.")),
                _ => Err(invalid(
                    ": the given index is greater than or equal to the length of the collection.",
                )),
            }
        }
        Value::Map(m) => {
            let k = match convert(key.clone(), &Type::String) {
                Ok(Value::String(k)) => k,
                Ok(_) => return Err(invalid(".")),
                Err(e) => return Err(invalid(&format!(": {e}."))),
            };
            m.get(&k).cloned().ok_or_else(|| {
                let hint = if matches!(key, Value::Number(_)) {
                    " An object only supports looking up attributes by name, not by numeric index."
                } else {
                    ""
                };
                invalid(&format!(".{hint}"))
            })
        }
        _ => Err(err(
            range,
            "Invalid index",
            "This value does not have any indices.",
        )),
    }
}

/// Converts an operand to the operation's parameter type, as HCL does
/// before calling the operation.
fn operand(v: Value, want: &Type, side: &str, range: &SourceRange) -> R {
    convert(v, want).map_err(|e| {
        err(
            range,
            "Invalid operand",
            &format!("Unsuitable value for {side} operand: {e}."),
        )
    })
}

fn null_argument(range: &SourceRange) -> Diagnostics {
    err(
        range,
        "Operation failed",
        "Error during operation: argument must not be null.",
    )
}

/// `-x` and `!x`; `operand_range` is where conversion errors point.
pub(crate) fn unary(op: UnaryOp, v: Value, operand_range: &SourceRange, range: &SourceRange) -> R {
    let want = match op {
        UnaryOp::Not => Type::Bool,
        UnaryOp::Neg => Type::Number,
    };
    match operand(v, &want, "unary", operand_range)? {
        Value::Null(_) => Err(null_argument(range)),
        Value::Unknown(_) => Ok(Value::unknown_of(want)),
        Value::Bool(b) => Ok(Value::Bool(!b)),
        Value::Number(n) => Ok(Value::Number(n.neg())),
        other => Ok(other),
    }
}

/// The source ranges of a binary operation: left, right, whole.
pub(crate) struct Ranges<'a> {
    pub left: &'a SourceRange,
    pub right: &'a SourceRange,
    pub whole: &'a SourceRange,
}

/// A binary operation. Both operands are always evaluated (Terraform 1.9's
/// HCL does not short-circuit `&&` and `||`), and like cty's `And`/`Or`, an
/// unknown operand makes the result unknown.
pub(crate) fn binary(op: BinaryOp, a: Value, b: Value, at: Ranges<'_>) -> R {
    if matches!(op, BinaryOp::Eq | BinaryOp::NotEq) {
        let eq = equality(&a, &b);
        return Ok(match (eq, op) {
            (Some(eq), BinaryOp::Eq) => Value::Bool(eq),
            (Some(eq), _) => Value::Bool(!eq),
            (None, _) => Value::unknown_of(Type::Bool),
        });
    }
    let want = match op {
        BinaryOp::And | BinaryOp::Or => Type::Bool,
        _ => Type::Number,
    };
    let x = operand(a, &want, "left", at.left);
    let y = operand(b, &want, "right", at.right);
    let (x, y) = match (x, y) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(mut d), Err(d2)) => {
            d.extend(d2);
            return Err(d);
        }
        (Err(d), _) | (_, Err(d)) => return Err(d),
    };
    if x.is_null() || y.is_null() {
        return Err(null_argument(at.whole));
    }
    // The result's type is the operator's: a comparison or logic gives a
    // bool, arithmetic a number.
    let result = match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
            Type::Number
        }
        _ => Type::Bool,
    };
    if x.is_unknown() || y.is_unknown() {
        return Ok(Value::unknown_of(result));
    }
    match (x, y) {
        (Value::Bool(x), Value::Bool(y)) => Ok(Value::Bool(match op {
            BinaryOp::And => x && y,
            _ => x || y,
        })),
        (Value::Number(x), Value::Number(y)) => arithmetic(op, x, y, at.whole),
        _ => Ok(Value::unknown_of(result)),
    }
}

/// cty's equality: None when unknowns leave it open. Null equals only
/// null; values whose shapes can never match are unequal even when parts
/// are unknown.
fn equality(a: &Value, b: &Value) -> Option<bool> {
    if a.is_wholly_known() && b.is_wholly_known() {
        return Some(a == b);
    }
    if a.is_unknown() || b.is_unknown() {
        return None;
    }
    if a.is_null() || b.is_null() {
        return Some(false);
    }
    if !conformable(&infer(a), &infer(b)) {
        return Some(false);
    }
    None
}

/// Whether two inferred types could still turn out equal once unknowns are known.
fn conformable(x: &Type, y: &Type) -> bool {
    match (x, y) {
        (Type::Dynamic, _) | (_, Type::Dynamic) => true,
        (Type::Tuple(a), Type::Tuple(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| conformable(a, b))
        }
        (Type::Object { attrs: a, .. }, Type::Object { attrs: b, .. }) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, t)| b.get(k).is_some_and(|u| conformable(t, u)))
        }
        (x, y) => x == y,
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
