//! Root module input variables as Terraform takes them: values from
//! `TF_VAR_*`, variables files and `-var`, merged by precedence, checked
//! against the `variable` blocks (type, nullability, default) and then
//! against their `validation` rules.
//!
//! The caller gathers the sources (the CLI reads files and the
//! environment); this module decides what they mean. Messages follow
//! Terraform's (`backendrun.ParseVariableValues`,
//! `prepareFinalInputVariableValue`, `evalVariableValidation`).

pub(crate) mod constant;
pub(crate) mod files;
mod validate;

pub(crate) use constant::constant;
pub use constant::hcl_range;

pub use validate::check_rule as check_validation;

#[cfg(test)]
mod tests;

use crate::config::{Module, Variable};
use crate::eval::{Expr, parse_expression};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

/// One place values come from. Callers list them lowest precedence first,
/// in Terraform's order: environment variables, `terraform.tfvars`,
/// `terraform.tfvars.json`, the `*.auto.tfvars(.json)` files by name, then
/// `-var` and `-var-file` in command-line order.
#[derive(Clone, Debug, PartialEq)]
pub enum InputSource {
    /// `TF_VAR_<name>=<value>`: text, parsed like `-var`.
    Env { name: String, value: String },
    /// A variables file: HCL attributes, or a JSON object when the name
    /// ends in `.json`.
    File { name: String, content: String },
    /// `-var name=value`.
    Var { name: String, value: String },
}

/// A run's variable sources in the order they take effect (lowest
/// precedence first): `TF_VAR_*`, the variables files found beside the
/// configuration, then the `-var` and `-var-file` options as given.
pub fn run_sources(
    env: &[(String, String)],
    auto_files: &[(String, String)],
    given: &[fleetform_shared::wire::VariableArg],
) -> Vec<InputSource> {
    use fleetform_shared::wire::VariableArg;
    let env = env.iter().map(|(name, value)| InputSource::Env {
        name: name.clone(),
        value: value.clone(),
    });
    let auto = auto_files.iter().map(|(name, content)| InputSource::File {
        name: name.clone(),
        content: content.clone(),
    });
    let given = given.iter().map(|arg| match arg {
        VariableArg::Var { name, value } => InputSource::Var {
            name: name.clone(),
            value: value.clone(),
        },
        VariableArg::File { name, content } => InputSource::File {
            name: name.clone(),
            content: content.clone(),
        },
    });
    env.chain(auto).chain(given).collect()
}

/// Every declared variable's final value, and the warnings on the way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InputValues {
    pub values: BTreeMap<String, Value>,
    /// The declared variables a source set (the others took their default).
    pub set: std::collections::BTreeSet<String>,
    pub warnings: Diagnostics,
}

/// Where a value came from: decides how it is parsed and how problems with
/// it are worded and located.
#[derive(Clone, Debug, PartialEq)]
enum Origin {
    Env,
    Cli,
    /// A variables file; the range of the value's expression.
    File(SourceRange),
}

/// A value as given, before the declaration's parsing mode and type apply.
#[derive(Clone, Debug, PartialEq)]
enum Given {
    /// `-var` or `TF_VAR_`: literal or HCL, depending on the type.
    Text(String),
    /// From an HCL variables file: a constant expression.
    Expr(Expr),
    /// From a JSON variables file.
    Json(Value),
}

#[derive(Clone, Debug, PartialEq)]
struct Definition {
    given: Given,
    origin: Origin,
}

/// Terraform shows two "undeclared variable" warnings for files, then one
/// summary for the rest.
const UNDECLARED_WARNINGS_SHOWN: usize = 2;

/// The final values of the root module's variables from `sources` (lowest
/// precedence first), or the diagnostics (warnings included) that stop the
/// run.
pub fn input_values(module: &Module, sources: &[InputSource]) -> Result<InputValues, Diagnostics> {
    let mut diags = Diagnostics::new();
    // Later sources replace earlier ones by name; only the winner is ever
    // parsed or evaluated, as in Terraform.
    let mut defined: BTreeMap<String, Definition> = BTreeMap::new();
    for source in sources {
        match source {
            InputSource::Env { name, value } => {
                defined.insert(name.clone(), text(value, Origin::Env));
            }
            InputSource::Var { name, value } => {
                defined.insert(name.clone(), text(value, Origin::Cli));
            }
            InputSource::File { name, content } => {
                for v in files::parse(name, content, &mut diags) {
                    let origin = Origin::File(v.range);
                    defined.insert(
                        v.name,
                        Definition {
                            given: v.given,
                            origin,
                        },
                    );
                }
            }
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }

    let mut given = BTreeMap::new();
    let mut undeclared_in_files = 0;
    for (name, def) in &defined {
        match module.variables.get(name) {
            Some(var) => match parse(name, def, var.ty.as_ref()) {
                Ok(v) => {
                    given.insert(name.clone(), (v, def));
                }
                Err(d) => diags.extend(d),
            },
            None => undeclared(name, def, &mut undeclared_in_files, &mut diags),
        }
    }
    if undeclared_in_files > UNDECLARED_WARNINGS_SHOWN {
        diags.push(Diagnostic::warning(
            "Values for undeclared variables",
            format!(
                "In addition to the other similar warnings shown, {} other variable(s) defined without being declared.",
                undeclared_in_files - UNDECLARED_WARNINGS_SHOWN
            ),
        ));
    }
    for (name, var) in &module.variables {
        if var.default.is_none() && !defined.contains_key(name) {
            diags.push(
                Diagnostic::error(
                    "No value for required variable",
                    format!("The root module input variable {name:?} is not set, and has no default value. Use a -var or -var-file command line argument to provide a value for this variable."),
                )
                .at(var.decl_range.clone()),
            );
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }

    let mut values = BTreeMap::new();
    for (name, var) in &module.variables {
        let value = match given.remove(name) {
            Some((v, def)) => final_value(var, v, &def.origin),
            None => Ok(var.default.clone().unwrap_or(Value::null())),
        };
        match value {
            Ok(v) => {
                values.insert(name.clone(), v);
            }
            Err(d) => diags.push(d),
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }

    validate::check(module, &values, &defined, &mut diags);
    if diags.has_errors() {
        return Err(diags);
    }
    Ok(InputValues {
        values,
        set: defined
            .into_keys()
            .filter(|n| module.variables.contains_key(n))
            .collect(),
        warnings: diags,
    })
}

fn text(value: &str, origin: Origin) -> Definition {
    Definition {
        given: Given::Text(value.to_string()),
        origin,
    }
}

/// A value for a variable the root module does not declare: a warning for
/// files, an error for `-var`, nothing for the environment (people set
/// `TF_VAR_*` globally for many configurations).
fn undeclared(name: &str, def: &Definition, in_files: &mut usize, diags: &mut Diagnostics) {
    // Terraform only complains about values it can parse (as literals,
    // since there is no declaration to say otherwise).
    if parse(name, def, None).is_err() {
        return;
    }
    match &def.origin {
        Origin::Env => {}
        Origin::Cli => diags.push(Diagnostic::error(
            "Value for undeclared variable",
            format!("A variable named {name:?} was assigned on the command line, but the root module does not declare a variable of that name. To use this value, add a \"variable\" block to the configuration."),
        )),
        Origin::File(range) => {
            if *in_files < UNDECLARED_WARNINGS_SHOWN {
                diags.push(Diagnostic::warning(
                    "Value for undeclared variable",
                    format!("The root module does not declare a variable named {name:?} but a value was found in file {:?}. If you meant to use this value, add a \"variable\" block to the configuration.\n\nTo silence these warnings, use TF_VAR_... environment variables to provide certain \"global\" settings to all configurations in your organization. To reduce the verbosity of these warnings, use the -compact-warnings option.", range.filename),
                ));
            }
            *in_files += 1;
        }
    }
}

/// The value as given, not yet converted to the variable's type.
fn parse(name: &str, def: &Definition, ty: Option<&Type>) -> Result<Value, Diagnostics> {
    match &def.given {
        Given::Text(raw) => parse_text(name, raw, ty),
        Given::Expr(expr) => constant(expr),
        Given::Json(v) => Ok(v.clone()),
    }
}

/// Text from `-var` or the environment: taken literally for primitive types
/// and undeclared types, parsed as an HCL expression for everything else
/// (`any` included, as in Terraform).
fn parse_text(name: &str, raw: &str, ty: Option<&Type>) -> Result<Value, Diagnostics> {
    if ty.is_none_or(Type::is_primitive) {
        return Ok(Value::String(raw.to_string()));
    }
    constant(&parse_expression(&format!("<value for var.{name}>"), raw)?)
}

/// The given value converted to the variable's type, with null handled the
/// way Terraform does: a nullable variable keeps a given null (even when it
/// has a default); a non-nullable one takes its default instead, and is an
/// error without one.
fn final_value(var: &Variable, given: Value, origin: &Origin) -> Result<Value, Diagnostic> {
    let addr = format!("var.{}", var.name);
    let decl = hcl_range(&var.decl_range);
    let value = match &var.ty {
        Some(_) => var.convert(given).map_err(|err| {
            let d = Diagnostic::error("Invalid value for input variable", "");
            match origin {
                Origin::File(r) if var.sensitive => Diagnostic {
                    detail: format!("The given value is not suitable for {addr}, which is sensitive: {err}. Invalid value defined at {}.", hcl_range(r)),
                    ..d.at(var.decl_range.clone())
                },
                Origin::File(r) => Diagnostic {
                    detail: format!("The given value is not suitable for {addr} declared at {decl}: {err}."),
                    ..d.at(r.clone())
                },
                _ => Diagnostic {
                    detail: format!("Unsuitable value for {addr} {}: {err}.", non_file_source(&var.name, origin)),
                    ..d.at(var.decl_range.clone())
                },
            }
        })?,
        None => given,
    };
    if !value.is_null() || var.nullable {
        return Ok(value);
    }
    if let Some(default) = &var.default {
        return Ok(default.clone());
    }
    let d = Diagnostic::error("Required variable not set", "");
    Err(match origin {
        Origin::File(r) => Diagnostic {
            detail: format!(
                "The given value is not suitable for {addr} defined at {decl}: required variable may not be set to null."
            ),
            ..d.at(r.clone())
        },
        _ => Diagnostic {
            detail: format!(
                "Unsuitable value for {addr} {}: required variable may not be set to null.",
                non_file_source(&var.name, origin)
            ),
            ..d.at(var.decl_range.clone())
        },
    })
}

fn non_file_source(name: &str, origin: &Origin) -> String {
    match origin {
        Origin::Env => format!("set using the TF_VAR_{name} environment variable"),
        Origin::Cli => format!("set using -var=\"{name}=...\""),
        Origin::File(_) => "set from outside of the configuration".to_string(),
    }
}
