//! Failure isolation in the apply walk, in process ([`super::testkit`]):
//! the real plan and apply walks against the fake provider, whose creates
//! of the instances named fail.

use super::testkit::{Harness, answer};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::{Operation, RunStatus, TaskKind, TaskOutcome};
use std::collections::BTreeSet;

/// A harness whose provider fails the apply of every instance in `failing`.
async fn failing(failing: &'static [&'static str]) -> Harness {
    Harness::with_worker(move |mut ends| async move {
        while let Some((task, _)) = ends.tasks.recv().await {
            let fails = matches!(&task.kind, TaskKind::Apply(a) if failing.contains(&a.addr.to_string().as_str()));
            let mut result = answer(task);
            if fails {
                result.outcome =
                    TaskOutcome::Failed(Diagnostic::error("Boom", "the cloud said no").into());
            }
            let _ = ends.results.send(result);
        }
    })
    .await
}

const LAYERS: &str = r#"
resource "test_thing" "a" {
  count = 4
  name  = "a-${count.index}"
}

resource "test_thing" "b" {
  count = 4
  name  = test_thing.a[count.index].id
}

resource "test_thing" "c" {
  for_each = toset(["0", "1", "2", "3"])
  name     = test_thing.b[tonumber(each.key)].id
}

resource "test_thing" "whole" {
  name = join(",", test_thing.a[*].id)
}

locals {
  ids = test_thing.a[*].id
}

resource "test_thing" "via_local" {
  count = 4
  name  = local.ids[count.index]
}

resource "test_thing" "mixed" {
  count = 4
  name  = "${test_thing.a[count.index].id}/${test_thing.a[0].id}"
}

locals {
  first = test_thing.a[0].id
}

resource "test_thing" "uses_first" {
  count = 4
  name  = "${local.first}-${count.index}"
}

module "m" {
  source = "./m"
  count  = 4
  id     = test_thing.a[count.index].id
}

resource "test_thing" "after_module" {
  count = 4
  name  = module.m[count.index].name
}
"#;

const MODULE: &str = r#"
variable "id" {
  type = string
}

resource "test_thing" "in" {
  name = "in-${var.id}"
}

output "name" {
  value = test_thing.in.name
}
"#;

#[tokio::test]
async fn a_failed_instance_holds_back_only_what_reads_it() {
    let h = failing(&["test_thing.a[2]"]).await;
    let out = h
        .run(
            &[("main.tf", LAYERS), ("m/main.tf", MODULE)],
            Operation::Apply,
        )
        .await;
    assert_eq!(out.status, RunStatus::Failed, "{}", out.diagnostics());
    let state = h.state().await;
    let made: BTreeSet<String> = state.resources.keys().map(|a| a.to_string()).collect();
    let want: BTreeSet<String> = [
        "test_thing.a[0]",
        "test_thing.a[1]",
        "test_thing.a[3]",
        // b[2] reads a[2]; the rest read other instances.
        "test_thing.b[0]",
        "test_thing.b[1]",
        "test_thing.b[3]",
        // c["2"] reads b[2], which was skipped.
        "test_thing.c[\"0\"]",
        "test_thing.c[\"1\"]",
        "test_thing.c[\"3\"]",
        // Each reads a[0] besides its own: only mixed[2] reads a[2].
        "test_thing.mixed[0]",
        "test_thing.mixed[1]",
        "test_thing.mixed[3]",
        // Through a local that reads a[0].
        "test_thing.uses_first[0]",
        "test_thing.uses_first[1]",
        "test_thing.uses_first[2]",
        "test_thing.uses_first[3]",
        // Through the module's input: module.m[2] reads a[2].
        "module.m[0].test_thing.in",
        "module.m[1].test_thing.in",
        "module.m[3].test_thing.in",
        // Through the module's output: after_module[2] reads module.m[2].
        "test_thing.after_module[0]",
        "test_thing.after_module[1]",
        "test_thing.after_module[3]",
        // `whole` reads every instance (a splat), `via_local` reads them
        // through a local: Terraform's rule, all held back.
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    assert_eq!(made, want, "{}", out.diagnostics());
    let said = out.diagnostics();
    assert!(
        said.contains(
            "test_thing.b[2]: skipped because it reads test_thing.a[2], which failed or was skipped"
        ),
        "{said}"
    );
    assert!(
        said.contains("test_thing.whole: skipped because it reads test_thing.a as a whole, and 1 of its instances failed"),
        "{said}"
    );
    assert!(
        said.contains("test_thing.via_local[0]: skipped because it reads test_thing.a as a whole"),
        "{said}"
    );
    assert!(
        said.contains("10 operation(s) that depend on a failed instance were skipped; 19 went on"),
        "{said}"
    );
    assert!(
        said.contains("test_thing.after_module[2]: skipped because it reads module.m[2].test_thing.in, which failed or was skipped"),
        "{said}"
    );
}

#[tokio::test]
async fn without_failures_nothing_is_held_back_or_said() {
    let h = failing(&[]).await;
    let out = h
        .run(
            &[("main.tf", LAYERS), ("m/main.tf", MODULE)],
            Operation::Apply,
        )
        .await;
    assert_eq!(out.status, RunStatus::Succeeded, "{}", out.diagnostics());
    assert_eq!(h.state().await.resources.len(), 4 * 8 + 1);
    assert!(
        !out.diagnostics().contains("held back"),
        "{}",
        out.diagnostics()
    );
}
