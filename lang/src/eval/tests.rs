//! Evaluator tests: every expression form, unknown propagation, errors with ranges.

use super::*;
use fleetform_shared::value::Number;

fn scope() -> MapScope {
    let obj = |id: &str| {
        Value::object([
            ("id", Value::from(id)),
            ("tags", Value::object([("env", Value::from("prod"))])),
        ])
    };
    let mut s = MapScope::new()
        .with_variable("name", Value::from("web"))
        .with_variable("n", Value::int(3))
        .with_variable(
            "list",
            Value::tuple(vec![Value::from("a"), Value::from("b")]),
        )
        .with_variable("unknown", Value::unknown())
        .with_variable(
            "partial",
            Value::tuple(vec![Value::int(1), Value::unknown()]),
        )
        .with_variable("nothing", Value::null())
        .with_local("prefix", Value::from("app"))
        .with_resource(Resource::managed("null_resource", "a"), obj("n-1"))
        .with_resource(
            Resource::managed("sim_object", "b"),
            Value::tuple(vec![obj("b0"), obj("b1")]),
        )
        .with_resource(Resource::managed("sim_object", "later"), Value::unknown())
        .with_resource(
            Resource::data("sim_lookup", "x"),
            Value::object([("value", Value::int(7))]),
        );
    s.count_index = Some(Value::int(1));
    s.each = Some((Value::from("k"), Value::from("v")));
    s.paths.insert("module".into(), Value::from("."));
    s
}

fn ev(src: &str) -> Result<Value, Diagnostics> {
    let e = parse_expression("test.tf", src).expect("parses");
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

fn s(x: &str) -> Value {
    Value::from(x)
}

fn list(items: &[Value]) -> Value {
    Value::tuple(items.to_vec())
}

use fleetform_shared::diag::Diagnostic;

#[test]
fn literals_collections_and_templates() {
    assert_eq!(ok("null"), Value::null());
    assert_eq!(ok("1.5"), Value::Number(Number::Float(1.5)));
    assert_eq!(ok("\"a\\tb\""), s("a\tb"));
    assert_eq!(
        ok("[1, \"x\", true]"),
        list(&[Value::int(1), s("x"), Value::Bool(true)])
    );
    assert_eq!(
        ok("{a = 1, \"b\" = 2, (var.name) = 3}"),
        Value::object([
            ("a", Value::int(1)),
            ("b", Value::int(2)),
            ("web", Value::int(3))
        ])
    );
    assert_eq!(
        ok("\"${local.prefix}-${var.name}-${var.n}\""),
        s("app-web-3")
    );
    assert_eq!(ok("\"$${literal}\""), s("${literal}"));
    // A lone interpolation keeps the value's type.
    assert_eq!(ok("\"${var.list}\""), list(&[s("a"), s("b")]));
    assert_eq!(ok("\"%{if var.n > 2}big%{else}small%{endif}\""), s("big"));
    assert_eq!(ok("\"%{for x in var.list}<${x}>%{endfor}\""), s("<a><b>"));
    assert_eq!(ok("\"a ${~ \"b\" ~} c\""), s("abc"));
    assert_eq!(ok("<<EOT\nhello ${var.name}\nEOT"), s("hello web\n"));
    assert_eq!(
        ok("<<-EOT\n    indented\n      more\n    EOT\n"),
        s("indented\n  more\n")
    );
}

#[test]
fn references_resolve_through_the_scope() {
    assert_eq!(ok("null_resource.a.id"), s("n-1"));
    assert_eq!(ok("null_resource.a.tags[\"env\"]"), s("prod"));
    assert_eq!(ok("sim_object.b[1].id"), s("b1"));
    assert_eq!(ok("sim_object.b[*].id"), list(&[s("b0"), s("b1")]));
    assert_eq!(ok("sim_object.b.*.id"), list(&[s("b0"), s("b1")]));
    assert_eq!(ok("null_resource.a[*].id"), list(&[s("n-1")]));
    assert_eq!(ok("var.nothing[*]"), list(&[]));
    assert_eq!(ok("data.sim_lookup.x.value"), Value::int(7));
    assert_eq!(ok("count.index"), Value::int(1));
    assert_eq!(ok("\"${each.key}=${each.value}\""), s("k=v"));
    assert_eq!(ok("path.module"), s("."));
    assert_eq!(ok("terraform.workspace"), s("default"));
    assert_eq!(ok("[for x in var.list : upper(x)][1]"), s("B"));
}

#[test]
fn operators() {
    assert_eq!(ok("1 + 2 * 3"), Value::int(7));
    assert_eq!(ok("7 / 2"), Value::Number(Number::Float(3.5)));
    assert_eq!(ok("7 % 3"), Value::int(1));
    assert_eq!(ok("-var.n"), Value::int(-3));
    assert_eq!(ok("\"2\" + 1"), Value::int(3));
    assert_eq!(ok("var.n >= 3 && !false"), Value::Bool(true));
    assert_eq!(ok("1 == 1.0"), Value::Bool(true));
    assert_eq!(ok("\"1\" == 1"), Value::Bool(false));
    assert_eq!(ok("[1, 2] != [1, 2]"), Value::Bool(false));
    assert_eq!(ok("var.n > 2 ? \"big\" : \"small\""), s("big"));
    assert_eq!(ok("false || true"), Value::Bool(true));
    assert_eq!(fails("1 / 0").summary, "Operation failed");
    assert_eq!(fails("\"x\" + 1").summary, "Invalid operand");
}

#[test]
fn unknowns_propagate() {
    assert_eq!(ok("var.unknown + 1"), Value::unknown());
    assert_eq!(ok("var.unknown == 1"), Value::unknown());
    assert_eq!(ok("var.partial == [1, 2]"), Value::unknown());
    assert_eq!(ok("\"x-${var.unknown}\""), Value::unknown());
    assert_eq!(ok("var.unknown ? 1 : 2"), Value::unknown());
    assert_eq!(ok("true ? 1 : var.unknown"), Value::int(1));
    // Terraform 1.9 does not short-circuit: cty's And is unknown with an unknown operand.
    assert_eq!(ok("false && var.unknown"), Value::unknown());
    assert_eq!(ok("length(var.partial)"), Value::int(2));
    assert_eq!(ok("length(var.unknown)"), Value::unknown());
    assert_eq!(ok("upper(var.unknown)"), Value::unknown());
    assert_eq!(ok("join(\",\", var.partial)"), Value::unknown());
    assert_eq!(ok("sim_object.later.id"), Value::unknown());
    assert_eq!(ok("sim_object.later[*].id"), Value::unknown());
    assert_eq!(ok("[for x in var.unknown : x]"), Value::unknown());
    assert_eq!(ok("{ (var.unknown) = 1 }"), Value::unknown());
    assert_eq!(ok("var.list[var.unknown]"), Value::unknown());
    assert_eq!(
        ok("concat(var.partial, [3])"),
        list(&[Value::int(1), Value::unknown(), Value::int(3)])
    );
}

#[test]
fn for_expressions() {
    assert_eq!(
        ok("[for i, x in var.list : \"${i}:${x}\"]"),
        list(&[s("0:a"), s("1:b")])
    );
    assert_eq!(
        ok("[for x in [1, 2, 3, 4] : x * 10 if x % 2 == 0]"),
        list(&[Value::int(20), Value::int(40)])
    );
    assert_eq!(
        ok("{for x in var.list : x => upper(x)}"),
        Value::object([("a", s("A")), ("b", s("B"))])
    );
    assert_eq!(
        ok("{for k, v in {a = 1, b = 2} : v => k}"),
        Value::object([("1", s("a")), ("2", s("b"))])
    );
    assert_eq!(
        ok("{for x in [\"a\", \"b\", \"a\"] : x => x...}"),
        Value::object([("a", list(&[s("a"), s("a")])), ("b", list(&[s("b")]))])
    );
    assert_eq!(
        fails("{for x in [\"a\", \"a\"] : x => 1}").summary,
        "Duplicate object key"
    );
    assert_eq!(
        fails("[for x in null : x]").summary,
        "Iteration over null value"
    );
}

#[test]
fn functions() {
    let cases: &[(&str, Value)] = &[
        ("length(\"héllo\")", Value::int(5)),
        ("length({a = 1})", Value::int(1)),
        ("upper(\"a\")", s("A")),
        ("lower(\"A\")", s("a")),
        (
            "format(\"%s-%03d-%.2f-%v\", \"x\", 7, 1.5, true)",
            s("x-007-1.50-true"),
        ),
        ("format(\"%q %%\", \"a\")", s("\"a\" %")),
        ("join(\"-\", [\"a\", 1])", s("a-1")),
        ("split(\",\", \"a,b\")", list(&[s("a"), s("b")])),
        (
            "concat([1], [2, 3])",
            list(&[Value::int(1), Value::int(2), Value::int(3)]),
        ),
        (
            "merge({a = 1, b = 1}, {b = 2})",
            Value::object([("a", Value::int(1)), ("b", Value::int(2))]),
        ),
        ("keys({b = 1, a = 2})", list(&[s("a"), s("b")])),
        (
            "values({b = 1, a = 2})",
            list(&[Value::int(2), Value::int(1)]),
        ),
        ("lookup({a = 1}, \"b\", 0)", Value::int(0)),
        ("element([\"a\", \"b\"], 3)", s("b")),
        ("tostring(5)", s("5")),
        ("tonumber(\"5\")", Value::int(5)),
        ("tolist([1])", list(&[Value::int(1)])),
        ("toset([\"a\", \"a\", \"b\"])", list(&[s("a"), s("b")])),
        ("tomap({a = 1})", Value::object([("a", Value::int(1))])),
        ("coalesce(null, \"\", \"x\")", s("x")),
        ("min(3, 1, 2)", Value::int(1)),
        ("max(3, 1, 2)", Value::int(3)),
        ("abs(-2)", Value::int(2)),
        ("ceil(1.2)", Value::int(2)),
        ("floor(1.8)", Value::int(1)),
        (
            "range(3)",
            list(&[Value::int(0), Value::int(1), Value::int(2)]),
        ),
        ("range(1, 7, 3)", list(&[Value::int(1), Value::int(4)])),
        ("contains([\"a\"], \"a\")", Value::Bool(true)),
        ("replace(\"a-b-c\", \"-\", \"+\")", s("a+b+c")),
        ("substr(\"hello\", 1, 3)", s("ell")),
        ("substr(\"hello\", -3, -1)", s("llo")),
        ("trimspace(\"  x \")", s("x")),
        (
            "jsonencode({a = [1, \"x\", null]})",
            s("{\"a\":[1,\"x\",null]}"),
        ),
        (
            "jsondecode(\"{\\\"a\\\": [1, true]}\")",
            Value::object([("a", list(&[Value::int(1), Value::Bool(true)]))]),
        ),
        ("try(var.nope, \"fallback\")", s("fallback")),
        ("try(var.name, \"fallback\")", s("web")),
        ("can(var.nope)", Value::Bool(false)),
        ("can(var.name)", Value::Bool(true)),
        ("max(var.list...)", Value::unknown()),
        ("concat(var.list...)", Value::unknown()),
    ];
    for (src, want) in cases.iter().take(cases.len() - 2) {
        assert_eq!(&ok(src), want, "{src}");
    }
    assert_eq!(
        fails("max(var.list...)").summary,
        "Invalid function argument"
    );
    assert_eq!(ok("min([5, 2]...)"), Value::int(2));
}

#[test]
fn errors_carry_summary_and_range() {
    let d = fails("var.nope");
    assert_eq!(d.summary, "Reference to undeclared input variable");
    let r = d.range.expect("range");
    assert_eq!(
        (r.filename.as_str(), r.start.column, r.end.column),
        ("test.tf", 1, 9)
    );
    assert_eq!(
        fails("local.nope").summary,
        "Reference to undeclared local value"
    );
    assert_eq!(
        fails("null_resource.nope.id").summary,
        "Reference to undeclared resource"
    );
    assert_eq!(
        fails("null_resource.a.nope").summary,
        "Unsupported attribute"
    );
    let d = fails("1 + sim_object.b[5].id");
    assert_eq!(d.summary, "Invalid index");
    assert_eq!(d.range.expect("range").start.column, 5);
    assert_eq!(fails("nosuch(1)").summary, "Call to unknown function");
    assert_eq!(fails("upper([])").summary, "Invalid function argument");
    assert_eq!(
        fails("upper(\"a\", \"b\")").summary,
        "Too many function arguments"
    );
    assert_eq!(fails("var").summary, "Invalid reference");
    assert_eq!(ok("\"${null}\""), Value::null());
    assert_eq!(
        fails("\"a${null}\"").summary,
        "Invalid template interpolation value"
    );
    assert_eq!(
        fails("null.x").summary,
        "Attempt to get attribute from null value"
    );
}

#[test]
fn count_and_each_outside_their_context_are_errors() {
    let e = parse_expression("t.tf", "count.index").unwrap();
    assert_eq!(
        evaluate(&e, &EmptyScope).unwrap_err().0[0].summary,
        "Reference to \"count\" in non-counted context"
    );
    let e = parse_expression("t.tf", "each.key").unwrap();
    assert_eq!(
        evaluate(&e, &EmptyScope).unwrap_err().0[0].summary,
        "Reference to \"each\" in context without for_each"
    );
}

#[test]
fn references_are_extracted_with_ranges() {
    let e = parse_expression(
        "t.tf",
        "\"${var.a}-${local.b}\" == join(\",\", sim_object.b[0].id, data.t.n.attr, [for x in var.l : x.y if x != count.index], each.key, path.module, terraform.workspace, null_resource.c[*].id, var.m[local.k])",
    )
    .unwrap();
    let refs: Vec<Reference> = e.references().into_iter().map(|(r, _)| r).collect();
    assert_eq!(
        refs,
        vec![
            Reference::Variable("a".into()),
            Reference::Local("b".into()),
            Reference::Resource(Resource::managed("sim_object", "b")),
            Reference::Resource(Resource::data("t", "n")),
            Reference::Variable("l".into()),
            Reference::CountIndex,
            Reference::EachKey,
            Reference::Path("module".into()),
            Reference::Workspace,
            Reference::Resource(Resource::managed("null_resource", "c")),
            Reference::Variable("m".into()),
            Reference::Local("k".into()),
        ]
    );
    let (_, range) = &e.references()[2];
    let src = "sim_object.b";
    assert_eq!(range.end.byte - range.start.byte, src.len());
}

/// Quotes `s` as an HCL string literal, escaping template markers.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

proptest::proptest! {
    #[test]
    fn string_literals_round_trip(text in "[a-z0-9 ${}%\\\\\"\n\t-]{0,24}") {
        let v = ok(&quote(&text));
        proptest::prop_assert_eq!(v, Value::String(text));
    }

    #[test]
    fn templates_concatenate_their_parts(a in "[a-z {}-]{0,10}", b in "[a-z {}-]{0,10}", n in -1000i64..1000) {
        // The leading "x" keeps the template from being a lone interpolation.
        let src = quote(&format!("x{a}${{{n}}}{b}")).replace("$${", "${");
        proptest::prop_assert_eq!(ok(&src), Value::String(format!("x{a}{n}{b}")));
        proptest::prop_assert_eq!(ok(&n.to_string()), Value::int(n));
    }
}

#[test]
fn big_numbers_are_exact_in_literals_operators_and_functions() {
    let num = |t: &str| Value::Number(Number::parse(t).unwrap());
    let big = "12345678901234567890123";
    let cases: &[(&str, Value)] = &[
        (big, num(big)),
        ("-12345678901234567890123", num("-12345678901234567890123")),
        ("- 12345678901234567890123", num("-12345678901234567890123")),
        ("0.1000000000000000000001", num("0.1000000000000000000001")),
        ("1.5e30", num("1500000000000000000000000000000")),
        ("99999999999999999999 + 1", num("100000000000000000000")),
        ("0.1 + 0.2 == 0.3", Value::Bool(true)),
        ("0.1 + 0.2", num("0.3")),
        (
            "12345678901234567890123 - 1",
            num("12345678901234567890122"),
        ),
        ("12345678901234567890 * 10", num("123456789012345678900")),
        ("100000000000000000000 / 8", num("12500000000000000000")),
        ("100000000000000000001 % 10", Value::int(1)),
        (
            "-(12345678901234567890123)",
            num("-12345678901234567890123"),
        ),
        (
            "12345678901234567890123 > 12345678901234567890122",
            Value::Bool(true),
        ),
        (
            "12345678901234567890123 <= 9223372036854775807",
            Value::Bool(false),
        ),
        (
            "12345678901234567890123 == 12345678901234567890124",
            Value::Bool(false),
        ),
        (
            "12345678901234567890123 == 12345678901234567890123.0",
            Value::Bool(true),
        ),
        (
            "\"n=${12345678901234567890123}\"",
            s("n=12345678901234567890123"),
        ),
        (
            "\"${0.1000000000000000000001}!\"",
            s("0.1000000000000000000001!"),
        ),
        ("tostring(12345678901234567890123)", s(big)),
        ("tonumber(\"12345678901234567890123\")", num(big)),
        (
            "tonumber(\"0.1000000000000000000001\")",
            num("0.1000000000000000000001"),
        ),
        ("\"12345678901234567890123\" + 0", num(big)),
        ("format(\"%d\", 12345678901234567890123)", s(big)),
        (
            "format(\"%+d\", 12345678901234567890123)",
            s("+12345678901234567890123"),
        ),
        ("format(\"%s\", 12345678901234567890123)", s(big)),
        ("format(\"%.3f\", 0.1000000000000000000001)", s("0.100")),
        (
            "format(\"%f\", 12345678901234567890123.25)",
            s("12345678901234567890123.250000"),
        ),
        ("format(\"%.1f\", 0.25)", s("0.2")),
        (
            "format(\"%x\", 18446744073709551615)",
            s("ffffffffffffffff"),
        ),
        ("parseint(\"12345678901234567890123\", 10)", num(big)),
        (
            "parseint(\"-ffffffffffffffffff\", 16)",
            num("-4722366482869645213695"),
        ),
        (
            "min(12345678901234567890123, 12345678901234567890122)",
            num("12345678901234567890122"),
        ),
        ("max(12345678901234567890123, 1)", num(big)),
        ("abs(-12345678901234567890123)", num(big)),
        ("ceil(12345678901234567890122.5)", num(big)),
        ("floor(-0.1000000000000000000001)", Value::int(-1)),
        (
            "sum([12345678901234567890123, 1, 0.5])",
            num("12345678901234567890124.5"),
        ),
        ("sum([0.1, 0.2])", num("0.3")),
        (
            "range(0, 0.35, 0.1)",
            list(&[Value::int(0), num("0.1"), num("0.2"), num("0.3")]),
        ),
        (
            "jsonencode([12345678901234567890123, 0.1])",
            s("[12345678901234567890123,0.1]"),
        ),
        (
            "jsondecode(\"[12345678901234567890123]\")",
            list(&[num(big)]),
        ),
    ];
    for (src, want) in cases {
        assert_eq!(&ok(src), want, "{src}");
    }
    // The representation is canonical, not just equal: a provider or state
    // round trip compares equal structurally as well.
    assert!(matches!(
        ok("9223372036854775808 - 1"),
        Value::Number(Number::Int(i64::MAX))
    ));
    assert!(matches!(ok("0.1 + 0.2"), Value::Number(Number::Float(f)) if f == 0.3));
    assert_eq!(fails("sum([])").summary, "Invalid function argument");
    assert_eq!(
        fails("format(\"%d\", 0.5)").summary,
        // cty reports a verb's failure against the call, not an argument.
        "Error in function call"
    );
    assert_eq!(
        fails("12345678901234567890123 / 0").summary,
        "Operation failed"
    );
}

#[test]
fn big_numbers_arrive_exactly_from_variables() {
    let num = |t: &str| Value::Number(Number::parse(t).unwrap());
    let big = "12345678901234567890123";
    let ty = fleetform_shared::types::Type::Number;
    assert_eq!(parse_var_value("n", big, Some(&ty)), Ok(num(big)));
    assert_eq!(
        parse_var_value(
            "n",
            "[12345678901234567890123]",
            Some(&fleetform_shared::types::Type::list(ty))
        ),
        Ok(Value::tuple(vec![num(big)]))
    );
}
