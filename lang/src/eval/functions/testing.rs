//! Test helpers for the function groups: evaluate a call through the
//! evaluator (so arity, unknown propagation and error rendering are the
//! real ones) in a scope with a chosen environment.

use crate::eval::{EvalEnv, MapFiles, MapScope, evaluate, parse_expression};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::value::Value;
use std::sync::Arc;

/// A scope whose `var.unknown` is unknown, `var.partial` a list holding an
/// unknown, and `var.nothing` null, with `env` as its environment.
fn scope(env: &EvalEnv) -> MapScope {
    let mut s = MapScope::new()
        .with_variable("unknown", Value::unknown())
        .with_variable(
            "partial",
            Value::tuple(vec![Value::from("a"), Value::unknown()]),
        )
        .with_variable("nothing", Value::null());
    s.env = env.clone();
    s
}

/// Evaluates `src` in `env`; an error is its first diagnostic.
pub(crate) fn eval_in(env: &EvalEnv, src: &str) -> Result<Value, Diagnostic> {
    let e = parse_expression("test.tf", src).unwrap_or_else(|d| panic!("{src}: {d}"));
    evaluate(&e, &scope(env)).map_err(|d| d.0.into_iter().next().expect("a diagnostic"))
}

/// The value of `src` in `env`, which must evaluate.
pub(crate) fn ok_in(env: &EvalEnv, src: &str) -> Value {
    eval_in(env, src).unwrap_or_else(|d| panic!("{src}: {d}"))
}

/// The value of `src` while planning, with no files.
pub(crate) fn ok(src: &str) -> Value {
    ok_in(&EvalEnv::default(), src)
}

/// The detail of the error `src` fails with in `env`.
pub(crate) fn err_in(env: &EvalEnv, src: &str) -> String {
    match eval_in(env, src) {
        Ok(v) => panic!("{src}: expected an error, got {v:?}"),
        Err(d) => d.detail,
    }
}

/// The detail of the error `src` fails with while planning, with no files.
pub(crate) fn err(src: &str) -> String {
    err_in(&EvalEnv::default(), src)
}

/// An environment (planning) whose bundle holds `files`.
pub(crate) fn with_files(files: &[(&str, &[u8])]) -> EvalEnv {
    EvalEnv {
        files: Arc::new(MapFiles::new(
            files.iter().map(|(p, b)| (p.to_string(), b.to_vec())),
        )),
        ..EvalEnv::default()
    }
}

/// An environment that is applying (impure functions give values).
pub(crate) fn applying() -> EvalEnv {
    EvalEnv {
        apply: true,
        ..EvalEnv::default()
    }
}

pub(crate) fn s(x: &str) -> Value {
    Value::from(x)
}

/// HCL source text for a string literal holding `x`.
pub(crate) fn lit(x: &str) -> String {
    let escaped = x
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace("${", "$${")
        .replace("%{", "%%{");
    format!("\"{escaped}\"")
}
