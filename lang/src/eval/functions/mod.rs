//! The built-in function library: lookup by name, arity checks, unknown
//! propagation, and errors as diagnostics at the offending argument.

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
mod strings;
mod template;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod text_test_support;
mod yaml_decode;
mod yaml_encode;

pub use datetime::{now_rfc3339, parse_go_duration};

use super::env::EvalEnv;
use super::expr::Expr;
use super::ops::err;
use fleetform_shared::diag::{Diagnostics, SourceRange};
use fleetform_shared::value::Value;

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

pub(crate) struct Def {
    name: &'static str,
    min: usize,
    /// None: variadic.
    max: Option<usize>,
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
    min: usize,
    max: Option<usize>,
    unknowns: Unknowns,
    f: fn(&[Value]) -> FnResult,
) -> Def {
    Def {
        name,
        min,
        max,
        unknowns,
        impure: false,
        body: Body::Pure(f),
    }
}

/// A function that also reads the evaluation environment (files, the
/// plan's timestamp); still deterministic for one run.
pub(crate) const fn def_env(
    name: &'static str,
    min: usize,
    max: Option<usize>,
    unknowns: Unknowns,
    f: fn(&EvalEnv, &[Value]) -> FnResult,
) -> Def {
    Def {
        name,
        min,
        max,
        unknowns,
        impure: false,
        body: Body::Env(f),
    }
}

/// An impure function: unknown while planning (see [`Def::impure`]).
pub(crate) const fn def_impure(
    name: &'static str,
    min: usize,
    max: Option<usize>,
    f: fn(&EvalEnv, &[Value]) -> FnResult,
) -> Def {
    Def {
        name,
        min,
        max,
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

/// Whether `name` is a function the evaluator knows (including the special ones).
pub fn exists(name: &str) -> bool {
    SPECIAL.contains(&name) || find(name).is_some()
}

/// Calls function `name` with evaluated `values`; `args` supply the ranges for errors.
pub(crate) fn call(
    name: &str,
    values: Vec<Value>,
    args: &[Expr],
    range: &SourceRange,
    env: &EvalEnv,
) -> Result<Value, Diagnostics> {
    let Some(def) = find(name) else {
        return Err(err(
            range,
            "Call to unknown function",
            &format!("There is no function named \"{name}\"."),
        ));
    };
    if values.len() < def.min {
        return Err(err(
            range,
            "Not enough function arguments",
            &format!(
                "Function \"{name}\" expects at least {} argument(s). Missing value for argument {}.",
                def.min,
                values.len() + 1
            ),
        ));
    }
    if let Some(max) = def.max
        && values.len() > max
    {
        let r = args.get(max).map(|a| &a.range).unwrap_or(range);
        return Err(err(
            r,
            "Too many function arguments",
            &format!("Function \"{name}\" expects only {max} argument(s)."),
        ));
    }
    let unknown = match def.unknowns {
        Unknowns::Deep => values.iter().any(|v| !v.is_wholly_known()),
        Unknowns::Shallow => values.iter().any(Value::is_unknown),
        Unknowns::Allow => false,
    };
    if unknown || (def.impure && !env.apply) {
        return Ok(Value::Unknown);
    }
    let result = match def.body {
        Body::Pure(f) => f(&values),
        Body::Env(f) => f(env, &values),
    };
    let result = result.map(|v| returns::typed(name, &values, v));
    result.map_err(|e| {
        let r = e
            .arg
            .and_then(|i| args.get(i))
            .map(|a| &a.range)
            .unwrap_or(range);
        let summary = if e.arg.is_some() {
            "Invalid function argument"
        } else {
            "Error in function call"
        };
        let detail = match e.arg {
            Some(i) => format!(
                "Invalid value for argument {} of \"{name}\": {}.",
                i + 1,
                e.msg
            ),
            None => format!("Call to function \"{name}\" failed: {}.", e.msg),
        };
        err(r, summary, &detail)
    })
}

/// Argument `i` as a string (numbers and bools convert).
pub(crate) fn str_arg(args: &[Value], i: usize) -> Result<String, FnError> {
    match &args[i] {
        Value::Null => Err(FnError::arg(i, "argument must not be null")),
        v => super::ops::to_string(v)
            .ok_or_else(|| FnError::arg(i, format!("string required, but have {}", v.kind()))),
    }
}

/// Argument `i` as a number (numeric strings convert).
pub(crate) fn num_arg(
    args: &[Value],
    i: usize,
) -> Result<fleetform_shared::value::Number, FnError> {
    match &args[i] {
        Value::Null => Err(FnError::arg(i, "argument must not be null")),
        v => super::ops::to_number(v)
            .ok_or_else(|| FnError::arg(i, format!("number required, but have {}", v.kind()))),
    }
}
