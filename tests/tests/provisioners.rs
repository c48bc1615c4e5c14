//! `provisioner "local-exec"` in embedded mode, as Terraform 1.9 runs it:
//! after the create with `self` and `environment`, the output lines in the
//! CLI's output (and as `provision_*` messages with `-json`), a failing
//! command tainting its new object, `on_failure = continue`, destroy-time
//! provisioners before a delete, and Ctrl-C killing a running command;
//! and once in a fleet, where a worker process runs the commands.

use fleetform_tests::{BackgroundCli, CliRun, Coordinator, Nats, S3, Worker, fleetform, run_in};
use std::path::Path;
use std::time::{Duration, Instant};

fn write(dir: &Path, config: &str) {
    std::fs::write(dir.join("main.tf"), config).unwrap();
}

fn ok(run: &CliRun) {
    assert_eq!(run.code, 0, "{}", run.all_output());
}

/// The `id` output of the configuration.
fn output_id(dir: &Path) -> String {
    let run = run_in(dir, &["output", "-raw", "id"]);
    ok(&run);
    run.stdout.trim().to_string()
}

/// Checks that the next plan replaces `addr` because it is tainted.
fn plans_tainted_replacement(dir: &Path, addr: &str) {
    let plan = run_in(dir, &["plan", "-json"]);
    ok(&plan);
    let change = plan
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|m| m["type"] == "planned_change" && m["change"]["resource"]["addr"] == addr)
        .unwrap_or_else(|| panic!("no change for {addr}:\n{}", plan.stdout));
    assert_eq!(change["change"]["action"], "replace", "{change}");
    assert_eq!(change["change"]["reason"], "tainted", "{change}");
}

/// Where in `text` `needle` is; fails when it is not there.
fn at(text: &str, needle: &str) -> usize {
    text.find(needle)
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{text}"))
}

const CREATE: &str = r#"
variable "out" {
  type = string
}

resource "null_resource" "a" {
  triggers = {
    v = "1"
  }

  provisioner "local-exec" {
    command = "echo \"$GREETING ${self.id}\" > ${var.out}/created.txt; echo made ${self.triggers.v}; echo to-stderr >&2"
    environment = {
      GREETING = "hello"
    }
  }
}

output "id" {
  value = null_resource.a.id
}
"#;

#[test]
fn a_creation_time_provisioner_runs_with_self_and_its_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = tempfile::tempdir().unwrap();
    write(dir, CREATE);
    let var = format!("out={}", out.path().display());
    let run = run_in(dir, &["apply", "-auto-approve", "-var", &var]);
    ok(&run);
    let id = output_id(dir);
    assert_eq!(
        std::fs::read_to_string(out.path().join("created.txt")).unwrap(),
        format!("hello {id}\n"),
        "self.id is the new object's id"
    );
    let text = &run.stdout;
    let command = format!(
        "echo \\\"$GREETING {id}\\\" > {}/created.txt; echo made 1; echo to-stderr >&2",
        out.path().display()
    );
    let creating = at(text, "null_resource.a: Creating...\n");
    let start = at(
        text,
        "null_resource.a: Provisioning with 'local-exec'...\nnull_resource.a (local-exec): Executing: [\"/bin/sh\" \"-c\" \"",
    );
    at(text, &format!("\"/bin/sh\" \"-c\" \"{command}\"]\n"));
    let lines = at(
        text,
        "null_resource.a (local-exec): made 1\nnull_resource.a (local-exec): to-stderr\n",
    );
    let complete = at(
        text,
        &format!("null_resource.a: Creation complete after 0s [id={id}]"),
    );
    assert!(
        creating < start && start < lines && lines < complete,
        "{text}"
    );
    at(
        text,
        "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.",
    );
    // Provisioned means done: nothing left to plan.
    let plan = run_in(dir, &["plan", "-detailed-exitcode", "-var", &var]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());
}

#[test]
fn provisioner_hooks_are_json_messages_with_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = tempfile::tempdir().unwrap();
    write(dir, CREATE);
    let var = format!("out={}", out.path().display());
    let run = run_in(dir, &["apply", "-auto-approve", "-json", "-var", &var]);
    ok(&run);
    let messages: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let hooks: Vec<(String, String)> = messages
        .iter()
        .filter(|m| {
            m["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("provision_") || t.starts_with("apply_"))
        })
        .map(|m| {
            let t = m["type"].as_str().unwrap().to_string();
            let output = m["hook"]["output"].as_str().unwrap_or("").to_string();
            (t, output)
        })
        .collect();
    let kinds: Vec<&str> = hooks.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "apply_start",
            "provision_start",
            "provision_progress",
            "provision_progress",
            "provision_progress",
            "provision_complete",
            "apply_complete"
        ],
        "{}",
        run.stdout
    );
    assert!(hooks[2].1.starts_with("Executing: [\"/bin/sh\" \"-c\""));
    assert_eq!(hooks[3].1, "made 1");
    assert_eq!(hooks[4].1, "to-stderr");
    let start = messages
        .iter()
        .find(|m| m["type"] == "provision_start")
        .unwrap();
    assert_eq!(
        start["@message"],
        "null_resource.a: Provisioning with 'local-exec'..."
    );
    assert_eq!(start["hook"]["provisioner"], "local-exec");
    assert_eq!(start["hook"]["resource"]["addr"], "null_resource.a");
}

#[test]
fn a_failing_command_taints_the_new_object_and_continue_ignores_a_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        r#"
resource "null_resource" "bad" {
  provisioner "local-exec" {
    command = "echo before failing; exit 7"
  }
  provisioner "local-exec" {
    command = "echo never runs"
  }
}

resource "null_resource" "lenient" {
  provisioner "local-exec" {
    command    = "echo ignored; exit 1"
    on_failure = continue
  }
  provisioner "local-exec" {
    command = "echo second"
  }
}
"#,
    );
    let run = run_in(dir, &["apply", "-auto-approve"]);
    assert_eq!(run.code, 1, "{}", run.all_output());
    let all = run.all_output();
    at(&all, "null_resource.bad (local-exec): before failing");
    at(&all, "Error: local-exec provisioner error");
    at(
        &all,
        "Error running command 'echo before failing; exit 7': exit status 7. Output: before failing",
    );
    assert!(!all.contains("never runs"), "{all}");
    assert!(
        !all.contains("null_resource.bad: Creation complete"),
        "{all}"
    );
    // on_failure = continue: the failure is only logged, the next one runs.
    at(&all, "null_resource.lenient (local-exec): ignored");
    at(&all, "null_resource.lenient (local-exec): second");
    at(&all, "null_resource.lenient: Creation complete after");
    assert_eq!(
        all.matches("Error: local-exec provisioner error").count(),
        1,
        "{all}"
    );
    let list = run_in(dir, &["state", "list"]);
    ok(&list);
    assert_eq!(
        list.stdout.lines().collect::<Vec<_>>(),
        ["null_resource.bad", "null_resource.lenient"],
        "the object was created, so it is kept"
    );
    plans_tainted_replacement(dir, "null_resource.bad");
    let plan = run_in(dir, &["plan"]);
    ok(&plan);
    at(&plan.stdout, "Plan: 1 to add, 0 to change, 1 to destroy.");
}

#[test]
fn a_destroy_time_provisioner_runs_before_the_delete_and_a_failure_keeps_the_object() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = |command: &str| {
        format!(
            r#"
resource "null_resource" "d" {{
  count = 1

  provisioner "local-exec" {{
    when    = destroy
    command = "{command}"
  }}
}}

output "id" {{
  value = null_resource.d[0].id
}}
"#
        )
    };
    write(
        dir,
        &config("echo bye ${self.id} ${count.index} > ${path.module}/destroyed.txt; exit 3"),
    );
    ok(&run_in(dir, &["apply", "-auto-approve"]));
    let id = output_id(dir);
    assert!(!dir.join("destroyed.txt").exists(), "not run on create");
    let run = run_in(dir, &["destroy", "-auto-approve"]);
    assert_eq!(run.code, 1, "{}", run.all_output());
    at(&run.all_output(), "Error: local-exec provisioner error");
    assert_eq!(
        std::fs::read_to_string(dir.join("destroyed.txt")).unwrap(),
        format!("bye {id} 0\n")
    );
    let list = run_in(dir, &["state", "list"]);
    assert_eq!(list.stdout.trim(), "null_resource.d[0]", "not deleted");
    // Fixed, the destroy goes through.
    write(
        dir,
        &config("echo gone ${self.id} > ${path.module}/destroyed.txt"),
    );
    let run = run_in(dir, &["destroy", "-auto-approve"]);
    ok(&run);
    let text = &run.stdout;
    let destroying = at(text, "null_resource.d[0]: Destroying...");
    let provisioning = at(
        text,
        "null_resource.d[0]: Provisioning with 'local-exec'...",
    );
    let done = at(text, "null_resource.d[0]: Destruction complete");
    assert!(destroying < provisioning && provisioning < done, "{text}");
    assert_eq!(
        std::fs::read_to_string(dir.join("destroyed.txt")).unwrap(),
        format!("gone {id}\n")
    );
    let list = run_in(dir, &["state", "list"]);
    assert_eq!(list.stdout.trim(), "");
}

#[test]
fn ctrl_c_kills_a_running_command_and_leaves_the_object_tainted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        r#"
resource "null_resource" "slow" {
  provisioner "local-exec" {
    command = "touch started; sleep 120; touch finished"
  }
}
"#,
    );
    let mut cli = BackgroundCli::start(dir, &["apply", "-auto-approve"], &[]).unwrap();
    cli.wait_for("null_resource.slow: Creating...", Duration::from_secs(60))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dir.join("started").exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    cli.interrupt().unwrap();
    let t0 = Instant::now();
    let (code, out) = cli.finish(Duration::from_secs(100)).unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(60),
        "took {:?}:\n{out}",
        t0.elapsed()
    );
    assert_eq!(code, 1, "{out}");
    at(&out, "': signal: killed. Output: ");
    assert!(!dir.join("finished").exists(), "{out}");
    plans_tainted_replacement(dir, "null_resource.slow");
}

#[test]
fn a_fleet_worker_runs_provisioners_at_create_and_destroy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let worker = Worker::start_with(dir, &nats, "w1", 4, &["--allow-local-exec"], "info").unwrap();
    let config = dir.join("config");
    std::fs::create_dir(&config).unwrap();
    // Absolute paths: a worker runs commands in its own directory.
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    write(
        &config,
        &format!(
            r#"
resource "null_resource" "f" {{
  provisioner "local-exec" {{
    command = "echo created ${{self.id}} > {0}/created.txt; echo on the worker"
  }}
  provisioner "local-exec" {{
    when    = destroy
    command = "echo destroyed ${{self.id}} > {0}/destroyed.txt"
  }}
}}
"#,
            out.display()
        ),
    );
    let env = [("FLEETFORM_COORDINATOR", coordinator.url.clone())];
    let cfg = config.to_str().unwrap();
    let run = |args: &[&str]| {
        let o = fleetform(args, &env).unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{text}\nworker log:\n{}",
            worker.proc.log_text()
        );
        text
    };
    let text = run(&["apply", "-auto-approve", cfg]);
    at(&text, "null_resource.f (local-exec): on the worker");
    let created = std::fs::read_to_string(out.join("created.txt")).unwrap();
    let id = created.trim().strip_prefix("created ").unwrap().to_string();
    at(
        &text,
        &format!("null_resource.f: Creation complete after 0s [id={id}]"),
    );
    let text = run(&["destroy", "-auto-approve", cfg]);
    at(&text, "null_resource.f: Provisioning with 'local-exec'...");
    assert_eq!(
        std::fs::read_to_string(out.join("destroyed.txt")).unwrap(),
        format!("destroyed {id}\n")
    );
}

/// A command that prints a line, then waits for `gate` to exist before it
/// prints another and ends: its first line can only be seen while it runs.
fn gated(first: &str, gate: &Path, second: &str) -> String {
    format!(
        "echo {first}; while [ ! -e {} ]; do sleep 0.1; done; echo {second}",
        gate.display()
    )
}

#[test]
fn provisioner_output_is_shown_while_the_command_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (created, destroyed) = (dir.join("gate-create"), dir.join("gate-destroy"));
    write(
        dir,
        &format!(
            r#"
resource "null_resource" "live" {{
  provisioner "local-exec" {{
    command = "{}"
  }}
  provisioner "local-exec" {{
    when    = destroy
    command = "{}"
  }}
}}
"#,
            gated("creating-now", &created, "created-done"),
            gated("destroying-now", &destroyed, "destroyed-done")
        ),
    );
    for (args, gate, first, second) in [
        (
            &["apply", "-auto-approve"][..],
            &created,
            "creating-now",
            "created-done",
        ),
        (
            &["destroy", "-auto-approve"][..],
            &destroyed,
            "destroying-now",
            "destroyed-done",
        ),
    ] {
        let mut cli = BackgroundCli::start(dir, args, &[]).unwrap();
        cli.wait_for(
            &format!("null_resource.live (local-exec): {first}"),
            Duration::from_secs(60),
        )
        .unwrap();
        std::fs::write(gate, "").unwrap();
        let (code, out) = cli.finish(Duration::from_secs(60)).unwrap();
        assert_eq!(code, 0, "{out}");
        // Each line once, in order.
        assert_eq!(
            out.matches(&format!("(local-exec): {first}")).count(),
            1,
            "{out}"
        );
        assert!(at(&out, first) < at(&out, second), "{out}");
        assert_eq!(
            out.matches("Provisioning with 'local-exec'").count(),
            1,
            "{out}"
        );
    }
}

#[test]
fn a_fleet_worker_streams_provisioner_output_while_the_command_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start_with(dir, &nats, "w1", 4, &["--allow-local-exec"], "info").unwrap();
    let config = dir.join("config");
    std::fs::create_dir(&config).unwrap();
    let gate = dir.join("gate");
    write(
        &config,
        &format!(
            r#"
resource "null_resource" "live" {{
  provisioner "local-exec" {{
    command = "{}"
  }}
}}
"#,
            gated("from-the-worker", &gate, "worker-done")
        ),
    );
    let env = [("FLEETFORM_COORDINATOR", coordinator.url.clone())];
    let mut cli = BackgroundCli::start(&config, &["apply", "-auto-approve"], &env).unwrap();
    cli.wait_for(
        "null_resource.live (local-exec): from-the-worker",
        Duration::from_secs(60),
    )
    .unwrap();
    std::fs::write(&gate, "").unwrap();
    let (code, out) = cli.finish(Duration::from_secs(60)).unwrap();
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out.matches("(local-exec): from-the-worker").count(),
        1,
        "{out}"
    );
    assert!(
        at(&out, "from-the-worker") < at(&out, "(local-exec): worker-done"),
        "{out}"
    );
}
