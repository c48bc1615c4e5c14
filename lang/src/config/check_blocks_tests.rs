//! Loading tests of `check` and `removed` blocks and custom conditions.

use super::*;
use fleetform_shared::addr::{ConfigResource, Module as ModulePath, Resource};
use fleetform_shared::diag::Diagnostics;

fn load(src: &str) -> (Module, Diagnostics) {
    let files = [("main.tf".to_string(), src.to_string())].into();
    let (m, d) = load_module(&files);
    (m.expect("module"), d)
}

fn load_ok(src: &str) -> Module {
    let (m, d) = load(src);
    assert!(!d.has_errors(), "{d}");
    m
}

fn summaries(d: &Diagnostics) -> Vec<String> {
    d.iter().map(|d| d.summary.clone()).collect()
}

#[test]
fn resource_and_output_conditions_load_without_errors() {
    let m = load_ok(
        r#"
resource "null_resource" "a" {
  lifecycle {
    precondition {
      condition     = var.n > 0
      error_message = "n must be positive"
    }
    postcondition {
      condition     = self.id != ""
      error_message = "no id"
    }
  }
}
variable "n" { default = 1 }
output "o" {
  value = 1
  precondition {
    condition     = var.n < 10
    error_message = "too big"
  }
}
"#,
    );
    let r = &m.resources[&Resource::managed("null_resource", "a")];
    assert_eq!(r.lifecycle.preconditions.len(), 1);
    assert_eq!(r.lifecycle.postconditions.len(), 1);
    assert_eq!(r.lifecycle.preconditions[0].condition.range.start.line, 5);
    assert_eq!(m.outputs["o"].preconditions.len(), 1);
}

#[test]
fn condition_without_error_message_is_an_error() {
    let (_, d) = load(
        r#"
resource "null_resource" "a" {
  lifecycle {
    precondition {
      condition = true
    }
  }
}
"#,
    );
    assert_eq!(summaries(&d), vec!["Missing required argument"]);
    assert!(
        d.iter()
            .next()
            .unwrap()
            .detail
            .contains("\"error_message\"")
    );
}

#[test]
fn check_block_with_scoped_data_source() {
    let m = load_ok(
        r#"
check "health" {
  data "sim_lookup" "x" {
    name = "a"
  }
  assert {
    condition     = data.sim_lookup.x.value == 1
    error_message = "bad"
  }
  assert {
    condition     = true
    error_message = "never"
  }
}
"#,
    );
    let c = &m.checks["health"];
    assert_eq!(c.asserts.len(), 2);
    let data = Resource::data("sim_lookup", "x");
    assert_eq!(c.data.as_ref(), Some(&data));
    let block = &m.resources[&data];
    assert_eq!(block.check.as_deref(), Some("health"));
    assert!(block.body.attributes.contains_key("name"));
    assert_eq!(m.provider_local_names(), vec!["sim".to_string()]);
}

#[test]
fn check_block_rules() {
    let (_, d) = load("check \"c\" {\n}\n");
    assert_eq!(summaries(&d), vec!["Zero assert blocks"]);

    let (_, d) = load(
        r#"
check "c" {
  data "sim_lookup" "x" {}
  data "sim_lookup" "y" {}
  assert {
    condition     = true
    error_message = "x"
  }
}
data "sim_lookup" "x" {}
"#,
    );
    assert_eq!(
        summaries(&d),
        vec![
            "Multiple data resource blocks",
            "Duplicate data configuration"
        ]
    );

    let (_, d) = load(
        r#"
check "c" {
  data "sim_lookup" "x" {
    count = 2
  }
  assert {
    condition     = true
    error_message = "x"
  }
}
check "c" {
  assert {
    condition     = true
    error_message = "x"
  }
}
"#,
    );
    assert_eq!(
        summaries(&d),
        vec!["Invalid meta-argument", "Duplicate check block"]
    );
}

#[test]
fn removed_blocks() {
    let m = load_ok(
        r#"
removed {
  from = null_resource.a
  lifecycle {
    destroy = false
  }
}
removed {
  from = module.child.null_resource.b
}
removed {
  from = module.gone
}
"#,
    );
    assert_eq!(m.removed.len(), 3);
    assert_eq!(
        m.removed[0].from,
        RemovedTarget::Resource(ConfigResource::root(Resource::managed(
            "null_resource",
            "a"
        )))
    );
    assert!(!m.removed[0].destroy);
    // Destroying is the default, as in Terraform 1.9.
    assert!(m.removed[1].destroy);
    assert_eq!(
        m.removed[1].from.to_string(),
        "module.child.null_resource.b"
    );
    assert_eq!(
        m.removed[2].from,
        RemovedTarget::Module("module.gone".parse::<ModulePath>().unwrap())
    );
}

#[test]
fn removed_block_errors() {
    let (m, d) = load(
        r#"
removed {
  from = null_resource.a[0]
}
removed {
  from = data.sim_lookup.x
}
removed {
  lifecycle {
    destroy = false
  }
}
removed {
  from = null_resource.b
  lifecycle {
    destroy         = false
    prevent_destroy = true
  }
}
"#,
    );
    assert_eq!(
        summaries(&d),
        vec![
            "Invalid \"removed\" address",
            "Data source address is not allowed",
            "Missing required argument",
            "Unsupported argument",
        ]
    );
    assert_eq!(m.removed.len(), 1);
}

#[test]
fn a_scoped_data_source_is_only_for_its_check() {
    let files = [(
        "main.tf".to_string(),
        r#"
check "c" {
  data "sim_object" "x" {
    name = "a"
  }
  assert {
    condition     = data.sim_object.x.size == 1
    error_message = "x"
  }
}
output "leak" {
  value = data.sim_object.x.size
}
"#
        .to_string(),
    )]
    .into();
    let (config, d) = load_config(&files);
    assert!(!d.has_errors(), "{d}");
    let err = match crate::graph::config::build(&config.unwrap(), &[]) {
        Err(d) => d,
        Ok(_) => panic!("a reference from outside the check is refused"),
    };
    let e = err.iter().next().unwrap();
    assert_eq!(e.summary, "Reference to scoped resource");
    assert_eq!(
        e.detail,
        "The referenced data resource \"sim_object\" \"x\" is not available from this context."
    );
    assert_eq!(e.range.as_ref().unwrap().start.line, 12);
}
