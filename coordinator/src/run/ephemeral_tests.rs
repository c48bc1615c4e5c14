//! Ephemeral root variables through a plan and the apply of the saved
//! plan: kept out of the plan, asked for again, never in state.

use super::testkit::{Harness, Outcome, finished, request};
use fleetform_shared::plan::Plan;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{Operation, RunStatus, VariableArg};
use std::sync::Arc;

const CONFIG: &str = r#"
variable "token" {
  type      = string
  ephemeral = true
}

variable "region" {
  type    = string
  default = "r1"
}

locals {
  bearer = "Bearer ${var.token}"
}

resource "test_thing" "a" {
  name = ephemeralasnull(local.bearer)
  tags = {
    region = var.region
  }
}
"#;

fn var(name: &str, value: &str) -> VariableArg {
    VariableArg::Var {
        name: name.into(),
        value: value.into(),
    }
}

async fn apply_saved(h: &Harness, plan: &Plan, vars: Vec<VariableArg>) -> Outcome {
    let mut r = request(&[("main.tf", CONFIG)], Operation::Apply, true);
    r.saved_plan = Some(Arc::new(plan.clone()));
    r.variables = vars;
    finished(&h.coordinator.submit("default", r)).await
}

#[tokio::test]
async fn an_ephemeral_variable_stays_out_of_the_plan_and_state_and_is_given_again() {
    let h = Harness::new().await;
    let mut r = request(&[("main.tf", CONFIG)], Operation::Plan, true);
    r.variables = vec![var("token", "s3cret")];
    let planned = finished(&h.coordinator.submit("default", r)).await;
    assert_eq!(
        planned.status,
        RunStatus::Planned,
        "{}",
        planned.diagnostics()
    );
    let plan = planned.plan().clone();
    assert_eq!(
        plan.variables.keys().collect::<Vec<_>>(),
        ["region"],
        "ephemeral variables are not recorded"
    );
    assert_eq!(plan.apply_time_variables, ["token"]);
    assert!(!format!("{plan:?}").contains("s3cret"));

    let missing = apply_saved(&h, &plan, Vec::new()).await;
    assert_eq!(missing.status, RunStatus::Failed);
    assert!(
        missing.diagnostics().contains(
            "The ephemeral input variable \"token\" was set during the plan phase, and so must also be set during the apply phase."
        ),
        "{}",
        missing.diagnostics()
    );
    let other = apply_saved(&h, &plan, vec![var("token", "s3cret"), var("region", "r2")]).await;
    assert_eq!(other.status, RunStatus::Failed);
    assert!(
        other
            .diagnostics()
            .contains("A variable named \"region\" was assigned on the command line"),
        "{}",
        other.diagnostics()
    );

    let applied = apply_saved(&h, &plan, vec![var("token", "an0ther")]).await;
    assert_eq!(
        applied.status,
        RunStatus::Succeeded,
        "{}",
        applied.diagnostics()
    );
    let state = h.state().await;
    let obj = state
        .current(&"test_thing.a".parse().unwrap())
        .expect("applied");
    assert_eq!(
        obj.value.as_map().unwrap().get("name"),
        Some(&Value::null())
    );
    let recorded = format!("{state:?}");
    assert!(!recorded.contains("s3cret") && !recorded.contains("an0ther"));
}
