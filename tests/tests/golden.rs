//! Golden planning scenarios: every example of the seeds, run step by step
//! through the real `fleetform` CLI in embedded mode and compared with the
//! expected plan, order of operations, outputs and state in
//! `tests/fixtures/<scenario>/` (the format is in `tests/fixtures/README.md`).

use fleetform_tests::{CliRun, fleetform_in};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Generous: one CLI call starts an embedded coordinator, workers and providers.
const CLI_TIMEOUT: Duration = Duration::from_secs(120);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// A scenario's steps (`step1`, `step2`, ...) in numeric order.
fn steps(scenario: &Path) -> Vec<(u32, PathBuf)> {
    let mut steps: Vec<(u32, PathBuf)> = std::fs::read_dir(scenario)
        .unwrap_or_else(|e| panic!("reading {}: {e}", scenario.display()))
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n = e.file_name().to_str()?.strip_prefix("step")?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    steps.sort();
    assert!(
        !steps.is_empty(),
        "{} has no step directories",
        scenario.display()
    );
    steps
}

/// Non-empty lines that are not `#` comments, trimmed.
fn lines_of(path: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect(),
    )
}

fn tf_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "tf"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// A step with `.tf` files replaces the configuration; without, it keeps the previous one.
fn install_config(step: &Path, work: &Path) {
    let new = tf_files(step);
    if new.is_empty() {
        return;
    }
    for old in tf_files(work) {
        std::fs::remove_file(old).expect("remove old configuration");
    }
    for f in new {
        std::fs::copy(&f, work.join(f.file_name().expect("file name"))).expect("copy .tf");
    }
}

struct Scenario {
    name: String,
    work: PathBuf,
    plans: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Scenario {
    fn new(name: &str) -> Scenario {
        let tmp = tempfile::tempdir().expect("tempdir");
        let work = tmp.path().join("work");
        let plans = tmp.path().join("plans");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&plans).unwrap();
        Scenario {
            name: name.to_string(),
            work,
            plans,
            _tmp: tmp,
        }
    }

    fn cli(&self, args: &[String]) -> CliRun {
        fleetform_in(&self.work, args, CLI_TIMEOUT)
            .unwrap_or_else(|e| panic!("[{}] fleetform {args:?}: {e:#}", self.name))
    }

    /// Runs a command that must succeed.
    fn ok(&self, what: &str, args: &[String]) -> CliRun {
        let r = self.cli(args);
        assert!(
            r.code == 0,
            "[{}] {what}: `fleetform {}` exited {}\n--- stdout\n{}\n--- stderr\n{}",
            self.name,
            args.join(" "),
            r.code,
            r.stdout,
            r.stderr
        );
        r
    }

    fn outputs(&self, step: u32) -> Outputs {
        let r = self.ok(
            &format!("step{step} output"),
            &strings(&["output", "-json"]),
        );
        match serde_json::from_str::<Value>(r.stdout.trim()) {
            Ok(Value::Object(m)) => m,
            _ if r.stdout.trim().is_empty() => Default::default(),
            _ => panic!(
                "[{}] output -json is not a JSON object:\n{}",
                self.name, r.stdout
            ),
        }
    }

    fn state_list(&self, step: u32) -> Vec<String> {
        let r = self.ok(
            &format!("step{step} state list"),
            &strings(&["state", "list"]),
        );
        let mut l: Vec<String> = r
            .stdout
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        l.sort();
        l
    }

    fn run_step(&self, n: u32, step: &Path) {
        install_config(step, &self.work);
        for cmd in lines_of(&step.join("commands")).unwrap_or_default() {
            let args: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
            self.ok(&format!("step{n} command"), &args);
        }
        let args = lines_of(&step.join("args")).unwrap_or_default();
        let want = Expected::load(step);
        if want.is_empty() {
            let mut a = strings(&["apply", "-auto-approve"]);
            a.extend(args);
            self.ok(&format!("step{n} (setup apply)"), &a);
            return;
        }
        let plan_file = self.plans.join(format!("step{n}.tfplan"));
        let mut plan_args = vec!["plan".to_string(), format!("-out={}", plan_file.display())];
        plan_args.extend(args.iter().cloned());
        if let Some(error) = &want.error {
            self.expect_error(n, &plan_args, error);
            return;
        }
        let before = want.outputs.as_ref().map(|_| self.outputs(n));
        self.ok(&format!("step{n} plan"), &plan_args);
        let mut failures = Vec::new();
        if let Some(plan) = &want.plan {
            failures.extend(self.check_plan(n, &plan_file, plan));
        }
        let mut apply_args = strings(&["apply", "-json"]);
        apply_args.extend(lines_of(&step.join("apply_args")).unwrap_or_default());
        apply_args.push(plan_file.display().to_string());
        let applied = self.cli(&apply_args);
        if applied.code != 0 {
            failures.push(format!(
                "`fleetform {}` exited {}\n--- stdout\n{}\n--- stderr\n{}",
                apply_args.join(" "),
                applied.code,
                applied.stdout,
                applied.stderr
            ));
        } else {
            failures.extend(self.check_applied(n, &want, &applied.stdout, before));
        }
        assert!(
            failures.is_empty(),
            "[{}] step{n} (args: {args:?}):\n{}",
            self.name,
            failures.join("\n")
        );
    }

    fn expect_error(&self, n: u32, plan_args: &[String], want: &[String]) {
        let r = self.cli(plan_args);
        let all = r.all_output();
        let missing: Vec<&String> = want.iter().filter(|w| !all.contains(w.as_str())).collect();
        assert!(
            r.code == 1 && missing.is_empty(),
            "[{}] step{n}: `fleetform {}` should fail (exit 1) printing {want:?}\n\
             exit code: {}, missing: {missing:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.name,
            plan_args.join(" "),
            r.code,
            r.stdout,
            r.stderr
        );
    }

    /// `show -json` of the saved plan against `expected_plan.txt`.
    fn check_plan(&self, n: u32, plan_file: &Path, want: &[String]) -> Option<String> {
        let args = [
            "show".to_string(),
            "-json".to_string(),
            plan_file.display().to_string(),
        ];
        let shown = self.ok(&format!("step{n} show"), &args);
        let got = plan_lines(&shown.stdout).unwrap_or_else(|e| {
            panic!("[{}] step{n}: show -json: {e}\n{}", self.name, shown.stdout)
        });
        (got != want).then(|| mismatch("plan (expected_plan.txt)", want, &got))
    }

    /// Order, outputs and state after a successful apply.
    fn check_applied(
        &self,
        n: u32,
        want: &Expected,
        apply_stdout: &str,
        before: Option<Outputs>,
    ) -> Vec<String> {
        let mut failures = Vec::new();
        if let Some(order) = &want.order {
            let trace = apply_trace(apply_stdout);
            let got = order_of(&trace);
            if got != *order {
                let mut m = mismatch("order of operations (expected_order.txt)", order, &got);
                m.push_str("apply -json events:\n");
                for (kind, op) in &trace {
                    m.push_str(&format!("  {kind} {op}\n"));
                }
                failures.push(m);
            }
        }
        if let (Some(outputs), Some(before)) = (&want.outputs, before) {
            let after = self.outputs(n);
            let got = output_changes(outputs, &before, &after);
            if got != *outputs {
                let mut m = mismatch("outputs (expected_outputs.txt)", outputs, &got);
                m.push_str(&format!(
                    "outputs before: {}\noutputs after:  {}\n",
                    Value::Object(before),
                    Value::Object(after)
                ));
                failures.push(m);
            }
        }
        if let Some(state) = &want.state {
            let got = self.state_list(n);
            if got != *state {
                let what = "state after apply (expected_state.txt)";
                failures.push(mismatch(what, state, &got));
            }
        }
        failures
    }
}

type Outputs = serde_json::Map<String, Value>;

/// The `expected_*` files of a step; a step with none is setup.
struct Expected {
    plan: Option<Vec<String>>,
    order: Option<Vec<String>>,
    error: Option<Vec<String>>,
    outputs: Option<Vec<String>>,
    state: Option<Vec<String>>,
}

impl Expected {
    fn load(step: &Path) -> Expected {
        let f = |name: &str| lines_of(&step.join(name));
        Expected {
            plan: f("expected_plan.txt"),
            order: f("expected_order.txt"),
            error: f("expected_error.txt"),
            outputs: f("expected_outputs.txt"),
            state: f("expected_state.txt"),
        }
    }

    fn is_empty(&self) -> bool {
        [
            &self.plan,
            &self.order,
            &self.error,
            &self.outputs,
            &self.state,
        ]
        .iter()
        .all(|e| e.is_none())
    }
}

/// `<name> changed|unchanged` for each output named in `want`.
fn output_changes(want: &[String], before: &Outputs, after: &Outputs) -> Vec<String> {
    want.iter()
        .map(|line| {
            let name = line.split_whitespace().next().unwrap_or_default();
            let value = |o: &Outputs| o.get(name).map(|v| v["value"].clone());
            let changed = value(before) != value(after);
            format!("{name} {}", if changed { "changed" } else { "unchanged" })
        })
        .collect()
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn mismatch(what: &str, want: &[String], got: &[String]) -> String {
    let show = |l: &[String]| {
        if l.is_empty() {
            "  (nothing)\n".to_string()
        } else {
            l.iter().map(|x| format!("  {x}\n")).collect()
        }
    };
    format!(
        "{what} differs\nexpected:\n{}actual:\n{}",
        show(want),
        show(got)
    )
}

/// `<address>[ (deposed)]: <actions>` for every change of a `show -json`
/// plan except no-ops, sorted.
fn plan_lines(json: &str) -> Result<Vec<String>, String> {
    let plan: Value = serde_json::from_str(json.trim()).map_err(|e| format!("not JSON: {e}"))?;
    let mut lines = Vec::new();
    for rc in plan["resource_changes"].as_array().into_iter().flatten() {
        let addr = rc["address"]
            .as_str()
            .ok_or("a resource change without address")?;
        let actions: Vec<&str> = rc["change"]["actions"]
            .as_array()
            .ok_or_else(|| format!("{addr}: no change.actions"))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if actions == ["no-op"] {
            continue;
        }
        let deposed = if rc["deposed"].as_str().is_some_and(|d| !d.is_empty()) {
            " (deposed)"
        } else {
            ""
        };
        lines.push(format!("{addr}{deposed}: {}", actions.join(",")));
    }
    lines.sort();
    Ok(lines)
}

/// The apply_start / apply_complete / apply_errored events of `apply -json`,
/// as (kind, "<address> <action>").
fn apply_trace(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|ev| {
            let kind = ev["type"].as_str()?;
            if !matches!(kind, "apply_start" | "apply_complete" | "apply_errored") {
                return None;
            }
            let hook = &ev["hook"];
            let addr = hook["resource"]["addr"].as_str().unwrap_or("?");
            let action = hook["action"].as_str().unwrap_or("?");
            Some((kind.to_string(), format!("{addr} {action}")))
        })
        .collect()
}

/// The operations in the order they started. The expected orders are
/// chains, so each operation must also complete before the next starts:
/// otherwise the operation is marked `(overlapping)` and cannot match.
fn order_of(trace: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut running: Vec<&str> = Vec::new();
    for (kind, op) in trace {
        match kind.as_str() {
            "apply_start" => {
                if running.is_empty() {
                    out.push(op.clone());
                } else {
                    out.push(format!("{op} (overlapping {})", running.join(", ")));
                }
                running.push(op);
            }
            "apply_complete" => running.retain(|r| r != op),
            _ => {
                running.retain(|r| r != op);
                out.push(format!("{op} (errored)"));
            }
        }
    }
    out
}

/// The runner's readers of Terraform's JSON: a mistake here would make
/// scenarios pass or fail for the wrong reason.
#[test]
fn runner_reads_terraform_json_plans_and_events() {
    let plan = r#"{"resource_changes":[
        {"address":"null_resource.b","change":{"actions":["delete","create"]}},
        {"address":"null_resource.a","change":{"actions":["no-op"]}},
        {"address":"null_resource.a","deposed":"00000001","change":{"actions":["delete"]}},
        {"address":"data.null_data_source.d","change":{"actions":["read"]}}]}"#;
    assert_eq!(
        plan_lines(plan).unwrap(),
        [
            "data.null_data_source.d: read",
            "null_resource.a (deposed): delete",
            "null_resource.b: delete,create"
        ]
    );
    let ev = |t: &str, a: &str, act: &str| {
        format!(r#"{{"type":"{t}","hook":{{"resource":{{"addr":"{a}"}},"action":"{act}"}}}}"#)
    };
    let chain = [
        r#"{"type":"version","terraform":"1.9"}"#.to_string(),
        ev("apply_start", "null_resource.b", "delete"),
        ev("apply_complete", "null_resource.b", "delete"),
        ev("apply_start", "null_resource.a", "create"),
        ev("apply_complete", "null_resource.a", "create"),
    ]
    .join("\n");
    assert_eq!(
        order_of(&apply_trace(&chain)),
        ["null_resource.b delete", "null_resource.a create"]
    );
    let overlapping = [
        ev("apply_start", "null_resource.b", "delete"),
        ev("apply_start", "null_resource.a", "create"),
        ev("apply_complete", "null_resource.b", "delete"),
        ev("apply_errored", "null_resource.a", "create"),
    ]
    .join("\n");
    assert_eq!(
        order_of(&apply_trace(&overlapping)),
        [
            "null_resource.b delete",
            "null_resource.a create (overlapping null_resource.b delete)",
            "null_resource.a create (errored)"
        ]
    );
}

fn run_scenario(name: &str) {
    let dir = fixtures().join(name);
    assert!(dir.is_dir(), "no fixture directory {}", dir.display());
    let s = Scenario::new(name);
    for (n, step) in steps(&dir) {
        s.run_step(n, &step);
    }
}

/// One test per fixture directory, so a failure names its scenario.
macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_scenario(stringify!($name));
            }
        )*

        /// Every fixture directory has a test above (a new one is not silently skipped).
        #[test]
        fn every_fixture_has_a_test() {
            let listed = [$(stringify!($name)),*];
            let not_scenarios = [
                "fleet500",
                "contracts",
                "import",
                "side_by_side",
                "big_numbers",
                "fmt",
            ];
            let mut missing = Vec::new();
            for e in std::fs::read_dir(fixtures()).unwrap().filter_map(Result::ok) {
                let name = e.file_name().to_string_lossy().to_string();
                if e.path().is_dir() && !not_scenarios.contains(&name.as_str()) && !listed.contains(&name.as_str()) {
                    missing.push(name);
                }
            }
            assert!(missing.is_empty(), "fixtures without a test in golden.rs: {missing:?}");
        }
    };
}

scenarios! {
    // docs/planning/destroying.md
    destroying_simple_create,
    destroying_simple_update,
    destroying_simple_destroy,
    destroying_replace_all,
    destroying_replace_dependency_update,
    destroying_destroy_then_update,
    destroying_cbd_replace_all,
    destroying_cbd_replace_dependency_update,
    destroying_cbd_update_destroyed_dependency,
    destroying_forced_cbd,
    // docs/planning/exclude.md
    exclude_d,
    exclude_a,
    exclude_b,
    exclude_b_and_c,
    exclude_a_and_b,
    exclude_missing_e,
    exclude_destroy_b,
    exclude_through_local,
    exclude_with_target_is_an_error,
    exclude_outputs,
    exclude_data_sources,
    exclude_ignored_when_applying_a_saved_plan,
    // docs/planning/planning-behaviors.md
    planning_create_new_resource,
    planning_create_new_count_index,
    planning_create_new_for_each_key,
    planning_delete_removed_resource,
    planning_delete_count_index,
    planning_delete_for_each_key,
    planning_update_in_place,
    planning_replace_tainted,
    planning_read_data_during_plan,
    planning_read_data_deferred_unknown_config,
    planning_read_data_deferred_dependency_change,
    planning_noop,
    planning_replace_delete_then_create,
    planning_replace_create_before_destroy,
    planning_ignore_changes,
    planning_replace_triggered_by,
    planning_prevent_destroy,
    planning_moved_resource,
    planning_moved_instance,
    planning_moved_chain,
    planning_moved_invalid,
    planning_requires_replace,
    planning_replace_option,
    planning_refresh_only,
    planning_destroy,
    // sensitivity marks (Terraform >= 0.15)
    sensitive_output_requires_sensitive,
    sensitive_for_each_and_count,
}
