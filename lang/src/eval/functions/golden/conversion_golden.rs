//! `tostring`, `tonumber`, `tobool`, `tolist`, `toset`, `tomap`.
//!
//! Error texts are Terraform 1.9's; its documentation paraphrases the
//! bool and number ones with a colon where Terraform prints a semicolon.

use super::{Fails, Is, Unknown, check};

#[test]
fn primitives() {
    check(&[
        (r#"tostring("hello")"#, Is(r#""hello""#)),
        (r#"tostring(1)"#, Is(r#""1""#)),
        (r#"tostring(1.50)"#, Is(r#""1.5""#)),
        (r#"tostring(true)"#, Is(r#""true""#)),
        (r#"tostring(null)"#, Is("null")),
        (r#"tostring(var.u)"#, Unknown),
        (
            r#"tostring([])"#,
            Fails(r#"Invalid value for "v" parameter: cannot convert tuple to string."#),
        ),
        (
            r#"tostring({})"#,
            Fails(r#"Invalid value for "v" parameter: cannot convert object to string."#),
        ),
        (r#"tonumber(1)"#, Is("1")),
        (r#"tonumber("1")"#, Is("1")),
        (r#"tonumber("1e3")"#, Is("1000")),
        (r#"tonumber("-2.50")"#, Is("-2.5")),
        (r#"tonumber(null)"#, Is("null")),
        (r#"tonumber(var.u)"#, Unknown),
        (
            r#"tonumber("no")"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert "no" to number; given string must be a decimal representation of a number."#,
            ),
        ),
        (
            r#"tonumber(" 1")"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert " 1" to number; given string must be a decimal representation of a number."#,
            ),
        ),
        (
            r#"tonumber("0x10")"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert "0x10" to number; given string must be a decimal representation of a number."#,
            ),
        ),
        (
            r#"tonumber(true)"#,
            Fails(r#"Invalid value for "v" parameter: cannot convert bool to number."#),
        ),
        (r#"tobool(true)"#, Is("true")),
        (r#"tobool("true")"#, Is("true")),
        (r#"tobool("false")"#, Is("false")),
        (r#"tobool("1")"#, Is("true")),
        (r#"tobool(null)"#, Is("null")),
        (r#"tobool(var.u)"#, Unknown),
        (
            r#"tobool("no")"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert "no" to bool; only the strings "true" or "false" are allowed."#,
            ),
        ),
        (
            r#"tobool("TRUE")"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert "TRUE" to bool; only the strings "true" or "false" are allowed."#,
            ),
        ),
        (
            r#"tobool(1)"#,
            Fails(r#"Invalid value for "v" parameter: cannot convert number to bool."#),
        ),
    ]);
}

#[test]
fn tolist() {
    check(&[
        (r#"tolist(["a", "b", "c"])"#, Is(r#"["a", "b", "c"]"#)),
        (r#"tolist(["a", "b", 3])"#, Is(r#"["a", "b", "3"]"#)),
        (r#"tolist([])"#, Is("[]")),
        (r#"tolist(null)"#, Is("null")),
        (r#"tolist([1, var.u])"#, Is("[1, var.u]")),
        (r#"tolist(var.u)"#, Unknown),
        (r#"tolist(toset(["b", "a"]))"#, Is(r#"["a", "b"]"#)),
        (r#"tolist([[1], ["a"]])"#, Is(r#"[["1"], ["a"]]"#)),
        (
            r#"tolist([{a = 1}, {a = "x"}])"#,
            Is(r#"[{a = "1"}, {a = "x"}]"#),
        ),
        (
            r#"tolist("a")"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert string to list of any single type."#,
            ),
        ),
        (
            r#"tolist([1, true])"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert tuple to list of any single type."#,
            ),
        ),
        (
            r#"tolist({a = 1})"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert object to list of any single type."#,
            ),
        ),
    ]);
}

#[test]
fn toset() {
    check(&[
        (r#"toset(["a", "b", "c"])"#, Is(r#"["a", "b", "c"]"#)),
        // Mixed types become strings, and take the set's lexical order.
        (r#"toset(["a", "b", 3])"#, Is(r#"["3", "a", "b"]"#)),
        (r#"toset(["c", "b", "b"])"#, Is(r#"["b", "c"]"#)),
        (r#"toset([10, 9, 1, 9.0])"#, Is("[1, 9, 10]")),
        (r#"toset([true, false, true])"#, Is("[false, true]")),
        (
            r#"toset([null, "b", "a", null])"#,
            Is(r#"["a", "b", null]"#),
        ),
        // Unknowns go after the known elements and are never merged.
        (
            r#"toset([var.u, "a", var.u, "a"])"#,
            Is(r#"["a", var.u, var.u]"#),
        ),
        // Lists and objects by cty's set hash strings ("[1;]" before
        // "[2;]"), as Terraform 1.11 outputs them.
        (r#"toset([[2], [1], [2]])"#, Is("[[1], [2]]")),
        (r#"toset(var.strings)"#, Is(r#"["a", "b"]"#)),
        (r#"toset(null)"#, Is("null")),
        (r#"toset(var.u)"#, Unknown),
        (
            r#"toset([1, true])"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert tuple to set of any single type."#,
            ),
        ),
        (
            r#"toset("a")"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert string to set of any single type."#,
            ),
        ),
    ]);
}

#[test]
fn tomap() {
    check(&[
        (r#"tomap({"a" = 1, "b" = 2})"#, Is("{a = 1, b = 2}")),
        (
            r#"tomap({"a" = "foo", "b" = true})"#,
            Is(r#"{a = "foo", b = "true"}"#),
        ),
        (r#"tomap({a = 1, b = "x"})"#, Is(r#"{a = "1", b = "x"}"#)),
        (
            r#"tomap({a = [1], b = ["x"]})"#,
            Is(r#"{a = ["1"], b = ["x"]}"#),
        ),
        (r#"tomap({a = 1, b = var.u})"#, Is("{a = 1, b = var.u}")),
        (r#"tomap({a = null, b = true})"#, Is("{a = null, b = true}")),
        (r#"tomap({})"#, Is("{}")),
        (r#"tomap(null)"#, Is("null")),
        (r#"tomap(var.u)"#, Unknown),
        (
            r#"tomap({a = 1, b = true})"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert object to map of any single type."#,
            ),
        ),
        (
            r#"tomap(["a"])"#,
            Fails(
                r#"Invalid value for "v" parameter: cannot convert tuple to map of any single type."#,
            ),
        ),
    ]);
}
