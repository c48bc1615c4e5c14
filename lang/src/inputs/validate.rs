//! `validation` blocks of input variables, checked once every value is
//! final. As in Terraform 1.9 a condition may refer to any variable; other
//! objects (locals, resources) are not known this early, so a rule that
//! depends on them is unknown and skipped rather than failed.

use super::constant::hcl_range;
use super::{Definition, Origin};
use crate::config::{CheckRule, Module};
use crate::eval::{Marks, ProviderFunctions, Reference, Scope, convert, evaluate_marked};
use crate::provider_functions::{ModuleFunctions, PluginsUnreachable};
use fleetform_shared::addr::Resource;
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Checks every variable's validation rules against the final `values`.
pub(super) fn check(
    module: &Module,
    values: &BTreeMap<String, Value>,
    defined: &BTreeMap<String, Definition>,
    diags: &mut Diagnostics,
) {
    let scope = ValidationScope {
        module,
        values,
        functions: ModuleFunctions::new(
            module,
            Arc::new(PluginsUnreachable(
                "root variables are validated before any provider is started",
            )),
        ),
    };
    for (name, var) in &module.variables {
        // Terraform points at the value's definition when it is in a file,
        // otherwise at the declaration.
        let value_range = match defined.get(name).map(|d| &d.origin) {
            Some(Origin::File(r)) => r.clone(),
            _ => var.decl_range.clone(),
        };
        for rule in &var.validations {
            check_rule(rule, &scope, &value_range, diags);
        }
    }
}

/// Checks one validation rule in `scope` (a root variable's, or a child
/// module instance's); a failure is reported at `value_range`.
pub fn check_rule(
    rule: &CheckRule,
    scope: &dyn Scope,
    value_range: &SourceRange,
    diags: &mut Diagnostics,
) {
    const INVALID_RESULT: &str = "Invalid variable validation result";
    let condition = evaluate_marked(&rule.condition, scope);
    let message = evaluate_marked(&rule.error_message, scope);
    // Terraform reports a broken error message whatever the outcome.
    if let Err(d) = &message {
        diags.extend(d.clone());
    }
    let result = match condition {
        Ok((v, _)) => v,
        Err(d) => return diags.extend(d),
    };
    let at_condition =
        |detail: String| Diagnostic::error(INVALID_RESULT, detail).at(rule.condition.range.clone());
    let passed = match result {
        Value::Unknown(_) => return,
        Value::Null(_) => {
            return diags.push(at_condition(
                "Validation condition expression must return either true or false, not null."
                    .to_string(),
            ));
        }
        v => match convert(v, &Type::Bool) {
            Ok(Value::Bool(b)) => b,
            Ok(_) => return,
            Err(e) => {
                return diags.push(at_condition(format!(
                    "Invalid validation condition result value: {e}."
                )));
            }
        },
    };
    if passed {
        return;
    }
    let at_message = |summary: &str, detail: String| {
        Diagnostic::error(summary, detail).at(rule.error_message.range.clone())
    };
    let mut text = String::new();
    match message {
        Ok((Value::Unknown(_), _)) => {
            return diags.push(at_message(
                "Invalid error message",
                "Unsuitable value for error message: expression refers to values that won't be known until the apply phase.".to_string(),
            ));
        }
        Ok((Value::Null(_), _)) | Err(_) => {}
        Ok((v, marks)) => match convert(v, &Type::String) {
            Err(e) => diags.push(at_message(
                "Invalid error message",
                format!("Unsuitable value for error message: {e}."),
            )),
            Ok(_) if !marks.is_empty() => {
                diags.push(at_message(
                    "Error message refers to sensitive values",
                    "The error expression used to explain this condition refers to sensitive values. Terraform will not display the resulting message.\n\nYou can correct this by removing references to sensitive values, or by carefully using the nonsensitive() function if the expression will not reveal the sensitive data.".to_string(),
                ));
                text = "The error message included a sensitive value, so it will not be displayed."
                    .to_string();
            }
            Ok(Value::String(s)) => text = s.trim().to_string(),
            Ok(_) => {}
        },
    }
    if text.is_empty() {
        text = "Failed to evaluate condition error message.".to_string();
    }
    let mut failed = Diagnostic::error(
        "Invalid value for variable",
        format!(
            "{text}\n\nThis was checked by the validation rule at {}.",
            hcl_range(&rule.decl_range)
        ),
    )
    .at(value_range.clone());
    failed.values = crate::rules::described::referenced_values(&rule.condition, scope);
    diags.push(failed);
}

/// `var.*` are the final values (sensitive ones marked); anything else a
/// condition may name is not known before planning, so it is unknown.
struct ValidationScope<'a> {
    module: &'a Module,
    values: &'a BTreeMap<String, Value>,
    /// The built-in `terraform` provider's functions; plugins' fail.
    functions: ModuleFunctions,
}

impl Scope for ValidationScope<'_> {
    fn provider_functions(&self) -> Option<&dyn ProviderFunctions> {
        Some(&self.functions)
    }
    fn variable(&self, name: &str) -> Option<Value> {
        self.values.get(name).cloned()
    }
    fn local(&self, name: &str) -> Option<Value> {
        self.module
            .locals
            .contains_key(name)
            .then_some(Value::unknown())
    }
    fn resource(&self, addr: &Resource) -> Option<Value> {
        self.module
            .resources
            .contains_key(addr)
            .then_some(Value::unknown())
    }
    fn count_index(&self) -> Option<Value> {
        None
    }
    fn each(&self) -> Option<(Value, Value)> {
        None
    }
    fn path(&self, _name: &str) -> Option<Value> {
        Some(Value::unknown())
    }
    fn workspace(&self) -> Option<Value> {
        Some(Value::unknown())
    }
    fn marks(&self, reference: &Reference) -> Marks {
        match reference {
            Reference::Variable(name)
                if self.module.variables.get(name).is_some_and(|v| v.sensitive) =>
            {
                Marks::whole()
            }
            _ => Marks::none(),
        }
    }
}
