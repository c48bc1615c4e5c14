//! Nested blocks and nested attributes in plan, apply, show and destroy
//! texts, drawn from the provider schema as Terraform 1.11.4 draws them:
//! `sim_server` (a single, list, set and map block and a nested attribute)
//! created, updated in one list element, one set element and a new map
//! block, shown from state, replaced by a block attribute, destroyed. Each
//! step's text is compared with Terraform's line for line (ids and
//! durations masked) where Terraform 1.11 is installed, and checked for
//! the lines that matter everywhere. A fleet (coordinator, worker, NATS,
//! S3) draws the same plan as embedded mode.

use fleetform_tests::terraform::Terraform;
use fleetform_tests::texts::{comparable, without_colours};
use fleetform_tests::{CliRun, Coordinator, Nats, S3, Worker, fleetform_in, run_with_input};
use std::path::Path;
use std::time::Duration;

const CREATED: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}
resource "sim_server" "s" {
  name  = "web"
  token = "hunter2"
  endpoints = [
    { host = "a.example", port = 80 },
    { host = "b.example" },
  ]
  boot {
    image = "debian"
  }
  disk {
    size = 10
    kind = "ssd"
  }
  disk {
    size = 20
  }
  disk {
    size = 30
  }
  rule {
    port = 22
  }
  rule {
    port     = 80
    protocol = "tcp"
  }
  label "env" {
    value = "prod"
  }
}
"#;

/// One list element, one set element and a new map block.
fn updated() -> String {
    CREATED
        .replace("size = 20", "size = 25")
        .replace("port = 22\n", "port = 2222\n")
        .replace(
            "  label \"env\" {",
            "  label \"team\" {\n    value = \"fleet\"\n  }\n  label \"env\" {",
        )
}

/// A block attribute whose change replaces the server.
fn replaced() -> String {
    updated().replace("image = \"debian\"", "image = \"alpine\"")
}

/// Each step's command, exit code and comparable output.
fn transcript(
    dir: &Path,
    steps: &[(&str, &[&str])],
    tool: &dyn Fn(&Path, &[&str]) -> CliRun,
) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let mut seen = Vec::new();
    for (main_tf, args) in steps {
        std::fs::write(dir.join("main.tf"), main_tf).unwrap();
        let r = tool(dir, args);
        seen.push(format!(
            "$ {} -> exit {}\n--- stdout\n{}\n--- stderr\n{}",
            args.join(" "),
            r.code,
            comparable(&r.stdout).join("\n"),
            comparable(&r.stderr).join("\n")
        ));
    }
    seen
}

fn has_lines(text: &str, lines: &[&str]) {
    let mut from = 0;
    for l in lines {
        match text[from..].find(l) {
            Some(i) => from += i + l.len(),
            None => panic!("missing (in this order) {l:?} in:\n{text}"),
        }
    }
}

#[test]
fn nested_blocks_are_drawn_as_terraform_draws_them() {
    let (v2, v3) = (updated(), replaced());
    let steps: Vec<(&str, &[&str])> = vec![
        (CREATED, &["apply", "-auto-approve"]),
        (&v2, &["plan"]),
        (&v2, &["apply", "-auto-approve"]),
        (&v2, &["show"]),
        (&v2, &["state", "show", "sim_server.s"]),
        (&v3, &["plan"]),
        (&v3, &["destroy", "-auto-approve"]),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let ours = transcript(&tmp.path().join("ff"), &steps, &|d, a| {
        run_with_input(d, a, "")
    });
    if let Some(terraform) = Terraform::find("plan blocks", &["fleetform/sim"]) {
        let theirs = transcript(&tmp.path().join("tf"), &steps, &|d, a| {
            let r = terraform.run(d, a, "");
            CliRun {
                code: r.code,
                stdout: without_colours(&r.stdout),
                stderr: without_colours(&r.stderr),
            }
        });
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(o, t, "fleetform (left) and Terraform (right) differ");
        }
    }
    has_lines(
        &ours[0],
        &[
            "      + endpoints = [\n          + {\n              + host = \"a.example\"",
            "      + token     = (sensitive value)\n\n      + boot {\n          + image = \"debian\"\n        }\n\n      + disk {\n          + kind = \"ssd\"\n          + size = 10\n        }\n      + disk {",
            "      + label \"env\" {\n          + value = \"prod\"\n        }\n\n      + rule {\n          + port = 22\n        }",
        ],
    );
    has_lines(
        &ours[1],
        &[
            "        id        = \"ID\"\n        name      = \"web\"\n        # (2 unchanged attributes hidden)\n\n      ~ disk {\n          ~ size = 20 -> 25\n        }\n\n      + label \"team\" {",
            "      - rule {\n          - port = 22 -> null\n        }\n      + rule {\n          + port = 2222\n        }\n\n        # (5 unchanged blocks hidden)\n    }",
        ],
    );
    has_lines(
        &ours[3],
        &["    token     = (sensitive value)\n\n    boot {\n        image = \"debian\"\n    }"],
    );
    has_lines(
        &ours[5],
        &[
            "      ~ boot {\n          ~ image = \"debian\" -> \"alpine\" # forces replacement\n        }\n\n        # (7 unchanged blocks hidden)",
        ],
    );
    has_lines(
        &ours[6],
        &[
            "      - rule {\n          - port     = 80 -> null\n          - protocol = \"tcp\" -> null\n        }",
        ],
    );
}

/// The plan a fleet's coordinator makes carries the shapes its schema
/// cache has: the CLI draws the same text as in embedded mode.
#[test]
fn a_fleet_draws_the_same_plan_as_embedded_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let plan = |config: &Path| -> String {
        std::fs::create_dir_all(config).unwrap();
        std::fs::write(config.join("main.tf"), CREATED).unwrap();
        let args = ["plan".to_string(), "-no-color".to_string()];
        let r = fleetform_in(config, &args, Duration::from_secs(120)).unwrap();
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        r.stdout
    };
    let embedded = plan(&dir.join("embedded"));
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let coordinator = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let fleet = {
        let config = dir.join("fleet");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("main.tf"), CREATED).unwrap();
        let out = fleetform_tests::fleetform(
            &[&format!("-chdir={}", config.display()), "plan"],
            &[("FLEETFORM_COORDINATOR", coordinator.url.clone())],
        )
        .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let body = |text: &str| {
        let from = text.find("fleetform will perform").expect("a plan");
        let to = text.find("Plan: ").expect("a summary");
        text[from..to].to_string()
    };
    assert!(body(&embedded).contains("      + boot {\n"), "{embedded}");
    assert_eq!(body(&fleet), body(&embedded));
}
