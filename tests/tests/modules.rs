//! Module calls through the real CLI in embedded mode: a root module with
//! local child modules (nested, with `count` and `for_each`, inputs with
//! types and defaults, outputs used by the root, an aliased provider passed
//! down), applied, inspected, re-planned, changed and destroyed; plus the
//! errors a wrong call gets.

use fleetform_tests::{CliRun, run_in};
use serde_json::Value as Json;
use std::path::Path;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn ok(dir: &Path, args: &[&str]) -> CliRun {
    let r = run_in(dir, args);
    assert_eq!(r.code, 0, "fleetform {args:?}:\n{}", r.all_output());
    r
}

const ROOT: &str = r#"
variable "names" {
  type    = set(string)
  default = ["a", "b"]
}

module "net" {
  source = "./modules/net"
  prefix = "n"
}

module "server" {
  source   = "./modules/server"
  for_each = var.names
  name     = "${each.key}-${module.net.network_id}"
  sizes    = [1, 2]
  opts     = { port = 81 }
}

module "extra" {
  source = "./modules/server"
  count  = 1
  name   = "extra"
}

resource "null_resource" "after" {
  triggers = {
    servers = join(",", [for k, m in module.server : m.first_id])
  }
}

output "network_id" {
  value = module.net.network_id
}

output "server_names" {
  value = { for k, m in module.server : k => m.name }
}

output "extra_count" {
  value = length(module.extra[0].ids)
}

output "ports" {
  value = [module.extra[0].port, module.server["a"].port, module.server["a"].tags]
}
"#;

const NET: &str = r#"
variable "prefix" {
  type = string
}

resource "null_resource" "network" {
  triggers = {
    prefix = var.prefix
  }
}

module "subnets" {
  source  = "../subnets"
  network = null_resource.network.id
}

output "network_id" {
  value = null_resource.network.id
}

output "subnets" {
  value = module.subnets.ids
}
"#;

const SUBNETS: &str = r#"
variable "network" {
  type = string
}

resource "null_resource" "subnet" {
  count = 2
  triggers = {
    network = var.network
    index   = count.index
  }
}

output "ids" {
  value = null_resource.subnet[*].id
}
"#;

const SERVER: &str = r#"
variable "name" {
  type = string
}

variable "sizes" {
  type    = list(number)
  default = [7]
}

variable "opts" {
  type = object({
    port = optional(number, 8080)
    tags = optional(map(string), { team = "core" })
  })
  default = {}
}

resource "null_resource" "server" {
  count = length(var.sizes)
  triggers = {
    name = var.name
    size = var.sizes[count.index]
    dir  = path.module
  }
}

output "name" {
  value = var.name
}

output "ids" {
  value = null_resource.server[*].id
}

output "first_id" {
  value = null_resource.server[0].id
}

output "port" {
  value = var.opts.port
}

output "tags" {
  value = var.opts.tags
}
"#;

fn tree(dir: &Path) {
    write(dir, "main.tf", ROOT);
    write(dir, "modules/net/main.tf", NET);
    write(dir, "modules/subnets/main.tf", SUBNETS);
    write(dir, "modules/server/main.tf", SERVER);
}

#[test]
fn a_module_tree_plans_applies_and_destroys() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    tree(dir);

    let plan = ok(dir, &["plan", "-no-color"]);
    let text = plan.all_output();
    assert!(
        text.contains("Plan: 9 to add, 0 to change, 0 to destroy."),
        "{text}"
    );
    assert!(
        text.contains("module.server[\"a\"].null_resource.server[1] will be created"),
        "{text}"
    );
    assert!(
        text.contains("module.net.module.subnets.null_resource.subnet[0] will be created"),
        "{text}"
    );

    ok(dir, &["apply", "-auto-approve"]);
    let list = ok(dir, &["state", "list"]).stdout;
    let mut listed: Vec<&str> = list.lines().collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            "module.extra[0].null_resource.server[0]",
            "module.net.module.subnets.null_resource.subnet[0]",
            "module.net.module.subnets.null_resource.subnet[1]",
            "module.net.null_resource.network",
            "module.server[\"a\"].null_resource.server[0]",
            "module.server[\"a\"].null_resource.server[1]",
            "module.server[\"b\"].null_resource.server[0]",
            "module.server[\"b\"].null_resource.server[1]",
            "null_resource.after",
        ]
    );

    let outputs: Json = serde_json::from_str(&ok(dir, &["output", "-json"]).stdout).unwrap();
    let network = outputs["network_id"]["value"].as_str().unwrap().to_string();
    assert!(!network.is_empty());
    assert_eq!(
        outputs["server_names"]["value"],
        serde_json::json!({"a": format!("a-{network}"), "b": format!("b-{network}")})
    );
    assert_eq!(outputs["extra_count"]["value"], 1);
    // optional() defaults: filled in a variable's default and in a given object.
    assert_eq!(
        outputs["ports"]["value"],
        serde_json::json!([8080, 81, {"team": "core"}])
    );

    // What the child saw: its inputs (with the default for `sizes` in
    // module.extra) and its own path.module.
    let show = ok(
        dir,
        &["state", "show", "module.extra[0].null_resource.server[0]"],
    )
    .stdout;
    assert!(show.contains("\"extra\""), "{show}");
    assert!(show.contains("\"7\""), "{show}");
    assert!(show.contains("modules/server"), "{show}");

    // Nothing changes on a second plan.
    let again = run_in(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all_output());

    // One more for_each key: only that module instance's resources are new,
    // and what depends on all servers is replaced.
    let more = run_in(
        dir,
        &["plan", "-no-color", "-var", "names=[\"a\",\"b\",\"c\"]"],
    );
    let text = more.all_output();
    assert_eq!(more.code, 0, "{text}");
    assert!(
        text.contains("module.server[\"c\"].null_resource.server[0] will be created"),
        "{text}"
    );
    assert!(
        text.contains("Plan: 3 to add, 0 to change, 1 to destroy."),
        "{text}"
    );

    // Targeting one module instance plans only its resources (and what they need).
    let targeted = ok(
        dir,
        &[
            "plan",
            "-no-color",
            "-var",
            "names=[\"a\",\"b\",\"c\"]",
            "-target=module.server[\"c\"]",
        ],
    );
    let text = targeted.all_output();
    assert!(
        text.contains("Plan: 2 to add, 0 to change, 0 to destroy."),
        "{text}"
    );

    // Removing a key destroys that module instance's objects, saying why.
    ok(dir, &["apply", "-auto-approve", "-var", "names=[\"a\"]"]);
    let list = ok(dir, &["state", "list"]).stdout;
    assert!(!list.contains("module.server[\"b\"]"), "{list}");
    assert!(
        list.contains("module.server[\"a\"].null_resource.server[1]"),
        "{list}"
    );

    ok(dir, &["destroy", "-auto-approve", "-var", "names=[\"a\"]"]);
    assert_eq!(ok(dir, &["state", "list"]).stdout.trim(), "");
}

/// Named values chained through resources, each known only once the
/// resource before it is applied: every local (and a child module's input
/// and output) in the chain is evaluated again from the applied object
/// before the resource after it is configured, whatever lies further back.
#[test]
fn named_values_between_resources_are_current_at_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "main.tf",
        r#"
resource "null_resource" "a" {}

locals {
  a_id  = null_resource.a.id
  a_tag = "a=${local.a_id}"
}

module "m" {
  source = "./m"
  tag    = local.a_tag
}

locals {
  b_tag = "b=${module.m.id}"
}

resource "null_resource" "c" {
  triggers = {
    b = local.b_tag
  }
}

output "a" {
  value = null_resource.a.id
}

output "b" {
  value = module.m.id
}

output "c" {
  value = null_resource.c.triggers.b
}

output "b_tag" {
  value = module.m.tag
}
"#,
    );
    write(
        dir,
        "m/main.tf",
        r#"
variable "tag" {
  type = string
}

resource "null_resource" "b" {
  triggers = {
    tag = var.tag
  }
}

output "id" {
  value = null_resource.b.id
}

output "tag" {
  value = null_resource.b.triggers.tag
}
"#,
    );
    ok(dir, &["apply", "-auto-approve"]);
    let outputs: Json = serde_json::from_str(&ok(dir, &["output", "-json"]).stdout).unwrap();
    let a = outputs["a"]["value"].as_str().unwrap();
    let b = outputs["b"]["value"].as_str().unwrap();
    assert!(!a.is_empty() && !b.is_empty(), "{outputs}");
    assert_eq!(outputs["b_tag"]["value"], format!("a={a}"));
    assert_eq!(outputs["c"]["value"], format!("b={b}"));
    let again = run_in(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all_output());
}

#[test]
fn providers_are_inherited_and_passed_to_modules() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = dir.join("sim-store");
    let other = dir.join("sim-other");
    write(
        dir,
        "main.tf",
        &format!(
            r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{store}"
}}

provider "sim" {{
  alias     = "other"
  store_dir = "{other}"
}}

module "inherits" {{
  source = "./child"
  label  = "default"
}}

module "passed" {{
  source    = "./child"
  label     = "aliased"
  providers = {{ sim = sim.other }}
}}
"#,
            store = store.display(),
            other = other.display()
        ),
    );
    write(
        dir,
        "child/main.tf",
        r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "label" {
  type = string
}

resource "sim_object" "o" {
  name = var.label
}

output "id" {
  value = sim_object.o.id
}
"#,
    );
    let r = run_in(dir, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    let list = ok(dir, &["state", "list"]).stdout;
    assert!(list.contains("module.inherits.sim_object.o"), "{list}");
    assert!(list.contains("module.passed.sim_object.o"), "{list}");
    // The inheriting call used the default configuration, the other the
    // alias it was passed: one object in each configuration's store.
    assert_eq!(fleetform_tests::sim_objects(&store), 1);
    assert_eq!(fleetform_tests::sim_objects(&other), 1);
}

#[test]
fn wrong_module_calls_are_errors_with_their_location() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "main.tf",
        "module \"m\" {\n  source  = \"./m\"\n  unknown = 1\n}\n\noutput \"o\" {\n  value = module.m.missing\n}\n\nmodule \"gone\" {\n  source = \"./nowhere\"\n}\n",
    );
    write(
        dir,
        "m/main.tf",
        "variable \"needed\" {}\n\noutput \"here\" {\n  value = var.needed\n}\n",
    );
    let r = run_in(dir, &["validate", "-no-color"]);
    let text = r.all_output();
    assert_eq!(r.code, 1, "{text}");
    for expected in ["Unreadable module directory", "on main.tf line 11"] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    // Fix the source; the call's own errors remain.
    write(
        dir,
        "main.tf",
        "module \"m\" {\n  source  = \"./m\"\n  unknown = 1\n}\n\noutput \"o\" {\n  value = module.m.missing\n}\n",
    );
    let r = run_in(dir, &["validate", "-no-color"]);
    let text = r.all_output();
    assert_eq!(r.code, 1, "{text}");
    for expected in [
        "Unsupported argument",
        "on main.tf line 3",
        "Missing required argument",
        "The argument \"needed\" is required",
        "Unsupported attribute",
        "on main.tf line 7",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    assert!(!dir.join(".fleetform").join("state").exists());
}
