//! Golden tests for `regex`, `regexall` and `replace` with a `/pattern/`:
//! Terraform's documented examples and Go's RE2 behaviours.

use super::super::text_test_support::{check, check_errors, list, obj, s, strs};
use fleetform_shared::value::Value;

#[test]
fn documented_examples() {
    check(&[
        (
            "regex(\"[a-z]+\", \"53453453.345345aaabbbccc23454\")",
            s("aaabbbccc"),
        ),
        (
            "regex(\"(\\\\d\\\\d\\\\d\\\\d)-(\\\\d\\\\d)-(\\\\d\\\\d)\", \"2019-02-01\")",
            strs(&["2019", "02", "01"]),
        ),
        (
            "regex(\"^(?:(?P<scheme>[^:/?#]+):)?(?://(?P<authority>[^/?#]*))?\", \"https://terraform.io/docs/\")",
            obj(&[("authority", s("terraform.io")), ("scheme", s("https"))]),
        ),
        (
            "regexall(\"[a-z]+\", \"1234abcd5678efgh9\")",
            strs(&["abcd", "efgh"]),
        ),
        (
            "length(regexall(\"[a-z]+\", \"1234abcd5678efgh9\"))",
            Value::int(2),
        ),
        (
            "length(regexall(\"[a-z]+\", \"123456789\")) > 0",
            Value::Bool(false),
        ),
    ]);
    check_errors(&[(
        "regex(\"[a-z]+\", \"53453453.34534523454\")",
        "Call to function \"regex\" failed: pattern did not match any part of the given string.",
    )]);
}

#[test]
fn groups_that_do_not_take_part_are_null() {
    check(&[
        (
            "regex(\"(\\\\d+)|(x)\", \"x\")",
            list(&[Value::null(), s("x")]),
        ),
        (
            "regex(\"(?P<n>\\\\d+)|(?P<w>x)\", \"x\")",
            obj(&[("n", Value::null()), ("w", s("x"))]),
        ),
        (
            "regexall(\"(\\\\w)=(\\\\d)\", \"a=1 b=2\")",
            list(&[strs(&["a", "1"]), strs(&["b", "2"])]),
        ),
        // Go's `(?<name>)` form is accepted too.
        (
            "regex(\"(?<y>\\\\d{4})\", \"in 2024\")",
            obj(&[("y", s("2024"))]),
        ),
    ]);
}

#[test]
fn empty_matches_advance_as_in_go() {
    check(&[
        // An empty match right after a match is skipped.
        ("regexall(\"a*\", \"baaab\")", strs(&["", "aaa", ""])),
        ("replace(\"baaab\", \"/a*/\", \"-\")", s("-b-b-")),
        ("replace(\"héé\", \"/x*/\", \".\")", s(".h.é.é.")),
        ("regexall(\"\", \"ab\")", strs(&["", "", ""])),
    ]);
}

#[test]
fn go_syntax_differences_from_rust() {
    check(&[
        // \d, \w, \s and \b are ASCII-only in Go.
        ("regex(\"\\\\d+\", \"٣4\")", s("4")),
        ("regex(\"\\\\w+\", \"héllo\")", s("h")),
        ("regexall(\"\\\\b\\\\w\", \"a é b\")", strs(&["a", "b"])),
        ("regex(\"[\\\\d]+\", \"x٣12\")", s("12")),
        ("regex(\"\\\\D+\", \"٣4\")", s("٣")),
        // \Q…\E quotes a literal.
        ("regex(\"\\\\Q1+1\\\\E\", \"a1+1b\")", s("1+1")),
        // A brace that is no repeat count is literal.
        ("regex(\"a{\", \"xa{\")", s("a{")),
        ("regex(\"a{2}\", \"aaa\")", s("aa")),
        ("regex(\"a{,2}\", \"a{,2}\")", s("a{,2}")),
        // `[` inside a class is literal; POSIX classes still work.
        ("regex(\"[[]+\", \"a[[b\")", s("[[")),
        ("regex(\"[[:digit:]]+\", \"ab12\")", s("12")),
        ("regex(\"[a&&b]+\", \"x&&ab\")", s("&&ab")),
        // `\<` and `\>` are literal angle brackets.
        ("regex(\"\\\\<b\\\\>\", \"a<b>\")", s("<b>")),
        ("regex(\"(?i)HELLO\", \"say hello\")", s("hello")),
    ]);
}

#[test]
fn replace_expands_like_gos_regexp() {
    check(&[
        (
            "replace(\"hello world\", \"/(\\\\w+) (\\\\w+)/\", \"$2 $1\")",
            s("world hello"),
        ),
        (
            "replace(\"2019-02-01\", \"/(?P<y>\\\\d+)-(?P<m>\\\\d+)-(?P<d>\\\\d+)/\", \"$${d}.$${m}.$${y}\")",
            s("01.02.2019"),
        ),
        // `$1x` names a group "1x", which does not exist.
        ("replace(\"ab\", \"/(a)/\", \"$1x\")", s("b")),
        ("replace(\"ab\", \"/(a)/\", \"$${1}x\")", s("axb")),
        ("replace(\"a\", \"/a/\", \"$$\")", s("$")),
        ("replace(\"a\", \"/a/\", \"$\")", s("$")),
        ("replace(\"a\", \"/a/\", \"$${1\")", s("${1")),
        ("replace(\"aaa\", \"/a/\", \"b\")", s("bbb")),
    ]);
}

#[test]
fn pattern_errors() {
    check_errors(&[
        (
            "regex(\"(a\", \"a\")",
            "Invalid value for \"pattern\" parameter: invalid regexp pattern: missing closing ) in (a.",
        ),
        (
            "regexall(\"a)\", \"a\")",
            "Invalid value for \"pattern\" parameter: invalid regexp pattern: unexpected ) in a).",
        ),
        (
            "regex(\"(a)(?P<x>b)\", \"ab\")",
            "Invalid value for \"pattern\" parameter: invalid regexp pattern: cannot mix both named and unnamed capture groups.",
        ),
        (
            "regex(\"*\", \"a\")",
            "Invalid value for \"pattern\" parameter: invalid regexp pattern: missing argument to repetition operator in *.",
        ),
        (
            "replace(\"a\", \"/(a/\", \"b\")",
            "Call to function \"replace\" failed: error parsing regexp: missing closing ): `(a`.",
        ),
        (
            "regex(var.nothing, \"a\")",
            "Invalid value for \"pattern\" parameter: argument must not be null.",
        ),
    ]);
}

#[test]
fn unknowns() {
    check(&[
        ("regex(\"a\", var.unknown)", Value::unknown()),
        ("regexall(var.unknown, \"a\")", Value::unknown()),
        ("replace(\"a\", \"/a/\", var.unknown)", Value::unknown()),
    ]);
}
