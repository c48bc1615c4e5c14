//! Provider contracts end to end: the CLI in embedded mode against the sim
//! provider's `sim_misbehaving` resource (one test per misbehaviour) and its
//! `sim_object` data source. Each error must be Terraform's, name the
//! provider, the instance and the attribute, and leave state equal to what
//! really exists in the sim store.

use fleetform_tests::{CliRun as Run, run_in as run, sim_objects};
use std::path::{Path, PathBuf};

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/contracts")
        .join(path)
}

/// A working directory holding the given fixture files.
fn workdir(files: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for f in files {
        add(tmp.path(), f);
    }
    tmp
}

fn add(dir: &Path, file: &str) {
    let name = Path::new(file).file_name().unwrap();
    std::fs::copy(fixture(file), dir.join(name)).unwrap();
}

fn store(dir: &Path) -> PathBuf {
    dir.join(".fleetform/sim-store")
}

const ADDR: &str = "sim_misbehaving.m";
const PROVIDER: &str = "fleetform/sim";

/// Applies `sim_misbehaving.m` in `mode`, which must fail with `summary`.
fn failing_apply(mode: &str, summary: &str) -> (tempfile::TempDir, Run) {
    let tmp = workdir(&["misbehaving/main.tf"]);
    let var = format!("mode={mode}");
    let r = run(tmp.path(), &["apply", "-auto-approve", "-var", &var]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!("Error: {summary}")),
        "{}",
        r.stderr
    );
    (tmp, r)
}

/// The contract error names the provider, the instance and the attribute.
fn names_everything(err: &str, attr_ref: &str) {
    assert!(err.contains(PROVIDER), "{err}");
    assert!(err.contains(ADDR), "{err}");
    assert!(err.contains(attr_ref), "{err}");
}

fn state_list(dir: &Path) -> Vec<String> {
    let r = run(dir, &["state", "list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout.lines().map(str::to_string).collect()
}

/// The instance is recorded as tainted, the object exists, and the next
/// plan replaces it.
fn recorded_tainted(dir: &Path, mode: &str) {
    assert_eq!(state_list(dir), [ADDR]);
    assert_eq!(sim_objects(&store(dir)), 1, "the object really exists");
    let show = run(dir, &["state", "show", ADDR]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    assert!(show.stdout.contains("(tainted)"), "{}", show.stdout);
    let var = format!("mode={mode}");
    let plan = run(dir, &["plan", "-var", &var]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(
        plan.stdout
            .contains(&format!("# {ADDR} is tainted, so must be replaced")),
        "{}",
        plan.stdout
    );
}

/// Nothing was created and nothing is recorded.
fn nothing_recorded(dir: &Path) {
    assert!(state_list(dir).is_empty());
    assert_eq!(sim_objects(&store(dir)), 0);
}

#[test]
fn a_well_behaved_provider_applies_and_then_has_nothing_to_do() {
    let tmp = workdir(&["misbehaving/main.tf"]);
    let r = run(tmp.path(), &["apply", "-auto-approve", "-var", "mode=ok"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(state_list(tmp.path()), [ADDR]);
    assert_eq!(sim_objects(&store(tmp.path())), 1);
    let plan = run(
        tmp.path(),
        &["plan", "-detailed-exitcode", "-var", "mode=ok"],
    );
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
}

#[test]
fn a_plan_that_ignores_the_configuration_is_an_invalid_plan() {
    let (tmp, r) = failing_apply("plan_ignores_config", "Provider produced invalid plan");
    names_everything(&r.stderr, "sim_misbehaving.m.mode");
    assert!(
        r.stderr
            .contains("does not match config value \"plan_ignores_config\""),
        "{}",
        r.stderr
    );
    nothing_recorded(tmp.path());
}

#[test]
fn a_final_plan_that_changes_a_known_value_is_inconsistent() {
    let (tmp, r) = failing_apply(
        "final_plan_differs",
        "Provider produced inconsistent final plan",
    );
    names_everything(&r.stderr, "invalid new value for .value: was");
    nothing_recorded(tmp.path());
}

#[test]
fn an_apply_that_changes_a_known_value_is_inconsistent_and_taints() {
    let (tmp, r) = failing_apply(
        "apply_changes_known",
        "Provider produced inconsistent result after apply",
    );
    names_everything(&r.stderr, ".value: was \"planned\", but now \"applied\"");
    recorded_tainted(tmp.path(), "apply_changes_known");
}

#[test]
fn an_apply_that_leaves_a_value_unknown_is_invalid_and_taints() {
    let (tmp, r) = failing_apply(
        "apply_leaves_unknown",
        "Provider returned invalid result object after apply",
    );
    names_everything(&r.stderr, "unknown value for sim_misbehaving.m.value");
    recorded_tainted(tmp.path(), "apply_leaves_unknown");
    // Recorded as null, which `state show` leaves out as Terraform does;
    // the object is there (its mode is shown).
    let show = run(tmp.path(), &["state", "show", ADDR]);
    assert!(!show.stdout.contains("value"), "{}", show.stdout);
    assert!(
        show.stdout.contains("apply_leaves_unknown"),
        "{}",
        show.stdout
    );
}

#[test]
fn an_object_returned_with_an_error_is_recorded_tainted() {
    let (tmp, _) = failing_apply("apply_error_with_object", "Simulated partial failure");
    recorded_tainted(tmp.path(), "apply_error_with_object");
}

#[test]
fn a_failed_apply_without_an_object_records_nothing() {
    let (tmp, _) = failing_apply("apply_error", "Simulated failure");
    nothing_recorded(tmp.path());
}

#[test]
fn a_data_source_reads_an_object_created_by_an_earlier_apply() {
    let tmp = workdir(&["data_source/create.tf"]);
    let r = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    add(tmp.path(), "data_source/read.tf");
    let r = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let team = run(tmp.path(), &["output", "-raw", "team"]);
    // Trimmed: `-raw` output formatting is the CLI tests' concern.
    assert_eq!(team.stdout.trim_end(), "blue", "{}", team.stderr);
    let same = run(tmp.path(), &["output", "same_object"]);
    assert_eq!(same.stdout.trim(), "true", "{}", same.stderr);
    assert_eq!(
        sim_objects(&store(tmp.path())),
        1,
        "reading creates nothing"
    );
    let plan = run(tmp.path(), &["plan", "-detailed-exitcode"]);
    assert_eq!(
        plan.code, 0,
        "an unchanged read is no change: {}",
        plan.stdout
    );
}

#[test]
fn a_data_source_depending_on_a_pending_create_is_read_during_apply() {
    let tmp = workdir(&["data_source/create.tf", "data_source/deferred.tf"]);
    let r = run(tmp.path(), &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("# data.sim_object.later will be read during apply"),
        "{}",
        r.stdout
    );
    let team = run(tmp.path(), &["output", "-raw", "later_team"]);
    assert_eq!(team.stdout.trim_end(), "green", "{}", team.stderr);
}

#[test]
fn a_data_source_for_a_missing_object_fails() {
    let tmp = workdir(&["data_source/create.tf", "data_source/missing.tf"]);
    let r = run(tmp.path(), &["plan"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("Error: object not found"), "{}", r.stderr);
    assert!(r.stderr.contains("\"no-such-object\""), "{}", r.stderr);
}

/// docs/planning/destroying.md, "Deposed objects": with
/// create_before_destroy the old object is deposed; when its delete fails
/// it stays in state, and the next apply deletes it.
#[test]
fn a_deposed_object_whose_delete_failed_is_deleted_by_the_next_apply() {
    let tmp = workdir(&["deposed/main.tf"]);
    let dir = tmp.path();
    let r = run(
        dir,
        &["apply", "-auto-approve", "-var", "mode=delete_denied"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    std::fs::write(store(dir).join("deny-delete"), "").unwrap();

    let r = run(dir, &["apply", "-auto-approve", "-var", "mode=ok"]);
    assert_eq!(
        r.code, 1,
        "the deposed delete fails:\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(
        r.stdout.contains("+/- resource \"sim_misbehaving\" \"m\""),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("Simulated delete failure"),
        "{}",
        r.stderr
    );
    assert_eq!(
        sim_objects(&store(dir)),
        2,
        "new object created, old one still there"
    );

    let r = run(dir, &["plan", "-var", "mode=ok"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("# sim_misbehaving.m (deposed object "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("will be destroyed"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("Plan: 0 to add, 0 to change, 1 to destroy."),
        "{}",
        r.stdout
    );

    std::fs::remove_file(store(dir).join("deny-delete")).unwrap();
    let r = run(dir, &["apply", "-auto-approve", "-var", "mode=ok"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(sim_objects(&store(dir)), 1, "only the new object remains");
    let r = run(dir, &["plan", "-detailed-exitcode", "-var", "mode=ok"]);
    assert_eq!(r.code, 0, "nothing left to do:\n{}", r.stdout);
}

/// docs/planning/planning-behaviors.md, "Behaviors chosen by the provider":
/// a provider that answers with the prior value for an argument
/// (normalisation) makes the change a no-op.
#[test]
fn normalisation_by_the_provider_is_a_no_op() {
    let tmp = workdir(&["normalized/main.tf"]);
    let dir = tmp.path();
    let r = run(dir, &["apply", "-auto-approve", "-var", "note=Hello"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = run(dir, &["plan", "-detailed-exitcode", "-var", "note=HELLO"]);
    assert_eq!(
        r.code, 0,
        "a change of case only is normalised away:\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(r.stdout.contains("No changes."), "{}", r.stdout);
    let r = run(dir, &["plan", "-detailed-exitcode", "-var", "note=Goodbye"]);
    assert_eq!(r.code, 2, "a real change is still an update:\n{}", r.stdout);
    assert!(
        r.stdout
            .contains("# sim_misbehaving.m will be updated in-place"),
        "{}",
        r.stdout
    );
}

/// A provider advertising `plan_destroy` is asked before a destroy and may
/// refuse it (sim refuses objects tagged protected); nothing is destroyed.
#[test]
fn a_provider_with_plan_destroy_can_refuse_a_destroy() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cfg = |protected: &str| {
        format!(
            "terraform {{\n  required_providers {{\n    sim = {{ source = \"fleetform/sim\" }}\n  }}\n}}\nprovider \"sim\" {{\n  store_dir = \".fleetform/sim-store\"\n}}\nresource \"sim_object\" \"p\" {{\n  name = \"keep-me\"\n  tags = {{ protected = \"{protected}\" }}\n}}\n"
        )
    };
    std::fs::write(dir.join("main.tf"), cfg("true")).unwrap();
    let r = run(dir, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = run(dir, &["destroy", "-auto-approve"]);
    assert_eq!(
        r.code, 1,
        "the provider refuses:\n{}\n{}",
        r.stdout, r.stderr
    );
    assert!(r.stderr.contains("Object is protected"), "{}", r.stderr);
    assert_eq!(state_list(dir), ["sim_object.p"]);
    assert_eq!(sim_objects(&store(dir)), 1);
    std::fs::write(dir.join("main.tf"), cfg("false")).unwrap();
    let r = run(dir, &["apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = run(dir, &["destroy", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(sim_objects(&store(dir)), 0);
}
