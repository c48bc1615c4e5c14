//! A configuration's own state on a shared fleet: projects bind a
//! directory to its states (`init -project`), the coordinator keeps each
//! project's states apart, a configuration bound to another's project is
//! refused before it plans (nothing destroyed), a switch of project is made
//! on purpose (`-reconfigure`, `-migrate-state`), and a fleet refuses state
//! commands from a configuration without a project. Real nats-server, moto
//! S3, a coordinator, a worker and the sim provider's objects on disk.

use fleetform_tests::{
    CliRun, Coordinator, Nats, S3, Worker, fleetform_in, sim_config, sim_objects,
};
use std::path::Path;
use std::time::Duration;

/// Runs the CLI in `dir` through `coordinator` with no project named by the
/// environment (only the directory's binding, or `project` when given).
fn on_fleet(dir: &Path, coordinator: &str, project: Option<&str>, args: &[&str]) -> CliRun {
    let mut all = vec![format!("--coordinator={coordinator}")];
    all.extend(args.iter().map(|a| a.to_string()));
    cli(dir, project, &all)
}

/// Runs the CLI in `dir` with exactly `project` as FLEETFORM_PROJECT (none:
/// empty) and no coordinator from the environment.
fn cli(dir: &Path, project: Option<&str>, args: &[impl AsRef<std::ffi::OsStr>]) -> CliRun {
    let out = std::process::Command::new(fleetform_tests::binary("fleetform"))
        .arg(format!("-chdir={}", dir.display()))
        .args(args)
        .env("FLEETFORM_PROJECT", project.unwrap_or(""))
        .env_remove("FLEETFORM_COORDINATOR")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run fleetform");
    CliRun {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(run: &CliRun) {
    assert_eq!(run.code, 0, "{}", run.all_output());
}

fn state_list(run: &CliRun) -> Vec<&str> {
    run.stdout.lines().filter(|l| !l.is_empty()).collect()
}

#[test]
fn two_configurations_on_one_fleet_keep_their_own_states() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let nats = Nats::start(dir).unwrap();
    let s3 = S3::start(dir).unwrap();
    let c = Coordinator::start(dir, &nats, &s3).unwrap();
    let _worker = Worker::start(dir, &nats, "w1", 8).unwrap();
    let url = c.url.as_str();

    let small_store = dir.join("small-store");
    let big_store = dir.join("big-store");
    let small = sim_config(
        dir,
        "small",
        "resource \"sim_object\" \"a\" {\n  count = 3\n  name  = \"small-${count.index}\"\n}\noutput \"ws\" {\n  value = terraform.workspace\n}\n",
    );
    let big = sim_config(
        dir,
        "big",
        "resource \"sim_object\" \"b\" {\n  count = 5\n  name  = \"big-${count.index}\"\n}\n",
    );
    let small_var = format!("-var=store={}", small_store.display());
    let big_var = format!("-var=store={}", big_store.display());

    // Bound to no project, a fleet refuses: it cannot tell whose state.
    let unbound = on_fleet(&small, url, None, &["apply", "-auto-approve", &small_var]);
    assert_eq!(unbound.code, 1, "{}", unbound.all_output());
    assert!(
        unbound.stderr.contains("No project")
            && unbound.stderr.contains("fleetform init -project=NAME"),
        "{}",
        unbound.stderr
    );
    assert_eq!(sim_objects(&small_store), 0, "nothing created unbound");

    // Each directory bound to its own project.
    let bound = on_fleet(&small, url, None, &["init", "-project=small"]);
    ok(&bound);
    assert!(
        bound.stdout.contains("bound to project \"small\""),
        "{}",
        bound.stdout
    );
    assert_eq!(
        std::fs::read_to_string(small.join(".fleetform/project"))
            .unwrap()
            .trim(),
        "small"
    );
    ok(&on_fleet(&big, url, None, &["init", "-project=big"]));

    ok(&on_fleet(
        &small,
        url,
        None,
        &["apply", "-auto-approve", &small_var],
    ));
    assert_eq!(sim_objects(&small_store), 3);
    // The other configuration plans only its own objects: nothing of small's
    // to destroy.
    let plan = on_fleet(&big, url, None, &["plan", "-no-color", &big_var]);
    ok(&plan);
    assert!(
        plan.stdout
            .contains("Plan: 5 to add, 0 to change, 0 to destroy."),
        "{}",
        plan.stdout
    );
    ok(&on_fleet(
        &big,
        url,
        None,
        &["apply", "-auto-approve", &big_var],
    ));
    assert_eq!(sim_objects(&small_store), 3, "small's objects untouched");
    assert_eq!(sim_objects(&big_store), 5);
    let small_state = on_fleet(&small, url, None, &["state", "list"]);
    assert_eq!(
        state_list(&small_state),
        ["sim_object.a[0]", "sim_object.a[1]", "sim_object.a[2]"]
    );
    // terraform.workspace is the name within the project.
    let out = on_fleet(&small, url, None, &["output", "-raw", "ws"]);
    assert_eq!(out.stdout, "default", "{}", out.all_output());
    // Workspaces are listed per project.
    let listed = on_fleet(&big, url, None, &["workspace", "list"]);
    assert_eq!(
        state_list(&listed),
        ["* default"],
        "{}",
        listed.all_output()
    );
    // FLEETFORM_PROJECT (a CI checkout) names the same states as a binding.
    let ci = tempfile::tempdir().unwrap();
    std::fs::copy(small.join("main.tf"), ci.path().join("main.tf")).unwrap();
    let from_ci = on_fleet(
        ci.path(),
        url,
        Some("small"),
        &["plan", "-no-color", "-detailed-exitcode", &small_var],
    );
    assert_eq!(from_ci.code, 0, "{}", from_ci.all_output());
    // ... but never overrides a binding to another project.
    let conflicting = on_fleet(&big, url, Some("small"), &["plan", &big_var]);
    assert_eq!(conflicting.code, 1, "{}", conflicting.all_output());
    assert!(
        conflicting.stderr.contains("Conflicting projects")
            && conflicting
                .stderr
                .contains("init -project=small -reconfigure"),
        "{}",
        conflicting.stderr
    );

    // A configuration bound to another's project by mistake is refused
    // before planning; nothing of the other's is destroyed.
    let wrong = tempfile::tempdir().unwrap();
    std::fs::copy(big.join("main.tf"), wrong.path().join("main.tf")).unwrap();
    ok(&on_fleet(
        wrong.path(),
        url,
        None,
        &["init", "-project=small"],
    ));
    for args in [
        vec!["plan", "-no-color", big_var.as_str()],
        vec!["apply", "-auto-approve", big_var.as_str()],
        vec!["destroy", "-auto-approve", big_var.as_str()],
    ] {
        let refused = on_fleet(wrong.path(), url, None, &args);
        assert_eq!(refused.code, 1, "{args:?}: {}", refused.all_output());
        let said = refused.all_output();
        for part in [
            "The state belongs to another configuration",
            "Workspace \"default\" of project \"small\" holds 3 object(s)",
            "sim_object.a",
            &format!(":{} at ", small.display()),
            "-adopt-state",
        ] {
            assert!(said.contains(part), "{args:?}: {part:?} in {said}");
        }
    }
    assert_eq!(
        sim_objects(&small_store),
        3,
        "the refused runs destroyed nothing"
    );
    assert_eq!(sim_objects(&big_store), 5);
    // Adopting the state on purpose plans what that means.
    let adopted = on_fleet(
        wrong.path(),
        url,
        None,
        &["plan", "-no-color", "-adopt-state", &big_var],
    );
    ok(&adopted);
    assert!(
        adopted
            .stdout
            .contains("Plan: 5 to add, 0 to change, 3 to destroy."),
        "{}",
        adopted.stdout
    );

    // Switching a directory whose states hold objects is made on purpose.
    let switch = on_fleet(&small, url, None, &["init", "-project=renamed"]);
    assert_eq!(switch.code, 1, "{}", switch.all_output());
    assert!(
        switch.stderr.contains("Project change")
            && switch
                .stderr
                .contains("default (serial 1, 3 resource instance(s))")
            && switch.stderr.contains("-migrate-state")
            && switch.stderr.contains("-reconfigure"),
        "{}",
        switch.stderr
    );
    assert_eq!(
        std::fs::read_to_string(small.join(".fleetform/project"))
            .unwrap()
            .trim(),
        "small",
        "a refused switch leaves the binding"
    );
    assert!(
        !switch.stdout.contains("successfully initialized"),
        "{}",
        switch.stdout
    );
    let moved = on_fleet(
        &small,
        url,
        None,
        &["init", "-project=renamed", "-migrate-state"],
    );
    ok(&moved);
    assert!(
        moved.stdout.contains(
            "Copied workspace \"default\" (3 resource instance(s)) into project \"renamed\""
        ),
        "{}",
        moved.stdout
    );
    let after = on_fleet(
        &small,
        url,
        None,
        &["plan", "-no-color", "-detailed-exitcode", &small_var],
    );
    assert_eq!(
        after.code,
        0,
        "the copied state is the same: {}",
        after.all_output()
    );
    // -reconfigure starts from the new project's (empty) state and says so.
    let fresh = on_fleet(
        &small,
        url,
        None,
        &["init", "-project=empty", "-reconfigure"],
    );
    ok(&fresh);
    assert!(
        fresh.stdout.contains("Project \"empty\" has no state yet")
            && fresh.stdout.contains("are left as they are"),
        "{}",
        fresh.stdout
    );
    let replan = on_fleet(&small, url, None, &["plan", "-no-color", &small_var]);
    ok(&replan);
    assert!(
        replan.stdout.contains("Plan: 3 to add"),
        "{}",
        replan.stdout
    );
}

/// Embedded mode behaves the same: a directory copied with its
/// `.fleetform/` to start another configuration carries the first one's
/// state, and the new configuration's first run stops instead of
/// destroying the first one's objects. In the directory that wrote the
/// state, removing every resource block plans their destruction, as
/// Terraform would.
#[test]
fn an_embedded_state_of_another_configuration_is_not_destroyed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = dir.join("store");
    let config = sim_config(
        dir,
        "config",
        "resource \"sim_object\" \"a\" {\n  count = 2\n  name  = \"a-${count.index}\"\n}\n",
    );
    let var = format!("-var=store={}", store.display());
    let run = |at: &Path, args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        fleetform_in(at, &args, Duration::from_secs(120)).unwrap()
    };
    ok(&run(&config, &["apply", "-auto-approve", &var]));
    assert_eq!(sim_objects(&store), 2);

    // FLEETFORM_PROJECT does not quietly move an unbound directory off its
    // own states: the project's state is empty, the plan would create.
    let with_project = |args: &[&str]| cli(&config, Some("app"), args);
    let switched = with_project(&["apply", "-auto-approve", &var]);
    assert_eq!(switched.code, 1, "{}", switched.all_output());
    assert!(
        switched.stderr.contains("Project change")
            && switched.stderr.contains("init -project=app -migrate-state"),
        "{}",
        switched.stderr
    );
    assert_eq!(sim_objects(&store), 2, "nothing created twice");
    ok(&with_project(&["init", "-project=app", "-migrate-state"]));
    let same = with_project(&["plan", "-detailed-exitcode", &var]);
    assert_eq!(same.code, 0, "{}", same.all_output());

    // `cp -r config copy`, then the copy becomes another configuration.
    let copy = dir.join("copy");
    let copied = std::process::Command::new("cp")
        .args(["-r"])
        .arg(&config)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(copied.success());
    let other = std::fs::read_to_string(copy.join("main.tf"))
        .unwrap()
        .replace("\"sim_object\" \"a\"", "\"sim_object\" \"other\"");
    std::fs::write(copy.join("main.tf"), &other).unwrap();
    let refused = run(&copy, &["apply", "-auto-approve", &var]);
    assert_eq!(refused.code, 1, "{}", refused.all_output());
    assert!(
        refused
            .stderr
            .contains("The state belongs to another configuration")
            && refused
                .stderr
                .contains("Workspace \"default\" of project \"app\" holds 2 object(s)")
            && refused
                .stderr
                .contains(&format!(":{} at ", config.display())),
        "{}",
        refused.stderr
    );
    assert_eq!(sim_objects(&store), 2, "nothing destroyed");

    // The directory that wrote the state may drop every resource.
    std::fs::write(
        config.join("main.tf"),
        other.replace("count = 2", "count = 0"),
    )
    .unwrap();
    let dropped = run(&config, &["plan", "-no-color", &var]);
    ok(&dropped);
    assert!(
        dropped
            .stdout
            .contains("Plan: 0 to add, 0 to change, 2 to destroy."),
        "{}",
        dropped.stdout
    );
}

/// A directory bound to a project while its own embedded states hold
/// objects (the binding was made through a coordinator, which cannot see
/// them) is refused in embedded mode until they are copied into the
/// project: its plan would otherwise start from the project's empty state.
#[test]
fn a_binding_made_elsewhere_does_not_leave_embedded_states_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = dir.join("store");
    let config = sim_config(
        dir,
        "config",
        "resource \"sim_object\" \"a\" {\n  count = 2\n  name  = \"a-${count.index}\"\n}\n",
    );
    let var = format!("-var=store={}", store.display());
    let run = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        fleetform_in(&config, &args, Duration::from_secs(120)).unwrap()
    };
    ok(&run(&["apply", "-auto-approve", &var]));
    // What `init -project=late` through a coordinator writes.
    std::fs::write(config.join(".fleetform/project"), "late\n").unwrap();
    let refused = run(&["apply", "-auto-approve", &var]);
    assert_eq!(refused.code, 1, "{}", refused.all_output());
    assert!(
        refused.stderr.contains("Project change")
            && refused
                .stderr
                .contains("bound to project \"late\" (.fleetform/project)")
            && refused
                .stderr
                .contains("default (serial 1, 2 resource instance(s))")
            && refused.stderr.contains("init -project=late -migrate-state"),
        "{}",
        refused.stderr
    );
    assert_eq!(sim_objects(&store), 2, "nothing created twice");
    let copied = run(&["init", "-project=late", "-migrate-state"]);
    ok(&copied);
    assert!(
        copied.stdout.contains(
            "Copied workspace \"default\" (2 resource instance(s)) into project \"late\""
        ),
        "{}",
        copied.stdout
    );
    let same = run(&["plan", "-detailed-exitcode", &var]);
    assert_eq!(same.code, 0, "{}", same.all_output());
}
