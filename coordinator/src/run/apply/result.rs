//! Checking what a worker reports for one operation: the provider
//! contract after apply, and the state changes to record either way (a
//! failed create that returned an object is kept, tainted).

use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::apply::OpKind;
use fleetform_shared::plan::{Action, ResourceChange};
use fleetform_shared::state::{InterruptedOp, ObjectState, ObjectStatus, StateDelta};
use fleetform_shared::value::{PathStep, Value, path_string};
use fleetform_shared::wire::{ApplyOutcome, TaskOutcome, TaskResult};

/// Checks one result: the worker that did it (or the problems) and the
/// state changes to record either way.
pub(in crate::run) fn finish(
    c: &ResourceChange,
    kind: OpKind,
    result: Option<TaskResult>,
    deposed_key: &str,
) -> (Result<String, Diagnostics>, Vec<StateDelta>, Option<Value>) {
    let Some(result) = result else {
        let d = Diagnostic::error("Lost an apply task", "the coordinator stopped waiting");
        return (Err(d.into()), vec![], None);
    };
    let worker = result.worker.clone();
    let outcome: ApplyOutcome = match result.outcome {
        TaskOutcome::Apply(o) => o,
        TaskOutcome::Failed(d) => return (Err(d), vec![], None),
        TaskOutcome::Interrupted { attempt } => {
            let (d, record) = interrupted(c, kind, &result.run_id, attempt);
            return (Err(d), vec![record], None);
        }
        // Only a restarted coordinator sees a provisioning result here (the
        // walk handles its own): the object stays tainted as journaled after
        // its create, so the next apply replaces it and provisions it again.
        TaskOutcome::Provision(o) => {
            let outcome = if o.diagnostics.has_errors() {
                Err(o.diagnostics)
            } else {
                Ok(worker)
            };
            return (outcome, vec![], None);
        }
        other => {
            let d = Diagnostic::error("Unexpected worker answer", format!("{other:?}"));
            return (Err(d.into()), vec![], None);
        }
    };
    if c.action == Action::Read {
        // A deferred data source: its value goes to the scope, and its
        // record to the state (the walk makes it: see `read_record`).
        if outcome.diagnostics.has_errors() {
            return (Err(outcome.diagnostics), vec![], None);
        }
        return (Ok(worker), vec![], Some(outcome.new_state));
    }
    let provider = c.provider.clone();
    match kind {
        OpKind::Destroy => {
            if outcome.diagnostics.has_errors() {
                return (Err(outcome.diagnostics), vec![], None);
            }
            let key = c.deposed.clone().or_else(|| {
                (c.action == Action::CreateThenDelete).then(|| deposed_key.to_string())
            });
            let delta = match key {
                Some(key) => StateDelta::SetDeposed {
                    addr: c.addr.clone(),
                    provider,
                    key,
                    object: None,
                },
                None => StateDelta::SetCurrent {
                    addr: c.addr.clone(),
                    provider,
                    object: None,
                },
            };
            (Ok(worker), vec![delta], None)
        }
        OpKind::Apply => {
            let mut diags = outcome.diagnostics;
            if !diags.has_errors() {
                diags.extend(check_applied(c, &outcome.new_state));
            }
            let object = (!outcome.new_state.is_null()).then(|| ObjectState {
                // Moved: the answer is this operation's alone.
                value: outcome.new_state,
                private: outcome.private,
                schema_version: c.schema_version,
                // Only a failed create taints (Terraform's rule): a failed
                // update keeps the object as the provider returned it.
                status: if diags.has_errors() && c.action != Action::Update {
                    ObjectStatus::Tainted
                } else {
                    ObjectStatus::Ready
                },
                dependencies: c.dependencies.clone(),
                create_before_destroy: c.create_before_destroy,
                sensitive_paths: c.sensitive_paths.to_vec(),
                value_sensitive_paths: Some(c.value_sensitive_paths.to_vec()),
                undecoded: false,
            });
            // A failed create that still produced an object keeps it, tainted,
            // so nothing real is ever forgotten.
            let deltas = if object.is_some() || !diags.has_errors() {
                vec![StateDelta::SetCurrent {
                    addr: c.addr.clone(),
                    provider,
                    object,
                }]
            } else {
                vec![]
            };
            if diags.has_errors() {
                (Err(diags), deltas, None)
            } else {
                (Ok(worker), deltas, None)
            }
        }
    }
}

/// "Provider produced inconsistent result after apply": known planned values
/// must be kept, and nothing may be left unknown.
fn check_applied(c: &ResourceChange, new_state: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if new_state.is_null() {
        diags.push(
            Diagnostic::error(
                "Provider produced inconsistent result after apply",
                format!("When applying changes to {}, provider \"{}\" produced a null object without an error.", c.addr, c.provider),
            )
            .for_address(&c.addr),
        );
        return diags;
    }
    let mut problems = Vec::new();
    new_state.walk(&mut Vec::new(), &mut |path: &[PathStep], v: &Value| {
        if v.is_unknown() {
            problems.push(format!(
                "{}: the provider left it unknown",
                path_string(path)
            ));
        }
    });
    if let Value::Map(planned) = &c.after {
        for (name, p) in planned {
            if p.is_wholly_known() && new_state.get_attr(name) != p {
                problems.push(format!(
                    ".{name}: was {}, but now {}",
                    inline(p),
                    inline(new_state.get_attr(name))
                ));
            }
        }
    }
    for p in problems {
        diags.push(
            Diagnostic::error(
                "Provider produced inconsistent result after apply",
                format!("When applying changes to {}, provider \"{}\" produced an unexpected new value: {p}.\n\nThis is a bug in the provider, which should be reported in the provider's own issue tracker.", c.addr, c.provider),
            )
            .for_address(&c.addr),
        );
    }
    diags
}

fn inline(v: &Value) -> String {
    fleetform_shared::plan::render_value(v)
}

/// An operation whose worker stopped: the error to report, and the
/// interruption recorded in the state, so the next plan can say so.
/// Nothing else is recorded: an update leaves the prior object (the next
/// plan refreshes it), a create leaves none.
fn interrupted(
    c: &ResourceChange,
    kind: OpKind,
    run_id: &str,
    attempt: u64,
) -> (Diagnostics, StateDelta) {
    let how = if attempt == 0 {
        "The process carrying out this operation stopped while it was in progress.".to_string()
    } else {
        format!(
            "The worker carrying out this operation stopped answering, and the operation was delivered again (attempt {attempt})."
        )
    };
    let d = Diagnostic::error(
        "Operation interrupted",
        format!(
            "{how} It may have reached the provider, so it was not repeated: repeating a create could make a second object. Check whether the object exists: import it if so, or apply again to create it."
        ),
    );
    let op = match (kind, c.action) {
        (OpKind::Destroy, _) => "delete",
        (OpKind::Apply, Action::Update) => "update",
        _ => "create",
    };
    let record = StateDelta::SetInterrupted {
        addr: c.addr.clone(),
        op: Some(InterruptedOp {
            run_id: run_id.to_string(),
            operation: op.to_string(),
            at: fleetform_lang::eval::now_rfc3339(),
        }),
    };
    (d.into(), record)
}
