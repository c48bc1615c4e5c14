//! What a plan shows besides the changes it makes, as Terraform 1.11 shows
//! it: objects `moved` blocks rebind, objects `import` blocks bring in, and
//! objects changed outside fleetform (drift), in the text, the exit codes of
//! `-detailed-exitcode`, `-json` events and `show -json`; and approving a
//! refresh-only apply. Embedded mode, real provider processes.
//!
//! Where `terraform` 1.11 is installed, each scenario runs under it too
//! (our provider binaries through `dev_overrides`) and the key lines and
//! exit codes are compared, with "fleetform" for "Terraform"; without it,
//! that part prints `SKIP:` and is skipped.

use fleetform_tests::{CliRun, run_in, run_with_input};
use std::path::{Path, PathBuf};

/// Terraform 1.11 with our null, local and sim providers.
struct Terraform(fleetform_tests::terraform::Terraform);

impl Terraform {
    fn find(scenario: &str) -> Option<Terraform> {
        let providers = ["hashicorp/null", "hashicorp/local", "fleetform/sim"];
        fleetform_tests::terraform::Terraform::find(scenario, &providers).map(Terraform)
    }

    /// Runs `terraform ARGS -no-color` in `dir` with `input` on stdin.
    fn run(&self, dir: &Path, args: &[&str], input: &str) -> CliRun {
        self.0.run_plain(dir, args, input)
    }
}

/// Terraform's text in fleetform's words.
fn as_fleetform(text: &str) -> String {
    text.replace("Terraform", "fleetform")
        .replace("terraform", "fleetform")
}

/// The lines of `text` that name objects ("  # ...") and count them
/// ("Plan: ...", "Apply complete! ...").
fn key_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| {
            l.starts_with("  # ") || l.starts_with("Plan: ") || l.starts_with("Apply complete!")
        })
        .map(str::to_string)
        .collect()
}

/// From the "Note: Objects have changed" line to the end of the paragraph
/// after the objects, ids left out (they differ from run to run).
fn drift_section(text: &str) -> String {
    let start = text
        .find("Note: Objects have changed outside of")
        .unwrap_or_else(|| panic!("no drift section in:\n{text}"));
    let rest = &text[start..];
    let end = ["objects.\n", "changes.\n"]
        .iter()
        .filter_map(|e| rest.find(e).map(|i| i + e.len()))
        .min()
        .unwrap_or(rest.len());
    rest[..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("id "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn ok(r: &CliRun) {
    assert_eq!(r.code, 0, "{}", r.all_output());
}

/// Two directories with the same configuration, for fleetform and for
/// Terraform (fleetform will not plan where a Terraform state is).
fn dirs(main_tf: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (ff, tf) = (tmp.path().join("ff"), tmp.path().join("tf"));
    for d in [&ff, &tf] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("main.tf"), main_tf).unwrap();
    }
    (tmp, ff, tf)
}

const MOVED: &str = r#"
resource "null_resource" "a3" {}

moved {
  from = null_resource.a2
  to   = null_resource.a3
}
"#;

/// A plan whose only change is a `moved` block shows the move, counts
/// nothing, and is a change for `-detailed-exitcode`; applying it records
/// the move.
#[test]
fn a_move_alone_is_shown_and_is_a_change() {
    let (_tmp, ff, tf) = dirs("resource \"null_resource\" \"a2\" {}\n");
    ok(&run_in(&ff, &["apply", "-auto-approve"]));
    std::fs::write(ff.join("main.tf"), MOVED).unwrap();
    let plan = run_in(&ff, &["plan", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "{}", plan.all_output());
    assert_eq!(
        key_lines(&plan.stdout),
        [
            "  # null_resource.a2 has moved to null_resource.a3",
            "Plan: 0 to add, 0 to change, 0 to destroy."
        ],
        "{}",
        plan.stdout
    );
    assert!(!plan.stdout.contains("No changes"), "{}", plan.stdout);
    let json = run_in(&ff, &["plan", "-json"]);
    let moved = json
        .stdout
        .lines()
        .find(|l| l.contains("\"planned_change\""))
        .unwrap_or_else(|| panic!("{}", json.stdout));
    assert!(
        moved.contains("\"action\":\"move\"")
            && moved.contains("\"previous_resource\":{\"addr\":\"null_resource.a2\""),
        "{moved}"
    );
    let apply = run_in(&ff, &["apply", "-auto-approve"]);
    ok(&apply);
    assert!(
        apply
            .stdout
            .contains("Apply complete! Resources: 0 added, 0 changed, 0 destroyed."),
        "{}",
        apply.stdout
    );
    ok(&run_in(&ff, &["plan", "-detailed-exitcode"]));
    assert_eq!(run_in(&ff, &["state", "list"]).stdout, "null_resource.a3\n");

    let Some(terraform) = Terraform::find("moved") else {
        return;
    };
    ok(&terraform.run(&tf, &["apply", "-auto-approve"], ""));
    std::fs::write(tf.join("main.tf"), MOVED).unwrap();
    let theirs = terraform.run(&tf, &["plan", "-detailed-exitcode"], "");
    assert_eq!(theirs.code, plan.code, "{}", theirs.all_output());
    assert_eq!(key_lines(&theirs.stdout), key_lines(&plan.stdout));
}

const COUNTED: &str = "resource \"null_resource\" \"a\" {\n  count = 1\n}\n";
const SINGLE: &str = "resource \"null_resource\" \"a\" {}\n";

/// A resource that gains `count` keeps its object as `[0]`, and one that
/// loses it takes `[0]` back, without a `moved` block, as in Terraform
/// (before, fleetform planned to destroy the object and create another).
fn implied_moves(tool: &dyn Fn(&Path, &[&str]) -> CliRun, dir: &Path) -> Vec<Vec<String>> {
    ok(&tool(dir, &["apply", "-auto-approve"]));
    let mut out = Vec::new();
    for (config, then) in [(COUNTED, "null_resource.a[0]"), (SINGLE, "null_resource.a")] {
        std::fs::write(dir.join("main.tf"), config).unwrap();
        let plan = tool(dir, &["plan", "-detailed-exitcode"]);
        assert_eq!(plan.code, 2, "{}", plan.all_output());
        out.push(key_lines(&plan.stdout));
        ok(&tool(dir, &["apply", "-auto-approve"]));
        assert_eq!(tool(dir, &["state", "list"]).stdout, format!("{then}\n"));
    }
    out
}

#[test]
fn adding_or_removing_count_moves_the_object() {
    let (_tmp, ff, tf) = dirs(SINGLE);
    let ours = implied_moves(&|d, a| run_in(d, a), &ff);
    assert_eq!(
        ours,
        [
            [
                "  # null_resource.a has moved to null_resource.a[0]",
                "Plan: 0 to add, 0 to change, 0 to destroy."
            ],
            [
                "  # null_resource.a[0] has moved to null_resource.a",
                "Plan: 0 to add, 0 to change, 0 to destroy."
            ]
        ]
    );
    let Some(terraform) = Terraform::find("implied moves") else {
        return;
    };
    let theirs = implied_moves(&|d, a| terraform.run(d, a, ""), &tf);
    assert_eq!(ours, theirs);
}

const IMPORT: &str = r#"
resource "terraform_data" "x" {}

import {
  to = terraform_data.x
  id = "abc"
}
"#;

/// An import alone shows the object, is counted as an import, is a change
/// for `-detailed-exitcode`, and applying it says what it imported.
#[test]
fn an_import_alone_is_shown_counted_and_applied() {
    let (_tmp, ff, tf) = dirs(IMPORT);
    let plan = run_in(&ff, &["plan", "-detailed-exitcode", "-out=import.plan"]);
    assert_eq!(plan.code, 2, "{}", plan.all_output());
    assert!(
        plan.stdout.contains(concat!(
            "  # terraform_data.x will be imported\n",
            "    resource \"terraform_data\" \"x\" {\n",
            "        id = \"abc\"\n",
            "    }\n",
        )),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.\n"),
        "{}",
        plan.stdout
    );
    let show = run_in(&ff, &["show", "-json", "import.plan"]);
    ok(&show);
    let doc: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    assert_eq!(
        doc["resource_changes"][0]["change"]["importing"],
        serde_json::json!({"id": "abc"})
    );
    let json = run_in(&ff, &["plan", "-json"]);
    let summary = json
        .stdout
        .lines()
        .find(|l| l.contains("\"change_summary\""))
        .unwrap_or_else(|| panic!("{}", json.stdout));
    assert!(summary.contains("\"import\":1"), "{summary}");
    assert!(
        json.stdout.contains("\"action\":\"import\""),
        "{}",
        json.stdout
    );
    let apply = run_in(&ff, &["apply", "-auto-approve"]);
    ok(&apply);
    assert!(
        apply.stdout.contains(concat!(
            "terraform_data.x: Importing... [id=abc]\n",
            "terraform_data.x: Import complete [id=abc]\n",
            "\n",
            "Apply complete! Resources: 1 imported, 0 added, 0 changed, 0 destroyed.\n",
        )),
        "{}",
        apply.stdout
    );
    ok(&run_in(&ff, &["plan", "-detailed-exitcode"]));

    let Some(terraform) = Terraform::find("import") else {
        return;
    };
    let theirs = terraform.run(&tf, &["plan", "-detailed-exitcode"], "");
    assert_eq!(theirs.code, plan.code, "{}", theirs.all_output());
    assert_eq!(key_lines(&theirs.stdout), key_lines(&plan.stdout));
    assert!(theirs.stdout.contains("        id = \"abc\"\n"));
    let applied = terraform.run(&tf, &["apply", "-auto-approve"], "");
    ok(&applied);
    assert_eq!(key_lines(&applied.stdout), key_lines(&apply.stdout));
    for line in ["Importing... [id=abc]", "Import complete [id=abc]"] {
        assert!(applied.stdout.contains(line), "{}", applied.stdout);
    }
}

const FILES: &str = r#"
resource "local_file" "f" {
  filename = "${path.module}/f.txt"
  content  = "hello"
}

resource "local_file" "g" {
  filename = "${path.module}/g.txt"
  content  = "world"
}
"#;

/// Deletes `f.txt` and changes `g.txt` (which the local provider then
/// takes for deleted too: the file is no longer the one it wrote).
fn change_files_outside(dir: &Path) {
    std::fs::remove_file(dir.join("f.txt")).unwrap();
    std::fs::write(dir.join("g.txt"), "changed outside").unwrap();
}

/// After local files were deleted or changed outside fleetform, a
/// refresh-only plan shows each object with its diff and is a change; a
/// normal plan only plans to create them again (that drift does not bear
/// on other changes). Applying the refresh-only plan asks first: no
/// leaves the state as it was, yes records the drift.
#[test]
fn a_refresh_only_plan_shows_drift_and_asks_before_recording_it() {
    let (_tmp, ff, tf) = dirs(FILES);
    ok(&run_in(&ff, &["apply", "-auto-approve"]));
    change_files_outside(&ff);
    let plan = run_in(&ff, &["plan", "-refresh-only", "-detailed-exitcode"]);
    assert_eq!(plan.code, 2, "{}", plan.all_output());
    let text = &plan.stdout;
    assert!(!text.contains("No changes"), "{text}");
    assert_eq!(
        key_lines(text),
        [
            "  # local_file.f has been deleted",
            "  # local_file.g has been deleted"
        ],
        "{text}"
    );
    for line in [
        "Note: Objects have changed outside of fleetform\n",
        "      - content              = \"hello\" -> null\n",
        "      - filename             = \"./g.txt\" -> null\n",
        "This is a refresh-only plan, so fleetform will not take any actions to undo\n",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
    let normal = run_in(&ff, &["plan", "-detailed-exitcode"]);
    assert_eq!(normal.code, 2, "{}", normal.all_output());
    assert!(
        !normal.stdout.contains("changed outside"),
        "{}",
        normal.stdout
    );
    assert!(
        normal
            .stdout
            .contains("Plan: 2 to add, 0 to change, 0 to destroy."),
        "{}",
        normal.stdout
    );

    let declined = run_with_input(&ff, &["apply", "-refresh-only"], "no\n");
    assert_eq!(declined.code, 1, "{}", declined.all_output());
    let question = "Would you like to update the fleetform state to reflect these detected changes?\n  fleetform will write these changes to the state without modifying any real infrastructure.\n  There is no undo. Only 'yes' will be accepted to confirm.\n";
    assert!(declined.stdout.contains(question), "{}", declined.stdout);
    assert!(declined.stdout.contains("Apply cancelled."));
    assert_eq!(
        run_in(&ff, &["state", "list"]).stdout,
        "local_file.f\nlocal_file.g\n",
        "declining leaves the state as it was"
    );
    let approved = run_with_input(&ff, &["apply", "-refresh-only"], "yes\n");
    ok(&approved);
    assert!(
        approved
            .stdout
            .contains("Apply complete! Resources: 0 added, 0 changed, 0 destroyed."),
        "{}",
        approved.stdout
    );
    assert_eq!(run_in(&ff, &["state", "list"]).stdout, "");
    assert!(
        !ff.join("f.txt").exists(),
        "recording drift changes nothing"
    );
    let after = run_in(&ff, &["plan", "-refresh-only", "-detailed-exitcode"]);
    ok(&after);
    assert!(
        after
            .stdout
            .contains("No changes. Your infrastructure still matches the configuration."),
        "{}",
        after.stdout
    );

    let Some(terraform) = Terraform::find("refresh-only") else {
        return;
    };
    ok(&terraform.run(&tf, &["apply", "-auto-approve"], ""));
    change_files_outside(&tf);
    let theirs = terraform.run(&tf, &["plan", "-refresh-only", "-detailed-exitcode"], "");
    assert_eq!(theirs.code, plan.code, "{}", theirs.all_output());
    assert_eq!(
        drift_section(&as_fleetform(&theirs.stdout)),
        drift_section(text)
    );
    let theirs = terraform.run(&tf, &["plan", "-detailed-exitcode"], "");
    assert_eq!(theirs.code, normal.code);
    assert_eq!(key_lines(&theirs.stdout), key_lines(&normal.stdout));
    let theirs = terraform.run(&tf, &["apply", "-refresh-only"], "no\n");
    assert_eq!(theirs.code, declined.code, "{}", theirs.all_output());
    assert!(as_fleetform(&theirs.stdout).contains(question));
    let theirs = terraform.run(&tf, &["apply", "-refresh-only"], "yes\n");
    assert_eq!(key_lines(&theirs.stdout), key_lines(&approved.stdout));
    let theirs = terraform.run(&tf, &["plan", "-refresh-only", "-detailed-exitcode"], "");
    assert_eq!(theirs.code, after.code);
    assert!(
        as_fleetform(&theirs.stdout)
            .contains("No changes. Your infrastructure still matches the configuration.")
    );
}

/// Two `sim_object`s, `b` using `a`'s size; `x` is `b`'s own tag.
fn sim_config(store: &Path, x: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{}"
}}

resource "sim_object" "a" {{
  name = "a"
  size = 3
  tags = {{ env = "test" }}
}}

resource "sim_object" "b" {{
  name = "b"
  tags = {{ s = tostring(sim_object.a.size), x = "{x}" }}
}}
"#,
        store.display()
    )
}

/// Sets the stored size of the sim object named `name`, as someone
/// changing it outside fleetform would.
fn resize_outside(store: &Path, name: &str, size: i64) {
    for entry in std::fs::read_dir(store).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let mut doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if doc["name"] == name {
            doc["size"] = size.into();
            std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
            return;
        }
    }
    panic!("no sim object named {name} in {}", store.display());
}

/// An object changed outside fleetform is shown with its `~` lines; a
/// normal plan shows that drift when a change depends on the object (not
/// when only the object itself is changed back), and `show -json` carries
/// it in `resource_drift` with the object in `relevant_attributes`.
#[test]
fn drift_that_planned_changes_depend_on_is_shown_before_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (ff, tf) = (tmp.path().join("ff"), tmp.path().join("tf"));
    let stores = (tmp.path().join("ff-store"), tmp.path().join("tf-store"));
    std::fs::create_dir_all(&ff).unwrap();
    std::fs::write(ff.join("main.tf"), sim_config(&stores.0, "1")).unwrap();
    ok(&run_in(&ff, &["apply", "-auto-approve"]));
    resize_outside(&stores.0, "a", 7);

    let refresh = run_in(&ff, &["plan", "-refresh-only", "-detailed-exitcode"]);
    assert_eq!(refresh.code, 2, "{}", refresh.all_output());
    assert!(
        refresh.stdout.contains(concat!(
            "  # sim_object.a has changed\n",
            "  ~ resource \"sim_object\" \"a\" {\n",
        )) && refresh.stdout.contains("      ~ size = 3 -> 7\n"),
        "{}",
        refresh.stdout
    );
    // Only `a` changes (back): its own drift is what the change shows.
    let undo = run_in(&ff, &["plan"]);
    ok(&undo);
    assert!(!undo.stdout.contains("changed outside"), "{}", undo.stdout);
    // `b` changes and uses `a`: the drift may explain the plan.
    std::fs::write(ff.join("main.tf"), sim_config(&stores.0, "2")).unwrap();
    let plan = run_in(&ff, &["plan", "-out=drift.plan"]);
    ok(&plan);
    let text = &plan.stdout;
    let note = text
        .find("Note: Objects have changed outside of fleetform")
        .unwrap_or_else(|| panic!("{text}"));
    let legend = text.find("fleetform used the selected providers").unwrap();
    assert!(note < legend, "the drift comes first:\n{text}");
    assert!(
        text.contains(
            "the following plan may include\nactions to undo or respond to these changes.\n\n─"
        ),
        "{text}"
    );
    let show = run_in(&ff, &["show", "-json", "drift.plan"]);
    ok(&show);
    let doc: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    let drift = &doc["resource_drift"];
    assert_eq!(drift.as_array().map(Vec::len), Some(1), "{doc}");
    assert_eq!(drift[0]["address"], "sim_object.a");
    assert_eq!(drift[0]["change"]["actions"], serde_json::json!(["update"]));
    assert_eq!(drift[0]["change"]["before"]["size"], 3);
    assert_eq!(drift[0]["change"]["after"]["size"], 7);
    assert_eq!(doc["relevant_attributes"][0]["resource"], "sim_object.a");

    let Some(terraform) = Terraform::find("drift") else {
        return;
    };
    std::fs::create_dir_all(&tf).unwrap();
    std::fs::write(tf.join("main.tf"), sim_config(&stores.1, "1")).unwrap();
    ok(&terraform.run(&tf, &["apply", "-auto-approve"], ""));
    resize_outside(&stores.1, "a", 7);
    let theirs = terraform.run(&tf, &["plan", "-refresh-only", "-detailed-exitcode"], "");
    assert_eq!(theirs.code, refresh.code, "{}", theirs.all_output());
    assert_eq!(
        drift_section(&as_fleetform(&theirs.stdout)),
        drift_section(&refresh.stdout)
    );
    let theirs = terraform.run(&tf, &["plan"], "");
    assert!(!theirs.stdout.contains("changed outside"));
    std::fs::write(tf.join("main.tf"), sim_config(&stores.1, "2")).unwrap();
    let theirs = terraform.run(&tf, &["plan", "-out=drift.plan"], "");
    ok(&theirs);
    assert_eq!(
        drift_section(&as_fleetform(&theirs.stdout)),
        drift_section(text)
    );
    let shown = terraform.run(&tf, &["show", "-json", "drift.plan"], "");
    let theirs: serde_json::Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(theirs["resource_drift"][0]["address"], "sim_object.a");
    assert_eq!(
        theirs["resource_drift"][0]["change"]["actions"],
        drift[0]["change"]["actions"]
    );
    assert_eq!(
        theirs["relevant_attributes"][0]["resource"],
        doc["relevant_attributes"][0]["resource"]
    );
}

/// An import configuration without resource blocks, for objects in `store`.
fn import_config(store: &Path, id: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{}"
}}

import {{
  to = sim_object.g
  id = "{id}"
}}

import {{
  to = terraform_data.d
  id = "xyz"
}}
"#,
        store.display()
    )
}

/// The blocks of a generated file, in address order (Terraform writes them
/// in the order its imports finish).
fn generated_blocks(text: &str) -> Vec<String> {
    let mut blocks: Vec<String> = text
        .split("\n\n")
        .map(|b| b.trim_end().to_string())
        .collect();
    blocks.sort();
    blocks
}

/// `plan -generate-config-out=FILE` writes resource blocks for import
/// targets that had none, from the imported objects (no computed-only
/// attributes), plans the imports with them, refuses a FILE that exists,
/// and a saved plan made with it applies.
#[test]
fn generated_configuration_is_written_for_imports_without_blocks() {
    let tmp = tempfile::tempdir().unwrap();
    let origin = tmp.path().join("origin");
    let stores = (tmp.path().join("ff-store"), tmp.path().join("tf-store"));
    std::fs::create_dir_all(&origin).unwrap();
    std::fs::write(origin.join("main.tf"), sim_config(&stores.0, "1")).unwrap();
    ok(&run_in(&origin, &["apply", "-auto-approve"]));
    let mut id = String::new();
    std::fs::create_dir_all(&stores.1).unwrap();
    for entry in std::fs::read_dir(&stores.0).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, stores.1.join(path.file_name().unwrap())).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let object = path.extension().is_some_and(|e| e == "json");
        if object && serde_json::from_str::<serde_json::Value>(&text).unwrap()["name"] == "a" {
            id = path.file_stem().unwrap().to_string_lossy().into_owned();
        }
    }
    assert!(!id.is_empty(), "the object named a is in the store");
    let (ff, tf) = (tmp.path().join("ff"), tmp.path().join("tf"));
    std::fs::create_dir_all(&ff).unwrap();
    std::fs::write(ff.join("main.tf"), import_config(&stores.0, &id)).unwrap();

    let plan = run_in(
        &ff,
        &[
            "plan",
            "-generate-config-out=gen.tf",
            "-out=gen.plan",
            "-detailed-exitcode",
        ],
    );
    assert_eq!(plan.code, 2, "{}", plan.all_output());
    assert!(
        plan.stdout.contains(concat!(
            "  # terraform_data.d will be imported\n",
            "  # (config will be generated)\n",
            "    resource \"terraform_data\" \"d\" {\n",
        )),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("Plan: 2 to import, 0 to add, 0 to change, 0 to destroy."),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains(
            "fleetform has generated configuration and written it to gen.tf. Please review\n"
        ),
        "{}",
        plan.stdout
    );
    assert!(plan.stderr.contains("Config generation is experimental"));
    let generated = std::fs::read_to_string(ff.join("gen.tf")).unwrap();
    assert_eq!(
        generated,
        format!(
            concat!(
                "# __generated__ by fleetform\n",
                "# Please review these resources and move them into your main configuration files.\n",
                "\n",
                "# __generated__ by fleetform from \"{id}\"\n",
                "resource \"sim_object\" \"g\" {{\n",
                "  name = \"a\"\n",
                "  size = 3\n",
                "  tags = {{\n",
                "    env = \"test\"\n",
                "  }}\n",
                "}}\n",
                "\n",
                "# __generated__ by fleetform from \"xyz\"\n",
                "resource \"terraform_data\" \"d\" {{\n",
                "  input            = null\n",
                "  triggers_replace = null\n",
                "}}\n",
            ),
            id = id
        )
    );
    let again = run_in(&ff, &["plan", "-generate-config-out=gen.tf"]);
    assert_eq!(again.code, 1, "{}", again.all_output());
    assert!(
        again
            .stderr
            .contains("Target generated file already exists"),
        "{}",
        again.all_output()
    );
    let apply = run_in(&ff, &["apply", "gen.plan"]);
    ok(&apply);
    assert!(
        apply
            .stdout
            .contains("Apply complete! Resources: 2 imported, 0 added, 0 changed, 0 destroyed."),
        "{}",
        apply.stdout
    );
    // With the written file in place, nothing is left to do.
    ok(&run_in(&ff, &["plan", "-detailed-exitcode"]));

    let Some(terraform) = Terraform::find("generate-config-out") else {
        return;
    };
    std::fs::create_dir_all(&tf).unwrap();
    std::fs::write(tf.join("main.tf"), import_config(&stores.1, &id)).unwrap();
    let theirs = terraform.run(
        &tf,
        &["plan", "-generate-config-out=gen.tf", "-detailed-exitcode"],
        "",
    );
    assert_eq!(theirs.code, plan.code, "{}", theirs.all_output());
    assert_eq!(key_lines(&theirs.stdout), key_lines(&plan.stdout));
    let written = std::fs::read_to_string(tf.join("gen.tf")).unwrap();
    assert_eq!(
        generated_blocks(&written.replace("by Terraform", "by fleetform")),
        generated_blocks(&generated)
    );
    let refused = terraform.run(&tf, &["plan", "-generate-config-out=gen.tf"], "");
    assert_eq!(refused.code, again.code);
}

/// `fleetform refresh` shows what Terraform 1.11's `refresh` shows: a
/// "Refreshing state..." line for each object read, then the outputs; not
/// the refresh-only plan and "Apply complete!" of `apply -refresh-only`.
#[test]
fn refresh_shows_the_objects_read_and_the_outputs() {
    let tf = "resource \"null_resource\" \"a\" {\n  count = 2\n}\n\noutput \"ids\" {\n  value = null_resource.a[*].id\n}\n";
    let ours = tempfile::tempdir().unwrap();
    std::fs::write(ours.path().join("main.tf"), tf).unwrap();
    let applied = run_in(ours.path(), &["apply", "-auto-approve"]);
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    let refreshed = run_in(ours.path(), &["refresh"]);
    assert_eq!(refreshed.code, 0, "{}", refreshed.all_output());
    let lines: Vec<&str> = refreshed.stdout.lines().collect();
    assert!(
        lines[0].starts_with("null_resource.a[0]: Refreshing state... [id=")
            && lines[1].starts_with("null_resource.a[1]: Refreshing state... [id=")
            && lines[2..5] == ["", "Outputs:", ""],
        "{}",
        refreshed.stdout
    );
    for absent in ["Apply complete!", "No changes", "Plan:"] {
        assert!(!refreshed.stdout.contains(absent), "{}", refreshed.stdout);
    }
    // Same text as Terraform's, digits (ids) masked.
    let Some(terraform) = Terraform::find("refresh") else {
        return;
    };
    let theirs = tempfile::tempdir().unwrap();
    std::fs::write(theirs.path().join("main.tf"), tf).unwrap();
    let applied = terraform.run(theirs.path(), &["apply", "-auto-approve"], "");
    assert_eq!(applied.code, 0, "{}", applied.all_output());
    let expected = terraform.run(theirs.path(), &["refresh"], "");
    assert_eq!(expected.code, 0, "{}", expected.all_output());
    // Each run of digits (an id, of any length) becomes one #.
    let masked = |s: &str| -> String {
        let mut out = String::new();
        for c in s.chars() {
            if !c.is_ascii_digit() {
                out.push(c);
            } else if !out.ends_with('#') {
                out.push('#');
            }
        }
        out
    };
    assert_eq!(masked(&refreshed.stdout), masked(&expected.stdout));
}

/// A plan stopped by an error shows the changes it planned before it
/// ("planned the following actions, but then encountered a problem") and
/// then the error, as Terraform 1.11 does; the run fails, nothing is
/// applied, and an apply shows the same.
#[test]
fn a_failed_plan_shows_what_it_planned_before_the_error() {
    let main_tf = r#"
resource "terraform_data" "ok" {
  input = "fine"
}

resource "terraform_data" "bad" {
  input = "x"
  lifecycle {
    precondition {
      condition     = terraform_data.ok.input == "nope"
      error_message = "It fails."
    }
  }
}
"#;
    let (_tmp, ff, tf) = dirs(main_tf);
    let ours = run_in(&ff, &["plan", "-no-color"]);
    assert_eq!(ours.code, 1, "{}", ours.all_output());
    let expected = "
fleetform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  + create

fleetform planned the following actions, but then encountered a problem:

  # terraform_data.ok will be created
  + resource \"terraform_data\" \"ok\" {
      + id     = (known after apply)
      + input  = \"fine\"
      + output = (known after apply)
    }

Plan: 1 to add, 0 to change, 0 to destroy.
";
    assert_eq!(ours.stdout, expected);
    assert!(
        ours.stderr.contains("Error: Resource precondition failed"),
        "{}",
        ours.stderr
    );
    // Nothing was applied, and an apply shows the same before failing.
    let applied = run_in(&ff, &["apply", "-auto-approve", "-no-color"]);
    assert_eq!(applied.code, 1, "{}", applied.all_output());
    assert!(
        applied
            .stdout
            .contains("fleetform planned the following actions, but then encountered a problem:"),
        "{}",
        applied.stdout
    );
    assert!(
        !applied.stdout.contains("Creating..."),
        "{}",
        applied.stdout
    );
    let listed = run_in(&ff, &["state", "list"]);
    assert_eq!(listed.stdout, "", "{}", listed.all_output());
    // Only the built-in provider: no development overrides to print.
    let Some(terraform) =
        fleetform_tests::terraform::Terraform::find("a failed plan's partial plan", &[])
    else {
        return;
    };
    ok(&terraform.run_plain(&tf, &["init"], ""));
    let theirs = terraform.run_plain(&tf, &["plan"], "");
    assert_eq!(theirs.code, 1, "{}", theirs.all_output());
    assert_eq!(
        fleetform_tests::texts::comparable(&ours.stdout),
        fleetform_tests::texts::comparable(&theirs.stdout),
        "terraform printed:\n{}",
        theirs.stdout
    );
}
