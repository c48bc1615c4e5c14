//! cty's and HCL's rules for types that are not known yet: values of no
//! type (a literal `null`, an unknown of the dynamic type) in function
//! calls (per-parameter `AllowDynamicType`) and in unification
//! (conditionals, `coalesce`, collections of `any`); the types of unknowns
//! (splats, indices, functions' results); `lookup`'s result type; and the
//! type of a conditional's result that fails, as Terraform 1.11.4 (go-cty
//! 1.16.0, HCL 2.23.0) gives them. Every expectation is what
//! `terraform console` printed for the expression or for `type(EXPR)`
//! when these tests were written; `var.u` stands for the console's
//! `terraform_data.x.id` of a resource not applied yet, an unknown of the
//! dynamic type.

use super::*;

fn scope() -> MapScope {
    MapScope::new().with_variable("u", Value::unknown())
}

fn eval(src: &str) -> Result<Value, (String, String)> {
    let e = parse_expression("t.tf", src).expect("expression parses");
    evaluate(&e, &scope()).map_err(|d| (d.0[0].summary.clone(), d.0[0].detail.clone()))
}

fn type_of(src: &str) -> String {
    eval(src)
        .unwrap_or_else(|e| panic!("{src}: {e:?}"))
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
fn an_argument_of_no_type_where_the_parameter_wants_one_makes_an_unknown() {
    // `format`'s `args` take null but not the dynamic type: the function
    // is not called, the result is unknown and of no type (seed 2's case).
    for src in [
        r#"format("%[2]s %[1]s", null, true)"#,
        r#"format("%s", null)"#,
        r#"format("%#v", null)"#,
        r#"format("%s", var.u)"#,
        r#"lookup(tomap({z1 = null}), "z1", null)"#,
        r#"format("%s", lookup(tomap({z1 = null}), "z1", null))"#,
        r#"formatlist("%s", null)"#,
        r#"concat(var.u, [1])"#,
        r#"keys(var.u)"#,
    ] {
        let v = eval(src).unwrap_or_else(|e| panic!("{src}: {e:?}"));
        if src.starts_with("lookup") {
            assert!(v.is_null(), "{src}: {v:?}");
        } else {
            assert!(v.is_unknown(), "{src}: {v:?}");
        }
        assert_eq!(type_of(src), "dynamic", "{src}");
    }
    // A typed null is formatted, or refused by the verb.
    assert_eq!(
        eval(r#"format("%#v", tostring(null))"#),
        Ok(Value::from("null"))
    );
    assert_eq!(
        eval(r#"format("%s", tostring(null))"#).unwrap_err().1,
        "Call to function \"format\" failed: unsupported value for \"%s\" at 0: null value \
         cannot be formatted."
    );
    // Parameters that allow the dynamic type still run: `length` of an
    // unknown is an unknown number, `jsonencode` an unknown string.
    check(&[
        ("length(var.u)", "number"),
        ("jsonencode(var.u)", "string"),
        ("tostring(var.u)", "string"),
        ("coalesce(null, var.u)", "dynamic"),
    ]);
    // The null check comes first for a parameter that refuses null, and
    // conversion gives a typed parameter's argument its type.
    assert_eq!(
        eval("upper(null)").unwrap_err().1,
        "Invalid value for \"str\" parameter: argument must not be null."
    );
    check(&[("upper(var.u)", "string")]);
}

#[test]
fn a_dynamic_type_takes_part_in_unification() {
    check(&[
        (r#"coalesce(null, {a = 1}, "s")"#, "object({ a: number, })"),
        ("coalesce(null, 1, true)", "number"),
        (r#"coalesce(null, [1], ["a"])"#, "tuple([ number, ])"),
        (
            r#"coalesce(null, {a = 1}, {b = "x"})"#,
            "object({ a: number, })",
        ),
        // Beside an object a dynamic attribute stays dynamic.
        (
            "true ? {a = null} : {a = {b = 1}}",
            "object({ a: dynamic, })",
        ),
        // Objects and maps (empty ones of no element type too) unify as maps.
        ("true ? {a = 1} : tomap({})", "map(number)"),
        ("true ? {a = 1} : {b = 2}", "map(number)"),
        ("true ? {a = 1} : tomap({b = 2})", "map(number)"),
        ("tomap({x = null, y = tomap({a = 1})})", "map(map(number))"),
        (
            r#"tomap({x = null, z = {b = "x"}})"#,
            "map( object({ b: string, }), )",
        ),
    ]);
    assert_eq!(eval("coalesce(null, 1, true)"), Ok(Value::int(1)));
    // Objects of different attributes unify as a map of their attributes'
    // type, `dynamic` here; the map is refused only when a value of
    // attributes of different types is converted to it.
    let objects =
        r#"{b = 3, "c d" = tolist([false, true, true]), key = null} : {key = 7, "ü" = 2E2}"#;
    check(&[(&format!("false ? {objects}"), "map(number)")]);
    assert_eq!(
        eval(&format!("true ? {objects}")).unwrap_err().1,
        "The true result value has the wrong type: attribute types must all match for \
         conversion to map."
    );
    for src in [
        "tolist([null, [\"a\"]])",
        "tolist([null, {a = 1}, {b = 2}])",
        "tolist([null, 1, true])",
    ] {
        assert_eq!(
            eval(src).unwrap_err().1,
            "Invalid value for \"v\" parameter: cannot convert tuple to list of any single type.",
            "{src}"
        );
    }
}

#[test]
fn lookup_types_its_result_before_it_looks() {
    assert_eq!(
        eval(r#"lookup({a = 1}, "b")"#).unwrap_err().1,
        "Invalid value for \"inputMap\" parameter: the given object has no attribute \"b\"."
    );
    assert_eq!(
        eval(r#"lookup(tobool(var.u) ? {a = 1} : {a = 2}, "b")"#)
            .unwrap_err()
            .1,
        "Invalid value for \"inputMap\" parameter: the given object has no attribute \"b\"."
    );
    // A map's default must convert to its element type, key known or not.
    assert_eq!(
        eval(r#"lookup(tomap({a = 1}), tostring(var.u), {})"#)
            .unwrap_err()
            .1,
        "Invalid value for \"default\" parameter: the default value must have the same type \
         as the map elements."
    );
    check(&[
        (r#"lookup(tomap({a = 1}), tostring(var.u), "2")"#, "number"),
        (r#"lookup({a = 1}, tostring(var.u), "2")"#, "dynamic"),
        (
            r#"lookup(tobool(var.u) ? {a = 1} : {a = 2}, "a", "x")"#,
            "number",
        ),
        (r#"lookup(tomap({a = 1}), "a", var.u)"#, "number"),
        (r#"lookup({a = 1}, "b", "x")"#, "string"),
    ]);
    assert_eq!(
        eval(r#"lookup({a = 1}, "b", null)"#).map(|v| v.is_null()),
        Ok(true)
    );
}

#[test]
fn unknowns_carry_the_types_hcl_and_cty_give_them() {
    check(&[
        // A splat over an unknown list is a list of what its items give,
        // over an unknown tuple a tuple; over an unknown of no type, none.
        (r#"split(",", tostring(var.u))[*]"#, "list(string)"),
        (
            "(tobool(var.u) ? [{a = 1}] : [{a = 2}])[*].a",
            "tuple([ number, ])",
        ),
        ("tolist(var.u)[*].x", "list(dynamic)"),
        (r#"toset(split(",", tostring(var.u)))[*]"#, "list(dynamic)"),
        ("var.u[*]", "dynamic"),
        // So is one over an empty list.
        ("compact([])[*]", "list(string)"),
        ("tolist([])[*].a", "list(dynamic)"),
        // A `for` over an unknown is of no type.
        (r#"[for x in split(",", tostring(var.u)) : x]"#, "dynamic"),
        // Elements of unknown structures.
        (
            "(tobool(var.u) ? [{a = 1}] : [{a = 2}])[0]",
            "object({ a: number, })",
        ),
        (r#"(tobool(var.u) ? {a = 1} : {a = 2})["a"]"#, "dynamic"),
        ("(tobool(var.u) ? {a = 1} : {a = 2}).a", "number"),
        // Functions type unknown results from their arguments' types.
        (r#"setunion(formatlist("%s", null), ["a"])"#, "set(string)"),
        (
            r#"concat(split(",", tostring(var.u)), tolist(["a"]))"#,
            "list(string)",
        ),
        (r#"concat(split(",", tostring(var.u)), ["a"])"#, "dynamic"),
    ]);
    for src in [r#"split(",", tostring(var.u))[*].a"#, "compact([])[*].a"] {
        assert_eq!(
            eval(src).unwrap_err().1,
            "Can't access attributes on a primitive-typed value (string).",
            "{src}"
        );
    }
}

#[test]
fn a_failing_conditional_result_has_the_type_hcl_gives_it() {
    let mismatch = |t: &str, f: &str| {
        format!(
            "The true and false result expressions must have consistent types. The 'true' \
             value is {t}, but the 'false' value is {f}."
        )
    };
    for (src, t, f) in [
        (r#"false ? "a" : "text"[*].b"#, "string", "tuple"),
        ("true ? [1] : -true", "tuple", "number"),
        (
            r#"false ? true : {a = parseint("zz", 16)}"#,
            "bool",
            "object",
        ),
        (
            "true ? abs(0) : toset([{a = 1}, {a = 2}])[*].b",
            "number",
            "list of dynamic",
        ),
        (r#"true ? 1 : [1, "a" + 1]"#, "number", "tuple"),
    ] {
        assert_eq!(
            eval(src).unwrap_err(),
            (
                "Inconsistent conditional result types".to_string(),
                mismatch(t, f)
            ),
            "{src}"
        );
    }
    // Where the types unify, the branch not taken does not matter.
    assert_eq!(eval(r#"true ? 1 : "${1 + true}""#), Ok(Value::int(1)));
    assert_eq!(eval("true ? 1 : {(null) = 1}"), Ok(Value::int(1)));
    check(&[
        (
            r#"true ? [for v in transpose({}) : "x"] : "text"[*].a"#,
            "list(dynamic)",
        ),
        ("true ? [] : [for x in [1] : x + true]", "list(number)"),
    ]);
}
