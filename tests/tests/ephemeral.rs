//! Ephemeral values (Terraform 1.10) through the real CLI: an ephemeral
//! variable is used where nothing is recorded (a local, ephemeralasnull in
//! a resource argument, a provisioner, a provider configuration) and never
//! reaches the plan file's JSON, the state or the output; applying a saved
//! plan asks for it again. The places that would record one are refused.
//! Each part runs in embedded mode and is compared with Terraform 1.11 when
//! `terraform` is on PATH (our provider binaries through `dev_overrides`);
//! one runs through a fleet (nats-server, S3, coordinator and a worker).

use fleetform_tests::{
    CliRun, Coordinator, Nats, S3, Worker, bin_dir, fleetform, run_in, sim_objects,
};
use serde_json::Value as Json;
use std::path::Path;
use std::process::Command;

const TOKEN: &str = "tok-3phemeral-value";

const CONFIG: &str = r#"variable "token" {
  type      = string
  ephemeral = true
}

variable "plain" {
  type    = string
  default = "p"
}

locals {
  bearer = "Bearer ${var.token}"
}

resource "null_resource" "a" {
  triggers = {
    t = ephemeralasnull(local.bearer)
    p = var.plain
  }

  provisioner "local-exec" {
    command = "echo ${local.bearer}"
  }
}

output "nulled" {
  value = ephemeralasnull(local.bearer)
}
"#;

/// A configuration with each place Terraform 1.11 refuses an ephemeral
/// value in.
const REFUSED: &str = r#"variable "token" {
  type      = string
  ephemeral = true
}

locals {
  bearer = "Bearer ${var.token}"
}

resource "null_resource" "a" {
  triggers = {
    t = local.bearer
  }
}

resource "null_resource" "c" {
  count = length(var.token)
}

resource "null_resource" "f" {
  for_each = toset([var.token])
}

output "o" {
  value = terraform.applying
}
"#;

/// Runs `terraform` in `dir` with our providers, or None when it is absent.
fn terraform(dir: &Path, args: &[&str]) -> Option<CliRun> {
    let rc = dir.join("..").join("tf-cli.tfrc");
    std::fs::write(
        &rc,
        format!(
            "provider_installation {{\n  dev_overrides {{\n    \"hashicorp/null\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
            bin_dir().display()
        ),
    )
    .unwrap();
    let out = Command::new("terraform")
        .args(args)
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", &rc)
        .env("CHECKPOINT_DISABLE", "1")
        .output()
        .ok()?;
    Some(CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The error summaries and their `file line N` locations, in order, from
/// either tool's rendering (boxed or not).
fn errors(output: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in output.lines() {
        let line = line.trim_start_matches(['│', ' ']);
        if let Some(summary) = line.strip_prefix("Error: ") {
            out.push(summary.to_string());
        } else if let Some(at) = line.strip_prefix("on ")
            && let Some(last) = out.last_mut()
            && !last.contains(" @ ")
        {
            let at = at.split(',').next().unwrap_or(at).trim_end_matches(':');
            last.push_str(&format!(" @ {at}"));
        }
    }
    out
}

/// The one sequence both tools go through: plan to a file, apply it
/// without the ephemeral variable (refused), then with it. Returns the
/// refusal's output, the apply's output, the plan's JSON and the state.
struct Sequence {
    refused: CliRun,
    applied: CliRun,
    plan_json: Json,
    state: String,
}

fn sequence(dir: &Path, tool: &dyn Fn(&Path, &[&str]) -> CliRun) -> Sequence {
    let token = format!("token={TOKEN}");
    let planned = tool(dir, &["plan", "-no-color", "-var", &token, "-out=p.bin"]);
    assert_eq!(planned.code, 0, "plan:\n{}", planned.all_output());
    assert!(!planned.all_output().contains(TOKEN));
    let shown = tool(dir, &["show", "-json", "p.bin"]);
    assert_eq!(shown.code, 0, "show:\n{}", shown.all_output());
    let plan_json: Json = serde_json::from_str(&shown.stdout).unwrap();
    let refused = tool(dir, &["apply", "-no-color", "p.bin"]);
    let applied = tool(dir, &["apply", "-no-color", "-var", &token, "p.bin"]);
    let pulled = tool(dir, &["state", "pull"]);
    assert_eq!(pulled.code, 0, "state pull:\n{}", pulled.all_output());
    Sequence {
        refused,
        applied,
        plan_json,
        state: pulled.stdout,
    }
}

fn check(s: &Sequence, who: &str) {
    assert_eq!(s.refused.code, 1, "{who}: {}", s.refused.all_output());
    let refusal = s
        .refused
        .all_output()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        refusal.contains("The ephemeral input variable \"token\" was set during the plan phase, and so must also be set during the apply phase."),
        "{who}: {refusal}"
    );
    assert_eq!(s.applied.code, 0, "{who}: {}", s.applied.all_output());
    let applied = s.applied.all_output();
    assert!(
        applied.contains(
            "null_resource.a (local-exec): (output suppressed due to ephemeral value in config)"
        ),
        "{who}: {applied}"
    );
    assert!(!applied.contains(TOKEN), "{who}: {applied}");
    let plan = s.plan_json.to_string();
    assert!(!plan.contains(TOKEN), "{who}: {plan}");
    assert_eq!(
        s.plan_json["variables"],
        serde_json::json!({"plain": {"value": "p"}}),
        "{who}"
    );
    assert!(!s.state.contains(TOKEN), "{who}: {}", s.state);
}

/// The object's attributes in a pulled state, its id left out.
fn triggers(state: &str) -> Json {
    let state: Json = serde_json::from_str(state).unwrap();
    state["resources"][0]["instances"][0]["attributes"]["triggers"].clone()
}

#[test]
fn an_ephemeral_variable_is_used_but_never_recorded_as_in_terraform() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("ours");
    std::fs::create_dir_all(&ours).unwrap();
    std::fs::write(ours.join("main.tf"), CONFIG).unwrap();
    let s = sequence(&ours, &|d, a| run_in(d, a));
    check(&s, "fleetform");
    assert_eq!(triggers(&s.state), serde_json::json!({"p": "p", "t": null}));
    let state: Json = serde_json::from_str(&s.state).unwrap();
    assert_eq!(state["outputs"], serde_json::json!({}));

    let theirs = tmp.path().join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("main.tf"), CONFIG).unwrap();
    if terraform(&theirs, &["version"]).is_none() {
        println!("SKIP: the comparison with Terraform (no `terraform`)");
        return;
    }
    let t = sequence(&theirs, &|d, a| terraform(d, a).unwrap());
    check(&t, "terraform");
    assert_eq!(triggers(&t.state), triggers(&s.state));
    let tf_state: Json = serde_json::from_str(&t.state).unwrap();
    assert_eq!(tf_state["outputs"], state["outputs"]);
}

#[test]
fn places_that_would_record_an_ephemeral_value_are_refused_as_in_terraform() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("main.tf"), REFUSED).unwrap();
    let ours = run_in(&dir, &["validate", "-no-color"]);
    assert_eq!(ours.code, 1, "{}", ours.all_output());
    let expected = [
        "Invalid use of ephemeral value @ main.tf line 11",
        "Invalid count argument @ main.tf line 17",
        "Invalid for_each argument @ main.tf line 21",
        "Ephemeral value not allowed @ main.tf line 25",
    ];
    assert_eq!(
        errors(&ours.all_output()),
        expected,
        "{}",
        ours.all_output()
    );
    assert!(ours.all_output().contains("with null_resource.a,"));
    let Some(tf) = terraform(&dir, &["validate", "-no-color"]) else {
        println!("SKIP: the comparison with Terraform (no `terraform`)");
        return;
    };
    assert_eq!(tf.code, 1, "{}", tf.all_output());
    assert_eq!(errors(&tf.all_output()), expected, "{}", tf.all_output());
}

#[test]
fn a_root_module_ephemeral_output_is_refused_as_in_terraform() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    std::fs::create_dir_all(&dir).unwrap();
    let config = "output \"o\" {\n  value     = \"x\"\n  ephemeral = true\n}\n";
    std::fs::write(dir.join("main.tf"), config).unwrap();
    let detail = "Ephemeral outputs are not allowed in context of a root module";
    let ours = run_in(&dir, &["validate", "-no-color"]);
    assert_eq!(ours.code, 1);
    assert_eq!(
        errors(&ours.all_output()),
        ["Ephemeral output not allowed @ main.tf line 1"]
    );
    assert!(ours.all_output().contains(detail));
    let Some(tf) = terraform(&dir, &["validate", "-no-color"]) else {
        println!("SKIP: the comparison with Terraform (no `terraform`)");
        return;
    };
    assert_eq!(
        errors(&tf.all_output()),
        ["Ephemeral output not allowed @ main.tf line 1"]
    );
    assert!(tf.all_output().contains(detail));
}

/// Through a fleet: the sim provider's configuration takes its store
/// directory from an ephemeral variable (provider configurations record
/// nothing), so applying the saved plan works only when it is given again,
/// and the state the coordinator keeps in S3 never holds it.
#[test]
fn a_fleet_takes_ephemeral_values_again_for_a_saved_plan_and_records_none() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 4).unwrap();
    let url = coordinator.url.clone();
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    let store = dir.join("sim-store-3phemeral");
    std::fs::write(
        config.join("main.tf"),
        r#"terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" {
  type      = string
  ephemeral = true
}

provider "sim" {
  store_dir = var.store
}

resource "sim_object" "a" {
  name = "a"
  size = 1
  tags = {
    store_known = ephemeralasnull(var.store) == null ? "no" : "yes"
  }
}
"#,
    )
    .unwrap();
    let chdir = format!("-chdir={}", config.display());
    let plan_file = dir.join("p.bin");
    let out_arg = format!("-out={}", plan_file.display());
    let plan_arg = plan_file.to_str().unwrap();
    let store_var = format!("store={}", store.display());
    let run = |args: &[&str]| {
        let out = fleetform(args, &[("FLEETFORM_COORDINATOR", url.clone())]).unwrap();
        CliRun {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };
    let planned = run(&[&chdir, "plan", "-var", &store_var, &out_arg]);
    assert_eq!(planned.code, 0, "{}", planned.all_output());
    let refused = run(&[&chdir, "apply", plan_arg]);
    assert_eq!(refused.code, 1, "{}", refused.all_output());
    assert!(
        refused
            .all_output()
            .contains("The ephemeral input variable \"store\" was set during the plan phase"),
        "{}",
        refused.all_output()
    );
    let applied = run(&[&chdir, "apply", "-var", &store_var, plan_arg]);
    assert_eq!(
        applied.code,
        0,
        "{}\ncoordinator log:\n{}",
        applied.all_output(),
        coordinator.proc.log_text()
    );
    assert_eq!(
        sim_objects(&store),
        1,
        "the worker's provider wrote to the store the ephemeral variable named"
    );
    let pulled = run(&[&chdir, "state", "pull"]);
    assert_eq!(pulled.code, 0, "{}", pulled.all_output());
    assert!(
        pulled.stdout.contains("\"store_known\": \"no\""),
        "{}",
        pulled.stdout
    );
    assert!(!pulled.stdout.contains("3phemeral"), "{}", pulled.stdout);
}
