//! Provider-defined functions against Terraform 1.11: the built-in
//! `terraform` provider's `encode_tfvars`, `decode_tfvars` and
//! `encode_expr` in `console` side by side with `terraform console`, and a
//! plugin provider's function (`provider::sim::shout`, a real sim provider
//! process) in embedded mode, through a fleet (nats-server, moto, a
//! coordinator and a worker as processes), and under `terraform` with the
//! same provider binary through `dev_overrides`; `validate` and `plan`
//! refuse missing functions and bad arguments with Terraform's messages.
//!
//! Without `terraform` 1.11 the comparisons print `SKIP:` and only our side
//! is checked.

use fleetform_tests::{CliRun, Coordinator, Nats, S3, Worker, fleetform, run_in, run_with_input};
use std::path::{Path, PathBuf};

/// Terraform 1.11 with our sim provider.
struct Terraform(fleetform_tests::terraform::Terraform);

impl Terraform {
    fn find(scenario: &str) -> Option<Terraform> {
        fleetform_tests::terraform::Terraform::find(scenario, &["fleetform/sim"]).map(Terraform)
    }

    fn run(&self, dir: &Path, args: &[&str], input: &str) -> CliRun {
        self.0.run_plain(dir, args, input)
    }
}

/// Diagnostic text with the box drawing and line wrapping taken out, so
/// that Terraform's wrapped lines and ours compare word for word.
fn words(text: &str) -> String {
    text.replace(['│', '╷', '╵', '├', '─'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The summary and detail of the first error in `stderr`, as words.
fn first_error(stderr: &str) -> (String, String) {
    let lines: Vec<&str> = stderr
        .lines()
        .map(|l| l.trim_start_matches(['│', '╷', '╵']).trim())
        .collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("Error: "))
        .unwrap_or_else(|| panic!("no error in:\n{stderr}"));
    let summary = lines[at].trim_start_matches("Error: ").to_string();
    // The detail is the last paragraph of the diagnostic.
    let block: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with("Error: "))
        .copied()
        .collect();
    let paragraphs: Vec<String> = block
        .split(|l| l.is_empty())
        .map(|p| p.join(" "))
        .filter(|p| !p.trim().is_empty())
        .collect();
    (summary, words(paragraphs.last().map_or("", |p| p.as_str())))
}

const DECLARE_TERRAFORM: &str = "terraform {\n  required_providers {\n    terraform = { source = \"terraform.io/builtin/terraform\" }\n  }\n}\n";

/// Expressions whose results are printed the same way by both consoles
/// (strings, heredocs, sensitive values), and expressions that fail.
const CONSOLE_CASES: &[&str] = &[
    r#"provider::terraform::encode_expr({a=1, b="x", c=[1,2], d={e=null}})"#,
    r#"provider::terraform::encode_expr([{a=1},{bb=[1,{c=2}]}])"#,
    r#"provider::terraform::encode_expr({"with space"=1, "1a"=2, a-b=3})"#,
    r#"provider::terraform::encode_expr("he said \"hi\"\n$${x} %%{y} é \t \\ \r")"#,
    r#"provider::terraform::encode_expr("a\u0001b\u00a0c")"#,
    "provider::terraform::encode_expr(1.5e20)",
    "provider::terraform::encode_expr(-0.25)",
    "provider::terraform::encode_expr(toset([\"b\",\"a\"]))",
    "provider::terraform::encode_expr(tomap({b=1,a=2}))",
    "provider::terraform::encode_expr({})",
    "provider::terraform::encode_expr(true)",
    "provider::terraform::encode_expr(sensitive(1))",
    r#"provider::terraform::encode_tfvars({z=1.5, a="q", m={b=true, "with space"=2, a={}}, l=[], t=[{x=1},{y="2"}]})"#,
    "provider::terraform::encode_tfvars({a=[[1,[2]],{b=[{c=1}]}]})",
    "provider::terraform::encode_tfvars({})",
    r#"jsonencode(provider::terraform::decode_tfvars("a = 1\nb = \"x\"\nc = [1, \"2\"]\nd = {e = null}\nf = 1 + 2"))"#,
    r#"jsonencode(provider::terraform::decode_tfvars(""))"#,
    r#"provider::terraform::decode_tfvars(provider::terraform::encode_tfvars({a={b=[1]}})).a.b[0]"#,
    // Errors.
    r#"provider::terraform::encode_tfvars("x")"#,
    r#"provider::terraform::encode_tfvars({"1a"=1})"#,
    "provider::terraform::encode_tfvars(null)",
    r#"provider::terraform::decode_tfvars("a = var.x")"#,
    r#"provider::terraform::decode_tfvars("a = upper(\"x\")")"#,
    r#"provider::terraform::decode_tfvars("a { }")"#,
    "provider::terraform::encode_expr(null)",
    "provider::terraform::encode_expr()",
    "provider::terraform::encode_expr(1, 2)",
    "provider::terraform::nope(1)",
    "provider::other::encode_expr(1)",
];

#[test]
fn builtin_terraform_functions_in_console_match_terraform() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("main.tf"), DECLARE_TERRAFORM).unwrap();
    let tf = Terraform::find("builtin_terraform_functions_in_console_match_terraform");
    if let Some(tf) = &tf {
        let init = tf.run(dir, &["init"], "");
        assert_eq!(init.code, 0, "{}", init.all_output());
    }
    let mut compared = 0;
    for expr in CONSOLE_CASES {
        let ours = run_with_input(dir, &["console"], &format!("{expr}\n"));
        // Our own side: results print, errors end with exit code 1.
        let failing = expr.contains("null)")
            || expr.contains("(\"x\")")
            || expr.contains("\"1a\"=1")
            || expr.contains("var.x")
            || expr.contains("upper")
            || expr.contains("a { }")
            || expr.ends_with("()")
            || expr.contains("(1, 2)")
            || expr.contains("nope")
            || expr.contains("other");
        assert_eq!(
            ours.code,
            i32::from(failing),
            "{expr}: {}",
            ours.all_output()
        );
        let Some(tf) = &tf else { continue };
        let theirs = tf.run(dir, &["console"], &format!("{expr}\n"));
        assert_eq!(
            ours.code,
            theirs.code,
            "{expr}:\nours: {}\nterraform: {}",
            ours.all_output(),
            theirs.all_output()
        );
        if failing {
            assert_eq!(
                first_error(&ours.stderr),
                first_error(&theirs.stderr),
                "{expr}"
            );
        } else {
            assert_eq!(ours.stdout.trim_end(), theirs.stdout.trim_end(), "{expr}");
        }
        compared += 1;
    }
    if tf.is_some() {
        assert_eq!(compared, CONSOLE_CASES.len());
    }
}

const SIM_CONFIG: &str = r#"
terraform {
  required_providers {
    sim       = { source = "fleetform/sim" }
    terraform = { source = "terraform.io/builtin/terraform" }
  }
}

variable "store" {
  type = string
}

variable "times" {
  type    = number
  default = 2
}

provider "sim" {
  store_dir = var.store
}

resource "sim_object" "a" {
  name = provider::sim::shout("hello", var.times)
}

locals {
  loud = provider::sim::shout("local", 1)
}

output "name" { value = sim_object.a.name }
output "from_local" { value = local.loud }
output "null_text" { value = provider::sim::shout(null, 3) }
output "of_unknown" { value = length(provider::sim::shout(sim_object.a.id, 0)) }
output "sensitive" {
  value     = provider::sim::shout(sensitive("s"), 1)
  sensitive = true
}
output "tfvars_line" { value = trimspace(provider::terraform::encode_tfvars({ n = sim_object.a.name })) }
"#;

/// `NAME = VALUE` lines of an `Outputs:` section, alignment removed.
fn outputs(stdout: &str) -> Vec<String> {
    let Some((_, tail)) = stdout.rsplit_once("\nOutputs:") else {
        return Vec::new();
    };
    tail.lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| format!("{} = {}", k.trim(), v.trim()))
        .collect()
}

fn sim_dir(root: &Path, name: &str, config: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("store")).unwrap();
    std::fs::write(dir.join("main.tf"), config).unwrap();
    dir
}

const WANT_OUTPUTS: &[&str] = &[
    "from_local = \"LOCAL!\"",
    "name = \"HELLO!!\"",
    "null_text = \"!!!\"",
    "of_unknown = 36",
    "sensitive = <sensitive>",
    "tfvars_line = \"n = \\\"HELLO!!\\\"\"",
];

#[test]
fn a_plugin_function_runs_in_embedded_mode_like_terraform() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = sim_dir(tmp.path(), "ours", SIM_CONFIG);
    let store = format!("store={}", ours.join("store").display());
    let plan = run_in(&ours, &["plan", "-no-color", "-var", &store]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert!(
        plan.stdout.contains("+ name = \"HELLO!!\""),
        "{}",
        plan.stdout
    );
    // The id is unknown while planning, so the call is not made.
    assert!(
        plan.stdout.contains("of_unknown") && plan.stdout.contains("(known after apply)"),
        "{}",
        plan.stdout
    );
    let applied = run_in(
        &ours,
        &["apply", "-auto-approve", "-no-color", "-var", &store],
    );
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    let got = outputs(&applied.stdout);
    assert_eq!(got, WANT_OUTPUTS, "{}", applied.stdout);

    let Some(tf) = Terraform::find("a_plugin_function_runs_in_embedded_mode_like_terraform") else {
        return;
    };
    let theirs = sim_dir(tmp.path(), "theirs", SIM_CONFIG);
    let store = format!("store={}", theirs.join("store").display());
    let applied = tf.run(&theirs, &["apply", "-auto-approve", "-var", &store], "");
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    assert_eq!(outputs(&applied.stdout), got, "{}", applied.stdout);
}

const BAD_CALLS: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

output "neg" { value = provider::sim::shout("x", -1) }
output "loud" { value = provider::sim::shout("x", 5000) }
output "null_times" { value = provider::sim::shout("x", null) }
output "few" { value = provider::sim::shout("x") }
output "many" { value = provider::sim::shout("x", 1, 2) }
"#;

const MISSING: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

locals {
  a = provider::sim::whisper("x")
  b = provider::nope::shout("x", 1)
}

resource "sim_object" "o" {
  name = provider::sim::nothere(1)
}
"#;

/// Every error's (summary, detail) in `stderr`, sorted (the two programs
/// report them in different orders).
fn all_errors(stderr: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = stderr
        .split("Error: ")
        .skip(1)
        .map(|chunk| first_error(&format!("Error: {chunk}")))
        .collect();
    out.sort();
    out
}

#[test]
fn bad_calls_and_missing_functions_fail_with_terraforms_messages() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = sim_dir(tmp.path(), "bad", BAD_CALLS);
    let plan = run_in(&bad, &["plan", "-no-color"]);
    assert_eq!(plan.code, 1, "{}", plan.all_output());
    let ours_bad = all_errors(&plan.stderr);
    assert_eq!(ours_bad.len(), 5, "{ours_bad:#?}");
    assert!(
        ours_bad.contains(&(
            "Invalid function argument".to_string(),
            "Invalid value for \"times\" parameter: times must not be negative, got -1."
                .to_string()
        )),
        "{ours_bad:#?}"
    );
    assert!(plan.stderr.contains("on main.tf line 8"), "{}", plan.stderr);

    // The console starts no plugin: it says so at the call.
    let console = run_with_input(&bad, &["console"], "provider::sim::shout(\"x\", 1)\n");
    assert_eq!(console.code, 1, "{}", console.all_output());
    assert!(
        words(&console.stderr).contains("fleetform console starts no provider plugins"),
        "{}",
        console.stderr
    );

    let missing = sim_dir(tmp.path(), "missing", MISSING);
    let validate = run_in(&missing, &["validate", "-no-color"]);
    assert_eq!(validate.code, 1, "{}", validate.all_output());
    let ours_missing = all_errors(&validate.stderr);
    assert_eq!(
        ours_missing
            .iter()
            .map(|(s, _)| s.as_str())
            .collect::<Vec<_>>(),
        ["Unknown provider function"; 3],
        "{}",
        validate.stderr
    );
    for line in [
        "on main.tf line 9",
        "on main.tf line 10",
        "on main.tf line 14",
    ] {
        assert!(
            validate.stderr.contains(line),
            "{line}: {}",
            validate.stderr
        );
    }

    let Some(tf) = Terraform::find("bad_calls_and_missing_functions_fail_with_terraforms_messages")
    else {
        return;
    };
    let theirs = tf.run(&bad, &["plan"], "");
    assert_eq!(theirs.code, 1);
    assert_eq!(ours_bad, all_errors(&theirs.stderr));
    let theirs = tf.run(&missing, &["validate"], "");
    assert_eq!(theirs.code, 1);
    assert_eq!(ours_missing, all_errors(&theirs.stderr));
}

#[test]
fn a_plugin_function_runs_on_a_worker_of_a_fleet() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 4).unwrap();
    let url = coordinator.url.clone();
    let config = sim_dir(dir, "fleet", SIM_CONFIG);
    let store = format!("store={}", config.join("store").display());
    let out = fleetform(
        &[
            "apply",
            "-auto-approve",
            "-no-color",
            "-var",
            &store,
            config.to_str().unwrap(),
        ],
        &[("FLEETFORM_COORDINATOR", url)],
    )
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}\ncoordinator log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        coordinator.proc.log_text()
    );
    assert_eq!(outputs(&stdout), WANT_OUTPUTS, "{stdout}");
}
