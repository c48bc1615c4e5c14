//! `.tf.json` tests: a JSON module loads to the same model as its native
//! syntax twin, strings are templates, literals or native references where
//! Terraform says, and ranges point into the JSON file.

use super::*;
use crate::eval::{MapScope, Reference, evaluate};
use fleetform_shared::addr::Resource;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::schema::{Attribute as SchemaAttr, Block, NestedBlock, Nesting};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

pub(super) fn load(files: &[(&str, &str)]) -> (Option<Module>, Diagnostics) {
    load_module(
        &files
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect(),
    )
}

pub(super) fn load_ok(files: &[(&str, &str)]) -> Module {
    let (m, d) = load(files);
    assert!(!d.has_errors(), "{d}");
    m.expect("module")
}

const HCL: &str = r#"terraform {
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
  nullable  = false
  validation {
    condition     = length(var.sizes) > 0
    error_message = "Give sizes."
  }
}

variable "settings" {
  type    = object({ name = string, port = optional(number, 80) })
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
    big  = 12345678901234567890123
  }
}

resource "sim_object" "b" {
  provider   = sim.west
  name       = null_resource.a[0].id
  size       = var.sizes["large"] * 2
  depends_on = [null_resource.a]

  rule {
    port = 1
  }
  rule {
    port = local.count
  }

  lifecycle {
    create_before_destroy = true
    ignore_changes        = [tags["owner"], size]
    replace_triggered_by  = [null_resource.a[0].id]
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

module "net" {
  source    = "./net"
  version   = "1.0.0"
  providers = { sim = sim.west }
  cidr      = "10.0.${local.count}.0/24"
}

moved {
  from = null_resource.old
  to   = null_resource.a[0]
}

import {
  to = sim_object.b
  id = "b-${var.region}"
}
"#;

const JSON: &str = r#"{
  "//": "The same module as HCL, generated.",
  "terraform": {
    "required_version": ">= 1.5",
    "required_providers": {
      "null": { "source": "hashicorp/null", "version": "~> 3.2" },
      "sim": "1.0.0"
    }
  },
  "provider": {
    "sim": [
      { "region": "${var.region}" },
      { "alias": "west", "region": "us-west-1" }
    ]
  },
  "variable": {
    "region": { "type": "string", "default": "eu-1", "description": "Where things go" },
    "sizes": {
      "type": "map(number)",
      "default": { "small": "1", "large": 4 },
      "sensitive": true,
      "nullable": false,
      "validation": {
        "condition": "${length(var.sizes) > 0}",
        "error_message": "Give sizes."
      }
    },
    "settings": {
      "type": "object({ name = string, port = optional(number, 80) })",
      "default": { "name": "x" }
    }
  },
  "locals": [
    { "prefix": "app-${var.region}" },
    { "count": 2 }
  ],
  "resource": {
    "null_resource": {
      "a": {
        "count": "${local.count}",
        "triggers": {
          "name": "${local.prefix}-${count.index}",
          "big": 12345678901234567890123
        }
      }
    },
    "sim_object": {
      "b": {
        "//": "a comment inside a block body",
        "provider": "sim.west",
        "name": "${null_resource.a[0].id}",
        "size": "${var.sizes[\"large\"] * 2}",
        "depends_on": ["null_resource.a"],
        "rule": [{ "port": 1 }, { "port": "${local.count}" }],
        "lifecycle": {
          "create_before_destroy": true,
          "ignore_changes": ["tags[\"owner\"]", "size"],
          "replace_triggered_by": ["null_resource.a[0].id"]
        }
      }
    }
  },
  "data": {
    "sim_lookup": { "c": { "for_each": "${var.sizes}", "key": "${each.key}" } }
  },
  "output": {
    "ids": {
      "value": "${null_resource.a[*].id}",
      "description": "the ids",
      "sensitive": false,
      "depends_on": ["sim_object.b"]
    }
  },
  "module": {
    "net": {
      "source": "./net",
      "version": "1.0.0",
      "providers": { "sim": "sim.west" },
      "cidr": "10.0.${local.count}.0/24"
    }
  },
  "moved": { "from": "null_resource.old", "to": "null_resource.a[0]" },
  "import": { "to": "sim_object.b", "id": "b-${var.region}" }
}
"#;

fn attr(ty: Type) -> SchemaAttr {
    SchemaAttr::new(ty).optional()
}

fn nested(nesting: Nesting, block: Block) -> NestedBlock {
    NestedBlock {
        nesting,
        block,
        min_items: 0,
        max_items: 0,
    }
}

fn port_block() -> Block {
    let mut b = Block::default();
    b.attributes.insert("port".into(), attr(Type::Number));
    b
}

/// The schemas of the resource types and the provider the tests use.
pub(super) fn schema_of(type_name: &str) -> Block {
    let mut b = Block::default();
    match type_name {
        "null_resource" => {
            b.attributes
                .insert("triggers".into(), attr(Type::map(Type::String)));
        }
        "sim_object" => {
            b.attributes.insert("name".into(), attr(Type::String));
            b.attributes.insert("size".into(), attr(Type::Number));
            b.attributes
                .insert("tags".into(), attr(Type::map(Type::String)));
            b.block_types
                .insert("rule".into(), nested(Nesting::List, port_block()));
            b.block_types
                .insert("config".into(), nested(Nesting::Single, port_block()));
            b.block_types
                .insert("by_key".into(), nested(Nesting::Map, port_block()));
        }
        "sim_lookup" => {
            b.attributes.insert("key".into(), attr(Type::String));
        }
        "sim" => {
            b.attributes.insert("region".into(), attr(Type::String));
        }
        other => panic!("no schema for {other}"),
    }
    b
}

pub(super) fn scope() -> MapScope {
    let mut s = MapScope::new()
        .with_variable("region", Value::from("eu-1"))
        .with_variable(
            "sizes",
            Value::object([("small", Value::int(1)), ("large", Value::int(4))]),
        )
        .with_local("prefix", Value::from("app-eu-1"))
        .with_local("count", Value::int(2))
        .with_resource(
            Resource::managed("null_resource", "a"),
            Value::tuple(vec![
                Value::object([("id", Value::from("n0"))]),
                Value::object([("id", Value::from("n1"))]),
            ]),
        );
    s.count_index = Some(Value::int(1));
    s.each = Some((Value::from("small"), Value::int(1)));
    s
}

pub(super) fn refs(r: Vec<(Reference, fleetform_shared::diag::SourceRange)>) -> Vec<String> {
    let mut out: Vec<String> = r.into_iter().map(|(r, _)| r.to_string()).collect();
    out.sort();
    out.dedup();
    out
}

fn eval(e: &crate::eval::Expr) -> String {
    format!("{:?}", evaluate(e, &scope()))
}

/// What the module means, without where it was written: every setting,
/// every expression's value in one scope and its references, every body
/// decoded against its schema.
fn meaning(m: &Module) -> Vec<String> {
    let mut out = vec![format!(
        "terraform {:?} {:?}",
        m.required_version,
        m.required_providers
            .iter()
            .map(|(k, r)| format!("{k}={}:{:?}", r.source, r.version))
            .collect::<Vec<_>>()
    )];
    for (k, p) in &m.providers {
        out.push(format!(
            "provider {k} {:?} {:?} {:?}",
            p.alias,
            p.body.decode(&schema_of(&p.name), &scope()),
            refs(p.body.references())
        ));
    }
    for (k, v) in &m.variables {
        out.push(format!(
            "variable {k} {:?} {:?} {:?} {} {} {:?}",
            v.ty,
            v.default,
            v.description,
            v.sensitive,
            v.nullable,
            v.validations
                .iter()
                .map(|r| (eval(&r.condition), eval(&r.error_message)))
                .collect::<Vec<_>>()
        ));
    }
    for (k, l) in &m.locals {
        out.push(format!(
            "local {k} {} {:?}",
            eval(&l.expr),
            refs(l.expr.references())
        ));
    }
    for (addr, r) in &m.resources {
        out.push(format!(
            "resource {addr} {} count={:?} for_each={:?} depends_on={:?} cbd={} pd={} ignore={:?} rtb={:?} body={:?} refs={:?}",
            r.provider,
            r.count.as_ref().map(eval),
            r.for_each.as_ref().map(eval),
            refs(r.depends_on.clone()),
            r.lifecycle.create_before_destroy,
            r.lifecycle.prevent_destroy,
            match &r.lifecycle.ignore_changes {
                IgnoreChanges::Paths(p) => p.iter().map(|(p, _)| p.clone()).collect(),
                _ => Vec::new(),
            },
            r.lifecycle
                .replace_triggered_by
                .iter()
                .map(|e| refs(e.references()))
                .collect::<Vec<_>>(),
            r.body.decode(&schema_of(&addr.type_name), &scope()),
            refs(r.body.references()),
        ));
    }
    for (k, o) in &m.outputs {
        out.push(format!(
            "output {k} {} {:?} {} {:?}",
            eval(&o.expr),
            o.description,
            o.sensitive,
            refs(o.depends_on.clone())
        ));
    }
    for (k, c) in &m.module_calls {
        out.push(format!(
            "module {k} {} {:?} {:?} {:?}",
            c.source,
            c.version,
            c.providers
                .iter()
                .map(|(a, b, _)| format!("{a}={b}"))
                .collect::<Vec<_>>(),
            c.arguments
                .iter()
                .map(|(n, a)| format!("{n}={}", eval(&a.expr)))
                .collect::<Vec<_>>()
        ));
    }
    for mv in &m.moved {
        out.push(format!("moved {} {}", mv.from, mv.to));
    }
    for i in &m.imports {
        out.push(format!("import {} {}", i.to, eval(&i.id)));
    }
    out
}

#[test]
fn a_json_module_means_what_its_native_twin_means() {
    let hcl = load_ok(&[("main.tf", HCL)]);
    let json = load_ok(&[("main.tf.json", JSON)]);
    let (h, j) = (meaning(&hcl), meaning(&json));
    for (a, b) in h.iter().zip(&j) {
        assert_eq!(a, b);
    }
    assert_eq!(h.len(), j.len());
    // The comparison is not vacuous: bodies decoded to values.
    let b = &json.resources[&Resource::managed("sim_object", "b")];
    let (v, d) = b.body.decode(&schema_of("sim_object"), &scope());
    assert!(!d.has_errors(), "{d}");
    assert_eq!(v.get_attr("name"), &Value::from("n0"));
    assert_eq!(v.get_attr("size"), &Value::int(8));
    assert_eq!(
        v.get_attr("rule"),
        &Value::tuple(vec![
            Value::object([("port", Value::int(1))]),
            Value::object([("port", Value::int(2))])
        ])
    );
    let a = &json.resources[&Resource::managed("null_resource", "a")];
    let (v, _) = a.body.decode(&schema_of("null_resource"), &scope());
    assert_eq!(
        v.get_attr("triggers").get_attr("big"),
        &Value::from("12345678901234567890123"),
        "JSON numbers keep every digit"
    );
    assert!(matches!(
        json.variables["settings"].ty,
        Some(Type::Object { .. })
    ));
}

#[test]
fn json_declarations_have_json_locations() {
    let m = load_ok(&[("main.tf.json", JSON)]);
    let b = &m.resources[&Resource::managed("sim_object", "b")];
    // Terraform's declaration range of a JSON block is its body's brace.
    let r = &b.decl_range;
    assert_eq!(
        (r.filename.as_str(), r.start.line, r.start.column),
        ("main.tf.json", 48, 12)
    );
    let (reference, range) = &b.depends_on[0];
    assert_eq!(reference.to_string(), "null_resource.a");
    assert_eq!((range.start.line, range.start.column), (53, 24));
    // An interpolation's range is inside the string.
    let refs = m.locals["prefix"].expr.references();
    assert_eq!(
        (refs[0].1.start.line, refs[0].1.start.column),
        (34, 24),
        "var.region in \"app-${{var.region}}\""
    );
}

#[test]
fn ranges_inside_strings_account_for_escapes() {
    let src = r#"{"locals": {
  "e": "\"é\u00e9\n\ud83d\ude00é\" ${var.region}"
}}"#;
    let m = load_ok(&[("main.tf.json", src)]);
    let (_, r) = &m.locals["e"].expr.references()[0];
    let byte = src.find("var.region").unwrap();
    let line = &src[..byte].rsplit('\n').next().unwrap();
    assert_eq!(
        (r.start.line, r.start.column, r.start.byte, r.end.byte),
        (2, line.chars().count() + 1, byte, byte + "var.region".len())
    );
    assert_eq!(
        evaluate(&m.locals["e"].expr, &scope()),
        Ok(Value::from("\"\u{e9}\u{e9}\n\u{1f600}\u{e9}\" eu-1"))
    );
}

#[test]
fn strings_are_literal_where_terraform_takes_them_literally() {
    let m = load_ok(&[(
        "main.tf.json",
        r#"{
  "variable": { "v": { "default": { "k": "${not.a.reference}" }, "description": "costs ${5}" } },
  "output": { "o": { "value": "${1 + 1}", "description": "${x}" } },
  "terraform": { "required_version": "${nope}" },
  "module": { "m": { "source": "./m${x}", "n": "${1 + 2}" } }
}"#,
    )]);
    let v = &m.variables["v"];
    assert_eq!(
        v.default,
        Some(Value::object([("k", Value::from("${not.a.reference}"))]))
    );
    assert_eq!(v.description.as_deref(), Some("costs ${5}"));
    let o = &m.outputs["o"];
    assert_eq!(evaluate(&o.expr, &scope()), Ok(Value::int(2)));
    assert_eq!(o.description.as_deref(), Some("${x}"));
    assert_eq!(m.required_version, ["${nope}"]);
    let call = &m.module_calls["m"];
    assert_eq!(call.source, "./m${x}");
    assert_eq!(
        evaluate(&call.arguments["n"].expr, &scope()),
        Ok(Value::int(3))
    );
}

#[test]
fn a_single_interpolation_keeps_its_type_and_text_makes_a_string() {
    let m = load_ok(&[(
        "main.tf.json",
        r#"{ "locals": { "n": "${local.x}", "s": "${local.x}!", "t": "$${local.x}", "d": "%{ if true }yes%{ endif }" } }"#,
    )]);
    let s = MapScope::new().with_local("x", Value::tuple(vec![Value::int(1)]));
    assert_eq!(
        evaluate(&m.locals["n"].expr, &s),
        Ok(Value::tuple(vec![Value::int(1)]))
    );
    assert!(
        evaluate(&m.locals["s"].expr, &s).is_err(),
        "a list in a string"
    );
    assert_eq!(
        evaluate(&m.locals["t"].expr, &s),
        Ok(Value::from("${local.x}"))
    );
    assert_eq!(evaluate(&m.locals["d"].expr, &s), Ok(Value::from("yes")));
}

/// A JSON string is a bare template: `~` trims only the adjacent line.
/// Expectation taken from terraform 1.11.4.
#[test]
fn a_strip_marker_in_a_json_string_trims_one_line() {
    let m = load_ok(&[(
        "main.tf.json",
        r#"{"locals": {"j1": "A\n%{ for x in [\"a\",\"b\"] ~}\n\n    ${x}\n%{ endfor ~}\n\n  done"}}"#,
    )]);
    assert_eq!(
        evaluate(&m.locals["j1"].expr, &MapScope::new()),
        Ok(Value::from("A\n\n    a\n\n    b\n\n  done"))
    );
}

#[test]
fn json_and_native_files_load_side_by_side() {
    let m = load_ok(&[
        ("main.tf", "variable \"a\" {\n  default = 1\n}\n"),
        (
            "more.tf.json",
            r#"{"output": {"a": {"value": "${var.a}"}}}"#,
        ),
        ("notes.json", "not configuration"),
    ]);
    assert_eq!(m.variables.keys().collect::<Vec<_>>(), ["a"]);
    assert_eq!(refs(m.outputs["a"].expr.references()), ["var.a"]);
    let files: BTreeMap<String, String> = [
        ("main.tf", ""),
        ("x.tf.json", "{}"),
        (".hidden.tf", ""),
        ("backup.tf~", ""),
        ("#lock.tf#", ""),
        ("sub/y.tf.json", "{}"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(
        files_in_dir(&files, ".").keys().collect::<Vec<_>>(),
        ["main.tf", "x.tf.json"]
    );
    assert_eq!(
        files_in_dir(&files, "sub").keys().collect::<Vec<_>>(),
        ["sub/y.tf.json"]
    );
}

#[test]
fn references_and_keywords_are_native_syntax_inside_strings() {
    let m = load_ok(&[(
        "main.tf.json",
        r#"{
  "resource": {
    "sim_object": {
      "a": { "lifecycle": { "ignore_changes": "all", "prevent_destroy": true } },
      "b": {
        "provider": "sim.east",
        "depends_on": ["sim_object.a", "module.net"],
        "lifecycle": { "replace_triggered_by": ["sim_object.a.id"] }
      }
    }
  },
  "variable": { "t": { "type": "list(object({ a = optional(string) }))" }, "any": { "type": "list" } },
  "moved": [
    { "from": "sim_object.old[\"k\"]", "to": "sim_object.a" },
    { "from": "sim_object.older", "to": "sim_object.b" }
  ],
  "import": { "to": "sim_object.b", "id": "b" },
  "module": { "net": { "source": "./net" } }
}"#,
    )]);
    let a = &m.resources[&Resource::managed("sim_object", "a")];
    assert_eq!(a.lifecycle.ignore_changes, IgnoreChanges::All);
    assert!(a.lifecycle.prevent_destroy);
    let b = &m.resources[&Resource::managed("sim_object", "b")];
    assert_eq!(b.provider, "sim.east");
    assert_eq!(refs(b.depends_on.clone()), ["module.net", "sim_object.a"]);
    assert_eq!(
        refs(b.lifecycle.replace_triggered_by[0].references()),
        ["sim_object.a"]
    );
    let mut obj = Type::object([("a", Type::String)]);
    if let Type::Object { optional, .. } = &mut obj {
        optional.insert("a".into());
    }
    assert_eq!(m.variables["t"].ty, Some(Type::list(obj)));
    assert_eq!(m.variables["any"].ty, Some(Type::list(Type::Dynamic)));
    let moved: Vec<(String, String)> = m
        .moved
        .iter()
        .map(|mv| (mv.from.to_string(), mv.to.to_string()))
        .collect();
    assert_eq!(
        moved,
        [
            (
                "sim_object.old[\"k\"]".to_string(),
                "sim_object.a".to_string()
            ),
            ("sim_object.older".to_string(), "sim_object.b".to_string())
        ]
    );
    assert_eq!(m.imports[0].to.to_string(), "sim_object.b");
}
