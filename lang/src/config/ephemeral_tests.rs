//! The configuration check for ephemeral values: every place that would
//! record one is refused with Terraform 1.11's words at its location, and
//! the places that do not record are accepted.

use super::{ephemeral_references, load_config};
use crate::eval::Reference;
use fleetform_shared::addr;
use fleetform_shared::diag::Diagnostics;
use std::collections::BTreeMap;

fn load(files: &[(&str, &str)]) -> (Option<super::Config>, Diagnostics) {
    let files: BTreeMap<String, String> = files
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    load_config(&files)
}

/// Summary, file:line, context and address of each diagnostic.
fn found(d: &Diagnostics) -> Vec<(String, String, Option<String>, Option<String>)> {
    d.iter()
        .map(|d| {
            let r = d.range.as_ref().expect("a location");
            (
                d.summary.clone(),
                format!("{}:{}", r.filename, r.start.line),
                d.context.clone(),
                d.address.clone(),
            )
        })
        .collect()
}

const ROOT: &str = r#"variable "token" {
  type      = string
  ephemeral = true
}
locals {
  bearer = "Bearer ${var.token}"
}
resource "null_resource" "a" {
  triggers = {
    t = local.bearer
  }
}
resource "null_resource" "c" {
  count = length(var.token)
}
resource "null_resource" "f" {
  for_each = toset([var.token])
}
output "app" {
  value = terraform.applying
}
module "child" {
  source = "./child"
  secret = var.token
  plain  = var.token
}
output "from_child" {
  value = module.child.echo
}
output "root_eph" {
  value     = "x"
  ephemeral = true
}
"#;

const CHILD: &str = r#"variable "secret" {
  type      = string
  ephemeral = true
}
variable "plain" {
  type = string
}
output "echo" {
  value     = var.secret
  ephemeral = true
}
data "local_file" "f" {
  filename = var.secret
}
"#;

#[test]
fn places_that_would_record_an_ephemeral_value_are_refused_where_they_are() {
    let (config, d) = load(&[("main.tf", ROOT), ("child/main.tf", CHILD)]);
    assert!(config.is_some());
    let s = |x: &str| x.to_string();
    let o = |x: &str| Some(x.to_string());
    assert_eq!(
        found(&d),
        [
            (
                s("Invalid use of ephemeral value"),
                s("child/main.tf:13"),
                o("data \"local_file\" \"f\""),
                o("module.child.data.local_file.f"),
            ),
            (
                s("Invalid count argument"),
                s("main.tf:14"),
                o("resource \"null_resource\" \"c\""),
                None,
            ),
            (
                s("Invalid for_each argument"),
                s("main.tf:17"),
                o("resource \"null_resource\" \"f\""),
                None,
            ),
            (
                s("Ephemeral value not allowed"),
                s("main.tf:20"),
                o("output \"app\""),
                None,
            ),
            (
                s("Ephemeral value not allowed"),
                s("main.tf:25"),
                o("module \"child\""),
                None,
            ),
            (
                s("Ephemeral value not allowed"),
                s("main.tf:28"),
                o("output \"from_child\""),
                None,
            ),
            (
                s("Ephemeral output not allowed"),
                s("main.tf:30"),
                None,
                None
            ),
        ]
    );
    let details: Vec<&str> = d.iter().map(|d| d.detail.as_str()).collect();
    assert_eq!(
        details[0],
        "Ephemeral values are not valid for \"filename\", because it is not a write-only attribute and must be persisted to state."
    );
    assert_eq!(
        details[6],
        "Ephemeral outputs are not allowed in context of a root module"
    );
}

#[test]
fn places_that_record_nothing_take_ephemeral_values() {
    let root = r#"variable "token" {
  type      = string
  ephemeral = true
}
locals {
  bearer = "Bearer ${var.token}"
}
provider "null" {
  alias = "x"
}
resource "null_resource" "a" {
  triggers = {
    t = ephemeralasnull(local.bearer)
  }
  provisioner "local-exec" {
    command = "echo ${local.bearer}"
  }
}
module "child" {
  source = "./child"
  secret = local.bearer
}
output "o" {
  value = ephemeralasnull(module.child.echo)
}
"#;
    let child = r#"variable "secret" {
  type      = string
  ephemeral = true
}
output "echo" {
  value     = var.secret
  ephemeral = true
}
"#;
    let (config, d) = load(&[("main.tf", root), ("child/main.tf", child)]);
    assert!(d.is_empty(), "{d}");
    let refs = ephemeral_references(&config.unwrap());
    let root_refs: Vec<String> = refs[&addr::Module::root()]
        .iter()
        .map(Reference::to_string)
        .collect();
    assert_eq!(
        root_refs,
        [
            "var.token",
            "local.bearer",
            "module.child",
            "module.child.echo"
        ]
    );
    assert_eq!(
        refs[&addr::Module::root().child("child")]
            .iter()
            .map(Reference::to_string)
            .collect::<Vec<_>>(),
        ["var.secret"]
    );
}

/// A managed resource's arguments are checked when it is planned, with its
/// schema: an ephemeral resource's value (or an ephemeral variable's) is
/// refused where the argument is not write-only, with Terraform's words,
/// at the argument, in the resource's context and for its address.
#[test]
fn an_ephemeral_resource_value_is_refused_in_an_argument_that_is_not_write_only() {
    use fleetform_shared::schema::{Attribute, Block};
    use fleetform_shared::types::Type;
    let src = r#"ephemeral "random_password" "db" {
  length = 16
}
resource "db" "a" {
  name        = ephemeral.random_password.db.result
  password_wo = ephemeral.random_password.db.result
  note        = ephemeralasnull(ephemeral.random_password.db.result)
}
"#;
    let (config, d) = load(&[("main.tf", src)]);
    assert!(d.is_empty(), "checked when planned, not when loaded: {d}");
    let config = config.unwrap();
    let refs = ephemeral_references(&config);
    assert_eq!(
        refs[&addr::Module::root()]
            .iter()
            .map(Reference::to_string)
            .collect::<Vec<_>>(),
        ["ephemeral.random_password.db"]
    );
    let block = &config.root.module.resources[&addr::Resource::managed("db", "a")];
    let mut schema = Block::default();
    for name in ["name", "note"] {
        schema
            .attributes
            .insert(name.into(), Attribute::new(Type::String).optional());
    }
    let mut password = Attribute::new(Type::String).optional();
    password.write_only = true;
    schema.attributes.insert("password_wo".into(), password);
    let mut scope = crate::eval::MapScope::new();
    scope.ephemeral = refs[&addr::Module::root()].clone();
    let d = super::check_resource_arguments(&block.body, &schema, &scope, &block.header(), "db.a");
    assert_eq!(
        found(&d),
        [(
            "Invalid use of ephemeral value".to_string(),
            "main.tf:5".to_string(),
            Some("resource \"db\" \"a\"".to_string()),
            Some("db.a".to_string()),
        )]
    );
    assert_eq!(
        d.iter().next().unwrap().detail,
        "Ephemeral values are not valid for \"name\", because it is not a write-only attribute and must be persisted to state."
    );
}

/// A write-only argument decodes like any other: its value goes to the
/// provider in the configuration (the plan and state hold null for it).
#[test]
fn a_write_only_argument_is_decoded_into_the_configuration() {
    use fleetform_shared::schema::{Attribute, Block};
    use fleetform_shared::types::Type;
    let src = "resource \"db\" \"a\" {\n  password_wo = \"pw\"\n}\n";
    let (config, d) = load(&[("main.tf", src)]);
    assert!(d.is_empty(), "{d}");
    let config = config.unwrap();
    let block = config.root.module.resources.values().next().unwrap();
    let mut schema = Block::default();
    let mut password = Attribute::new(Type::String).optional();
    password.write_only = true;
    schema.attributes.insert("password_wo".into(), password);
    let (v, d) = block.body.decode(&schema, &crate::eval::MapScope::new());
    assert!(d.is_empty(), "{d}");
    assert_eq!(v.get_attr("password_wo").as_str(), Some("pw"));
}

/// Locals that use the previous one twice, 40 deep, the last one fed by an
/// ephemeral variable at the bottom of the chain: following references
/// anew at each use would take 2^40 steps; each local is decided once.
#[test]
fn deep_chains_of_locals_are_decided_once_each() {
    let mut src = String::from(
        "variable \"t\" {\n  type      = string\n  ephemeral = true\n}\nlocals {\n  l0 = var.t\n",
    );
    for i in 1..=40 {
        let p = i - 1;
        src.push_str(&format!("  l{i} = \"${{local.l{p}}}${{local.l{p}}}\"\n"));
    }
    src.push_str("}\noutput \"o\" {\n  value = local.l40\n}\n");
    let (config, d) = load(&[("main.tf", &src)]);
    let found = found(&d);
    assert_eq!(found.len(), 1, "{d}");
    assert_eq!(found[0].0, "Ephemeral value not allowed", "{d}");
    let refs = ephemeral_references(&config.unwrap());
    assert_eq!(
        refs[&addr::Module::root()].len(),
        42,
        "the variable and 41 locals"
    );
}

#[test]
fn an_ephemeral_resource_s_lifecycle_refuses_what_it_cannot_honour_at_its_location() {
    let src = r#"
ephemeral "random_password" "p" {
  length = 8
  lifecycle {
    create_before_destroy = true
    postcondition {
      condition     = self.result != ""
      error_message = "empty"
    }
  }
}
"#;
    let (_, diags) = load(&[("main.tf", src)]);
    // As terraform 1.11.4 validate says it (checked with our random
    // provider through dev_overrides).
    assert!(diags.iter().any(|d| d.detail
        == "The lifecycle argument \"create_before_destroy\" is defined only for managed resources (\"resource\" blocks), and is not valid for ephemeral resources."));
    let errors: Vec<(String, usize)> = diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| {
            (
                d.summary.clone(),
                d.range.as_ref().map_or(0, |r| r.start.line),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            (
                "Invalid ephemeral resource lifecycle argument".to_string(),
                5
            ),
            (
                "Unsupported feature: postconditions of ephemeral resources".to_string(),
                6
            ),
        ]
    );
}
