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

/// Pushes the current state with its record of `data.sim_object.by_name`
/// replaced by one as Terraform 1.11 writes it: the read of object `a`.
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
    // The apply recorded its own read: replaced by the one Terraform wrote.
    let resources = doc["resources"].as_array_mut().unwrap();
    resources.retain(|r| r["mode"] != "data");
    resources.insert(0, data);
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

/// A data source reading an object another configuration manages.
const READS_EXT: &str = r#"
data "sim_object" "ext" {
  name = "ext"
}
"#;

/// The configuration that manages object `ext` in the store at `store`,
/// tagged `v = v`.
fn ext_config(store: &Path, v: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}
provider "sim" {{
  store_dir = "{}"
}}
resource "sim_object" "ext" {{
  name = "ext"
  tags = {{ v = "{v}" }}
}}
"#,
        store.display()
    )
}

/// What one tool's state says after each step of [`records_after_applies`].
#[derive(Debug)]
struct Seen {
    /// `state list` after the first apply.
    listed: String,
    /// The data sources' records after the first apply: address → the
    /// record's attributes without `id`, its schema version and its
    /// sensitive attributes.
    records: std::collections::BTreeMap<String, serde_json::Value>,
    /// The serial before and after an apply without changes, run once
    /// the object a data source reads changed.
    serials: (u64, u64),
    /// The data sources' records after that apply.
    last_records: std::collections::BTreeMap<String, serde_json::Value>,
    /// The tags `data.sim_object.ext`'s record holds after that apply.
    ext_tags: serde_json::Value,
}

/// The data source records of a state document (`state pull`, or
/// Terraform's `terraform.tfstate`), as [`Seen::records`] keeps them.
fn data_records(doc: &serde_json::Value) -> std::collections::BTreeMap<String, serde_json::Value> {
    let mut out = std::collections::BTreeMap::new();
    for r in doc["resources"].as_array().unwrap() {
        if r["mode"] != "data" {
            continue;
        }
        for inst in r["instances"].as_array().unwrap() {
            let mut attrs = inst["attributes"].clone();
            attrs.as_object_mut().unwrap().remove("id");
            let addr = format!(
                "data.{}.{}",
                r["type"].as_str().unwrap(),
                r["name"].as_str().unwrap()
            );
            out.insert(
                addr,
                serde_json::json!({
                    "provider": r["provider"],
                    "attributes": attrs,
                    "schema_version": inst["schema_version"],
                    "sensitive_attributes": inst["sensitive_attributes"],
                    "has_dependencies": inst.get("dependencies").is_some_and(|d| d.as_array().is_some_and(|a| !a.is_empty())),
                }),
            );
        }
    }
    out
}

fn ext_tags(doc: &serde_json::Value) -> serde_json::Value {
    doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["mode"] == "data" && r["name"] == "ext")
        .map(|r| r["instances"][0]["attributes"]["tags"].clone())
        .unwrap_or_default()
}

/// The same steps with either tool, in `base`: object `ext` made by another
/// configuration; the configuration with a managed object and two data
/// sources (one read at apply, since it reads the object being created;
/// one read while planning) applied; `ext` changed elsewhere; then an
/// apply with nothing to change. `run` runs the tool in a directory;
/// `state` reads the state document there.
fn records_after_applies(
    base: &Path,
    run: &dyn Fn(&Path, &[&str]) -> fleetform_tests::CliRun,
    state: &dyn Fn(&Path) -> serde_json::Value,
) -> Seen {
    let (main, ext) = (base.join("main"), base.join("ext"));
    let store = main.join("store");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::create_dir_all(&ext).unwrap();
    // The other configuration is fleetform's on both sides: only the
    // objects it leaves in the store matter.
    std::fs::write(ext.join("main.tf"), ext_config(&store, "1")).unwrap();
    ok(&run_in(&ext, &["apply", "-auto-approve"]));
    std::fs::write(main.join("main.tf"), format!("{HEAD}{DATA}{READS_EXT}")).unwrap();
    ok(&run(&main, &["apply", "-auto-approve"]));
    let listed = run(&main, &["state", "list"]);
    ok(&listed);
    let first = state(&main);
    std::fs::write(ext.join("main.tf"), ext_config(&store, "2")).unwrap();
    ok(&run_in(&ext, &["apply", "-auto-approve"]));
    let again = run(&main, &["apply", "-auto-approve"]);
    ok(&again);
    assert!(
        again.stdout.contains("0 added, 0 changed, 0 destroyed"),
        "{}",
        again.stdout
    );
    let last = state(&main);
    Seen {
        listed: listed.stdout,
        records: data_records(&first),
        serials: (
            first["serial"].as_u64().unwrap(),
            last["serial"].as_u64().unwrap(),
        ),
        ext_tags: ext_tags(&last),
        last_records: data_records(&last),
    }
}

fn fleetform_state(dir: &Path) -> serde_json::Value {
    let pulled = run_in(dir, &["state", "pull"]);
    ok(&pulled);
    serde_json::from_str(&pulled.stdout).unwrap()
}

/// fleetform's applies record every data source's latest read in state:
/// one read at apply and one read while planning, each as a record with
/// no dependencies, listed first as Terraform lists them; an apply with
/// nothing to change still records a read that changed.
#[test]
fn an_apply_records_its_data_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let seen = records_after_applies(tmp.path(), &run_in, &fleetform_state);
    assert_eq!(
        seen.listed,
        "data.sim_object.by_name\ndata.sim_object.ext\nsim_object.a\n"
    );
    assert_eq!(seen.records.len(), 2, "{:?}", seen.records);
    assert_eq!(
        seen.records["data.sim_object.by_name"]["attributes"]["name"],
        "a"
    );
    assert_eq!(
        seen.records["data.sim_object.ext"]["attributes"]["tags"],
        serde_json::json!({ "v": "1" })
    );
    assert!(seen.serials.1 > seen.serials.0, "{:?}", seen.serials);
    assert_eq!(seen.ext_tags, serde_json::json!({ "v": "2" }));
}

/// Side by side with Terraform 1.11 through the same steps: the same
/// `state list`, the same data source records (attributes but the random
/// ids, schema version, sensitive attributes, no dependencies), and both
/// save the changed read with an apply that changes nothing.
#[test]
fn data_source_records_match_terraform() {
    let Some(tf) = fleetform_tests::terraform::Terraform::find("data_in_state", &["fleetform/sim"])
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let theirs = records_after_applies(
        &tmp.path().join("terraform"),
        &|dir, args| {
            let mut all = args.to_vec();
            if args[0] == "apply" {
                all.push("-input=false");
            }
            tf.run_plain(dir, &all, "")
        },
        &|dir| {
            serde_json::from_str(&std::fs::read_to_string(dir.join("terraform.tfstate")).unwrap())
                .unwrap()
        },
    );
    let ours = records_after_applies(&tmp.path().join("fleetform"), &run_in, &fleetform_state);
    assert_eq!(ours.listed, theirs.listed);
    assert_eq!(ours.records, theirs.records);
    assert_eq!(ours.last_records, theirs.last_records);
    assert!(theirs.serials.1 > theirs.serials.0, "{:?}", theirs.serials);
    assert!(ours.serials.1 > ours.serials.0, "{:?}", ours.serials);
    assert_eq!(ours.ext_tags, theirs.ext_tags);
}
