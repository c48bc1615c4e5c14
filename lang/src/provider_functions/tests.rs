//! Finding provider function calls in a module and `validate`'s check of
//! them against the providers' signatures.

use super::*;
use crate::config::load_config;
use fleetform_shared::function::FunctionParameter;
use fleetform_shared::types::Type;

fn module(files: &[(&str, &str)]) -> Module {
    let files = files
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (config, diags) = load_config(&files);
    assert!(!diags.has_errors(), "{diags:?}");
    config.unwrap().modules()[0].module.clone()
}

const MAIN: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}
variable "v" {
  validation {
    condition     = provider::sim::ok(var.v)
    error_message = "no"
  }
}
locals {
  l = "${provider::sim::shout("a", 1)}!"
}
resource "sim_object" "o" {
  count = provider::sim::count()
  name  = provider::sim::missing(1)
  dynamic "tag" {
    for_each = [1]
    content {
      v = provider::undeclared::f()
    }
  }
}
output "o" { value = [for x in [1] : provider::sim::shout(x, x)] }
"#;

const JSON: &str = r#"{
  "resource": {
    "sim_object": {
      "j": { "name": "${provider::sim::from_json(1)}" }
    }
  }
}"#;

#[test]
fn every_call_is_found_with_its_range_json_included() {
    let m = module(&[("main.tf", MAIN), ("more.tf.json", JSON)]);
    let mut found: Vec<(String, String, usize)> = calls(&m)
        .into_iter()
        .map(|c| (c.local, c.name, c.range.start.line))
        .collect();
    found.sort();
    let want = [
        ("sim", "count", 17),
        ("sim", "from_json", 4),
        ("sim", "missing", 18),
        ("sim", "ok", 9),
        ("sim", "shout", 14),
        ("sim", "shout", 26),
        ("undeclared", "f", 22),
    ]
    .map(|(l, n, line)| (l.to_string(), n.to_string(), line));
    assert_eq!(found, want);
}

#[test]
fn validate_names_missing_functions_and_undeclared_providers() {
    let m = module(&[("main.tf", MAIN)]);
    let sig = FunctionSignature {
        parameters: vec![FunctionParameter::new("x", Type::Dynamic)],
        variadic: None,
        return_type: Type::Dynamic,
        summary: String::new(),
        description: String::new(),
        deprecation: String::new(),
    };
    let sim = ProviderAddr::new("fleetform", "sim");
    let known = ["ok", "shout", "count"]
        .map(|n| (n.to_string(), sig.clone()))
        .into_iter()
        .collect();
    let functions = ModuleFunctions::new(&m, Arc::new(Signatures(BTreeMap::from([(sim, known)]))));
    let got: Vec<(String, usize, usize, usize)> = check_calls(&m, &functions)
        .iter()
        .map(|d| {
            let r = d.range.clone().unwrap();
            (d.detail.clone(), r.start.line, r.start.column, r.end.column)
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "The function \"missing\" is not available from the provider \"sim\".".to_string(),
                18,
                11,
                33
            ),
            (
                "There is no function named \"provider::undeclared::f\". Ensure that provider name \"undeclared\" is declared in this module's required_providers block, and that this provider offers a function named \"f\".".to_string(),
                22,
                11,
                34
            ),
        ]
    );
}
