//! States move between Terraform 1.11 and fleetform both ways with nothing
//! to change on either side, for every resource type our providers ship
//! and `terraform_data`: Terraform applies and writes `terraform.tfstate`,
//! `fleetform init -migrate-state` takes it over and plans no changes, and
//! `state pull` gives the same file back; fleetform applies, `state pull`
//! gives a file that Terraform, as the `terraform.tfstate` of a copy of the
//! directory, plans with no changes (`-detailed-exitcode` 0). Also checked:
//! outputs with their types, sensitive attributes, dependencies,
//! create_before_destroy, check results, module/count/for_each addresses,
//! and a deposed object both plan to destroy. Embedded mode, real provider
//! processes (ours, under Terraform through `dev_overrides`).
//!
//! Without `terraform` 1.11 on `PATH` this prints `SKIP:` and returns.

use fleetform_tests::{CliRun, run_in};
use serde_json::Value as Json;
use std::path::Path;

/// Every managed resource type of our providers but `sim_misbehaving`
/// (which breaks provider contracts on purpose), and data sources of each
/// provider that has them.
const MAIN_TF: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" {
  type = string
}

provider "sim" {
  store_dir = var.store
}

resource "random_pet" "p" {
  for_each = toset(["a", "b"])
  prefix   = each.key
}

resource "random_id" "i" {
  byte_length = 4
}

resource "random_integer" "n" {
  min = 1
  max = 100
}

resource "random_string" "s" {
  length = 8
}

resource "random_password" "pw" {
  length = 12
}

resource "random_uuid" "u" {}

resource "null_resource" "n" {
  count    = 2
  triggers = { pet = random_pet.p["a"].id }
}

resource "local_file" "f" {
  filename = "${path.module}/out.txt"
  content  = "hello ${random_pet.p["b"].id}"
}

resource "local_sensitive_file" "sf" {
  filename = "${path.module}/secret.txt"
  content  = "s3cret"
}

resource "time_static" "t" {}

resource "time_offset" "o" {
  offset_days = 1
}

resource "time_sleep" "w" {
  create_duration = "1ms"
}

resource "terraform_data" "d" {
  input = {
    pets   = [for p in random_pet.p : p.id]
    n      = 1
    secret = sensitive("x")
  }
  triggers_replace = [random_integer.n.result]

  lifecycle {
    create_before_destroy = true
  }
}

resource "sim_object" "o" {
  name = "round-trip"
  tags = { a = "b" }
  size = 3
}

module "m" {
  source = "./mod"
  count  = 1
  pet    = random_pet.p["a"].id
}

data "null_data_source" "nd" {
  inputs = { a = "b" }
}

data "local_file" "rf" {
  filename = local_file.f.filename
}

data "sim_object" "found" {
  id = sim_object.o.id
}

data "terraform_remote_state" "other" {
  backend = "local"
  config  = { path = "${path.module}/other.tfstate" }
}

check "positive" {
  assert {
    condition     = random_integer.n.result > 0
    error_message = "not positive"
  }
}

output "pets" {
  value = [for p in random_pet.p : p.id]
}

output "obj" {
  value = { a = 1, b = "x", c = [true] }
}

output "password" {
  value     = random_password.pw.result
  sensitive = true
}

output "data" {
  value     = terraform_data.d.output
  sensitive = true
}

output "remote" {
  value = data.terraform_remote_state.other.outputs
}

output "sim" {
  value = data.sim_object.found.size
}
"#;

const MOD_TF: &str = r#"
variable "pet" {
  type = string
}

resource "terraform_data" "each" {
  for_each = { one = 1, two = 2 }
  input    = { pet = var.pet, n = each.value }
}

output "ids" {
  value = { for k, v in terraform_data.each : k => v.id }
}
"#;

/// A local state for `terraform_remote_state` to read.
const OTHER_TFSTATE: &str = r#"{"version":4,"terraform_version":"1.11.4","serial":1,"lineage":"other",
  "outputs":{"region":{"value":"eu","type":"string"},"zones":{"value":["a","b"],"type":["tuple",["string","string"]]}},
  "resources":[],"check_results":null}"#;

/// Terraform 1.11 with every provider we ship.
struct Terraform(fleetform_tests::terraform::Terraform);

impl Terraform {
    fn find() -> Option<Terraform> {
        let providers = [
            "hashicorp/null",
            "hashicorp/random",
            "hashicorp/local",
            "hashicorp/time",
            "fleetform/sim",
        ];
        fleetform_tests::terraform::Terraform::find("state round trips", &providers).map(Terraform)
    }

    fn run(&self, dir: &Path, args: &[&str]) -> CliRun {
        self.0.run_plain(dir, args, "")
    }
}

fn ok(what: &str, r: &CliRun) {
    assert_eq!(r.code, 0, "{what}:\n{}", r.all_output());
}

/// A directory with the configuration, its module and the remote state,
/// `var.store` set to `store`.
fn config_dir(dir: &Path, store: &Path) {
    std::fs::create_dir_all(dir.join("mod")).unwrap();
    std::fs::write(dir.join("main.tf"), MAIN_TF).unwrap();
    std::fs::write(dir.join("mod/main.tf"), MOD_TF).unwrap();
    std::fs::write(dir.join("other.tfstate"), OTHER_TFSTATE).unwrap();
    std::fs::write(
        dir.join("terraform.tfvars"),
        format!("store = {:?}\n", store.display().to_string()),
    )
    .unwrap();
}

/// Copies the configuration and the files the apply wrote, not the tools'
/// own directories or state.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(".terraform") || name.starts_with(".fleetform") {
            continue;
        }
        if name.starts_with("terraform.tfstate") {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

fn parse(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: not JSON:\n{text}"))
}

/// The instance of `addr` ("type.name", "module.m[0].type.name") with
/// `index_key` `key` in a state file.
fn instance<'a>(doc: &'a Json, module: Option<&str>, addr: &str, key: &Json) -> &'a Json {
    let (ty, name) = addr.split_once('.').unwrap();
    doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            r["type"] == ty
                && r["name"] == name
                && r["mode"] == "managed"
                && r.get("module").and_then(Json::as_str) == module
        })
        .and_then(|r| {
            r["instances"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i.get("index_key").unwrap_or(&Json::Null) == key)
        })
        .unwrap_or_else(|| panic!("no {module:?} {addr} [{key}] in {doc:#}"))
}

#[test]
fn states_move_between_terraform_and_fleetform_with_nothing_to_change() {
    let Some(tf) = Terraform::find() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("sim-store");

    // Terraform applies; fleetform takes the state over and has nothing to do.
    let from_tf = tmp.path().join("from-terraform");
    config_dir(&from_tf, &store);
    // `init` would look the overridden providers up in the registry;
    // `get` installs the module only.
    ok("terraform get", &tf.run(&from_tf, &["get"]));
    ok(
        "terraform apply",
        &tf.run(&from_tf, &["apply", "-auto-approve"]),
    );
    let tf_text = std::fs::read_to_string(from_tf.join("terraform.tfstate")).unwrap();
    let tf_state = parse(&tf_text);
    ok(
        "fleetform init",
        &run_in(&from_tf, &["init", "-migrate-state"]),
    );
    let plan = run_in(&from_tf, &["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);
    // Shown, a dynamic attribute is its value, not the file's wrapper.
    let shown = run_in(&from_tf, &["state", "show", "terraform_data.d"]);
    ok("state show", &shown);
    assert!(shown.stdout.contains("pets"), "{}", shown.stdout);
    assert!(!shown.stdout.contains("\"tuple\""), "{}", shown.stdout);
    // Pulled back, the same file as Terraform's, but who wrote it and the
    // serial (fleetform numbers a workspace's snapshots from 1).
    let pulled = run_in(&from_tf, &["state", "pull"]);
    ok("state pull", &pulled);
    let mine = parse(&pulled.stdout);
    for key in ["lineage", "outputs", "resources", "check_results"] {
        assert_eq!(mine[key], tf_state[key], "{key} differs");
    }

    // fleetform applies; Terraform reads the pulled state and has nothing to do.
    let from_ff = tmp.path().join("from-fleetform");
    config_dir(&from_ff, &store);
    // Its own sim object: the same name would be the same object.
    let own = MAIN_TF.replace("\"round-trip\"", "\"round-trip-ff\"");
    std::fs::write(from_ff.join("main.tf"), own).unwrap();
    ok("fleetform init", &run_in(&from_ff, &["init"]));
    ok(
        "fleetform apply",
        &run_in(&from_ff, &["apply", "-auto-approve"]),
    );
    let pulled = run_in(&from_ff, &["state", "pull"]);
    ok("state pull", &pulled);
    let ff_state = parse(&pulled.stdout);
    let copy = tmp.path().join("fleetform-for-terraform");
    copy_dir(&from_ff, &copy);
    std::fs::write(copy.join("terraform.tfstate"), &pulled.stdout).unwrap();
    ok("terraform get", &tf.run(&copy, &["get"]));
    let plan = tf.run(&copy, &["plan", "-detailed-exitcode"]);
    assert_eq!(
        plan.code,
        0,
        "terraform plans changes:\n{}",
        plan.all_output()
    );
    assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);

    // What the pulled file says, as Terraform's does.
    let none = Json::Null;
    let d = instance(&ff_state, None, "terraform_data.d", &none);
    let tf_d = instance(&tf_state, None, "terraform_data.d", &none);
    // A dynamic attribute goes with its type.
    assert_eq!(
        d["attributes"]["input"]["type"],
        tf_d["attributes"]["input"]["type"]
    );
    assert_eq!(d["attributes"]["output"]["value"]["n"], 1);
    for key in [
        "sensitive_attributes",
        "create_before_destroy",
        "schema_version",
    ] {
        assert_eq!(d[key], tf_d[key], "terraform_data.d: {key}");
    }
    assert_eq!(d["create_before_destroy"], true);
    assert_eq!(d["dependencies"], tf_d["dependencies"]);
    let pw = instance(&ff_state, None, "random_password.pw", &none);
    let tf_pw = instance(&tf_state, None, "random_password.pw", &none);
    // Its `sensitive_attributes` differ: Terraform 1.11 lists the schema's
    // sensitive `result` there too, fleetform only what values marked (as
    // Terraform 0.15 wants it); Terraform 1.11 plans no change either way.
    for key in ["schema_version", "private"] {
        assert_eq!(pw.get(key), tf_pw.get(key), "random_password.pw: {key}");
    }
    let each = instance(
        &ff_state,
        Some("module.m[0]"),
        "terraform_data.each",
        &Json::from("two"),
    );
    assert_eq!(each["attributes"]["input"]["value"]["n"], 2);
    instance(&ff_state, None, "null_resource.n", &Json::from(1));
    instance(&ff_state, None, "random_pet.p", &Json::from("b"));
    // Outputs with their types, sensitivity and check results as Terraform's.
    for name in ["pets", "obj", "password", "data", "remote", "sim"] {
        assert_eq!(
            ff_state["outputs"][name]["type"], tf_state["outputs"][name]["type"],
            "output {name}"
        );
        assert_eq!(
            ff_state["outputs"][name].get("sensitive"),
            tf_state["outputs"][name].get("sensitive"),
            "output {name}"
        );
    }
    assert_eq!(ff_state["outputs"]["obj"], tf_state["outputs"]["obj"]);
    assert_eq!(ff_state["check_results"], tf_state["check_results"]);

    // A deposed object (a create_before_destroy replacement whose old
    // object was not deleted): both plan to destroy it, and it pulls back.
    let mut deposed = tf_state.clone();
    deposed["serial"] = Json::from(tf_state["serial"].as_u64().unwrap() + 1);
    let resources = deposed["resources"].as_array_mut().unwrap();
    let data = resources
        .iter_mut()
        .find(|r| r["type"] == "terraform_data" && r["name"] == "d")
        .unwrap();
    let mut old = data["instances"][0].clone();
    old["deposed"] = Json::from("00000001");
    old["attributes"]["id"] = Json::from("deposed-1");
    data["instances"].as_array_mut().unwrap().push(old);
    let text = serde_json::to_string_pretty(&deposed).unwrap();
    std::fs::write(from_tf.join("deposed.json"), &text).unwrap();
    ok(
        "state push",
        &run_in(&from_tf, &["state", "push", "deposed.json"]),
    );
    let pulled = parse(&run_in(&from_tf, &["state", "pull"]).stdout);
    assert_eq!(pulled["resources"], deposed["resources"]);
    let theirs = tmp.path().join("deposed-for-terraform");
    copy_dir(&from_tf, &theirs);
    std::fs::write(theirs.join("terraform.tfstate"), &text).unwrap();
    ok("terraform get", &tf.run(&theirs, &["get"]));
    let tf_plan = tf.run(&theirs, &["plan", "-detailed-exitcode"]);
    let ff_plan = run_in(&from_tf, &["plan", "-detailed-exitcode"]);
    assert_eq!(tf_plan.code, 2, "{}", tf_plan.all_output());
    assert_eq!(ff_plan.code, 2, "{}", ff_plan.all_output());
    let line = |t: &str| {
        t.lines()
            .filter(|l| l.starts_with("Plan: ") || l.starts_with("  # "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(line(&ff_plan.stdout), line(&tf_plan.stdout));
    assert!(
        tf_plan
            .stdout
            .contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{}",
        tf_plan.stdout
    );
}
