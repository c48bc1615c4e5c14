//! `fleetform test` against `terraform test` (Terraform 1.11.4): the same
//! `.tftest.hcl` files, the same report line for line, the same exit code.
//! Each scenario has fixed expectations for fleetform's output (what
//! Terraform printed when they were written, ids masked), so it checks
//! something without Terraform too; when `terraform` is on PATH the two
//! outputs are compared as well (our provider binaries through
//! `dev_overrides`), else that half prints `SKIP:`. The harness, and what
//! it normalises before comparing, is `fleetform_tests::tftest`.

use fleetform_tests::run_in;
use fleetform_tests::tftest::{check, scenario};

const MAIN_TF: &str = r#"variable "name" {
  type    = string
  default = "def"
  validation {
    condition     = length(var.name) > 1
    error_message = "name too short"
  }
}

variable "n" {
  type    = number
  default = 1
}

resource "terraform_data" "x" {
  input = "${var.name}-${var.n}"
  lifecycle {
    precondition {
      condition     = var.n < 10
      error_message = "n too big"
    }
  }
}

output "out" {
  value = terraform_data.x.output
}
"#;

/// Runs share one state in order; `run.NAME.OUTPUT` reads an earlier
/// run's outputs; `-verbose` prints the state after an apply and the plan
/// after a plan; everything is destroyed at the end.
#[test]
fn passing_runs_share_state_and_read_earlier_runs() {
    let dir = scenario(&[
        ("main.tf", MAIN_TF),
        (
            "tests/a.tftest.hcl",
            r#"variables {
  name = "file"
}

run "first" {
  assert {
    condition     = output.out == "file-1"
    error_message = "bad out"
  }
}

run "second" {
  command = plan
  variables {
    name = "${run.first.out}-again"
  }
  assert {
    condition     = terraform_data.x.input == "file-1-again-1"
    error_message = "wrong input"
  }
  assert {
    condition     = var.name == "file-1-again"
    error_message = "wrong name"
  }
}
"#,
        ),
    ]);
    check(
        dir.path(),
        &["-verbose"],
        0,
        r#"tests/a.tftest.hcl... in progress
  run "first"... pass

# terraform_data.x:
resource "terraform_data" "x" {
    id     = "<uuid>"
    input  = "file-1"
    output = "file-1"
}


Outputs:

out = "file-1"

  run "second"... pass

fleetform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  ~ update in-place

fleetform will perform the following actions:

  # terraform_data.x will be updated in-place
  ~ resource "terraform_data" "x" {
        id     = "<uuid>"
      ~ input  = "file-1" -> "file-1-again-1"
      ~ output = "file-1" -> (known after apply)
    }

Plan: 0 to add, 1 to change, 0 to destroy.

Changes to Outputs:
  ~ out = "file-1" -> (known after apply)

tests/a.tftest.hcl... tearing down
tests/a.tftest.hcl... pass

Success! 2 passed, 0 failed."#,
        "",
        &[],
    );
    assert!(
        !dir.path().join(".fleetform/state").exists(),
        "the tests' states are not the directory's"
    );
}

/// A false assert fails its run with the condition's values; the file's
/// next runs still go. An expected variable validation failure passes a
/// plan run, as does an expected precondition failure; one that stops an
/// apply fails the run with Terraform's warning and skips the rest.
#[test]
fn failed_asserts_and_expected_failures() {
    let dir = scenario(&[
        ("main.tf", MAIN_TF),
        (
            "tests/a.tftest.hcl",
            r#"run "first" {
  variables {
    n = 2
  }
  assert {
    condition     = terraform_data.x.input == "def-3"
    error_message = "wrong input ${terraform_data.x.input}"
  }
}

run "validation" {
  command = plan
  variables {
    name = "a"
  }
  expect_failures = [var.name]
}

run "planned_precondition" {
  command = plan
  variables {
    n = 30
  }
  expect_failures = [terraform_data.x]
}

run "precondition" {
  variables {
    n = 20
  }
  expect_failures = [terraform_data.x]
}

run "never" {}
"#,
        ),
    ]);
    check(
        dir.path(),
        &[],
        1,
        r#"tests/a.tftest.hcl... in progress
  run "first"... fail
  run "validation"... pass
  run "planned_precondition"... pass
  run "precondition"... fail
╷
│ Warning: Expected failure while planning
│
│ A custom condition within terraform_data.x failed during the planning stage
│ and prevented the requested apply operation. While this was an expected
│ failure, the apply operation could not be executed and so the overall test
│ case will be marked as a failure and the original diagnostic included in
│ the test report.
╵

  run "never"... skip
tests/a.tftest.hcl... tearing down
tests/a.tftest.hcl... fail

Failure! 2 passed, 2 failed, 1 skipped."#,
        r#"╷
│ Error: Test assertion failed
│
│   on tests/a.tftest.hcl line 6, in run "first":
│    6:     condition     = terraform_data.x.input == "def-3"
│     ├────────────────
│     │ terraform_data.x.input is "def-2"
│
│ wrong input def-2
╵
╷
│ Error: Resource precondition failed
│
│   on main.tf line 19, in resource "terraform_data" "x":
│   19:       condition     = var.n < 10
│     ├────────────────
│     │ var.n is 20
│
│ n too big
╵"#,
        &[],
    );
}

/// `command = plan` asserts against planned values: one still unknown
/// errs (and skips the rest), saying the unknown value's type ("is a
/// string": terraform_data plans its output as an unknown of its input's
/// type).
#[test]
fn plan_runs_err_on_unknown_values() {
    let dir = scenario(&[
        ("main.tf", MAIN_TF),
        (
            "tests/a.tftest.hcl",
            r#"run "unknown" {
  command = plan
  assert {
    condition     = terraform_data.x.output == "x"
    error_message = "unknown out"
  }
}

run "after" {}
"#,
        ),
    ]);
    check(
        dir.path(),
        &[],
        1,
        r#"tests/a.tftest.hcl... in progress
  run "unknown"... fail
  run "after"... skip
tests/a.tftest.hcl... tearing down
tests/a.tftest.hcl... fail

Failure! 0 passed, 1 failed, 1 skipped."#,
        r#"╷
│ Error: Unknown condition value
│
│   on tests/a.tftest.hcl line 4, in run "unknown":
│    4:     condition     = terraform_data.x.output == "x"
│     ├────────────────
│     │ terraform_data.x.output is a string
│
│ Condition expression could not be evaluated at this time. This means you
│ have executed a `run` block with `command = plan` and one of the values
│ your condition depended on is not known until after the plan has been
│ applied. Either remove this value from your condition, or execute an
│ `apply` command from this `run` block. Alternatively, if there is an
│ override for this value, you can make it available during the plan phase by
│ setting `override_during = plan` in the `override_` block.
╵"#,
        &[],
    );
}

/// Expected failures that do not happen are errors at the reference.
#[test]
fn missing_expected_failures_are_errors() {
    let dir = scenario(&[
        ("main.tf", MAIN_TF),
        (
            "tests/a.tftest.hcl",
            r#"run "missing" {
  command         = plan
  expect_failures = [var.name, output.out]
}
"#,
        ),
    ]);
    check(
        dir.path(),
        &[],
        1,
        r#"tests/a.tftest.hcl... in progress
  run "missing"... fail
tests/a.tftest.hcl... tearing down
tests/a.tftest.hcl... fail

Failure! 0 passed, 1 failed."#,
        r#"╷
│ Error: Missing expected failure
│
│   on tests/a.tftest.hcl line 3, in run "missing":
│    3:   expect_failures = [var.name, output.out]
│
│ The checkable object, var.name, was expected to report an error but did
│ not.
╵
╷
│ Error: Missing expected failure
│
│   on tests/a.tftest.hcl line 3, in run "missing":
│    3:   expect_failures = [var.name, output.out]
│
│ The checkable object, output.out, was expected to report an error but did
│ not.
╵"#,
        &[],
    );
}

/// Variables: a run's own beat the file's, which beat `-var`; a run
/// applies a local module (with its own state) whose outputs a later run
/// reads; a provider from the file configures the module's runs.
#[test]
fn variables_precedence_and_a_local_module() {
    let dir = scenario(&[
        (
            "main.tf",
            r#"variable "a" {
  default = "default-a"
}
variable "b" {
  default = "default-b"
}
variable "c" {
  default = "default-c"
}
variable "prefix" {
  default = "none"
}
output "all" {
  value = "${var.a}/${var.b}/${var.c}/${var.prefix}"
}
"#,
        ),
        (
            "setup/main.tf",
            r#"resource "random_pet" "p" {
  length = 2
}
output "prefix" {
  value = "pre"
}
output "pet_length" {
  value = random_pet.p.length
}
"#,
        ),
        (
            "tests/c.tftest.hcl",
            r#"variables {
  a = "file-a"
  b = "file-b"
}

provider "random" {}

run "setup" {
  module {
    source = "./setup"
  }
}

run "main" {
  variables {
    b      = "run-b"
    prefix = run.setup.prefix
  }
  assert {
    condition     = output.all == "file-a/run-b/cli-c/pre"
    error_message = "got ${output.all}"
  }
  assert {
    condition     = run.setup.pet_length == 3
    error_message = "pet length"
  }
}
"#,
        ),
    ]);
    check(
        dir.path(),
        &["-var", "a=cli-a", "-var", "c=cli-c"],
        1,
        r#"tests/c.tftest.hcl... in progress
  run "setup"... pass
  run "main"... fail
tests/c.tftest.hcl... tearing down
tests/c.tftest.hcl... fail

Failure! 1 passed, 1 failed."#,
        r#"╷
│ Error: Test assertion failed
│
│   on tests/c.tftest.hcl line 24, in run "main":
│   24:     condition     = run.setup.pet_length == 3
│     ├────────────────
│     │ run.setup.pet_length is 2
│
│ pet length
╵"#,
        &[],
    );
}

/// What fleetform test does not run yet is refused with its location
/// before any run starts (Terraform runs these: nothing to compare).
#[test]
fn mock_providers_are_refused_with_their_location() {
    let dir = scenario(&[
        ("main.tf", MAIN_TF),
        (
            "tests/a.tftest.hcl",
            r#"mock_provider "random" {}

run "a" {
  parallel = true
}
"#,
        ),
    ]);
    let r = run_in(dir.path(), &["test"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        r#"╷
│ Error: Unsupported test feature: mock_provider blocks
│
│   on tests/a.tftest.hcl line 1:
│    1: mock_provider "random" {}
│
│ fleetform test does not support mock_provider blocks yet; it refuses the
│ file rather than run it without them.
╵
╷
│ Error: Unsupported test feature: parallel runs
│
│   on tests/a.tftest.hcl line 4, in run "a":
│    4:   parallel = true
│
│ fleetform test does not support parallel runs yet; it refuses the file
│ rather than run it without them.
╵
"#
    );
}

/// A check block a run expects to fail passes it; one it does not expect
/// fails it (an error in a test, not a warning); an output's failed
/// precondition is expected as `output.NAME`. `-filter` runs only the
/// files it names.
#[test]
fn check_blocks_outputs_and_filter() {
    let dir = scenario(&[
        (
            "main.tf",
            r#"variable "n" {
  type    = number
  default = 1
}

resource "terraform_data" "x" {
  input = var.n
}

output "o" {
  value = var.n
  precondition {
    condition     = var.n < 5
    error_message = "output n too big"
  }
}

check "health" {
  assert {
    condition     = var.n != 3
    error_message = "n is three"
  }
}
"#,
        ),
        (
            "tests/d.tftest.hcl",
            r#"run "check_fails" {
  variables {
    n = 3
  }
  expect_failures = [check.health]
}

run "output_fails" {
  command = plan
  variables {
    n = 7
  }
  expect_failures = [output.o]
}

run "data" {
  assert {
    condition     = terraform_data.x.output == 1
    error_message = "x"
  }
}

run "check_unexpected" {
  variables {
    n = 3
  }
}
"#,
        ),
        (
            "tests/other.tftest.hcl",
            "run \"o\" {\n  command = plan\n}\n",
        ),
    ]);
    check(
        dir.path(),
        &["-filter=tests/d.tftest.hcl"],
        1,
        r#"tests/d.tftest.hcl... in progress
  run "check_fails"... pass
  run "output_fails"... pass
  run "data"... pass
  run "check_unexpected"... fail
tests/d.tftest.hcl... tearing down
tests/d.tftest.hcl... fail

Failure! 3 passed, 1 failed."#,
        r#"╷
│ Error: Check block assertion failed
│
│   on main.tf line 20, in check "health":
│   20:     condition     = var.n != 3
│     ├────────────────
│     │ var.n is 3
│
│ n is three
╵"#,
        &[],
    );
}

/// The file's provider blocks configure the runs' providers; a run's
/// `providers` map picks one by alias, and naming one the file does not
/// define is an error at the reference.
#[test]
fn provider_blocks_and_run_provider_maps() {
    let dir = scenario(&[
        (
            "main.tf",
            "resource \"random_pet\" \"p\" {\n  length = 2\n}\n\noutput \"len\" {\n  value = random_pet.p.length\n}\n",
        ),
        (
            "tests/e.tftest.hcl",
            r#"provider "random" {
  alias = "other"
}

run "mapped" {
  providers = {
    random = random.other
  }
  assert {
    condition     = output.len == 2
    error_message = "len"
  }
}

run "unmapped" {
  providers = {
    random = random.missing
  }
}
"#,
        ),
    ]);
    check(
        dir.path(),
        &[],
        1,
        r#"tests/e.tftest.hcl... in progress
  run "mapped"... pass
  run "unmapped"... fail
tests/e.tftest.hcl... tearing down
tests/e.tftest.hcl... fail

Failure! 1 passed, 1 failed."#,
        r#"╷
│ Error: Missing provider definition for random.missing
│
│   on tests/e.tftest.hcl line 17, in run "unmapped":
│   17:     random = random.missing
│
│ This provider block references a provider definition that does not exist.
╵"#,
        &[],
    );
}

/// JSON test files are not read yet: refused, not left out.
#[test]
fn json_test_files_are_refused() {
    let dir = scenario(&[
        ("main.tf", MAIN_TF),
        ("tests/a.tftest.json", "{\"run\": {\"a\": {}}}"),
    ]);
    let r = run_in(dir.path(), &["test"]);
    assert_eq!(r.code, 1, "{}", r.all_output());
    assert_eq!(
        r.stderr,
        "╷\n│ Error: Unsupported test feature: JSON test files\n│\n│ fleetform test does not read JSON test files yet, and will not run the\n│ tests without tests/a.tftest.json: write it as tests/a.tftest.hcl.\n╵\n"
    );
}

/// What cannot be destroyed when a file is done fails the file and is
/// listed for cleaning up by hand.
#[test]
fn failed_teardown_is_reported() {
    let dir = scenario(&[
        (
            "main.tf",
            "resource \"terraform_data\" \"x\" {\n  input = \"a\"\n  provisioner \"local-exec\" {\n    when    = destroy\n    command = \"false\"\n  }\n}\n",
        ),
        ("tests/f.tftest.hcl", "run \"a\" {}\n"),
    ]);
    check(
        dir.path(),
        &[],
        1,
        r#"tests/f.tftest.hcl... in progress
  run "a"... pass
tests/f.tftest.hcl... tearing down
tests/f.tftest.hcl... fail

Failure! 1 passed, 0 failed."#,
        r#"fleetform encountered an error destroying resources created while executing
tests/f.tftest.hcl/a.
╷
│ Error: local-exec provisioner error
│
│   with terraform_data.x,
│   on main.tf line 3, in resource "terraform_data" "x":
│    3:   provisioner "local-exec" {
│
│ Error running command 'false': exit status 1. Output:
╵

fleetform left the following resources in state after executing
tests/f.tftest.hcl/a, and they need to be cleaned up manually:
  - terraform_data.x"#,
        &[],
    );
}

/// `plan_options`: a targeted apply leaves the other resources as they
/// were (with Terraform's two warnings), `replace` plans a replacement
/// (the new id unknown), a refresh-only plan changes no output.
#[test]
fn plan_options_target_replace_refresh_only() {
    let dir = scenario(&[
        (
            "main.tf",
            r#"variable "v" {
  default = "a"
}

resource "terraform_data" "x" {
  input = var.v
}

resource "terraform_data" "y" {
  input = var.v
}

output "x" {
  value = terraform_data.x.output
}
"#,
        ),
        (
            "tests/g.tftest.hcl",
            r#"run "create" {}

run "targeted" {
  variables {
    v = "b"
  }
  plan_options {
    target = [terraform_data.x]
  }
  assert {
    condition     = terraform_data.x.output == "b"
    error_message = "x not updated"
  }
}

run "replaced" {
  command = plan
  variables {
    v = "b"
  }
  plan_options {
    replace = [terraform_data.x]
  }
  assert {
    condition     = terraform_data.x.input == "b" && run.create.x == "a"
    error_message = "input"
  }
}

run "refresh" {
  command = plan
  variables {
    v = "zzz"
  }
  plan_options {
    mode = refresh-only
  }
  assert {
    condition     = output.x == "b"
    error_message = "output ${output.x}"
  }
}
"#,
        ),
    ]);
    check(
        dir.path(),
        &[],
        0,
        r#"tests/g.tftest.hcl... in progress
  run "create"... pass
  run "targeted"... pass
╷
│ Warning: Resource targeting is in effect
│
│ You are creating a plan with the -target option, which means that the
│ result of this plan may not represent all of the changes requested by the
│ current configuration.
│
│ The -target option is not for routine use, and is provided only for
│ exceptional situations such as recovering from errors or mistakes, or when
│ fleetform specifically suggests to use it as part of an error message.
╵
╷
│ Warning: Applied changes may be incomplete
│
│ The plan was created with the -target option in effect, so some changes
│ requested in the configuration may have been ignored and the output values
│ may not be fully updated. Run the following command to verify that no other
│ changes are pending:
│     fleetform plan
│
│ Note that the -target option is not suitable for routine use, and is
│ provided only for exceptional situations such as recovering from errors or
│ mistakes, or when fleetform specifically suggests to use it as part of an
│ error message.
╵

  run "replaced"... pass
  run "refresh"... pass
tests/g.tftest.hcl... tearing down
tests/g.tftest.hcl... pass

Success! 4 passed, 0 failed."#,
        "",
        &[],
    );
}

/// Test files apply real objects: with a coordinator given they are not
/// quietly run here instead (with this machine's credentials); the command
/// refuses and says how to run them here, changing nothing.
#[test]
fn a_coordinator_given_is_refused_not_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("main.tf"),
        "resource \"terraform_data\" \"x\" {}\n",
    )
    .unwrap();
    std::fs::write(dir.join("a.tftest.hcl"), "run \"a\" {}\n").unwrap();
    let out = std::process::Command::new(fleetform_tests::binary("fleetform"))
        .args(["test"])
        .env("FLEETFORM_COORDINATOR", "http://127.0.0.1:9")
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("Error: fleetform test runs in embedded mode only")
            && stderr.contains("FLEETFORM_COORDINATOR= fleetform test"),
        "{stderr}"
    );
    assert!(!dir.join(".fleetform").exists(), "nothing is written");
    let ok = run_in(dir, &["test"]);
    assert_eq!(ok.code, 0, "{}", ok.all_output());
}
