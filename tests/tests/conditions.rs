//! Custom conditions, check blocks and removed blocks, end to end in
//! embedded mode: preconditions and postconditions at plan and at apply
//! (unknown ones decided at apply), output preconditions, check blocks that
//! only warn, and `removed` forgetting objects without destroying them.

use fleetform_tests::sim_objects;
use std::path::Path;

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let r = fleetform_tests::run_in(dir, args);
    (r.code, r.stdout, r.stderr)
}

fn write(dir: &Path, text: &str) {
    std::fs::write(dir.join("main.tf"), text).unwrap();
}

fn state_list(dir: &Path) -> Vec<String> {
    let (code, out, err) = run(dir, &["state", "list"]);
    assert_eq!(code, 0, "{out}\n{err}");
    out.lines().map(str::to_string).collect()
}

const SIM: &str = r#"
terraform {
  required_providers {
    sim = {
      source = "fleetform/sim"
    }
  }
}

provider "sim" {
  store_dir = ".fleetform/sim-store"
}
"#;

#[test]
fn a_false_precondition_fails_the_plan_at_the_condition() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        r#"variable "n" {
  default = 3
}

resource "null_resource" "a" {
  count = 2
  lifecycle {
    precondition {
      condition     = var.n > 5 || count.index == 1
      error_message = "n is ${var.n} for instance ${count.index}; it must be above 5."
    }
  }
}
"#,
    );
    let (code, out, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("Error: Resource precondition failed"), "{err}");
    assert!(
        err.contains("on main.tf line 9, in resource \"null_resource\" \"a\":"),
        "{err}"
    );
    assert!(
        err.contains("n is 3 for instance 0; it must be above 5."),
        "{err}"
    );
    // Only instance 0 fails.
    assert_eq!(err.matches("Resource precondition failed").count(), 1);
    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve", "-var", "n=6"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(state_list(tmp.path()).len(), 2);
}

#[test]
fn postconditions_see_self_at_plan_and_after_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = |v: &str, id_check: &str| {
        format!(
            r#"resource "null_resource" "a" {{
  triggers = {{
    v = "{v}"
  }}
  lifecycle {{
    postcondition {{
      condition     = self.triggers.v == "good"
      error_message = "triggers.v is ${{self.triggers.v}}"
    }}
    postcondition {{
      condition     = {id_check}
      error_message = "the id is ${{self.id}}"
    }}
  }}
}}
"#
        )
    };
    // Known while planning: the plan fails.
    write(tmp.path(), &cfg("bad", "true"));
    let (code, out, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Error: Resource postcondition failed"),
        "{err}"
    );
    assert!(err.contains("triggers.v is bad"), "{err}");

    // `self.id` is unknown until apply: checked after it, and the object
    // is kept in state although the condition fails.
    write(tmp.path(), &cfg("good", "self.id == \"never\""));
    let (code, out, err) = run(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 2, "{out}\n{err}");
    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Error: Resource postcondition failed"),
        "{err}"
    );
    assert!(err.contains("the id is "), "{err}");
    assert!(!err.contains("the id is ${"), "{err}");
    assert_eq!(state_list(tmp.path()), vec!["null_resource.a"]);
    // Now known while planning: the next plan fails.
    let (code, _, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("Error: Resource postcondition failed"),
        "{err}"
    );

    write(tmp.path(), &cfg("good", "self.id != \"\""));
    let (code, out, err) = run(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

#[test]
fn an_unknown_precondition_is_checked_at_apply() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        r#"resource "null_resource" "first" {}

resource "null_resource" "second" {
  lifecycle {
    precondition {
      condition     = null_resource.first.id == "never"
      error_message = "first has id ${null_resource.first.id}"
    }
  }
}
"#,
    );
    let (code, out, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Plan: 2 to add, 0 to change, 0 to destroy."),
        "{out}"
    );
    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("Error: Resource precondition failed"), "{err}");
    assert!(err.contains("first has id "), "{err}");
    // The failing instance was never created; what it depends on was.
    assert_eq!(state_list(tmp.path()), vec!["null_resource.first"]);
}

#[test]
fn output_preconditions_in_the_root_and_in_modules() {
    let tmp = tempfile::tempdir().unwrap();
    let child = tmp.path().join("child");
    std::fs::create_dir(&child).unwrap();
    std::fs::write(
        child.join("main.tf"),
        r#"variable "port" {}

output "url" {
  value = "http://x:${var.port}"
  precondition {
    condition     = var.port != 22
    error_message = "port 22 is for ssh"
  }
}
"#,
    )
    .unwrap();
    let cfg = |root_port: u16, child_port: u16| {
        format!(
            r#"variable "port" {{
  default = {root_port}
}}

module "c" {{
  source = "./child"
  port   = {child_port}
}}

output "url" {{
  value = "http://y:${{var.port}}"
  precondition {{
    condition     = var.port != 80
    error_message = "port 80 is not allowed"
  }}
}}

output "child" {{
  value = module.c.url
}}
"#
        )
    };
    write(tmp.path(), &cfg(80, 8080));
    let (code, out, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Error: Module output value precondition failed"),
        "{err}"
    );
    assert!(
        err.contains("on main.tf line 13, in output \"url\":"),
        "{err}"
    );
    assert!(err.contains("port 80 is not allowed"), "{err}");

    write(tmp.path(), &cfg(8080, 22));
    let (code, out, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("port 22 is for ssh"), "{err}");
    assert!(err.contains("on child/main.tf line 6"), "{err}");

    write(tmp.path(), &cfg(8080, 8081));
    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("http://x:8081"), "{out}");
}

#[test]
fn check_blocks_only_warn_after_plan_and_apply() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        &format!(
            r#"{SIM}
resource "null_resource" "a" {{}}

check "id_check" {{
  assert {{
    condition     = null_resource.a.id == "nope"
    error_message = "id is ${{null_resource.a.id}}"
  }}
}}

check "lookup" {{
  data "sim_object" "missing" {{
    name = "nope"
  }}
  assert {{
    condition     = data.sim_object.missing.size == 1
    error_message = "the object is missing"
  }}
}}

check "fine" {{
  assert {{
    condition     = true
    error_message = "never shown"
  }}
}}
"#
        ),
    );
    let (code, out, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // The id is not known yet: nothing to say about it while planning.
    assert!(!out.contains("id is"), "{out}");
    // The scoped data source fails to read: a warning, never an error.
    assert!(!err.contains("Error:"), "{err}");
    assert!(out.contains("Warning:"), "{out}");

    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Apply complete! Resources: 1 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(
        out.contains("Warning: Check block assertion failed"),
        "{out}"
    );
    assert!(out.contains("in check \"id_check\""), "{out}");
    assert!(out.contains("id is "), "{out}");
    assert!(!out.contains("never shown"), "{out}");
    assert!(!err.contains("Error:"), "{err}");

    // Known now: the next plan warns, and still has nothing to do.
    let (code, out, err) = run(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Warning: Check block assertion failed"),
        "{out}"
    );
}

#[test]
fn removed_with_destroy_false_forgets_without_destroying() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join(".fleetform/sim-store");
    write(
        tmp.path(),
        &format!(
            r#"{SIM}
resource "sim_object" "keep" {{
  name = "keep"
}}

resource "sim_object" "other" {{
  name = "other"
}}

resource "sim_object" "gone" {{
  name = "gone"
}}
"#
        ),
    );
    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(sim_objects(&store), 3);

    // A removed block naming a resource still configured is an error.
    write(
        tmp.path(),
        &format!(
            r#"{SIM}
resource "sim_object" "keep" {{
  name = "keep"
}}

removed {{
  from = sim_object.keep
  lifecycle {{
    destroy = false
  }}
}}
"#
        ),
    );
    let (code, out, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Error: Removed resource still exists"),
        "{err}"
    );
    assert!(
        err.contains("This statement declares that sim_object.keep was removed, but it is still declared in configuration."),
        "{err}"
    );

    write(
        tmp.path(),
        &format!(
            r#"{SIM}
resource "sim_object" "other" {{
  name = "other"
}}

removed {{
  from = sim_object.keep
  lifecycle {{
    destroy = false
  }}
}}

removed {{
  from = sim_object.gone
  lifecycle {{
    destroy = true
  }}
}}
"#
        ),
    );
    let (code, out, err) = run(tmp.path(), &["plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains(
            "# sim_object.keep will no longer be managed by fleetform, but will not be destroyed"
        ),
        "{out}"
    );
    assert!(out.contains("# sim_object.gone will be destroyed"), "{out}");
    assert!(
        out.contains("Plan: 0 to add, 0 to change, 1 to destroy, 1 to forget."),
        "{out}"
    );
    assert!(
        out.contains("Warning: Some objects will no longer be managed by fleetform"),
        "{out}"
    );
    assert!(out.contains(" - sim_object.keep"), "{out}");

    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Apply complete! Resources: 0 added, 0 changed, 1 destroyed, 1 forgotten."),
        "{out}"
    );
    assert_eq!(state_list(tmp.path()), vec!["sim_object.other"]);
    // keep is no longer managed but still exists; gone was destroyed.
    assert_eq!(sim_objects(&store), 2);
    let (code, out, err) = run(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("No changes."), "{out}");
}

#[test]
fn a_forget_plan_in_json_and_removed_modules() {
    let tmp = tempfile::tempdir().unwrap();
    let child = tmp.path().join("child");
    std::fs::create_dir(&child).unwrap();
    std::fs::write(
        child.join("main.tf"),
        "resource \"null_resource\" \"x\" {}\n",
    )
    .unwrap();
    write(
        tmp.path(),
        "resource \"null_resource\" \"a\" {}\nmodule \"c\" {\n  source = \"./child\"\n}\n",
    );
    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    write(
        tmp.path(),
        "removed {\n  from = null_resource.a\n  lifecycle {\n    destroy = false\n  }\n}\nremoved {\n  from = module.c\n  lifecycle {\n    destroy = false\n  }\n}\n",
    );
    let (code, out, err) = run(tmp.path(), &["plan", "-out=tfplan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("# module.c.null_resource.x will no longer be managed by fleetform"),
        "{out}"
    );
    let (code, out, err) = run(tmp.path(), &["show", "-json", "tfplan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let plan: serde_json::Value = serde_json::from_str(&out).unwrap();
    let changes = plan["resource_changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2, "{out}");
    for change in changes {
        assert_eq!(change["change"]["actions"], serde_json::json!(["forget"]));
    }
    let (code, out, err) = run(tmp.path(), &["apply", "tfplan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(state_list(tmp.path()).is_empty());
    let (code, out, err) = run(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

/// After an apply, the state records every checkable object's outcome in
/// Terraform's `check_results` (compared field for field with Terraform
/// 1.11.4's state on this configuration when written: the same entries,
/// except that Terraform leaves the root output "unknown" after a failed
/// apply, where fleetform evaluates it); a state pushed with
/// check_results gives them back unchanged.
#[test]
fn the_state_records_check_results_as_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("m")).unwrap();
    write(
        tmp.path(),
        r#"variable "n" {
  default = 2
}
resource "terraform_data" "a" {
  count = var.n
  input = count.index
  lifecycle {
    postcondition {
      condition     = self.output < 1
      error_message = "index too big"
    }
  }
}
check "health" {
  assert {
    condition     = var.n == 2
    error_message = "not two"
  }
}
module "m" {
  source = "./m"
  count  = 1
}
"#,
    );
    std::fs::write(
        tmp.path().join("m/main.tf"),
        r#"variable "x" {
  default = "x"
}
resource "terraform_data" "b" {
  input = var.x
  lifecycle {
    precondition {
      condition     = var.x != ""
      error_message = "never"
    }
  }
}
output "p" {
  value = 1
  precondition {
    condition     = var.x != ""
    error_message = "never"
  }
}
"#,
    )
    .unwrap();
    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("index too big"), "{err}");
    let (code, pulled, err) = run(tmp.path(), &["state", "pull"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&pulled).unwrap();
    let mut results: Vec<serde_json::Value> = doc["check_results"].as_array().unwrap().clone();
    results.sort_by_key(|r| r["config_addr"].as_str().unwrap().to_string());
    let want = serde_json::json!([
        {"object_kind": "check", "config_addr": "check.health", "status": "pass",
         "objects": [{"object_addr": "check.health", "status": "pass"}]},
        {"object_kind": "output", "config_addr": "module.m.output.p", "status": "pass",
         "objects": [{"object_addr": "module.m[0].output.p", "status": "pass"}]},
        {"object_kind": "resource", "config_addr": "module.m.terraform_data.b", "status": "pass",
         "objects": [{"object_addr": "module.m[0].terraform_data.b", "status": "pass"}]},
        {"object_kind": "resource", "config_addr": "terraform_data.a", "status": "fail",
         "objects": [{"object_addr": "terraform_data.a[0]", "status": "pass"},
                     {"object_addr": "terraform_data.a[1]", "status": "fail",
                      "failure_messages": ["index too big"]}]}
    ]);
    assert_eq!(serde_json::Value::Array(results), want, "{pulled}");

    // One instance: everything passes, and the check fails (a warning).
    let (code, out, err) = run(tmp.path(), &["apply", "-auto-approve", "-var", "n=1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&run(tmp.path(), &["state", "pull"]).1).unwrap();
    let by_addr = |a: &str| {
        doc["check_results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["config_addr"] == a)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_addr("terraform_data.a")["status"], "pass");
    assert_eq!(by_addr("check.health")["status"], "fail");
    assert_eq!(
        by_addr("check.health")["objects"][0]["failure_messages"],
        serde_json::json!(["not two"])
    );

    // Pushed into another directory, pulled back: the same check results.
    let other = tempfile::tempdir().unwrap();
    let pulled = run(tmp.path(), &["state", "pull"]).1;
    std::fs::write(other.path().join("in.tfstate"), &pulled).unwrap();
    let (code, out, err) = run(other.path(), &["state", "push", "in.tfstate"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !format!("{out}{err}").contains("check_results"),
        "{out}{err}"
    );
    let again: serde_json::Value =
        serde_json::from_str(&run(other.path(), &["state", "pull"]).1).unwrap();
    assert_eq!(again["check_results"], doc["check_results"]);
}
