//! File functions at apply time (issue 31), as Terraform 1.11 evaluates
//! them: a resource's arguments are evaluated again while applying, and
//! `file()`/`fileexists()` then read the disk as it is, so a resource that
//! waits for a `local-exec` provisioner reads the file it wrote.
//!
//! - Embedded mode (CLI, coordinator and provisioners on one machine)
//!   matches Terraform: a call whose argument was unknown at plan reads the
//!   file at apply; a call that was known at plan and reads differently at
//!   apply is "Provider produced inconsistent final plan", as Terraform
//!   reports it. Where `terraform` is on PATH, it runs the same
//!   configuration and must give the same result (else `SKIP:`).
//! - In a fleet the coordinator reads the files the CLI sent with the run,
//!   never some host's disk (the provisioner ran on a worker): the call fails
//!   with Terraform's message and a note that says why.

use fleetform_tests::{CliRun, Coordinator, Nats, S3, Worker, bin_dir, fleetform, run_in};
use std::path::Path;
use std::process::{Command, Stdio};

/// The writer's provisioner puts `hello` into `out.txt`; the reader reads
/// it through an argument that is unknown until the writer exists.
const READS_AFTER_WRITE: &str = r#"
resource "null_resource" "writer" {
  provisioner "local-exec" {
    command = "echo hello > OUT/out.txt"
  }
}

resource "null_resource" "reader" {
  triggers = {
    content = file("OUT/out.txt${substr(null_resource.writer.id, 0, 0)}")
  }
}

output "content" {
  value = null_resource.reader.triggers.content
}
"#;

/// `fileexists` is known (false) at plan and true at apply.
const KNOWN_AT_PLAN: &str = r#"
resource "null_resource" "writer" {
  provisioner "local-exec" {
    command = "echo hello > OUT/out.txt"
  }
}

resource "null_resource" "reader" {
  depends_on = [null_resource.writer]
  triggers = {
    exists = fileexists("OUT/out.txt")
  }
}
"#;

fn config(dir: &Path, text: &str, out: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), text.replace("OUT", out)).unwrap();
}

/// `terraform` with our null provider, or None when it is not installed.
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
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Some(CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// The apply's exit code and, when it succeeded, the `content` output.
fn apply_and_read(run: &dyn Fn(&[&str]) -> CliRun) -> (i32, String, String) {
    let apply = run(&["apply", "-auto-approve", "-no-color"]);
    if apply.code != 0 {
        return (apply.code, String::new(), apply.all_output());
    }
    let out = run(&["output", "-raw", "content"]);
    (apply.code, out.stdout, apply.all_output())
}

#[test]
fn embedded_apply_reads_a_file_a_provisioner_wrote_as_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("ours");
    config(&ours, READS_AFTER_WRITE, ".");
    let (code, content, text) = apply_and_read(&|a| run_in(&ours, a));
    assert_eq!(code, 0, "{text}");
    assert_eq!(content, "hello\n", "{text}");

    let theirs = tmp.path().join("theirs");
    config(&theirs, READS_AFTER_WRITE, ".");
    let Some(probe) = terraform(&theirs, &["version"]) else {
        println!("SKIP: the comparison with Terraform (no `terraform`)");
        return;
    };
    assert_eq!(probe.code, 0);
    let (code, content, text) = apply_and_read(&|a| terraform(&theirs, a).unwrap());
    assert_eq!((code, content.as_str()), (0, "hello\n"), "{text}");
}

#[test]
fn embedded_apply_refuses_a_known_value_that_changed_since_the_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("ours");
    config(&ours, KNOWN_AT_PLAN, ".");
    let apply = run_in(&ours, &["apply", "-auto-approve", "-no-color"]);
    let text = apply.all_output();
    assert_eq!(apply.code, 1, "{text}");
    assert!(
        text.contains("Error: Provider produced inconsistent final plan"),
        "{text}"
    );
    assert!(
        text.contains(r#"cty.StringVal("false")"#) && text.contains(r#"cty.StringVal("true")"#),
        "{text}"
    );
    // Nothing was made of the reader.
    let list = run_in(&ours, &["state", "list"]);
    assert_eq!(
        list.stdout.trim(),
        "null_resource.writer",
        "{}",
        list.all_output()
    );

    let theirs = tmp.path().join("theirs");
    config(&theirs, KNOWN_AT_PLAN, ".");
    let Some(apply) = terraform(&theirs, &["apply", "-auto-approve", "-no-color"]) else {
        println!("SKIP: the comparison with Terraform (no `terraform`)");
        return;
    };
    let text = apply.all_output();
    assert_eq!(apply.code, 1, "{text}");
    assert!(
        text.contains("Error: Provider produced inconsistent final plan"),
        "{text}"
    );
}

#[test]
fn a_fleet_apply_says_why_a_file_written_during_the_run_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start_with(dir, &nats, "w1", 2, &["--allow-local-exec"], "info").unwrap();
    let cfg = dir.join("config");
    // The worker writes into the configuration directory itself (same
    // machine here): the coordinator still reads what the CLI sent.
    config(&cfg, READS_AFTER_WRITE, cfg.to_str().unwrap());
    let env = [("FLEETFORM_COORDINATOR", coordinator.url.clone())];
    let o = fleetform(
        &["apply", "-auto-approve", "-no-color", cfg.to_str().unwrap()],
        &env,
    )
    .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(cfg.join("out.txt").exists(), "the provisioner ran: {text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("Error: Invalid function argument"), "{text}");
    assert!(
        flat.contains("in a fleet the file functions read the configuration directory as the CLI sent it when the run started"),
        "{text}"
    );
}
