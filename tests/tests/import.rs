//! Importing existing objects: `import` blocks while planning, and the
//! `import` command, through the real CLI and the sim provider.

use fleetform_tests::{run_in as run, sim_objects};
use std::path::Path;

/// A directory where workspace "origin" created the object; returns its id.
fn created_object(dir: &Path) -> String {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/import/main.tf");
    std::fs::copy(fixture, dir.join("main.tf")).unwrap();
    let r = run(dir, &["--workspace", "origin", "apply", "-auto-approve"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = run(
        dir,
        &["--workspace", "origin", "state", "show", "sim_object.a"],
    );
    let id = r
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("id"))
        .expect("id line");
    id.trim()
        .trim_start_matches('=')
        .trim()
        .trim_matches('"')
        .to_string()
}

#[test]
fn an_import_block_brings_an_existing_object_under_management() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let id = created_object(dir);
    let mut cfg = std::fs::read_to_string(dir.join("main.tf")).unwrap();
    cfg.push_str("\nimport {\n  to = sim_object.a\n  id = var.import_id\n}\n");
    std::fs::write(dir.join("main.tf"), cfg).unwrap();
    let var = format!("import_id={id}");

    let r = run(dir, &["--workspace", "adopter", "plan", "-var", &var]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("# sim_object.a will be imported"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."),
        "{}",
        r.stdout
    );

    let r = run(
        dir,
        &[
            "--workspace",
            "adopter",
            "apply",
            "-auto-approve",
            "-var",
            &var,
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let r = run(
        dir,
        &["--workspace", "adopter", "state", "show", "sim_object.a"],
    );
    assert!(
        r.stdout.contains(&id),
        "the imported object is in state: {}",
        r.stdout
    );
    assert_eq!(
        sim_objects(&dir.join(".fleetform/sim-store")),
        1,
        "importing creates nothing"
    );
    let r = run(
        dir,
        &[
            "--workspace",
            "adopter",
            "plan",
            "-detailed-exitcode",
            "-var",
            &var,
        ],
    );
    assert_eq!(
        r.code, 0,
        "after the import the block is a no-op:\n{}",
        r.stdout
    );
}

#[test]
fn importing_an_id_that_does_not_exist_fails_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    created_object(dir);
    let mut cfg = std::fs::read_to_string(dir.join("main.tf")).unwrap();
    cfg.push_str(
        "\nimport {\n  to = sim_object.a\n  id = \"00000000-0000-0000-0000-000000000000\"\n}\n",
    );
    std::fs::write(dir.join("main.tf"), cfg).unwrap();
    let r = run(dir, &["--workspace", "adopter", "apply", "-auto-approve"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("Cannot import non-existent")
            && !r.stderr.contains("Lost a planning task"),
        "{}",
        r.stderr
    );
    let r = run(dir, &["--workspace", "adopter", "state", "list"]);
    assert!(r.stdout.trim().is_empty(), "{}", r.stdout);
}

#[test]
fn the_import_command_imports_only_the_named_instance() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let id = created_object(dir);
    let r = run(
        dir,
        &["--workspace", "adopter", "import", "sim_object.a", &id],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Import successful!"), "{}", r.stdout);
    let r = run(dir, &["--workspace", "adopter", "state", "list"]);
    assert_eq!(r.stdout.trim(), "sim_object.a");
    let r = run(
        dir,
        &["--workspace", "adopter", "import", "sim_object.a", &id],
    );
    assert_eq!(r.code, 1, "importing twice is refused:\n{}", r.stdout);
    assert!(
        r.stderr.contains("Resource already managed by fleetform"),
        "{}",
        r.stderr
    );
}
