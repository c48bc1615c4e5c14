//! Golden tests for `yamlencode` and `yamldecode`: Terraform's documented
//! examples, go-cty-yaml's own cases, and the emitter's and resolver's
//! finer rules (quoting, folding, literal blocks, YAML 1.1 words).

use super::super::text_test_support::{check, check_errors, list, n, obj, s, strs};
use fleetform_shared::value::Value;

#[test]
fn yamlencode_documented_examples() {
    check(&[
        (
            "yamlencode({\"a\":\"b\", \"c\":\"d\"})",
            s("\"a\": \"b\"\n\"c\": \"d\"\n"),
        ),
        (
            "yamlencode({\"foo\":[1, 2, 3], \"bar\": \"baz\"})",
            s("\"bar\": \"baz\"\n\"foo\":\n- 1\n- 2\n- 3\n"),
        ),
        (
            "yamlencode({\"foo\":[1, {\"a\":\"b\",\"c\":\"d\"}, 3], \"bar\": \"baz\"})",
            s("\"bar\": \"baz\"\n\"foo\":\n- 1\n- \"a\": \"b\"\n  \"c\": \"d\"\n- 3\n"),
        ),
    ]);
}

#[test]
fn yamlencode_scalars_and_empty_collections() {
    check(&[
        ("yamlencode(\"true\")", s("\"true\"\n")),
        ("yamlencode(\"\")", s("\"\"\n")),
        ("yamlencode(\"hello\\nworld\")", s("|-\n  hello\n  world\n")),
        ("yamlencode({})", s("{}\n")),
        ("yamlencode([])", s("[]\n")),
        ("yamlencode([\"b\"])", s("- \"b\"\n")),
        // A document ending in a plain scalar is closed with "...".
        ("yamlencode(null)", s("null\n...\n")),
        ("yamlencode(1.5)", s("1.5\n...\n")),
        (
            "yamlencode(12345678901234567890123)",
            s("12345678901234567890123\n...\n"),
        ),
        ("yamlencode(true)", s("true\n...\n")),
        ("yamlencode(var.partial)", Value::unknown()),
    ]);
}

#[test]
fn yamlencode_nesting_and_indentation() {
    check(&[
        (
            "yamlencode({a = {b = [1, [2, 3]], c = {}}, d = [], e = null})",
            s("\"a\":\n  \"b\":\n  - 1\n  - - 2\n    - 3\n  \"c\": {}\n\"d\": []\n\"e\": null\n"),
        ),
        ("yamlencode([[], {}, [{}]])", s("- []\n- {}\n- - {}\n")),
    ]);
}

#[test]
fn yamlencode_string_styles() {
    check(&[
        // Line breaks make literal blocks, with chomping indicators.
        ("yamlencode({a = \"x\\ny\\n\"})", s("\"a\": |\n  x\n  y\n")),
        (
            "yamlencode({a = \"x\\n\\n\"})",
            s("\"a\": |+\n  x\n\n...\n"),
        ),
        ("yamlencode([\"x\\ny\"])", s("- |-\n  x\n  y\n")),
        // A leading space needs an indentation indicator.
        ("yamlencode(\" a\\nb\")", s("|2-\n   a\n  b\n")),
        // Where a block cannot hold the text, it is double-quoted.
        ("yamlencode(\"a \\nb\")", s("\"a \\nb\"\n")),
        ("yamlencode(\"a\\tb\\nc\")", s("\"a\\tb\\nc\"\n")),
        // Escapes: quotes, controls, and characters beyond the BMP.
        (
            "yamlencode(\"say \\\"hi\\\" \\\\ \\u0007\")",
            s("\"say \\\"hi\\\" \\\\ \\a\"\n"),
        ),
        ("yamlencode(\"🤔 é\")", s("\"\\U0001F914 é\"\n")),
        (
            "yamlencode(\"\\u0085\\u00a0\\u2028\")",
            s("\"\\N\u{a0}\\L\"\n"),
        ),
        // Keys are quoted the same way.
        ("yamlencode({\"a\\\"b\" = 1})", s("\"a\\\"b\": 1\n")),
        // A key with a line break is written after "? ".
        ("yamlencode({\"a\\nb\" = 1})", s("? |-\n  a\n  b\n: 1\n")),
    ]);
}

#[test]
fn yamlencode_folds_long_quoted_lines_at_column_80() {
    let long = "a".repeat(85);
    check(&[
        (
            &format!("yamlencode({{a = \"{long} b c\"}})"),
            s(&format!("\"a\": \"{long}\n  b c\"\n")),
        ),
        (
            &format!("yamlencode(\"{long}  b\")"),
            s(&format!("\"{long}\n  \\ b\"\n")),
        ),
    ]);
    // Keys are never folded; keys over 128 bytes use "? ".
    let key = "k".repeat(130);
    check(&[(
        &format!("yamlencode({{\"{key}\" = 1}})"),
        s(&format!("? \"{key}\"\n: 1\n")),
    )]);
}

#[test]
fn yamldecode_documented_examples() {
    check(&[
        (
            "yamldecode(\"hello: world\")",
            obj(&[("hello", s("world"))]),
        ),
        ("yamldecode(\"true\")", Value::Bool(true)),
        (
            "yamldecode(\"{a: &foo [1, 2, 3], b: *foo}\")",
            obj(&[
                ("a", list(&[n("1"), n("2"), n("3")])),
                ("b", list(&[n("1"), n("2"), n("3")])),
            ]),
        ),
    ]);
    check_errors(&[
        (
            "yamldecode(\"{a: &foo [1, *foo, 3]}\")",
            "Call to function \"yamldecode\" failed: cannot refer to anchor \"foo\" from \
             inside its own definition.",
        ),
        (
            "yamldecode(\"{a: !not-supported foo}\")",
            "Call to function \"yamldecode\" failed: unsupported tag \"!not-supported\".",
        ),
    ]);
}

#[test]
fn yamldecode_resolves_scalars_as_terraform_1_9() {
    check(&[
        (
            "yamldecode(\"[yes, no, on, off, y, n, True, ~, null, Null, '']\")",
            list(&[
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(true),
                Value::null(),
                Value::null(),
                Value::null(),
                s(""),
            ]),
        ),
        (
            "yamldecode(\"[1, -2, 1.5, 0x1F, 0o17, 1_000, .5, 1e3, +1, 0017, -0x10]\")",
            list(&[
                n("1"),
                n("-2"),
                n("1.5"),
                n("31"),
                n("15"),
                n("1000"),
                n("0.5"),
                n("1000"),
                n("1"),
                n("17"),
                n("-16"),
            ]),
        ),
        (
            "yamldecode(\"['1', \\\"true\\\", 1.2.3, 0b101, hello, 12:30]\")",
            strs(&["1", "true", "1.2.3", "0b101", "hello", "12:30"]),
        ),
        (
            "yamldecode(\"[2001-12-14, 2001-12-14t21:59:43.10-05:00, 2001-12-14 21:59:43.10, 2002-12-14T00:00:00+00:00, 2001-02-30]\")",
            strs(&[
                "2001-12-14T00:00:00Z",
                "2001-12-14T21:59:43-05:00",
                "2001-12-14T21:59:43Z",
                "2002-12-14T00:00:00Z",
                "2001-02-30",
            ]),
        ),
        (
            "yamldecode(\"[!!str 12, !!int 12, !!float 1, !!bool yes, !!null x, !!binary aGk=, !!int '12']\")",
            list(&[
                s("12"),
                n("12"),
                n("1"),
                Value::Bool(true),
                Value::null(),
                s("aGk="),
                s("12"),
            ]),
        ),
        (
            "yamldecode(\"a: |\\n  x\\n  y\\n\")",
            obj(&[("a", s("x\ny\n"))]),
        ),
        ("yamldecode(\"---\")", Value::null()),
        ("yamldecode(\"~\")", Value::null()),
        ("yamldecode(var.unknown)", Value::unknown()),
    ]);
}

#[test]
fn yamldecode_keys_and_merges() {
    check(&[
        (
            "yamldecode(\"{1.50: a, yes: b, 2001-01-01: c, x: 1, x: 2}\")",
            obj(&[
                ("1.5", s("a")),
                ("2001-01-01T00:00:00Z", s("c")),
                ("true", s("b")),
                ("x", n("2")),
            ]),
        ),
        (
            "yamldecode(\"{a: &x {k: 1, j: 2}, b: {<<: *x, j: 3}}\")",
            obj(&[
                ("a", obj(&[("j", n("2")), ("k", n("1"))])),
                ("b", obj(&[("j", n("3")), ("k", n("1"))])),
            ]),
        ),
        ("yamldecode(\"[<<]\")", strs(&["<<"])),
    ]);
}

#[test]
fn yamldecode_errors() {
    let call = |m: &str| format!("Call to function \"yamldecode\" failed: {m}.");
    check_errors(&[
        (
            "yamldecode(\"\")",
            &call("on line 1, column 1: missing start of document"),
        ),
        (
            "yamldecode(\"# only a comment\")",
            &call("on line 1, column 1: missing start of document"),
        ),
        (
            "yamldecode(\"a: 1\\n---\\nb: 2\")",
            &call("on line 1, column 1: unexpected extra content after value"),
        ),
        (
            "yamldecode(\".nan\")",
            &call("floating point NaN is not supported"),
        ),
        (
            "yamldecode(\"+\")",
            &call("cannot parse \"+\" as tag:yaml.org,2002:int"),
        ),
        (
            "yamldecode(\"!!bool foo\")",
            &call("cannot parse \"foo\" as tag:yaml.org,2002:bool"),
        ),
        (
            "yamldecode(\"{[a]: 1}\")",
            &call("only strings are allowed as mapping keys"),
        ),
        (
            "yamldecode(\"{~: 1}\")",
            &call("mapping key cannot be null"),
        ),
        (
            "yamldecode(\"{<<: [1]}\")",
            &call("cannot merge tuple into mapping"),
        ),
        (
            "yamldecode(\"!!map [1]\")",
            &call("can't interpret sequence as tag:yaml.org,2002:map"),
        ),
        (
            "yamldecode(\"a: 1\\nb: !x 2\")",
            &call("on line 1, column 4: unsupported tag \"!x\""),
        ),
        (
            "yamldecode(\"a: b: c\")",
            &call("mapping values are not allowed in this context"),
        ),
        (
            "yamldecode(var.nothing)",
            "Invalid value for \"src\" parameter: argument must not be null.",
        ),
    ]);
}
