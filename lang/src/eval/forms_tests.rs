//! Expression forms against Terraform 1.9: `for`, splats, conditionals,
//! logical operators, templates and heredocs, index and attribute access,
//! with unknown and null operands and HCL's diagnostic texts.

use super::*;
use fleetform_shared::diag::Diagnostic;

fn obj(items: &[(&str, Value)]) -> Value {
    Value::object(items.iter().cloned())
}

fn s(x: &str) -> Value {
    Value::from(x)
}

fn n(i: i64) -> Value {
    Value::int(i)
}

fn list(items: &[Value]) -> Value {
    Value::tuple(items.to_vec())
}

fn scope() -> MapScope {
    let server = |id: &str, env: &str| {
        obj(&[
            ("id", s(id)),
            ("tags", obj(&[("env", s(env))])),
            ("ports", list(&[n(80), n(443)])),
        ])
    };
    MapScope::new()
        .with_variable("list", list(&[s("a"), s("b")]))
        .with_variable("map", obj(&[("key", s("v")), ("1", s("one"))]))
        .with_variable("unknown", Value::unknown())
        .with_variable("partial", list(&[n(1), Value::unknown()]))
        .with_variable("nothing", Value::null())
        .with_variable(
            "servers",
            list(&[server("s0", "prod"), server("s1", "dev")]),
        )
        .with_variable("single", server("one", "prod"))
        .with_variable(
            "groups",
            list(&[
                obj(&[(
                    "members",
                    list(&[obj(&[("name", s("a"))]), obj(&[("name", s("b"))])]),
                )]),
                obj(&[("members", list(&[obj(&[("name", s("c"))])]))]),
            ]),
        )
        // A set(string) variable arrives converted: deduplicated and ordered.
        .with_variable(
            "set",
            convert(
                list(&[s("b"), s("a"), s("b")]),
                &fleetform_shared::types::Type::set(fleetform_shared::types::Type::String),
            )
            .expect("converts"),
        )
}

fn ev(src: &str) -> Result<Value, Diagnostics> {
    let e = parse_expression("forms.tf", src).unwrap_or_else(|d| panic!("{src}: {d}"));
    evaluate(&e, &scope())
}

fn ok(src: &str) -> Value {
    ev(src).unwrap_or_else(|d| panic!("{src}: {d}"))
}

fn fails(src: &str) -> Diagnostic {
    match ev(src) {
        Ok(v) => panic!("{src}: expected an error, got {v:?}"),
        Err(d) => d.0.into_iter().next().expect("one diagnostic"),
    }
}

/// Asserts the first error's summary and detail.
fn fails_with(src: &str, summary: &str, detail: &str) {
    let d = fails(src);
    assert_eq!(
        (d.summary.as_str(), d.detail.as_str()),
        (summary, detail),
        "{src}"
    );
}

fn columns(d: &Diagnostic) -> (usize, usize) {
    let r = d.range.as_ref().expect("range");
    (r.start.column, r.end.column)
}

#[test]
fn for_expressions_build_tuples_and_objects() {
    assert_eq!(
        ok("[for s in var.list : upper(s)]"),
        list(&[s("A"), s("B")])
    );
    assert_eq!(
        ok("[for i, v in var.list : \"${i}=${v}\"]"),
        list(&[s("0=a"), s("1=b")])
    );
    assert_eq!(
        ok("{for k, v in {b = 1, a = 2} : k => v * 2}"),
        obj(&[("a", n(4)), ("b", n(2))])
    );
    // Maps and objects are iterated in lexical key order.
    assert_eq!(
        ok("[for k, v in {b = 1, a = 2, c = 0} : k]"),
        list(&[s("a"), s("b"), s("c")])
    );
    assert_eq!(
        ok("[for x in [1, 2, 3, 4] : x if x > 2]"),
        list(&[n(3), n(4)])
    );
    assert_eq!(
        ok("{for k, v in var.map : v => k if k != \"1\"}"),
        obj(&[("v", s("key"))])
    );
    // A set is iterated in its (sorted) element order.
    assert_eq!(ok("[for v in var.set : v]"), list(&[s("a"), s("b")]));
    // Keys convert to strings.
    assert_eq!(
        ok("{for x in [1, true] : x => x}"),
        obj(&[("1", n(1)), ("true", Value::Bool(true))])
    );
}

#[test]
fn for_grouping_collects_values_with_equal_keys() {
    assert_eq!(
        ok("{for s in [\"a\", \"bb\", \"cc\"] : length(s) => s...}"),
        obj(&[("1", list(&[s("a")])), ("2", list(&[s("bb"), s("cc")]))])
    );
    assert_eq!(
        ok(
            "{for p in [{k = \"x\", v = 1}, {k = \"y\", v = 2}, {k = \"x\", v = 3}] : p.k => p.v...}"
        ),
        obj(&[("x", list(&[n(1), n(3)])), ("y", list(&[n(2)]))])
    );
    let src = "{for x in [\"a\", \"b\", \"a\"] : x => 1}";
    let d = fails(src);
    assert_eq!(d.summary, "Duplicate object key");
    assert_eq!(
        d.detail,
        "Two different items produced the key \"a\" in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key."
    );
    // HCL blames the key expression.
    assert_eq!(columns(&d), (29, 30));
}

#[test]
fn for_with_unknowns() {
    assert_eq!(ok("[for x in var.unknown : x]"), Value::unknown());
    assert_eq!(ok("{for x in var.unknown : x => x}"), Value::unknown());
    // Unknown elements of a known collection stay where they are.
    assert_eq!(
        ok("[for x in var.partial : x]"),
        list(&[n(1), Value::unknown()])
    );
    // One unknown `if` makes the whole result unknown.
    assert_eq!(ok("[for x in var.partial : x if x > 0]"), Value::unknown());
    assert_eq!(
        ok("{for x in var.partial : x => x if x > 0}"),
        Value::unknown()
    );
    // An unknown key makes an object result unknown.
    assert_eq!(ok("{for x in var.partial : x => 1}"), Value::unknown());
}

#[test]
fn for_errors() {
    fails_with(
        "[for x in null : x]",
        "Iteration over null value",
        "A null value cannot be used as the collection in a 'for' expression.",
    );
    fails_with(
        "[for x in \"abc\" : x]",
        "Iteration over non-iterable value",
        "A value of type string cannot be used as the collection in a 'for' expression.",
    );
    // The `if` clause is checked once before iterating, with unknown variables.
    fails_with(
        "[for x in [1] : x if null]",
        "Condition is null",
        "The value of the 'if' clause must not be null.",
    );
    fails_with(
        "[for x in [1] : x if 1]",
        "Invalid 'for' condition",
        "The 'if' clause value is invalid: bool required.",
    );
    // An unknown collection (of unknown type) is unknown before the check.
    assert_eq!(ok("[for x in var.unknown : x if 1]"), Value::unknown());
    fails_with(
        "[for x in [{a = null}] : x if x.a]",
        "Invalid 'for' condition",
        "The value of the 'if' clause must not be null.",
    );
    fails_with(
        "[for x in [\"yes\"] : x if x]",
        "Invalid 'for' condition",
        "The 'if' clause value is invalid: a bool is required.",
    );
    fails_with(
        "{for x in [null] : x => 1}",
        "Invalid object key",
        "Key expression in 'for' expression must not produce a null value.",
    );
    fails_with(
        "{for x in [[1]] : x => 1}",
        "Invalid object key",
        "The key expression produced an invalid result: string required.",
    );
    // "true"/"false" and "1"/"0" strings are conditions too, as cty converts them.
    assert_eq!(
        ok("[for x in [\"1\", \"0\", \"true\"] : x if x]"),
        list(&[s("1"), s("true")])
    );
}

#[test]
fn splats_over_lists_single_values_and_null() {
    assert_eq!(ok("var.servers[*].id"), list(&[s("s0"), s("s1")]));
    assert_eq!(ok("var.servers.*.id"), list(&[s("s0"), s("s1")]));
    assert_eq!(
        ok("var.servers[*].tags[\"env\"]"),
        list(&[s("prod"), s("dev")])
    );
    assert_eq!(ok("var.servers[*].ports[1]"), list(&[n(443), n(443)]));
    // The legacy attribute-only splat ends at the first index: the index
    // applies to the splat's result.
    assert_eq!(ok("var.servers.*.id[1]"), s("s1"));
    assert_eq!(ok("var.servers.*.ports.0"), list(&[n(80), n(80)]));
    assert_eq!(ok("[{a = 1}, {a = 2}][*].a"), list(&[n(1), n(2)]));
    assert_eq!(ok("var.set[*]"), list(&[s("a"), s("b")]));
    // A non-list value becomes a one-element tuple; null an empty one.
    assert_eq!(ok("var.single[*].id"), list(&[s("one")]));
    assert_eq!(ok("\"x\"[*]"), list(&[s("x")]));
    assert_eq!(ok("var.nothing[*]"), list(&[]));
    assert_eq!(ok("var.nothing[*].id"), list(&[]));
    assert_eq!(ok("length(var.nothing[*])"), n(0));
}

#[test]
fn splats_nest_and_propagate_unknowns() {
    assert_eq!(
        ok("var.groups[*].members[*].name"),
        list(&[list(&[s("a"), s("b")]), list(&[s("c")])])
    );
    assert_eq!(ok("var.unknown[*].id"), Value::unknown());
    assert_eq!(ok("var.unknown.*.id"), Value::unknown());
    assert_eq!(ok("var.partial[*]"), list(&[n(1), Value::unknown()]));
    assert_eq!(
        ok("[var.single, var.unknown][*].id"),
        list(&[s("one"), Value::unknown()])
    );
    fails_with(
        "var.servers[*].nope",
        "Unsupported attribute",
        "This object does not have an attribute named \"nope\".",
    );
}

#[test]
fn conditionals_with_unknown_and_mismatched_results() {
    assert_eq!(ok("var.unknown ? 1 : 2"), Value::unknown());
    // Both results null: the result is null whatever the condition.
    assert_eq!(ok("var.unknown ? null : null"), Value::null());
    // Errors in results are only reported for the result taken.
    assert_eq!(ok("var.unknown ? var.nope : 1"), Value::unknown());
    assert_eq!(ok("true ? 1 : var.nope"), n(1));
    assert_eq!(
        fails("false ? 1 : var.nope").summary,
        "Reference to undeclared input variable"
    );
    // The results are unified to a common type: number and string → string.
    assert_eq!(ok("true ? 1 : \"a\""), s("1"));
    assert_eq!(ok("false ? 1 : \"a\""), s("a"));
    assert_eq!(ok("true ? [1] : [\"a\"]"), list(&[s("1")]));
    assert_eq!(ok("true ? {a = 1} : {}"), obj(&[("a", n(1))]));
    assert_eq!(ok("true ? true : null"), Value::Bool(true));
    assert_eq!(ok("false ? [1, 2] : []"), list(&[]));
    fails_with(
        "true ? \"a\" : []",
        "Inconsistent conditional result types",
        "The true and false result expressions must have consistent types. The 'true' value is string, but the 'false' value is tuple.",
    );
    fails_with(
        "var.unknown ? {a = 1} : {b = []}",
        "Inconsistent conditional result types",
        "The true and false result expressions must have consistent types. The 'true' value includes object attribute \"a\", which is absent in the 'false' value.",
    );
    fails_with(
        "true ? [1] : [1, 2, []]",
        "Inconsistent conditional result types",
        "The true and false result expressions must have consistent types. The 'true' tuple has length 1, but the 'false' tuple has length 3.",
    );
    fails_with(
        "null ? 1 : 2",
        "Null condition",
        "The condition value is null. Conditions must either be true or false.",
    );
    fails_with(
        "\"yes\" ? 1 : 2",
        "Incorrect condition type",
        "The condition expression must be of type bool.",
    );
    fails_with(
        "[] ? 1 : 2",
        "Incorrect condition type",
        "The condition expression must be of type bool.",
    );
    assert_eq!(ok("\"true\" ? 1 : 2"), n(1));
}

#[test]
fn logical_operators_evaluate_both_sides_like_terraform_1_9() {
    // cty's And/Or do not accept unknowns: any unknown operand → unknown.
    assert_eq!(ok("false && var.unknown"), Value::unknown());
    assert_eq!(ok("var.unknown && false"), Value::unknown());
    assert_eq!(ok("true || var.unknown"), Value::unknown());
    assert_eq!(ok("true && true"), Value::Bool(true));
    assert_eq!(ok("false || \"true\""), Value::Bool(true));
    assert_eq!(ok("!\"false\""), Value::Bool(true));
    // No short circuit: an error on the right is reported even after false &&.
    assert_eq!(
        fails("false && var.nope").summary,
        "Reference to undeclared input variable"
    );
    fails_with(
        "false && \"x\"",
        "Invalid operand",
        "Unsuitable value for right operand: a bool is required.",
    );
    fails_with(
        "1 && true",
        "Invalid operand",
        "Unsuitable value for left operand: bool required.",
    );
    fails_with(
        "!1",
        "Invalid operand",
        "Unsuitable value for unary operand: bool required.",
    );
    fails_with(
        "null && true",
        "Operation failed",
        "Error during operation: argument must not be null.",
    );
}

#[test]
fn arithmetic_operand_errors() {
    fails_with(
        "1 + \"a\"",
        "Invalid operand",
        "Unsuitable value for right operand: a number is required.",
    );
    fails_with(
        "[] * 2",
        "Invalid operand",
        "Unsuitable value for left operand: number required.",
    );
    // Operand conversion comes before unknown propagation.
    fails_with(
        "\"a\" + var.unknown",
        "Invalid operand",
        "Unsuitable value for left operand: a number is required.",
    );
    fails_with(
        "null + 1",
        "Operation failed",
        "Error during operation: argument must not be null.",
    );
    fails_with(
        "-null",
        "Operation failed",
        "Error during operation: argument must not be null.",
    );
    fails_with(
        "-\"x\"",
        "Invalid operand",
        "Unsuitable value for unary operand: a number is required.",
    );
    assert_eq!(ok("\"2\" * \"3\""), n(6));
    assert_eq!(ok("var.unknown * 2"), Value::unknown());
    assert_eq!(ok("var.unknown > 2"), Value::unknown());
    assert_eq!(ok("null == null"), Value::Bool(true));
    assert_eq!(ok("null == 1"), Value::Bool(false));
    assert_eq!(ok("1 != \"1\""), Value::Bool(true));
    assert_eq!(ok("var.unknown == null"), Value::unknown());
    // Different lengths never compare equal, whatever the unknowns become.
    assert_eq!(ok("var.partial == [1, 2, 3]"), Value::Bool(false));
    assert_eq!(ok("var.partial == [1, 2]"), Value::unknown());
}

#[test]
fn heredocs_and_template_directives() {
    assert_eq!(ok("<<EOT\nhello\n  world\nEOT"), s("hello\n  world\n"));
    assert_eq!(ok("<<-EOT\n    a\n      b\n    EOT"), s("a\n  b\n"));
    assert_eq!(
        ok("<<-EOT\n\t\tx ${var.list[0]}\n\t\t  y\n\tEOT"),
        s("x a\n  y\n")
    );
    assert_eq!(ok("\"%{ if true ~} yes %{~ endif }\""), s("yes"));
    assert_eq!(
        ok("\"a %{~ if false ~} b %{~ else ~} c %{~ endif ~} d\""),
        s("acd")
    );
    assert_eq!(
        ok("\"a %{ if false } b %{ else } c %{ endif } d\""),
        s("a  c  d")
    );
    assert_eq!(ok("\"%{ for x in var.list ~} ${x} %{~ endfor }\""), s("ab"));
    assert_eq!(
        ok("\"[%{ for i, x in var.list }${i}:${x},%{ endfor }]\""),
        s("[0:a,1:b,]")
    );
    assert_eq!(
        ok("<<EOT\n%{ for x in var.list ~}\n- ${x}\n%{ endfor ~}\nEOT"),
        s("- a\n- b\n")
    );
    assert_eq!(ok("\"$${x} %%{y}\""), s("${x} %{y}"));
    assert_eq!(ok("\"${1 + 1}${true}\""), s("2true"));
}

/// A `~` trims only the literal token next to it: one line of a heredoc
/// or template file (so blank lines and indentation further on stay), all
/// of a quoted string's text. Expectations taken from terraform 1.11.4.
#[test]
fn strip_markers_reach_one_line_in_heredocs_and_all_of_a_quoted_string() {
    let heredoc =
        "<<EOT\nA\n%{ for x in [\"a\",\"b\"] ~}\n\n\n    ${x}\n  %{~ endfor ~}  \n\n  done\nEOT";
    assert_eq!(ok(heredoc), s("A\n\n\n    a\n\n\n    b\n\n  done\n"));
    let interp = "<<EOT\na\n  ${~ \"x\" ~}  b\n\nc\nx  \n  \n%{~ if true }y%{ endif }\nEOT";
    assert_eq!(ok(interp), s("a\nxb\n\nc\nx  \ny\n"));
    let same_line = "<<EOT\na   %{~ if true ~}   q   %{~ endif ~}   \n  b\nEOT";
    assert_eq!(ok(same_line), s("aq  b\n"));
    assert_eq!(ok(r#""A\n  ${~ "x" ~}  \n\n  B""#), s("AxB"));
}

/// A `<<-` heredoc dedents the lines inside its directives by the same
/// amount as its own. Expectations taken from terraform 1.11.4.
#[test]
fn flush_heredocs_dedent_directive_bodies_too() {
    let flush = "<<-EOT\n    A\n    %{ for x in [\"a\",\"b\"] ~}\n\n        ${x}\n    %{ endfor ~}\n\n      done\n    EOT";
    assert_eq!(ok(flush), s("A\n\n    a\n\n    b\n\n  done\n"));
    let nested = "<<-EOT\n    start\n    %{ for x in [\"a\", \"b\"] }\n      item ${x}\n      %{ if x == \"a\" }\n        first\n      %{ else }\n        other\n      %{ endif }\n    %{ endfor }\n    end\n    EOT";
    assert_eq!(
        ok(nested),
        s("start\n\n  item a\n  \n    first\n  \n\n  item b\n  \n    other\n  \n\nend\n")
    );
}

#[test]
fn templates_with_unknown_null_and_non_string_values() {
    assert_eq!(ok("\"x${var.unknown}\""), Value::unknown());
    assert_eq!(ok("\"%{ if var.unknown }a%{ endif }\""), Value::unknown());
    assert_eq!(
        ok("\"%{ for x in var.unknown }${x}%{ endfor }\""),
        Value::unknown()
    );
    assert_eq!(
        ok("\"%{ for x in var.partial }${x}%{ endfor }\""),
        Value::unknown()
    );
    // A lone interpolation is the value itself, even null or unknown.
    assert_eq!(ok("\"${var.nothing}\""), Value::null());
    fails_with(
        "\"x${null}\"",
        "Invalid template interpolation value",
        "The expression result is null. Cannot include a null value in a string template.",
    );
    fails_with(
        "\"x${var.list}\"",
        "Invalid template interpolation value",
        "Cannot include the given value in a string template: string required.",
    );
    fails_with(
        "\"x${var.single}\"",
        "Invalid template interpolation value",
        "Cannot include the given value in a string template: string required.",
    );
    fails_with(
        "\"%{ if null }a%{ endif }\"",
        "Null condition",
        "The condition value is null. Conditions must either be true or false.",
    );
    fails_with(
        "\"%{ for x in [1, null] }${x}%{ endfor }\"",
        "Invalid template interpolation value",
        "The expression result is null. Cannot include a null value in a string template.",
    );
    // The error points at the interpolated expression.
    let d = fails("\"abc${null}\"");
    assert_eq!(columns(&d), (7, 11));
}

#[test]
fn index_and_attribute_access_on_unknown_and_null() {
    assert_eq!(ok("var.unknown.foo"), Value::unknown());
    assert_eq!(ok("var.unknown[0]"), Value::unknown());
    assert_eq!(ok("var.unknown[\"k\"].x[3]"), Value::unknown());
    assert_eq!(ok("var.list[var.unknown]"), Value::unknown());
    assert_eq!(ok("var.partial[1]"), Value::unknown());
    fails_with(
        "var.nothing.foo",
        "Attempt to get attribute from null value",
        "This value is null, so it does not have any attributes.",
    );
    fails_with(
        "var.nothing[0]",
        "Attempt to index null value",
        "This value is null, so it does not have any indices.",
    );
    // A null collection is an error even with an unknown key.
    fails_with(
        "var.nothing[var.unknown]",
        "Attempt to index null value",
        "This value is null, so it does not have any indices.",
    );
    fails_with(
        "var.list[null]",
        "Invalid index",
        "Can't use a null value as an indexing key.",
    );
}

#[test]
fn index_errors_and_key_conversion() {
    let invalid = "The given key does not identify an element in this collection value";
    fails_with(
        "var.list[-1]",
        "Invalid index",
        &format!("{invalid}: a negative number is not a valid index for a sequence."),
    );
    fails_with(
        "var.list[2]",
        "Invalid index",
        &format!(
            "{invalid}: the given index is greater than or equal to the length of the collection."
        ),
    );
    fails_with(
        "[][0]",
        "Invalid index",
        &format!("{invalid}: the collection has no elements."),
    );
    fails_with(
        "var.list[0.5]",
        "Invalid index",
        &format!(
            "{invalid}: indexing a sequence requires a whole number, but the given index has a fractional part."
        ),
    );
    fails_with(
        "var.list[\"x\"]",
        "Invalid index",
        &format!("{invalid}: a number is required."),
    );
    fails_with(
        "var.list[[]]",
        "Invalid index",
        &format!("{invalid}: number required."),
    );
    fails_with("{a = 1}[\"b\"]", "Invalid index", &format!("{invalid}."));
    fails_with(
        "{a = 1}[0]",
        "Invalid index",
        &format!(
            "{invalid}. An object only supports looking up attributes by name, not by numeric index."
        ),
    );
    fails_with(
        "\"abc\"[0]",
        "Invalid index",
        "This value does not have any indices.",
    );
    // Numeric strings index lists; numbers and bools index maps by their string form.
    assert_eq!(ok("var.list[\"1\"]"), s("b"));
    assert_eq!(ok("var.list[1.0]"), s("b"));
    assert_eq!(ok("var.map[1]"), s("one"));
    assert_eq!(ok("{\"true\" = 1}[true]"), n(1));
    assert_eq!(ok("var.map.key"), s("v"));
    assert_eq!(ok("var.map[\"key\"]"), s("v"));
    assert_eq!(ok("var.list.1"), s("b"));
}

#[test]
fn attribute_errors() {
    fails_with(
        "{a = 1}.b",
        "Unsupported attribute",
        "This object does not have an attribute named \"b\".",
    );
    fails_with(
        "\"x\".y",
        "Unsupported attribute",
        "Can't access attributes on a primitive-typed value (string).",
    );
    // HCL hints by the type: a list of objects, a set of objects; a tuple
    // of objects has no attributes (checked with Terraform 1.11.4).
    fails_with(
        "tolist(var.servers).id",
        "Unsupported attribute",
        "Can't access attributes on a list of objects. Did you mean to access attribute \"id\" for a specific element of the list, or across all elements of the list?",
    );
    fails_with(
        "var.servers.id",
        "Unsupported attribute",
        "This value does not have any attributes.",
    );
    fails_with(
        "toset([{a = 1}]).a",
        "Unsupported attribute",
        "Can't access attributes on a set of objects. Did you mean to access an attribute across all elements of the set?",
    );
    fails_with(
        "tomap({a = 1}).b",
        "Missing map element",
        "This map does not have an element with the key \"b\".",
    );
    fails_with(
        "tolist(var.servers).nope",
        "Unsupported attribute",
        "Can't access attributes on a list of objects. Did you mean to access an attribute for a specific element of the list, or across all elements of the list?",
    );
    fails_with(
        "[1, 2].x",
        "Unsupported attribute",
        "This value does not have any attributes.",
    );
}

#[test]
fn object_constructor_keys() {
    fails_with(
        "{ (null) = 1 }",
        "Null value as key",
        "Can't use a null value as a key.",
    );
    fails_with(
        "{ ([]) = 1 }",
        "Incorrect key type",
        "Can't use this value as a key: string required.",
    );
    assert_eq!(
        ok("{ (1) = 1, (true) = 2 }"),
        obj(&[("1", n(1)), ("true", n(2))])
    );
    assert_eq!(ok("{ a = var.unknown }"), obj(&[("a", Value::unknown())]));
}
