//! Calls of provider-defined functions, `provider::LOCAL::NAME(args)`:
//! the checks Terraform makes before a provider sees a call (the function
//! exists, the argument count, nulls, conversion to the parameter types),
//! the unknown short cut, and the diagnostics of a failed call.
//!
//! The evaluator does not know which provider a local name means nor how
//! to reach it: the scope answers through [`ProviderFunctions`]. The
//! coordinator's answer asks a worker (providers never run in the
//! coordinator, see `coordinator/src/run/eval/functions.rs`); the CLI's runs
//! the provider itself; the functions of the built-in `terraform`
//! provider are computed in this crate (`crate::provider_functions`).

use super::convert::convert;
use super::env::EvalEnv;
use super::expr::Expr;
use super::ops::err;
use fleetform_shared::diag::{Diagnostic, Diagnostics, Pos, SourceRange};
use fleetform_shared::function::{FunctionError, FunctionSignature};
use fleetform_shared::marks::Marks;
use fleetform_shared::value::Value;

/// The provider functions the evaluated module can call, by the local name
/// its `required_providers` block gives the provider.
pub trait ProviderFunctions {
    /// The signature of function `name` of provider `local`; None when the
    /// module declares no such provider or the provider has no such function.
    fn signature(&self, local: &str, name: &str) -> Option<FunctionSignature>;

    /// Whether the module declares a provider named `local` (which then
    /// lacks the function when [`ProviderFunctions::signature`] is None).
    fn declares(&self, local: &str) -> bool;

    /// Calls the function with arguments converted to their parameters'
    /// types, none unknown or null where the signature does not allow it.
    fn call(
        &self,
        local: &str,
        name: &str,
        args: Vec<Value>,
        env: &EvalEnv,
    ) -> Result<Value, FunctionError>;
}

/// `provider::LOCAL::NAME` split into `(LOCAL, NAME)`.
pub fn provider_function_name(full: &str) -> Option<(&str, &str)> {
    let rest = full.strip_prefix("provider::")?;
    let (local, name) = rest.split_once("::")?;
    (!name.contains("::")).then_some((local, name))
}

/// The diagnostic for a call of a function that is not there: the
/// provider lacks it (`declared`), or the module has no such provider.
pub fn unknown_provider_function(
    full: &str,
    local: &str,
    name: &str,
    declared: bool,
    at: SourceRange,
) -> Diagnostic {
    let detail = if declared {
        format!("The function \"{name}\" is not available from the provider \"{local}\".")
    } else {
        format!(
            "There is no function named \"{full}\". Ensure that provider name \"{local}\" is declared in this module's required_providers block, and that this provider offers a function named \"{name}\"."
        )
    };
    Diagnostic::error("Unknown provider function", detail).at(at)
}

/// Just the function's name at the start of a call's range (Terraform
/// underlines the name, not the call).
pub fn name_range(call: &SourceRange, full: &str) -> SourceRange {
    let start = call.start;
    SourceRange {
        filename: call.filename.clone(),
        start,
        end: Pos {
            line: start.line,
            column: start.column + full.chars().count(),
            byte: start.byte + full.len(),
        },
    }
}

/// The closing parenthesis at the end of a call's range.
fn close_paren(call: &SourceRange) -> SourceRange {
    let end = call.end;
    SourceRange {
        filename: call.filename.clone(),
        start: Pos {
            line: end.line,
            column: end.column.saturating_sub(1).max(1),
            byte: end.byte.saturating_sub(1),
        },
        end,
    }
}

/// One evaluated call: its name, arguments (already expanded) and ranges.
pub(super) struct Call<'a> {
    pub full: &'a str,
    pub values: Vec<Value>,
    pub marks: Vec<Marks>,
    pub args: &'a [Expr],
    pub range: &'a SourceRange,
}

/// Calls a provider function, with the marks of its result.
pub(super) fn call(
    functions: Option<&dyn ProviderFunctions>,
    env: &EvalEnv,
    call: Call<'_>,
) -> Result<(Value, Marks), Diagnostics> {
    let Call {
        full,
        values,
        marks,
        args,
        range,
    } = call;
    let (local, name) = provider_function_name(full).unwrap_or(("", full));
    let Some(sig) = functions.and_then(|f| f.signature(local, name)) else {
        let declared = functions.is_some_and(|f| f.declares(local));
        let at = name_range(range, full);
        return Err(unknown_provider_function(full, local, name, declared, at).into());
    };
    check_count(full, &sig, values.len(), args, range)?;
    let arg_range = |i: usize| {
        args.get(i)
            .map(|a| a.range.clone())
            .unwrap_or(range.clone())
    };
    let invalid = |i: usize, param: &str, why: &str| -> Diagnostics {
        Diagnostic::error(
            "Invalid function argument",
            format!("Invalid value for \"{param}\" parameter: {why}."),
        )
        .at(arg_range(i))
        .into()
    };
    let mut converted = Vec::with_capacity(values.len());
    let mut unknown = false;
    for (i, v) in values.into_iter().enumerate() {
        let param = sig.parameter(i).expect("the count was checked");
        if v.is_null() && !param.allow_null {
            return Err(invalid(i, &param.name, "argument must not be null"));
        }
        let v = convert(v, &param.ty).map_err(|e| invalid(i, &param.name, &e))?;
        unknown |= !param.allow_unknown && !v.is_wholly_known();
        converted.push(v);
    }
    // Any sensitive part of any argument makes the whole result sensitive:
    // the provider sees values without marks and cannot say where they went.
    let result_marks = marks
        .iter()
        .fold(Marks::none(), |m, x| m.with(x.collapse()));
    if unknown {
        return Ok((Value::unknown(), result_marks));
    }
    let f = functions.expect("a signature was found");
    match f.call(local, name, converted, env) {
        Ok(v) => Ok((v, result_marks)),
        Err(FunctionError {
            text,
            argument: Some(i),
        }) if sig.parameter(i).is_some() => {
            let param = sig.parameter(i).expect("checked");
            Err(invalid(i, &param.name, &text))
        }
        Err(e) => Err(err(
            range,
            "Error in function call",
            &format!("Call to function \"{full}\" failed: {}.", e.text),
        )),
    }
}

/// The argument count against the signature, with Terraform's messages.
fn check_count(
    full: &str,
    sig: &FunctionSignature,
    given: usize,
    args: &[Expr],
    range: &SourceRange,
) -> Result<(), Diagnostics> {
    let wanted = sig.parameters.len();
    if given < wanted {
        let at_least = if sig.variadic.is_some() {
            " at least"
        } else {
            ""
        };
        return Err(err(
            &close_paren(range),
            "Not enough function arguments",
            &format!(
                "Function \"{full}\" expects{at_least} {wanted} argument(s). Missing value for \"{}\".",
                sig.parameters[given].name
            ),
        ));
    }
    if given > wanted && sig.variadic.is_none() {
        let r = args.get(wanted).map(|a| &a.range).unwrap_or(range);
        return Err(err(
            r,
            "Too many function arguments",
            &format!("Function \"{full}\" expects only {wanted} argument(s)."),
        ));
    }
    Ok(())
}
