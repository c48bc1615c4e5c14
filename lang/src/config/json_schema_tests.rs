//! `.tf.json` diagnostics and schema decoding: syntax errors with HCL's
//! texts and positions, structure errors, and a provider schema deciding
//! whether a JSON property is an argument or a nested block.

use super::json_tests::{load, load_ok, refs, schema_of, scope};
use super::*;
use fleetform_shared::addr::Resource;
use fleetform_shared::value::Value;

/// Summary, detail, line and column of the first diagnostic.
fn first_error(files: &[(&str, &str)]) -> (String, String, usize, usize) {
    let (_, d) = load(files);
    let e = d.iter().find(|d| d.is_error()).expect("an error");
    let r = e.range.clone().expect("a range");
    (
        e.summary.clone(),
        e.detail.clone(),
        r.start.line,
        r.start.column,
    )
}

#[test]
fn json_syntax_errors_have_hcl_texts_and_positions() {
    let cases: &[(&str, &str, &str, usize, usize)] = &[
        (
            "{\n  \"locals\": {\n    \"a\": 1,\n  }\n}",
            "Trailing comma in object",
            "JSON does not permit a trailing comma after the final property in an object.",
            3,
            11,
        ),
        (
            "{\n  \"locals\" = {}\n}",
            "Missing property value colon",
            "JSON uses a colon as its name/value delimiter, not an equals sign.",
            2,
            12,
        ),
        (
            "{\"locals\": {\"a\": ture}}",
            "Invalid JSON keyword",
            "\"ture\" is not a valid JSON keyword. Did you mean \"true\"?",
            1,
            18,
        ),
        (
            "{\"locals\": {\"a\": [1 2]}}",
            "Missing attribute seperator comma",
            "A comma must appear between each value in an array.",
            1,
            21,
        ),
        (
            "{\n\"locals\": {\"a\": \"x\\qy\"}}",
            "Invalid JSON string",
            "There is a syntax error in the given JSON string.",
            2,
            20,
        ),
        (
            "{\"locals\": {\"a\": 01}}",
            "Invalid JSON number",
            "There is a syntax error in the given JSON number.",
            1,
            18,
        ),
        (
            "{\"locals\": {}",
            "Unclosed object",
            "No closing brace was found for this JSON object.",
            1,
            1,
        ),
        (
            "[1]",
            "Incorrect JSON value type",
            "A JSON object is required here, to define arguments and child blocks.",
            1,
            2,
        ),
        (
            "\"x\"",
            "Root value must be object",
            "The root value in a JSON-based configuration must be either a JSON object or a JSON array of objects.",
            1,
            1,
        ),
        (
            "{} {}",
            "Extraneous data after value",
            "Extra characters appear after the JSON value.",
            1,
            4,
        ),
        ("", "Missing value", "The JSON data ends prematurely.", 1, 1),
    ];
    for (src, summary, detail, line, column) in cases {
        assert_eq!(
            first_error(&[("main.tf.json", src)]),
            (summary.to_string(), detail.to_string(), *line, *column),
            "for {src:?}"
        );
    }
}

#[test]
fn a_syntax_error_in_an_embedded_template_points_into_the_json_string() {
    let (_, _, line, column) = first_error(&[(
        "main.tf.json",
        "{\n  \"output\": {\"o\": {\"value\": \"${1 +}\"}}\n}",
    )]);
    assert_eq!((line, column), (2, 35));
}

#[test]
fn structure_errors_are_hcl_json_errors() {
    let cases: &[(&str, &str, &str, usize, usize)] = &[
        (
            "{\"resource\": {\"null_resource\": {\"a\": 3}}}",
            "Incorrect JSON value type",
            "Either a JSON object or a JSON array is required, representing the contents of one or more \"resource\" blocks.",
            1,
            38,
        ),
        (
            "{\"resource\": {\"null_resource\": {}}}",
            "Missing block label",
            "At least one object property is required, whose name represents the resource block's name.",
            1,
            32,
        ),
        (
            "{\"varible\": {}}",
            "Extraneous JSON object property",
            "No argument or block type is named \"varible\". Did you mean \"variable\"?",
            1,
            2,
        ),
        (
            "{\"variable\": {\"v\": {\"defualt\": 1}}}",
            "Extraneous JSON object property",
            "No argument or block type is named \"defualt\". Did you mean \"default\"?",
            1,
            21,
        ),
        (
            "{\"output\": {\"o\": {\"value\": 1, \"value\": 2}}}",
            "Duplicate argument",
            "The argument \"value\" was already set at main.tf.json:1,19.",
            1,
            31,
        ),
        (
            "{\"locals\": {\"a\": 1, \"a\": 2}}",
            "Duplicate attribute definition",
            "The argument \"a\" was already set at main.tf.json:1,13.",
            1,
            21,
        ),
        (
            "{\"variable\": {\"v\": {\"type\": \"list(strin)\"}}}",
            "Invalid type specification",
            "The keyword \"strin\" is not a valid type specification.",
            1,
            35,
        ),
    ];
    for (src, summary, detail, line, column) in cases {
        assert_eq!(
            first_error(&[("main.tf.json", src)]),
            (summary.to_string(), detail.to_string(), *line, *column),
            "for {src:?}"
        );
    }
}

/// A resource body of one JSON file, before any schema.
fn json_resource_body(body: &str) -> Body {
    let src = format!("{{\"resource\": {{\"sim_object\": {{\"b\": {body}}}}}}}");
    let m = load_ok(&[("main.tf.json", &src)]);
    m.resources[&Resource::managed("sim_object", "b")]
        .body
        .clone()
}

#[test]
fn the_schema_decides_whether_a_property_is_an_argument_or_a_block() {
    // The same JSON shape, `{"port": ...}`, is an object argument for
    // `tags` and a nested block for `config`.
    let body = json_resource_body(
        r#"{
          "tags": { "port": "80", "//": "kept: an attribute's object is a value" },
          "config": { "port": "${local.count}", "//": "a comment in a block body" },
          "rule": { "port": 1 },
          "by_key": { "a": { "port": 1 }, "b": [{ "port": 2 }] }
        }"#,
    );
    assert!(body.attributes.is_empty() && body.blocks.is_empty());
    assert_eq!(body.json.len(), 4);
    let (v, d) = body.decode(&schema_of("sim_object"), &scope());
    assert!(!d.has_errors(), "{d}");
    assert_eq!(
        v.get_attr("tags"),
        &Value::object([
            ("port", Value::from("80")),
            ("//", Value::from("kept: an attribute's object is a value"))
        ])
    );
    assert_eq!(
        v.get_attr("config"),
        &Value::object([("port", Value::int(2))])
    );
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![Value::object([("port", Value::int(1))])])
    );
    assert_eq!(
        v.get_attr("by_key"),
        &Value::object([
            ("a", Value::object([("port", Value::int(1))])),
            ("b", Value::object([("port", Value::int(2))])),
        ])
    );
    assert_eq!(refs(body.references()), ["local.count"]);
}

#[test]
fn schema_decoding_reports_json_mistakes() {
    let body = json_resource_body(
        r#"{
  "tag": {},
  "name": "a",
  "name": "b",
  "rule": "port 1"
}"#,
    );
    let (_, d) = body.decode(&schema_of("sim_object"), &scope());
    let got: Vec<(String, String, usize)> = d
        .iter()
        .map(|d| {
            (
                d.summary.clone(),
                d.detail.clone(),
                d.range.as_ref().unwrap().start.line,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "Extraneous JSON object property".to_string(),
                "No argument or block type is named \"tag\". Did you mean \"tags\"?".to_string(),
                2
            ),
            (
                "Duplicate argument".to_string(),
                "The argument \"name\" was already set at main.tf.json:3,3.".to_string(),
                4
            ),
            (
                "Incorrect JSON value type".to_string(),
                "Either a JSON object or a JSON array is required, representing the contents of one or more \"rule\" blocks.".to_string(),
                5
            ),
        ]
    );
}

#[test]
fn dynamic_blocks_in_json_expand_with_their_iterator() {
    let body = json_resource_body(
        r#"{
          "dynamic": {
            "rule": {
              "for_each": "${var.sizes}",
              "iterator": "size",
              "content": { "port": "${size.value * 10}" }
            }
          }
        }"#,
    );
    assert_eq!(refs(body.references()), ["var.sizes"]);
    let (v, d) = body.decode(&schema_of("sim_object"), &scope());
    assert!(!d.has_errors(), "{d}");
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![
            Value::object([("port", Value::int(40))]),
            Value::object([("port", Value::int(10))]),
        ])
    );
}

#[test]
fn a_null_default_needs_a_nullable_variable() {
    let (line, column) = {
        let (_, _, l, c) = first_error(&[(
            "main.tf.json",
            r#"{"variable": {"v": {"nullable": false, "default": null}}}"#,
        )]);
        (l, c)
    };
    assert_eq!((line, column), (1, 51));
    let (_, d) = load(&[(
        "main.tf",
        "variable \"v\" {\n  nullable = false\n  default  = null\n}\n",
    )]);
    assert_eq!(
        d.iter().map(|d| d.detail.as_str()).collect::<Vec<_>>(),
        ["A null default value is not valid when nullable=false."]
    );
}
