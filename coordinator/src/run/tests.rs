//! Runs in process ([`super::testkit`]): modules planned and applied by the
//! real walks against a fake provider.

use super::testkit::Harness;
use fleetform_shared::plan::Action;
use fleetform_shared::wire::{Operation, RunStatus};

const ROOT: &str = r#"
module "app" {
  source   = "./app"
  for_each = toset(["x", "y"])
  name     = "app-${each.key}"
}

module "db" {
  source = "./db"
}

resource "test_thing" "top" {
  name = module.db.id
}

output "names" {
  value = { for k, m in module.app : k => m.thing_name }
}
"#;

const APP: &str = r#"
variable "name" {
  type = string
}

resource "test_thing" "a" {
  count = 2
  name  = "${var.name}-${count.index}"
}

output "thing_name" {
  value = test_thing.a[0].name
}
"#;

const DB: &str = r#"
resource "test_thing" "db" {
  name = "db"
}

output "id" {
  value = test_thing.db.id
}
"#;

fn files(db: &str) -> Vec<(&'static str, String)> {
    vec![
        ("main.tf", ROOT.to_string()),
        ("app/main.tf", APP.to_string()),
        ("db/main.tf", db.to_string()),
    ]
}

fn refs<'a>(files: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    files.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[tokio::test]
async fn modules_plan_with_instance_addresses_and_precise_dependencies() {
    let h = Harness::new().await;
    let f = files(DB);
    let out = h.run(&refs(&f), Operation::Plan).await;
    assert_eq!(out.status, RunStatus::Planned, "{}", out.diagnostics());
    let plan = out.plan();
    let mut addrs: Vec<String> = plan.changes.iter().map(|c| c.addr.to_string()).collect();
    addrs.sort();
    assert_eq!(
        addrs,
        [
            "module.app[\"x\"].test_thing.a[0]",
            "module.app[\"x\"].test_thing.a[1]",
            "module.app[\"y\"].test_thing.a[0]",
            "module.app[\"y\"].test_thing.a[1]",
            "module.db.test_thing.db",
            "test_thing.top",
        ]
    );
    assert!(plan.changes.iter().all(|c| c.action == Action::Create));
    // The root resource depends on the one resource behind module.db.id,
    // not on module.app; the app's resources depend on nothing.
    let deps = |addr: &str| -> Vec<String> {
        let c = plan
            .changes
            .iter()
            .find(|c| c.addr.to_string() == addr)
            .unwrap();
        c.dependencies.iter().map(ToString::to_string).collect()
    };
    assert_eq!(deps("test_thing.top"), ["module.db.test_thing.db"]);
    assert!(deps("module.app[\"x\"].test_thing.a[0]").is_empty());
    // Values cross module boundaries: known names are planned.
    let a = plan
        .changes
        .iter()
        .find(|c| c.addr.to_string() == "module.app[\"y\"].test_thing.a[1]")
        .unwrap();
    assert_eq!(a.after.get_attr("name").as_str(), Some("app-y-1"));
}

#[tokio::test]
async fn modules_apply_then_replan_to_no_changes_then_change_one_module() {
    let h = Harness::new().await;
    let f = files(DB);
    let out = h.run(&refs(&f), Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    let state = h.state().await;
    assert_eq!(state.resources.len(), 6);
    let top = state
        .current(&"test_thing.top".parse().unwrap())
        .expect("top applied");
    // module.db.id was known only after applying module.db.test_thing.db.
    assert_eq!(
        top.value.get_attr("name").as_str(),
        Some("id-module.db.test_thing.db")
    );
    let names = &state.outputs["names"].value;
    assert_eq!(names.get_attr("x").as_str(), Some("app-x-0"));

    let again = h.run(&refs(&f), Operation::Plan).await;
    assert_eq!(
        again.status,
        RunStatus::Succeeded,
        "{}",
        again.diagnostics()
    );
    assert!(!again.plan().has_changes());

    // Renaming the database replaces it, and what uses its id after it.
    let renamed = DB.replace("name = \"db\"", "name = \"db2\"");
    let f2 = files(&renamed);
    let changed = h.run(&refs(&f2), Operation::Plan).await;
    let mut acted: Vec<(String, Action)> = changed
        .plan()
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| (c.addr.to_string(), c.action))
        .collect();
    acted.sort();
    assert_eq!(
        acted,
        [
            (
                "module.db.test_thing.db".to_string(),
                Action::DeleteThenCreate
            ),
            ("test_thing.top".to_string(), Action::DeleteThenCreate),
        ]
    );
}

#[tokio::test]
async fn a_module_instance_removed_from_for_each_is_destroyed_with_its_reason() {
    let h = Harness::new().await;
    let f = files(DB);
    assert_eq!(
        h.run(&refs(&f), Operation::Apply).await.status,
        RunStatus::Succeeded
    );
    let fewer = ROOT.replace("toset([\"x\", \"y\"])", "toset([\"x\"])");
    let f2 = vec![
        ("main.tf", fewer),
        ("app/main.tf", APP.to_string()),
        ("db/main.tf", DB.to_string()),
    ];
    let out = h.run(&refs(&f2), Operation::Plan).await;
    let deleted: Vec<String> = out
        .plan()
        .changes
        .iter()
        .filter(|c| c.action == Action::Delete)
        .map(|c| format!("{} {:?}", c.addr, c.reason))
        .collect();
    assert_eq!(
        deleted,
        [
            "module.app[\"y\"].test_thing.a[0] DeleteBecauseNoModule",
            "module.app[\"y\"].test_thing.a[1] DeleteBecauseNoModule",
        ]
    );
}

#[tokio::test]
async fn wrong_module_references_fail_the_run_with_their_location() {
    let h = Harness::new().await;
    let files = [("main.tf", "output \"o\" {\n  value = module.nope.x\n}\n")];
    let out = h.run(&files, Operation::Plan).await;
    assert_eq!(out.status, RunStatus::Failed);
    assert!(
        out.diagnostics()
            .contains("No module call named \"nope\" is declared in the root module."),
        "{}",
        out.diagnostics()
    );
}

#[tokio::test]
async fn a_resource_moved_into_a_module_is_not_replaced() {
    let h = Harness::new().await;
    let before = [(
        "main.tf",
        "resource \"test_thing\" \"t\" {\n  name = \"kept\"\n}\n",
    )];
    assert_eq!(
        h.run(&before, Operation::Apply).await.status,
        RunStatus::Succeeded
    );
    let after = [
        (
            "main.tf",
            "module \"m\" {\n  source = \"./m\"\n}\nmoved {\n  from = test_thing.t\n  to   = module.m.test_thing.t\n}\n",
        ),
        (
            "m/main.tf",
            "resource \"test_thing\" \"t\" {\n  name = \"kept\"\n}\n",
        ),
    ];
    let out = h.run(&after, Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    // The move is the only change (a plan with moves is not empty, as in
    // Terraform): the object itself is a no-op at its new address.
    let plan = out.plan();
    assert_eq!(plan.moved.len(), 1);
    assert!(
        plan.changes.iter().all(|c| c.action == Action::NoOp),
        "{:?}",
        plan.changes
    );
    let state = h.state().await;
    let moved = state
        .current(&"module.m.test_thing.t".parse().unwrap())
        .expect("moved object");
    // The same object: its id was made when it was created at the root.
    assert_eq!(moved.value.get_attr("id").as_str(), Some("id-test_thing.t"));
}

#[tokio::test]
async fn import_blocks_bring_objects_into_module_instances() {
    let h = Harness::new().await;
    let files = [
        (
            "main.tf",
            "variable \"id\" {\n  default = \"abc\"\n}\nmodule \"m\" {\n  source = \"./m\"\n  count  = 2\n}\nimport {\n  to = module.m[1].test_thing.t\n  id = var.id\n}\n",
        ),
        (
            "m/main.tf",
            "resource \"test_thing\" \"t\" {\n  name = \"imported-abc\"\n}\n",
        ),
    ];
    let out = h.run(&files, Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    let plan = out.plan();
    let imported: Vec<String> = plan.imports.keys().map(ToString::to_string).collect();
    assert_eq!(imported, ["module.m[1].test_thing.t"]);
    let action = |a: &str| {
        plan.changes
            .iter()
            .find(|c| c.addr.to_string() == a)
            .map(|c| c.action)
    };
    // Imported as it is (matching the configuration), the other created.
    assert_eq!(action("module.m[1].test_thing.t"), Some(Action::NoOp));
    assert_eq!(action("module.m[0].test_thing.t"), Some(Action::Create));
    let state = h.state().await;
    let t = state
        .current(&"module.m[1].test_thing.t".parse().unwrap())
        .unwrap();
    assert_eq!(t.value.get_attr("id").as_str(), Some("abc"));
}

#[tokio::test]
async fn depends_on_a_module_call_orders_everything_inside_after_it() {
    let h = Harness::new().await;
    let files = [
        (
            "main.tf",
            "resource \"test_thing\" \"first\" {\n  name = \"first\"\n}\nmodule \"m\" {\n  source     = \"./m\"\n  depends_on = [test_thing.first]\n}\nmodule \"free\" {\n  source = \"./m\"\n}\n",
        ),
        (
            "m/main.tf",
            "resource \"test_thing\" \"t\" {\n  name = \"t\"\n}\n",
        ),
    ];
    let out = h.run(&files, Operation::Plan).await;
    assert_eq!(out.status, RunStatus::Planned, "{}", out.diagnostics());
    let deps = |a: &str| -> Vec<String> {
        out.plan()
            .changes
            .iter()
            .find(|c| c.addr.to_string() == a)
            .unwrap()
            .dependencies
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(deps("module.m.test_thing.t"), ["test_thing.first"]);
    assert!(deps("module.free.test_thing.t").is_empty());
}

#[tokio::test]
async fn a_child_modules_variable_validation_fails_the_plan_at_the_argument() {
    let h = Harness::new().await;
    let child = "variable \"size\" {\n  type = number\n  validation {\n    condition     = var.size <= 10\n    error_message = \"The size must be at most 10.\"\n  }\n}\n";
    let ok = [
        (
            "main.tf",
            "module \"m\" {\n  source = \"./m\"\n  size   = 3\n}\n",
        ),
        ("m/main.tf", child),
    ];
    let out = h.run(&ok, Operation::Plan).await;
    assert_ne!(out.status, RunStatus::Failed, "{}", out.diagnostics());
    let bad = [
        (
            "main.tf",
            "module \"m\" {\n  source = \"./m\"\n  size   = 30\n}\n",
        ),
        ("m/main.tf", child),
    ];
    let out = h.run(&bad, Operation::Plan).await;
    assert_eq!(out.status, RunStatus::Failed);
    let text = out.diagnostics();
    assert!(text.contains("Invalid value for variable"), "{text}");
    assert!(text.contains("The size must be at most 10."), "{text}");
}

/// As in Terraform 1.11, a child module's output may carry a sensitive value
/// without declaring `sensitive = true`: the value stays sensitive where the
/// caller uses it, and only a root output showing it must declare it.
#[tokio::test]
async fn a_child_modules_output_carries_sensitivity_without_declaring_it() {
    let h = Harness::new().await;
    let child = "variable \"secret\" {\n  type      = string\n  sensitive = true\n}\noutput \"out\" {\n  value = var.secret\n}\n";
    let call = "module \"m\" {\n  source = \"./m\"\n  secret = \"hunter2\"\n}\n";
    let used = format!("{call}resource \"test_thing\" \"use\" {{\n  name = module.m.out\n}}\n");
    let out = h
        .run(&[("main.tf", &used), ("m/main.tf", child)], Operation::Plan)
        .await;
    assert_eq!(out.status, RunStatus::Planned, "{}", out.diagnostics());
    let change = out
        .plan()
        .changes
        .iter()
        .find(|c| c.addr.to_string() == "test_thing.use")
        .expect("a change for test_thing.use");
    let name = vec![fleetform_shared::value::PathStep::Key("name".into())];
    assert!(
        change.sensitive_paths.contains(&name),
        "{:?}",
        change.sensitive_paths
    );

    let shown = format!("{call}output \"root\" {{\n  value = module.m.out\n}}\n");
    let out = h
        .run(
            &[("main.tf", &shown), ("m/main.tf", child)],
            Operation::Plan,
        )
        .await;
    assert_eq!(out.status, RunStatus::Failed);
    let text = out.diagnostics();
    assert!(text.contains("Output refers to sensitive values"), "{text}");
    // The source location is checked against Terraform's by
    // tests/tests/sensitive.rs; here, that it is the root output's rule.
    assert!(text.contains("any root module output"), "{text}");
}

/// `n` independent `test_thing.x` instances (`count`).
/// The most a held worker saw at once is exactly the dispatch window: every
/// task was ready at once, and the worker answered none until no more came.
fn assert_held_a_window(most_held: &std::sync::atomic::AtomicUsize) {
    assert_eq!(
        most_held.load(std::sync::atomic::Ordering::Relaxed),
        super::ctx::DISPATCH_WINDOW
    );
}

/// More instances than the dispatch window.
const OVER_A_WINDOW: usize = super::ctx::DISPATCH_WINDOW + 904;

fn counted_things(n: usize) -> String {
    format!(
        "resource \"test_thing\" \"x\" {{\n  count = {n}\n  name  = \"x-${{count.index}}\"\n}}\n"
    )
}

#[tokio::test]
async fn an_apply_dispatches_at_most_its_window_of_operations_ahead_of_their_answers() {
    let (h, most_held) = Harness::holding_applies().await;
    let n = OVER_A_WINDOW;
    let config = counted_things(n);
    let out = h.run(&[("main.tf", &config)], Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    assert_eq!(h.state().await.resources.len(), n);
    assert_held_a_window(&most_held);
}

/// The providers' plans of destroys (`plan_destroy`) go out a window at a
/// time too: a destroy of 100,000 sent them all at once, each with a copy
/// of its object.
#[tokio::test]
async fn a_destroy_asks_the_provider_about_at_most_a_window_of_destroys_at_once() {
    let (h, most_held) = Harness::holding_plan_destroys().await;
    let n = OVER_A_WINDOW;
    let config = counted_things(n);
    let files = [("main.tf", config.as_str())];
    let out = h.run(&files, Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    assert_eq!(most_held.load(std::sync::atomic::Ordering::Relaxed), 0);
    let out = h.run(&files, Operation::Destroy).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    assert!(h.state().await.resources.is_empty());
    assert_held_a_window(&most_held);
}

/// Past the first window, the plans of destroys go out as answers come,
/// every answer already there at once: one publish per answer cost a
/// round trip to the queue each, and a destroy of 10,000 across a 50 ms
/// link took 319 s (bench/network.py, 2026-11-29). Before the fix this
/// counted one publish per instance past the window (905 here).
#[tokio::test]
async fn a_destroy_past_its_window_sends_the_plans_of_destroys_in_batches() {
    let (h, publishes) = Harness::counting_plan_destroy_publishes().await;
    let n = OVER_A_WINDOW;
    let config = counted_things(n);
    let files = [("main.tf", config.as_str())];
    let out = h.run(&files, Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    let out = h.run(&files, Operation::Destroy).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    assert!(h.state().await.resources.is_empty());
    let publishes = publishes.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        (2..=20).contains(&publishes),
        "{publishes} publishes for {n} plans of destroys"
    );
}

/// The plan walk sends the instances' plans a window at a time too, each
/// task made as it goes: a re-plan held every task, each with a copy of its
/// prior object and of the provider's configuration, in the queue to the
/// workers (93 MB of a 20,000 re-plan's 121 MB heap peak, in heaptrack).
#[tokio::test]
async fn a_plan_asks_the_provider_about_at_most_a_window_of_instances_at_once() {
    use std::sync::atomic::Ordering;
    let (h, most_held) = Harness::holding_plans().await;
    let n = OVER_A_WINDOW;
    let config = counted_things(n);
    let files = [("main.tf", config.as_str())];
    let out = h.run(&files, Operation::Plan).await;
    assert_eq!(out.status, RunStatus::Planned, "{}", out.diagnostics());
    assert_eq!(out.plan().changes.len(), n);
    assert_held_a_window(&most_held);
    let out = h.run(&files, Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    // A re-plan: each task gets its prior object from the state as it
    // goes; without it every instance would be planned as a create.
    most_held.store(0, Ordering::Relaxed);
    let out = h.run(&files, Operation::Plan).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    assert!(!out.plan().has_changes());
    assert_held_a_window(&most_held);
}

/// Planning tasks the queue refuses fail the plan with that error, and the
/// walk ends: the instances still waiting for room in the window count as
/// planned rather than wait for answers that cannot come.
#[tokio::test]
async fn a_plan_whose_waiting_tasks_cannot_be_dispatched_fails_and_ends() {
    let h = Harness::closing_at_first_plan().await;
    let config = counted_things(OVER_A_WINDOW);
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        h.run(&[("main.tf", &config)], Operation::Plan),
    )
    .await
    .expect("the run ends");
    assert_eq!(out.status, RunStatus::Failed);
    let diagnostics = out.diagnostics();
    assert_eq!(
        diagnostics
            .matches("Failed to dispatch planning tasks")
            .count(),
        1,
        "{diagnostics}"
    );
}

/// Each link of a chain of dependent creates is journaled in one durable
/// write: its result with the intent of the next link (before, an intent
/// and a result were two writes, two disk flushes, per link).
#[tokio::test]
async fn a_chain_costs_one_journal_write_per_link() {
    const LINKS: u64 = 12;
    let mut main = String::from("resource \"test_thing\" \"c0\" {\n  name = \"c0\"\n}\n");
    for i in 1..LINKS {
        main.push_str(&format!(
            "resource \"test_thing\" \"c{i}\" {{\n  name = \"c-${{test_thing.c{}.id}}\"\n}}\n",
            i - 1
        ));
    }
    let h = Harness::new().await;
    let before = h.journal_commits();
    let out = h.run(&[("main.tf", main.as_str())], Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    assert_eq!(h.state().await.resources.len() as u64, LINKS);
    let writes = h.journal_commits() - before;
    // One per link, and at most two more: the first intent and the last
    // result (each has no partner), and the outputs.
    assert!(
        (LINKS..=LINKS + 2).contains(&writes),
        "{writes} journal writes for {LINKS} links"
    );
}

/// A completion a watcher sees is journaled already: a process killed the
/// moment it shows "Creation complete" has the result on disk, and the
/// next process records it instead of reporting it interrupted. Checked
/// as each event is pushed, before the walk goes on.
#[tokio::test]
async fn a_completion_is_shown_only_once_it_is_journaled() {
    use fleetform_shared::state::StateDelta;
    use fleetform_shared::wire::RunEvent;
    use std::sync::{Arc, Mutex};
    let h = Harness::new().await;
    let mut main = String::from(
        "resource \"test_thing\" \"a\" {\n  count = 40\n  name  = \"a-${count.index}\"\n}\n",
    );
    // A chain too: its links' results are written with the next intents.
    main.push_str("resource \"test_thing\" \"b\" {\n  name = \"b-${test_thing.a[0].id}\"\n}\n");
    main.push_str("resource \"test_thing\" \"c\" {\n  name = \"c-${test_thing.b.id}\"\n}\n");
    let handle = h.submit(&[("main.tf", main.as_str())], Operation::Apply);
    let journal = h.coordinator.journal().clone();
    let run_id = handle.id.clone();
    let shown = Arc::new(Mutex::new(Vec::new()));
    let unwritten = Arc::new(Mutex::new(Vec::new()));
    let (s, u) = (shown.clone(), unwritten.clone());
    handle.events.observe(move |e| {
        let RunEvent::ApplyComplete { addr, .. } = e else {
            return;
        };
        s.lock().unwrap().push(addr.to_string());
        let written = journal.replay(&run_id).unwrap().iter().any(
            |d| matches!(d, StateDelta::SetCurrent { addr: a, object: Some(_), .. } if a == addr),
        );
        if !written {
            u.lock().unwrap().push(addr.to_string());
        }
    });
    let out = super::testkit::finished(&handle).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    assert_eq!(shown.lock().unwrap().len(), 42);
    let unwritten = unwritten.lock().unwrap();
    assert!(
        unwritten.is_empty(),
        "shown complete before journaled: {unwritten:?}"
    );
}

/// Progress is reported about once a second and at the end, not once per
/// operation: an apply of 100,000 instances held 100,000 such events.
#[tokio::test]
async fn an_apply_reports_progress_now_and_then_and_at_the_end() {
    use fleetform_shared::wire::RunEvent;
    const N: usize = 300;
    let h = Harness::new().await;
    let main = format!(
        "resource \"test_thing\" \"x\" {{\n  count = {N}\n  name  = \"x-${{count.index}}\"\n}}\n"
    );
    let started = std::time::Instant::now();
    let out = h.run(&[("main.tf", main.as_str())], Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    let progress: Vec<(usize, usize)> = out
        .events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Progress { done, total } => Some((*done, *total)),
            _ => None,
        })
        .collect();
    assert_eq!(
        progress.last(),
        Some(&(N, N)),
        "the last report says all are done"
    );
    let seconds = started.elapsed().as_secs() as usize;
    assert!(
        progress.len() <= seconds + 1,
        "{} progress events in {seconds} s",
        progress.len()
    );
}

/// A state store whose first save lands and is then reported as a
/// conflict with the serial it wrote, as when the write of a run's
/// earlier incarnation (its coordinator killed with the write in flight)
/// lands after the restarted coordinator read the head; with `landed`
/// false, the conflict is another writer's.
struct LateWrite {
    inner: crate::store::ObjectStateStore,
    landed: bool,
    tried: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl crate::store::StateStore for LateWrite {
    async fn head(&self, ws: &str) -> Result<Option<crate::store::Head>, crate::store::StoreError> {
        self.inner.head(ws).await
    }
    async fn load(
        &self,
        ws: &str,
    ) -> Result<Option<fleetform_shared::state::State>, crate::store::StoreError> {
        self.inner.load(ws).await
    }
    async fn save(
        &self,
        ws: &str,
        state: &fleetform_shared::state::State,
        origin: &crate::store::Origin,
    ) -> Result<(), crate::store::StoreError> {
        if self.tried.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return self.inner.save(ws, state, origin).await;
        }
        let origin = if self.landed {
            origin.clone()
        } else {
            crate::store::Origin::new("another-run", "apply")
        };
        self.inner.save(ws, state, &origin).await?;
        Err(crate::store::StoreError::Conflict {
            workspace: ws.to_string(),
            expected: state.serial - 1,
            found: state.serial,
        })
    }
    async fn load_serial(
        &self,
        ws: &str,
        serial: u64,
    ) -> Result<Option<fleetform_shared::state::State>, crate::store::StoreError> {
        self.inner.load_serial(ws, serial).await
    }
    async fn history(
        &self,
        ws: &str,
    ) -> Result<Vec<crate::store::HistoryEntry>, crate::store::StoreError> {
        self.inner.history(ws).await
    }
    async fn workspaces(
        &self,
        project: Option<&str>,
    ) -> Result<Vec<String>, crate::store::StoreError> {
        self.inner.workspaces(project).await
    }
    async fn create_workspace(&self, ws: &str) -> Result<bool, crate::store::StoreError> {
        self.inner.create_workspace(ws).await
    }
    async fn delete_workspace(&self, ws: &str) -> Result<(), crate::store::StoreError> {
        self.inner.delete_workspace(ws).await
    }
}

/// A run that finds its own snapshot written already (by itself, before a
/// restart) is done; a conflict with another run's snapshot still fails it.
#[tokio::test]
async fn a_run_that_finds_its_own_snapshot_written_is_done() {
    let config =
        "resource \"test_thing\" \"x\" {\n  count = 3\n  name  = \"x-${count.index}\"\n}\n";
    for landed in [true, false] {
        let store = LateWrite {
            inner: crate::store::open("memory://").unwrap(),
            landed,
            tried: Default::default(),
        };
        let h = Harness::on_store(std::sync::Arc::new(store)).await;
        let out = h.run(&[("main.tf", config)], Operation::Apply).await;
        let state = h.state().await;
        assert_eq!(state.serial, 1, "written once");
        assert_eq!(state.resources.len(), 3);
        if landed {
            assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
        } else {
            assert_eq!(out.status, RunStatus::Failed);
            assert!(
                out.diagnostics().contains("changed concurrently"),
                "{}",
                out.diagnostics()
            );
        }
    }
}
