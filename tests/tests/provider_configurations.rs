//! Which provider configuration manages an object, when the configuration
//! names several of one provider (an alias, one passed to a module): the
//! state records it as Terraform 1.11 does, and an object gone from the
//! configuration is destroyed with that configuration, never with another
//! of the same provider. The `sim` provider's `store_dir` plays the cloud
//! account: a destroy sent to the wrong store finds nothing to delete, and
//! before this was recorded the object stayed behind while the state
//! forgot it.

use fleetform_tests::terraform::Terraform;
use fleetform_tests::{CliRun, run_in};
use std::path::Path;

const PROVIDERS: &str = r#"terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "stores" {
  type = string
}

provider "sim" {
  store_dir = "${var.stores}/a"
}

provider "sim" {
  alias     = "b"
  store_dir = "${var.stores}/b"
}
"#;

const RESOURCES: &str = r#"
resource "sim_object" "x" {
  provider = sim.b
  name     = "x"
}

module "m" {
  source = "./m"
  providers = {
    sim = sim.b
  }
}
"#;

const MODULE: &str = r#"terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

resource "sim_object" "y" {
  name = "y"
}
"#;

/// A configuration directory whose stores are under `stores`.
fn write_config(dir: &Path, stores: &Path, main: &str) {
    std::fs::create_dir_all(dir.join("m")).unwrap();
    std::fs::write(dir.join("main.tf"), main).unwrap();
    std::fs::write(dir.join("m/main.tf"), MODULE).unwrap();
    std::fs::write(
        dir.join("terraform.tfvars"),
        format!("stores = {:?}\n", stores.display().to_string()),
    )
    .unwrap();
}

/// The objects in a sim store.
fn objects(store: &Path) -> usize {
    std::fs::read_dir(store)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        })
        .unwrap_or(0)
}

/// Each resource's `provider` in a state file, sorted.
fn providers_in(state_json: &str) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(state_json).expect("state JSON");
    let mut out: Vec<String> = doc["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| {
            format!(
                "{}{}.{} {}",
                r["module"]
                    .as_str()
                    .map(|m| format!("{m}."))
                    .unwrap_or_default(),
                r["type"].as_str().unwrap(),
                r["name"].as_str().unwrap(),
                r["provider"].as_str().unwrap()
            )
        })
        .collect();
    out.sort();
    out
}

fn ok(what: &str, r: &CliRun) {
    assert_eq!(r.code, 0, "{what}:\n{}", r.all_output());
}

#[test]
fn an_object_gone_from_the_configuration_is_destroyed_with_the_configuration_that_made_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, stores) = (tmp.path().join("w"), tmp.path().join("stores"));
    write_config(&dir, &stores, &format!("{PROVIDERS}{RESOURCES}"));
    ok(
        "apply",
        &run_in(&dir, &["apply", "-auto-approve", "-no-color"]),
    );
    assert_eq!(
        (objects(&stores.join("a")), objects(&stores.join("b"))),
        (0, 2)
    );
    let pulled = run_in(&dir, &["state", "pull"]);
    ok("state pull", &pulled);
    let ours = providers_in(&pulled.stdout);
    let b = "provider[\"registry.terraform.io/fleetform/sim\"].b";
    assert_eq!(
        ours,
        vec![
            format!("module.m.sim_object.y {b}"),
            format!("sim_object.x {b}")
        ]
    );
    // Terraform 1.11 records the same configurations for the same files.
    if let Some(tf) = Terraform::find("provider configurations in state", &["fleetform/sim"]) {
        let tf_dir = tmp.path().join("tf");
        write_config(
            &tf_dir,
            &tmp.path().join("tf-stores"),
            &format!("{PROVIDERS}{RESOURCES}"),
        );
        ok("terraform get", &tf.run_plain(&tf_dir, &["get"], ""));
        ok(
            "terraform apply",
            &tf.run_plain(&tf_dir, &["apply", "-auto-approve"], ""),
        );
        let theirs = tf.run_plain(&tf_dir, &["state", "pull"], "");
        ok("terraform state pull", &theirs);
        assert_eq!(ours, providers_in(&theirs.stdout));
    }
    // Gone from the configuration: destroyed where they are.
    write_config(&dir, &stores, PROVIDERS);
    let out = run_in(&dir, &["apply", "-auto-approve", "-no-color"]);
    ok("apply without the resources", &out);
    assert!(
        out.stdout.contains("0 added, 0 changed, 2 destroyed"),
        "{}",
        out.stdout
    );
    assert_eq!(
        (objects(&stores.join("a")), objects(&stores.join("b"))),
        (0, 0),
        "every object destroyed in the store that held it"
    );
}

#[test]
fn an_object_whose_provider_configuration_is_gone_stops_the_plan_and_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, stores) = (tmp.path().join("w"), tmp.path().join("stores"));
    write_config(&dir, &stores, &format!("{PROVIDERS}{RESOURCES}"));
    ok(
        "apply",
        &run_in(&dir, &["apply", "-auto-approve", "-no-color"]),
    );
    // The resources and the aliased configuration go together.
    let without_b = PROVIDERS
        .split("provider \"sim\" {\n  alias")
        .next()
        .unwrap()
        .to_string();
    write_config(&dir, &stores, &without_b);
    let out = run_in(&dir, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(out.code, 1, "{}", out.all_output());
    let all = out.all_output();
    assert!(
        all.contains("Error: Provider configuration not present"),
        "{all}"
    );
    assert!(
        all.contains(
            "To work with sim_object.x (orphan) its original provider configuration at provider[\"registry.terraform.io/fleetform/sim\"].b is required, but it has been removed."
        ),
        "{all}"
    );
    assert!(all.contains("module.m.sim_object.y (orphan)"), "{all}");
    assert_eq!(objects(&stores.join("b")), 2, "nothing was destroyed");
    let list = run_in(&dir, &["state", "list"]);
    assert_eq!(
        list.stdout.lines().collect::<Vec<_>>(),
        vec!["sim_object.x", "module.m.sim_object.y"]
    );
}
