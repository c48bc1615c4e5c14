//! Root module variables from every source Terraform reads, end to end
//! through the CLI in embedded mode: `TF_VAR_*`, `terraform.tfvars`,
//! `terraform.tfvars.json`, `*.auto.tfvars(.json)`, `-var-file` and `-var`.

use fleetform_tests::{CliRun, binary};
use serde_json::Value as Json;
use std::path::Path;
use std::process::Command;

const NAMES: [&str; 6] = [
    "env_only",
    "tfvars",
    "json",
    "auto",
    "var_then_file",
    "file_then_var",
];

/// Runs the CLI in `dir` with `TF_VAR_<name>=env` set for every variable.
fn run(dir: &Path, args: &[&str]) -> CliRun {
    let out = Command::new(binary("fleetform"))
        .arg(format!("-chdir={}", dir.display()))
        .args(args)
        .envs(NAMES.map(|n| (format!("TF_VAR_{n}"), "env")))
        .output()
        .expect("run fleetform");
    CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn outputs(dir: &Path) -> Json {
    let r = run(dir, &["output", "-json"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    let all: Json = serde_json::from_str(&r.stdout).unwrap();
    NAMES
        .iter()
        .map(|n| (n.to_string(), all[n]["value"].clone()))
        .collect()
}

#[test]
fn each_source_overrides_the_ones_terraform_reads_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut tf = String::new();
    for n in NAMES {
        tf.push_str(&format!(
            "variable \"{n}\" {{\n  type = string\n}}\noutput \"{n}\" {{\n  value = var.{n}\n}}\n"
        ));
    }
    write(dir, "main.tf", &tf);
    write(
        dir,
        "terraform.tfvars",
        "tfvars = \"tfvars\"\njson = \"tfvars\"\nauto = \"tfvars\"\nvar_then_file = \"tfvars\"\nfile_then_var = \"tfvars\"\nundeclared = 1\n",
    );
    write(
        dir,
        "terraform.tfvars.json",
        r#"{"json": "json", "auto": "json", "var_then_file": "json", "file_then_var": "json"}"#,
    );
    write(
        dir,
        "a.auto.tfvars",
        "auto = \"a-auto\"\nvar_then_file = \"a-auto\"\nfile_then_var = \"a-auto\"\n",
    );
    // Later by name, so it wins over a.auto.tfvars.
    write(dir, "b.auto.tfvars.json", r#"{"auto": "b-auto"}"#);
    write(
        dir,
        "named.tfvars",
        "var_then_file = \"file\"\nfile_then_var = \"file\"\n",
    );

    let r = run(
        dir,
        &[
            "apply",
            "-auto-approve",
            "-var",
            "var_then_file=cli",
            "-var-file=named.tfvars",
            "-var=file_then_var=cli",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.all_output());
    let all = r.all_output();
    assert!(
        all.contains("Warning: Value for undeclared variable")
            && all.contains("The root module does not declare a variable named \"undeclared\" but a value was found in file \"terraform.tfvars\"."),
        "{all}"
    );
    assert_eq!(
        outputs(dir),
        serde_json::json!({
            "env_only": "env",
            "tfvars": "tfvars",
            "json": "json",
            "auto": "b-auto",
            "var_then_file": "file",
            "file_then_var": "cli",
        })
    );

    // A saved plan applies the values it was made with, whatever the files
    // say by then: as in Terraform 1.11, a file's value for a variable that
    // is not ephemeral is one for an undeclared variable (a warning).
    let r = run(
        dir,
        &["plan", "-out=tf.plan", "-var", "var_then_file=saved"],
    );
    assert_eq!(r.code, 0, "{}", r.all_output());
    write(dir, "b.auto.tfvars.json", r#"{"auto": "changed"}"#);
    let r = run(dir, &["apply", "-var-file=named.tfvars", "tf.plan"]);
    assert_eq!(r.code, 0, "{}", r.all_output());
    assert!(
        r.all_output()
            .contains("Warning: Value for undeclared variable"),
        "{}",
        r.all_output()
    );
    let got = outputs(dir);
    assert_eq!(got["var_then_file"], "saved");
    assert_eq!(got["auto"], "b-auto");

    let r = run(dir, &["plan", "-var-file=missing.tfvars"]);
    assert_eq!(r.code, 1);
    assert!(
        r.all_output()
            .contains("Given variables file missing.tfvars does not exist."),
        "{}",
        r.all_output()
    );
}

#[test]
fn a_failed_validation_is_reported_at_the_value_in_its_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "main.tf",
        r#"variable "size" {
  type = number
  validation {
    condition     = var.size <= 10
    error_message = "At most 10, not ${var.size}."
  }
}
output "size" {
  value = var.size
}
"#,
    );
    write(dir, "prod.tfvars", "\nsize = 12\n");
    let r = run(dir, &["plan", "-var-file=prod.tfvars"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    let all = r.all_output();
    for line in [
        "Error: Invalid value for variable",
        "on prod.tfvars line 2:",
        "   2: size = 12",
        "At most 10, not 12.",
        "This was checked by the validation rule at main.tf:3,3-13.",
    ] {
        assert!(all.contains(line), "{line:?} missing:\n{all}");
    }
}
