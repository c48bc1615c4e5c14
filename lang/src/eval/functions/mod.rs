//! The built-in function library: lookup by name (also as `core::NAME`),
//! the arity checks, argument conversion and null checks that each
//! function's signature (`signatures`) drives, unknown propagation, and
//! errors as diagnostics at the offending argument, naming its parameter.

mod charsets;
mod collections;
mod conversion;
mod csv;
mod datetime;
mod encoding;
mod encoding_text;
mod files;
mod fileset;
mod format;
pub(crate) mod go_fmt;
#[cfg(test)]
mod golden;
mod hashes;
mod lists;
mod maps;
pub(crate) mod marks;
mod network;
mod numeric;
mod params;
mod regex;
mod returns;
mod sets;
mod signatures;
mod strings;
mod template;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod text_test_support;
mod yaml_decode;
mod yaml_encode;

pub use datetime::{now_rfc3339, parse_go_duration, parse_rfc3339};
pub use signatures::{CORE_NAMESPACE, metadata_json};

use super::convert::convert;
use super::env::EvalEnv;
use super::expr::Expr;
use super::ops::err;
use fleetform_shared::diag::{Diagnostics, SourceRange};
use fleetform_shared::value::Value;
use signatures::Signature;

/// A function failure, optionally blamed on one argument.
pub(crate) struct FnError {
    pub arg: Option<usize>,
    pub msg: String,
}

impl FnError {
    pub fn arg(i: usize, msg: impl Into<String>) -> FnError {
        FnError {
            arg: Some(i),
            msg: msg.into(),
        }
    }

    pub fn call(msg: impl Into<String>) -> FnError {
        FnError {
            arg: None,
            msg: msg.into(),
        }
    }
}

pub(crate) type FnResult = Result<Value, FnError>;

/// What a function computes from: its arguments alone, or its arguments
/// and the evaluation environment (files, the clock, the phase).
#[derive(Clone, Copy)]
pub(crate) enum Body {
    Pure(fn(&[Value]) -> FnResult),
    Env(fn(&EvalEnv, &[Value]) -> FnResult),
}

/// How a function treats unknown arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unknowns {
    /// Any unknown anywhere in the arguments makes the result unknown.
    Deep,
    /// Only a wholly unknown argument makes the result unknown; the function
    /// copes with unknown elements itself (`length`, `concat`, `merge`…).
    Shallow,
    /// The function sees even wholly unknown arguments: `coalesce` and
    /// `lookup`'s default can be skipped past, `setproduct` and the removed
    /// `list`/`map` check their arguments first.
    Allow,
}

/// How a function computes; its parameters are in its [`Signature`].
pub(crate) struct Def {
    name: &'static str,
    unknowns: Unknowns,
    /// Impure functions (`timestamp`, `uuid`, `bcrypt`) give a different
    /// result at every call, so, as in Terraform, they are unknown while
    /// planning and known only when applying.
    impure: bool,
    body: Body,
}

/// A pure function of its arguments.
pub(crate) const fn def(
    name: &'static str,
    unknowns: Unknowns,
    f: fn(&[Value]) -> FnResult,
) -> Def {
    Def {
        name,
        unknowns,
        impure: false,
        body: Body::Pure(f),
    }
}

/// A function that also reads the evaluation environment (files, the
/// plan's timestamp); still deterministic for one run.
pub(crate) const fn def_env(
    name: &'static str,
    unknowns: Unknowns,
    f: fn(&EvalEnv, &[Value]) -> FnResult,
) -> Def {
    Def {
        name,
        unknowns,
        impure: false,
        body: Body::Env(f),
    }
}

/// An impure function: unknown while planning (see [`Def::impure`]).
pub(crate) const fn def_impure(name: &'static str, f: fn(&EvalEnv, &[Value]) -> FnResult) -> Def {
    Def {
        name,
        unknowns: Unknowns::Deep,
        impure: true,
        body: Body::Env(f),
    }
}

/// Every group of functions; a name appears in exactly one group.
const GROUPS: &[&[Def]] = &[
    collections::DEFS,
    lists::DEFS,
    maps::DEFS,
    sets::DEFS,
    conversion::DEFS,
    strings::DEFS,
    numeric::DEFS,
    encoding::DEFS,
    format::DEFS,
    regex::DEFS,
    encoding_text::DEFS,
    csv::DEFS,
    yaml_encode::DEFS,
    yaml_decode::DEFS,
    files::DEFS,
    fileset::DEFS,
    template::DEFS,
    hashes::DEFS,
    datetime::DEFS,
    network::DEFS,
];

fn find(name: &str) -> Option<&'static Def> {
    GROUPS
        .iter()
        .flat_map(|g| g.iter())
        .find(|d| d.name == name)
}

/// Functions the evaluator implements itself: they see their arguments'
/// errors (`try`, `can`) or sensitivity marks, not only their values.
const SPECIAL: &[&str] = &[
    "try",
    "can",
    "sensitive",
    "nonsensitive",
    "issensitive",
    "ephemeralasnull",
];

/// A built-in function's name without the `core::` namespace it may be
/// called in.
pub(crate) fn builtin_name(name: &str) -> &str {
    name.strip_prefix(CORE_NAMESPACE).unwrap_or(name)
}

/// Whether `name` is a function the evaluator knows (including the special ones).
pub fn exists(name: &str) -> bool {
    let name = builtin_name(name);
    SPECIAL.contains(&name) || find(name).is_some()
}

/// The signature of built-in function `name`.
pub(crate) fn signature(name: &str) -> Option<&'static Signature> {
    signatures::find(builtin_name(name))
}

/// Calls function `name` with evaluated `values`; `args` supply the ranges for errors.
pub(crate) fn call(
    name: &str,
    values: Vec<Value>,
    args: &[Expr],
    range: &SourceRange,
    env: &EvalEnv,
) -> Result<Value, Diagnostics> {
    let called = name;
    let name = builtin_name(name);
    let (Some(def), Some(sig)) = (find(name), signatures::find(name)) else {
        return Err(unknown_function(called, range));
    };
    check_arity(sig, values.len(), args, range)?;
    let arg_range = |i: usize| args.get(i).or(args.last()).map_or(range, |a| &a.range);
    let values = convert_arguments(sig, values, &arg_range)?;
    if of_no_type_yet(sig, &values, &arg_range)? {
        return Ok(Value::unknown());
    }
    let unknown = match def.unknowns {
        Unknowns::Deep => values.iter().any(|v| !v.is_wholly_known()),
        Unknowns::Shallow => values.iter().any(Value::is_unknown),
        Unknowns::Allow => false,
    };
    if unknown || (def.impure && !env.apply) {
        return Ok(returns::unknown(sig, &values));
    }
    let result = match def.body {
        Body::Pure(f) => f(&values),
        Body::Env(f) => f(env, &values),
    };
    let result = result.map(|v| returns::typed(sig, &values, v));
    result.map_err(|e| match e.arg.and_then(|i| Some((i, sig.param(i)?))) {
        Some((i, p)) => invalid_argument(arg_range(i), p.name, &e.msg),
        None => err(
            range,
            "Error in function call",
            &format!("Call to function \"{name}\" failed: {}.", e.msg),
        ),
    })
}

/// The error for a call of a function there is none of.
pub(crate) fn unknown_function(name: &str, range: &SourceRange) -> Diagnostics {
    err(
        range,
        "Call to unknown function",
        &format!("There is no function named \"{name}\"."),
    )
}

/// HCL's checks of the number of arguments, naming the first missing parameter.
pub(crate) fn check_arity(
    sig: &Signature,
    given: usize,
    args: &[Expr],
    range: &SourceRange,
) -> Result<(), Diagnostics> {
    if let Some(missing) = sig.params.get(given) {
        let at_least = if sig.variadic.is_some() {
            " at least"
        } else {
            ""
        };
        return Err(err(
            range,
            "Not enough function arguments",
            &format!(
                "Function \"{}\" expects{at_least} {} argument(s). Missing value for \"{}\".",
                sig.name,
                sig.params.len(),
                missing.name
            ),
        ));
    }
    if let Some(max) = sig.max_args()
        && given > max
    {
        let r = args.get(max).map(|a| &a.range).unwrap_or(range);
        return Err(err(
            r,
            "Too many function arguments",
            &format!("Function \"{}\" expects only {max} argument(s).", sig.name),
        ));
    }
    Ok(())
}

/// The arguments converted to their parameters' types, as HCL converts
/// them before the call: every argument that does not convert is reported.
fn convert_arguments<'r>(
    sig: &Signature,
    values: Vec<Value>,
    arg_range: &impl Fn(usize) -> &'r SourceRange,
) -> Result<Vec<Value>, Diagnostics> {
    let mut diags = Diagnostics::new();
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.into_iter().enumerate() {
        let p = sig.param(i).expect("arity checked");
        match convert(v, &p.ty.to_type()) {
            Ok(v) => out.push(v),
            Err(msg) => {
                diags.extend(invalid_argument(arg_range(i), p.name, &msg));
                out.push(Value::null());
            }
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(out)
}

/// cty's checks of converted arguments before a function runs, argument by
/// argument in order: a null is refused where its parameter does not take
/// null, and an argument of no type yet (a literal `null`, an unknown of
/// no type) where its parameter does not allow that ends the checks: the
/// function is not called and its result is an unknown of no type
/// (`true`). Only the first such argument counts.
fn of_no_type_yet<'r>(
    sig: &Signature,
    values: &[Value],
    arg_range: &impl Fn(usize) -> &'r SourceRange,
) -> Result<bool, Diagnostics> {
    for (i, v) in values.iter().enumerate() {
        let p = sig.param(i).expect("arity checked");
        if v.is_null() && !p.allow_null {
            return Err(invalid_argument(
                arg_range(i),
                p.name,
                "argument must not be null",
            ));
        }
        if !p.allow_dynamic && v.ty() == fleetform_shared::types::Type::Dynamic {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The error converting argument `i` of built-in function `name` to its
/// parameter's type, if it does not convert.
pub(crate) fn conversion_error(
    name: &str,
    i: usize,
    value: Value,
    range: &SourceRange,
) -> Option<Diagnostics> {
    let p = signature(name)?.param(i)?;
    convert(value, &p.ty.to_type())
        .err()
        .map(|msg| invalid_argument(range, p.name, &msg))
}

/// An error blamed on one argument, named by its parameter as HCL names it.
fn invalid_argument(range: &SourceRange, param: &str, msg: &str) -> Diagnostics {
    err(
        range,
        "Invalid function argument",
        &format!("Invalid value for \"{param}\" parameter: {msg}."),
    )
}

/// Argument `i` as a string (numbers and bools convert).
pub(crate) fn str_arg(args: &[Value], i: usize) -> Result<String, FnError> {
    match params::arg(args, i, signatures::STR)? {
        Value::String(s) => Ok(s),
        _ => Err(FnError::arg(i, "string required")),
    }
}

/// Argument `i` as a number (numeric strings convert).
pub(crate) fn num_arg(
    args: &[Value],
    i: usize,
) -> Result<fleetform_shared::value::Number, FnError> {
    params::number(args, i)
}
