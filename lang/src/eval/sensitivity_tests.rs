//! How sensitivity marks flow through expressions: one test per rule, each
//! checking both what is marked and what is not.

use super::*;
use fleetform_shared::value::PathStep;

fn key(k: &str) -> PathStep {
    PathStep::Key(k.into())
}

fn idx(i: i64) -> PathStep {
    PathStep::Index(i)
}

fn s(x: &str) -> Value {
    Value::from(x)
}

/// `var.secret` is a sensitive variable; `var.o` only has `o.b` sensitive;
/// `var.pair` has its second element sensitive; `var.objs` is a list of
/// objects whose `b` is sensitive; `random_password.p.result` is sensitive
/// by schema.
fn scope() -> MapScope {
    let obj = |a: &str, b: &str| Value::object([("a", s(a)), ("b", s(b))]);
    MapScope::new()
        .with_variable("secret", s("hunter2"))
        .with_marks(Reference::Variable("secret".into()), Marks::whole())
        .with_variable("flag", Value::Bool(true))
        .with_marks(Reference::Variable("flag".into()), Marks::whole())
        .with_variable("secrets", Value::tuple(vec![s("x"), s("y")]))
        .with_marks(Reference::Variable("secrets".into()), Marks::whole())
        .with_variable("plain", s("visible"))
        .with_variable("o", obj("A", "B"))
        .with_marks(
            Reference::Variable("o".into()),
            Marks::whole().nest(key("b")),
        )
        .with_variable("pair", Value::tuple(vec![s("p0"), s("p1")]))
        .with_marks(
            Reference::Variable("pair".into()),
            Marks::whole().nest(idx(1)),
        )
        .with_variable("objs", Value::tuple(vec![obj("a0", "b0"), obj("a1", "b1")]))
        .with_marks(
            Reference::Variable("objs".into()),
            Marks::from_paths([vec![idx(0), key("b")], vec![idx(1), key("b")]]),
        )
        .with_local("unknown", Value::unknown())
        .with_resource(
            Resource::managed("random_password", "p"),
            Value::object([("id", s("none")), ("result", s("pw"))]),
        )
        .with_marks(
            Reference::Resource(Resource::managed("random_password", "p")),
            Marks::whole().nest(key("result")),
        )
}

fn marks(src: &str) -> Marks {
    let e = parse_expression("test.tf", src).expect("parses");
    let (_, m) = evaluate_marked(&e, &scope()).unwrap_or_else(|d| panic!("{src}: {d}"));
    m
}

fn sensitive(src: &str) {
    assert!(marks(src).is_whole(), "{src} should be sensitive");
}

fn not_sensitive(src: &str) {
    let m = marks(src);
    assert!(m.is_empty(), "{src} should not be sensitive: {m:?}");
}

#[test]
fn references_carry_the_marks_the_scope_reports() {
    sensitive("var.secret");
    not_sensitive("var.plain");
    assert_eq!(
        marks("random_password.p"),
        Marks::whole().nest(key("result"))
    );
    // evaluate() still returns the plain value for existing callers.
    let e = parse_expression("t.tf", "var.secret").unwrap();
    assert_eq!(evaluate(&e, &scope()), Ok(s("hunter2")));
}

#[test]
fn traversal_narrows_to_the_element_taken() {
    not_sensitive("var.o.a");
    sensitive("var.o.b");
    not_sensitive("var.pair[0]");
    sensitive("var.pair[1]");
    not_sensitive("random_password.p.id");
    sensitive("random_password.p.result");
}

#[test]
fn every_element_of_a_wholly_sensitive_collection_is_sensitive() {
    sensitive("var.secrets[0]");
    sensitive("var.secrets[1]");
    // A sensitive index makes the element it selects sensitive.
    sensitive("var.pair[var.flag ? 0 : 1]");
}

#[test]
fn operators_mark_their_result_when_an_operand_is_sensitive() {
    sensitive("var.secret == \"x\"");
    sensitive("!var.flag");
    sensitive("var.o.b != var.plain");
    not_sensitive("var.o.a == var.plain");
    // Any sensitive part of an operand counts.
    sensitive("var.o == var.o");
}

#[test]
fn templates_are_sensitive_when_anything_interpolated_is() {
    sensitive("\"user:${var.secret}\"");
    not_sensitive("\"user:${var.plain}-${var.o.a}\"");
    sensitive("\"%{if var.flag}yes%{endif}\"");
    sensitive("\"%{for x in var.secrets}${x}%{endfor}\"");
    // A single interpolation is the value itself, marks and all.
    assert_eq!(marks("\"${var.o}\""), Marks::whole().nest(key("b")));
}

#[test]
fn function_results_are_sensitive_when_an_argument_is() {
    sensitive("upper(var.secret)");
    sensitive("jsonencode(var.o)");
    sensitive("coalesce(var.plain, var.secret)");
    not_sensitive("upper(var.plain)");
    // The expanded argument's elements keep their marks.
    sensitive("format(\"%s-%s\", var.pair...)");
    not_sensitive("format(\"%s\", slice(var.pair, 0, 1)...)");
}

#[test]
fn length_and_keys_are_sensitive_only_for_a_wholly_sensitive_argument() {
    sensitive("length(var.secrets)");
    sensitive("length(var.secret)");
    not_sensitive("length(var.pair)");
    not_sensitive("keys(var.o)");
    sensitive("keys(sensitive(var.o))");
}

#[test]
fn functions_that_move_elements_keep_their_marks() {
    assert_eq!(marks("reverse(var.pair)"), Marks::whole().nest(idx(0)));
    not_sensitive("lookup(var.o, \"a\", \"d\")");
    sensitive("lookup(var.o, \"b\", \"d\")");
    sensitive("lookup(var.o, \"zz\", var.secret)");
    assert_eq!(
        marks("merge(var.o, { c = 1 })"),
        Marks::whole().nest(key("b"))
    );
    not_sensitive("merge(var.o, { b = 1 }).b");
    assert_eq!(marks("tolist(var.pair)"), Marks::whole().nest(idx(1)));
    sensitive("toset(var.pair)");
}

#[test]
fn sensitive_and_nonsensitive_set_and_lift_the_mark() {
    sensitive("sensitive(\"x\")");
    sensitive("sensitive(var.plain)");
    not_sensitive("nonsensitive(var.secret)");
    not_sensitive("nonsensitive(sha256(var.secret))");
    // Terraform 1.x (since 1.7) accepts a value that is not sensitive.
    not_sensitive("nonsensitive(var.plain)");
    // Shallow, like Terraform: the parts of a value keep their own marks.
    sensitive("nonsensitive(var.o).b");
    not_sensitive("issensitive(var.secret)");
    let e = parse_expression("t.tf", "[issensitive(var.secret), issensitive(var.o)]").unwrap();
    let (v, _) = evaluate_marked(&e, &scope()).unwrap();
    assert_eq!(v, Value::tuple(vec![Value::Bool(true), Value::Bool(false)]));
}

#[test]
fn try_keeps_the_marks_of_the_argument_it_returns_and_can_is_never_sensitive() {
    sensitive("try(var.o.b, \"fallback\")");
    not_sensitive("try(var.o.nope, var.o.a)");
    sensitive("try(var.o.nope, var.secret)");
    not_sensitive("can(var.secret)");
}

#[test]
fn constructors_keep_per_element_marks() {
    assert_eq!(
        marks("[var.plain, var.secret]"),
        Marks::whole().nest(idx(1))
    );
    assert_eq!(
        marks("{ a = var.plain, b = var.secret }"),
        Marks::whole().nest(key("b"))
    );
    assert_eq!(
        marks("{ inner = var.o }"),
        Marks::whole().nest(key("b")).nest(key("inner"))
    );
    not_sensitive("{ a = var.plain, b = var.secret }.a");
    // A key set twice keeps the marks of its last value.
    not_sensitive("{ (var.plain) = var.secret, (\"visible\") = var.o.a }");
    // A sensitive key makes the object itself sensitive.
    sensitive("{ (var.secret) = 1 }");
}

#[test]
fn conditionals_are_sensitive_when_the_condition_or_a_whole_result_is() {
    sensitive("var.flag ? \"a\" : \"b\"");
    sensitive("var.flag ? var.plain : var.plain");
    not_sensitive("true ? var.plain : var.o.a");
    // As in HCL, the result not taken still contributes its own mark.
    sensitive("true ? var.plain : var.secret");
    // Only the taken result's parts are kept.
    assert_eq!(
        marks("true ? var.o : { a = \"x\", b = \"y\" }"),
        Marks::whole().nest(key("b"))
    );
    // (Both results are objects: a string and an object have no common type.)
    sensitive("local.unknown ? { a = \"x\", b = \"y\" } : var.o");
}

#[test]
fn for_expressions_over_a_sensitive_collection_are_sensitive() {
    sensitive("[for x in var.secrets : upper(x)]");
    sensitive("{ for x in var.secrets : x => 1 }");
    // Over a collection with sensitive elements, the elements keep them.
    assert_eq!(
        marks("[for x in var.pair : upper(x)]"),
        Marks::whole().nest(idx(1))
    );
    assert_eq!(
        marks("{ for k, v in var.o : k => v }"),
        Marks::whole().nest(key("b"))
    );
    not_sensitive("[for x in var.pair : 1]");
    // A sensitive condition or key makes the whole result sensitive.
    sensitive("[for x in var.pair : x if var.flag]");
    sensitive("{ for x in var.pair : \"${x}${var.secret}\" => 1 }");
    assert_eq!(
        marks("{ for k, v in var.o : \"g\" => v... }"),
        Marks::whole().nest(idx(1)).nest(key("g"))
    );
}

#[test]
fn splats_keep_element_marks() {
    assert_eq!(
        marks("var.objs[*].b"),
        Marks::from_paths([vec![idx(0)], vec![idx(1)]])
    );
    not_sensitive("var.objs[*].a");
    sensitive("var.secrets[*]");
}
