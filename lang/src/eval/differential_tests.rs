//! Divergences from Terraform 1.11 that the differential expression test
//! (tests/tests/expr_differential.rs) found, each pinned to what Terraform
//! printed for it: a result's type, or an error's summary and detail.

use super::*;

fn eval(src: &str) -> Result<Value, (String, String)> {
    let e = parse_expression("diff.tf", src).expect("expression parses");
    evaluate(&e, &EmptyScope).map_err(|d| (d.0[0].summary.clone(), d.0[0].detail.clone()))
}

fn type_of(src: &str) -> String {
    eval(src)
        .unwrap_or_else(|e| panic!("{src}: {e:?}"))
        .ty()
        .to_string()
}

fn error(src: &str) -> (String, String) {
    eval(src).expect_err(src)
}

#[test]
fn jsondecode_syntax_errors_are_call_failures_in_go_words() {
    for (src, detail) in [
        (
            r#"jsondecode("a,b")"#,
            "invalid character 'a' looking for beginning of value",
        ),
        (r#"jsondecode("")"#, "EOF"),
        (r#"jsondecode("[1,")"#, "EOF"),
        (
            r#"jsondecode("2024-02-29")"#,
            "extraneous data after JSON object",
        ),
    ] {
        assert_eq!(
            error(src),
            (
                "Error in function call".to_string(),
                format!(r#"Call to function "jsondecode" failed: {detail}."#)
            ),
            "{src}"
        );
    }
}

#[test]
fn csvdecode_of_a_header_alone_is_a_list_of_objects() {
    assert_eq!(
        type_of(r#"csvdecode("a,b")"#),
        "list(object({a=string, b=string}))"
    );
}

#[test]
fn matchkeys_of_a_tuple_is_a_list_of_its_common_type() {
    assert_eq!(type_of(r#"matchkeys(["x"], ["a"], ["b"])"#), "list(string)");
}

#[test]
fn sets_have_no_order_for_index_concat_and_zipmap() {
    assert_eq!(
        error("index(toset([1]), 1)").1,
        r#"Call to function "index" failed: argument must be a list or tuple."#
    );
    assert_eq!(
        error(r#"zipmap(["a"], toset([1]))"#).1,
        r#"Call to function "zipmap" failed: values argument must be a list or tuple value."#
    );
    assert!(
        error("concat(toset([true]))")
            .1
            .ends_with("all arguments must be lists or tuples; got set of bool."),
        "{:?}",
        error("concat(toset([true]))")
    );
}

#[test]
fn slice_refuses_a_set_before_its_indices() {
    assert!(
        error("slice(toset([1]), 0.5, 9)")
            .1
            .contains("cannot slice a set, because its elements do not have indices"),
        "{:?}",
        error("slice(toset([1]), 0.5, 9)")
    );
}

#[test]
fn lookup_default_must_convert_to_the_map_element_type() {
    let (_, detail) = error(r#"lookup(tomap({a = 1}), "a", {})"#);
    assert!(
        detail.ends_with("the default value must have the same type as the map elements."),
        "{detail}"
    );
    // A convertible default takes the element type.
    assert_eq!(type_of(r#"lookup(tomap({a = 1}), "b", "2")"#), "number");
}

#[test]
fn transpose_of_a_map_of_scalars_fails_on_its_element_type() {
    assert!(
        error("transpose(tomap({a = 2}))")
            .1
            .ends_with("incorrect map element type: list of string required."),
        "{:?}",
        error("transpose(tomap({a = 2}))")
    );
}

#[test]
fn a_failed_template_not_taken_still_makes_the_conditional_a_string() {
    let v = eval(r#"false ? "a ${[]}" : 1e3"#).expect("the false branch is taken");
    assert_eq!(
        (v.ty().to_string(), v),
        ("string".to_string(), Value::from("1000"))
    );
    assert_eq!(
        error(r#"false ? "a ${null}" : [1]"#).0,
        "Inconsistent conditional result types"
    );
}

#[test]
fn a_splat_over_a_list_or_set_is_a_list() {
    assert_eq!(
        type_of(r#"tolist([{a = "p"}, {a = "q"}])[*].a"#),
        "list(string)"
    );
    assert_eq!(type_of("toset([{a = 1}])[*].a"), "list(number)");
    assert_eq!(type_of(r#"[{a = "p"}][*].a"#), "tuple([string])");
}

#[test]
fn signum_wants_a_64_bit_whole_number() {
    assert_eq!(
        error("signum(12345678901234567890)").1,
        r#"Call to function "signum" failed: value must be a whole number, between -9223372036854775808 and 9223372036854775807."#
    );
    assert_eq!(eval("signum(-3)").unwrap(), Value::int(-1));
}

#[test]
fn contains_refuses_a_null_value() {
    assert!(
        error("contains([1], null)")
            .1
            .ends_with("argument must not be null.")
    );
}

#[test]
fn set_functions_unify_every_argument_element_type() {
    assert_eq!(type_of("setsubtract([], [-1, 3])"), "set(number)");
    assert_eq!(
        eval(r#"setsubtract([5], toset(["a"]))"#)
            .unwrap()
            .ty()
            .to_string(),
        "set(string)"
    );
}

#[test]
fn signum_of_a_number_past_64_bits_fails_as_in_terraform() {
    // Terraform 1.11.4 printed this for `signum(-12345678901234567890)`.
    assert_eq!(
        error("signum(-12345678901234567890123)").0,
        "Error in function call"
    );
}

#[test]
fn index_refuses_a_null_value_before_the_list() {
    assert_eq!(
        error("index(toset([]), null)").0,
        "Invalid function argument"
    );
}

#[test]
fn transpose_names_a_null_list() {
    assert_eq!(
        error("transpose({a = null})").1,
        r#"Call to function "transpose" failed: input must not contain null list."#
    );
}

#[test]
fn merge_names_a_list_argument_by_its_type() {
    assert_eq!(
        error(r#"merge(tolist(["a"]))"#).1,
        r#"Call to function "merge" failed: arguments must be maps or objects, got "list of string"."#
    );
}

#[test]
fn concat_and_reverse_keep_list_element_types() {
    assert_eq!(type_of("concat(tolist([]), compact([]))"), "list(string)");
    assert_eq!(type_of("reverse(toset([]))"), "list(any)");
}

#[test]
fn a_duplicate_for_key_is_quoted_as_go_quotes() {
    let (_, detail) = error(r#"{for v in [1, 2] : "t\t\"q\"" => v}"#);
    assert!(
        detail.starts_with(r#"Two different items produced the key "t\t\"q\"" in"#),
        "{detail}"
    );
}

#[test]
fn concat_converts_items_to_the_unified_element_type() {
    let v = eval(r#"concat(range(2), sort(["a"]))"#).unwrap();
    assert_eq!(v.ty().to_string(), "list(string)");
    assert_eq!(v, eval(r#"tolist(["0", "1", "a"])"#).unwrap());
}

#[test]
fn argument_errors_name_the_parameter() {
    for (src, detail) in [
        (
            r#"slice([1, 2], "x", 1)"#,
            r#"Invalid value for "start_index" parameter: a number is required."#,
        ),
        (
            r#"join(",", ["a"], [[1]])"#,
            r#"Invalid value for "lists" parameter: element 0: string required."#,
        ),
        (
            "max(1, [1])",
            r#"Invalid value for "numbers" parameter: number required."#,
        ),
        (
            "element([1], null)",
            r#"Invalid value for "index" parameter: argument must not be null."#,
        ),
        (
            "setunion(1)",
            r#"Invalid value for "first_set" parameter: set of any single type required."#,
        ),
    ] {
        assert_eq!(
            error(src),
            ("Invalid function argument".to_string(), detail.to_string()),
            "{src}"
        );
    }
}

#[test]
fn arity_errors_name_the_missing_parameter() {
    assert_eq!(
        error("upper()"),
        (
            "Not enough function arguments".to_string(),
            r#"Function "upper" expects 1 argument(s). Missing value for "str"."#.to_string()
        )
    );
    assert_eq!(
        error("sensitive()").1,
        r#"Function "sensitive" expects 1 argument(s). Missing value for "value"."#
    );
    assert_eq!(
        error(r#"lookup({}, "a", 1, 2)"#).1,
        r#"Call to function "lookup" failed: lookup() takes two or three arguments, got 4."#
    );
    assert_eq!(
        error("range()").1,
        r#"Call to function "range" failed: must have one, two, or three arguments."#
    );
}

#[test]
fn a_typed_empty_list_keeps_its_element_type_through_list_of_any_parameters() {
    assert_eq!(
        type_of(r#"chunklist((true ? [] : ["a", "b"]), 1)"#),
        "list(list(string))"
    );
    assert_eq!(
        type_of(r#"setsubtract([1e30], setsubtract([], ["a"]))"#),
        "set(string)"
    );
}

#[test]
fn core_namespace_calls_the_builtin() {
    assert_eq!(eval(r#"core::upper("a")"#), Ok(Value::from("A")));
}

#[test]
fn messages_name_a_typed_arguments_type() {
    assert_eq!(
        error(r#"element(tomap({a = "x"}), 0)"#).1,
        r#"Call to function "element" failed: cannot read elements from map of string."#
    );
    assert_eq!(
        error(r#"element({a = "x"}, 0)"#).1,
        r#"Call to function "element" failed: cannot read elements from object."#
    );
}

#[test]
fn merge_keeps_the_element_type_of_its_maps() {
    assert_eq!(type_of("merge(transpose({}))"), "map(list(string))");
    assert_eq!(
        type_of(r#"merge(tomap(transpose({b = ["x"]})), {})"#),
        "object({x=list(string)})"
    );
}

#[test]
fn formatlist_of_a_null_argument_is_unknown() {
    assert_eq!(
        eval(r#"formatlist("<%v>", null, {})"#),
        Ok(Value::unknown())
    );
    assert_eq!(eval(r#"formatlist("%v", "a", null)"#), Ok(Value::unknown()));
}

#[test]
fn an_argument_that_fails_does_not_hide_the_others_conversion_errors() {
    let e = parse_expression("diff.tf", r#"join(lookup(1, "a"), 2)"#).unwrap();
    let details: Vec<String> = evaluate(&e, &EmptyScope)
        .unwrap_err()
        .0
        .iter()
        .map(|d| d.detail.clone())
        .collect();
    assert_eq!(details.len(), 2, "{details:?}");
    assert!(details[0].contains("\"inputMap\" parameter"), "{details:?}");
    assert_eq!(
        details[1],
        r#"Invalid value for "lists" parameter: list of string required."#
    );
}

#[test]
fn the_function_and_its_arity_are_checked_before_the_arguments() {
    assert_eq!(
        error("nosuch(1 / {})"),
        (
            "Call to unknown function".to_string(),
            r#"There is no function named "nosuch"."#.to_string()
        )
    );
    assert_eq!(error("upper(1 / {}, 2)").0, "Too many function arguments");
    assert_eq!(
        error("core::nosuch()").1,
        r#"There is no function named "core::nosuch"."#
    );
}

#[test]
fn jsondecode_names_where_in_the_grammar_the_wrong_byte_stood() {
    // Each checked with terraform 1.11.4 apply.
    for (src, detail) in [
        (
            r#"jsondecode("[1 2]")"#,
            "invalid character '2' after array element",
        ),
        (
            r#"jsondecode("{\"a\" 1}")"#,
            "invalid character '1' after object key",
        ),
        (
            r#"jsondecode("{\"a\":1 \"b\":2}")"#,
            "invalid character '\"' after object key:value pair",
        ),
        (r#"jsondecode("{1:2}")"#, "invalid character '1'"),
        (
            r#"jsondecode("{\"a\":1, 2}")"#,
            "invalid character '2' looking for beginning of object key string",
        ),
        (r#"jsondecode("[1")"#, "EOF"),
        (r#"jsondecode("{\"a\":1")"#, "EOF"),
    ] {
        assert_eq!(
            error(src).1,
            format!(r#"Call to function "jsondecode" failed: {detail}."#),
            "{src}"
        );
    }
}

#[test]
fn element_counts_a_negative_index_from_the_end_of_a_list() {
    // cty 1.16: Go's remainder, then + length when negative, for lists;
    // a tuple whose remainder is zero takes its first element.
    assert_eq!(
        eval(r#"element(tolist(["a", "b", "c"]), -1)"#).unwrap(),
        Value::string("c")
    );
    assert_eq!(
        eval(r#"element(tolist(["a", "b", "c"]), -4)"#).unwrap(),
        Value::string("c")
    );
    assert_eq!(
        eval("element(flatten(tolist([true])), -42)").unwrap(),
        Value::Bool(true)
    );
    // Terraform 1.11.4 crashes on `element(["a", "b", "c"], -1)` (a
    // tuple): an error here.
    assert!(eval(r#"element(["a", "b", "c"], -1)"#).is_err());
}

#[test]
fn sets_of_lists_and_objects_take_cty_s_hash_order_and_a_product_with_a_set_is_a_set() {
    // Each as terraform 1.11.4 output it.
    let shown = |src: &str| format!("{:?}", eval(src).unwrap_or_else(|e| panic!("{src}: {e:?}")));
    assert_eq!(
        shown("setproduct(toset([true]), [false, true, false])"),
        shown("tolist([[true, false], [true, true]])")
    );
    assert_eq!(
        type_of("setproduct(toset([true]), [false, true, false])"),
        "set(tuple([bool, bool]))"
    );
    assert_eq!(
        shown(r#"toset([{x = 10}, {x = 9}])"#),
        shown(r#"[{x = 10}, {x = 9}]"#)
    );
    assert_eq!(
        shown("toset([[9], [12345678901]])"),
        shown("[[12345678901], [9]]")
    );
}
