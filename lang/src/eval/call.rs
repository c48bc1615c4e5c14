//! Function calls in the evaluator: the functions that see more than their
//! arguments' values (`try` and `can` see errors; `sensitive`,
//! `nonsensitive` and `issensitive` see marks), argument expansion
//! (`f(list...)`), and the marks of every other function's result.
//! Provider-defined functions go on to `provider_call`.

use super::evaluate::{Evaluator, R};
use super::expr::Expr;
use super::functions;
use super::ops::err;
use super::provider_call;
use fleetform_shared::diag::{Diagnostics, SourceRange};
use fleetform_shared::marks::Marks;
use fleetform_shared::value::{PathStep, Value};

impl Evaluator<'_> {
    pub(super) fn call(
        &mut self,
        name: &str,
        args: &[Expr],
        expand_final: bool,
        range: &SourceRange,
    ) -> R {
        let called = name;
        let name = functions::builtin_name(name);
        match name {
            "try" => return self.call_try(args, range),
            "can" => {
                let arg = one_argument(name, args, range)?;
                return Ok((
                    match self.eval(arg) {
                        Ok((v, _)) if !v.is_wholly_known() => {
                            Value::unknown_of(fleetform_shared::types::Type::Bool)
                        }
                        Ok(_) => Value::Bool(true),
                        Err(_) => Value::Bool(false),
                    },
                    Marks::none(),
                ));
            }
            "sensitive" => {
                let (v, m) = self.eval(one_argument(name, args, range)?)?;
                return Ok((v, m.with(Marks::whole())));
            }
            // Since Terraform 1.7 a value that is not sensitive is accepted
            // (and returned as it is) rather than an error; we follow 1.x.
            "nonsensitive" => {
                let (v, m) = self.eval(one_argument(name, args, range)?)?;
                return Ok((v, m.without_whole()));
            }
            // The template must be a reference: a template literal here
            // would be rendered twice (once as an expression, once more).
            "templatestring" if args.first().is_some_and(|a| a.as_traversal().is_none()) => {
                return Err(err(
                    &args[0].range,
                    "Invalid template argument",
                    "The template argument must be a direct reference to an object attribute or other symbol whose value is a string, rather than a template expression or literal.",
                ));
            }
            "ephemeralasnull" => {
                let arg = one_argument(name, args, range)?;
                let (v, m) = self.eval(arg)?;
                if derives_from_ephemeral(self.scope, arg) {
                    return Ok((Value::null(), Marks::none()));
                }
                return Ok((v, m));
            }
            "issensitive" => {
                let (v, m) = self.eval(one_argument(name, args, range)?)?;
                let answer = if m.is_whole() {
                    Value::Bool(true)
                } else if v.is_unknown() {
                    Value::unknown()
                } else {
                    Value::Bool(false)
                };
                return Ok((answer, Marks::none()));
            }
            _ => {}
        }
        if !name.starts_with("provider::") {
            // HCL looks the function up and counts its arguments before it
            // evaluates any of them.
            match functions::signature(name) {
                None => return Err(functions::unknown_function(called, range)),
                Some(sig) if !expand_final => {
                    functions::check_arity(sig, args.len(), args, range)?;
                }
                Some(_) => {}
            }
        }
        let results: Vec<R> = args.iter().map(|a| self.eval(a)).collect();
        if results.iter().any(Result::is_err) {
            return Err(argument_errors(name, args, results, expand_final));
        }
        let (mut values, mut marks): (Vec<Value>, Vec<Marks>) =
            results.into_iter().flatten().unzip();
        if expand_final {
            let last_marks = marks.pop().unwrap_or_default();
            match values.pop() {
                Some(Value::List(items)) => {
                    for (i, item) in items.into_iter().enumerate() {
                        values.push(item);
                        marks.push(last_marks.child(&PathStep::Index(i as i64)));
                    }
                }
                Some(Value::Unknown(_)) => return Ok((Value::unknown(), last_marks.collapse())),
                _ => {
                    let r = args.last().map(|a| &a.range).unwrap_or(range);
                    return Err(err(
                        r,
                        "Invalid expanding argument value",
                        "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
                    ));
                }
            }
        }
        if name.starts_with("provider::") {
            let call = provider_call::Call {
                full: name,
                values,
                marks,
                args,
                range,
            };
            let env = self.scope.env();
            return provider_call::call(self.scope.provider_functions(), env, call);
        }
        if marks.iter().all(Marks::is_empty) {
            return Ok((
                functions::call(name, values, args, range, self.scope.env())?,
                Marks::none(),
            ));
        }
        let result = functions::call(name, values.clone(), args, range, self.scope.env())?;
        let result_marks = functions::marks::result_marks(name, &values, &marks, &result);
        Ok((result, result_marks))
    }

    /// The first argument that evaluates without errors, with its marks.
    fn call_try(&mut self, args: &[Expr], range: &SourceRange) -> R {
        let mut last = None;
        for a in args {
            match self.eval(a) {
                Ok((v, m)) if v.is_wholly_known() => return Ok((v, m)),
                Ok((_, m)) => return Ok((Value::unknown(), m.collapse())),
                Err(d) => last = Some(d),
            }
        }
        Err(last.unwrap_or_else(|| {
            err(
                range,
                "Error in function call",
                "Call to function \"try\" failed: at least one argument is required.",
            )
        }))
    }
}

/// The errors of a call some of whose arguments failed: theirs and, as HCL
/// converts every argument it has a value for before giving up, the
/// conversion errors of the others (for built-in functions), in argument order.
fn argument_errors(name: &str, args: &[Expr], results: Vec<R>, expand_final: bool) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let builtin = !name.starts_with("provider::");
    for (i, (a, r)) in args.iter().zip(results).enumerate() {
        match r {
            Err(d) => diags.extend(d),
            // An expanded argument stands for several: left out.
            Ok(_) if expand_final && i + 1 == args.len() => {}
            Ok((v, _)) if builtin => {
                if let Some(d) = functions::conversion_error(name, i, v, &a.range) {
                    diags.extend(d);
                }
            }
            Ok(_) => {}
        }
    }
    diags
}

/// The argument of a special function of one parameter, with HCL's
/// errors for too few or too many.
fn one_argument<'e>(
    name: &str,
    args: &'e [Expr],
    range: &SourceRange,
) -> Result<&'e Expr, Diagnostics> {
    let sig = functions::signature(name).expect("special functions have signatures");
    functions::check_arity(sig, args.len(), args, range)?;
    Ok(&args[0])
}

/// Whether `e` refers to an ephemeral value of `scope` (or to
/// `terraform.applying`) outside an inner `ephemeralasnull`, whose result
/// is not ephemeral. `ephemeralasnull` then makes the whole value null,
/// where Terraform would null only the ephemeral parts of a collection
/// built around one.
pub fn derives_from_ephemeral(scope: &dyn super::Scope, e: &Expr) -> bool {
    use super::expr::ExprKind;
    match &e.kind {
        ExprKind::Call { name, .. } if name == "ephemeralasnull" => return false,
        ExprKind::GetAttr(inner, attr)
            if attr == "applying"
                && matches!(&inner.kind, ExprKind::Variable(r) if r == "terraform") =>
        {
            return true;
        }
        ExprKind::Variable(_) | ExprKind::GetAttr(..) | ExprKind::Index(..)
            if e.as_traversal().is_some() =>
        {
            return e.references().iter().any(|(r, _)| scope.is_ephemeral(r));
        }
        _ => {}
    }
    let mut found = false;
    e.for_each_child(&mut |c| found = found || derives_from_ephemeral(scope, c));
    found
}
