//! Reading arguments inside function bodies: an argument as a value of a
//! parameter type (through the one conversion, `eval::convert`), whole
//! numbers, equality with unknowns, and the unification of values some
//! functions do on their own (`coalesce`, `setunion`, `matchkeys`).
//! Both conversion and unification are `eval::convert`'s, the ones
//! variables use: nothing here converts on its own.

use super::FnError;
use super::signatures::{NUM, Ty};
use crate::eval::convert::{convert, unify, unify_known};
use fleetform_shared::types::Type;
use fleetform_shared::value::{Number, Value};

/// gocty's message for a number that is not a whole `int`.
pub(super) const WHOLE: &str =
    "value must be a whole number, between -9223372036854775808 and 9223372036854775807";

/// Argument `i` converted to `ty`; null is refused, as cty refuses it for
/// parameters that do not allow it. Errors blame the argument.
pub(super) fn arg(args: &[Value], i: usize, ty: Ty) -> Result<Value, FnError> {
    match &args[i] {
        Value::Null(_) => Err(FnError::arg(i, "argument must not be null")),
        v => convert(v.clone(), &ty.to_type()).map_err(|m| FnError::arg(i, m)),
    }
}

/// Argument `i` as a number.
pub(super) fn number(args: &[Value], i: usize) -> Result<Number, FnError> {
    match arg(args, i, NUM)? {
        Value::Number(n) => Ok(n),
        _ => Err(FnError::arg(i, "number required")),
    }
}

/// Argument `i` as the elements of a list of type `list` (`list(string)`…).
pub(super) fn list(args: &[Value], i: usize, list: Ty) -> Result<Vec<Value>, FnError> {
    match arg(args, i, list)? {
        Value::List(items) => Ok(items.into_vec()),
        _ => Err(FnError::arg(i, "list required")),
    }
}

/// A whole number that fits `i64`, else gocty's message.
pub(super) fn whole(n: &Number) -> Result<i64, String> {
    n.as_i64().ok_or_else(|| WHOLE.to_string())
}

/// How cty names a value's type in messages (its `FriendlyName`): what
/// the value carries (`map of string`), else what its structure makes
/// (`tuple`, `object`).
pub(super) fn type_name(v: &Value) -> String {
    v.ty().friendly_name()
}

/// The one type the elements `values` of a collection convert to, as
/// `eval::convert` unifies types (string is the most general primitive;
/// number and bool have none in common), elements of no type (nulls)
/// passed over as cty passes over them in a collection; None when there
/// is none.
pub(super) fn common_type<'a>(values: impl IntoIterator<Item = &'a Value>) -> Option<Type> {
    unify_known(&values.into_iter().map(Value::ty).collect::<Vec<_>>())
}

/// The type cty's `UnifyUnsafe` gives the types of separate arguments
/// (`coalesce`): a dynamic one among them counts (see `eval::convert`'s
/// unification), so `null` beside an object and a string gives `dynamic`.
pub(super) fn unified_type(values: &[Value]) -> Option<Type> {
    unify(&values.iter().map(Value::ty).collect::<Vec<_>>())
}

/// `v` converted to a type unification chose for it (see [`common_type`]).
pub(super) fn conform(v: Value, ty: &Type) -> Value {
    convert(v.clone(), ty).unwrap_or(v)
}

/// cty's `Equals`: None when unknowns leave it open. Collections compare
/// in order and the first undecided element leaves the whole undecided,
/// as cty's does.
pub(super) fn equal(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Unknown(_), _) | (_, Value::Unknown(_)) => None,
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            all_equal(x.iter().zip(y))
        }
        (Value::Map(x), Value::Map(y)) => {
            if !x.keys().eq(y.keys()) {
                return Some(false);
            }
            all_equal(x.values().zip(y.values()))
        }
        (a, b) => Some(a == b),
    }
}

fn all_equal<'a>(pairs: impl Iterator<Item = (&'a Value, &'a Value)>) -> Option<bool> {
    for (x, y) in pairs {
        match equal(x, y) {
            Some(true) => {}
            other => return other,
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[Value]) -> Value {
        Value::tuple(items.to_vec())
    }

    #[test]
    fn unification_prefers_string_and_refuses_number_with_bool() {
        let n = Value::int(1);
        let s = Value::from("a");
        let b = Value::Bool(true);
        assert_eq!(common_type(&[n.clone(), s.clone()]), Some(Type::String));
        assert_eq!(common_type(&[b.clone(), s.clone()]), Some(Type::String));
        assert_eq!(common_type(&[n.clone(), b.clone()]), None);
        assert_eq!(common_type(&[Value::null(), n.clone()]), Some(Type::Number));
        assert_eq!(common_type(&[n.clone(), list(&[])]), None);
        assert_eq!(common_type(&[]), Some(Type::Dynamic));
    }

    #[test]
    fn sequences_unify_by_position_then_as_lists() {
        let pair = |a: Value, b: Value| list(&[a, b]);
        let items = [
            pair(Value::int(1), Value::from("a")),
            pair(Value::int(2), Value::from("b")),
        ];
        assert_eq!(
            common_type(&items),
            Some(Type::Tuple(vec![Type::Number, Type::String]))
        );
        let ragged = [
            pair(Value::int(1), Value::from("a")),
            list(&[Value::int(2)]),
        ];
        let ty = common_type(&ragged).unwrap();
        assert_eq!(ty, Type::list(Type::String));
        assert_eq!(
            ragged.map(|v| conform(v, &ty)).to_vec(),
            vec![
                pair(Value::from("1"), Value::from("a")),
                list(&[Value::from("2")])
            ]
        );
        let objects = [
            Value::object([("a", Value::int(1))]),
            Value::object([("b", Value::Bool(true))]),
        ];
        assert_eq!(common_type(&objects), None);
    }

    #[test]
    fn arguments_convert_with_ctys_messages() {
        use super::super::signatures::{BOOL, LIST_STR, SET_DYN};
        let msg = |v: Value, ty: Ty| arg(&[v], 0, ty).err().unwrap().msg;
        assert_eq!(msg(Value::from("x"), NUM), "a number is required");
        assert_eq!(msg(Value::Bool(true), NUM), "number required");
        assert_eq!(
            msg(list(&[list(&[])]), LIST_STR),
            "element 0: string required"
        );
        assert_eq!(
            msg(list(&[Value::int(1), Value::Bool(true)]), SET_DYN),
            "all set elements must have the same type"
        );
        assert_eq!(
            msg(Value::from("TRUE"), BOOL),
            "a bool is required; to convert from string, use lowercase \"true\""
        );
        assert_eq!(msg(Value::null(), BOOL), "argument must not be null");
        assert_eq!(
            arg(&[Value::from("1")], 0, BOOL).ok(),
            Some(Value::Bool(true))
        );
    }

    #[test]
    fn equality_is_open_only_where_unknowns_decide_it() {
        let a = Value::from("a");
        assert_eq!(equal(&a, &Value::unknown()), None);
        assert_eq!(equal(&a, &Value::from("a")), Some(true));
        assert_eq!(equal(&Value::int(1), &Value::from("1")), Some(false));
        let partial = list(&[Value::unknown(), Value::int(1)]);
        assert_eq!(equal(&partial, &list(&[Value::int(1)])), Some(false));
        assert_eq!(
            equal(&partial, &list(&[Value::int(2), Value::int(1)])),
            None
        );
    }
}
