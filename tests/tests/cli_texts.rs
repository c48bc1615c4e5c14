//! Whole transcripts of plan, apply and destroy against Terraform 1.11:
//! the reason lines under a headline, "Refreshing state..." before a plan,
//! deferred data reads, the values listed under a failed condition, where
//! warnings go and what the prompts say. Each scenario runs fleetform
//! (embedded, real provider processes) and checks lines it must print;
//! where `terraform` 1.11 is installed, the same steps run under it (our
//! providers through `dev_overrides`) and the two transcripts must be equal
//! line for line once ids, durations and the order of concurrent progress
//! lines are masked. Without it that part prints `SKIP:`.
//!
//! Differences kept on purpose, and masked here:
//! - Terraform names itself; "fleetform" stands for it in its text.
//! - The provider development overrides warning is Terraform's alone.
//! - A blank line inside a diagnostic's box is "│" here; Terraform writes
//!   "│ " (trailing blanks are trimmed before comparing).
//! - Terraform's `plan` says "Planning failed." before the errors that
//!   stopped it; fleetform does not (see PLANNING_FAILED).
//! - A value still unknown is left out under a failed condition where
//!   Terraform says "is a string" (top-level unknowns carry no type); the
//!   configurations here have none. Typed collections are named as
//!   Terraform names them ("map of string with 2 elements").

use fleetform_tests::texts::{comparable, without_colours};
use fleetform_tests::{CliRun, run_with_input};
use std::path::{Path, PathBuf};

/// Terraform 1.11 with our null, local and sim providers.
struct Terraform(fleetform_tests::terraform::Terraform);

impl Terraform {
    fn find(scenario: &str) -> Option<Terraform> {
        let providers = ["hashicorp/null", "hashicorp/local", "fleetform/sim"];
        fleetform_tests::terraform::Terraform::find(scenario, &providers).map(Terraform)
    }

    /// `terraform ARGS` in `dir`, colours taken out of what it printed (the
    /// boxes around diagnostics stay, as ours draw them).
    fn run(&self, dir: &Path, args: &[&str], input: &str) -> CliRun {
        let r = self.0.run(dir, args, input);
        CliRun {
            code: r.code,
            stdout: without_colours(&r.stdout),
            stderr: without_colours(&r.stderr),
        }
    }
}

/// A step of a scenario: the command, what it types, and the main.tf to
/// write before it (None keeps the one there).
struct Step<'a> {
    args: &'a [&'a str],
    input: &'a str,
    main_tf: Option<&'a str>,
}

const fn step<'a>(args: &'a [&'a str]) -> Step<'a> {
    Step {
        args,
        input: "",
        main_tf: None,
    }
}

/// Each step's exit code, standard output and standard error.
fn transcript(
    dir: &Path,
    main_tf: &str,
    steps: &[Step<'_>],
    tool: &dyn Fn(&Path, &[&str], &str) -> CliRun,
) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("main.tf"), main_tf).unwrap();
    let mut seen = Vec::new();
    for s in steps {
        if let Some(text) = s.main_tf {
            std::fs::write(dir.join("main.tf"), text).unwrap();
        }
        let r = tool(dir, s.args, s.input);
        seen.push(format!(
            "$ {} -> exit {}\n--- stdout\n{}\n--- stderr\n{}",
            s.args.join(" "),
            r.code,
            comparable(&r.stdout).join("\n"),
            comparable(&r.stderr).join("\n")
        ));
    }
    seen
}

/// Runs `steps` under both tools in directories of their own; returns
/// ours, having compared it with Terraform's when Terraform is there.
fn both(scenario: &str, main_tf: &str, steps: &[Step<'_>]) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let (ff, tf): (PathBuf, PathBuf) = (tmp.path().join("ff"), tmp.path().join("tf"));
    let ours = transcript(&ff, main_tf, steps, &|d, a, i| run_with_input(d, a, i));
    if let Some(terraform) = Terraform::find(scenario) {
        let theirs = transcript(&tf, main_tf, steps, &|d, a, i| terraform.run(d, a, i));
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(
                o, t,
                "{scenario}: fleetform (left) and Terraform (right) differ"
            );
        }
    }
    ours
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

const REASONS_BEFORE: &str = r#"
resource "null_resource" "tainted" {}
resource "null_resource" "requested" {}
resource "null_resource" "triggered" {
  lifecycle {
    replace_triggered_by = [null_resource.requested]
  }
}
resource "null_resource" "each" {
  for_each = toset(["kept", "gone"])
}
resource "null_resource" "counted" {
  count = 2
}
resource "null_resource" "removed" {}
resource "null_resource" "changed" {
  triggers = { v = "1" }
}
"#;

const REASONS_AFTER: &str = r#"
resource "null_resource" "tainted" {}
resource "null_resource" "requested" {}
resource "null_resource" "triggered" {
  lifecycle {
    replace_triggered_by = [null_resource.requested]
  }
}
resource "null_resource" "each" {
  for_each = toset(["kept"])
}
resource "null_resource" "counted" {
  count = 1
}
resource "null_resource" "changed" {
  triggers = { v = "2" }
}
"#;

/// Every reason Terraform gives for a replacement or a destroy, the
/// objects refreshed before the plan, and an apply's lines.
#[test]
fn replacement_and_destroy_reasons_read_as_terraforms() {
    let steps = [
        step(&["apply", "-auto-approve"]),
        step(&["taint", "null_resource.tainted"]),
        Step {
            main_tf: Some(REASONS_AFTER),
            ..step(&["plan", "-replace=null_resource.requested"])
        },
        step(&["apply", "-auto-approve", "-replace=null_resource.requested"]),
    ];
    let ours = both("reasons", REASONS_BEFORE, &steps);
    has_lines(
        &ours[2],
        &[
            "null_resource.changed: Refreshing state... [id=ID]",
            "null_resource.tainted: Refreshing state... [id=ID]",
            "",
            "  - destroy\n-/+ destroy and then create replacement\n",
            "  # null_resource.changed must be replaced",
            "  # null_resource.counted[1] will be destroyed\n  # (because index [1] is out of range for count)",
            "  # null_resource.each[\"gone\"] will be destroyed\n  # (because key [\"gone\"] is not in for_each map)",
            "  # null_resource.removed will be destroyed\n  # (because null_resource.removed is not in configuration)",
            "  # null_resource.requested will be replaced, as requested",
            "  # null_resource.tainted is tainted, so must be replaced",
            "  # null_resource.triggered will be replaced due to changes in replace_triggered_by",
            "Plan: 4 to add, 0 to change, 7 to destroy.",
        ],
    );
    // No blank line between the plan and the first operation when nothing
    // was asked.
    assert!(
        ours[3].contains("to destroy.\nnull_resource."),
        "{}",
        ours[3]
    );
}

const READS: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}
provider "sim" {
  store_dir = "${path.module}/store"
}
resource "null_resource" "u" {
  triggers = { v = "a" }
}
data "sim_object" "by_id" {
  name = null_resource.u.id
}
data "sim_object" "after_u" {
  name       = "nothing"
  depends_on = [null_resource.u]
}
"#;

/// A data source read deferred to apply says why, and data sources come
/// before the module's managed resources.
#[test]
fn deferred_reads_say_why() {
    let ours = both("reads", READS, &[step(&["plan"])]);
    has_lines(
        &ours[0],
        &[
            "  + create\n <= read (data resources)\n",
            "  # data.sim_object.after_u will be read during apply\n  # (depends on a resource or a module with changes pending)",
            "  # data.sim_object.by_id will be read during apply\n  # (config refers to values not yet known)",
            "  # null_resource.u will be created",
        ],
    );
}

const READ_NOW: &str = r#"
data "local_file" "f" {
  filename = "${path.module}/main.tf"
}
resource "null_resource" "u" {
  triggers = { n = length(data.local_file.f.content) }
}
"#;

/// A data source read while planning says so ("Reading...", "Read
/// complete after 0s [id=...]"), in plans and in applies; the JSON view
/// calls it refreshing, as Terraform's does.
#[test]
fn reads_while_planning_are_shown() {
    let ours = both(
        "read now",
        READ_NOW,
        &[step(&["apply", "-auto-approve"]), step(&["plan"])],
    );
    for t in &ours {
        has_lines(
            t,
            &[
                // Progress lines come sorted, times and ids masked.
                "data.local_file.f: Read complete after Ns [id=ID]\ndata.local_file.f: Reading...\n",
                "--- stderr",
            ],
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("main.tf"), READ_NOW).unwrap();
    let json = run_with_input(tmp.path(), &["plan", "-json"], "");
    has_lines(
        &json.stdout,
        &[
            "\"@message\":\"data.local_file.f: Refreshing...\"",
            "\"@message\":\"data.local_file.f: Refresh complete after 0s [id=",
        ],
    );
}

const LINES_BEFORE: &str = r#"
resource "null_resource" "a" {
  triggers = {
    s = "one\ntwo\n\nthree\n"
    j = jsonencode({ a = 1, b = [1, 2] })
    k = "x"
  }
}
resource "terraform_data" "d" {
  input = "alpha\nbeta\n"
}
"#;

const LINES_AFTER: &str = r#"
resource "null_resource" "a" {
  triggers = {
    s = "one\nTWO\n\nthree\nfour"
    j = jsonencode({ a = 1, b = [1, 3] })
    k = "x"
  }
}
resource "terraform_data" "d" {
  input = "alpha\ngamma\n"
}
"#;

/// Strings of several lines are shown as heredocs, and a change to one as
/// the lines removed and added between those kept; JSON documents as
/// `jsonencode(...)` of what they encode, changes inside them shown.
#[test]
fn strings_of_several_lines_are_heredocs_with_line_changes() {
    let ours = both(
        "heredocs",
        LINES_BEFORE,
        &[
            step(&["apply", "-auto-approve"]),
            Step {
                main_tf: Some(LINES_AFTER),
                ..step(&["plan"])
            },
        ],
    );
    has_lines(
        &ours[0],
        &["      + input  = <<-EOT\n            alpha\n            beta\n        EOT\n"],
    );
    has_lines(
        &ours[1],
        &[
            "          ~ \"s\" = <<-EOT\n                one\n              - two\n              + TWO\n\n                three\n              + four\n            EOT\n",
            "      ~ output = <<-EOT\n            alpha\n            beta\n        EOT -> (known after apply)\n",
        ],
    );
    has_lines(
        &ours[1],
        &[
            "          ~ \"j\" = jsonencode(\n              ~ {\n                  ~ b = [\n                        1,\n                      ~ 2 -> 3,\n                    ]\n",
        ],
    );
}

const NESTED_BEFORE: &str = r#"
resource "terraform_data" "d" {
  input = {
    list  = ["a", "b", "c", "d"]
    obj   = { x = 1, y = "two", "z w" = true }
    nest  = [{ n = 1 }, { n = 2 }]
    empty = []
    m     = tomap({ k1 = "v1", k2 = "v2" })
    gone  = "bye"
    same  = [1, 2]
  }
}
"#;

const NESTED_AFTER: &str = r#"
resource "terraform_data" "d" {
  input = {
    list  = ["a", "c", "d", "e"]
    obj   = { x = 2, y = "two", "z w" = true }
    nest  = [{ n = 1 }, { n = 3 }]
    empty = ["new"]
    m     = tomap({ k1 = "v1", k3 = "v3" })
    added = { q = [true] }
    same  = [1, 2]
  }
}
"#;

/// Values inside attributes as Terraform lays them out: one element a
/// line, object attribute names bare, a changed tuple by position with one
/// unchanged neighbour each side of a change, a changed object with only
/// what changed; created, updated, and destroyed.
#[test]
fn nested_values_are_laid_out_as_terraform_does() {
    let ours = both(
        "nested values",
        NESTED_BEFORE,
        &[
            step(&["apply", "-auto-approve"]),
            Step {
                main_tf: Some(NESTED_AFTER),
                ..step(&["plan"])
            },
            step(&["plan", "-destroy"]),
        ],
    );
    has_lines(
        &ours[0],
        &[
            "          + list  = [\n              + \"a\",\n",
            "          + nest  = [\n              + {\n                  + n = 1\n                },\n",
            "          + \"z w\" = true\n",
        ],
    );
    has_lines(
        &ours[1],
        &[
            "          ~ list  = [\n                \"a\",\n              ~ \"b\" -> \"c\",\n",
            "          ~ nest  = [\n                {\n                    n = 1\n                },\n              ~ {\n                  ~ n = 2 -> 3\n                },\n            ]\n",
            "              ~ x     = 1 -> 2\n                # (2 unchanged attributes hidden)\n",
            "        } -> (known after apply)\n",
        ],
    );
    has_lines(
        &ours[2],
        &[
            "          - same  = [\n              - 1,\n",
            "        } -> null\n",
        ],
    );
}

const CONDITIONS: &str = r#"
variable "rev" {
  default = 1
}
variable "secret" {
  default   = "s"
  sensitive = true
}
variable "nul" {
  type    = string
  default = null
}
locals {
  names = ["a", "b"]
  m     = { a = 1 }
  s     = "hello"
  obj   = { x = { y = 3 }, z = 1 }
  tags  = tomap({ a = "x", b = "y" })
  none  = tolist([])
}
resource "null_resource" "u" {
  triggers = { v = "x" }
}
check "values" {
  assert {
    condition     = length(local.names) > 5 && var.rev == 2 && local.s == "x" && length(local.m) > 3 && local.obj.x.y == 2 && local.names[0] == "z" && length(local.tags) + length(local.none) == 0
    error_message = "Values are off."
  }
}
check "hidden" {
  assert {
    condition     = var.secret == "t" || var.nul != null || local.obj == null || null_resource.u.triggers.v == "y"
    error_message = "Hidden values."
  }
}
"#;

const VALIDATION: &str = r#"
variable "rev" {
  type    = number
  default = 1
  validation {
    condition     = var.rev > 2 && var.rev != 5
    error_message = "rev must be above 2."
  }
}
"#;

/// A failed check lists the values its condition refers to (not the
/// sensitive ones) under the quoted line, after the plan, on standard
/// output; a failed variable validation does the same on standard error.
#[test]
fn failed_conditions_list_the_values_they_refer_to() {
    let ours = both(
        "conditions",
        CONDITIONS,
        &[step(&["apply", "-auto-approve"])],
    );
    has_lines(
        &ours[0],
        &[
            "--- stdout",
            "Plan: 1 to add, 0 to change, 0 to destroy.",
            "│ Warning: Check block assertion failed",
            "│     ├────────────────\n│     │ local.m is object with 1 attribute \"a\"\n│     │ local.names is tuple with 2 elements\n│     │ local.names[0] is \"a\"\n│     │ local.none is empty list of dynamic\n│     │ local.obj.x.y is 3\n│     │ local.s is \"hello\"\n│     │ local.tags is map of string with 2 elements\n│     │ var.rev is 1\n│\n│ Values are off.",
            "│     ├────────────────\n│     │ local.obj is object with 2 attributes\n│     │ null_resource.u.triggers.v is \"x\"\n│     │ var.nul is null\n│\n│ Hidden values.",
            "--- stderr",
        ],
    );
    let ours = both("validation", VALIDATION, &[step(&["plan"])]);
    has_lines(
        &ours[0],
        &[
            "--- stderr",
            "│ Error: Invalid value for variable",
            "│    2: variable \"rev\" {\n│     ├────────────────\n│     │ var.rev is 1\n│\n│ rev must be above 2.",
        ],
    );
}

/// Destroy's question and its refusal, and the no-changes text of a
/// destroy with nothing to destroy.
#[test]
fn destroy_asks_and_refuses_in_terraforms_words() {
    let ours = both(
        "destroy",
        "resource \"null_resource\" \"a\" {}\n",
        &[
            Step {
                input: "yes\n",
                ..step(&["apply"])
            },
            Step {
                input: "no\n",
                ..step(&["destroy"])
            },
            step(&["destroy", "-auto-approve"]),
            step(&["destroy", "-auto-approve"]),
        ],
    );
    has_lines(
        &ours[0],
        &["  Enter a value:\nnull_resource.a: Creating..."],
    );
    has_lines(
        &ours[1],
        &[
            "null_resource.a: Refreshing state... [id=ID]",
            "  There is no undo. Only 'yes' will be accepted to confirm.\n\n  Enter a value:\nDestroy cancelled.",
        ],
    );
    has_lines(&ours[3], &["No changes. No objects need to be destroyed."]);
}

/// Every key path of a JSON document (`/a/b`, `/list[]/c`).
fn key_paths(v: &serde_json::Value, at: &str, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{at}/{k}");
                out.insert(p.clone());
                key_paths(x, &p, out);
            }
        }
        serde_json::Value::Array(items) => {
            for x in items {
                key_paths(x, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

const JSON_TF: &str = r#"
variable "v" {
  default = "a"
}
resource "null_resource" "a" {
  triggers = { v = var.v }
}
output "o" {
  value = null_resource.a.id
}
"#;

/// `show -json` of a saved plan has the fields Terraform 1.11 writes
/// (`timestamp`, `applyable`, `complete`, `errored`; an output not known
/// yet has no `after`), key path for key path, `relevant_attributes` too:
/// every resource attribute a change refers to (here the output's
/// `null_resource.a.id`), drifted or not.
#[test]
fn saved_plan_json_has_terraforms_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = |dir: &Path, tool: &dyn Fn(&Path, &[&str]) -> CliRun| {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("main.tf"), JSON_TF).unwrap();
        assert_eq!(tool(dir, &["apply", "-auto-approve"]).code, 0);
        std::fs::write(dir.join("main.tf"), JSON_TF.replace("\"a\"\n}", "\"b\"\n}")).unwrap();
        assert_eq!(tool(dir, &["plan", "-out=p.bin"]).code, 0);
        let shown = tool(dir, &["show", "-json", "p.bin"]);
        let json: serde_json::Value = serde_json::from_str(&shown.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", shown.all_output()));
        let mut paths = std::collections::BTreeSet::new();
        key_paths(&json, "", &mut paths);
        (json, paths)
    };
    let (ours, our_paths) = keys(&tmp.path().join("ff"), &|d, a| run_with_input(d, a, ""));
    for field in ["/timestamp", "/applyable", "/complete", "/errored"] {
        assert!(our_paths.contains(field), "{field} missing: {our_paths:?}");
    }
    assert!(ours["output_changes"]["o"].get("after").is_none(), "{ours}");
    assert_eq!(
        ours["relevant_attributes"],
        serde_json::json!([{"resource": "null_resource.a", "attribute": ["id"]}])
    );
    assert!(
        ours["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{ours}"
    );
    if let Some(terraform) = Terraform::find("plan json") {
        let (_, their_paths) = keys(&tmp.path().join("tf"), &|d, a| terraform.run(d, a, ""));
        assert_eq!(our_paths, their_paths);
    }
}

const SHOW_TF: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}
provider "sim" {
  store_dir = "${path.module}/store"
}
resource "sim_object" "a" {
  name = "a"
  tags = { env = "dev", "two words" = "x" }
}
resource "sim_object" "b" {
  name = "b"
}
resource "null_resource" "n" {
  count    = 1
  triggers = { a = sim_object.a.id }
}
output "tags" {
  value = { "two words" = sim_object.a.tags["two words"], "x-1 y" = sim_object.a.name }
}
output "names" {
  value = [sim_object.a.name, sim_object.b.name]
}
output "secret" {
  value     = "x"
  sensitive = true
}
"#;

/// `show` of the state and `state show` (four spaces a level, null
/// attributes left out, map keys quoted, a tainted object marked), and
/// `show` of a saved plan. Not compared: data sources, which fleetform
/// does not keep in state, and object-typed values (`terraform_data`'s
/// input), whose keys fleetform quotes as a map's.
#[test]
fn show_prints_state_and_saved_plans_as_terraform_does() {
    let ours = both(
        "show",
        SHOW_TF,
        &[
            step(&["apply", "-auto-approve"]),
            step(&["taint", "sim_object.b"]),
            step(&["show"]),
            step(&["state", "show", "sim_object.a"]),
            Step {
                main_tf: Some(&SHOW_TF.replace("name = \"b\"", "name = \"b\"\n  size = 3")),
                ..step(&["plan", "-out=p.bin"])
            },
            step(&["show", "p.bin"]),
        ],
    );
    has_lines(
        &ours[2],
        &[
            "# sim_object.a:\nresource \"sim_object\" \"a\" {\n    id   = \"",
            "    name = \"a\"\n    tags = {\n        \"env\"       = \"dev\"\n        \"two words\" = \"x\"\n    }\n}",
            "# sim_object.b: (tainted)",
            "Outputs:\n\nnames = [\n    \"a\",\n    \"b\",\n]\nsecret = (sensitive value)\ntags = {\n    \"two words\" = \"x\"\n    \"x-1 y\"     = \"a\"\n}",
        ],
    );
    assert!(!ours[2].contains("= null"), "{}", ours[2]);
    has_lines(
        &ours[5],
        &[
            "--- stdout\n\nfleetform used the selected providers",
            "  # sim_object.b is tainted, so must be replaced",
        ],
    );
}

/// `modules` and `modules -json`: the declared calls as a tree and as a
/// list, the same as Terraform's once modules are installed (`get`).
/// Terraform refuses before `get` ("Module not installed"); fleetform
/// reads local modules where they are, so it lists them then too.
#[test]
fn modules_lists_the_declared_calls_as_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    let listing = |dir: &Path, tool: &dyn Fn(&Path, &[&str]) -> CliRun| {
        std::fs::create_dir_all(dir.join("m/sub")).unwrap();
        std::fs::write(
            dir.join("main.tf"),
            "module \"b\" {\n  source = \"./m\"\n  count  = 2\n}\nmodule \"a\" {\n  source = \"./m\"\n}\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("m/main.tf"),
            "module \"inner\" {\n  source = \"./sub\"\n}\n",
        )
        .unwrap();
        std::fs::write(dir.join("m/sub/main.tf"), "locals {\n  x = 1\n}\n").unwrap();
        let got = tool(dir, &["get"]);
        assert_eq!(got.code, 0, "{}", got.all_output());
        [&["modules"][..], &["modules", "-json"]].map(|args| {
            let r = tool(dir, args);
            format!("exit {}\n{}{}", r.code, r.stdout, r.stderr)
        })
    };
    let ours = listing(&tmp.path().join("ff"), &|d, a| run_with_input(d, a, ""));
    assert_eq!(
        ours[0],
        "exit 0\n\nModules declared by configuration:\n.\n├── \"a\"[./m]\n│\u{a0}\u{a0} └── \"inner\"[./sub]\n└── \"b\"[./m]\n    └── \"inner\"[./sub]\n\n"
    );
    assert_eq!(
        ours[1],
        "exit 0\n{\"format_version\":\"1.0\",\"modules\":[{\"key\":\"a\",\"source\":\"./m\",\"version\":\"\"},{\"key\":\"inner\",\"source\":\"./sub\",\"version\":\"\"},{\"key\":\"b\",\"source\":\"./m\",\"version\":\"\"},{\"key\":\"inner\",\"source\":\"./sub\",\"version\":\"\"}]}\n"
    );
    if let Some(terraform) = Terraform::find("modules") {
        let theirs = listing(&tmp.path().join("tf"), &|d, a| terraform.run(d, a, ""));
        assert_eq!(ours[0], theirs[0]);
        // Terraform's -json lists the calls in Go's map order, which
        // changes from run to run (seen here: `a` first in 5 of 6 runs):
        // compare the entries, not their order.
        let entries = |text: &str| {
            let json = text.split_once('\n').map_or("", |(_, j)| j);
            let doc: serde_json::Value = serde_json::from_str(json).unwrap();
            let mut list: Vec<String> = doc["modules"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.to_string())
                .collect();
            list.sort();
            (doc["format_version"].clone(), list)
        };
        assert_eq!(entries(&ours[1]), entries(&theirs[1]));
    }
}
