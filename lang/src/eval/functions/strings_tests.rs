//! Golden tests for the string functions: Terraform's documented examples,
//! the Go behaviours they inherit, unknown and null arguments, error texts.

use super::super::text_test_support::{check, check_errors, list, s, strs};
use fleetform_shared::value::Value;

#[test]
fn case_functions_follow_go_simple_case_mapping() {
    check(&[
        ("upper(\"hello\")", s("HELLO")),
        ("upper(\"алло!\")", s("АЛЛО!")),
        // Go maps one character to one character: ß has no single
        // uppercase letter, and İ lowers to a plain i.
        ("upper(\"straße\")", s("STRAßE")),
        ("lower(\"HELLO\")", s("hello")),
        ("lower(\"АЛЛО!\")", s("алло!")),
        ("lower(\"İ\")", s("i")),
        ("lower(\"ΟΔΟΣ\")", s("οδοσ")),
        ("title(\"hello world\")", s("Hello World")),
        // Underscores and digits join words; ASCII punctuation splits them.
        (
            "title(\"hello_world-foo.bar 1abc\")",
            s("Hello_world-Foo.Bar 1abc"),
        ),
        ("title(\"élan été\")", s("Élan Été")),
        // Beyond ASCII only spaces separate words.
        ("title(\"a«b\")", s("A«b")),
        // Digraphs take their title form, not their upper case.
        ("title(\"ǆemal\")", s("ǅemal")),
        ("upper(var.unknown)", Value::unknown()),
    ]);
    check_errors(&[(
        "upper(var.nothing)",
        "Invalid value for \"str\" parameter: argument must not be null.",
    )]);
}

#[test]
fn substr_counts_grapheme_clusters_with_ctys_offsets() {
    check(&[
        ("substr(\"hello world\", 1, 4)", s("ello")),
        ("substr(\"🤔🤷\", 0, 1)", s("🤔")),
        ("substr(\"hello world\", -5, -1)", s("world")),
        ("substr(\"hello world\", 6, 10)", s("world")),
        ("substr(\"e\\u0301tude\", 0, 1)", s("e\u{301}")),
        ("substr(\"hello\", 2, 0)", s("")),
        ("substr(\"hello\", 5, 1)", s("")),
        ("substr(\"hello\", 10, 2)", s("")),
        // An offset before the start begins at the start.
        ("substr(\"hello\", -10, 2)", s("he")),
        // With a negative offset a zero length takes the rest (cty's scan).
        ("substr(\"hello\", -1, 0)", s("o")),
        ("substr(\"\", 0, 3)", s("")),
        ("substr(var.unknown, 0, 1)", Value::unknown()),
    ]);
    check_errors(&[(
        "substr(\"hello\", 1.5, 1)",
        "Call to function \"substr\" failed: value must be a whole number, between \
         -9223372036854775808 and 9223372036854775807.",
    )]);
}

#[test]
fn split_and_join() {
    check(&[
        (
            "split(\",\", \"foo,bar,baz\")",
            strs(&["foo", "bar", "baz"]),
        ),
        ("split(\",\", \"foo\")", strs(&["foo"])),
        ("split(\",\", \"\")", strs(&[""])),
        ("split(\",\", \",a,\")", strs(&["", "a", ""])),
        // Go splits between characters for an empty separator.
        ("split(\"\", \"aé\")", strs(&["a", "é"])),
        ("split(\"\", \"\")", list(&[])),
        ("join(\"-\", [\"foo\", \"bar\", \"baz\"])", s("foo-bar-baz")),
        ("join(\", \", [\"foo\"])", s("foo")),
        ("join(\",\", [])", s("")),
        ("join(\"-\", [\"a\"], [\"b\", \"c\"])", s("a-b-c")),
        ("join(\"-\", [1, true])", s("1-true")),
        ("join(\",\", var.partial)", Value::unknown()),
        ("split(var.unknown, \"a\")", Value::unknown()),
    ]);
    check_errors(&[
        (
            "join(\",\")",
            "Call to function \"join\" failed: at least one list is required.",
        ),
        (
            "join(\",\", [\"a\", null])",
            "Invalid value for \"lists\" parameter: element 1 is null; cannot concatenate null values.",
        ),
        (
            "join(\",\", [\"a\"], [null])",
            "Invalid value for \"lists\" parameter: element 0 of list 2 is null; cannot concatenate null values.",
        ),
        (
            "join(\",\", var.nothing)",
            "Invalid value for \"lists\" parameter: argument must not be null.",
        ),
    ]);
}

#[test]
fn trimming_and_searching() {
    check(&[
        ("trim(\"?!hello?!\", \"!?\")", s("hello")),
        ("trim(\"foobar\", \"far\")", s("oob")),
        ("trim(\"   hello! world.!  \", \"! \")", s("hello! world.")),
        ("trimprefix(\"helloworld\", \"hello\")", s("world")),
        ("trimprefix(\"helloworld\", \"cat\")", s("helloworld")),
        ("trimsuffix(\"helloworld\", \"world\")", s("hello")),
        ("trimspace(\"  hello\\n\\n\")", s("hello")),
        ("trimspace(\"\\u00a0x\\u3000\")", s("x")),
        ("chomp(\"hello\\n\")", s("hello")),
        ("chomp(\"hello\\r\\n\")", s("hello")),
        ("chomp(\"hello\\n\\n\")", s("hello")),
        ("chomp(\"hello\\n\\r\\n\\r\")", s("hello")),
        ("strcontains(\"hello world\", \"wor\")", Value::Bool(true)),
        ("strcontains(\"hello world\", \"wod\")", Value::Bool(false)),
        ("startswith(\"hello world\", \"hello\")", Value::Bool(true)),
        ("startswith(\"hello world\", \"world\")", Value::Bool(false)),
        ("endswith(\"hello world\", \"world\")", Value::Bool(true)),
        ("endswith(\"hello world\", \"hello\")", Value::Bool(false)),
        ("strcontains(var.unknown, \"a\")", Value::unknown()),
        ("strrev(\"hello\")", s("olleh")),
        ("strrev(\"a ☃\")", s("☃ a")),
        // A combining accent stays on its letter.
        ("strrev(\"e\\u0301x\")", s("xe\u{301}")),
    ]);
    check_errors(&[(
        "strcontains(var.nothing, \"a\")",
        "Invalid value for \"str\" parameter: argument must not be null.",
    )]);
}

#[test]
fn indent_and_replace() {
    check(&[
        (
            "\"  items: ${indent(2, \"[\\n  foo,\\n  bar,\\n]\\n\")}\"",
            s("  items: [\n    foo,\n    bar,\n  ]\n  "),
        ),
        ("indent(4, \"one line\")", s("one line")),
        ("replace(\"1 + 2 + 3\", \"+\", \"-\")", s("1 - 2 - 3")),
        (
            "replace(\"hello world\", \"/w.*d/\", \"everybody\")",
            s("hello everybody"),
        ),
        ("replace(\"abc\", \"\", \"-\")", s("-a-b-c-")),
        // A lone slash is a plain search string.
        ("replace(\"a/b\", \"/\", \"|\")", s("a|b")),
        ("replace(var.unknown, \"a\", \"b\")", Value::unknown()),
    ]);
    check_errors(&[(
        "indent(-1, \"a\\nb\")",
        "Call to function \"indent\" failed: panic in function implementation: strings: negative Repeat count.",
    )]);
}

#[test]
fn conversions() {
    check(&[
        ("tostring(\"hello\")", s("hello")),
        ("tostring(1)", s("1")),
        ("tostring(true)", s("true")),
        ("tostring(null)", Value::null()),
        ("tobool(true)", Value::Bool(true)),
        ("tobool(\"true\")", Value::Bool(true)),
        ("tobool(\"0\")", Value::Bool(false)),
        ("tobool(null)", Value::null()),
        ("tobool(var.unknown)", Value::unknown()),
    ]);
    check_errors(&[
        (
            "tostring([])",
            "Invalid value for \"v\" parameter: cannot convert tuple to string.",
        ),
        (
            "tobool(\"no\")",
            "Invalid value for \"v\" parameter: cannot convert \"no\" to bool; \
             only the strings \"true\" or \"false\" are allowed.",
        ),
        (
            "tobool(1)",
            "Invalid value for \"v\" parameter: cannot convert number to bool.",
        ),
    ]);
}
