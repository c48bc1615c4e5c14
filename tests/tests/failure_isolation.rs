//! Failure isolation on real processes (embedded mode, the sim provider):
//! a layer of instances feeding a second layer instance by instance
//! through a module instance each (its input, a local inside, its output),
//! with some creates of the first refused by the simulated cloud (a name
//! that starts with `refused-`). fleetform creates every instance of the
//! second layer whose own input exists; what reads a failed instance, or
//! the whole first layer, waits for the next apply. Where `terraform` 1.11
//! is installed the same apply runs under it, for the side-by-side count
//! (Terraform holds back the whole second layer); otherwise that part
//! prints `SKIP:`.

use fleetform_tests::{run_in, sim_store_objects};
use std::collections::BTreeMap;
use std::path::Path;

const COUNT: usize = 20;
const FAILING: [usize; 2] = [7, 13];

/// `bad` names the first-layer instances whose create fails.
fn config(store: &Path, bad: &[usize]) -> String {
    let bad: Vec<String> = bad.iter().map(|i| i.to_string()).collect();
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{store}"
}}

locals {{
  bad = [{bad}]
}}

resource "sim_object" "a" {{
  count = {COUNT}
  name  = contains(local.bad, count.index) ? "refused-a-${{count.index}}" : "a-${{count.index}}"
}}

module "wrap" {{
  source = "./wrap"
  count  = {COUNT}
  a_name = sim_object.a[count.index].name
}}

resource "sim_object" "b" {{
  count = {COUNT}
  name  = "b-of-${{module.wrap[count.index].name}}"
}}

resource "sim_object" "summary" {{
  name = "summary-${{length(sim_object.a)}}"
  tags = {{ first = sim_object.a[0].id, all = join(",", sim_object.a[*].id) }}
}}
"#,
        store = store.display(),
        bad = bad.join(", "),
    )
}

/// The module between the layers: its input reaches its object through a
/// local.
const WRAP: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "a_name" {
  type = string
}

locals {
  name = "w-${var.a_name}"
}

resource "sim_object" "in" {
  name = local.name
}

output "name" {
  value = sim_object.in.name
}
"#;

fn write(dir: &Path, store: &Path, bad: &[usize]) {
    std::fs::create_dir_all(dir.join("wrap")).unwrap();
    std::fs::write(dir.join("main.tf"), config(store, bad)).unwrap();
    std::fs::write(dir.join("wrap/main.tf"), WRAP).unwrap();
}

/// How many objects of each layer (`a-`, `w-` in the module, `b-of-`,
/// `summary-`) a store holds.
fn layers(store: &Path) -> BTreeMap<&'static str, usize> {
    let mut out = BTreeMap::from([("a", 0), ("b", 0), ("summary", 0), ("wrap", 0)]);
    for name in sim_store_objects(store).into_values() {
        let layer = if name.starts_with("b-of-") {
            "b"
        } else if name.starts_with("w-") {
            "wrap"
        } else if name.starts_with("summary-") {
            "summary"
        } else {
            "a"
        };
        *out.get_mut(layer).unwrap() += 1;
    }
    out
}

#[test]
fn a_failed_instance_holds_back_only_the_instances_that_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, store) = (tmp.path().join("config"), tmp.path().join("store"));
    write(&dir, &store, &FAILING);

    let first = run_in(&dir, &["apply", "-auto-approve", "-no-color"]);
    let said = first.all_output();
    assert_ne!(first.code, 0, "{said}");
    let made = layers(&store);
    eprintln!("fleetform, one apply: {made:?}");
    // Every first-layer instance but the refused ones; every second-layer
    // instance whose own first-layer instance exists; not the summary,
    // which reads the whole first layer.
    let ok = COUNT - FAILING.len();
    assert_eq!(
        made,
        BTreeMap::from([("a", ok), ("b", ok), ("summary", 0), ("wrap", ok)]),
        "{said}"
    );
    for i in FAILING {
        assert!(
            said.contains(&format!(
                "module.wrap[{i}].sim_object.in: skipped because it reads sim_object.a[{i}], which failed or was skipped"
            )) && said.contains(&format!(
                "sim_object.b[{i}]: skipped because it reads module.wrap[{i}].sim_object.in, which failed or was skipped"
            )),
            "{said}"
        );
    }
    assert!(
        said.contains("5 operation(s) that depend on a failed instance were skipped; 36 went on"),
        "{said}"
    );
    assert!(said.contains("InvalidParameterValue"), "{said}");
    let listed = run_in(&dir, &["state", "list"]);
    assert_eq!(listed.stdout.lines().count(), 3 * ok, "{}", listed.stdout);

    // Fixed, the next apply creates only what is missing.
    write(&dir, &store, &[]);
    let second = run_in(&dir, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(second.code, 0, "{}", second.all_output());
    assert!(
        second.stdout.contains(&format!(
            "{} added, 0 changed, 0 destroyed",
            3 * FAILING.len() + 1
        )),
        "{}",
        second.stdout
    );
    assert_eq!(
        layers(&store),
        BTreeMap::from([("a", COUNT), ("b", COUNT), ("summary", 1), ("wrap", COUNT)])
    );

    // Terraform 1.11, the same first apply: it holds back every instance of
    // `b`, since its graph has one node per resource.
    let Some(terraform) =
        fleetform_tests::terraform::Terraform::find("failure isolation", &["fleetform/sim"])
    else {
        return;
    };
    let tf_tmp = tempfile::tempdir().unwrap();
    let (tf_dir, tf_store) = (tf_tmp.path().join("config"), tf_tmp.path().join("store"));
    write(&tf_dir, &tf_store, &FAILING);
    let got = terraform.run_plain(&tf_dir, &["get"], "");
    assert_eq!(got.code, 0, "{}", got.stderr);
    let tf = terraform.run_plain(&tf_dir, &["apply", "-auto-approve"], "");
    assert_ne!(tf.code, 0, "{}", tf.stdout);
    let tf_made = layers(&tf_store);
    eprintln!("terraform 1.11, one apply: {tf_made:?}");
    assert_eq!(
        tf_made,
        BTreeMap::from([("a", ok), ("b", 0), ("summary", 0), ("wrap", 0)]),
        "{}{}",
        tf.stdout,
        tf.stderr
    );
}
