//! Provider functions in a run on the in-process harness: calls go to the
//! worker as tasks, each distinct call once per run.

use crate::run::testkit::Harness;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{Operation, RunStatus};
use std::sync::atomic::Ordering;

const CONFIG: &str = r#"
terraform {
  required_providers {
    test = { source = "hashicorp/test" }
  }
}

resource "test_thing" "a" {
  name = provider::test::echo("a")
}

resource "test_thing" "b" {
  name = provider::test::echo(test_thing.a.id)
}

locals {
  again = provider::test::echo("a")
  other = provider::test::echo("b")
}

output "again" { value = local.again }
output "other" { value = local.other }
output "of_b" { value = test_thing.b.name }
"#;

// The evaluator waits for a call's task in place, which needs a runtime
// with more than one thread (as the coordinator and the CLI have).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_distinct_call_is_one_task_for_plan_and_apply() {
    let (h, calls) = Harness::counting_functions().await;
    let out = h.run(&[("main.tf", CONFIG)], Operation::Apply).await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    let state = h.state().await;
    let name = |r: &str| {
        state
            .resources
            .iter()
            .find(|(a, _)| a.resource.resource.name == r)
            .and_then(|(_, i)| i.current.as_ref())
            .map(|o| o.value.get_attr("name").clone())
    };
    assert_eq!(name("a"), Some(Value::from("echo:a")));
    assert_eq!(name("b"), Some(Value::from("echo:id-test_thing.a")));
    assert_eq!(
        state.outputs.get("again").map(|o| o.value.clone()),
        Some(Value::from("echo:a"))
    );
    // echo("a"), echo("b"), and echo(<a's id>) once the id is known at
    // apply; while planning that argument was unknown and nothing was asked.
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_function_the_provider_lacks_fails_the_plan_at_the_call() {
    let (h, calls) = Harness::counting_functions().await;
    let config = CONFIG.replace("echo(\"b\")", "shout(\"b\")");
    let out = h.run(&[("main.tf", &config)], Operation::Plan).await;
    assert_eq!(out.status, RunStatus::Failed);
    assert!(
        out.diagnostics().contains(
            "Unknown provider function: The function \"shout\" is not available from the provider \"test\"."
        ),
        "{}",
        out.diagnostics()
    );
    // Only echo("a") reached the worker: the missing function never does.
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
