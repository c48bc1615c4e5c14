//! `keys`, `values`, `lookup`, `merge`, `zipmap`, `transpose`.

use super::{Fails, Is, Unknown, check};

#[test]
fn keys_and_values() {
    check(&[
        (r#"keys({a=1, c=2, d=3})"#, Is(r#"["a", "c", "d"]"#)),
        (r#"keys({b = var.u, a = 1})"#, Is(r#"["a", "b"]"#)),
        (r#"keys({})"#, Is("[]")),
        (r#"keys(var.u)"#, Unknown),
        (
            r#"keys(["a"])"#,
            Fails(r#"Invalid value for "inputMap" parameter: must have map or object type."#),
        ),
        (
            r#"keys(null)"#,
            Fails(r#"Invalid value for "inputMap" parameter: argument must not be null."#),
        ),
        (r#"values({a=3, c=2, d=1})"#, Is("[3, 2, 1]")),
        (r#"values({b = 1, a = var.u})"#, Is("[var.u, 1]")),
        (r#"values(var.u)"#, Unknown),
        (
            r#"values(["a"])"#,
            Fails(
                r#"Call to function "values" failed: values() requires a map as the first argument."#,
            ),
        ),
    ]);
}

#[test]
fn lookup() {
    check(&[
        (r#"lookup({a="ay", b="bee"}, "a", "what?")"#, Is(r#""ay""#)),
        (
            r#"lookup({a="ay", b="bee"}, "c", "what?")"#,
            Is(r#""what?""#),
        ),
        (r#"lookup({a = "ay"}, "a")"#, Is(r#""ay""#)),
        (r#"lookup({"1" = "x"}, 1)"#, Is(r#""x""#)),
        (r#"lookup({a = 1}, "b", null)"#, Is("null")),
        // Other elements may be unknown; so may a default that is not used.
        (r#"lookup({a = 1, b = var.u}, "a")"#, Is("1")),
        (r#"lookup({a = 1}, "a", var.u)"#, Is("1")),
        (r#"lookup({a = 1}, "b", var.u)"#, Unknown),
        (r#"lookup(var.u, "a", 1)"#, Unknown),
        (r#"lookup({a = 1}, var.u, 0)"#, Unknown),
        // A map's missing key fails the call; an object's missing attribute
        // is refused as the argument, when Terraform types the result.
        (
            r#"lookup(tomap({a = "ay"}), "c")"#,
            Fails(r#"Call to function "lookup" failed: lookup failed to find key "c"."#),
        ),
        (
            r#"lookup({a = "ay"}, "c")"#,
            Fails(
                r#"Invalid value for "inputMap" parameter: the given object has no attribute "c"."#,
            ),
        ),
        (
            r#"lookup(["a"], "0", 1)"#,
            Fails(
                r#"Invalid value for "inputMap" parameter: lookup() requires a map as the first argument."#,
            ),
        ),
        (
            r#"lookup({a = 1}, null)"#,
            Fails(r#"Invalid value for "key" parameter: argument must not be null."#),
        ),
        (
            r#"lookup({a = 1}, ["a"])"#,
            Fails(r#"Invalid value for "key" parameter: string required."#),
        ),
    ]);
}

#[test]
fn merge() {
    check(&[
        (
            r#"merge({a="b", c="d"}, {e="f", c="z"})"#,
            Is(r#"{a = "b", c = "z", e = "f"}"#),
        ),
        (
            r#"merge({a="b"}, {a=[1,2], c="z"}, {d=3})"#,
            Is(r#"{a = [1, 2], c = "z", d = 3}"#),
        ),
        (
            r#"merge([{a="b", c="d"}, {}, {e="f", c="z"}]...)"#,
            Is(r#"{a = "b", c = "z", e = "f"}"#),
        ),
        (r#"merge()"#, Is("{}")),
        (r#"merge({a = 1}, null)"#, Is("{a = 1}")),
        (r#"merge({a = var.u}, {b = 1})"#, Is("{a = var.u, b = 1}")),
        (r#"merge({a = 1}, var.u)"#, Unknown),
        (
            r#"merge({a = 1}, "b")"#,
            Fails(
                r#"Call to function "merge" failed: arguments must be maps or objects, got "string"."#,
            ),
        ),
        (
            r#"merge({}, [1])"#,
            Fails(
                r#"Call to function "merge" failed: arguments must be maps or objects, got "tuple"."#,
            ),
        ),
    ]);
}

#[test]
fn zipmap() {
    check(&[
        (r#"zipmap(["a", "b"], [1, 2])"#, Is("{a = 1, b = 2}")),
        // The value with the highest index wins.
        (r#"zipmap(["a", "a"], [1, 2])"#, Is("{a = 2}")),
        (r#"zipmap([1], ["x"])"#, Is(r#"{"1" = "x"}"#)),
        (r#"zipmap([], [])"#, Is("{}")),
        (r#"zipmap(["a"], [var.u])"#, Is("{a = var.u}")),
        (r#"zipmap(["a", var.u], [1, 2])"#, Unknown),
        (r#"zipmap(["a"], var.u)"#, Unknown),
        (
            r#"zipmap(["a"], [1, 2])"#,
            Fails(
                r#"Call to function "zipmap" failed: number of keys (1) does not match number of values (2)."#,
            ),
        ),
        (
            r#"zipmap(["a", null], [1, 2])"#,
            Fails(r#"Call to function "zipmap" failed: keys list has null value at index 1."#),
        ),
        (
            r#"zipmap(["a"], "b")"#,
            Fails(
                r#"Call to function "zipmap" failed: values argument must be a list or tuple value."#,
            ),
        ),
        (
            r#"zipmap([["a"]], [1])"#,
            Fails(r#"Invalid value for "keys" parameter: element 0: string required."#),
        ),
    ]);
}

#[test]
fn transpose() {
    check(&[
        (
            r#"transpose({"a" = ["1", "2"], "b" = ["2", "3"]})"#,
            Is(r#"{"1" = ["a"], "2" = ["a", "b"], "3" = ["b"]}"#),
        ),
        // Each new list is sorted.
        (
            r#"transpose({"b" = ["x"], "a" = ["x"]})"#,
            Is(r#"{x = ["a", "b"]}"#),
        ),
        (
            r#"transpose({a = [1, true]})"#,
            Is(r#"{"1" = ["a"], "true" = ["a"]}"#),
        ),
        (r#"transpose({a = []})"#, Is("{}")),
        (r#"transpose({})"#, Is("{}")),
        (r#"transpose({a = ["x", var.u]})"#, Unknown),
        (
            r#"transpose({a = "x"})"#,
            Fails(r#"Invalid value for "values" parameter: element "a": list of string required."#),
        ),
        (
            r#"transpose({a = [["x"]]})"#,
            Fails(
                r#"Invalid value for "values" parameter: element "a": element 0: string required."#,
            ),
        ),
        (
            r#"transpose(["x"])"#,
            Fails(r#"Invalid value for "values" parameter: map of list of string required."#),
        ),
        (
            r#"transpose({a = ["x", null]})"#,
            Fails(
                r#"Call to function "transpose" failed: input must be a map of lists of strings."#,
            ),
        ),
    ]);
}
