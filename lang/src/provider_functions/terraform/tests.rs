//! The built-in provider's functions called through the evaluator as a
//! configuration calls them; expectations are what `terraform console`
//! 1.11.4 printed for the same expressions.

use crate::config::{Module, load_config};
use crate::eval::{EvalEnv, Marks, ProviderFunctions, Scope, evaluate_marked, parse_expression};
use crate::provider_functions::{ModuleFunctions, NoPluginFunctions};
use fleetform_shared::addr::Resource;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

const DECLARED: &str = "terraform {\n  required_providers {\n    terraform = { source = \"terraform.io/builtin/terraform\" }\n  }\n}\n";

fn module(src: &str) -> Module {
    let files = BTreeMap::from([("main.tf".to_string(), src.to_string())]);
    let (config, diags) = load_config(&files);
    assert!(!diags.has_errors(), "{diags:?}");
    config.unwrap().modules()[0].module.clone()
}

struct TestScope {
    functions: ModuleFunctions,
    env: EvalEnv,
}

impl Scope for TestScope {
    fn variable(&self, name: &str) -> Option<Value> {
        (name == "unknown").then_some(Value::unknown())
    }
    fn local(&self, _: &str) -> Option<Value> {
        None
    }
    fn resource(&self, _: &Resource) -> Option<Value> {
        None
    }
    fn count_index(&self) -> Option<Value> {
        None
    }
    fn each(&self) -> Option<(Value, Value)> {
        None
    }
    fn env(&self) -> &EvalEnv {
        &self.env
    }
    fn provider_functions(&self) -> Option<&dyn ProviderFunctions> {
        Some(&self.functions)
    }
}

fn eval_in(src: &str, expr: &str) -> Result<(Value, Marks), Diagnostic> {
    let m = module(src);
    let scope = TestScope {
        functions: ModuleFunctions::new(&m, Arc::new(NoPluginFunctions)),
        env: EvalEnv::default(),
    };
    let e = parse_expression("test.tf", expr).expect("parses");
    evaluate_marked(&e, &scope).map_err(|d| d.iter().next().unwrap().clone())
}

fn string(expr: &str) -> String {
    match eval_in(DECLARED, expr) {
        Ok((Value::String(s), _)) => s,
        other => panic!("{expr}: {other:?}"),
    }
}

fn error(expr: &str) -> (String, String) {
    let d = eval_in(DECLARED, expr).expect_err(expr);
    (d.summary, d.detail)
}

#[test]
fn encode_expr_writes_hcl_as_hclwrite_lays_it_out() {
    let cases = [
        (
            r#"{a=1, b="x", c=[1,2], d={e=null}}"#,
            "{\n  a = 1\n  b = \"x\"\n  c = [1, 2]\n  d = {\n    e = null\n  }\n}",
        ),
        (
            r#"[{a=1},{bb=[1,{c=2}]}]"#,
            "[{\n  a = 1\n  }, {\n  bb = [1, {\n    c = 2\n  }]\n}]",
        ),
        (
            r#"{"with space"=1, "1a"=2, a-b=3}"#,
            "{\n  \"1a\"         = 2\n  a-b          = 3\n  \"with space\" = 1\n}",
        ),
        (
            r#""he said \"hi\"\n$${x} %%{y} é \t \\ \r""#,
            r#""he said \"hi\"\n$${x} %%{y} é \t \\ \r""#,
        ),
        (r#""a\u0001b\u00a0c\u200bd""#, r#""a\u0001b\u00a0c\u200bd""#),
        ("1.5e20", "150000000000000000000"),
        ("1e-7", "0.0000001"),
        ("-3", "-3"),
        ("toset([\"b\",\"a\"])", "[\"a\", \"b\"]"),
        ("tomap({b=1,a=2})", "{\n  a = 2\n  b = 1\n}"),
        ("[]", "[]"),
        ("{}", "{}"),
        ("true", "true"),
        (
            "{a={b={c={}}}}",
            "{\n  a = {\n    b = {\n      c = {}\n    }\n  }\n}",
        ),
    ];
    for (arg, want) in cases {
        assert_eq!(
            string(&format!("provider::terraform::encode_expr({arg})")),
            want,
            "{arg}"
        );
    }
}

#[test]
fn encode_tfvars_writes_sorted_aligned_lines_and_refuses_non_objects() {
    assert_eq!(
        string(
            r#"provider::terraform::encode_tfvars({z=1.5, a="q\"", m={b=true, "with space"=2, a={}}, l=[], t=[{x=1},{y="2"}]})"#
        ),
        "a = \"q\\\"\"\nl = []\nm = {\n  a            = {}\n  b            = true\n  \"with space\" = 2\n}\nt = [{\n  x = 1\n  }, {\n  y = \"2\"\n}]\nz = 1.5\n"
    );
    assert_eq!(string("provider::terraform::encode_tfvars({})"), "");
    assert_eq!(
        string("provider::terraform::encode_tfvars({a-b=1})"),
        "a-b = 1\n"
    );
    assert_eq!(
        error(r#"provider::terraform::encode_tfvars("x")"#),
        (
            "Error in function call".to_string(),
            "Call to function \"provider::terraform::encode_tfvars\" failed: invalid value to encode: must be an object whose attribute names will become the encoded variable names.".to_string()
        )
    );
    assert_eq!(
        error(r#"provider::terraform::encode_tfvars({"1a"=1})"#).1,
        "Call to function \"provider::terraform::encode_tfvars\" failed: invalid variable name \"1a\": must be a valid identifier, per Terraform's rules for input variable declarations."
    );
    assert_eq!(
        error("provider::terraform::encode_tfvars(null)"),
        (
            "Invalid function argument".to_string(),
            "Invalid value for \"value\" parameter: argument must not be null.".to_string()
        )
    );
}

#[test]
fn decode_tfvars_reads_constants_and_names_what_is_not() {
    let (v, _) = eval_in(
        DECLARED,
        r#"provider::terraform::decode_tfvars("a = 1\nb = \"x\"\nc = [1, \"2\"]\nd = {e = null}\nf = 1 + 2\ng = [for x in [1] : x]")"#,
    )
    .unwrap();
    assert_eq!(
        v,
        Value::object([
            ("a", Value::int(1)),
            ("b", Value::from("x")),
            ("c", Value::tuple(vec![Value::int(1), Value::from("2")])),
            ("d", Value::object([("e", Value::null())])),
            ("f", Value::int(3)),
            ("g", Value::tuple(vec![Value::int(1)])),
        ])
    );
    let failed = |detail: &str| {
        format!("Call to function \"provider::terraform::decode_tfvars\" failed: {detail}.")
    };
    assert_eq!(
        error(r#"provider::terraform::decode_tfvars("a = var.x")"#).1,
        failed(
            "invalid expression for variable \"a\": <decode_tfvars argument>:1,5-8: Variables not allowed; Variables may not be used here."
        )
    );
    assert_eq!(
        error(r#"provider::terraform::decode_tfvars("a = upper(\"x\")")"#).1,
        failed(
            "invalid expression for variable \"a\": <decode_tfvars argument>:1,5-15: Function calls not allowed; Functions may not be called here."
        )
    );
    assert_eq!(
        error(r#"provider::terraform::decode_tfvars("a { }")"#).1,
        failed(
            "invalid tfvars content: <decode_tfvars argument>:1,1-2: Unexpected \"a\" block; Blocks are not allowed here."
        )
    );
    assert!(
        error(r#"provider::terraform::decode_tfvars("a = ")"#)
            .1
            .contains("failed: invalid tfvars syntax: <decode_tfvars argument>:1,")
    );
    assert_eq!(
        error("provider::terraform::decode_tfvars(null)").1,
        "Invalid value for \"src\" parameter: argument must not be null."
    );
}

#[test]
fn unknown_sensitive_and_argument_count_follow_terraform() {
    for f in ["encode_expr", "encode_tfvars", "decode_tfvars"] {
        let (v, _) = eval_in(DECLARED, &format!("provider::terraform::{f}(var.unknown)")).unwrap();
        assert_eq!(v, Value::unknown(), "{f}");
    }
    let (v, _) = eval_in(DECLARED, "provider::terraform::encode_expr([var.unknown])").unwrap();
    assert_eq!(v, Value::unknown());
    let (v, m) = eval_in(
        DECLARED,
        "provider::terraform::encode_tfvars({a=sensitive(1)})",
    )
    .unwrap();
    assert_eq!(v, Value::from("a = 1\n"));
    assert!(m.is_whole(), "{m:?}");
    assert_eq!(
        error("provider::terraform::encode_expr()"),
        (
            "Not enough function arguments".to_string(),
            "Function \"provider::terraform::encode_expr\" expects 1 argument(s). Missing value for \"value\".".to_string()
        )
    );
    assert_eq!(
        error("provider::terraform::encode_expr(1, 2)"),
        (
            "Too many function arguments".to_string(),
            "Function \"provider::terraform::encode_expr\" expects only 1 argument(s).".to_string()
        )
    );
}

#[test]
fn functions_need_the_provider_in_required_providers() {
    let d = eval_in("", "provider::terraform::encode_expr(1)").unwrap_err();
    assert_eq!(d.summary, "Unknown provider function");
    assert_eq!(
        d.detail,
        "There is no function named \"provider::terraform::encode_expr\". Ensure that provider name \"terraform\" is declared in this module's required_providers block, and that this provider offers a function named \"encode_expr\"."
    );
    let r = d.range.unwrap();
    assert_eq!((r.start.column, r.end.column), (1, 33));
    let d = eval_in(DECLARED, "provider::terraform::nope(1)").unwrap_err();
    assert_eq!(d.summary, "Unknown provider function");
    assert_eq!(
        d.detail,
        "The function \"nope\" is not available from the provider \"terraform\"."
    );
}
