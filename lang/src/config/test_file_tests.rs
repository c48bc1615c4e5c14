//! Decoding test files: what each block becomes, and the errors (with
//! their locations) for what fleetform test does not run.

use super::*;

fn load(src: &str) -> (TestFile, Vec<(String, usize, usize)>) {
    let (file, diags) = load_test_file("tests/t.tftest.hcl", src);
    let errors = diags
        .iter()
        .map(|d| {
            let r = d.range.as_ref().expect("every error has a location");
            (d.summary.clone(), r.start.line, r.start.column)
        })
        .collect();
    (file.expect("the file parses"), errors)
}

#[test]
fn decodes_runs_in_order_with_their_parts() {
    let (file, errors) = load(
        r#"
variables {
  name = "file"
  n    = 1
}

provider "random" {
  alias = "other"
  seed  = 3
}

run "setup" {
  module {
    source = "./setup"
  }
}

run "check" {
  command = plan
  variables {
    n = run.setup.count
  }
  plan_options {
    mode    = refresh-only
    refresh = false
    replace = [null_resource.a]
    target  = [null_resource.a, module.m]
  }
  providers = {
    random = random.other
  }
  expect_failures = [var.name, output.out, check.health]
  assert {
    condition     = output.out == "x"
    error_message = "wrong"
  }
  assert {
    condition     = true
    error_message = "never"
  }
}
"#,
    );
    assert_eq!(errors, Vec::new());
    let names: Vec<&str> = file.variables.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["n", "name"]);
    assert_eq!(file.providers.len(), 1);
    assert_eq!(file.providers[0].key(), "random.other");
    assert!(file.providers[0].body_text.contains("seed  = 3"));
    assert!(!file.providers[0].body_text.contains("alias"));
    let runs: Vec<&str> = file.runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(runs, ["setup", "check"]);
    let setup = &file.runs[0];
    assert_eq!(setup.command, TestCommand::Apply);
    assert_eq!(setup.module.as_ref().unwrap().source, "./setup");
    let check = &file.runs[1];
    assert_eq!(check.command, TestCommand::Plan);
    assert_eq!(check.asserts.len(), 2);
    assert_eq!(check.variables[0].name, "n");
    let expected: Vec<&str> = check
        .expect_failures
        .iter()
        .map(|e| e.address.as_str())
        .collect();
    assert_eq!(expected, ["var.name", "output.out", "check.health"]);
    assert_eq!(check.expect_failures[1].range.start.line, 32);
    assert_eq!(
        check.plan_options,
        TestPlanOptions {
            refresh_only: true,
            refresh: Some(false),
            replace: vec!["null_resource.a".into()],
            target: vec!["null_resource.a".into(), "module.m".into()],
        }
    );
    let providers = check.providers.as_ref().unwrap();
    assert_eq!(
        (providers[0].0.as_str(), providers[0].1.as_str()),
        ("random", "random.other")
    );
    assert_eq!(providers[0].2.start.line, 30);
}

#[test]
fn refuses_what_it_does_not_run_at_its_location() {
    let (_, errors) = load(
        r#"mock_provider "aws" {}

override_resource {
  target = aws_s3_bucket.a
}

run "a" {
  state_key = "other"
  parallel  = true
  override_data {
    target = data.x.y
  }
  module {
    source  = "hashicorp/consul/aws"
    version = "0.0.5"
  }
  frobnicate = 1
}
"#,
    );
    let expected = [
        ("Unsupported test feature: mock_provider blocks", 1, 1),
        ("Unsupported test feature: override_resource blocks", 3, 1),
        (
            "Unsupported test feature: modules from a registry in run blocks",
            15,
            5,
        ),
        (
            "Unsupported test feature: remote module sources in run blocks (only local paths, \"./...\" or \"../...\")",
            14,
            15,
        ),
        (
            "Unsupported test feature: state_key (runs sharing a named state)",
            8,
            3,
        ),
        ("Unsupported test feature: parallel runs", 9, 3),
        ("Unsupported test feature: override_data blocks", 10, 3),
        ("Unsupported argument", 17, 3),
    ];
    let expected: Vec<(String, usize, usize)> = expected
        .iter()
        .map(|(s, l, c)| (s.to_string(), *l, *c))
        .collect();
    assert_eq!(errors, expected);
}

#[test]
fn command_must_be_a_keyword_and_names_unique() {
    let (file, errors) = load(
        r#"run "a" {
  command = "plan"
}
run "a" {}
"#,
    );
    let summaries: Vec<&str> = errors.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        summaries,
        [
            "Invalid \"command\" keyword",
            "Duplicate \"run\" block names"
        ]
    );
    assert_eq!(file.runs.len(), 1);
}

#[test]
fn only_tftest_hcl_files_are_test_files() {
    assert!(is_test_file("tests/a.tftest.hcl"));
    assert!(!is_test_file("main.tf"));
    assert!(!is_test_file("a.tftest.hcl.bak"));
}
