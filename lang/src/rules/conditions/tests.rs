//! Tests of custom condition evaluation.

use super::*;
use crate::eval::{MapScope, Marks, Reference, parse_expression};
use fleetform_shared::diag::SourceRange;

fn rule(condition: &str, message: &str) -> CheckRule {
    CheckRule {
        condition: parse_expression("main.tf", condition).unwrap(),
        error_message: parse_expression("main.tf", message).unwrap(),
        range: SourceRange::default(),
        decl_range: SourceRange::default(),
    }
}

fn scope() -> MapScope {
    MapScope::new()
        .with_variable("n", Value::int(3))
        .with_variable("unknown", Value::unknown())
        .with_variable("nothing", Value::null())
        .with_variable("secret", Value::from("s3cr3t"))
        .with_marks(Reference::Variable("secret".into()), Marks::whole())
}

fn one(condition: &str, message: &str, kind: RuleKind) -> (RuleStatus, Diagnostics) {
    check_rules(&[rule(condition, message)], &scope(), kind)
}

#[test]
fn passing_and_failing_rules() {
    let (s, d) = one("var.n > 1", "\"x\"", RuleKind::ResourcePrecondition);
    assert_eq!(s, RuleStatus::Passed);
    assert!(d.is_empty());

    let (s, d) = one(
        "var.n > 5",
        "\"n is ${var.n}, not above 5  \"",
        RuleKind::ResourcePrecondition,
    );
    assert_eq!(s, RuleStatus::Failed);
    let d = d.iter().next().unwrap();
    assert_eq!(d.summary, "Resource precondition failed");
    assert_eq!(d.detail, "n is 3, not above 5");
    assert!(d.is_error());
    // At the condition expression.
    assert_eq!(d.range.as_ref().unwrap().start.column, 1);
    assert_eq!(d.range.as_ref().unwrap().end.column, 10);
}

#[test]
fn failure_summaries_name_the_rule() {
    for (kind, summary) in [
        (
            RuleKind::ResourcePostcondition,
            "Resource postcondition failed",
        ),
        (
            RuleKind::OutputPrecondition,
            "Module output value precondition failed",
        ),
        (RuleKind::CheckAssertion, "Check block assertion failed"),
    ] {
        let (_, d) = one("false", "\"m\"", kind);
        assert_eq!(d.iter().next().unwrap().summary, summary);
    }
}

#[test]
fn unknown_conditions_wait() {
    let (s, d) = one("var.unknown == 1", "\"x\"", RuleKind::ResourcePrecondition);
    assert_eq!(s, RuleStatus::Unknown);
    assert!(d.is_empty());
    // Unknown wins over passed, failed over both.
    let rules = [rule("true", "\"a\""), rule("var.unknown", "\"b\"")];
    assert_eq!(
        check_rules(&rules, &scope(), RuleKind::ResourcePrecondition).0,
        RuleStatus::Unknown
    );
    let rules = [rule("var.unknown", "\"b\""), rule("false", "\"c\"")];
    assert_eq!(
        check_rules(&rules, &scope(), RuleKind::ResourcePrecondition).0,
        RuleStatus::Failed
    );
}

#[test]
fn invalid_results() {
    let (s, d) = one("var.nothing", "\"x\"", RuleKind::ResourcePrecondition);
    assert_eq!(s, RuleStatus::Failed);
    let d = d.iter().next().unwrap();
    assert_eq!(d.summary, "Invalid condition result");
    assert_eq!(
        d.detail,
        "Condition expression must return either true or false, not null."
    );
    let (_, d) = one("\"yes\"", "\"x\"", RuleKind::ResourcePrecondition);
    assert_eq!(d.iter().next().unwrap().summary, "Invalid condition result");
    // Strings "true"/"false" convert, as in Terraform.
    assert_eq!(
        one("\"true\"", "\"x\"", RuleKind::ResourcePrecondition).0,
        RuleStatus::Passed
    );
    let (s, d) = one("var.undeclared", "\"x\"", RuleKind::ResourcePrecondition);
    assert_eq!(s, RuleStatus::Failed);
    assert_eq!(
        d.iter().next().unwrap().summary,
        "Reference to undeclared input variable"
    );
}

#[test]
fn error_message_problems() {
    let (_, d) = one("false", "var.secret", RuleKind::ResourcePrecondition);
    let s = summaries(&d);
    assert_eq!(
        s,
        vec![
            "Error message refers to sensitive values",
            "Resource precondition failed"
        ]
    );
    assert_eq!(
        d.iter().nth(1).unwrap().detail,
        "The error message included a sensitive value, so it will not be displayed."
    );
    let (_, d) = one("false", "var.unknown", RuleKind::ResourcePrecondition);
    assert_eq!(
        summaries(&d),
        vec!["Invalid error message", "Resource precondition failed"]
    );
    assert_eq!(
        d.iter().nth(1).unwrap().detail,
        "Failed to evaluate condition error message."
    );
}

#[test]
fn check_assertions_only_warn() {
    let (s, d) = one("var.nothing", "\"x\"", RuleKind::CheckAssertion);
    assert_eq!(s, RuleStatus::Failed);
    assert!(!d.has_errors());
    let (_, d) = one("false", "\"down\"", RuleKind::CheckAssertion);
    assert!(!d.has_errors());
    assert_eq!(d.iter().next().unwrap().detail, "down");
}

#[test]
fn self_is_the_scope_s_object() {
    struct WithSelf(MapScope, Value);
    impl Scope for WithSelf {
        fn variable(&self, n: &str) -> Option<Value> {
            self.0.variable(n)
        }
        fn local(&self, n: &str) -> Option<Value> {
            self.0.local(n)
        }
        fn resource(&self, a: &fleetform_shared::addr::Resource) -> Option<Value> {
            self.0.resource(a)
        }
        fn count_index(&self) -> Option<Value> {
            None
        }
        fn each(&self) -> Option<(Value, Value)> {
            None
        }
        fn self_value(&self) -> Option<Value> {
            Some(self.1.clone())
        }
    }
    let obj = Value::object([("id", Value::from("abc"))]);
    let s = WithSelf(scope(), obj);
    let r = [rule("self.id == \"abc\"", "\"x\"")];
    assert_eq!(
        check_rules(&r, &s, RuleKind::ResourcePostcondition).0,
        RuleStatus::Passed
    );
    let r = [rule("self.missing == 1", "\"x\"")];
    let (_, d) = check_rules(&r, &s, RuleKind::ResourcePostcondition);
    assert_eq!(summaries(&d), vec!["Unsupported attribute"]);
    // Unknown while planning: checked later.
    let s = WithSelf(scope(), Value::object([("id", Value::unknown())]));
    let r = [rule("self.id == \"abc\"", "\"x\"")];
    assert_eq!(
        check_rules(&r, &s, RuleKind::ResourcePostcondition).0,
        RuleStatus::Unknown
    );
    // Without an object, `self` is refused.
    let (_, d) = one("self.id == 1", "\"x\"", RuleKind::ResourcePrecondition);
    assert_eq!(summaries(&d), vec!["Invalid \"self\" reference"]);
}

fn summaries(d: &Diagnostics) -> Vec<String> {
    d.iter().map(|d| d.summary.clone()).collect()
}
