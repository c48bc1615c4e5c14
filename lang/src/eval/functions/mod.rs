//! The built-in function library: lookup by name, arity checks, unknown
//! propagation, and errors as diagnostics at the offending argument.

mod collections;
mod encoding;
pub(crate) mod marks;
mod numeric;
mod strings;

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
type Impl = fn(&[Value]) -> FnResult;

/// How a function treats unknown arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unknowns {
    /// Any unknown anywhere in the arguments makes the result unknown.
    Deep,
    /// Only a wholly unknown argument makes the result unknown; the function
    /// copes with unknown elements itself (`length`, `concat`, `merge`…).
    Shallow,
}

struct Def {
    name: &'static str,
    min: usize,
    /// None: variadic.
    max: Option<usize>,
    unknowns: Unknowns,
    f: Impl,
}

const fn def(
    name: &'static str,
    min: usize,
    max: Option<usize>,
    unknowns: Unknowns,
    f: Impl,
) -> Def {
    Def {
        name,
        min,
        max,
        unknowns,
        f,
    }
}

use Unknowns::{Deep, Shallow};

static FUNCTIONS: &[Def] = &[
    // Collections.
    def("length", 1, Some(1), Shallow, collections::length),
    def("concat", 0, None, Shallow, collections::concat),
    def("merge", 0, None, Shallow, collections::merge),
    def("keys", 1, Some(1), Shallow, collections::keys),
    def("values", 1, Some(1), Shallow, collections::values),
    def("lookup", 2, Some(3), Shallow, collections::lookup),
    def("element", 2, Some(2), Shallow, collections::element),
    def("contains", 2, Some(2), Deep, collections::contains),
    def("coalesce", 1, None, Shallow, collections::coalesce),
    def("coalescelist", 1, None, Shallow, collections::coalescelist),
    def("compact", 1, Some(1), Deep, collections::compact),
    def("distinct", 1, Some(1), Deep, collections::distinct),
    def("flatten", 1, Some(1), Shallow, collections::flatten),
    def("reverse", 1, Some(1), Shallow, collections::reverse),
    def("slice", 3, Some(3), Shallow, collections::slice),
    def("index", 2, Some(2), Deep, collections::index),
    def("zipmap", 2, Some(2), Shallow, collections::zipmap),
    def("one", 1, Some(1), Shallow, collections::one),
    def("sort", 1, Some(1), Deep, collections::sort),
    def("range", 1, Some(3), Deep, collections::range),
    def("tolist", 1, Some(1), Shallow, collections::tolist),
    def("toset", 1, Some(1), Deep, collections::toset),
    def("tomap", 1, Some(1), Shallow, collections::tomap),
    // Strings.
    def("upper", 1, Some(1), Deep, strings::upper),
    def("lower", 1, Some(1), Deep, strings::lower),
    def("title", 1, Some(1), Deep, strings::title),
    def("format", 1, None, Deep, strings::format),
    def("formatlist", 1, None, Deep, strings::formatlist),
    def("join", 2, Some(2), Deep, strings::join),
    def("split", 2, Some(2), Deep, strings::split),
    def("replace", 3, Some(3), Deep, strings::replace),
    def("substr", 3, Some(3), Deep, strings::substr),
    def("trimspace", 1, Some(1), Deep, strings::trimspace),
    def("trim", 2, Some(2), Deep, strings::trim),
    def("trimprefix", 2, Some(2), Deep, strings::trimprefix),
    def("trimsuffix", 2, Some(2), Deep, strings::trimsuffix),
    def("chomp", 1, Some(1), Deep, strings::chomp),
    def("startswith", 2, Some(2), Deep, strings::startswith),
    def("endswith", 2, Some(2), Deep, strings::endswith),
    def("strrev", 1, Some(1), Deep, strings::strrev),
    def("tostring", 1, Some(1), Deep, strings::tostring),
    def("tonumber", 1, Some(1), Deep, numeric::tonumber),
    def("tobool", 1, Some(1), Deep, strings::tobool),
    // Numbers.
    def("min", 1, None, Deep, numeric::min),
    def("max", 1, None, Deep, numeric::max),
    def("abs", 1, Some(1), Deep, numeric::abs),
    def("ceil", 1, Some(1), Deep, numeric::ceil),
    def("floor", 1, Some(1), Deep, numeric::floor),
    def("pow", 2, Some(2), Deep, numeric::pow),
    def("signum", 1, Some(1), Deep, numeric::signum),
    def("parseint", 2, Some(2), Deep, numeric::parseint),
    def("sum", 1, Some(1), Deep, numeric::sum),
    // Encodings.
    def("jsonencode", 1, Some(1), Deep, encoding::jsonencode),
    def("jsondecode", 1, Some(1), Deep, encoding::jsondecode),
    def("sha256", 1, Some(1), Deep, encoding::sha256),
];

/// Functions the evaluator implements itself: they see their arguments'
/// errors (`try`, `can`) or sensitivity marks, not only their values.
const SPECIAL: &[&str] = &["try", "can", "sensitive", "nonsensitive", "issensitive"];

/// Whether `name` is a function the evaluator knows (including the special ones).
pub fn exists(name: &str) -> bool {
    SPECIAL.contains(&name) || FUNCTIONS.iter().any(|d| d.name == name)
}

/// Calls function `name` with evaluated `values`; `args` supply the ranges for errors.
pub(crate) fn call(
    name: &str,
    values: Vec<Value>,
    args: &[Expr],
    range: &SourceRange,
) -> Result<Value, Diagnostics> {
    let Some(def) = FUNCTIONS.iter().find(|d| d.name == name) else {
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
        Deep => values.iter().any(|v| !v.is_wholly_known()),
        Shallow => values.iter().any(Value::is_unknown),
    };
    if unknown {
        return Ok(Value::Unknown);
    }
    (def.f)(&values).map_err(|e| {
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

/// Argument `i` as a whole number.
pub(crate) fn int_arg(args: &[Value], i: usize) -> Result<i64, FnError> {
    num_arg(args, i)?
        .as_i64()
        .ok_or_else(|| FnError::arg(i, "a whole number is required"))
}

/// Argument `i` as a list, set or tuple.
pub(crate) fn list_arg(args: &[Value], i: usize) -> Result<&Vec<Value>, FnError> {
    match &args[i] {
        Value::List(items) => Ok(items),
        Value::Null => Err(FnError::arg(i, "argument must not be null")),
        v => Err(FnError::arg(
            i,
            format!("list required, but have {}", v.kind()),
        )),
    }
}

/// Argument `i` as a map or object.
pub(crate) fn map_arg(
    args: &[Value],
    i: usize,
) -> Result<&std::collections::BTreeMap<String, Value>, FnError> {
    match &args[i] {
        Value::Map(m) => Ok(m),
        Value::Null => Err(FnError::arg(i, "argument must not be null")),
        v => Err(FnError::arg(
            i,
            format!("map required, but have {}", v.kind()),
        )),
    }
}
