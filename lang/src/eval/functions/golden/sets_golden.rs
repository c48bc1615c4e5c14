//! `setunion`, `setintersection`, `setsubtract`, `setproduct`. Set results
//! are in cty's set order: strings lexically, numbers numerically, then
//! unknowns, then null (Terraform's documentation shows some examples in
//! an older, unordered form).

use super::{Fails, Is, Unknown, check};

#[test]
fn setunion() {
    check(&[
        (
            r#"setunion(["a", "b"], ["b", "c"], ["d"])"#,
            Is(r#"["a", "b", "c", "d"]"#),
        ),
        (r#"setunion([10, 9], [1, 9])"#, Is("[1, 9, 10]")),
        (r#"setunion([true], [false])"#, Is("[false, true]")),
        // All elements convert to one type.
        (r#"setunion([1], ["a"])"#, Is(r#"["1", "a"]"#)),
        (r#"setunion([null, "b"], ["a"])"#, Is(r#"["a", "b", null]"#)),
        (r#"setunion([], [])"#, Is("[]")),
        (r#"setunion(["b"])"#, Is(r#"["b"]"#)),
        // Unknown elements stay, after the known ones.
        (
            r#"setunion(["b"], [var.u, "a"])"#,
            Is(r#"["a", "b", var.u]"#),
        ),
        (r#"setunion(["a"], var.u)"#, Unknown),
        (
            r#"setunion([1], [true])"#,
            Fails(
                r#"Call to function "setunion" failed: given sets must all have compatible element types."#,
            ),
        ),
        (
            r#"setunion(["a"], [1, true])"#,
            Fails(
                r#"Invalid value for "other_sets" parameter: all set elements must have the same type."#,
            ),
        ),
        (
            r#"setunion(["a"], "b")"#,
            Fails(r#"Invalid value for "other_sets" parameter: set of any single type required."#),
        ),
    ]);
}

#[test]
fn setintersection_and_setsubtract() {
    check(&[
        (
            r#"setintersection(["a", "b"], ["b", "c"], ["b", "d"])"#,
            Is(r#"["b"]"#),
        ),
        (
            r#"setintersection([3, 3.3, 4], [4, 3.3, 65, 99], [4.0, 3.3])"#,
            Is("[3.3, 4]"),
        ),
        (
            r#"setintersection(["bob", "jane", 3], ["jane", 3, "ajax", 10], ["3", "jane", 26, "nomad"])"#,
            Is(r#"["3", "jane"]"#),
        ),
        (r#"setintersection(["b", "a", "b"])"#, Is(r#"["a", "b"]"#)),
        // An unknown element might match, or not.
        (r#"setintersection(["a", var.u], ["a"])"#, Unknown),
        (
            r#"setsubtract(["a", "b", "c"], ["a", "c"])"#,
            Is(r#"["b"]"#),
        ),
        (
            r#"setunion(setsubtract(["a", "b", "c"], ["a", "c", "d"]), setsubtract(["a", "c", "d"], ["a", "b", "c"]))"#,
            Is(r#"["b", "d"]"#),
        ),
        (r#"setsubtract([1, 2], ["2"])"#, Is(r#"["1"]"#)),
        (r#"setsubtract(["a", "b"], [var.u])"#, Unknown),
        (
            r#"setsubtract(["a"], null)"#,
            Fails(r#"Invalid value for "b" parameter: argument must not be null."#),
        ),
    ]);
}

#[test]
fn setproduct() {
    check(&[
        (
            r#"setproduct(["development", "staging", "production"], ["app1", "app2"])"#,
            Is(r#"[
                ["development", "app1"], ["development", "app2"],
                ["staging", "app1"], ["staging", "app2"],
                ["production", "app1"], ["production", "app2"],
            ]"#),
        ),
        (
            r#"setproduct(["development", "staging", "production"], [])"#,
            Is("[]"),
        ),
        (r#"setproduct(["a"], ["b"])"#, Is(r#"[["a", "b"]]"#)),
        (
            r#"setproduct(["staging", "production"], ["a", 2])"#,
            Is(r#"[["staging", "a"], ["staging", "2"], ["production", "a"], ["production", "2"]]"#),
        ),
        (
            r#"setproduct([1, 2], ["a"], [true])"#,
            Is(r#"[[1, "a", true], [2, "a", true]]"#),
        ),
        // An unknown element stays in its place; an unknown argument makes
        // the whole product unknown.
        (
            r#"setproduct(["a"], [var.u, "b"])"#,
            Is(r#"[["a", var.u], ["a", "b"]]"#),
        ),
        (r#"setproduct(["a"], var.u)"#, Unknown),
        (r#"setproduct(["a"], var.u, "b")"#, Unknown),
        (
            r#"setproduct(["a"])"#,
            Fails(r#"Call to function "setproduct" failed: at least two arguments are required."#),
        ),
        (
            r#"setproduct(["a"], "b")"#,
            Fails(r#"Invalid value for "sets" parameter: a set or a list is required."#),
        ),
        (
            r#"setproduct(["a"], [1, true])"#,
            Fails(r#"Invalid value for "sets" parameter: all elements must be of the same type."#),
        ),
        (
            r#"setproduct(["a"], null)"#,
            Fails(r#"Invalid value for "sets" parameter: argument must not be null."#),
        ),
    ]);
}
