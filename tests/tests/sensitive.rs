//! Sensitive values through the real CLI in embedded mode: a sensitive
//! variable, a local built from it and a schema-sensitive attribute of
//! another resource (`random_password.result`) given to resource arguments
//! are hidden in the plan, flagged in `show -json` and recorded in state;
//! state's record keeps later references sensitive. A child module's
//! output carries a sensitive value without declaring it (only root outputs
//! must), compared with Terraform 1.11 where it is installed.

use fleetform_tests::{CliRun, run_in};
use serde_json::{Value as Json, json};
use std::path::Path;

const SECRET: &str = "hunter2-do-not-print";

fn config(sensitive_variable: bool) -> String {
    let sensitive = if sensitive_variable {
        "sensitive = true"
    } else {
        ""
    };
    format!(
        r#"variable "secret" {{
  type    = string
  default = "{SECRET}"
  {sensitive}
}}

locals {{
  conn = "admin:${{var.secret}}@db"
}}

resource "random_password" "pw" {{
  length = 16
}}

resource "null_resource" "a" {{
  triggers = {{
    password = var.secret
    plain    = "visible"
  }}
}}

resource "null_resource" "b" {{
  triggers = {{
    pw   = random_password.pw.result
    conn = local.conn
    id   = random_password.pw.id
  }}
}}
"#
    )
}

fn ok(dir: &Path, args: &[&str]) -> CliRun {
    let r = run_in(dir, args);
    assert_eq!(r.code, 0, "fleetform {args:?}:\n{}", r.all_output());
    r
}

fn change<'a>(plan: &'a Json, addr: &str) -> &'a Json {
    plan["resource_changes"]
        .as_array()
        .expect("resource_changes")
        .iter()
        .find(|c| c["address"] == addr)
        .unwrap_or_else(|| panic!("no change for {addr}: {plan}"))
}

fn state_resource<'a>(state: &'a Json, addr: &str) -> &'a Json {
    state["values"]["root_module"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["address"] == addr)
        .unwrap_or_else(|| panic!("no {addr} in state: {state}"))
}

#[test]
fn sensitive_values_given_to_arguments_are_hidden_flagged_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.tf"), config(true)).unwrap();

    let planned = ok(dir, &["plan", "-out=tf.plan"]).all_output();
    for line in [
        "\"password\" = (sensitive value)",
        "\"plain\"    = \"visible\"",
        "\"conn\" = (sensitive value)",
        "\"pw\"   = (sensitive value)",
        "\"id\"   = (known after apply)",
    ] {
        assert!(planned.contains(line), "missing {line:?}:\n{planned}");
    }
    assert!(!planned.contains(SECRET), "{planned}");

    let shown = ok(dir, &["show", "-json", "tf.plan"]).stdout;
    let plan: Json = serde_json::from_str(&shown).unwrap();
    assert_eq!(
        change(&plan, "null_resource.a")["change"]["after_sensitive"],
        json!({"triggers": {"password": true}})
    );
    assert_eq!(
        change(&plan, "null_resource.b")["change"]["after_sensitive"],
        json!({"triggers": {"conn": true, "pw": true}})
    );
    assert_eq!(
        change(&plan, "random_password.pw")["change"]["after_sensitive"],
        json!({"result": true})
    );

    let applied = ok(dir, &["apply", "tf.plan"]).all_output();
    assert!(!applied.contains(SECRET), "{applied}");

    let state: Json = serde_json::from_str(&ok(dir, &["show", "-json"]).stdout).unwrap();
    let password = state_resource(&state, "random_password.pw")["values"]["result"]
        .as_str()
        .expect("the password is in state")
        .to_string();
    assert_eq!(
        state_resource(&state, "null_resource.a")["sensitive_values"],
        json!({"triggers": {"password": true}})
    );
    assert_eq!(
        state_resource(&state, "null_resource.b")["sensitive_values"],
        json!({"triggers": {"conn": true, "pw": true}})
    );
    let shown = ok(dir, &["state", "show", "null_resource.b"]).stdout;
    assert!(shown.contains("\"pw\"   = (sensitive value)"), "{shown}");
    assert!(
        !shown.contains(&password) && !shown.contains(SECRET),
        "{shown}"
    );

    // The marks are no change: a second plan has nothing to do.
    let again = run_in(dir, &["plan", "-detailed-exitcode"]);
    assert_eq!(again.code, 0, "{}", again.all_output());
}

/// Once recorded in state, an attribute stays sensitive for whatever reads
/// the object from state (a refresh-only plan), until an apply records the
/// sensitivity of a configuration that no longer makes it sensitive.
#[test]
fn state_keeps_an_attribute_sensitive_until_the_next_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.tf"), config(true)).unwrap();
    ok(dir, &["apply", "-auto-approve"]);

    let exposed = format!(
        "{}\noutput \"copy\" {{\n  value = null_resource.a.triggers.password\n}}\n",
        config(false)
    );
    std::fs::write(dir.join("main.tf"), exposed).unwrap();
    let refresh = run_in(dir, &["plan", "-refresh-only"]);
    assert_eq!(refresh.code, 1, "{}", refresh.all_output());
    assert!(
        refresh
            .all_output()
            .contains("Error: Output refers to sensitive values"),
        "{}",
        refresh.all_output()
    );

    // A normal plan takes the value from the configuration, which no longer
    // marks it: as in Terraform, an update records the new sensitivity in
    // state, and the value, sensitive before, stays hidden in the diff.
    let planned = ok(dir, &["plan"]).all_output();
    assert!(
        planned.contains("null_resource.a will be updated in-place")
            && planned.contains("~ triggers = (sensitive value)")
            && planned.contains("only whether it is sensitive changes"),
        "{planned}"
    );
    let (changes, outputs) = planned
        .split_once("Changes to Outputs:")
        .expect("an output change");
    assert!(!changes.contains(SECRET), "{planned}");
    assert!(outputs.contains(SECRET), "no longer sensitive: {planned}");
    ok(dir, &["apply", "-auto-approve"]);
    let out = ok(dir, &["output", "-raw", "copy"]).stdout;
    assert_eq!(out, SECRET);
    let state: Json = serde_json::from_str(&ok(dir, &["show", "-json"]).stdout).unwrap();
    assert_eq!(
        state_resource(&state, "null_resource.a")["sensitive_values"],
        json!({"triggers": {}})
    );
}

const CHILD: &str = r#"variable "secret" {
  type      = string
  sensitive = true
}

resource "terraform_data" "x" {
  input = var.secret
}

output "out" {
  value = var.secret
}
"#;

const CALL: &str = r#"module "m" {
  source = "./m"
  secret = "hunter2"
}
"#;

/// `terraform init` then `terraform plan -no-color` in `dir` when Terraform
/// 1.11 is installed; `None` (after a `SKIP:` line) otherwise.
fn terraform_plan(dir: &Path) -> Option<CliRun> {
    let version = std::process::Command::new("terraform")
        .arg("version")
        .env("CHECKPOINT_DISABLE", "1")
        .output();
    match version {
        Ok(v) if String::from_utf8_lossy(&v.stdout).starts_with("Terraform v1.11.") => {}
        _ => {
            println!("SKIP: the comparison with Terraform (no `terraform` 1.11)");
            return None;
        }
    }
    let home = tempfile::tempdir().unwrap();
    let rc = home.path().join("cli.tfrc");
    std::fs::write(&rc, "").unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new("terraform")
            .args(args)
            .current_dir(dir)
            .env("HOME", home.path())
            .env("TF_CLI_CONFIG_FILE", &rc)
            .env("CHECKPOINT_DISABLE", "1")
            .output()
            .expect("start terraform");
        CliRun {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };
    let init = run(&["init", "-input=false", "-no-color"]);
    assert_eq!(init.code, 0, "terraform init:\n{}", init.all_output());
    let plan = run(&["plan", "-input=false", "-no-color"]);
    std::fs::remove_dir_all(dir.join(".terraform")).unwrap();
    std::fs::remove_file(dir.join(".terraform.lock.hcl")).ok();
    Some(plan)
}

/// The plan's resource blocks: from each "  # " line to its closing brace.
fn resource_blocks(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for l in text.lines() {
        inside |= l.starts_with("  # ");
        if inside {
            out.push_str(l);
            out.push('\n');
        }
        inside &= l != "    }";
    }
    out
}

/// The error's words, without the box, the wrapping or the product name.
fn error_words(text: &str) -> String {
    let from = text.find("Error: ").expect("an error");
    text[from..]
        .replace(['│', '╵'], " ")
        .replace("Terraform", "fleetform")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Terraform 1.11 asks `sensitive = true` only of root outputs: a child
/// module's output passes on a sensitive variable's value undeclared, and
/// the value stays sensitive where the caller uses it; a root output of it
/// still needs the declaration.
#[test]
fn a_child_modules_output_passes_sensitivity_on_without_declaring_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir(dir.join("m")).unwrap();
    std::fs::write(dir.join("m/main.tf"), CHILD).unwrap();

    let used =
        format!("{CALL}\nresource \"terraform_data\" \"use\" {{\n  input = module.m.out\n}}\n");
    std::fs::write(dir.join("main.tf"), used).unwrap();
    let plan = ok(dir, &["plan", "-no-color"]).stdout;
    let blocks = resource_blocks(&plan);
    assert!(
        blocks.contains("  # terraform_data.use will be created\n")
            && blocks.contains("input  = (sensitive value)")
            && !plan.contains("hunter2"),
        "{plan}"
    );
    if let Some(tf) = terraform_plan(dir) {
        assert_eq!(tf.code, 0, "{}", tf.all_output());
        assert_eq!(blocks, resource_blocks(&tf.stdout));
    }

    let shown = format!("{CALL}\noutput \"root\" {{\n  value = module.m.out\n}}\n");
    std::fs::write(dir.join("main.tf"), shown).unwrap();
    let refused = run_in(dir, &["plan", "-no-color"]);
    assert_eq!(refused.code, 1, "{}", refused.all_output());
    let words = error_words(&refused.all_output());
    assert!(
        words.starts_with(
            "Error: Output refers to sensitive values on main.tf line 6: 6: output \"root\" {"
        ),
        "{words}"
    );
    if let Some(tf) = terraform_plan(dir) {
        assert_eq!(tf.code, 1, "{}", tf.all_output());
        assert_eq!(words, error_words(&tf.all_output()));
    }
}
