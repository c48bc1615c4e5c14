//! `state push` takes a Terraform state file (version 4) in: the next plan
//! finds the objects it records, `state pull` gives the same resources back,
//! and a file of another lineage, an older one or a broken one is refused
//! with nothing changed. Embedded mode, our null provider.

use fleetform_tests::run_in;

const CONFIG: &str = r#"
resource "null_resource" "a" {
  count = 2
}

output "n" {
  value = length(null_resource.a)
}
"#;

/// A state as Terraform writes it for CONFIG after an apply.
fn terraform_state(lineage: &str, serial: u64) -> String {
    format!(
        r#"{{
  "version": 4,
  "terraform_version": "0.15.5",
  "serial": {serial},
  "lineage": "{lineage}",
  "outputs": {{ "n": {{ "value": 2, "type": "number" }} }},
  "resources": [
    {{
      "mode": "managed",
      "type": "null_resource",
      "name": "a",
      "each": "list",
      "provider": "provider[\"registry.terraform.io/hashicorp/null\"]",
      "instances": [
        {{ "index_key": 0, "schema_version": 0, "attributes": {{ "id": "1111", "triggers": null }}, "sensitive_attributes": [] }},
        {{ "index_key": 1, "schema_version": 0, "attributes": {{ "id": "2222", "triggers": null }}, "sensitive_attributes": [] }}
      ]
    }}
  ]
}}"#
    )
}

#[test]
fn a_terraform_state_pushed_in_plans_no_changes_and_pulls_back_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.tf"), CONFIG).unwrap();
    std::fs::write(dir.join("terraform.tfstate"), terraform_state("lin-1", 7)).unwrap();

    let pushed = run_in(dir, &["state", "push", "terraform.tfstate"]);
    assert_eq!(pushed.code, 0, "{}", pushed.all_output());
    assert!(!pushed.stderr.contains("Note:"), "{}", pushed.stderr);
    let listed = run_in(dir, &["state", "list"]);
    assert_eq!(listed.stdout, "null_resource.a[0]\nnull_resource.a[1]\n");
    let plan = run_in(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);

    let pulled = run_in(dir, &["state", "pull"]);
    let doc = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
    let (mine, mut theirs) = (doc(&pulled.stdout), doc(&terraform_state("lin-1", 7)));
    // Terraform 0.15's "each" is read and not written back: Terraform 1.11
    // no longer writes it.
    for r in theirs["resources"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("each");
    }
    assert_eq!(mine["resources"], theirs["resources"]);
    assert_eq!(mine["outputs"], theirs["outputs"]);
    assert_eq!(mine["lineage"], "lin-1");

    // Another lineage is something else's state; an older serial would
    // lose changes: both refused unless -force, and nothing changes.
    std::fs::write(dir.join("other.tfstate"), terraform_state("lin-2", 9)).unwrap();
    let refused = run_in(dir, &["state", "push", "other.tfstate"]);
    assert_eq!(refused.code, 1, "{}", refused.all_output());
    assert!(refused.stderr.contains("lineage"), "{}", refused.stderr);
    std::fs::write(dir.join("old.tfstate"), terraform_state("lin-1", 0)).unwrap();
    let refused = run_in(dir, &["state", "push", "old.tfstate"]);
    assert_eq!(refused.code, 1, "{}", refused.all_output());
    assert!(refused.stderr.contains("older"), "{}", refused.stderr);
    std::fs::write(dir.join("bad.tfstate"), r#"{"version": 4, "serial": 1}"#).unwrap();
    let broken = run_in(dir, &["state", "push", "bad.tfstate"]);
    assert_eq!(broken.code, 1, "{}", broken.all_output());
    assert!(
        broken.stderr.contains("Invalid state file"),
        "{}",
        broken.stderr
    );
    let history = run_in(dir, &["state", "history"]);
    assert_eq!(history.stdout.lines().count(), 2, "{}", history.stdout);

    // What fleetform does not keep of a file is said, not dropped silently.
    let other = terraform_state("lin-2", 9)
        .replace(
            "provider[\\\"registry.terraform.io/hashicorp/null\\\"]",
            "provider[\\\"registry.terraform.io/hashicorp/null\\\"].alt",
        )
        .replace("\"outputs\"", "\"check_results\": [], \"outputs\"");
    std::fs::write(dir.join("other.tfstate"), other).unwrap();
    let forced = run_in(dir, &["state", "push", "-force", "other.tfstate"]);
    assert_eq!(forced.code, 0, "{}", forced.all_output());
    assert!(
        !forced.stderr.contains("check_results"),
        "check results are kept now: {}",
        forced.stderr
    );
    assert!(
        forced
            .stderr
            .contains("null_resource.a was managed through"),
        "{}",
        forced.stderr
    );
    let pulled = run_in(dir, &["state", "pull"]);
    assert_eq!(doc(&pulled.stdout)["lineage"], "lin-2");
    assert_eq!(doc(&pulled.stdout)["check_results"], serde_json::json!([]));
}
