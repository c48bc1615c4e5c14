//! `expect_failures`: which of a run's diagnostics are the failures of the
//! checkable objects it names (a variable's validation, a resource's or an
//! output's conditions, a check block's assertions), which it expected
//! but did not see, and the warning for an apply a planned failure stopped.

use fleetform_lang::config::{Module, TestRun};
use fleetform_lang::inputs::hcl_range;
use fleetform_shared::diag::{Diagnostic, Diagnostics};

/// The diagnostics of a run split by whether `expect_failures` names them.
pub struct Sorted {
    /// Failures the run expected: not shown, they make it pass.
    pub expected: Diagnostics,
    /// Everything else, shown as it is.
    pub rest: Diagnostics,
    /// Each expected object that reported a failure.
    pub seen: Vec<bool>,
}

/// Sorts `diags` by the run's expected failures in `module`.
pub fn sort(run: &TestRun, module: &Module, diags: Diagnostics) -> Sorted {
    let mut out = Sorted {
        expected: Diagnostics::new(),
        rest: Diagnostics::new(),
        seen: vec![false; run.expect_failures.len()],
    };
    for d in diags {
        let hit = run
            .expect_failures
            .iter()
            .position(|e| failure_of(&e.address, module, &d));
        match hit {
            Some(i) => {
                out.seen[i] = true;
                out.expected.push(d);
            }
            None => out.rest.push(d),
        }
    }
    out
}

/// Whether `d` reports a failed condition of the object at `address`.
fn failure_of(address: &str, module: &Module, d: &Diagnostic) -> bool {
    let mut parts = address.split('.');
    let header = match (parts.next(), parts.next(), parts.next()) {
        (Some("var"), Some(name), None) => return validation_of(name, module, d),
        (Some("output"), Some(name), None) => format!("output {name:?}"),
        (Some("check"), Some(name), None) => format!("check {name:?}"),
        (Some("data"), Some(t), Some(n)) => format!("data {t:?} {:?}", strip_key(n)),
        (Some(t), Some(n), None) => format!("resource {t:?} {:?}", strip_key(n)),
        _ => return false,
    };
    d.context.as_deref() == Some(header.as_str())
}

/// `name["key"]` → `name`: an instance's failure is its resource's.
fn strip_key(name: &str) -> &str {
    name.split('[').next().unwrap_or(name)
}

/// A variable's failed validation names the rule it broke.
fn validation_of(name: &str, module: &Module, d: &Diagnostic) -> bool {
    let Some(var) = module.variables.get(name) else {
        return false;
    };
    d.summary == "Invalid value for variable"
        && var.validations.iter().any(|rule| {
            d.detail.ends_with(&format!(
                "validation rule at {}.",
                hcl_range(&rule.decl_range)
            ))
        })
}

/// Errors for the expected failures that did not happen.
pub fn missing(run: &TestRun, seen: &[bool]) -> Diagnostics {
    run.expect_failures
        .iter()
        .zip(seen)
        .filter(|(_, seen)| !**seen)
        .map(|(e, _)| {
            Diagnostic::error(
                "Missing expected failure",
                format!(
                    "The checkable object, {}, was expected to report an error but did not.",
                    e.address
                ),
            )
            .at(e.range.clone())
            .in_context(format!("run {:?}", run.name))
        })
        .collect()
}

/// An apply that a failure the run expected stopped while planning: the
/// run fails, and says why.
pub fn stopped_apply(run: &TestRun, seen: &[bool]) -> Diagnostics {
    run.expect_failures
        .iter()
        .zip(seen)
        .filter(|(_, seen)| **seen)
        .map(|(e, _)| {
            Diagnostic::warning(
                "Expected failure while planning",
                format!(
                    "A custom condition within {} failed during the planning stage and prevented the requested apply operation. While this was an expected failure, the apply operation could not be executed and so the overall test case will be marked as a failure and the original diagnostic included in the test report.",
                    e.address
                ),
            )
        })
        .collect()
}
