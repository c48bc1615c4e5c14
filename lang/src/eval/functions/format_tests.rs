//! Golden tests for `format` and `formatlist`: Terraform's documented
//! examples and the outputs Go's `fmt` gives cty's big numbers.

use super::super::text_test_support::{check, check_errors, list, s, strs};
use fleetform_shared::value::Value;

#[test]
fn documented_examples() {
    check(&[
        ("format(\"Hello, %s!\", \"Ander\")", s("Hello, Ander!")),
        (
            "format(\"There are %d lights\", 4)",
            s("There are 4 lights"),
        ),
        ("format(\"%#v\", \"hello\")", s("\"hello\"")),
        ("format(\"%#v\", true)", s("true")),
        ("format(\"%#v\", 1)", s("1")),
        ("format(\"%#v\", {a = 1})", s("{\"a\":1}")),
        ("format(\"%#v\", [true])", s("[true]")),
        // A literal `null` has no type yet: `format` then is not called
        // (`eval::differential_tests`); a typed null formats.
        ("format(\"%#v\", tostring(null))", s("null")),
        (
            "formatlist(\"Hello, %s!\", [\"Valentina\", \"Ander\"])",
            strs(&["Hello, Valentina!", "Hello, Ander!"]),
        ),
        (
            "formatlist(\"%s, %s!\", \"Salutations\", [\"Valentina\", \"Ander\"])",
            strs(&["Salutations, Valentina!", "Salutations, Ander!"]),
        ),
    ]);
}

#[test]
fn integer_verbs_flags_width_and_precision() {
    check(&[
        (
            "format(\"%5d|%-5d|%05d\", 42, 42, 42)",
            s("   42|42   |00042"),
        ),
        ("format(\"%+d|% d|%+d\", 5, 5, -5)", s("+5| 5|-5")),
        ("format(\"%x %X %o %b\", 255, 255, 8, 5)", s("ff FF 10 101")),
        (
            "format(\"%#x %#X %#o %#b\", 255, 255, 8, 5)",
            s("0xff 0XFF 010 0b101"),
        ),
        (
            "format(\"%.3d|%8.3d|%08.3d\", 7, -7, 7)",
            s("007|    -007|     007"),
        ),
        // `-` wins over `0`, and a zero precision prints nothing for zero.
        ("format(\"%-05d|%.0d|\", 3, 0)", s("3    ||")),
        ("format(\"%d\", \"12\")", s("12")),
        ("format(\"%x\", -255)", s("-ff")),
    ]);
}

#[test]
fn float_verbs_round_like_ctys_binary_floats() {
    check(&[
        ("format(\"%f\", 3.14159)", s("3.141590")),
        (
            "format(\"%8.3f|%-8.2f|%08.2f\", 3.14159, 2.5, -2.5)",
            s("   3.142|2.50    |-0002.50"),
        ),
        ("format(\"%+.1f\", 2.25)", s("+2.2")),
        // Not binary fractions: cty's 512-bit float of 0.05 lies above it,
        // that of 0.35 below, so the "ties" round up and down.
        ("format(\"%.1f\", 0.05)", s("0.1")),
        ("format(\"%.1f\", 0.35)", s("0.3")),
        ("format(\"%.0f\", 0.5)", s("0")),
        ("format(\"%.0f\", 1.5)", s("2")),
        ("format(\"%.1f\", -0.01)", s("-0.0")),
        ("format(\"%e\", 1234.5678)", s("1.234568e+03")),
        ("format(\"%E\", 0.000123)", s("1.230000E-04")),
        ("format(\"%.2e\", 0)", s("0.00e+00")),
        ("format(\"%.1e\", 9.96)", s("1.0e+01")),
        // %g without a precision is the shortest form, in exponent form
        // from 10^6 up and below 10^-4.
        ("format(\"%g\", 100000)", s("100000")),
        ("format(\"%g\", 1234567)", s("1.234567e+06")),
        ("format(\"%g\", 0.0001)", s("0.0001")),
        ("format(\"%g\", 0.00001)", s("1e-05")),
        ("format(\"%.3g\", 1234.5678)", s("1.23e+03")),
        ("format(\"%.5g\", 1.5)", s("1.5")),
        ("format(\"%G\", 0.0000001)", s("1E-07")),
        ("format(\"%10.2f|\", 1)", s("      1.00|")),
        ("format(\"% .2f\", 1)", s(" 1.00")),
    ]);
}

#[test]
fn string_bool_and_default_verbs() {
    check(&[
        ("format(\"%v|%v|%v\", \"a\", 1.5, true)", s("a|1.5|true")),
        // %v prints numbers as %g does; %s as their full decimal.
        ("format(\"%v %s\", 1000000, 1000000)", s("1e+06 1000000")),
        ("format(\"%v\", [1, \"a\"])", s("[1,\"a\"]")),
        (
            "format(\"%v\", {b = 1, a = true})",
            s("{\"a\":true,\"b\":1}"),
        ),
        ("format(\"%v\", tonumber(null))", s("null")),
        ("format(\"%t|%5t\", true, false)", s("true|false")),
        ("format(\"%t\", \"true\")", s("true")),
        (
            "format(\"%q\", \"a\\\"b<&>\")",
            s("\"a\\\"b\\u003c\\u0026\\u003e\""),
        ),
        (
            "format(\"%.3s|%5s|%-5s|%05s|\", \"abcdef\", \"ab\", \"ab\", \"ab\")",
            s("abc|   ab|ab   |000ab|"),
        ),
        ("format(\"%.0s\", \"abc\")", s("abc")),
        // Widths count grapheme clusters.
        ("format(\"%3s|\", \"e\\u0301\")", s("  e\u{301}|")),
        ("format(\"%s %d\", true, 7)", s("true 7")),
        ("format(\"%s %%\", \"a\")", s("a %")),
        ("format(\"no verbs\")", s("no verbs")),
    ]);
}

#[test]
fn explicit_argument_indexes() {
    check(&[
        ("format(\"%[2]s %[1]s\", \"a\", \"b\")", s("b a")),
        ("format(\"%[2]s %s\", \"a\", \"b\", \"c\")", s("b c")),
        ("format(\"%[1]s %[1]s\", \"x\")", s("x x")),
        ("format(\"%6.2[1]f\", 3.14159)", s("  3.14")),
    ]);
}

#[test]
fn format_errors_read_as_ctys() {
    let call = |m: &str| format!("Call to function \"format\" failed: {m}.");
    check_errors(&[
        (
            "format(\"%s\")",
            &call("not enough arguments for \"%s\" at 0: need index 1 but have 0 total"),
        ),
        (
            "format(\"ab %[3]d\", 1)",
            &call("not enough arguments for \"%[3]d\" at 3: need index 3 but have 1 total"),
        ),
        (
            "format(\"%d\", 1.5)",
            &call("unsupported value for \"%d\" at 0: an integer is required"),
        ),
        (
            "format(\"%s\", tostring(null))",
            &call("unsupported value for \"%s\" at 0: null value cannot be formatted"),
        ),
        (
            "format(\"%y\", 1)",
            &call("unsupported format verb 'y' in \"%y\" at offset 0"),
        ),
        (
            "format(\"ab%\", 1)",
            &call("invalid format string starting at offset 3"),
        ),
        (
            "format(\"%!\", 1)",
            &call("unrecognized format character '!' at offset 1"),
        ),
        (
            "format(\"%[0]d\", 1)",
            &call("unrecognized format character '0' at offset 2"),
        ),
        (
            "format(\"%d\", \"x\")",
            &call("unsupported value for \"%d\" at 0: a number is required"),
        ),
        (
            "format(\"%d\", true)",
            &call("unsupported value for \"%d\" at 0: number required"),
        ),
        (
            "format(\"%t\", \"yes\")",
            &call("unsupported value for \"%t\" at 0: a bool is required"),
        ),
        (
            "format(\"%t\", \"True\")",
            &call(
                "unsupported value for \"%t\" at 0: a bool is required; to convert from string, use lowercase \"true\"",
            ),
        ),
        (
            "format(\"%s\", [1])",
            &call("unsupported value for \"%s\" at 0: string required"),
        ),
        (
            "format(\"a\", 1)",
            "Invalid value for \"args\" parameter: too many arguments; no verbs in format string.",
        ),
        (
            "format(\"%s\", \"a\", \"b\")",
            "Invalid value for \"args\" parameter: too many arguments; only 1 used by format string.",
        ),
        (
            "format(var.nothing)",
            "Invalid value for \"format\" parameter: argument must not be null.",
        ),
    ]);
}

#[test]
fn unknowns() {
    check(&[
        ("format(\"%s\", var.unknown)", Value::unknown()),
        ("format(var.unknown, 1)", Value::unknown()),
        ("format(\"%v\", var.partial)", Value::unknown()),
        ("formatlist(\"%s\", var.unknown)", Value::unknown()),
        // Only the elements formatted from unknowns are unknown.
        (
            "formatlist(\"<%s>\", var.partial)",
            list(&[s("<a>"), Value::unknown()]),
        ),
        (
            "formatlist(\"%s%v\", [\"x\", \"y\"], var.partial)",
            list(&[s("xa"), Value::unknown()]),
        ),
        // A single (non-list) argument with an unknown inside makes every
        // element unknown.
        (
            "formatlist(\"%s%v\", [\"x\", \"y\"], {k = var.unknown})",
            list(&[Value::unknown(), Value::unknown()]),
        ),
    ]);
}

#[test]
fn formatlist_lengths_and_errors() {
    check(&[
        ("formatlist(\"%s\", [])", list(&[])),
        ("formatlist(\"x\")", strs(&["x"])),
        ("formatlist(\"%s-%s\", \"a\", \"b\")", strs(&["a-b"])),
        (
            "formatlist(\"%s=%d\", [\"a\", \"b\"], [1, 2])",
            strs(&["a=1", "b=2"]),
        ),
    ]);
    check_errors(&[
        (
            "formatlist(\"%s=%s\", [\"a\", \"b\"], [\"1\"])",
            "Invalid value for \"args\" parameter: argument 2 has length 1, \
             which is inconsistent with argument 1 of length 2.",
        ),
        (
            "formatlist(\"%s\")",
            "Call to function \"formatlist\" failed: not enough arguments for \"%s\" at 0: \
             need index 1 but have 0 total.",
        ),
        (
            "formatlist(\"%d\", [1, \"a\"])",
            "Call to function \"formatlist\" failed: error on format iteration 1: \
             unsupported value for \"%d\" at 0: a number is required.",
        ),
    ]);
}
