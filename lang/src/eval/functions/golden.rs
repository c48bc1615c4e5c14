//! Golden tests for the function library: tables of calls and what
//! Terraform 1.9 gives for them (its documentation's examples, unknown and
//! null arguments, error texts). Each group's table is in its own file.

use crate::eval::{MapScope, evaluate, parse_expression};
use fleetform_shared::value::Value;

mod collections_golden;
mod conversion_golden;
mod lists_golden;
mod maps_golden;
mod numeric_golden;
mod sets_golden;

/// What a call gives.
pub(super) enum Want {
    /// This value, written as an HCL expression (literals, `null`).
    Is(&'static str),
    /// An unknown value.
    Unknown,
    /// This error detail, exactly.
    Fails(&'static str),
}

pub(super) use Want::{Fails, Is, Unknown};

/// `var.u` is unknown; `var.strings` is `["b", "a"]`.
fn scope() -> MapScope {
    MapScope::new()
        .with_variable("u", Value::unknown())
        .with_variable(
            "strings",
            Value::tuple(vec![Value::from("b"), Value::from("a")]),
        )
}

fn eval(src: &str, scope: &MapScope) -> Result<Value, String> {
    let e = parse_expression("golden.tf", src).map_err(|d| format!("parse: {d}"))?;
    evaluate(&e, scope).map_err(|d| {
        d.0.first()
            .map(|d| d.detail.clone())
            .unwrap_or_else(|| "no diagnostic".into())
    })
}

/// Checks every case and reports all that differ at once.
pub(super) fn check(cases: &[(&str, Want)]) {
    let scope = scope();
    let mut failures = Vec::new();
    for (src, want) in cases {
        let got = eval(src, &scope);
        let ok = match (want, &got) {
            (Is(expected), Ok(v)) => {
                let expected = eval(expected, &scope)
                    .unwrap_or_else(|e| panic!("expected value {expected:?}: {e}"));
                // Exactly: a number is not the string of its digits.
                *v == expected
            }
            (Unknown, Ok(v)) => v.is_unknown(),
            (Fails(detail), Err(d)) => d == detail,
            _ => false,
        };
        if !ok {
            let want = match want {
                Is(v) => format!("value {v}"),
                Unknown => "unknown".into(),
                Fails(d) => format!("error {d:?}"),
            };
            failures.push(format!("{src}\n    want {want}\n    got  {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
