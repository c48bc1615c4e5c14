//! Custom conditions: evaluating `precondition`, `postcondition` and check
//! `assert` rules in a caller's scope, with Terraform's diagnostics for a
//! failed rule, an invalid result and an unusable error message.

use crate::config::CheckRule;
use crate::eval::{Scope, convert, evaluate_marked};
use fleetform_shared::diag::{Diagnostic, Diagnostics, Severity};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

/// What kind of object a rule belongs to: it names the failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleKind {
    ResourcePrecondition,
    ResourcePostcondition,
    OutputPrecondition,
    CheckAssertion,
    /// An `assert` of a test file's `run` block.
    TestAssertion,
}

impl RuleKind {
    /// Terraform's description of the rule ("Resource precondition").
    pub fn description(self) -> &'static str {
        match self {
            RuleKind::ResourcePrecondition => "Resource precondition",
            RuleKind::ResourcePostcondition => "Resource postcondition",
            RuleKind::OutputPrecondition => "Module output value precondition",
            RuleKind::CheckAssertion => "Check block assertion",
            RuleKind::TestAssertion => "Test assertion",
        }
    }

    /// Checks only warn; every other rule blocks the operation.
    fn severity(self) -> Severity {
        match self {
            RuleKind::CheckAssertion => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

/// The outcome of a set of rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleStatus {
    Passed,
    /// Some condition depends on values not known yet: check again later.
    Unknown,
    /// Some condition is false or could not be evaluated (see the diagnostics).
    Failed,
}

/// Evaluates every rule in `scope`. A false condition is a diagnostic at
/// the condition with the evaluated error message; rules of a check block
/// only warn, whatever goes wrong.
pub fn check_rules(
    rules: &[CheckRule],
    scope: &dyn Scope,
    kind: RuleKind,
) -> (RuleStatus, Diagnostics) {
    let mut diags = Diagnostics::new();
    let mut status = RuleStatus::Passed;
    for rule in rules {
        let (s, d) = check_rule(rule, scope, kind);
        diags.extend(d);
        status = match (status, s) {
            (RuleStatus::Failed, _) | (_, RuleStatus::Failed) => RuleStatus::Failed,
            (RuleStatus::Unknown, _) | (_, RuleStatus::Unknown) => RuleStatus::Unknown,
            _ => RuleStatus::Passed,
        };
    }
    if kind.severity() == Severity::Warning {
        for d in &mut diags.0 {
            d.severity = Severity::Warning;
        }
    }
    (status, diags)
}

fn check_rule(rule: &CheckRule, scope: &dyn Scope, kind: RuleKind) -> (RuleStatus, Diagnostics) {
    const INVALID_RESULT: &str = "Invalid condition result";
    let mut diags = Diagnostics::new();
    let result = match evaluate_marked(&rule.condition, scope) {
        Ok((v, _)) => v,
        Err(d) => return (RuleStatus::Failed, d),
    };
    let invalid = |detail: String| {
        Diagnostics::from(
            Diagnostic::error(INVALID_RESULT, detail).at(rule.condition.range.clone()),
        )
    };
    let passed = match result {
        Value::Unknown(_) => return (RuleStatus::Unknown, diags),
        Value::Null(_) => {
            return (
                RuleStatus::Failed,
                invalid("Condition expression must return either true or false, not null.".into()),
            );
        }
        v => match convert(v, &Type::Bool) {
            Ok(Value::Bool(b)) => b,
            // Converted to an unknown bool: a partially unknown value.
            Ok(_) => return (RuleStatus::Unknown, diags),
            Err(e) => {
                return (
                    RuleStatus::Failed,
                    invalid(format!("Invalid condition result value: {e}.")),
                );
            }
        },
    };
    if passed {
        return (RuleStatus::Passed, diags);
    }
    let text = error_message(rule, scope, &mut diags);
    let mut d = Diagnostic::error(format!("{} failed", kind.description()), text)
        .at(rule.condition.range.clone());
    d.severity = kind.severity();
    d.values = super::described::referenced_values(&rule.condition, scope);
    diags.push(d);
    (RuleStatus::Failed, diags)
}

/// The evaluated `error_message` of a failed rule; problems with it are
/// diagnostics of their own and the message falls back to Terraform's.
fn error_message(rule: &CheckRule, scope: &dyn Scope, diags: &mut Diagnostics) -> String {
    let at_message = |summary: &str, detail: &str| {
        Diagnostic::error(summary, detail).at(rule.error_message.range.clone())
    };
    let mut text = String::new();
    match evaluate_marked(&rule.error_message, scope) {
        Err(d) => diags.extend(d),
        Ok((Value::Unknown(_), _)) => diags.push(at_message(
            "Invalid error message",
            "Unsuitable value for error message: expression refers to values that won't be known until the apply phase.",
        )),
        Ok((Value::Null(_), _)) => {}
        Ok((v, marks)) => match convert(v, &Type::String) {
            Err(e) => diags.push(at_message(
                "Invalid error message",
                &format!("Unsuitable value for error message: {e}."),
            )),
            Ok(_) if !marks.is_empty() => {
                diags.push(at_message(
                    "Error message refers to sensitive values",
                    "The error expression used to explain this condition refers to sensitive values. Terraform will not display the resulting message.\n\nYou can correct this by removing references to sensitive values, or by carefully using the nonsensitive() function if the expression will not reveal the sensitive data.",
                ));
                text = "The error message included a sensitive value, so it will not be displayed."
                    .into();
            }
            Ok(Value::String(s)) => text = s.trim().to_string(),
            Ok(_) => {}
        },
    }
    if text.is_empty() {
        text = "Failed to evaluate condition error message.".into();
    }
    text
}

#[cfg(test)]
mod tests;
