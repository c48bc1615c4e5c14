//! Test helpers for the string and encoding function tests: evaluate an
//! expression against a small scope, and build expected values.

use crate::eval::{MapScope, evaluate, parse_expression};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::value::{Number, Value};

/// A scope with `var.unknown`, `var.nothing` (null), `var.partial` (a list
/// with one unknown element) and `var.text` ("hello").
fn scope() -> MapScope {
    MapScope::new()
        .with_variable("unknown", Value::unknown())
        .with_variable("nothing", Value::null())
        .with_variable("partial", Value::tuple(vec![s("a"), Value::unknown()]))
        .with_variable("text", s("hello"))
}

pub(super) fn eval(src: &str) -> Result<Value, Diagnostic> {
    let e = parse_expression("test.tf", src).expect("parses");
    evaluate(&e, &scope()).map_err(|d| d.0.into_iter().next().expect("a diagnostic"))
}

/// Evaluates each case and compares with the expected value.
pub(super) fn check(cases: &[(&str, Value)]) {
    for (src, want) in cases {
        match eval(src) {
            Ok(got) => assert_eq!(&got, want, "{src}"),
            Err(d) => panic!("{src}: {}: {}", d.summary, d.detail),
        }
    }
}

/// Evaluates each case expecting an error whose detail is exactly the text.
pub(super) fn check_errors(cases: &[(&str, &str)]) {
    for (src, want) in cases {
        match eval(src) {
            Ok(v) => panic!("{src}: expected an error, got {v:?}"),
            Err(d) => assert_eq!(d.detail, *want, "{src}"),
        }
    }
}

pub(super) fn s(x: &str) -> Value {
    Value::from(x)
}

pub(super) fn n(x: &str) -> Value {
    Value::Number(Number::parse(x).expect("a number"))
}

pub(super) fn list(items: &[Value]) -> Value {
    Value::tuple(items.to_vec())
}

pub(super) fn strs(items: &[&str]) -> Value {
    Value::List(items.iter().map(|x| s(x)).collect())
}

pub(super) fn obj(items: &[(&str, Value)]) -> Value {
    Value::object(items.iter().map(|(k, v)| (*k, v.clone())))
}
