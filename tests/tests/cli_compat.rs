//! Terraform's command line as a Terraform user types it, in embedded mode:
//! `version`, `refresh`, a positional DIR, `-parallelism`,
//! `-compact-warnings`, and the state-file flags fleetform refuses.

use fleetform_tests::{run_in, sim_config, sim_objects};
use std::path::Path;

const SIX: &str = r#"
resource "sim_object" "s" {
  count = 6
  name  = "s-${count.index}"
}
"#;

fn store_var(dir: &Path) -> String {
    format!("store={}", dir.join("sim-store").display())
}

#[test]
fn version_prints_the_platform_and_the_lock_files_providers() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join(".terraform.lock.hcl"),
        "provider \"registry.terraform.io/hashicorp/null\" {\n  version = \"3.2.1\"\n  hashes = [\"h1:x=\"]\n}\n",
    )
    .unwrap();
    let out = run_in(tmp.path(), &["version"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let first = out.stdout.lines().next().unwrap();
    assert!(first.starts_with("fleetform v"), "{}", out.stdout);
    assert!(out.stdout.contains("\non linux_"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("+ provider registry.terraform.io/hashicorp/null v3.2.1"),
        "{}",
        out.stdout
    );
    let out = run_in(tmp.path(), &["version", "-json"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(doc["fleetform_version"].is_string(), "{doc}");
    assert!(doc["platform"].as_str().unwrap().starts_with("linux_"));
    assert_eq!(
        doc["provider_selections"]["registry.terraform.io/hashicorp/null"],
        "3.2.1"
    );
}

/// `fleetform plan DIR` is `fleetform -chdir=DIR plan`: the state and
/// .fleetform/ are DIR's, never the working directory's.
#[test]
fn a_positional_dir_means_chdir_for_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let config = sim_config(tmp.path(), "live", SIX);
    let var = store_var(tmp.path());
    let out = run_in(
        tmp.path(),
        &["apply", "-auto-approve", "-var", &var, "live"],
    );
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(config.join(".fleetform").is_dir());
    assert!(!tmp.path().join(".fleetform").exists());
    // The state is DIR's: from inside DIR nothing is left to do.
    let out = run_in(&config, &["plan", "-detailed-exitcode", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let out = run_in(tmp.path(), &["validate", "live"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(!tmp.path().join(".fleetform").exists());
}

#[test]
fn refresh_records_an_object_deleted_outside_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let config = sim_config(tmp.path(), "c", SIX);
    let var = store_var(tmp.path());
    let out = run_in(&config, &["apply", "-auto-approve", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let store = tmp.path().join("sim-store");
    let victim = std::fs::read_dir(&store)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "json"))
        .unwrap()
        .path();
    std::fs::remove_file(victim).unwrap();
    let out = run_in(&config, &["refresh", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let listed = run_in(&config, &["state", "list"]);
    assert_eq!(listed.stdout.lines().count(), 5, "{}", listed.all_output());
    // Nothing was created again.
    assert_eq!(sim_objects(&store), 5);
}

/// The most operations in flight at once, read from the order of the
/// "Creating..." and "Creation complete" lines.
fn most_in_flight(out: &str) -> usize {
    let (mut now, mut most) = (0usize, 0usize);
    for line in out.lines() {
        if line.contains(": Creating...") {
            now += 1;
            most = most.max(now);
        } else if line.contains(": Creation complete") {
            now -= 1;
        }
    }
    most
}

#[test]
fn parallelism_limits_the_operations_in_flight() {
    let tmp = tempfile::tempdir().unwrap();
    let var = store_var(tmp.path());
    let config = sim_config(tmp.path(), "limited", SIX);
    let out = run_in(
        &config,
        &[
            "apply",
            "-auto-approve",
            "-parallelism=2",
            "-var",
            &var,
            "-var",
            "latency_ms=300",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stdout.contains("6 added"), "{}", out.stdout);
    assert_eq!(most_in_flight(&out.stdout), 2, "{}", out.stdout);
    // Without it, all six go at once.
    let var = format!("store={}", tmp.path().join("other-store").display());
    let config = sim_config(tmp.path(), "free", SIX);
    let out = run_in(
        &config,
        &[
            "apply",
            "-auto-approve",
            "-var",
            &var,
            "-var",
            "latency_ms=300",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert_eq!(most_in_flight(&out.stdout), 6, "{}", out.stdout);
    let out = run_in(&config, &["plan", "-parallelism=2", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(
        out.stderr.contains("a plan is not limited by it"),
        "{}",
        out.stderr
    );
    let out = run_in(&config, &["plan", "-parallelism=0", "-var", &var]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("-parallelism"), "{}", out.stderr);
}

#[test]
fn compact_warnings_print_one_line_each() {
    let tmp = tempfile::tempdir().unwrap();
    let config = sim_config(tmp.path(), "c", SIX);
    std::fs::write(config.join("terraform.tfvars"), "not_declared = 1\n").unwrap();
    let var = store_var(tmp.path());
    let full = run_in(&config, &["plan", "-var", &var]);
    assert_eq!(full.code, 0, "{}", full.all_output());
    assert!(full.stdout.contains("╷"), "{}", full.stdout);
    let compact = run_in(&config, &["plan", "-compact-warnings", "-var", &var]);
    assert_eq!(compact.code, 0, "{}", compact.all_output());
    let line = compact
        .stdout
        .lines()
        .find(|l| l.starts_with("Warning: "))
        .unwrap_or_else(|| panic!("{}", compact.stdout));
    assert_eq!(
        line, "Warning: Value for undeclared variable",
        "{}",
        compact.stdout
    );
    assert!(!compact.stdout.contains("╷"), "{}", compact.stdout);
    assert!(
        !compact.stdout.contains("add a \"variable\" block"),
        "{}",
        compact.stdout
    );
}

#[test]
fn state_file_flags_are_refused_with_what_to_use_instead() {
    let tmp = tempfile::tempdir().unwrap();
    let config = sim_config(tmp.path(), "c", SIX);
    let var = store_var(tmp.path());
    for flag in ["-state=old.tfstate", "-state-out=new.tfstate", "-backup=b"] {
        let out = run_in(&config, &["apply", "-auto-approve", flag, "-var", &var]);
        assert_eq!(out.code, 1, "{flag}: {}", out.all_output());
        assert!(out.stderr.contains("is not supported"), "{}", out.stderr);
        assert!(out.stderr.contains("state push"), "{}", out.stderr);
        assert_eq!(sim_objects(&tmp.path().join("sim-store")), 0);
    }
    assert!(!config.join(".fleetform").exists());
}

/// A directory Terraform managed: fleetform never plans against an empty
/// state of its own while the Terraform state holds objects, and
/// `init -migrate-state` takes it over. (The state file here is written by
/// `state pull`, Terraform's format; the side-by-side test pushes one
/// Terraform itself wrote.)
#[test]
fn a_terraform_state_is_never_ignored_and_init_migrate_state_takes_it_over() {
    let tmp = tempfile::tempdir().unwrap();
    let var = store_var(tmp.path());
    let first = sim_config(tmp.path(), "first", SIX);
    let out = run_in(&first, &["apply", "-auto-approve", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let pulled = run_in(&first, &["state", "pull"]);
    assert_eq!(pulled.code, 0, "{}", pulled.all_output());

    for (name, backend, file) in [
        ("plain", "", "terraform.tfstate"),
        (
            "local-backend",
            "terraform {\n  backend \"local\" {\n    path = \"states/main.tfstate\"\n  }\n}\n",
            "states/main.tfstate",
        ),
    ] {
        let dir = sim_config(tmp.path(), name, &format!("{backend}{SIX}"));
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &pulled.stdout).unwrap();
        for args in [
            vec!["plan", "-var", &var],
            vec!["apply", "-auto-approve", "-var", &var],
        ] {
            let out = run_in(&dir, &args);
            assert_eq!(out.code, 1, "{name}: {}", out.all_output());
            assert!(
                out.stderr.contains("A Terraform state is present"),
                "{name}: {}",
                out.stderr
            );
            assert!(out.stderr.contains(file), "{name}: {}", out.stderr);
            assert!(
                out.stderr.contains("6 resource instance(s)"),
                "{}",
                out.stderr
            );
            assert!(
                out.stderr.contains("fleetform init -migrate-state"),
                "{}",
                out.stderr
            );
        }
        assert_eq!(
            sim_objects(&tmp.path().join("sim-store")),
            6,
            "nothing created"
        );
        let init = run_in(&dir, &["init"]);
        assert_eq!(init.code, 0, "{}", init.all_output());
        assert!(
            init.stdout.contains("init -migrate-state"),
            "{}",
            init.stdout
        );
        let init = run_in(&dir, &["init", "-migrate-state"]);
        assert_eq!(init.code, 0, "{}", init.all_output());
        assert!(
            init.stdout.contains("Pushed 6 resource instance(s)"),
            "{}",
            init.stdout
        );
        let plan = run_in(&dir, &["plan", "-detailed-exitcode", "-var", &var]);
        assert_eq!(plan.code, 0, "{name}: {}", plan.all_output());
        assert!(plan.stdout.contains("No changes."), "{}", plan.stdout);
    }
}

/// `SIX` applied in embedded mode under `dir`: its configuration directory
/// and its `-var` for the sim store.
fn six_applied(dir: &Path) -> (std::path::PathBuf, String) {
    let config = sim_config(dir, "c", SIX);
    let var = store_var(dir);
    let out = run_in(&config, &["apply", "-auto-approve", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    (config, var)
}

/// Adds `sim_object.t` to the configuration and applies it.
fn add_t(config: &Path, var: &str) -> fleetform_tests::CliRun {
    std::fs::write(
        config.join("two.tf"),
        "resource \"sim_object\" \"t\" {\n  name = \"t\"\n}\n",
    )
    .unwrap();
    let out = run_in(config, &["apply", "-auto-approve", "-var", var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    out
}

/// A process killed between writing a snapshot and moving the state's head
/// leaves a snapshot nothing references (here: the next serial's object,
/// written by hand). The next apply replaces it and goes on; before, every
/// later write of that serial failed as a concurrent change.
#[test]
fn a_snapshot_left_uncommitted_by_a_killed_process_does_not_block_the_next_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let (config, var) = six_applied(tmp.path());
    let states = config.join(".fleetform/state/default/states");
    let first = states.join("00000000000000000001");
    assert!(first.exists(), "serial 1 is where this test expects it");
    let left = states.join("00000000000000000002");
    std::fs::copy(&first, &left).unwrap();

    let out = add_t(&config, &var);
    assert!(out.stdout.contains("1 added"), "{}", out.stdout);
    let list = run_in(&config, &["state", "list"]);
    assert_eq!(list.stdout.lines().count(), 7, "{}", list.all_output());
    let history = run_in(&config, &["state", "history"]);
    assert_eq!(history.code, 0, "{}", history.all_output());
    let serials: Vec<&str> = history
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(serials, ["1", "2"], "{}", history.stdout);
    let plan = run_in(&config, &["plan", "-detailed-exitcode", "-var", &var]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());
    assert_eq!(sim_objects(&tmp.path().join("sim-store")), 7);
}

/// A broken .fleetform/: an unreadable local database is moved aside and
/// rebuilt (it is only caches and the journal), with a warning; an
/// unreadable snapshot is never written over, and the message names the
/// last good serial and how to restore it, which then works.
#[test]
fn bad_local_state_gets_help_and_is_never_written_over() {
    let tmp = tempfile::tempdir().unwrap();
    let (config, var) = six_applied(tmp.path());
    add_t(&config, &var);

    // The database: garbage in place of it.
    let db = config.join(".fleetform/coordinator.redb");
    std::fs::write(&db, "not a database").unwrap();
    let out = run_in(&config, &["plan", "-detailed-exitcode", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stderr.contains("could not be read"), "{}", out.stderr);
    assert!(
        out.stderr.contains("the state itself is untouched"),
        "{}",
        out.stderr
    );
    let aside = std::fs::read_dir(config.join(".fleetform"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".unreadable-"))
        .count();
    assert_eq!(aside, 1);

    // The latest snapshot (serial 2): garbage, with the cache gone too.
    let snap = config.join(".fleetform/state/default/states/00000000000000000002");
    std::fs::write(&snap, "garbage").unwrap();
    std::fs::remove_file(&db).unwrap();
    for args in [
        vec!["plan", "-var", &var],
        vec!["apply", "-auto-approve", "-var", &var],
    ] {
        let out = run_in(&config, &args);
        assert_eq!(out.code, 1, "{}", out.all_output());
        assert!(out.stderr.contains("(serial 2,"), "{}", out.stderr);
        assert!(
            out.stderr
                .contains("state pull -serial=1 > restore.tfstate"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("state push -force restore.tfstate"),
            "{}",
            out.stderr
        );
    }
    assert_eq!(
        std::fs::read(&snap).unwrap(),
        b"garbage",
        "never written over"
    );
    let out = run_in(&config, &["state", "list"]);
    assert_eq!(out.code, 1);
    assert!(!out.stderr.contains("code:"), "{}", out.stderr);

    // Restoring as told.
    let pulled = run_in(&config, &["state", "pull", "-serial=1"]);
    assert_eq!(pulled.code, 0, "{}", pulled.all_output());
    std::fs::write(config.join("restore.tfstate"), &pulled.stdout).unwrap();
    let out = run_in(&config, &["state", "push", "-force", "restore.tfstate"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stdout.contains("(serial 3)"), "{}", out.stdout);
    assert_eq!(
        std::fs::read(&snap).unwrap(),
        b"garbage",
        "kept in the history"
    );
    // Serial 1 had the six; `t` came later and is planned again (the sim
    // store still has it, as a real cloud would: import brings it back).
    let out = run_in(&config, &["state", "list"]);
    assert_eq!(out.stdout.lines().count(), 6, "{}", out.all_output());
    let out = run_in(&config, &["plan", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(
        out.stdout.contains("sim_object.t will be created"),
        "{}",
        out.stdout
    );
}

/// A create of 11.5 seconds says it goes on at 10 seconds, as Terraform's
/// does, in the human output and in `-json`'s `apply_progress`.
#[test]
fn a_long_create_says_still_creating_every_ten_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let one = "resource \"sim_object\" \"slow\" {\n  name = \"slow\"\n}\n";
    let config = sim_config(tmp.path(), "c", one);
    let var = store_var(tmp.path());
    let out = run_in(
        &config,
        &[
            "apply",
            "-auto-approve",
            "-var",
            &var,
            "-var",
            "latency_ms=11500",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.all_output());
    let lines: Vec<&str> = out.stdout.lines().collect();
    let still = lines
        .iter()
        .position(|l| *l == "sim_object.slow: Still creating... [10s elapsed]")
        .unwrap_or_else(|| panic!("{}", out.stdout));
    let started = lines
        .iter()
        .position(|l| l.ends_with(": Creating..."))
        .unwrap();
    let done = lines
        .iter()
        .position(|l| l.contains("Creation complete"))
        .unwrap();
    assert!(started < still && still < done, "{}", out.stdout);
    let out = run_in(
        &config,
        &[
            "destroy",
            "-auto-approve",
            "-json",
            "-var",
            &var,
            "-var",
            "latency_ms=11500",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.all_output());
    let progress: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["type"] == "apply_progress")
        .collect();
    assert_eq!(progress.len(), 1, "{}", out.stdout);
    assert_eq!(progress[0]["hook"]["action"], "delete");
    assert_eq!(progress[0]["hook"]["elapsed_seconds"], 10);
}

/// `state mv` after a rename in the configuration: nothing to do;
/// `state rm`: the object is forgotten (and planned again); both with
/// `-dry-run` first; `state replace-provider` there and back.
#[test]
fn state_mv_rm_and_replace_provider_edit_the_state_as_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    let config = sim_config(tmp.path(), "c", SIX);
    let var = store_var(tmp.path());
    let out = run_in(&config, &["apply", "-auto-approve", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let main = config.join("main.tf");
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(
        &main,
        text.replace("\"sim_object\" \"s\"", "\"sim_object\" \"r\""),
    )
    .unwrap();

    let dry = run_in(
        &config,
        &["state", "mv", "-dry-run", "sim_object.s", "sim_object.r"],
    );
    assert_eq!(dry.code, 0, "{}", dry.all_output());
    assert_eq!(
        dry.stdout.trim(),
        "Would move \"sim_object.s\" to \"sim_object.r\""
    );
    let listed = run_in(&config, &["state", "list"]);
    assert!(
        listed.stdout.contains("sim_object.s[0]"),
        "{}",
        listed.stdout
    );

    let out = run_in(&config, &["state", "mv", "sim_object.s", "sim_object.r"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(
        out.stdout.contains("Successfully moved 6 object(s)."),
        "{}",
        out.stdout
    );
    let plan = run_in(&config, &["plan", "-detailed-exitcode", "-var", &var]);
    assert_eq!(plan.code, 0, "{}", plan.all_output());

    let bad = run_in(
        &config,
        &["state", "mv", "sim_object.r[0]", "sim_object.r[1]"],
    );
    assert_eq!(bad.code, 1, "{}", bad.all_output());
    assert!(
        bad.stderr.contains("already a resource instance"),
        "{}",
        bad.stderr
    );
    assert!(bad.stderr.contains("Nothing was changed"), "{}", bad.stderr);

    let out = run_in(&config, &["state", "rm", "-dry-run", "sim_object.r[5]"]);
    assert_eq!(
        out.stdout.trim(),
        "Would remove sim_object.r[5]",
        "{}",
        out.all_output()
    );
    let out = run_in(&config, &["state", "rm", "sim_object.r[5]"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(
        out.stdout
            .contains("Removed sim_object.r[5]\nSuccessfully removed 1 resource instance(s)."),
        "{}",
        out.stdout
    );
    let plan = run_in(&config, &["plan", "-var", &var]);
    assert!(
        plan.stdout.contains("sim_object.r[5] will be created"),
        "{}",
        plan.stdout
    );
    assert_eq!(
        sim_objects(&tmp.path().join("sim-store")),
        6,
        "forgotten, not deleted"
    );

    let there = run_in(
        &config,
        &[
            "state",
            "replace-provider",
            "-auto-approve",
            "fleetform/sim",
            "example.com/acme/sim",
        ],
    );
    assert_eq!(there.code, 0, "{}", there.all_output());
    assert!(
        there
            .stdout
            .contains("Successfully replaced provider for 5 resource instance(s)."),
        "{}",
        there.stdout
    );
    let shown = run_in(&config, &["show", "-json"]);
    assert!(
        shown
            .stdout
            .contains("\"provider_name\":\"example.com/acme/sim\""),
        "{}",
        shown.all_output()
    );
    // A state file needs the objects' schemas, which a provider that is
    // nowhere to be installed cannot give: refused, naming the object.
    let pulled = run_in(&config, &["state", "pull"]);
    assert_eq!(pulled.code, 1, "{}", pulled.all_output());
    assert!(
        pulled
            .stderr
            .contains("sim_object.r[0]: the schema of resource type \"sim_object\""),
        "{}",
        pulled.stderr
    );
    let back = run_in(
        &config,
        &[
            "state",
            "replace-provider",
            "-auto-approve",
            "example.com/acme/sim",
            "fleetform/sim",
        ],
    );
    assert_eq!(back.code, 0, "{}", back.all_output());
    let history = run_in(&config, &["state", "history"]);
    for op in ["state mv", "state rm", "state replace-provider"] {
        assert!(history.stdout.contains(op), "{op}: {}", history.stdout);
    }
}

/// `validate` checks blocks against the providers' schemas (the issue's
/// cases: a local_file without filename, `length = "abc"`), with the
/// location, and `-json` prints Terraform's validate document.
#[test]
fn validate_checks_provider_schemas_and_speaks_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("main.tf"),
        r#"resource "local_file" "f" {
  content = "x"
}

resource "random_string" "s" {
  length = "abc"
}

resource "random_string" "ok" {
  count  = 2
  length = var.n + count.index
}

variable "n" {
  type = number
}
"#,
    )
    .unwrap();
    let out = run_in(dir, &["validate"]);
    assert_eq!(out.code, 1, "{}", out.all_output());
    assert!(
        out.stderr.contains("Missing required argument"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("\"filename\" is required"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("Incorrect attribute value type"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("on main.tf line 6"), "{}", out.stderr);
    assert!(!out.stdout.contains("Success"), "{}", out.stdout);
    assert!(
        !dir.join(".fleetform").exists(),
        "validate touches no state"
    );

    let out = run_in(dir, &["validate", "-json"]);
    assert_eq!(out.code, 1, "{}", out.all_output());
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["format_version"], "1.0");
    assert_eq!(doc["valid"], false);
    assert_eq!(doc["error_count"], 2, "{doc:#}");
    assert_eq!(doc["warning_count"], 0);
    let typed = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["summary"] == "Incorrect attribute value type")
        .unwrap();
    assert_eq!(typed["severity"], "error");
    assert_eq!(typed["range"]["filename"], "main.tf");
    assert_eq!(typed["range"]["start"]["line"], 6);

    // Fixed: valid, in both forms.
    let text = std::fs::read_to_string(dir.join("main.tf")).unwrap();
    let fixed = text
        .replace(
            "content = \"x\"",
            "content  = \"x\"\n  filename = \"out.txt\"",
        )
        .replace("length = \"abc\"", "length = 12");
    std::fs::write(dir.join("main.tf"), fixed).unwrap();
    let out = run_in(dir, &["validate"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stdout.contains("Success! The configuration is valid."));
    let out = run_in(dir, &["validate", "-json"]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["valid"], true, "{doc:#}");
    assert_eq!(doc["error_count"], 0);
}

/// Required variables nothing sets are asked for on a terminal, in
/// Terraform's words and order; -input=false (or no terminal) never asks.
/// `apply` says "Apply complete!" also when nothing changed, and shows the
/// outputs after it. The terminal is a pseudo-terminal made by `script`.
#[test]
fn required_variables_are_asked_for_on_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("main.tf"),
        r#"variable "who" {
  type        = string
  description = "Whom to greet"
}

variable "n" {
  type = number
}

output "greeting" {
  value = "hello ${var.who} x${var.n}"
}
"#,
    )
    .unwrap();
    let Some(first) = fleetform_tests::on_terminal(dir, "", "apply -auto-approve", "3\nworld\n")
    else {
        eprintln!("SKIP: no `script` command to make a terminal");
        return;
    };
    let (code, out) = first;
    assert_eq!(code, 0, "{out}");
    let n = out
        .find("var.n\n  Enter a value:")
        .unwrap_or_else(|| panic!("{out}"));
    let who = out
        .find("var.who\n  Whom to greet\n\n  Enter a value:")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(n < who, "alphabetical, as Terraform asks: {out}");
    let complete = out.find("Apply complete!").unwrap();
    let outputs = out.find("\ngreeting = \"hello world x3\"").unwrap();
    assert!(complete < outputs, "outputs after the summary: {out}");

    // Nothing changed: still "Apply complete!", and the outputs.
    let again = run_in(
        dir,
        &["apply", "-auto-approve", "-var", "n=3", "-var", "who=world"],
    );
    assert_eq!(again.code, 0, "{}", again.all_output());
    assert!(again.stdout.contains("No changes."), "{}", again.stdout);
    assert!(
        again
            .stdout
            .contains("Apply complete! Resources: 0 added, 0 changed, 0 destroyed.\n\nOutputs:\n\ngreeting = \"hello world x3\""),
        "{}",
        again.stdout
    );

    // -input=false on a terminal, and no terminal at all: no question.
    let (code, out) =
        fleetform_tests::on_terminal(dir, "", "plan -input=false", "").expect("script");
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("Enter a value"), "{out}");
    assert!(out.contains("No value for required variable"), "{out}");
    let plain = run_in(dir, &["plan"]);
    assert_eq!(plain.code, 1);
    assert!(!plain.stdout.contains("Enter a value"), "{}", plain.stdout);
}

/// At fleet scale on a terminal: a live summary instead of a line per
/// instance, whose lines go to the log file it names; without a terminal
/// (or with -json) the lines are printed as always.
#[test]
fn a_large_apply_on_a_terminal_shows_a_live_summary_and_logs_the_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let many =
        "resource \"sim_object\" \"s\" {\n  count = 400\n  name  = \"s-${count.index}\"\n}\n";
    let config = sim_config(tmp.path(), "c", many);
    let var = store_var(tmp.path());
    let args = format!("apply -auto-approve -var {var}");
    let Some((code, text)) = fleetform_tests::on_terminal(&config, "", &args, "") else {
        eprintln!("SKIP: no `script` command to make a terminal");
        return;
    };
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("400 operations: each instance's lines go to .fleetform/logs/apply-"),
        "{text}"
    );
    assert!(text.contains("400/400"), "{text}");
    assert!(text.contains("  errors: 0"), "{text}");
    assert!(!text.contains(": Creating..."), "{text}");
    assert!(
        text.contains("Apply complete! Resources: 400 added"),
        "{text}"
    );
    let logs: Vec<_> = std::fs::read_dir(config.join(".fleetform/logs"))
        .unwrap()
        .filter_map(Result::ok)
        .collect();
    assert_eq!(logs.len(), 1);
    let log = std::fs::read_to_string(logs[0].path()).unwrap();
    assert_eq!(
        log.lines().filter(|l| l.ends_with(": Creating...")).count(),
        400
    );
    assert_eq!(
        log.lines()
            .filter(|l| l.contains(": Creation complete after"))
            .count(),
        400
    );

    // A plan only shows what it would do, and an apply waiting for approval
    // shows its prompt: no summary, no log, in both.
    let args = format!("plan -destroy -var {var}");
    let (code, text) = fleetform_tests::on_terminal(&config, "", &args, "").unwrap();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("400 to destroy."), "{text}");
    assert!(!text.contains("each instance's lines go to"), "{text}");
    let args = format!("destroy -var {var}");
    let (_, text) = fleetform_tests::on_terminal(&config, "", &args, "no\n").unwrap();
    assert!(text.contains("Enter a value"), "{text}");
    assert!(!text.contains("each instance's lines go to"), "{text}");
    assert!(!text.contains("in progress:"), "{text}");
    let logs = std::fs::read_dir(config.join(".fleetform/logs"))
        .unwrap()
        .count();
    assert_eq!(logs, 1, "only the apply wrote a log");
    assert_eq!(sim_objects(&tmp.path().join("sim-store")), 400);

    // No terminal: a line per instance, as before.
    let plain = run_in(&config, &["destroy", "-auto-approve", "-var", &var]);
    assert_eq!(plain.code, 0, "{}", plain.all_output());
    assert_eq!(plain.stdout.matches(": Destroying...").count(), 400);
    assert!(!plain.stdout.contains("each instance's lines go to"));
}

#[test]
fn output_json_says_each_outputs_type() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("main.tf"),
        "output \"s\" {\n  value = \"x\"\n}\noutput \"n\" {\n  value = 2\n}\noutput \"o\" {\n  value = { a = true }\n}\n",
    )
    .unwrap();
    let out = run_in(dir, &["apply", "-auto-approve"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let out = run_in(dir, &["output", "-json"]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["s"]["type"], "string", "{doc:#}");
    assert_eq!(doc["n"]["type"], "number");
    assert_eq!(
        doc["o"]["type"],
        serde_json::json!(["object", {"a": "bool"}])
    );
    assert_eq!(doc["o"]["value"]["a"], true);
    assert_eq!(doc["s"]["sensitive"], false);
}

#[test]
fn providers_prints_the_tree_by_module_and_the_states_providers() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("child")).unwrap();
    std::fs::write(
        dir.join("main.tf"),
        "terraform {\n  required_providers {\n    null = {\n      source  = \"hashicorp/null\"\n      version = \">= 3.0\"\n    }\n  }\n}\n\nresource \"null_resource\" \"a\" {}\n\nmodule \"child\" {\n  source = \"./child\"\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("child/main.tf"),
        "resource \"random_id\" \"r\" {\n  byte_length = 2\n}\n",
    )
    .unwrap();
    let got = run_in(dir, &["get"]);
    assert_eq!(got.code, 0, "{}", got.all_output());
    let manifest = std::fs::read_to_string(dir.join(".terraform/modules/modules.json")).unwrap();
    assert!(
        manifest.contains("\"Key\":\"child\""),
        "get recorded the module: {manifest}"
    );
    let out = run_in(dir, &["apply", "-auto-approve"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let out = run_in(dir, &["providers"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert_eq!(
        out.stdout,
        "\nProviders required by configuration:\n.\n\
         ├── provider[registry.terraform.io/hashicorp/null] >= 3.0\n\
         └── module.child\n    └── provider[registry.terraform.io/hashicorp/random]\n\
         \nProviders required by state:\n\n\
         \x20   provider[registry.terraform.io/hashicorp/null]\n\n\
         \x20   provider[registry.terraform.io/hashicorp/random]\n\n"
    );
}

/// `console` evaluates what standard input gives, line by line, against
/// the configuration (variables, locals, functions) and the state.
#[test]
fn console_evaluates_expressions_against_state_and_configuration() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = r#"
locals {
  names = [for o in sim_object.s : o.name]
  first = local.names[0]
}

variable "secret" {
  type      = string
  default   = "hush"
  sensitive = true
}
"#;
    let config = sim_config(tmp.path(), "c", &format!("{SIX}{extra}"));
    let var = store_var(tmp.path());
    let out = run_in(&config, &["apply", "-auto-approve", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let console = |input: &str| {
        let r = fleetform_tests::run_with_input(&config, &["console", "-var", &var], input);
        (r.code, r.stdout, r.stderr)
    };
    // Piped, as Terraform 1.11: only the last line's result is printed.
    for (input, expected) in [
        ("length(sim_object.s)", "6"),
        ("local.first", "\"s-0\""),
        ("upper(\"x\")", "\"X\""),
        ("var.secret", "(sensitive value)"),
        ("sim_object.s[1].name", "\"s-1\""),
        ("terraform.workspace", "\"default\""),
    ] {
        let (code, out, err) = console(&format!("{input}\n"));
        assert_eq!(code, 0, "{out}\n{err}");
        assert_eq!(out, format!("{expected}\n"), "{input}");
    }
    let (code, _, err) = console("nope.x\n");
    assert_eq!(code, 1);
    assert!(err.contains("Reference to undeclared resource"), "{err}");
}

/// `fmt` as `terraform fmt`: lists and rewrites what it changes, -check
/// exits 3 and writes nothing, -diff shows the change, -recursive descends,
/// `-` formats standard input, a file that does not parse exits 2 and is
/// left as it is. (The formatting itself: lang's golden corpus, made by
/// Terraform 1.11.)
#[test]
fn fmt_rewrites_checks_and_diffs_as_terraform_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let messy = "resource \"a\" \"b\" {\nx=1\n  longer_name = \"y\"\n}\n";
    let tidy = "resource \"a\" \"b\" {\n  x           = 1\n  longer_name = \"y\"\n}\n";
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("main.tf"), messy).unwrap();
    std::fs::write(dir.join("sub/child.tf"), messy).unwrap();
    std::fs::write(dir.join("ok.tfvars"), "a = 1\n").unwrap();

    let out = run_in(dir, &["fmt", "-check", "-diff"]);
    assert_eq!(out.code, 3, "{}", out.all_output());
    assert!(
        out.stdout
            .starts_with("main.tf\n--- old/main.tf\n+++ new/main.tf\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("-x=1\n+  x           = 1\n"),
        "{}",
        out.stdout
    );
    assert_eq!(std::fs::read_to_string(dir.join("main.tf")).unwrap(), messy);

    let out = run_in(dir, &["fmt"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert_eq!(out.stdout, "main.tf\n");
    assert_eq!(std::fs::read_to_string(dir.join("main.tf")).unwrap(), tidy);
    assert_eq!(
        std::fs::read_to_string(dir.join("sub/child.tf")).unwrap(),
        messy
    );
    let out = run_in(dir, &["fmt", "-recursive"]);
    assert_eq!(out.stdout, "sub/child.tf\n", "{}", out.all_output());
    let out = run_in(dir, &["fmt", "-check", "-recursive"]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    assert!(out.stdout.is_empty());

    std::fs::write(dir.join("notes.txt"), "x=1\n").unwrap();
    let out = run_in(dir, &["fmt", "notes.txt"]);
    assert_eq!(out.code, 2, "{}", out.all_output());
    assert!(
        out.stderr.contains("Only .tf and .tfvars files"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "x=1\n"
    );

    std::fs::write(dir.join("bad.tf"), "x = {\n").unwrap();
    let out = run_in(dir, &["fmt"]);
    assert_eq!(out.code, 2, "{}", out.all_output());
    assert!(out.stderr.contains("bad.tf, line 2"), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("bad.tf")).unwrap(),
        "x = {\n"
    );

    let piped = fleetform_tests::run_with_input(dir, &["fmt", "-"], messy);
    assert_eq!(piped.code, 0, "{}", piped.all_output());
    assert_eq!(piped.stdout, tidy);
}

/// A `backend "s3"` block naming a Terraform state the environment's
/// credentials can read (moto here): plan stops, `init -migrate-state`
/// takes it over, and the plan has nothing to do.
#[test]
fn a_terraform_state_in_an_s3_backend_is_found_and_migrated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let s3 = fleetform_tests::S3::start(dir).unwrap();
    let var = store_var(dir);
    let first = sim_config(dir, "first", SIX);
    let out = run_in(&first, &["apply", "-auto-approve", "-var", &var]);
    assert_eq!(out.code, 0, "{}", out.all_output());
    let pulled = run_in(&first, &["state", "pull"]);
    assert!(
        pulled.stdout.contains("\"resources\""),
        "{}",
        pulled.all_output()
    );
    let file = dir.join("pulled.tfstate");
    std::fs::write(&file, &pulled.stdout).unwrap();
    // Terraform's S3 backend keeps workspace "default" at `key`.
    let url = format!(
        "http://127.0.0.1:{}/{}/team/app.tfstate",
        s3.port(),
        s3.bucket
    );
    let put = std::process::Command::new("curl")
        // An upload, not form data (moto would store a form as nothing).
        .args(["-sf", "-H", "Expect:", "-T"])
        .arg(&file)
        .arg(&url)
        .status()
        .unwrap();
    assert!(put.success());
    assert_eq!(
        s3.keys("team/").unwrap(),
        ["team/app.tfstate"],
        "the Terraform state is in the bucket"
    );

    let backend = format!(
        "terraform {{\n  backend \"s3\" {{\n    profile        = \"ops\"\n    bucket         = \"{}\"\n    key            = \"team/app.tfstate\"\n    region         = \"us-east-1\"\n    endpoint       = \"http://127.0.0.1:{}\"\n    use_path_style = true\n  }}\n}}\n",
        s3.bucket,
        s3.port()
    );
    let second = sim_config(dir, "second", &format!("{backend}{SIX}"));
    let env = s3.env();
    let chdir = format!("-chdir={}", second.display());
    let run = |args: &[&str]| {
        let mut all = vec![chdir.as_str()];
        all.extend_from_slice(args);
        let out = fleetform_tests::fleetform(&all, &env).unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, out, err) = run(&["plan", "-var", &var]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("A Terraform state is present"), "{err}");
    assert!(
        err.contains("the s3 backend's profile is not used"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "s3://{}/team/app.tfstate holds 6 resource instance(s)",
            s3.bucket
        )),
        "{err}"
    );
    let (code, out, err) = run(&["init", "-migrate-state"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Pushed 6 resource instance(s)"), "{out}");
    let (code, out, err) = run(&["plan", "-detailed-exitcode", "-var", &var]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("No changes."), "{out}");
}

/// On a terminal, a diagnostic's detail wraps to the terminal's width; piped
/// output keeps whole lines for tools.
#[test]
fn long_messages_wrap_to_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("main.tf"),
        "resource \"random_string\" \"s\" {\n  length = \"abc\"\n}\n",
    )
    .unwrap();
    let Some((_, text)) =
        fleetform_tests::on_terminal(dir, "stty rows 24 cols 40;", "validate", "")
    else {
        eprintln!("SKIP: no `script` command to make a terminal");
        return;
    };
    let detail: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("│ Inappropriate") || l.starts_with("│ \"length\""))
        .collect();
    assert!(!detail.is_empty(), "{text}");
    // The detail wraps (the location and the source line do not, as in
    // Terraform).
    assert!(
        text.lines()
            .filter(|l| l.starts_with("│ ")
                && !l.contains(":   length")
                && !l.contains(" on main.tf"))
            .all(|l| l.chars().count() <= 40),
        "{text}"
    );
    assert!(
        text.contains("│ Inappropriate value for attribute\n"),
        "{text}"
    );
    // Piped: one line.
    let piped = run_in(dir, &["validate"]);
    assert!(
        piped
            .stderr
            .contains("│ Inappropriate value for attribute \"length\": a number is required.\n"),
        "{}",
        piped.stderr
    );
}
