//! What the CLI prints for tools: plan files, `show -json`, `-json` UI
//! events, `graph`, and planning options refused before a run is submitted.

use serde_json::Value as Json;
use std::path::Path;

fn in_dir(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let r = fleetform_tests::run_in(dir, args);
    (r.code, r.stdout, r.stderr)
}

/// a <- b <- c: each null_resource's triggers reference the previous id.
fn chain(dir: &Path, v: &str) {
    let text = format!(
        r#"resource "null_resource" "a" {{
  triggers = {{ v = "{v}" }}
}}
resource "null_resource" "b" {{
  triggers = {{ a = null_resource.a.id }}
}}
resource "null_resource" "c" {{
  triggers = {{ b = null_resource.b.id }}
}}
output "c" {{
  value = null_resource.c.id
}}
"#
    );
    std::fs::write(dir.join("main.tf"), text).unwrap();
}

fn json_lines(out: &str) -> Vec<Json> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn change<'a>(plan: &'a Json, addr: &str) -> &'a Json {
    plan["resource_changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["address"] == addr)
        .unwrap_or_else(|| panic!("no change for {addr}: {plan}"))
}

#[test]
fn a_plan_file_is_shown_as_terraform_json_and_applied_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), "1");
    let (code, out, err) = in_dir(tmp.path(), &["plan", "-out=tf.plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Saved the plan to: tf.plan"), "{out}");
    assert!(out.contains("    fleetform apply \"tf.plan\""), "{out}");

    let (code, out, err) = in_dir(tmp.path(), &["show", "-json", "tf.plan"]);
    assert_eq!(code, 0, "{err}");
    let plan: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(plan["format_version"], "1.2");
    let b = change(&plan, "null_resource.b");
    assert_eq!(b["change"]["actions"], serde_json::json!(["create"]));
    assert_eq!(b["provider_name"], "registry.terraform.io/hashicorp/null");
    assert_eq!(
        b["change"]["after_unknown"],
        serde_json::json!({"id": true, "triggers": {"a": true}})
    );
    assert_eq!(b["change"]["after"], serde_json::json!({"triggers": {}}));

    let (code, out, err) = in_dir(tmp.path(), &["apply", "tf.plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("Apply complete! Resources: 3 added, 0 changed, 0 destroyed."),
        "{out}"
    );
    assert!(
        !out.contains("will be created"),
        "a saved plan is not shown again: {out}"
    );
    let (code, out, _) = in_dir(tmp.path(), &["show", "-json"]);
    assert_eq!(code, 0);
    let state: Json = serde_json::from_str(&out).unwrap();
    let resources = state["values"]["root_module"]["resources"]
        .as_array()
        .unwrap();
    assert_eq!(resources.len(), 3, "{state}");
    assert_eq!(
        resources[1]["depends_on"],
        serde_json::json!(["null_resource.a"])
    );
    assert_eq!(state["values"]["outputs"]["c"]["type"], "string");

    std::fs::write(tmp.path().join("not-a-plan"), "hello").unwrap();
    let (code, _, err) = in_dir(tmp.path(), &["apply", "not-a-plan"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("Failed to load \"not-a-plan\" as a plan file"),
        "{err}"
    );
}

#[test]
fn a_plan_made_before_another_apply_is_refused_as_stale() {
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), "1");
    let (code, out, err) = in_dir(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    chain(tmp.path(), "2");
    for file in ["first.plan", "second.plan"] {
        let out_flag = format!("-out={file}");
        let (code, out, err) = in_dir(tmp.path(), &["plan", &out_flag]);
        assert_eq!(code, 0, "{out}\n{err}");
    }
    let (code, out, err) = in_dir(tmp.path(), &["show", "-json", "first.plan"]);
    assert_eq!(code, 0, "{err}");
    let plan: Json = serde_json::from_str(&out).unwrap();
    let a = change(&plan, "null_resource.a");
    assert_eq!(
        a["change"]["actions"],
        serde_json::json!(["delete", "create"])
    );
    assert_eq!(a["action_reason"], "replace_because_cannot_update");
    assert_eq!(a["change"]["before"]["triggers"]["v"], "1");
    assert!(plan["prior_state"]["values"]["root_module"]["resources"].is_array());

    let (code, out, err) = in_dir(tmp.path(), &["apply", "first.plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, _, err) = in_dir(tmp.path(), &["apply", "second.plan"]);
    assert_eq!(code, 1);
    assert!(err.contains("Saved plan is stale"), "{err}");
}

#[test]
fn apply_json_streams_terraform_ui_messages_in_dependency_order() {
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), "1");
    let (code, out, err) = in_dir(tmp.path(), &["apply", "-json"]);
    assert_eq!(code, 1, "-json cannot ask for approval: {out}\n{err}");
    let lines = json_lines(&out);
    assert_eq!(lines[0]["type"], "version");
    assert_eq!(lines[1]["type"], "diagnostic");
    assert_eq!(
        lines[1]["diagnostic"]["summary"],
        "Plan file or auto-approve required"
    );

    let (code, out, err) = in_dir(tmp.path(), &["apply", "-json", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let lines = json_lines(&out);
    for l in &lines {
        assert_eq!(l["@module"], "terraform.ui", "{l}");
        for key in ["@level", "@message", "@timestamp", "type"] {
            assert!(l[key].is_string(), "{key} missing: {l}");
        }
    }
    assert_eq!(lines[0]["type"], "version");
    assert_eq!(lines[0]["ui"], "1.2");
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    let planned: Vec<&Json> = lines
        .iter()
        .filter(|l| l["type"] == "planned_change")
        .collect();
    assert_eq!(planned.len(), 3, "{kinds:?}");
    assert_eq!(planned[0]["change"]["action"], "create");
    assert_eq!(
        planned[0]["change"]["resource"]["resource_type"],
        "null_resource"
    );
    let hooks: Vec<String> = lines
        .iter()
        .filter(|l| l["type"] == "apply_start" || l["type"] == "apply_complete")
        .map(|l| {
            format!(
                "{} {}",
                l["type"].as_str().unwrap(),
                l["hook"]["resource"]["addr"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        hooks,
        [
            "apply_start null_resource.a",
            "apply_complete null_resource.a",
            "apply_start null_resource.b",
            "apply_complete null_resource.b",
            "apply_start null_resource.c",
            "apply_complete null_resource.c",
        ]
    );
    let done = lines
        .iter()
        .find(|l| l["type"] == "apply_complete")
        .unwrap();
    assert_eq!(done["hook"]["action"], "create");
    assert_eq!(done["hook"]["id_key"], "id");
    let summaries: Vec<&Json> = lines
        .iter()
        .filter(|l| l["type"] == "change_summary")
        .collect();
    assert_eq!(summaries.len(), 2, "the plan's and the apply's: {kinds:?}");
    assert_eq!(summaries[0]["changes"]["operation"], "plan");
    assert_eq!(summaries[1]["changes"]["operation"], "apply");
    assert_eq!(summaries[1]["changes"]["add"], 3);
    assert_eq!(
        summaries[1]["@message"],
        "Apply complete! Resources: 3 added, 0 changed, 0 destroyed."
    );
    let outputs = lines.last().unwrap();
    assert_eq!(outputs["type"], "outputs", "{kinds:?}");
    let c_id =
        &lines[kinds.iter().rposition(|k| *k == "apply_complete").unwrap()]["hook"]["id_value"];
    assert_eq!(&outputs["outputs"]["c"]["value"], c_id);
}

#[test]
fn conflicting_or_malformed_planning_options_are_refused_before_submitting() {
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), "1");
    let (code, _, err) = in_dir(
        tmp.path(),
        &[
            "plan",
            "-target=null_resource.a",
            "-exclude=null_resource.b",
        ],
    );
    assert_eq!(code, 1);
    assert!(err.contains("Invalid combination of arguments"), "{err}");
    assert!(
        err.contains("-target and -exclude cannot be used together"),
        "{err}"
    );
    assert!(
        !tmp.path().join(".fleetform").exists(),
        "refused before anything started"
    );
    let (code, out, _) = in_dir(
        tmp.path(),
        &["apply", "-json", "-auto-approve", "-replace=null_resource"],
    );
    assert_eq!(code, 1);
    let lines = json_lines(&out);
    assert_eq!(lines[1]["diagnostic"]["summary"], "Invalid replace address");
}

/// `graph -type=apply` without a plan draws Terraform's apply graph of no
/// changes (the configuration's, as -type=plan); with -plan=FILE, the
/// plan's operations too (compared with Terraform in graph_tf111.rs).
#[test]
fn graph_draws_the_apply_graph_of_a_plan_file() {
    let tmp = tempfile::tempdir().unwrap();
    chain(tmp.path(), "1");
    let (code, out, err) = in_dir(tmp.path(), &["graph", "-type=apply"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("digraph {"), "{out}");
    assert!(
        out.contains(
            "\"[root] null_resource.b (expand)\" -> \"[root] null_resource.a (expand)\"\n"
        ),
        "{out}"
    );
    let (code, plan, err) = in_dir(tmp.path(), &["graph", "-type=plan"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(plan, out, "no plan: the configuration's graph");
    let (code, _, _) = in_dir(tmp.path(), &["plan", "-out=tf.plan"]);
    assert_eq!(code, 0);
    let (code, from_file, err) = in_dir(tmp.path(), &["graph", "-plan=tf.plan"]);
    assert_eq!(code, 0, "{err}");
    // The creates, each after its resource's expansion, `b`'s expansion
    // after `a`'s create.
    for edge in [
        "\"[root] null_resource.a\" -> \"[root] null_resource.a (expand)\"\n",
        "\"[root] null_resource.b\" -> \"[root] null_resource.b (expand)\"\n",
        "\"[root] null_resource.b (expand)\" -> \"[root] null_resource.a\"\n",
    ] {
        assert!(from_file.contains(edge), "{edge}: {from_file}");
    }
    // -type=plan with the plan file draws the plan's configuration.
    let (code, plan_of_file, err) = in_dir(tmp.path(), &["graph", "-type=plan", "-plan=tf.plan"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(plan_of_file, plan);
    // No -type: Terraform's default, the resources only (tests/cli_tf111.rs).
    let (code, default, _) = in_dir(tmp.path(), &["graph"]);
    assert_eq!(code, 0);
    assert!(default.starts_with("digraph G {"), "{default}");
    assert!(
        default.contains("\"null_resource.b\" -> \"null_resource.a\";"),
        "{default}"
    );
    let (code, _, err) = in_dir(
        tmp.path(),
        &["graph", "-type=plan-destroy", "-plan=tf.plan"],
    );
    assert_eq!(code, 1, "-plan is never silently ignored");
    assert!(err.contains("Invalid combination of arguments"), "{err}");
    let (code, destroy, _) = in_dir(tmp.path(), &["graph", "-type=plan-destroy"]);
    assert_eq!(code, 0);
    assert!(
        destroy.contains("\"null_resource.a\" -> \"null_resource.b\";"),
        "{destroy}"
    );
}

/// `tests/fixtures/big_numbers`: numbers beyond i64 and f64 keep every digit
/// through HCL, the plan, the provider wire, state and every printout, and
/// compare equal after the round trip, so planning again changes nothing.
#[test]
fn big_numbers_keep_every_digit_end_to_end() {
    use fleetform_shared::json::Json;
    use fleetform_shared::value::Number;

    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/big_numbers/main.tf");
    std::fs::copy(fixture, tmp.path().join("main.tf")).unwrap();
    let big = "12345678901234567890123";
    let precise = "0.1000000000000000000001";

    let (code, out, err) = in_dir(tmp.path(), &["plan"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains(&format!("+ size = {big}")), "{out}");
    assert!(out.contains(&format!("+ size = -{precise}")), "{out}");

    let (code, out, err) = in_dir(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains(&format!("big = {big}\n")), "{out}");
    assert!(out.contains("carried = 100000000000000000000\n"), "{out}");

    for (name, want) in [
        ("big", big.to_string()),
        ("size", big.to_string()),
        ("precise", format!("-{precise}")),
        ("tag", precise.to_string()),
    ] {
        let (code, out, err) = in_dir(tmp.path(), &["output", "-raw", name]);
        assert_eq!((code, out.as_str()), (0, want.as_str()), "{name}: {err}");
    }
    let (code, out, _) = in_dir(tmp.path(), &["output", "-json"]);
    assert_eq!(code, 0);
    assert!(out.contains(&format!("\"value\": {big}\n")), "{out}");
    assert!(out.contains(&format!("\"value\": -{precise}\n")), "{out}");

    // The state as tools read it has the exact literals.
    let (code, out, _) = in_dir(tmp.path(), &["show", "-json"]);
    assert_eq!(code, 0);
    assert!(out.contains(&format!("\"size\":{big}")), "{out}");
    let state = Json::parse(out.as_bytes()).unwrap();
    let sizes: Vec<&Json> = state["values"]["root_module"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["values"]["size"])
        .collect();
    let exact = |t: &str| Json::Number(Number::parse(t).unwrap());
    assert_eq!(sizes, [&exact(big), &exact(&format!("-{precise}"))]);
    assert_eq!(
        state["values"]["outputs"]["carried"]["value"],
        exact("100000000000000000000")
    );

    // Read back from the provider, the numbers equal the configuration's.
    let (code, out, err) = in_dir(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(code, 0, "a second plan must be a no-op:\n{out}\n{err}");
    assert!(out.contains("No changes."), "{out}");
}
