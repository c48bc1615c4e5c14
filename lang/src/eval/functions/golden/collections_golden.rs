//! `length`, `coalesce`, `coalescelist`, `one`, `alltrue`, `anytrue`, `list`, `map`.

use super::{Fails, Is, Unknown, check};

#[test]
fn length() {
    check(&[
        (r#"length([])"#, Is("0")),
        (r#"length(["a", "b"])"#, Is("2")),
        (r#"length({"a" = "b"})"#, Is("1")),
        (r#"length("hello")"#, Is("5")),
        (r#"length("👾🕹️")"#, Is("2")),
        (r#"length("e\u0301")"#, Is("1")),
        (r#"length([var.u, 1])"#, Is("2")),
        (r#"length({a = var.u})"#, Is("1")),
        (r#"length(var.u)"#, Unknown),
        (
            r#"length(null)"#,
            Fails(r#"Invalid value for "value" parameter: argument must not be null."#),
        ),
        (
            r#"length(5)"#,
            Fails(
                r#"Call to function "length" failed: argument must be a string, a collection type, or a structural type."#,
            ),
        ),
    ]);
}

#[test]
fn coalesce() {
    let same_type = r#"Call to function "coalesce" failed: all arguments must have the same type."#;
    check(&[
        (r#"coalesce("a", "b")"#, Is(r#""a""#)),
        (r#"coalesce("", "b")"#, Is(r#""b""#)),
        (r#"coalesce(1, 2)"#, Is("1")),
        (r#"coalesce(["", "b"]...)"#, Is(r#""b""#)),
        (r#"coalesce(1, "hello")"#, Is(r#""1""#)),
        (r#"coalesce(true, "hello")"#, Is(r#""true""#)),
        (r#"coalesce({}, "hello")"#, Fails(same_type)),
        (r#"coalesce(1, true)"#, Fails(same_type)),
        (r#"coalesce()"#, Fails(same_type)),
        (r#"coalesce(null, "", "x")"#, Is(r#""x""#)),
        // The empty string is skipped only when the arguments are strings.
        (r#"coalesce("", 0)"#, Is(r#""0""#)),
        (r#"coalesce(0, 1)"#, Is("0")),
        (r#"coalesce([], ["a"])"#, Is("[]")),
        // An unknown after the first usable argument does not matter.
        (r#"coalesce("a", var.u)"#, Is(r#""a""#)),
        (r#"coalesce(var.u, "a")"#, Unknown),
        (r#"coalesce(null, var.u, "a")"#, Unknown),
        (
            r#"coalesce(null, "")"#,
            Fails(
                r#"Call to function "coalesce" failed: no non-null, non-empty-string arguments."#,
            ),
        ),
    ]);
}

#[test]
fn coalescelist() {
    check(&[
        (
            r#"coalescelist(["a", "b"], ["c", "d"])"#,
            Is(r#"["a", "b"]"#),
        ),
        (r#"coalescelist([], ["c", "d"])"#, Is(r#"["c", "d"]"#)),
        (r#"coalescelist([[], ["c", "d"]]...)"#, Is(r#"["c", "d"]"#)),
        (r#"coalescelist(null, ["a"])"#, Is(r#"["a"]"#)),
        (r#"coalescelist(["a"], var.u)"#, Is(r#"["a"]"#)),
        (r#"coalescelist([], var.u, ["a"])"#, Unknown),
        (r#"coalescelist([var.u])"#, Is("[var.u]")),
        (
            r#"coalescelist([], [])"#,
            Fails(r#"Call to function "coalescelist" failed: no non-null arguments."#),
        ),
        (
            r#"coalescelist([], "a")"#,
            Fails(
                r#"Call to function "coalescelist" failed: coalescelist arguments must be lists or tuples."#,
            ),
        ),
        (
            r#"coalescelist()"#,
            Fails(r#"Call to function "coalescelist" failed: at least one argument is required."#),
        ),
    ]);
}

#[test]
fn one() {
    let too_many = r#"Invalid value for "list" parameter: must be a list, set, or tuple value with either zero or one elements."#;
    check(&[
        (r#"one([])"#, Is("null")),
        (r#"one(["hello"])"#, Is(r#""hello""#)),
        (r#"one(["hello", "goodbye"])"#, Fails(too_many)),
        (r#"one(toset([]))"#, Is("null")),
        (r#"one(toset(["hello"]))"#, Is(r#""hello""#)),
        (r#"one(toset(["hello", "goodbye"]))"#, Fails(too_many)),
        (r#"one(toset(["a", "a"]))"#, Is(r#""a""#)),
        (r#"one("a")"#, Fails(too_many)),
        (r#"one([var.u])"#, Unknown),
        (r#"one(var.u)"#, Unknown),
        (
            r#"one(null)"#,
            Fails(r#"Invalid value for "list" parameter: argument must not be null."#),
        ),
    ]);
}

#[test]
fn alltrue() {
    check(&[
        (r#"alltrue(["true", true])"#, Is("true")),
        (r#"alltrue([true, false])"#, Is("false")),
        (r#"alltrue([])"#, Is("true")),
        // The first unknown decides, unless a false came before it.
        (r#"alltrue([true, var.u])"#, Unknown),
        (r#"alltrue([false, var.u])"#, Is("false")),
        (r#"alltrue([var.u, false])"#, Unknown),
        (r#"alltrue(var.u)"#, Unknown),
        (r#"alltrue([true, null])"#, Is("false")),
        // cty converts "1" and "0" to bool as well.
        (r#"alltrue(["1"])"#, Is("true")),
        (
            r#"alltrue([1])"#,
            Fails(r#"Invalid value for "list" parameter: element 0: bool required."#),
        ),
        (
            r#"alltrue(["yes"])"#,
            Fails(r#"Invalid value for "list" parameter: a bool is required."#),
        ),
        (
            r#"alltrue("true")"#,
            Fails(r#"Invalid value for "list" parameter: list of bool required."#),
        ),
        (
            r#"alltrue(null)"#,
            Fails(r#"Invalid value for "list" parameter: argument must not be null."#),
        ),
    ]);
}

#[test]
fn anytrue() {
    check(&[
        (r#"anytrue(["true"])"#, Is("true")),
        (r#"anytrue([true])"#, Is("true")),
        (r#"anytrue([true, false])"#, Is("true")),
        (r#"anytrue([])"#, Is("false")),
        // Any known true decides; otherwise an unknown leaves it open.
        (r#"anytrue([var.u, true])"#, Is("true")),
        (r#"anytrue([true, var.u])"#, Is("true")),
        (r#"anytrue([false, var.u])"#, Unknown),
        (r#"anytrue([null, false])"#, Is("false")),
        (
            r#"anytrue(["TRUE"])"#,
            Fails(
                r#"Invalid value for "list" parameter: a bool is required; to convert from string, use lowercase "true"."#,
            ),
        ),
    ]);
}

#[test]
fn removed_list_and_map_say_what_to_write_instead() {
    let list = r#"Call to function "list" failed: the "list" function was deprecated in Terraform v0.12 and is no longer available; use tolist([ ... ]) syntax to write a literal list."#;
    let map = r#"Call to function "map" failed: the "map" function was deprecated in Terraform v0.12 and is no longer available; use tomap({ ... }) syntax to write a literal map."#;
    check(&[
        (r#"list("a", "b")"#, Fails(list)),
        (r#"list()"#, Fails(list)),
        (r#"list(var.u)"#, Fails(list)),
        (r#"map("a", "b")"#, Fails(map)),
        (r#"map(var.u, null)"#, Fails(map)),
    ]);
}
