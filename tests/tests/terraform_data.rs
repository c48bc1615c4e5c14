//! Terraform's built-in provider (`terraform.io/builtin/terraform`) in
//! embedded mode, with no `required_providers` entry and no provider
//! installation: `terraform_data` through create, in-place update (output
//! known after apply), replacement by `triggers_replace` and no-op plans,
//! and `terraform_remote_state` reading a local state file.

use std::path::Path;

fn run(dir: &Path, args: &[&str]) -> fleetform_tests::CliRun {
    fleetform_tests::run_in(dir, args)
}

fn outputs(dir: &Path) -> serde_json::Value {
    let r = run(dir, &["output", "-json"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    serde_json::from_str(&r.stdout).unwrap()
}

/// Terraform's ids: hashicorp/go-uuid's 8-4-4-4-12 lowercase hex.
fn is_terraform_id(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && s.chars()
            .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
}

const DATA: &str = r#"
variable "input" {
  default = "one"
}

variable "trigger" {
  default = "a"
}

resource "terraform_data" "x" {
  input            = var.input
  triggers_replace = var.trigger
}

resource "terraform_data" "structured" {
  input = {
    name  = var.input
    ports = [80, 443]
  }
}

output "out" {
  value = terraform_data.x.output
}

output "id" {
  value = terraform_data.x.id
}

output "structured" {
  value = terraform_data.structured.output
}
"#;

#[test]
fn terraform_data_follows_the_managed_resource_lifecycle() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.tf"), DATA).unwrap();

    let r = run(dir, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(
        r.stdout
            .contains("Apply complete! Resources: 2 added, 0 changed, 0 destroyed."),
        "{}",
        r.stdout
    );
    let out = outputs(dir);
    assert_eq!(
        out["out"]["value"], "one",
        "output equals input after apply"
    );
    assert_eq!(
        out["structured"]["value"],
        serde_json::json!({"name": "one", "ports": [80, 443]})
    );
    let first_id = out["id"]["value"].as_str().unwrap().to_string();
    assert!(is_terraform_id(&first_id), "{first_id}");

    // The state names the built-in provider, which nobody installed.
    let r = run(dir, &["show", "-json"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    let shown: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let resources = shown["values"]["root_module"]["resources"]
        .as_array()
        .unwrap();
    assert!(
        resources
            .iter()
            .all(|r| r["provider_name"] == "terraform.io/builtin/terraform"),
        "{resources:?}"
    );

    let r = run(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(r.code, 0, "nothing to do after apply: {}", r.all_output());

    // A new input updates in place; the output is known only after apply.
    let r = run(dir, &["plan", "-detailed-exitcode", "-var", "input=two"]);
    assert_eq!(r.code, 2, "{}", r.all_output());
    for line in [
        "# terraform_data.x will be updated in-place",
        // Aligned on every attribute that is set, the hidden
        // `triggers_replace` too, as terraform 1.11.4 aligns them.
        "~ input            = \"one\" -> \"two\"",
        "~ output           = \"one\" -> (known after apply)",
        "Plan: 0 to add, 2 to change, 0 to destroy.",
    ] {
        assert!(r.stdout.contains(line), "{line:?} missing:\n{}", r.stdout);
    }
    let r = run(dir, &["apply", "-auto-approve", "-var", "input=two"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    let out = outputs(dir);
    assert_eq!(out["out"]["value"], "two");
    assert_eq!(
        out["id"]["value"],
        first_id.as_str(),
        "updated, not replaced"
    );

    // A new trigger replaces the object.
    let args = ["-var", "input=two", "-var", "trigger=b"];
    let r = run(dir, &[&["plan"][..], &args].concat());
    assert_eq!(r.code, 0, "{}", r.all_output());
    for line in [
        "# terraform_data.x must be replaced",
        "~ triggers_replace = \"a\" -> \"b\" # forces replacement",
        "~ id               = \"",
        "Plan: 1 to add, 0 to change, 1 to destroy.",
    ] {
        assert!(r.stdout.contains(line), "{line:?} missing:\n{}", r.stdout);
    }
    let r = run(dir, &[&["apply", "-auto-approve"][..], &args].concat());
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(
        r.stdout
            .contains("Apply complete! Resources: 1 added, 0 changed, 1 destroyed."),
        "{}",
        r.stdout
    );
    let out = outputs(dir);
    let new_id = out["id"]["value"].as_str().unwrap();
    assert!(is_terraform_id(new_id) && new_id != first_id, "{new_id}");
    assert_eq!(out["out"]["value"], "two");

    // And then there is nothing left to do.
    let r = run(dir, &[&["plan", "-detailed-exitcode"][..], &args].concat());
    assert_eq!(r.code, 0, "second plan is a no-op: {}", r.all_output());
    assert!(r.stdout.contains("No changes."), "{}", r.stdout);
}

const OTHER_STATE: &str = r#"{
  "version": 4,
  "terraform_version": "1.9.0",
  "serial": 3,
  "lineage": "0f5b2d36-4c51-4bde-8a57-6c0bd9b8e1a2",
  "outputs": {
    "vpc_id": {"value": "vpc-123", "type": "string"},
    "subnets": {"value": ["10.0.1.0/24", "10.0.2.0/24"], "type": ["list", "string"]},
    "db": {
      "value": {"host": "db.internal", "port": 5432},
      "type": ["object", {"host": "string", "port": "number"}],
      "sensitive": true
    }
  },
  "resources": []
}
"#;

const REMOTE: &str = r#"
data "terraform_remote_state" "net" {
  backend = "local"
  config = {
    path = "other/terraform.tfstate"
  }
  defaults = {
    region = "eu-west-1"
    vpc_id = "overridden by the state"
  }
}

resource "terraform_data" "uses" {
  input = data.terraform_remote_state.net.outputs.vpc_id
}

output "vpc_id" {
  value = terraform_data.uses.output
}

output "second_subnet" {
  value = data.terraform_remote_state.net.outputs.subnets[1]
}

output "db_port" {
  value = data.terraform_remote_state.net.outputs.db.port
}

output "region" {
  value = data.terraform_remote_state.net.outputs.region
}
"#;

#[test]
fn terraform_remote_state_reads_a_local_state_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("other")).unwrap();
    std::fs::write(dir.join("other/terraform.tfstate"), OTHER_STATE).unwrap();
    std::fs::write(dir.join("main.tf"), REMOTE).unwrap();

    let r = run(dir, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    let out = outputs(dir);
    assert_eq!(out["vpc_id"]["value"], "vpc-123");
    assert_eq!(out["second_subnet"]["value"], "10.0.2.0/24");
    assert_eq!(out["db_port"]["value"], 5432);
    assert_eq!(out["region"]["value"], "eu-west-1", "from defaults");
    let r = run(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(r.code, 0, "{}", r.all_output());

    // The other configuration moves on: the next plan sees its new output.
    std::fs::write(
        dir.join("other/terraform.tfstate"),
        OTHER_STATE.replace("vpc-123", "vpc-456"),
    )
    .unwrap();
    let r = run(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(r.code, 2, "{}", r.all_output());
    assert!(
        r.stdout.contains("~ input  = \"vpc-123\" -> \"vpc-456\""),
        "{}",
        r.stdout
    );

    // A state that is not there, and a backend fleetform cannot read.
    std::fs::write(
        dir.join("main.tf"),
        REMOTE.replace("other/terraform.tfstate", "nowhere.tfstate"),
    )
    .unwrap();
    let r = run(dir, &["plan"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert!(
        r.stderr.contains("Unable to find remote state")
            && r.stderr.contains(
                "No stored state was found for the given workspace in the given backend."
            ),
        "{}",
        r.stderr
    );
    std::fs::write(
        dir.join("main.tf"),
        REMOTE.replace(
            "backend = \"local\"\n  config = {\n    path = \"other/terraform.tfstate\"\n  }",
            "backend = \"s3\"\n  config = {\n    bucket = \"b\"\n    key    = \"k\"\n  }",
        ),
    )
    .unwrap();
    let r = run(dir, &["plan"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert!(
        r.stderr.contains("Unsupported backend")
            && r.stderr
                .contains("reading from the \"s3\" backend is not supported"),
        "{}",
        r.stderr
    );
}
