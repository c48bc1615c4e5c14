//! Property test: expression source generated from a small grammar
//! (literals, operators, calls with random names and argument counts, `for`,
//! splats, conditionals, templates, indexes) never makes parsing or
//! evaluation panic; errors are fine.

use super::*;
use proptest::prelude::*;

fn scope() -> MapScope {
    let o = |id: &str| {
        Value::object([
            ("id", Value::from(id)),
            ("n", Value::int(2)),
            ("l", Value::tuple(vec![Value::int(1), Value::unknown()])),
        ])
    };
    let mut s = MapScope::new()
        .with_variable(
            "list",
            Value::tuple(vec![Value::from("a"), Value::from("b")]),
        )
        .with_variable("objs", Value::tuple(vec![o("x"), o("y")]))
        .with_variable(
            "map",
            Value::object([("k", Value::int(1)), ("j", Value::null())]),
        )
        .with_variable("unknown", Value::unknown())
        .with_variable("nothing", Value::null())
        .with_variable("num", Value::int(3))
        .with_variable(
            "partial",
            Value::tuple(vec![Value::unknown(), Value::from("p")]),
        )
        .with_local("o", o("z"));
    s.count_index = Some(Value::int(0));
    s.each = Some((Value::from("k"), o("e")));
    s
}

const FUNCTIONS: &[&str] = &[
    "length",
    "upper",
    "lower",
    "format",
    "join",
    "split",
    "concat",
    "merge",
    "keys",
    "values",
    "lookup",
    "element",
    "tostring",
    "tonumber",
    "tobool",
    "tolist",
    "toset",
    "tomap",
    "coalesce",
    "coalescelist",
    "min",
    "max",
    "abs",
    "ceil",
    "floor",
    "range",
    "contains",
    "replace",
    "substr",
    "trimspace",
    "jsonencode",
    "jsondecode",
    "try",
    "can",
    "flatten",
    "distinct",
    "compact",
    "zipmap",
    "slice",
    "reverse",
    "sort",
    "sum",
    "index",
    "one",
    "alltrue",
    "anytrue",
    "sensitive",
    "nonsensitive",
    "issensitive",
    "setproduct",
    "chunklist",
    "transpose",
    "formatlist",
    "regex",
    "regexall",
    "startswith",
    "endswith",
    "strrev",
    "title",
    "trim",
    "base64encode",
    "pow",
    "signum",
    "parseint",
    "log",
    "cidrsubnet",
    "timestamp",
    "uuid",
    "file",
    "templatefile",
    "nosuchfunction",
    "provider::x::y",
    "f",
];

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        (-5i64..300).prop_map(|n| n.to_string()),
        Just("0.5".to_string()),
        Just("-1.25".to_string()),
        Just("12345678901234567890123".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("null".to_string()),
        "[a-z \\-%$]{0,6}".prop_map(|s| format!("{s:?}").replace("${", "$${").replace("%{", "%%{")),
        Just("\"1\"".to_string()),
        Just("\"true\"".to_string()),
        Just("var.list".to_string()),
        Just("var.objs".to_string()),
        Just("var.map".to_string()),
        Just("var.unknown".to_string()),
        Just("var.nothing".to_string()),
        Just("var.num".to_string()),
        Just("var.partial".to_string()),
        Just("var.missing".to_string()),
        Just("local.o".to_string()),
        Just("count.index".to_string()),
        Just("each.value".to_string()),
        Just("x".to_string()),
        Just("k".to_string()),
    ]
}

fn op() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||",
    ])
}

fn expr() -> impl Strategy<Value = String> {
    leaf().prop_recursive(4, 40, 4, |inner| {
        let func = prop::sample::select(FUNCTIONS.to_vec());
        prop_oneof![
            (inner.clone(), op(), inner.clone()).prop_map(|(a, o, b)| format!("{a} {o} {b}")),
            inner.clone().prop_map(|a| format!("-{a}")),
            inner.clone().prop_map(|a| format!("!{a}")),
            inner.clone().prop_map(|a| format!("({a})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, a, b)| format!("{c} ? {a} : {b}")),
            (func, prop::collection::vec(inner.clone(), 0..4), any::<bool>()).prop_map(
                |(f, args, expand)| {
                    let dots = if expand && !args.is_empty() { "..." } else { "" };
                    format!("{f}({}{dots})", args.join(", "))
                }
            ),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|items| format!("[{}]", items.join(", "))),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| format!("{{a = {a}, (\"b\") = {b}}}")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, v, f)| format!("[for x in {c} : {v} if {f}]")),
            (inner.clone(), inner.clone(), inner.clone(), any::<bool>()).prop_map(
                |(c, key, v, group)| {
                    let dots = if group { "..." } else { "" };
                    format!("{{for k, x in {c} : {key} => {v}{dots}}}")
                }
            ),
            inner.clone().prop_map(|a| format!("{a}[*].id")),
            inner.clone().prop_map(|a| format!("{a}.*.id")),
            inner.clone().prop_map(|a| format!("({a})[*].l[*]")),
            (inner.clone(), inner.clone()).prop_map(|(a, i)| format!("{a}[{i}]")),
            inner.clone().prop_map(|a| format!("{a}.id")),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(a, c, l)| format!(
                "\"p${{{a}}}q%{{ if {c} ~}} y %{{~ else }}z%{{ endif }}%{{ for x in {l} }}${{x}}%{{ endfor ~}} \""
            )),
            inner.clone().prop_map(|a| format!("(<<-EOT\n    a ${{{a}}}\n      b\n    EOT\n)")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn parsing_and_evaluation_never_panic(src in expr()) {
        if let Ok(e) = parse_expression("fuzz.tf", &src) {
            let _ = evaluate_marked(&e, &scope());
        }
    }

    #[test]
    fn type_conversion_never_panics(src in expr(), ty in prop::sample::select(vec![
        "string", "number", "bool", "any", "list(any)", "set(any)", "map(any)",
        "list(string)", "map(number)", "object({id = string, n = optional(number, 1)})",
        "list(object({id = optional(string, \"d\")}))", "tuple([string, any])",
    ])) {
        let t = parse_expression("type.tf", ty).expect("type parses");
        let (t, defaults) = typeexpr::type_constraint_with_defaults(&t).expect("valid type");
        if let Ok(e) = parse_expression("fuzz.tf", &src)
            && let Ok(v) = evaluate(&e, &scope())
        {
            let v = match &defaults {
                Some(d) => d.apply(v),
                None => v,
            };
            let _ = convert(v, &t);
        }
    }
}
