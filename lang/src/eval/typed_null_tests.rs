//! Nulls and unknowns carry types as cty's do. Every expectation here is
//! what `terraform console` (Terraform 1.11.4) printed for `type(EXPR)`
//! or for the expression itself, run when these tests were written; the
//! unknowns are a resource not applied yet (`terraform_data.x.id`, an
//! unknown of the dynamic type in the console), here `var.u`.

use super::*;
use fleetform_shared::types::Type;

fn scope() -> MapScope {
    MapScope::new().with_variable("u", Value::unknown())
}

fn eval(src: &str) -> Result<Value, String> {
    let e = parse_expression("t.tf", src).expect("expression parses");
    evaluate(&e, &scope()).map_err(|d| d.0[0].detail.clone())
}

fn type_of(src: &str) -> String {
    eval(src)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
        .ty()
        .console_text()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn check(cases: &[(&str, &str)]) {
    for (src, want) in cases {
        assert_eq!(type_of(src), *want, "type({src})");
    }
}

#[test]
fn a_conditional_s_null_takes_the_other_result_s_type() {
    check(&[
        (r#"true ? null : "a""#, "string"),
        (r#"false ? null : "a""#, "string"),
        (r#"true ? "a" : null"#, "string"),
        (r#"true ? null : ["a"]"#, "tuple([ string, ])"),
        ("true ? null : {a = 1}", "object({ a: number, })"),
        ("true ? tostring(null) : 1", "string"),
        ("true ? tostring(null) : null", "string"),
        ("true ? null : null", "dynamic"),
        (r#"true ? tolist(null) : ["a"]"#, "list(string)"),
        (r#"true ? null : tolist(["a"])"#, "list(string)"),
        (
            r#"false ? {a = null} : {a = "x"}"#,
            "object({ a: string, })",
        ),
        (r#"false ? [null] : ["x"]"#, "tuple([ string, ])"),
        (
            r#"[for x in ["a"] : x == "a" ? null : x]"#,
            "tuple([ string, ])",
        ),
        // An unknown of the dynamic type leaves the type open.
        ("true ? null : var.u", "dynamic"),
    ]);
    assert_eq!(
        eval(r#"true ? tostring(null) : ["a"]"#).unwrap_err(),
        "The true and false result expressions must have consistent types. The 'true' value \
         is string, but the 'false' value is tuple."
    );
}

#[test]
fn conversions_and_functions_type_their_nulls() {
    check(&[
        ("tostring(null)", "string"),
        ("tonumber(null)", "number"),
        ("tolist(null)", "list(dynamic)"),
        ("tonumber(tostring(null))", "number"),
        (r#"tolist(["a", null])[1]"#, "string"),
        (r#"tomap({a = null, b = "x"})["a"]"#, "string"),
        (r#"lookup({a = tostring(null)}, "a", "x")"#, "string"),
        (r#"lookup({a = null}, "a", "x")"#, "dynamic"),
        ("element([tostring(null)], 0)", "string"),
        ("one([tostring(null)])", "string"),
        ("one(tolist([null]))", "dynamic"),
        (r#"coalesce(null, "a")"#, "string"),
        (r#"regex("(a)|(b)", "a")"#, "tuple([ string, string, ])"),
        ("jsondecode(\"null\")", "dynamic"),
        ("null", "dynamic"),
    ]);
    assert_eq!(
        eval("tolist(tostring(null))").unwrap_err(),
        "Invalid value for \"v\" parameter: cannot convert string to list of any single type."
    );
    assert_eq!(
        eval("upper(null)").unwrap_err(),
        "Invalid value for \"str\" parameter: argument must not be null."
    );
}

#[test]
fn collections_and_for_results_keep_their_elements_types() {
    check(&[
        (r#"[null, "a"]"#, "tuple([ dynamic, string, ])"),
        ("{a = null}", "object({ a: dynamic, })"),
        (r#"tomap({a = null, b = "x"})"#, "map(string)"),
        (
            r#"tomap({a = null, b = ["x"]})"#,
            "map( tuple([ string, ]), )",
        ),
        (r#"toset([null, "a"])"#, "set(string)"),
        ("tolist([null, null])", "list(dynamic)"),
        (r#"tolist([null, "a", 1])"#, "list(string)"),
        ("tolist([tostring(null), 1])", "list(string)"),
        (
            r#"[for x in tolist(["a", null]) : x]"#,
            "tuple([ string, string, ])",
        ),
        ("[for x in [1] : null]", "tuple([ dynamic, ])"),
        (
            r#"{for k in ["a"] : k => tostring(null)}"#,
            "object({ a: string, })",
        ),
        (
            r#"concat([tostring(null)], ["a"])"#,
            "tuple([ string, string, ])",
        ),
        (
            r#"concat(tolist([null]), ["a"])"#,
            "tuple([ dynamic, string, ])",
        ),
        (
            r#"flatten([[tostring(null)], ["a"]])"#,
            "tuple([ string, string, ])",
        ),
        (r#"compact([tostring(null), "a"])"#, "list(string)"),
        (
            r#"merge({a = null}, {b = tostring(null)})"#,
            "object({ a: dynamic, b: string, })",
        ),
        (r#"distinct([null, "a"])"#, "list(string)"),
        (r#"reverse([null, "a"])"#, "tuple([ string, dynamic, ])"),
        (r#"values(tomap({a = null, b = "x"}))"#, "list(string)"),
        (r#"setunion(toset([null]), toset(["a"]))"#, "set(string)"),
    ]);
    // cty finds no element type for a null beside a collection.
    for (src, kind) in [
        (r#"tolist([null, ["a"]])"#, "list"),
        ("tolist([tomap({}), null])", "list"),
        ("toset([null, {a = 1}])", "set"),
    ] {
        assert_eq!(
            eval(src).unwrap_err(),
            format!(
                "Invalid value for \"v\" parameter: cannot convert tuple to {kind} of any single type."
            ),
            "{src}"
        );
    }
}

#[test]
fn try_and_can_type_their_results() {
    check(&[
        (r#"try(null, "a")"#, "dynamic"),
        (r#"try(tostring(null), "a")"#, "string"),
        ("try(tostring(null), 1)", "string"),
        ("can(tostring(null))", "bool"),
        ("try(var.u, 1)", "dynamic"),
        ("can(var.u)", "bool"),
    ]);
}

#[test]
fn nulls_are_equal_whatever_their_types() {
    for src in [
        "null == tostring(null)",
        "tostring(null) == tonumber(null)",
        "tostring(null) == null",
    ] {
        assert_eq!(eval(src), Ok(Value::Bool(true)), "{src}");
    }
    check(&[("null == null", "bool")]);
}

#[test]
fn an_unknown_s_type_follows_from_what_made_it() {
    check(&[
        ("var.u", "dynamic"),
        ("upper(var.u)", "string"),
        (r#""${var.u}-a""#, "string"),
        (r#"var.u == "a""#, "bool"),
        ("length(var.u) + 1", "number"),
        ("!var.u", "bool"),
        ("tonumber(var.u)", "number"),
        ("tolist([var.u])", "list(dynamic)"),
        (r#"formatlist("%s", [var.u])"#, "list(string)"),
    ]);
    for src in ["upper(var.u)", "length(var.u) + 1"] {
        assert!(eval(src).unwrap().is_unknown(), "{src}");
    }
}

/// cty's conversion of an unknown (`cty.UnknownVal(out)`), checked in
/// Rust rather than the console, which cannot make an unknown of a known
/// type.
#[test]
fn an_unknown_of_a_known_type_converts_to_an_unknown_of_the_target() {
    let u = Value::unknown_of(Type::Number);
    let s = convert::convert(u.clone(), &Type::String).unwrap();
    assert!(s.is_unknown());
    assert_eq!(s.ty(), Type::String);
    // An unknown list of strings does not become a number.
    assert!(convert::convert(Value::unknown_of(Type::list(Type::String)), &Type::Number).is_err());
    // Where anything is wanted it keeps its type.
    assert_eq!(
        convert::convert(u, &Type::Dynamic).unwrap().ty(),
        Type::Number
    );
}
