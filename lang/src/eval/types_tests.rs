//! Type constraints and conversion against Terraform 1.9 (cty 1.14):
//! `optional()` with defaults, collection kinds, unification of `any`,
//! primitive conversions and cty's mismatch messages.

use super::typeexpr::{TypeDefaults, type_constraint_with_defaults};
use super::*;
use fleetform_shared::types::Type;
use fleetform_shared::value::Number;

fn s(x: &str) -> Value {
    Value::from(x)
}

fn n(i: i64) -> Value {
    Value::int(i)
}

fn list(items: &[Value]) -> Value {
    Value::tuple(items.to_vec())
}

fn obj(items: &[(&str, Value)]) -> Value {
    Value::object(items.iter().cloned())
}

fn value(src: &str) -> Value {
    let e = parse_expression("value.tf", src).expect("value parses");
    evaluate(&e, &EmptyScope).expect("value evaluates")
}

fn constraint(src: &str) -> (Type, Option<TypeDefaults>) {
    let e = parse_expression("type.tf", src).expect("type parses");
    type_constraint_with_defaults(&e).unwrap_or_else(|d| panic!("{src}: {d}"))
}

fn constraint_error(src: &str) -> (String, String) {
    let e = parse_expression("type.tf", src).expect("type parses");
    let d = type_constraint_with_defaults(&e).expect_err("invalid type");
    let d = &d.0[0];
    (d.summary.clone(), d.detail.clone())
}

/// Converts `val` to the constraint `ty` the way Terraform prepares a
/// variable's value: defaults first, then conversion.
fn conv(ty: &str, val: &str) -> Result<Value, String> {
    let (t, defaults) = constraint(ty);
    let v = value(val);
    let v = match &defaults {
        Some(d) => d.apply(v),
        None => v,
    };
    convert(v, &t)
}

fn ok(ty: &str, val: &str) -> Value {
    conv(ty, val).unwrap_or_else(|e| panic!("{ty} <- {val}: {e}"))
}

fn err(ty: &str, val: &str) -> String {
    match conv(ty, val) {
        Ok(v) => panic!("{ty} <- {val}: expected an error, got {v:?}"),
        Err(e) => e,
    }
}

#[test]
fn primitives_convert_like_cty() {
    assert_eq!(ok("string", "1.5"), s("1.5"));
    assert_eq!(ok("string", "true"), s("true"));
    assert_eq!(ok("number", "\"1.5\""), Value::Number(Number::Float(1.5)));
    assert_eq!(ok("number", "\"-7\""), n(-7));
    assert_eq!(ok("number", "\"1e3\""), n(1000));
    assert_eq!(ok("bool", "\"true\""), Value::Bool(true));
    assert_eq!(ok("bool", "\"false\""), Value::Bool(false));
    assert_eq!(ok("bool", "\"1\""), Value::Bool(true));
    assert_eq!(ok("bool", "\"0\""), Value::Bool(false));
    assert_eq!(err("number", "\"x\""), "a number is required");
    assert_eq!(err("bool", "\"yes\""), "a bool is required");
    assert_eq!(
        err("bool", "\"True\""),
        "a bool is required; to convert from string, use lowercase \"true\""
    );
    assert_eq!(
        err("bool", "\"FALSE\""),
        "a bool is required; to convert from string, use lowercase \"false\""
    );
    assert_eq!(err("number", "true"), "number required");
    assert_eq!(err("bool", "1"), "bool required");
    assert_eq!(err("string", "[\"a\"]"), "string required");
    assert_eq!(err("string", "{}"), "string required");
    // Null and unknown convert to anything.
    assert_eq!(ok("number", "null"), Value::null());
    assert_eq!(
        convert(Value::unknown(), &Type::list(Type::String)),
        Ok(Value::unknown())
    );
}

#[test]
fn collections_convert_elementwise() {
    assert_eq!(
        ok("list(string)", "[1, true, \"x\"]"),
        list(&[s("1"), s("true"), s("x")])
    );
    assert_eq!(
        ok("map(number)", "{a = \"1\", b = 2}"),
        obj(&[("a", n(1)), ("b", n(2))])
    );
    assert_eq!(
        ok("list(tuple([string, number]))", "[[1, \"2\"]]"),
        list(&[list(&[s("1"), n(2)])])
    );
    // Runtime conversion failures carry no path, as in Terraform 1.9.
    assert_eq!(err("list(number)", "[1, \"x\"]"), "a number is required");
    // Kind mismatches say what was required, with the path inside.
    assert_eq!(
        err("map(string)", "{a = []}"),
        "element \"a\": string required"
    );
    assert_eq!(
        err("list(string)", "[\"a\", {}]"),
        "element 1: string required"
    );
    assert_eq!(err("list(string)", "\"a\""), "list of string required");
    assert_eq!(
        err("list(string)", "{a = \"b\"}"),
        "list of string required"
    );
    assert_eq!(err("set(number)", "1"), "set of number required");
    assert_eq!(err("map(string)", "[\"a\"]"), "map of string required");
    assert_eq!(
        err("list(any)", "\"a\""),
        "list of any single type required"
    );
    assert_eq!(err("tuple([string])", "[\"a\", \"b\"]"), "tuple required");
    assert_eq!(err("tuple([string])", "{}"), "tuple required");
    assert_eq!(err("object({a = string})", "[]"), "object required");
    assert_eq!(
        err("list(list(number))", "[[1], [[]]]"),
        "element 1: element 0: number required"
    );
}

#[test]
fn sets_are_deduplicated_and_ordered() {
    assert_eq!(
        ok("set(string)", "[\"b\", \"a\", \"b\"]"),
        list(&[s("a"), s("b")])
    );
    assert_eq!(
        ok("set(number)", "[10, 2, \"2\", 1.5]"),
        list(&[Value::Number(Number::Float(1.5)), n(2), n(10)])
    );
    assert_eq!(
        ok("set(bool)", "[true, false, true]"),
        list(&[Value::Bool(false), Value::Bool(true)])
    );
    // Unknowns are kept (each may become any value) and sort last.
    let v = convert(
        list(&[Value::unknown(), s("b"), Value::unknown(), s("a")]),
        &Type::set(Type::String),
    );
    assert_eq!(
        v,
        Ok(list(&[s("a"), s("b"), Value::unknown(), Value::unknown()]))
    );
    assert_eq!(ok("set(any)", "[1, \"1\"]"), list(&[s("1")]));
}

#[test]
fn any_unifies_element_types() {
    assert_eq!(ok("any", "[1, \"a\"]"), list(&[n(1), s("a")]));
    assert_eq!(ok("list(any)", "[1, \"a\"]"), list(&[s("1"), s("a")]));
    assert_eq!(
        ok("list(any)", "[1, null, 2]"),
        list(&[n(1), Value::null(), n(2)])
    );
    assert_eq!(
        ok("map(any)", "{a = 1, b = \"x\"}"),
        obj(&[("a", s("1")), ("b", s("x"))])
    );
    assert_eq!(
        ok("map(any)", "{a = true, b = \"x\"}"),
        obj(&[("a", s("true")), ("b", s("x"))])
    );
    assert_eq!(
        err("list(any)", "[1, true]"),
        "all list elements must have the same type"
    );
    assert_eq!(
        err("set(any)", "[[], \"a\"]"),
        "all set elements must have the same type"
    );
    assert_eq!(
        err("map(any)", "{a = 1, b = []}"),
        "all map elements must have the same type"
    );
    // Tuples of one length unify elementwise; different lengths become lists.
    assert_eq!(
        ok("list(any)", "[[1, \"a\"], [\"b\", 2]]"),
        list(&[list(&[s("1"), s("a")]), list(&[s("b"), s("2")])])
    );
    assert_eq!(
        ok("list(any)", "[[1], [\"b\", 2]]"),
        list(&[list(&[s("1")]), list(&[s("b"), s("2")])])
    );
    // Objects with the same attributes unify per attribute; otherwise to a map.
    assert_eq!(
        ok("list(any)", "[{a = 1}, {a = \"x\"}]"),
        list(&[obj(&[("a", s("1"))]), obj(&[("a", s("x"))])])
    );
    assert_eq!(
        ok("list(any)", "[{a = 1}, {b = \"x\"}]"),
        list(&[obj(&[("a", s("1"))]), obj(&[("b", s("x"))])])
    );
    assert_eq!(
        ok("list(map(any))", "[{a = 1}, {b = \"x\"}]"),
        list(&[obj(&[("a", s("1"))]), obj(&[("b", s("x"))])])
    );
    assert_eq!(
        ok("map(any)", "{x = {a = 1, b = true}}"),
        obj(&[("x", obj(&[("a", n(1)), ("b", Value::Bool(true))]))])
    );
}

#[test]
fn objects_report_missing_and_mismatched_attributes() {
    let ty = "object({a = string, b = number, c = optional(bool)})";
    assert_eq!(
        ok(ty, "{a = 1, b = \"2\", extra = []}"),
        obj(&[("a", s("1")), ("b", n(2)), ("c", Value::null())])
    );
    assert_eq!(err(ty, "{a = \"x\"}"), "attribute \"b\" is required");
    assert_eq!(err(ty, "{}"), "attributes \"a\" and \"b\" are required");
    assert_eq!(
        err("object({a = string, b = number, c = bool})", "{}"),
        "attributes \"a\", \"b\", and \"c\" are required"
    );
    assert_eq!(
        err(ty, "{a = [], b = 1}"),
        "attribute \"a\": string required"
    );
    assert_eq!(err(ty, "{a = \"x\", b = \"y\"}"), "a number is required");
    assert_eq!(
        err(
            "map(object({name = string}))",
            "{x = {name = \"a\"}, y = {}}"
        ),
        "element \"y\": attribute \"name\" is required"
    );
    assert_eq!(
        err("list(object({name = string}))", "[{name = \"a\"}, {}]"),
        "element 1: attribute \"name\" is required"
    );
    // A missing attribute is reported before a bad value elsewhere.
    assert_eq!(
        err(
            "object({a = number, b = object({c = string})})",
            "{a = \"x\", b = {}}"
        ),
        "attribute \"b\": attribute \"c\" is required"
    );
}

#[test]
fn optional_attributes_take_their_defaults() {
    let ty = "object({a = string, b = optional(string, \"x\"), c = optional(number)})";
    assert_eq!(
        ok(ty, "{a = \"1\"}"),
        obj(&[("a", s("1")), ("b", s("x")), ("c", Value::null())])
    );
    // An explicit null also takes the default.
    assert_eq!(
        ok(ty, "{a = \"1\", b = null}"),
        obj(&[("a", s("1")), ("b", s("x")), ("c", Value::null())])
    );
    assert_eq!(
        ok(ty, "{a = \"1\", b = \"given\", c = 3}"),
        obj(&[("a", s("1")), ("b", s("given")), ("c", n(3))])
    );
    // Defaults are converted to the attribute's type when the type is decoded.
    assert_eq!(
        ok("object({p = optional(string, 80)})", "{}"),
        obj(&[("p", s("80"))])
    );
    // A null value as a whole is not given defaults.
    assert_eq!(ok(ty, "null"), Value::null());
}

#[test]
fn defaults_apply_recursively_through_collections() {
    assert_eq!(
        ok(
            "list(object({n = optional(number, 5), s = optional(string)}))",
            "[{}, {n = 2}]"
        ),
        list(&[
            obj(&[("n", n(5)), ("s", Value::null())]),
            obj(&[("n", n(2)), ("s", Value::null())])
        ])
    );
    assert_eq!(
        ok(
            "map(object({n = optional(number, 5)}))",
            "{a = {}, b = {n = 1}}"
        ),
        obj(&[("a", obj(&[("n", n(5))])), ("b", obj(&[("n", n(1))]))])
    );
    assert_eq!(
        ok("set(object({n = optional(number, 5)}))", "[{}, {n = 5}]"),
        list(&[obj(&[("n", n(5))])])
    );
    // A default for a nested object gets that object's own defaults.
    let ty = "object({sub = optional(object({x = optional(number, 1), y = optional(string, \"y\")}), {})})";
    assert_eq!(
        ok(ty, "{}"),
        obj(&[("sub", obj(&[("x", n(1)), ("y", s("y"))]))])
    );
    assert_eq!(
        ok(ty, "{sub = {x = 7}}"),
        obj(&[("sub", obj(&[("x", n(7)), ("y", s("y"))]))])
    );
    assert_eq!(
        ok(
            "tuple([string, object({a = optional(bool, true)})])",
            "[\"x\", {}]"
        ),
        list(&[s("x"), obj(&[("a", Value::Bool(true))])])
    );
    assert_eq!(
        ok(
            "object({m = optional(map(object({k = optional(string, \"d\")})), {z = {}})})",
            "{}"
        ),
        obj(&[("m", obj(&[("z", obj(&[("k", s("d"))]))]))])
    );
    // Defaults leave unknowns alone.
    let (t, d) = constraint("object({a = optional(string, \"x\")})");
    assert_eq!(
        d.expect("defaults").apply(Value::unknown()),
        Value::unknown()
    );
    assert_eq!(convert(Value::unknown(), &t), Ok(Value::unknown()));
}

#[test]
fn constraint_keywords_and_their_errors() {
    assert_eq!(constraint("list").0, Type::list(Type::Dynamic));
    assert_eq!(constraint("map").0, Type::map(Type::Dynamic));
    // Only at the top, and only these two: Terraform's legacy shorthands.
    assert_eq!(
        constraint_error("list(list)").1,
        "The list type constructor requires one argument specifying the element type."
    );
    assert_eq!(
        constraint_error("set").1,
        "The set type constructor requires one argument specifying the element type."
    );
    assert_eq!(
        constraint_error("object").1,
        "The object type constructor requires one argument specifying the attribute types and values as a map."
    );
    assert_eq!(constraint("any").0, Type::Dynamic);
    assert_eq!(
        constraint("list(tuple([string, number]))").0,
        Type::list(Type::Tuple(vec![Type::String, Type::Number]))
    );
    assert!(constraint("map(string)").1.is_none());
    let invalid = "Invalid type specification";
    assert_eq!(
        constraint_error("optional(string)"),
        (
            invalid.into(),
            "Keyword \"optional\" is valid only as a modifier for object type attributes.".into()
        )
    );
    assert_eq!(
        constraint_error("object({a = optional(string, \"x\", 1)})"),
        (invalid.into(), "Optional attribute modifier expects at most two arguments: the attribute type, and a default value.".into())
    );
    assert_eq!(
        constraint_error("object({a = optional()})"),
        (
            invalid.into(),
            "Optional attribute modifier requires the attribute type as its argument.".into()
        )
    );
    assert_eq!(
        constraint_error("object({a = optional(number, \"x\")})"),
        (
            "Invalid default value for optional attribute".into(),
            "This default value is not compatible with the attribute's type constraint: a number is required.".into()
        )
    );
    assert_eq!(
        constraint_error("string(1)"),
        (
            invalid.into(),
            "Primitive type keyword \"string\" does not expect arguments.".into()
        )
    );
    assert_eq!(
        constraint_error("any()"),
        (
            invalid.into(),
            "Type constraint keyword \"any\" does not expect arguments.".into()
        )
    );
    assert_eq!(
        constraint_error("list(string, number)"),
        (
            invalid.into(),
            "The list type constructor requires one argument specifying the element type.".into()
        )
    );
    assert_eq!(
        constraint_error("object(string)"),
        (invalid.into(), "Object type constructor requires a map whose keys are attribute names and whose values are the corresponding attribute types.".into())
    );
    assert_eq!(
        constraint_error("foo"),
        (
            invalid.into(),
            "The keyword \"foo\" is not a valid type specification.".into()
        )
    );
    assert_eq!(
        constraint_error("foo(string)"),
        (
            invalid.into(),
            "Keyword \"foo\" is not a valid type constructor.".into()
        )
    );
    assert_eq!(
        constraint_error("[string]"),
        (invalid.into(), "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).".into())
    );
    assert_eq!(
        constraint_error("\"string\""),
        (
            "Invalid quoted type constraints".into(),
            "Terraform 0.11 and earlier required type constraints to be given in quotes, but that form is now deprecated and will be removed in a future version of Terraform. Remove the quotes around \"string\".".into()
        )
    );
    assert_eq!(
        constraint_error("\"list(string)\"").0,
        "Invalid legacy variable type hint"
    );
}
