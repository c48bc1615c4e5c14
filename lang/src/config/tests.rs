//! Loading tests: a realistic module, syntax and validation diagnostics, and
//! schema-directed body decoding.

use super::*;
use crate::eval::{MapScope, Marks, Reference, evaluate};
use fleetform_shared::addr::{ProviderAddr, Resource};
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::schema::{Attribute as SchemaAttr, Block, NestedBlock, Nesting};
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};

const MAIN_TF: &str = r#"terraform {
  required_version = ">= 1.5"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 3.2"
    }
    sim = "1.0.0"
  }
}

provider "sim" {
  region = var.region
}

provider "sim" {
  alias  = "west"
  region = "us-west-1"
}

variable "region" {
  type        = string
  default     = "eu-1"
  description = "Where things go"
}

variable "sizes" {
  type      = map(number)
  default   = { small = "1", large = 4 }
  sensitive = true
}

variable "settings" {
  type = object({ name = string, port = optional(number) })
  default = { name = "x" }
}

locals {
  prefix = "app-${var.region}"
}

locals {
  count = 2
}

resource "null_resource" "a" {
  count = local.count
  triggers = {
    name = "${local.prefix}-${count.index}"
  }
}

resource "sim_object" "b" {
  provider   = sim.west
  name       = null_resource.a[0].id
  depends_on = [null_resource.a]

  lifecycle {
    create_before_destroy = true
    ignore_changes        = [tags["owner"], size]
  }
}

data "sim_lookup" "c" {
  for_each = var.sizes
  key      = each.key
}

output "ids" {
  value       = null_resource.a[*].id
  description = "the ids"
  sensitive   = false
  depends_on  = [sim_object.b]
}

moved {
  from = null_resource.old
  to   = null_resource.a[0]
}
"#;

fn load(files: &[(&str, &str)]) -> (Option<Module>, Diagnostics) {
    load_module(
        &files
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect(),
    )
}

fn load_ok(src: &str) -> Module {
    let (m, d) = load(&[("main.tf", src)]);
    assert!(!d.has_errors(), "{d}");
    m.expect("module")
}

fn load_errors(src: &str) -> Diagnostics {
    let (_, d) = load(&[("main.tf", src)]);
    assert!(d.has_errors(), "expected errors");
    d
}

#[test]
fn loads_a_realistic_module() {
    let m = load_ok(MAIN_TF);
    assert_eq!(m.required_version, vec![">= 1.5".to_string()]);
    assert_eq!(
        m.required_providers["null"].source,
        ProviderAddr::new("hashicorp", "null")
    );
    assert_eq!(
        m.required_providers["null"].version.as_deref(),
        Some("~> 3.2")
    );
    assert_eq!(
        m.required_providers["sim"].version.as_deref(),
        Some("1.0.0")
    );
    assert_eq!(m.provider_addr("sim.west"), ProviderAddr::implied("sim"));
    assert_eq!(m.providers.keys().collect::<Vec<_>>(), ["sim", "sim.west"]);
    assert_eq!(m.providers["sim.west"].alias.as_deref(), Some("west"));
    assert!(
        !m.providers["sim.west"]
            .body
            .attributes
            .contains_key("alias")
    );
    assert_eq!(
        m.providers["sim"].body.references()[0].0,
        Reference::Variable("region".into())
    );

    let region = &m.variables["region"];
    assert_eq!(
        (region.ty.clone(), region.default.clone()),
        (Some(Type::String), Some(Value::from("eu-1")))
    );
    assert_eq!(region.description.as_deref(), Some("Where things go"));
    assert_eq!(region.decl_range.start.line, 21);
    let sizes = &m.variables["sizes"];
    assert!(sizes.sensitive);
    assert_eq!(
        sizes.default,
        Some(Value::object([
            ("small", Value::int(1)),
            ("large", Value::int(4))
        ]))
    );
    assert_eq!(
        m.variables["settings"].default,
        Some(Value::object([
            ("name", Value::from("x")),
            ("port", Value::null())
        ]))
    );

    assert_eq!(m.locals.keys().collect::<Vec<_>>(), ["count", "prefix"]);

    let a = &m.resources[&Resource::managed("null_resource", "a")];
    assert_eq!(a.provider, "null");
    assert!(a.count.is_some() && a.for_each.is_none());
    assert_eq!(a.body.attributes.keys().collect::<Vec<_>>(), ["triggers"]);
    assert_eq!(
        (
            a.decl_range.start.line,
            a.range.start.line,
            a.range.end.line
        ),
        (46, 46, 51)
    );
    assert_eq!(a.header(), "resource \"null_resource\" \"a\"");

    let b = &m.resources[&Resource::managed("sim_object", "b")];
    assert_eq!(b.provider, "sim.west");
    assert_eq!(
        b.depends_on[0].0,
        Reference::Resource(Resource::managed("null_resource", "a"))
    );
    assert!(b.lifecycle.create_before_destroy && !b.lifecycle.prevent_destroy);
    let IgnoreChanges::Paths(paths) = &b.lifecycle.ignore_changes else {
        panic!("paths")
    };
    let paths: Vec<_> = paths.iter().map(|(p, _)| p.clone()).collect();
    assert_eq!(
        paths,
        vec![
            vec![PathStep::Key("tags".into()), PathStep::Key("owner".into())],
            vec![PathStep::Key("size".into())]
        ]
    );
    assert_eq!(b.body.attributes.keys().collect::<Vec<_>>(), ["name"]);

    let c = &m.resources[&Resource::data("sim_lookup", "c")];
    assert!(c.for_each.is_some());
    assert_eq!(c.body.references()[0].0, Reference::EachKey);

    let ids = &m.outputs["ids"];
    assert_eq!(ids.description.as_deref(), Some("the ids"));
    assert_eq!(
        ids.depends_on[0].0,
        Reference::Resource(Resource::managed("sim_object", "b"))
    );
    assert_eq!(m.moved[0].from.to_string(), "null_resource.old");
    assert_eq!(m.moved[0].to.to_string(), "null_resource.a[0]");
}

#[test]
fn local_values_evaluate_against_a_scope() {
    let m = load_ok(MAIN_TF);
    let scope = MapScope::new().with_variable("region", Value::from("eu-1"));
    assert_eq!(
        evaluate(&m.locals["prefix"].expr, &scope),
        Ok(Value::from("app-eu-1"))
    );
}

#[test]
fn syntax_errors_point_at_line_and_column() {
    let src = "resource \"null_resource\" \"a\" {\n  triggers = {\n    a = \n  }\n}\n";
    let (m, d) = load(&[("main.tf", src), ("other.tf", "locals { x = 1 }\n")]);
    assert!(m.is_none());
    assert_eq!(d.0.len(), 1);
    let r = d.0[0].range.clone().expect("range");
    assert_eq!(
        (r.filename.as_str(), r.start.line, r.start.column),
        ("main.tf", 3, 9)
    );
    let d = load_errors("variable \"x\" {\n  default = [1,\n}\n");
    assert_eq!(d.0[0].range.as_ref().map(|r| r.start.line), Some(3));
}

#[test]
fn validation_errors_have_locations() {
    let first = |d: &Diagnostics| {
        (
            d.0[0].summary.clone(),
            d.0[0].range.as_ref().map(|r| r.start.line).unwrap_or(0),
        )
    };
    let d = load_errors("foo \"x\" {\n}\n");
    assert_eq!(first(&d), ("Unsupported block type".into(), 1));
    let d = load_errors("\nresource \"null_resource\" {\n}\n");
    assert_eq!(first(&d), ("Missing name for resource".into(), 2));
    let d = load_errors("locals {\n  a = 1\n}\nlocals {\n  a = 2\n}\n");
    assert_eq!(first(&d), ("Duplicate local value definition".into(), 5));
    let dup = "resource \"null_resource\" \"a\" {\n}\n\nresource \"null_resource\" \"a\" {\n}\n";
    assert_eq!(
        first(&load_errors(dup)),
        ("Duplicate resource configuration".into(), 4)
    );
    let both = "resource \"null_resource\" \"a\" {\n  count = 1\n  for_each = {}\n}\n";
    assert_eq!(
        first(&load_errors(both)),
        (
            "Invalid combination of \"count\" and \"for_each\"".into(),
            3
        )
    );
    let d = load_errors("variable \"x\" {\n  type = number\n  default = \"abc\"\n}\n");
    assert_eq!(first(&d), ("Invalid default value for variable".into(), 3));
    let d = load_errors("variable \"x\" {\n  type = lst(string)\n}\n");
    assert_eq!(first(&d), ("Invalid type specification".into(), 2));
    let d = load_errors("output \"o\" {\n  value = 1\n  bogus = 2\n}\n");
    assert_eq!(first(&d), ("Unsupported argument".into(), 3));
    let d = load_errors(
        "resource \"a_b\" \"c\" {\n  lifecycle {\n    prevent_destroy = \"maybe\"\n  }\n}\n",
    );
    assert_eq!(first(&d), ("Incorrect value type".into(), 3));
}

#[test]
fn type_constraints_parse() {
    let m = load_ok(
        "variable \"a\" {\n  type = list(object({ x = set(string), y = optional(tuple([bool, any])) }))\n}\nvariable \"b\" {\n  type = map(list(number))\n}\n",
    );
    let mut obj = Type::object([
        ("x", Type::set(Type::String)),
        ("y", Type::Tuple(vec![Type::Bool, Type::Dynamic])),
    ]);
    if let Type::Object { optional, .. } = &mut obj {
        optional.insert("y".into());
    }
    assert_eq!(m.variables["a"].ty, Some(Type::list(obj)));
    assert_eq!(
        m.variables["b"].ty,
        Some(Type::map(Type::list(Type::Number)))
    );
}

fn schema() -> Block {
    let mut rule = Block::default();
    rule.attributes
        .insert("port".into(), SchemaAttr::new(Type::Number).required());
    let mut b = Block::default();
    b.attributes
        .insert("name".into(), SchemaAttr::new(Type::String).required());
    b.attributes.insert(
        "tags".into(),
        SchemaAttr::new(Type::map(Type::String)).optional(),
    );
    b.attributes
        .insert("size".into(), SchemaAttr::new(Type::Number).optional());
    b.attributes
        .insert("id".into(), SchemaAttr::new(Type::String).computed());
    b.block_types.insert(
        "rule".into(),
        NestedBlock {
            nesting: Nesting::List,
            block: rule.clone(),
            min_items: 0,
            max_items: 2,
        },
    );
    b.block_types.insert(
        "config".into(),
        NestedBlock {
            nesting: Nesting::Single,
            block: rule.clone(),
            min_items: 0,
            max_items: 1,
        },
    );
    b.block_types.insert(
        "named".into(),
        NestedBlock {
            nesting: Nesting::Map,
            block: rule,
            min_items: 0,
            max_items: 0,
        },
    );
    b
}

fn decode(src: &str) -> (Value, Diagnostics) {
    let m = load_ok(src);
    let r = m.resources.values().next().expect("one resource");
    let scope = MapScope::new().with_variable("port", Value::unknown());
    r.body.decode(&schema(), &scope)
}

#[test]
fn decode_fills_every_attribute_and_converts() {
    let (v, d) = decode(
        "resource \"sim_object\" \"x\" {\n  name = 5\n  tags = { a = 1, b = \"two\" }\n  rule {\n    port = \"80\"\n  }\n  rule {\n    port = var.port\n  }\n  named \"k\" {\n    port = 1\n  }\n}\n",
    );
    assert!(d.is_empty(), "{d}");
    let rule = |p: Value| Value::object([("port", p)]);
    assert_eq!(
        v,
        Value::object([
            ("name", Value::from("5")),
            (
                "tags",
                Value::object([("a", Value::from("1")), ("b", Value::from("two"))])
            ),
            ("size", Value::null()),
            ("id", Value::null()),
            (
                "rule",
                Value::tuple(vec![rule(Value::int(80)), rule(Value::unknown())])
            ),
            ("config", Value::null()),
            ("named", Value::object([("k", rule(Value::int(1)))])),
        ])
    );
}

#[test]
fn decode_reports_terraform_errors() {
    let (_, d) = decode("resource \"sim_object\" \"x\" {\n  name = \"a\"\n\n  foo  = 1\n}\n");
    assert_eq!(d.0.len(), 1, "{d}");
    assert_eq!(d.0[0].summary, "Unsupported argument");
    assert_eq!(
        d.0[0].detail,
        "An argument named \"foo\" is not expected here."
    );
    assert_eq!(
        d.0[0]
            .range
            .as_ref()
            .map(|r| (r.start.line, r.start.column)),
        Some((4, 3))
    );

    let (v, d) = decode("resource \"sim_object\" \"x\" {\n  size = 1\n}\n");
    assert_eq!(d.0[0].summary, "Missing required argument");
    assert_eq!(
        d.0[0].detail,
        "The argument \"name\" is required, but no definition was found."
    );
    assert_eq!(v.get_attr("name"), &Value::null());

    let (_, d) = decode(
        "resource \"sim_object\" \"x\" {\n  name = \"a\"\n  id = \"x\"\n  tags = [1]\n  rule {}\n  config {\n    port = 1\n  }\n  config {\n    port = 2\n  }\n  bogus {}\n}\n",
    );
    let summaries: Vec<&str> = d.iter().map(|d| d.summary.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "Value for unconfigurable attribute",
            "Incorrect attribute value type",
            "Unsupported block type",
            "Duplicate config block",
            "Missing required argument",
        ]
    );
}

#[test]
fn body_references_cover_nested_blocks() {
    let m = load_ok(
        "resource \"sim_object\" \"x\" {\n  name = var.a\n  rule {\n    port = local.p\n  }\n}\n",
    );
    let refs: Vec<Reference> = m
        .resources
        .values()
        .next()
        .unwrap()
        .body
        .references()
        .into_iter()
        .map(|(r, _)| r)
        .collect();
    assert_eq!(
        refs,
        [
            Reference::Variable("a".into()),
            Reference::Local("p".into())
        ]
    );
}

#[test]
fn dynamic_blocks_expand_with_their_iterator() {
    let src = r#"resource "sim_object" "x" {
  name = "a"
  dynamic "rule" {
    for_each = var.ports
    content {
      port = rule.value
    }
  }
  dynamic "named" {
    for_each = { a = 1, b = 2 }
    iterator = it
    labels   = [it.key]
    content {
      port = it.value * 10
    }
  }
}
"#;
    let m = load_ok(src);
    let body = &m.resources.values().next().unwrap().body;
    let refs: Vec<Reference> = body.references().into_iter().map(|(r, _)| r).collect();
    assert_eq!(refs, [Reference::Variable("ports".into())]);
    let rule = |p: i64| Value::object([("port", Value::int(p))]);
    let scope =
        MapScope::new().with_variable("ports", Value::tuple(vec![Value::int(80), Value::int(443)]));
    let (v, d) = body.decode(&schema(), &scope);
    assert!(d.is_empty(), "{d}");
    assert_eq!(v.get_attr("rule"), &Value::tuple(vec![rule(80), rule(443)]));
    assert_eq!(
        v.get_attr("named"),
        &Value::object([("a", rule(10)), ("b", rule(20))])
    );
    let (v, d) = body.decode(
        &schema(),
        &MapScope::new().with_variable("ports", Value::unknown()),
    );
    assert!(d.is_empty(), "{d}");
    assert_eq!(v.get_attr("rule"), &Value::unknown());
}

#[test]
fn decoding_records_the_arguments_given_sensitive_values() {
    let src = r#"resource "sim_object" "x" {
  name = var.secret
  tags = { a = var.secret, b = "plain" }
  size = length(var.secret)
  rule {
    port = var.port
  }
  rule {
    port = 1
  }
  dynamic "named" {
    for_each = var.ports
    labels   = [named.key]
    content {
      port = named.value
    }
  }
}
"#;
    let m = load_ok(src);
    let body = &m.resources.values().next().unwrap().body;
    let ports = Value::object([("a", Value::int(1)), ("b", Value::int(2))]);
    let scope = MapScope::new()
        .with_variable("secret", Value::from("hunter2"))
        .with_marks(Reference::Variable("secret".into()), Marks::whole())
        .with_variable("port", Value::int(80))
        .with_marks(Reference::Variable("port".into()), Marks::whole())
        .with_variable("ports", ports)
        .with_marks(
            Reference::Variable("ports".into()),
            Marks::whole().nest(PathStep::Key("b".into())),
        );
    let (v, marks, d) = body.decode_marked(&schema(), &scope);
    assert!(d.is_empty(), "{d}");
    assert_eq!(v.get_attr("name"), &Value::from("hunter2"));
    let k = |s: &str| PathStep::Key(s.into());
    assert_eq!(
        marks.into_paths(),
        vec![
            vec![k("name")],
            vec![k("named"), k("b"), k("port")],
            vec![k("rule"), PathStep::Index(0), k("port")],
            vec![k("size")],
            vec![k("tags"), k("a")],
        ]
    );
}

#[test]
fn a_sensitive_dynamic_for_each_is_an_error() {
    let src = r#"resource "sim_object" "x" {
  name = "a"
  dynamic "rule" {
    for_each = var.ports
    content {
      port = rule.value
    }
  }
}
"#;
    let m = load_ok(src);
    let body = &m.resources.values().next().unwrap().body;
    let scope = MapScope::new()
        .with_variable("ports", Value::tuple(vec![Value::int(80)]))
        .with_marks(Reference::Variable("ports".into()), Marks::whole());
    let (_, d) = body.decode(&schema(), &scope);
    assert_eq!(d.0.len(), 1, "{d}");
    assert_eq!(d.0[0].summary, "Invalid dynamic for_each value");
    assert_eq!(d.0[0].range.as_ref().map(|r| r.start.line), Some(4));
}

#[test]
fn constructs_not_carried_out_yet_are_errors_at_their_source() {
    let cases: &[(&str, &str, usize)] = &[
        (
            "resource \"null_resource\" \"a\" {\n  provisioner \"file\" {\n    source = \"a\"\n  }\n}\n",
            "\"file\" provisioners",
            2,
        ),
        (
            "resource \"null_resource\" \"a\" {\n  connection {\n    host = \"x\"\n  }\n}\n",
            "connection blocks",
            2,
        ),
    ];
    for (src, what, line) in cases {
        let d = load_errors(src);
        let diag = d
            .iter()
            .find(|d| d.summary == format!("Unsupported feature: {what}"))
            .unwrap_or_else(|| panic!("no error for {what}: {d}"));
        let range = diag.range.as_ref().expect("a source range");
        assert_eq!(
            (range.filename.as_str(), range.start.line),
            ("main.tf", *line),
            "{what}"
        );
    }
    // Ephemeral resources are carried out (Terraform 1.10).
    load_ok("ephemeral \"random_password\" \"x\" {\n  length = 16\n}\n");
    // `ephemeral = false` is the default, and accepted.
    load_ok(
        "output \"o\" {\n  value     = 1\n  ephemeral = false\n}\nvariable \"v\" {\n  ephemeral = false\n}\n",
    );
}

#[test]
fn a_backend_block_is_reported_as_unused_not_silently_dropped() {
    let (m, d) = load(&[(
        "main.tf",
        "terraform {\n  backend \"s3\" {\n    bucket = \"b\"\n  }\n}\n",
    )]);
    assert!(m.is_some());
    assert!(!d.has_errors(), "{d}");
    let w = d
        .iter()
        .find(|d| d.summary == "The backend block is not used")
        .expect("a warning");
    assert_eq!(w.range.as_ref().unwrap().start.line, 2);
}

#[test]
fn common_syntax_errors_are_named_as_terraform_names_them() {
    for (src, summary, line) in [
        (
            "resource \"a\" \"b\" {\n  x = \"abc\n}\n",
            "Invalid multi-line string",
            2,
        ),
        (
            "variable \"x\" {\n  default = [1, 2\n}\n",
            "Missing item separator",
            3,
        ),
        (
            "locals {\n  a = {x = 1 y = 2}\n}\n",
            "Missing attribute separator",
            2,
        ),
        // Where the (innermost) open block opens, as Terraform says it.
        (
            "resource \"a\" \"b\" {\n  x = 1\n",
            "Unclosed configuration block",
            1,
        ),
        (
            "a {\n  b {\n    c = 1\n}\n",
            "Unclosed configuration block",
            1,
        ),
        (
            "a {\n  x = 1\n  b {\n    c = 1\n",
            "Unclosed configuration block",
            3,
        ),
    ] {
        let (body, diags) = crate::config::parse_file("main.tf", src);
        assert!(body.is_none(), "{src}");
        let d = diags.iter().next().unwrap();
        assert_eq!(d.summary, summary, "{src}");
        assert!(!d.detail.is_empty(), "{src}");
        assert_eq!(d.range.as_ref().unwrap().start.line, line, "{src}");
    }
}
