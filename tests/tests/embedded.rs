//! The CLI in embedded mode (no servers), and how it treats bad input.

use fleetform_tests::sim_objects;
use std::path::Path;

fn in_dir(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let r = fleetform_tests::run_in(dir, args);
    (r.code, r.stdout, r.stderr)
}

fn write(dir: &Path, text: &str) {
    std::fs::write(dir.join("main.tf"), text).unwrap();
}

#[test]
fn quickstart_applies_and_destroys_in_embedded_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart/main.tf");
    std::fs::copy(src, tmp.path().join("main.tf")).unwrap();
    let (code, out, err) = in_dir(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Apply complete! Resources: 5 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    let store = tmp.path().join(".fleetform/sim-store");
    assert_eq!(sim_objects(&store), 4, "network + 3 servers");
    let (code, out, _) = in_dir(tmp.path(), &["state", "list"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 5, "{out}");
    let (code, out, _) = in_dir(tmp.path(), &["output", "-json"]);
    assert_eq!(code, 0);
    let outputs: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outputs["server_ids"]["value"].as_array().unwrap().len(), 3);
    let (code, _, _) = in_dir(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "nothing to do after apply");
    let (code, out, _) = in_dir(
        tmp.path(),
        &["plan", "-detailed-exitcode", "-var", "servers=4"],
    );
    assert_eq!(code, 2);
    assert!(
        out.contains("# sim_object.server[3] will be created"),
        "{out}"
    );
    let (code, out, err) = in_dir(tmp.path(), &["destroy", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(sim_objects(&store), 0);
}

#[test]
fn replacing_a_null_resource_when_its_triggers_change() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = |v: &str| {
        format!(
            "variable \"v\" {{\n  default = \"{v}\"\n}}\nresource \"null_resource\" \"a\" {{\n  triggers = {{\n    v = var.v\n  }}\n}}\n"
        )
    };
    write(tmp.path(), &cfg("one"));
    let (code, out, err) = in_dir(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    write(tmp.path(), &cfg("two"));
    let (code, out, _) = in_dir(tmp.path(), &["plan"]);
    assert_eq!(code, 0);
    assert!(out.contains("# null_resource.a must be replaced"), "{out}");
    assert!(out.contains("# forces replacement"), "{out}");
    assert!(
        out.contains("Plan: 1 to add, 0 to change, 1 to destroy."),
        "{out}"
    );
}

#[test]
fn bad_input_is_reported_with_its_location_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "resource \"null_resource\" \"a\" {\n  triggers = {\n    x = \"1\"\n  \n}\n",
    );
    let (code, _, err) = in_dir(tmp.path(), &["validate"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("main.tf line"),
        "syntax errors name the place: {err}"
    );

    write(
        tmp.path(),
        "resource \"null_resource\" \"a\" {\n  triggers = { b = null_resource.b.id }\n}\nresource \"null_resource\" \"b\" {\n  triggers = { a = null_resource.a.id }\n}\n",
    );
    let (code, _, err) = in_dir(tmp.path(), &["validate"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("Cycle: null_resource.a, null_resource.b"),
        "{err}"
    );

    write(
        tmp.path(),
        "resource \"null_resource\" \"a\" {\n  triggers = { b = null_resource.nope.id }\n}\n",
    );
    let (code, _, err) = in_dir(tmp.path(), &["plan"]);
    assert_eq!(code, 1);
    assert!(err.contains("Reference to undeclared resource"), "{err}");
    assert!(err.contains("on main.tf line 2"), "{err}");

    write(
        tmp.path(),
        "resource \"null_resource\" \"a\" {\n  trigers = {}\n}\n",
    );
    let (code, _, err) = in_dir(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 1);
    assert!(err.contains("Unsupported argument"), "{err}");
    assert!(err.contains("on main.tf line 2"), "{err}");
    let (_, list, _) = in_dir(tmp.path(), &["state", "list"]);
    assert!(
        list.trim().is_empty(),
        "a failed plan changes nothing: {list}"
    );
}

#[test]
fn a_killed_embedded_apply_is_finished_by_the_next_command() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = dir.join("sim-store");
    write(
        dir,
        &format!(
            r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir = "{store}"
}}

variable "latency_ms" {{
  type    = number
  default = 3000
}}

provider "sim" {{
  alias      = "slow"
  store_dir  = "{store}"
  latency_ms = var.latency_ms
}}

resource "sim_object" "fast" {{
  count = 3
  name  = "fast-${{count.index}}"
}}

# Likely in flight when the CLI dies (its provider dies with it, before
# creating); if it had not reached the provider yet, the resumed run
# creates it.
resource "sim_object" "slow" {{
  provider = sim.slow
  name     = "slow"
}}
"#,
            store = store.display()
        ),
    );
    let mut cli =
        fleetform_tests::BackgroundCli::start(dir, &["apply", "-auto-approve"], &[]).unwrap();
    for i in 0..3 {
        cli.wait_for(
            &format!("sim_object.fast[{i}]: Creation complete"),
            std::time::Duration::from_secs(60),
        )
        .unwrap();
    }
    cli.wait_for(
        "sim_object.slow: Creating...",
        std::time::Duration::from_secs(60),
    )
    .unwrap();
    cli.kill();

    // The next apply first finishes the run the killed one left (its
    // creates are recorded; the slow one, if it was in flight, is reported
    // interrupted, not repeated), then plans on what that run left.
    let (code, out, err) = in_dir(dir, &["apply", "-auto-approve", "-var", "latency_ms=0"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("which an earlier fleetform process left applying"),
        "{err}"
    );
    assert!(
        out.contains("Plan: 1 to add, 0 to change, 0 to destroy.") || out.contains("No changes."),
        "at most the slow object is left to create:\n{out}{err}"
    );
    let (code, out, err) = in_dir(dir, &["state", "list"]);
    assert_eq!(code, 0, "{out}{err}");
    let listed: Vec<&str> = out.lines().collect();
    assert_eq!(
        listed,
        [
            "sim_object.fast[0]",
            "sim_object.fast[1]",
            "sim_object.fast[2]",
            "sim_object.slow"
        ],
        "{out}{err}"
    );
    assert_eq!(sim_objects(&store), 4, "nothing was created twice");
}

#[test]
fn reading_the_state_works_while_another_command_applies_in_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = dir.join("sim-store");
    let config = |latency: u32, count: u32| {
        format!(
            r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

provider "sim" {{
  store_dir  = "{store}"
  latency_ms = {latency}
}}

resource "sim_object" "x" {{
  count = {count}
  name  = "x-${{count.index}}"
}}

output "names" {{
  value = sim_object.x[*].name
}}
"#,
            store = store.display()
        )
    };
    write(dir, &config(0, 1));
    let (code, out, err) = in_dir(dir, &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}{err}");

    write(dir, &config(3000, 2));
    let mut cli =
        fleetform_tests::BackgroundCli::start(dir, &["apply", "-auto-approve"], &[]).unwrap();
    cli.wait_for(
        "sim_object.x[1]: Creating...",
        std::time::Duration::from_secs(60),
    )
    .unwrap();
    // The state as the last finished run left it.
    let (code, out, err) = in_dir(dir, &["state", "list"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.trim(), "sim_object.x[0]", "{out}{err}");
    let (code, out, err) = in_dir(dir, &["output", "-json", "names"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.trim(), r#"["x-0"]"#);
    // A command that would change it is refused, saying why.
    let (code, out, err) = in_dir(dir, &["plan"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("Error acquiring the state lock"), "{err}");
    assert!(
        err.contains("Another fleetform process is running"),
        "{err}"
    );
    assert!(
        err.contains("Operation: apply"),
        "the holder is named:\n{err}"
    );
    let (code, out) = cli.finish(std::time::Duration::from_secs(60)).unwrap();
    assert_eq!(code, 0, "{out}");
}

#[test]
fn lock_false_is_said_to_be_ignored_rather_than_silently_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "resource \"null_resource\" \"a\" {}\n");
    let (code, out, err) = in_dir(tmp.path(), &["plan", "-lock=false"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("-lock=false is ignored"), "{err}");
}

/// A data source whose read waits for apply (its argument is a new
/// object's id) is read before the resource that uses its result is
/// created, as in Terraform; before, the plan recorded only the managed
/// resource behind the data source, and the resource was created first
/// and failed ("Attempt to get attribute from null value").
#[test]
fn a_read_deferred_to_apply_comes_before_what_uses_its_result() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        r#"
resource "null_resource" "a" {}

data "null_data_source" "later" {
  inputs = { a = null_resource.a.id }
}

resource "null_resource" "b" {
  triggers = { l = data.null_data_source.later.outputs["a"] }
}
"#,
    );
    let (code, out, err) = in_dir(dir.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let at = |line: &str| {
        out.find(line)
            .unwrap_or_else(|| panic!("no {line:?} in\n{out}"))
    };
    assert!(
        at("null_resource.a: Creation complete") < at("data.null_data_source.later: Reading...")
    );
    assert!(at("data.null_data_source.later: Read complete") < at("null_resource.b: Creating..."));
    // With the read object's id, as Terraform prints it.
    assert!(
        out.contains("data.null_data_source.later: Read complete after 0s [id=static]"),
        "{out}"
    );
    // The state says what b depends on, the data source included, as
    // Terraform's does.
    let (code, state, err) = in_dir(dir.path(), &["state", "pull"]);
    assert_eq!(code, 0, "{err}");
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    let b = state["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "b")
        .unwrap();
    let deps = b["instances"][0]["dependencies"].as_array().unwrap();
    assert!(
        deps.contains(&serde_json::json!("data.null_data_source.later")),
        "{deps:?}"
    );
    assert!(
        deps.contains(&serde_json::json!("null_resource.a")),
        "{deps:?}"
    );
}
