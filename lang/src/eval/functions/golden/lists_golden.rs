//! `concat`, `element`, `contains`, `index`, `compact`, `distinct`,
//! `flatten`, `reverse`, `slice`, `sort`, `chunklist`, `matchkeys`, `range`.

use super::{Fails, Is, Unknown, check};

#[test]
fn concat() {
    check(&[
        (
            r#"concat(["a", ""], ["b", "c"])"#,
            Is(r#"["a", "", "b", "c"]"#),
        ),
        (r#"concat([1], ["a"], [])"#, Is(r#"[1, "a"]"#)),
        (r#"concat([1], [var.u])"#, Is("[1, var.u]")),
        (r#"concat([1], var.u)"#, Unknown),
        (
            r#"concat()"#,
            Fails(r#"Call to function "concat" failed: at least one argument is required."#),
        ),
        (
            r#"concat(["a"], "b")"#,
            Fails(
                r#"Invalid value for "seqs" parameter: all arguments must be lists or tuples; got string."#,
            ),
        ),
        (
            r#"concat({a = 1})"#,
            Fails(
                r#"Invalid value for "seqs" parameter: all arguments must be lists or tuples; got object."#,
            ),
        ),
        (
            r#"concat(["a"], null)"#,
            Fails(r#"Invalid value for "seqs" parameter: argument must not be null."#),
        ),
    ]);
}

#[test]
fn element() {
    check(&[
        (r#"element(["a", "b", "c"], 1)"#, Is(r#""b""#)),
        (r#"element(["a", "b", "c"], 3)"#, Is(r#""a""#)),
        (
            r#"element(["a", "b", "c"], length(["a", "b", "c"])-1)"#,
            Is(r#""c""#),
        ),
        (r#"element(["a", "b"], "1")"#, Is(r#""b""#)),
        (r#"element(["a", var.u], 0)"#, Is(r#""a""#)),
        (r#"element(["a", var.u], 1)"#, Unknown),
        (r#"element(["a"], var.u)"#, Unknown),
        (r#"element(var.u, 0)"#, Unknown),
        (
            r#"element([], 0)"#,
            Fails(
                r#"Call to function "element" failed: cannot use element function with an empty list."#,
            ),
        ),
        // Terraform 1.11 (cty 1.16) takes Go's remainder, -1 % 1 = 0.
        (r#"element(["a"], -1)"#, Is(r#""a""#)),
        (
            r#"element(["a"], 1.5)"#,
            Fails(
                r#"Call to function "element" failed: invalid index: value must be a whole number, between -9223372036854775808 and 9223372036854775807."#,
            ),
        ),
        (
            r#"element("abc", 0)"#,
            Fails(r#"Call to function "element" failed: cannot read elements from string."#),
        ),
        (
            r#"element(["a"], "x")"#,
            Fails(r#"Invalid value for "index" parameter: a number is required."#),
        ),
        (
            r#"element(null, 0)"#,
            Fails(r#"Invalid value for "list" parameter: argument must not be null."#),
        ),
    ]);
}

#[test]
fn contains() {
    check(&[
        (r#"contains(["a", "b", "c"], "a")"#, Is("true")),
        (r#"contains(["a", "b", "c"], "d")"#, Is("false")),
        // Equality is by type and value, like ==.
        (r#"contains([1], "1")"#, Is("false")),
        (r#"contains([[1, 2]], [1, 2])"#, Is("true")),
        // A known match decides; otherwise an unknown element leaves it open.
        (r#"contains(["a", var.u], "a")"#, Is("true")),
        (r#"contains([var.u, "a"], "a")"#, Is("true")),
        (r#"contains(["a", var.u], "b")"#, Unknown),
        (r#"contains(["a"], var.u)"#, Unknown),
        (r#"contains(var.u, "a")"#, Unknown),
        (r#"contains([], "a")"#, Is("false")),
        (
            r#"contains("abc", "a")"#,
            Fails(r#"Call to function "contains" failed: argument must be list, tuple, or set."#),
        ),
    ]);
}

#[test]
fn index() {
    check(&[
        (r#"index(["a", "b", "c"], "b")"#, Is("1")),
        (r#"index(["a", "b", "a"], "a")"#, Is("0")),
        (r#"index(["a", var.u], "a")"#, Is("0")),
        (r#"index([var.u, "a"], "a")"#, Unknown),
        (
            r#"index(["a", "b"], "z")"#,
            Fails(r#"Call to function "index" failed: item not found."#),
        ),
        (
            r#"index([1], "1")"#,
            Fails(r#"Call to function "index" failed: item not found."#),
        ),
        (
            r#"index([], "a")"#,
            Fails(r#"Call to function "index" failed: cannot search an empty list."#),
        ),
        (
            r#"index("ab", "a")"#,
            Fails(r#"Call to function "index" failed: argument must be a list or tuple."#),
        ),
    ]);
}

#[test]
fn compact() {
    check(&[
        (
            r#"compact(["a", "", "b", null, "c"])"#,
            Is(r#"["a", "b", "c"]"#),
        ),
        (r#"compact([1, "", true])"#, Is(r#"["1", "true"]"#)),
        (r#"compact([])"#, Is("[]")),
        (r#"compact(["a", var.u])"#, Unknown),
        (
            r#"compact([["a"]])"#,
            Fails(r#"Invalid value for "list" parameter: element 0: string required."#),
        ),
        (
            r#"compact("a")"#,
            Fails(r#"Invalid value for "list" parameter: list of string required."#),
        ),
    ]);
}

#[test]
fn distinct() {
    check(&[
        (
            r#"distinct(["a", "b", "a", "c", "d", "b"])"#,
            Is(r#"["a", "b", "c", "d"]"#),
        ),
        // Elements convert to their common type first.
        (r#"distinct([1, "1", 2])"#, Is(r#"["1", "2"]"#)),
        (r#"distinct([[1], [1], [2]])"#, Is("[[1], [2]]")),
        (r#"distinct(["a", var.u])"#, Unknown),
        (
            r#"distinct([1, true])"#,
            Fails(
                r#"Invalid value for "list" parameter: all list elements must have the same type."#,
            ),
        ),
    ]);
}

#[test]
fn flatten() {
    check(&[
        (
            r#"flatten([["a", "b"], [], ["c"]])"#,
            Is(r#"["a", "b", "c"]"#),
        ),
        (
            r#"flatten([[["a", "b"], []], ["c"]])"#,
            Is(r#"["a", "b", "c"]"#),
        ),
        // Lists inside maps stay.
        (r#"flatten([{a = [1]}, [2]])"#, Is("[{a = [1]}, 2]")),
        (r#"flatten([null, ["a"]])"#, Is(r#"[null, "a"]"#)),
        (r#"flatten([])"#, Is("[]")),
        // An unknown element may be a list of any length.
        (r#"flatten([["a"], var.u])"#, Unknown),
        (r#"flatten([["a", var.u]])"#, Unknown),
        (
            r#"flatten("a")"#,
            Fails(r#"Call to function "flatten" failed: can only flatten lists, sets and tuples."#),
        ),
    ]);
}

#[test]
fn reverse() {
    check(&[
        (r#"reverse([1, 2, 3])"#, Is("[3, 2, 1]")),
        (r#"reverse([1, var.u])"#, Is("[var.u, 1]")),
        (r#"reverse([])"#, Is("[]")),
        (
            r#"reverse("abc")"#,
            Fails(
                r#"Invalid value for "list" parameter: can only reverse list or tuple values, not string."#,
            ),
        ),
    ]);
}

#[test]
fn slice() {
    check(&[
        (r#"slice(["a", "b", "c", "d"], 1, 3)"#, Is(r#"["b", "c"]"#)),
        (r#"slice(["a"], 1, 1)"#, Is("[]")),
        (r#"slice(["a", "b"], 0, 2)"#, Is(r#"["a", "b"]"#)),
        (r#"slice(["a", var.u], 1, 2)"#, Is("[var.u]")),
        (r#"slice(["a"], var.u, 1)"#, Unknown),
        (r#"slice(var.u, 0, 1)"#, Unknown),
        (
            r#"slice(["a", "b"], -1, 1)"#,
            Fails(
                r#"Invalid value for "start_index" parameter: start index must not be less than zero."#,
            ),
        ),
        (
            r#"slice(["a", "b"], 3, 3)"#,
            Fails(
                r#"Invalid value for "start_index" parameter: start index must not be greater than the length of the list."#,
            ),
        ),
        (
            r#"slice(["a", "b"], 0, -1)"#,
            Fails(
                r#"Invalid value for "end_index" parameter: end index must not be less than zero."#,
            ),
        ),
        (
            r#"slice(["a", "b"], 0, 3)"#,
            Fails(
                r#"Invalid value for "end_index" parameter: end index must not be greater than the length of the list."#,
            ),
        ),
        (
            r#"slice(["a", "b"], 2, 1)"#,
            Fails(
                r#"Invalid value for "start_index" parameter: start index must not be greater than end index."#,
            ),
        ),
        (
            r#"slice(["a", "b"], 0.5, 1)"#,
            Fails(
                r#"Invalid value for "start_index" parameter: invalid start index: value must be a whole number, between -9223372036854775808 and 9223372036854775807."#,
            ),
        ),
        (
            r#"slice("ab", 0, 1)"#,
            Fails(r#"Invalid value for "list" parameter: must be a list or tuple value."#),
        ),
    ]);
}

#[test]
fn sort() {
    check(&[
        (
            r#"sort(["e", "d", "a", "x"])"#,
            Is(r#"["a", "d", "e", "x"]"#),
        ),
        // Numbers sort as strings; by code point, so uppercase first.
        (r#"sort([10, 9, "b", "B"])"#, Is(r#"["10", "9", "B", "b"]"#)),
        (r#"sort(["é", "z"])"#, Is(r#"["z", "é"]"#)),
        (r#"sort(["b", var.u])"#, Unknown),
        (r#"sort(var.u)"#, Unknown),
        (
            r#"sort(["a", null])"#,
            Fails(
                r#"Call to function "sort" failed: given list element 1 is null; a null string cannot be sorted."#,
            ),
        ),
        (
            r#"sort([["a"]])"#,
            Fails(r#"Invalid value for "list" parameter: element 0: string required."#),
        ),
    ]);
}

#[test]
fn chunklist() {
    check(&[
        (
            r#"chunklist(["a", "b", "c", "d", "e"], 2)"#,
            Is(r#"[["a", "b"], ["c", "d"], ["e"]]"#),
        ),
        (
            r#"chunklist(["a", "b", "c", "d", "e"], 1)"#,
            Is(r#"[["a"], ["b"], ["c"], ["d"], ["e"]]"#),
        ),
        // Size 0 makes one chunk of everything.
        (r#"chunklist(["a", "b"], 0)"#, Is(r#"[["a", "b"]]"#)),
        (r#"chunklist([], 3)"#, Is("[]")),
        (r#"chunklist(["a", 1], 5)"#, Is(r#"[["a", "1"]]"#)),
        (
            r#"chunklist(["a", var.u, "c"], 2)"#,
            Is(r#"[["a", var.u], ["c"]]"#),
        ),
        (r#"chunklist(var.u, 2)"#, Unknown),
        (r#"chunklist(["a"], var.u)"#, Unknown),
        (
            r#"chunklist(["a"], -1)"#,
            Fails(r#"Call to function "chunklist" failed: the size argument must be positive."#),
        ),
        (
            r#"chunklist(["a"], 1.5)"#,
            Fails(
                r#"Call to function "chunklist" failed: invalid size: value must be a whole number, between -9223372036854775808 and 9223372036854775807."#,
            ),
        ),
        (
            r#"chunklist([1, true], 1)"#,
            Fails(
                r#"Invalid value for "list" parameter: all list elements must have the same type."#,
            ),
        ),
    ]);
}

#[test]
fn matchkeys() {
    check(&[
        (
            r#"matchkeys(["i-123", "i-abc", "i-def"], ["us-west", "us-east", "us-east"], ["us-east"])"#,
            Is(r#"["i-abc", "i-def"]"#),
        ),
        // Keys and search set convert to their common type.
        (r#"matchkeys(["a", "b"], [1, 2], ["2"])"#, Is(r#"["b"]"#)),
        (r#"matchkeys(["a", "b"], ["x", "y"], ["z"])"#, Is("[]")),
        (r#"matchkeys(["a", "b"], [1, 2], [])"#, Is("[]")),
        (r#"matchkeys(["a", "b"], ["x", var.u], [])"#, Is("[]")),
        (r#"matchkeys(["a", "b"], ["x", var.u], ["x"])"#, Unknown),
        (r#"matchkeys([var.u, "b"], ["x", "y"], ["y"])"#, Unknown),
        // Terraform gives [] here; an unknown is what it should be.
        (r#"matchkeys(["a", "b"], ["x", "y"], [var.u])"#, Unknown),
        (
            r#"matchkeys(["a"], ["x", "y"], ["x"])"#,
            Fails(
                r#"Call to function "matchkeys" failed: length of keys and values should be equal."#,
            ),
        ),
        (
            r#"matchkeys(["a"], [1], [true])"#,
            Fails(
                r#"Call to function "matchkeys" failed: keys and searchset must be of the same type."#,
            ),
        ),
    ]);
}

#[test]
fn range() {
    check(&[
        (r#"range(3)"#, Is("[0, 1, 2]")),
        (r#"range(1, 4)"#, Is("[1, 2, 3]")),
        (r#"range(1, 8, 2)"#, Is("[1, 3, 5, 7]")),
        (r#"range(1, 4, 0.5)"#, Is("[1, 1.5, 2, 2.5, 3, 3.5]")),
        (r#"range(4, 1)"#, Is("[4, 3, 2]")),
        (r#"range(10, 5, -2)"#, Is("[10, 8, 6]")),
        (r#"range(-3)"#, Is("[0, -1, -2]")),
        (r#"range(0)"#, Is("[]")),
        (r#"range(2, 2)"#, Is("[]")),
        (r#"range("3")"#, Is("[0, 1, 2]")),
        (r#"length(range(1024))"#, Is("1024")),
        (r#"range(var.u)"#, Unknown),
        (
            r#"range(1025)"#,
            Fails(
                r#"Call to function "range" failed: more than 1024 values were generated; either decrease the difference between start and end or use a smaller step."#,
            ),
        ),
        (
            r#"range(1, 5, -1)"#,
            Fails(
                r#"Invalid value for "params" parameter: end must be less than start when step is negative."#,
            ),
        ),
        (
            r#"range(5, 1, 1)"#,
            Fails(
                r#"Invalid value for "params" parameter: end must be greater than start when step is positive."#,
            ),
        ),
        // Terraform 1.11 never reports cty's "step must not be zero".
        (
            r#"range(0, 5, 0)"#,
            Fails(
                r#"Call to function "range" failed: more than 1024 values were generated; either decrease the difference between start and end or use a smaller step."#,
            ),
        ),
        (
            r#"range(5, 0, 0)"#,
            Fails(
                r#"Invalid value for "params" parameter: end must be greater than start when step is positive."#,
            ),
        ),
        (
            r#"range("x")"#,
            Fails(r#"Invalid value for "params" parameter: a number is required."#),
        ),
    ]);
}
