//! Input variable tests: precedence between every pair of sources, the
//! undeclared/required/nullable rules, type errors worded by origin,
//! validation rules, and variables files in HCL and JSON.

use super::*;
use crate::config::load_module;
use fleetform_shared::diag::Severity;
use fleetform_shared::value::Number;

fn module(tf: &str) -> Module {
    let files = BTreeMap::from([("main.tf".to_string(), tf.to_string())]);
    let (m, diags) = load_module(&files);
    assert!(!diags.has_errors(), "{diags:?}");
    m.expect("module")
}

fn env(name: &str, value: &str) -> InputSource {
    InputSource::Env {
        name: name.into(),
        value: value.into(),
    }
}

fn var(name: &str, value: &str) -> InputSource {
    InputSource::Var {
        name: name.into(),
        value: value.into(),
    }
}

fn file(name: &str, content: &str) -> InputSource {
    InputSource::File {
        name: name.into(),
        content: content.into(),
    }
}

fn values(m: &Module, sources: &[InputSource]) -> BTreeMap<String, Value> {
    match input_values(m, sources) {
        Ok(v) => {
            assert!(v.warnings.is_empty(), "{:?}", v.warnings);
            v.values
        }
        Err(d) => panic!("{d:?}"),
    }
}

fn errors(m: &Module, sources: &[InputSource]) -> Vec<Diagnostic> {
    input_values(m, sources)
        .expect_err("expected errors")
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect()
}

fn only_error(m: &Module, sources: &[InputSource]) -> Diagnostic {
    let mut e = errors(m, sources);
    assert_eq!(e.len(), 1, "{e:?}");
    e.remove(0)
}

/// (line, column) where a diagnostic starts, and its file.
fn at(d: &Diagnostic) -> (String, usize, usize) {
    let r = d.range.as_ref().expect("a location");
    (r.filename.clone(), r.start.line, r.start.column)
}

/// Builds one kind of source setting `x` to the given text.
type MakeSource = fn(&str) -> InputSource;

const STRING_VAR: &str = "variable \"x\" {\n  type = string\n}\n";

#[test]
fn a_later_source_wins_over_an_earlier_one_of_any_kind() {
    let m = module(STRING_VAR);
    let kinds: [(&str, MakeSource); 4] = [
        ("env", |v| env("x", v)),
        ("tfvars", |v| {
            file("terraform.tfvars", &format!("x = \"{v}\""))
        }),
        ("json", |v| {
            file("terraform.tfvars.json", &format!("{{\"x\": \"{v}\"}}"))
        }),
        ("-var", |v| var("x", v)),
    ];
    for (a, make_a) in &kinds {
        for (b, make_b) in &kinds {
            if a == b {
                continue;
            }
            let got = values(&m, &[make_a(a), make_b(b)]);
            assert_eq!(got["x"], Value::from(*b), "{a} then {b}");
        }
    }
    // A source that does not mention the variable changes nothing.
    let got = values(
        &m,
        &[
            env("x", "env"),
            file("a.auto.tfvars", "# nothing\n"),
            file("b.auto.tfvars.json", "{}"),
        ],
    );
    assert_eq!(got["x"], Value::from("env"));
}

#[test]
fn undeclared_values_warn_from_files_fail_from_the_command_line_and_pass_from_the_environment() {
    let m = module(STRING_VAR);
    let ok = input_values(
        &m,
        &[
            env("elsewhere", "1"),
            file("terraform.tfvars", "x = \"a\"\nzone = \"b\"\n"),
        ],
    )
    .unwrap();
    assert_eq!(ok.values["x"], Value::from("a"));
    let w: Vec<_> = ok.warnings.iter().collect();
    assert_eq!(w.len(), 1, "the environment is ignored: {w:?}");
    assert_eq!(w[0].severity, Severity::Warning);
    assert_eq!(w[0].summary, "Value for undeclared variable");
    assert_eq!(
        w[0].detail,
        "The root module does not declare a variable named \"zone\" but a value was found in file \"terraform.tfvars\". If you meant to use this value, add a \"variable\" block to the configuration.\n\nTo silence these warnings, use TF_VAR_... environment variables to provide certain \"global\" settings to all configurations in your organization. To reduce the verbosity of these warnings, use the -compact-warnings option."
    );
    assert_eq!(w[0].range, None, "Terraform's warning has no location");

    // After two, the rest are counted in one summary.
    let ok = input_values(
        &m,
        &[
            file("terraform.tfvars", "x = \"a\"\nb = 1\nc = 2\n"),
            file("more.auto.tfvars.json", "{\"d\": 1, \"e\": 2}"),
        ],
    )
    .unwrap();
    let w: Vec<_> = ok.warnings.iter().map(|d| d.summary.as_str()).collect();
    assert_eq!(
        w,
        [
            "Value for undeclared variable",
            "Value for undeclared variable",
            "Values for undeclared variables"
        ]
    );
    assert_eq!(
        ok.warnings.0[2].detail,
        "In addition to the other similar warnings shown, 2 other variable(s) defined without being declared."
    );

    let e = only_error(&m, &[var("x", "a"), var("zone", "b")]);
    assert_eq!(e.summary, "Value for undeclared variable");
    assert_eq!(
        e.detail,
        "A variable named \"zone\" was assigned on the command line, but the root module does not declare a variable of that name. To use this value, add a \"variable\" block to the configuration."
    );
    // The winner decides: a -var-file after -var makes it a warning again.
    let ok = input_values(
        &m,
        &[
            var("x", "a"),
            var("zone", "b"),
            file("f.tfvars", "zone = 1"),
        ],
    )
    .unwrap();
    assert_eq!(ok.warnings.0.len(), 1);
    assert_eq!(ok.warnings.0[0].severity, Severity::Warning);
}

#[test]
fn a_required_variable_without_a_value_is_an_error_at_its_declaration() {
    let m = module("variable \"a\" {}\n\nvariable \"b\" {\n  default = 1\n}\n");
    let e = only_error(&m, &[]);
    assert_eq!(e.summary, "No value for required variable");
    assert_eq!(
        e.detail,
        "The root module input variable \"a\" is not set, and has no default value. Use a -var or -var-file command line argument to provide a value for this variable."
    );
    assert_eq!(at(&e), ("main.tf".into(), 1, 1));
    // An explicit null is a value: a nullable variable takes it.
    let got = values(&m, &[file("terraform.tfvars", "a = null")]);
    assert_eq!(got["a"], Value::null());
    assert_eq!(got["b"], Value::int(1), "defaults fill the rest");
}

#[test]
fn null_stays_null_when_nullable_and_means_the_default_when_not() {
    let m = module(
        r#"variable "open" {
  type    = string
  default = "d"
}
variable "closed" {
  type     = string
  default  = "d"
  nullable = false
}
variable "strict" {
  type     = list(string)
  nullable = false
}
"#,
    );
    let got = values(
        &m,
        &[file(
            "terraform.tfvars",
            "open = null\nclosed = null\nstrict = []\n",
        )],
    );
    assert_eq!(got["open"], Value::null());
    assert_eq!(got["closed"], Value::from("d"));

    let e = only_error(&m, &[file("terraform.tfvars", "strict = null\n")]);
    assert_eq!(e.summary, "Required variable not set");
    assert_eq!(
        e.detail,
        "The given value is not suitable for var.strict defined at main.tf:10,1-18: required variable may not be set to null."
    );
    assert_eq!(at(&e), ("terraform.tfvars".into(), 1, 10));

    let e = only_error(&m, &[var("strict", "null")]);
    assert_eq!(
        e.detail,
        "Unsuitable value for var.strict set using -var=\"strict=...\": required variable may not be set to null."
    );
    assert_eq!(at(&e), ("main.tf".into(), 10, 1));
}

#[test]
fn type_errors_say_where_the_value_came_from() {
    let m = module(
        "variable \"n\" {\n  type = number\n}\nvariable \"s\" {\n  type      = number\n  sensitive = true\n}\n",
    );
    let problems = |sources: &[InputSource]| {
        let e = errors(&m, sources);
        assert!(
            e.iter()
                .all(|d| d.summary == "Invalid value for input variable"),
            "{e:?}"
        );
        e
    };
    let e = problems(&[var("n", "abc"), var("s", "1")]);
    assert!(
        e[0].detail.starts_with(
            "Unsuitable value for var.n set using -var=\"n=...\": a number is required"
        ),
        "{}",
        e[0].detail
    );
    assert_eq!(at(&e[0]), ("main.tf".into(), 1, 1));

    let e = problems(&[env("n", "abc"), var("s", "1")]);
    assert!(
        e[0].detail.starts_with(
            "Unsuitable value for var.n set using the TF_VAR_n environment variable: "
        ),
        "{}",
        e[0].detail
    );

    let e = problems(&[file("terraform.tfvars", "n = [1]\ns = 1\n")]);
    assert!(
        e[0].detail
            .starts_with("The given value is not suitable for var.n declared at main.tf:1,1-13: "),
        "{}",
        e[0].detail
    );
    assert_eq!(at(&e[0]), ("terraform.tfvars".into(), 1, 5));

    // A sensitive variable's bad value is not pointed at.
    let e = problems(&[var("n", "1"), file("secret.tfvars", "\ns = \"x\"\n")]);
    assert!(
        e[0].detail
            .starts_with("The given value is not suitable for var.s, which is sensitive: ")
            && e[0]
                .detail
                .ends_with(". Invalid value defined at secret.tfvars:2,5-8."),
        "{}",
        e[0].detail
    );
    assert_eq!(at(&e[0]), ("main.tf".into(), 4, 1));
}

#[test]
fn text_values_are_literal_for_primitive_types_and_expressions_otherwise() {
    let m = module(
        "variable \"s\" {\n  type = string\n}\nvariable \"any\" {\n  type = any\n}\nvariable \"untyped\" {}\n",
    );
    let got = values(
        &m,
        &[
            var("s", "[1, 2]"),
            env("any", "{ a = [1, true] }"),
            var("untyped", "[1]"),
        ],
    );
    assert_eq!(got["s"], Value::from("[1, 2]"));
    assert_eq!(
        got["any"],
        Value::Map(fleetform_shared::value::ValueMap::from([(
            "a".to_string(),
            Value::tuple(vec![Value::int(1), Value::Bool(true)])
        )]))
    );
    assert_eq!(got["untyped"], Value::from("[1]"));
    // With `any`, a bare word is a reference, as Terraform tells people
    // who forget the quotes.
    let e = only_error(&m, &[var("s", ""), var("any", "hello"), var("untyped", "")]);
    assert_eq!(e.summary, "Variables not allowed");
    assert_eq!(at(&e), ("<value for var.any>".into(), 1, 1));
}

const VALIDATED: &str = r#"variable "size" {
  type = number
  validation {
    condition     = var.size > var.min
    error_message = "size must be above ${var.min}, not ${var.size}."
  }
}
variable "min" {
  type    = number
  default = 2
}
"#;

#[test]
fn validation_rules_pass_or_fail_with_the_message_at_the_value() {
    let m = module(VALIDATED);
    assert_eq!(values(&m, &[var("size", "3")])["size"], Value::int(3));

    let e = only_error(&m, &[file("terraform.tfvars", "\nsize = 1\n")]);
    assert_eq!(e.summary, "Invalid value for variable");
    assert_eq!(
        e.detail,
        "size must be above 2, not 1.\n\nThis was checked by the validation rule at main.tf:3,3-13."
    );
    assert_eq!(at(&e), ("terraform.tfvars".into(), 2, 8));

    // The rule reads the other variable's final value.
    let e = only_error(&m, &[var("size", "3"), var("min", "5")]);
    assert!(
        e.detail.starts_with("size must be above 5, not 3."),
        "{e:?}"
    );
    assert_eq!(at(&e), ("main.tf".into(), 1, 1), "-var: the declaration");
}

#[test]
fn validation_rules_call_the_terraform_providers_functions_and_refuse_plugins() {
    let m = module(
        r#"terraform {
  required_providers {
    terraform = { source = "terraform.io/builtin/terraform" }
    sim       = { source = "fleetform/sim" }
  }
}
variable "v" {
  type = string
  validation {
    condition     = provider::terraform::encode_expr(var.v) == "\"ok\""
    error_message = "Not ok."
  }
}
variable "w" {
  type    = string
  default = "x"
  validation {
    condition     = provider::sim::shout(var.w, 1) == "X!"
    error_message = "Not loud."
  }
}
"#,
    );
    let e = errors(&m, &[var("v", "no")]);
    let details: Vec<&str> = e.iter().map(|d| d.detail.as_str()).collect();
    assert!(
        details.iter().any(|d| d.starts_with("Not ok.")),
        "{details:#?}"
    );
    // A plugin's function cannot run before the run starts: an error at
    // the call, not a skipped rule.
    assert!(
        e.iter().any(|d| d.summary == "Error in function call"
            && d.detail
                .contains("root variables are validated before any provider is started")),
        "{e:#?}"
    );
}

#[test]
fn validation_rules_that_cannot_be_decided_yet_are_skipped() {
    let m = module(
        r#"variable "v" {
  type = string
  validation {
    condition     = local.allowed == var.v
    error_message = "Not allowed."
  }
}
locals {
  allowed = "x"
}
"#,
    );
    assert_eq!(values(&m, &[var("v", "y")])["v"], Value::from("y"));
}

#[test]
fn validation_results_must_be_booleans_and_messages_keep_secrets() {
    let m = module(
        r#"variable "v" {
  type    = string
  default = null
  validation {
    condition     = var.v
    error_message = "Bad."
  }
}
variable "secret" {
  type      = string
  sensitive = true
  default   = "hunter2"
  validation {
    condition     = length(var.secret) > 10
    error_message = "Too short: ${var.secret}."
  }
}
"#,
    );
    let e = errors(&m, &[]);
    assert_eq!(e.len(), 3, "{e:?}");
    assert_eq!(e[0].summary, "Error message refers to sensitive values");
    assert_eq!(e[1].summary, "Invalid value for variable");
    assert!(
        e[1].detail.starts_with(
            "The error message included a sensitive value, so it will not be displayed.\n\n"
        ),
        "{}",
        e[1].detail
    );
    assert_eq!(e[2].summary, "Invalid variable validation result");
    assert_eq!(
        e[2].detail,
        "Validation condition expression must return either true or false, not null."
    );
    assert_eq!(at(&e[2]), ("main.tf".into(), 5, 21));
}

#[test]
fn json_variables_files_keep_every_digit_and_take_strings_literally() {
    let m = module(
        "variable \"n\" {\n  type = number\n}\nvariable \"s\" {}\nvariable \"o\" {\n  type = object({ a = list(number) })\n}\n",
    );
    let big = "123456789012345678901234567890.5";
    let got = values(
        &m,
        &[file(
            "terraform.tfvars.json",
            &format!(
                "{{\n  \"//\": \"a comment\",\n  \"n\": {big},\n  \"s\": \"${{x}}\",\n  \"o\": {{\"a\": [1, 2.5]}}\n}}"
            ),
        )],
    );
    assert_eq!(got["n"], Value::Number(Number::parse(big).unwrap()));
    assert_eq!(got["s"], Value::from("${x}"));
    assert_eq!(
        got["o"],
        Value::Map(fleetform_shared::value::ValueMap::from([(
            "a".to_string(),
            Value::tuple(vec![
                Value::int(1),
                Value::Number(Number::parse("2.5").unwrap())
            ])
        )]))
    );

    // Values are located for diagnostics.
    let e = only_error(
        &m,
        &[file(
            "x.tfvars.json",
            "{\"s\": 1, \"o\": {\"a\": []},\n \"n\": \"many\"}",
        )],
    );
    assert_eq!(at(&e), ("x.tfvars.json".into(), 2, 7));
    assert!(errors(&m, &[]).len() == 3, "all three are required");

    let e = only_error(&m, &[file("x.tfvars.json", "{\"n\": 1, \"n\": 2}")]);
    assert_eq!(e.summary, "Duplicate attribute definition");
    assert_eq!(
        e.detail,
        "The argument \"n\" was already set at x.tfvars.json:1,2-8."
    );
    assert_eq!(at(&e), ("x.tfvars.json".into(), 1, 10));

    let e = only_error(&m, &[file("x.tfvars.json", "[1]")]);
    assert_eq!(e.summary, "Incorrect JSON value type");
    let e = only_error(&m, &[file("x.tfvars.json", "{\"n\": 1,\n}")]);
    assert_eq!(at(&e).0, "x.tfvars.json");
    assert_eq!(at(&e).1, 2);
}

#[test]
fn hcl_variables_files_report_syntax_and_non_constant_values_where_they_are() {
    let m = module(STRING_VAR);
    let e = only_error(&m, &[file("bad.tfvars", "x = \"a\"\ny = [1,\n")]);
    // Named as Terraform names it, not hcl-edit's "Invalid syntax".
    assert_eq!(e.summary, "Invalid expression");
    assert_eq!(at(&e).0, "bad.tfvars");
    assert!(at(&e).1 >= 2, "{e:?}");

    let e = only_error(&m, &[file("terraform.tfvars", "x = us_east\n")]);
    assert_eq!(
        (e.summary.as_str(), e.detail.as_str()),
        ("Variables not allowed", "Variables may not be used here.")
    );
    assert_eq!(at(&e), ("terraform.tfvars".into(), 1, 5));

    let e = only_error(&m, &[file("terraform.tfvars", "x = upper(\"a\")\n")]);
    assert_eq!(e.summary, "Function calls not allowed");
    assert_eq!(at(&e), ("terraform.tfvars".into(), 1, 5));

    // `for` expressions may use their own names.
    let got = values(
        &m,
        &[file(
            "terraform.tfvars",
            "x = \"%{for s in [\"a\", \"b\"]}${s}%{endfor}\"\n",
        )],
    );
    assert_eq!(got["x"], Value::from("ab"));

    let e = only_error(&m, &[file("terraform.tfvars", "\nvariable \"x\" {}\n")]);
    assert_eq!(e.summary, "Variable declaration in .tfvars file");
    assert!(
        e.detail.ends_with(
            "To set a value for this variable in terraform.tfvars, use the definition syntax instead:\n    x = <value>"
        ),
        "{}",
        e.detail
    );
    assert_eq!(at(&e), ("terraform.tfvars".into(), 2, 1));
    assert_eq!(e.range.unwrap().end.column, 9);

    let e = only_error(&m, &[file("terraform.tfvars", "x = \"a\"\nthing {}\n")]);
    assert_eq!(
        (e.summary.as_str(), e.detail.as_str()),
        ("Unexpected \"thing\" block", "Blocks are not allowed here.")
    );
}
