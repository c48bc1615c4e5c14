//! Data sources in state: Terraform 1.11 records every data source's
//! latest read in its state, and `state push` brings those records in.
//! A data source's record is never deleted through its provider: the
//! object it read belongs to a resource (often of the same type name),
//! so a data source removed from the configuration, or a destroy, only
//! drops the record from state. Seen before the fix: removing the data
//! block planned "data.sim_object.by_name will be destroyed" and the
//! apply deleted the managed object it had read. Embedded mode, the real
//! `sim` provider process.

use fleetform_tests::{CliRun, objects_per_name, run_in};
use std::path::Path;

const HEAD: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}
provider "sim" {
  store_dir = "${path.module}/store"
}
resource "sim_object" "a" {
  name = "a"
}
"#;

const DATA: &str = r#"
data "sim_object" "by_name" {
  name = sim_object.a.name
}
"#;

fn ok(run: &CliRun) {
    assert_eq!(run.code, 0, "{}", run.all_output());
}

/// Pushes the current state with a record of `data.sim_object.by_name`
/// added as Terraform 1.11 writes one: the read of object `a`.
fn push_with_data_record(dir: &Path) {
    let pulled = run_in(dir, &["state", "pull"]);
    ok(&pulled);
    let mut doc: serde_json::Value = serde_json::from_str(&pulled.stdout).unwrap();
    let a = doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "a")
        .expect("sim_object.a in state")
        .clone();
    let mut data = a.clone();
    data["mode"] = "data".into();
    data["name"] = "by_name".into();
    for inst in data["instances"].as_array_mut().unwrap() {
        let inst = inst.as_object_mut().unwrap();
        inst.remove("dependencies");
        inst.remove("private");
    }
    doc["resources"].as_array_mut().unwrap().insert(0, data);
    doc["serial"] = (doc["serial"].as_u64().unwrap() + 1).into();
    std::fs::write(dir.join("with-data.tfstate"), doc.to_string()).unwrap();
    ok(&run_in(dir, &["state", "push", "with-data.tfstate"]));
    let listed = run_in(dir, &["state", "list"]);
    assert!(
        listed.stdout.contains("data.sim_object.by_name\n"),
        "{}",
        listed.stdout
    );
}

/// A directory where the configuration with the data source was applied, then a
/// record of the data source pushed into its state.
fn applied_with_a_data_record() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.tf"), format!("{HEAD}{DATA}")).unwrap();
    ok(&run_in(dir, &["apply", "-auto-approve"]));
    push_with_data_record(dir);
    tmp
}

#[test]
fn a_data_source_in_state_is_dropped_never_deleted() {
    let tmp = applied_with_a_data_record();
    let (dir, store) = (tmp.path(), tmp.path().join("store"));

    // The data block removed: nothing to do (Terraform 1.11 plans no
    // action for it either).
    std::fs::write(dir.join("main.tf"), HEAD).unwrap();
    let plan = run_in(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);
    assert!(!plan.stdout.contains("destroy"), "{}", plan.stdout);

    // The next apply that changes something drops the record; the object
    // the data source read is still there.
    let with_b = format!("{HEAD}resource \"sim_object\" \"b\" {{\n  name = \"b\"\n}}\n");
    std::fs::write(dir.join("main.tf"), &with_b).unwrap();
    let applied = run_in(dir, &["apply", "-auto-approve"]);
    ok(&applied);
    assert!(
        applied
            .stdout
            .contains("Resources: 1 added, 0 changed, 0 destroyed."),
        "{}",
        applied.stdout
    );
    let listed = run_in(dir, &["state", "list"]);
    assert_eq!(listed.stdout, "sim_object.a\nsim_object.b\n");
    let objects = objects_per_name(&store);
    assert_eq!(objects.get("a"), Some(&1), "{objects:?}");
    assert_eq!(objects.get("b"), Some(&1), "{objects:?}");

    // A destroy deletes the resources' objects, each once, and drops the
    // data source's record.
    push_with_data_record(dir);
    let destroyed = run_in(dir, &["destroy", "-auto-approve"]);
    ok(&destroyed);
    assert!(
        destroyed.stdout.contains("Resources: 2 destroyed."),
        "{}",
        destroyed.stdout
    );
    assert!(
        !destroyed.stdout.contains("data.sim_object"),
        "{}",
        destroyed.stdout
    );
    let listed = run_in(dir, &["state", "list"]);
    assert_eq!(listed.stdout, "");
    assert!(objects_per_name(&store).is_empty());
}

#[test]
fn a_data_source_still_declared_is_read_again_and_its_record_kept() {
    let tmp = applied_with_a_data_record();
    let (dir, store) = (tmp.path(), tmp.path().join("store"));
    let plan = run_in(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);
    assert!(!plan.stdout.contains("destroy"), "{}", plan.stdout);
    // Read again, not taken from its record.
    assert!(
        plan.stdout
            .contains("data.sim_object.by_name: Read complete after"),
        "{}",
        plan.stdout
    );
    let listed = run_in(dir, &["state", "list"]);
    assert!(listed.stdout.contains("data.sim_object.by_name\n"));
    assert_eq!(objects_per_name(&store).get("a"), Some(&1));
}

/// Side by side with Terraform 1.11: its state records the data source;
/// with the data block removed it plans nothing, and fleetform, given that
/// very state file and the same objects, plans nothing too.
#[test]
fn a_data_source_removed_plans_nothing_like_terraform() {
    let Some(tf) = fleetform_tests::terraform::Terraform::find("data_in_state", &["fleetform/sim"])
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("terraform");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("main.tf"), format!("{HEAD}{DATA}")).unwrap();
    ok(&tf.run_plain(&theirs, &["apply", "-auto-approve", "-input=false"], ""));
    let listed = tf.run_plain(&theirs, &["state", "list"], "");
    assert!(
        listed.stdout.contains("data.sim_object.by_name\n"),
        "{}",
        listed.stdout
    );
    std::fs::write(theirs.join("main.tf"), HEAD).unwrap();
    let plan = tf.run_plain(&theirs, &["plan", "-input=false", "-detailed-exitcode"], "");
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);

    let ours = tmp.path().join("fleetform");
    std::fs::create_dir_all(ours.join("store")).unwrap();
    for e in std::fs::read_dir(theirs.join("store")).unwrap().flatten() {
        std::fs::copy(e.path(), ours.join("store").join(e.file_name())).unwrap();
    }
    std::fs::write(ours.join("main.tf"), HEAD).unwrap();
    std::fs::copy(
        theirs.join("terraform.tfstate"),
        ours.join("from-terraform.tfstate"),
    )
    .unwrap();
    ok(&run_in(&ours, &["state", "push", "from-terraform.tfstate"]));
    let plan = run_in(&ours, &["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);
    assert!(!plan.stdout.contains("destroy"), "{}", plan.stdout);
    assert_eq!(objects_per_name(&ours.join("store")).get("a"), Some(&1));
}
