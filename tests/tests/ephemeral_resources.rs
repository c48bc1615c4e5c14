//! Ephemeral resources (Terraform 1.10) and write-only attributes
//! (Terraform 1.11) through the real CLI and real provider processes: our
//! random provider's ephemeral `random_password` feeds the write-only
//! `secret_wo` of a `sim_secret` and a child module's ephemeral output.
//! The password reaches the sim provider (its store keeps it, as a cloud
//! keeps a password) and nothing fleetform writes: not the state, not the
//! plan file, not `show -json`. In embedded mode the transcripts of plan,
//! apply, a re-plan, an update through `secret_wo_version` and a destroy
//! are compared with Terraform 1.11 line for line (ids and durations
//! masked, "Terraform" read as "fleetform"), and so are the `-json`
//! events of the opens and closes; without `terraform` that part prints
//! `SKIP:`. One test runs through a fleet (nats-server, S3, coordinator,
//! worker).

use fleetform_tests::terraform::Terraform;
use fleetform_tests::{CliRun, Coordinator, Nats, S3, Worker, fleetform, run_with_input};
use serde_json::Value as Json;
use std::path::Path;

const MAIN_TF: &str = r#"terraform {
  required_providers {
    sim    = { source = "fleetform/sim" }
    random = { source = "hashicorp/random" }
  }
}

provider "sim" {
  store_dir = "${abspath(path.root)}-store"
}

ephemeral "random_password" "db" {
  length  = 20
  special = false
}

resource "sim_secret" "db" {
  name              = "db"
  secret_wo         = ephemeral.random_password.db.result
  secret_wo_version = 1
}

module "child" {
  source = "./child"
  input  = ephemeral.random_password.db.result
}

output "id" {
  value = sim_secret.db.id
}

output "length" {
  value = length(ephemeralasnull(module.child.secret) == null ? "" : "x")
}
"#;

const CHILD_TF: &str = r#"variable "input" {
  type      = string
  ephemeral = true
}

output "secret" {
  value     = var.input
  ephemeral = true
}
"#;

fn write_config(dir: &Path) {
    std::fs::create_dir_all(dir.join("child")).unwrap();
    std::fs::write(dir.join("main.tf"), MAIN_TF).unwrap();
    std::fs::write(dir.join("child/main.tf"), CHILD_TF).unwrap();
}

/// The secrets the sim store of the configuration in `dir` holds (its
/// store is beside it: a plan file bundles the configuration's directory).
fn stored_secrets(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let store = format!("{}-store", dir.display());
    for e in std::fs::read_dir(store).into_iter().flatten() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "json") {
            let obj: Json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            if let Some(s) = obj["tags"]["secret"].as_str() {
                out.push(s.to_string());
            }
        }
    }
    out
}

/// Files under `dir` (but `skip`) whose bytes contain `needle`.
fn files_holding(dir: &Path, needle: &str, skip: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let path = e.unwrap().path();
            if skip.iter().any(|s| path.ends_with(s)) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
            {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// A line as both tools' can be compared: Terraform's name for itself
/// read as ours, ids (UUIDs) and durations masked.
fn mask(line: &str) -> String {
    let mut line = line
        .replace("Terraform", "fleetform")
        .replace("terraform", "fleetform");
    if let Some(i) = line.find("[id=") {
        let end = line[i..].find(']').map_or(line.len(), |j| i + j);
        line.replace_range(i..end, "[id=ID");
    }
    if let Some(i) = line.find(" after ")
        && line[i + 7..].starts_with(|c: char| c.is_ascii_digit())
    {
        let digits = line[i + 7..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(line.len() - i - 7);
        line.replace_range(i + 7..i + 7 + digits, "N");
    }
    let mut out = String::new();
    for (i, part) in line.split('"').enumerate() {
        if i > 0 {
            out.push('"');
        }
        let uuid = part.len() == 36 && part.chars().filter(|c| *c == '-').count() == 4;
        out.push_str(if i % 2 == 1 && uuid { "ID" } else { part });
    }
    out.trim_end().to_string()
}

/// Standard output without Terraform's development overrides warning,
/// masked line by line.
fn comparable(stdout: &str) -> Vec<String> {
    let text = fleetform_tests::texts::without_colours(stdout);
    let text = match text.find("Warning: Provider development overrides") {
        // Without colours it is a paragraph ending "published releases.".
        Some(start) => {
            let end = "releases.\n";
            let to = text[start..]
                .find(end)
                .map_or(text.len(), |i| start + i + end.len());
            let from = text[..start].trim_end_matches('\n').len();
            format!("{}{}", &text[..from], &text[to..])
        }
        None => text,
    };
    text.lines().map(mask).collect()
}

/// Every step's exit code and standard output, the secrets checked after
/// each step that wrote something (fleetform only: `ours`).
fn transcript(dir: &Path, tool: &dyn Fn(&Path, &[&str]) -> CliRun, ours: bool) -> Vec<String> {
    write_config(dir);
    let mut seen = Vec::new();
    let steps: [&[&str]; 6] = [
        &["plan"],
        &["apply", "-auto-approve"],
        &["plan"],
        &["plan", "-out=saved.plan"],
        &["apply", "saved.plan"],
        &["destroy", "-auto-approve"],
    ];
    for (i, args) in steps.iter().enumerate() {
        if i == 3 {
            let text = MAIN_TF.replace("secret_wo_version = 1", "secret_wo_version = 2");
            std::fs::write(dir.join("main.tf"), text).unwrap();
        }
        let mut all = args.to_vec();
        all.push("-no-color");
        let r = tool(dir, &all);
        assert_eq!(r.code, 0, "{args:?}:\n{}\n{}", r.stdout, r.stderr);
        seen.push(format!(
            "$ {}\n{}",
            args.join(" "),
            comparable(&r.stdout).join("\n")
        ));
        if ours && i == 4 {
            no_secret_recorded(dir, tool);
        }
    }
    seen
}

/// After the saved plan's update: the password it wrote to the sim store is
/// in no file fleetform wrote, nor in `show -json` of the state or of the
/// saved plan, nor in `state pull`.
fn no_secret_recorded(dir: &Path, tool: &dyn Fn(&Path, &[&str]) -> CliRun) {
    let secrets = stored_secrets(dir);
    assert_eq!(secrets.len(), 1, "the sim store holds the last secret");
    let secret = &secrets[0];
    assert_eq!(secret.len(), 20);
    let holding = files_holding(dir, secret, &[]);
    assert!(holding.is_empty(), "the secret is in {holding:?}");
    for args in [
        &["show", "-json"][..],
        &["show", "-json", "saved.plan"],
        &["state", "pull"],
    ] {
        let r = tool(dir, args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(
            !r.stdout.contains(secret.as_str()),
            "{args:?}: {}",
            r.stdout
        );
        assert!(
            !r.stderr.contains(secret.as_str()),
            "{args:?}: {}",
            r.stderr
        );
    }
    let state = tool(dir, &["show", "-json"]);
    let state: Json = serde_json::from_str(&state.stdout).unwrap();
    let values = &state["values"]["root_module"]["resources"][0]["values"];
    assert_eq!(values["secret_wo"], Json::Null, "{state}");
    assert_eq!(values["secret_wo_version"], 2, "{state}");
    let plan = tool(dir, &["show", "-json", "saved.plan"]);
    assert!(
        !plan.stdout.contains("\"mode\":\"ephemeral\""),
        "{}",
        plan.stdout
    );
}

#[test]
fn an_ephemeral_password_feeds_a_write_only_argument_as_in_terraform() {
    let tmp = tempfile::tempdir().unwrap();
    let ours = transcript(
        &tmp.path().join("ff"),
        &|d, a| run_with_input(d, a, ""),
        true,
    );
    // What Terraform 1.11.4 printed when this was written, in our words.
    let opened = "ephemeral.random_password.db: Opening...\nephemeral.random_password.db: Opening complete after Ns";
    let closed = "ephemeral.random_password.db: Closing...\nephemeral.random_password.db: Closing complete after Ns";
    assert!(
        ours[0].starts_with(&format!("$ plan\n{opened}\n{closed}\n")),
        "{}",
        ours[0]
    );
    assert!(
        ours[0].contains("      + secret_wo         = (write-only attribute)\n"),
        "{}",
        ours[0]
    );
    assert!(
        ours[1].contains(&format!("{opened}\nsim_secret.db: Creating...\nsim_secret.db: Creation complete after Ns [id=ID]\n{closed}\n")),
        "{}",
        ours[1]
    );
    assert!(
        ours[2].contains(&format!(
            "{opened}\nsim_secret.db: Refreshing state... [id=ID]\n{closed}\n"
        )),
        "{}",
        ours[2]
    );
    assert!(
        ours[3].contains(
            "      ~ secret_wo_version = 1 -> 2\n        # (1 unchanged attribute hidden)"
        ),
        "{}",
        ours[3]
    );
    assert!(
        ours[4].contains(&format!("{opened}\nsim_secret.db: Modifying... [id=ID]\nsim_secret.db: Modifications complete after Ns [id=ID]\n{closed}\n")),
        "{}",
        ours[4]
    );
    assert!(
        ours[5].contains("      - secret_wo         = (write-only attribute) -> null\n"),
        "{}",
        ours[5]
    );
    let Some(terraform) = Terraform::find(
        "ephemeral resources",
        &["hashicorp/random", "fleetform/sim"],
    ) else {
        return;
    };
    let tf_dir = tmp.path().join("tf");
    write_config(&tf_dir);
    let got = terraform.run_plain(&tf_dir, &["get"], "");
    assert_eq!(got.code, 0, "{}", got.stderr);
    let theirs = transcript(&tf_dir, &|d, a| terraform.run(d, a, ""), false);
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t, "fleetform (left) and Terraform (right) differ");
    }
}

/// The `-json` events of a plan's opens and closes: type, message and hook.
fn ephemeral_events(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Json>(l).ok())
        .filter(|m| {
            m["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("ephemeral_op"))
        })
        .map(|mut m| {
            if m["hook"]["elapsed_seconds"].is_number() {
                m["hook"]["elapsed_seconds"] = 0.into();
            }
            format!(
                "{} {} {}",
                m["type"],
                mask(m["@message"].as_str().unwrap()),
                m["hook"]
            )
        })
        .collect()
}

#[test]
fn json_events_of_opens_and_closes_are_terraforms() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ff");
    write_config(&dir);
    let r = run_with_input(&dir, &["plan", "-json"], "");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let ours = ephemeral_events(&r.stdout);
    assert_eq!(ours.len(), 4, "{}", r.stdout);
    assert!(
        ours[0].starts_with("\"ephemeral_op_start\" ephemeral.random_password.db: Opening... "),
        "{ours:?}"
    );
    assert!(ours[0].contains("\"action\":\"open\""), "{ours:?}");
    let Some(terraform) = Terraform::find(
        "ephemeral json events",
        &["hashicorp/random", "fleetform/sim"],
    ) else {
        return;
    };
    let tf_dir = tmp.path().join("tf");
    write_config(&tf_dir);
    assert_eq!(terraform.run_plain(&tf_dir, &["get"], "").code, 0);
    let t = terraform.run(&tf_dir, &["plan", "-json"], "");
    assert_eq!(t.code, 0, "{}", t.stderr);
    assert_eq!(ours, ephemeral_events(&t.stdout));
}

/// Through a fleet: the worker opens the ephemeral resource (its events
/// come back), the sim provider in the worker gets the password, and
/// neither the state in S3 nor the coordinator's data directory (journal,
/// cache), nor any log, holds it.
#[test]
fn a_fleet_opens_the_ephemeral_resource_on_a_worker_and_records_no_secret() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 4).unwrap();
    let config = dir.join("config");
    write_config(&config);
    // The worker runs the provider: its store is named absolutely.
    let store = dir.join("config-store");
    std::fs::write(
        config.join("main.tf"),
        MAIN_TF.replace("${abspath(path.root)}-store", &store.display().to_string()),
    )
    .unwrap();
    let chdir = format!("-chdir={}", config.display());
    let run = |args: &[&str]| {
        let out = fleetform(args, &[("FLEETFORM_COORDINATOR", coordinator.url.clone())]).unwrap();
        CliRun {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };
    let applied = run(&[&chdir, "apply", "-auto-approve", "-no-color"]);
    assert_eq!(
        applied.code,
        0,
        "{}\n{}\ncoordinator log:\n{}",
        applied.stdout,
        applied.stderr,
        coordinator.proc.log_text()
    );
    assert!(
        applied
            .stdout
            .contains("ephemeral.random_password.db: Opening complete after")
            && applied
                .stdout
                .contains("sim_secret.db: Creation complete after")
            && applied
                .stdout
                .contains("ephemeral.random_password.db: Closing complete after"),
        "{}",
        applied.stdout
    );
    let secrets = stored_secrets(&config);
    assert_eq!(
        secrets.len(),
        1,
        "the worker's sim provider got the password"
    );
    let secret = &secrets[0];
    let pulled = run(&[&chdir, "state", "pull"]);
    assert_eq!(pulled.code, 0, "{}", pulled.stderr);
    assert!(
        pulled.stdout.contains("\"secret_wo\": null"),
        "{}",
        pulled.stdout
    );
    assert!(
        !pulled.stdout.contains(secret.as_str()),
        "{}",
        pulled.stdout
    );
    // Everything on disk but the sim store and NATS's own storage: the
    // coordinator's journal and cache, the processes' logs.
    let holding = files_holding(dir, secret, &["config-store", "nats"]);
    assert!(holding.is_empty(), "the secret is in {holding:?}");
    // NATS carries it between the coordinator and the worker (the open's
    // result, the apply task's configuration), as it carries provider
    // configurations and sensitive values: said, not asserted (see
    // docs/operations.md, "Securing a fleet").
    let in_nats = !files_holding(&dir.join("nats"), secret, &[]).is_empty();
    println!("NOTE: the password is in JetStream's storage: {in_nats}");
}
