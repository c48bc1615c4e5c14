//! `dynamic` blocks against Terraform 1.9: for_each over lists, maps and
//! unknowns, `iterator`, `labels`, nested dynamic blocks, and HCL's
//! dynblock diagnostics.

use crate::config::parse_file;
use crate::eval::MapScope;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::schema::{Attribute as SchemaAttr, Block, NestedBlock, Nesting};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

fn nested(nesting: Nesting, block: Block) -> NestedBlock {
    NestedBlock {
        nesting,
        block,
        min_items: 0,
        max_items: 0,
    }
}

/// `name`, list blocks `rule { port, sub { v } }`, map blocks `named "k" { port }`.
fn schema() -> Block {
    let mut sub = Block::default();
    sub.attributes
        .insert("v".into(), SchemaAttr::new(Type::String).optional());
    let mut rule = Block::default();
    rule.attributes
        .insert("port".into(), SchemaAttr::new(Type::Number).optional());
    rule.block_types
        .insert("sub".into(), nested(Nesting::List, sub));
    let mut named = Block::default();
    named
        .attributes
        .insert("port".into(), SchemaAttr::new(Type::Number).optional());
    let mut b = Block::default();
    b.attributes
        .insert("name".into(), SchemaAttr::new(Type::String).optional());
    b.block_types
        .insert("rule".into(), nested(Nesting::List, rule));
    b.block_types
        .insert("named".into(), nested(Nesting::Map, named));
    b
}

fn decode(src: &str, scope: &MapScope) -> (Value, Diagnostics) {
    let (body, d) = parse_file("dyn.tf", src);
    assert!(!d.has_errors(), "{d}");
    body.expect("body").decode(&schema(), scope)
}

fn decode_ok(src: &str, scope: &MapScope) -> Value {
    let (v, d) = decode(src, scope);
    assert!(!d.has_errors(), "{d}");
    v
}

fn first_error(src: &str, scope: &MapScope) -> (String, String) {
    let (_, d) = decode(src, scope);
    let e =
        d.0.first()
            .unwrap_or_else(|| panic!("expected an error for {src}"));
    (e.summary.clone(), e.detail.clone())
}

fn rule(port: Value, subs: &[&str]) -> Value {
    Value::object([
        ("port", port),
        (
            "sub",
            Value::List(
                subs.iter()
                    .map(|s| Value::object([("v", Value::from(*s))]))
                    .collect(),
            ),
        ),
    ])
}

#[test]
fn for_each_over_lists_and_maps() {
    let src = r#"
dynamic "rule" {
  for_each = [80, 443]
  content {
    port = rule.value
  }
}
dynamic "named" {
  for_each = { b = 2, a = 1 }
  labels   = [named.key]
  content {
    port = named.value * 10
  }
}
"#;
    let v = decode_ok(src, &MapScope::new());
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![rule(Value::int(80), &[]), rule(Value::int(443), &[])])
    );
    assert_eq!(
        v.get_attr("named"),
        &Value::object([
            ("a", Value::object([("port", Value::int(10))])),
            ("b", Value::object([("port", Value::int(20))])),
        ])
    );
}

#[test]
fn iterator_renames_and_rule_key_is_the_index() {
    let src = r#"
dynamic "rule" {
  for_each = ["x", "y"]
  iterator = it
  content {
    port = it.key
  }
}
"#;
    let v = decode_ok(src, &MapScope::new());
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![rule(Value::int(0), &[]), rule(Value::int(1), &[])])
    );
}

#[test]
fn nested_dynamic_blocks_see_the_outer_iterator() {
    let src = r#"
dynamic "rule" {
  for_each = { a = ["1", "2"], b = ["3"] }
  content {
    port = length(rule.value)
    dynamic "sub" {
      for_each = rule.value
      iterator = s
      content {
        v = "${rule.key}-${s.value}"
      }
    }
  }
}
"#;
    let v = decode_ok(src, &MapScope::new());
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![
            rule(Value::int(2), &["a-1", "a-2"]),
            rule(Value::int(1), &["b-3"]),
        ])
    );
}

#[test]
fn unknown_for_each_makes_the_block_list_unknown() {
    let src = r#"
name = "x"
dynamic "rule" {
  for_each = var.ports
  content {
    port = rule.value
  }
}
"#;
    let scope = MapScope::new().with_variable("ports", Value::unknown());
    let v = decode_ok(src, &scope);
    assert_eq!(v.get_attr("rule"), &Value::unknown());
    assert_eq!(v.get_attr("name"), &Value::from("x"));
    // Known length, unknown elements: the blocks exist with unknown contents.
    let scope =
        MapScope::new().with_variable("ports", Value::tuple(vec![Value::unknown(), Value::int(1)]));
    let v = decode_ok(src, &scope);
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![rule(Value::unknown(), &[]), rule(Value::int(1), &[])])
    );
}

#[test]
fn dynamic_block_errors() {
    let scope = MapScope::new();
    assert_eq!(
        first_error(
            "dynamic \"rule\" {\n  for_each = [1]\n}\n",
            &scope
        ),
        (
            "Missing dynamic content block".into(),
            "A dynamic block must have a nested block of type \"content\" to describe the body of each generated block.".into()
        )
    );
    assert_eq!(
        first_error(
            "dynamic \"rule\" {\n  for_each = [1]\n  content {}\n  content {}\n}\n",
            &scope
        ),
        (
            "Extraneous dynamic content block".into(),
            "Only one nested content block is allowed for each dynamic block.".into()
        )
    );
    assert_eq!(
        first_error("dynamic \"rule\" {\n  content {}\n}\n", &scope),
        (
            "Missing required argument".into(),
            "The argument \"for_each\" is required, but no definition was found.".into()
        )
    );
    assert_eq!(
        first_error(
            "dynamic \"rule\" {\n  for_each = null\n  content {}\n}\n",
            &scope
        ),
        (
            "Invalid dynamic for_each value".into(),
            "Cannot use a null value in for_each.".into()
        )
    );
    assert_eq!(
        first_error(
            "dynamic \"rule\" {\n  for_each = \"abc\"\n  content {}\n}\n",
            &scope
        ),
        (
            "Invalid dynamic for_each value".into(),
            "Cannot use a string value in for_each. An iterable collection is required.".into()
        )
    );
    assert_eq!(
        first_error(
            "dynamic \"rule\" {\n  for_each = [1]\n  iterator = a.b\n  content {}\n}\n",
            &scope
        ),
        (
            "Invalid dynamic iterator name".into(),
            "Dynamic iterator must be a single variable name.".into()
        )
    );
    assert_eq!(
        first_error(
            "dynamic \"named\" {\n  for_each = [1]\n  labels = [null]\n  content {}\n}\n",
            &scope
        ),
        (
            "Invalid dynamic block label".into(),
            "Cannot use a null value as a dynamic block label.".into()
        )
    );
    assert_eq!(
        first_error(
            "dynamic \"named\" {\n  for_each = [1]\n  labels = [var.u]\n  content {}\n}\n",
            &MapScope::new().with_variable("u", Value::unknown())
        ),
        (
            "Invalid dynamic block label".into(),
            "This value is not yet known. Dynamic block labels must be immediately-known values."
                .into()
        )
    );
    assert_eq!(
        first_error(
            "dynamic \"named\" {\n  for_each = [1]\n  labels = [[]]\n  content {}\n}\n",
            &scope
        ),
        (
            "Invalid dynamic block label".into(),
            "Cannot use this value as a dynamic block label: string required.".into()
        )
    );
    // Labels convert to strings.
    let v = decode_ok(
        "dynamic \"named\" {\n  for_each = [7]\n  labels = [named.value]\n  content {\n    port = 1\n  }\n}\n",
        &scope,
    );
    assert_eq!(
        v.get_attr("named"),
        &Value::object([("7", Value::object([("port", Value::int(1))]))])
    );
}

#[test]
fn content_sees_module_outputs_and_files_of_the_outer_scope() {
    let src = r#"
dynamic "rule" {
  for_each = module.net.ports
  content {
    port = rule.value + length(file("extra.txt"))
  }
}
"#;
    let mut scope = MapScope::new();
    scope.module_calls.insert(
        "net".into(),
        Value::object([("ports", Value::tuple(vec![Value::int(80)]))]),
    );
    scope.env = crate::eval::EvalEnv {
        files: std::sync::Arc::new(crate::eval::MapFiles::new([(
            "extra.txt".to_string(),
            b"12".to_vec(),
        )])),
        ..Default::default()
    };
    let v = decode_ok(src, &scope);
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![rule(Value::int(82), &[])])
    );
}
