//! Running an instance's provisioners in order: each one's output and
//! failure, with `on_failure` deciding whether a failure stops the rest and
//! fails the operation.

use super::local_exec;
use super::{Progress, StopSignal};
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::{
    OnFailure, ProgressEvent, ProvisionOutcome, ProvisionStep, ProvisionerSpec,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// What replaces every output message when the arguments had sensitive
/// values (Terraform's text).
pub(super) const SUPPRESSED: &str = "(output suppressed due to sensitive value in config)";
/// The note for arguments derived from an ephemeral value.
pub(super) const SUPPRESSED_EPHEMERAL: &str =
    "(output suppressed due to ephemeral value in config)";

/// Runs the provisioners in order, reporting each one's start, output lines
/// and end to `progress` as they happen.
pub(super) async fn run(
    addr: &AbsResourceInstance,
    specs: &[ProvisionerSpec],
    stop: &dyn StopSignal,
    progress: &Arc<dyn Progress>,
) -> ProvisionOutcome {
    let mut out = ProvisionOutcome::default();
    for (step, spec) in specs.iter().enumerate() {
        let step = step as u32;
        progress.report(
            step,
            ProgressEvent::Started {
                provisioner: spec.kind.clone(),
            },
        );
        let seq = Arc::new(AtomicU32::new(0));
        let on_line: local_exec::OnLine = {
            let (progress, seq) = (progress.clone(), seq.clone());
            let suppress = suppressed_note(spec);
            Arc::new(move |line: &str| {
                let line = suppress.unwrap_or(line);
                let event = ProgressEvent::Output {
                    seq: seq.fetch_add(1, Ordering::Relaxed),
                    line: line.to_string(),
                };
                progress.report(step, event);
            })
        };
        let (output, result) = match spec.kind.as_str() {
            "local-exec" => local_exec::run(spec, stop, on_line).await,
            other => (
                vec![],
                Err(Diagnostic::error(
                    "Failed to obtain provisioner schema",
                    format!(
                        "Could not load the schema for provisioner \"{other}\": unavailable provisioner \"{other}\"."
                    ),
                )),
            ),
        };
        let output = match suppressed_note(spec) {
            Some(note) => output.iter().map(|_| note.to_string()).collect(),
            None => output,
        };
        progress.report(
            step,
            ProgressEvent::Finished {
                errored: result.is_err(),
                lines: seq.load(Ordering::Relaxed),
            },
        );
        out.steps.push(ProvisionStep {
            kind: spec.kind.clone(),
            output,
            errored: result.is_err(),
        });
        let Err(d) = result else { continue };
        match spec.on_failure {
            OnFailure::Continue => {
                tracing::warn!(%addr, provisioner = %spec.kind, problem = %d.detail, "provisioner failed; continuing as its on_failure says");
            }
            OnFailure::Fail => {
                let mut d = d.at_opt(spec.range.clone()).for_address(addr);
                d.context = spec.context.clone();
                out.diagnostics.push(d);
                break;
            }
        }
    }
    out
}

/// What replaces each output line of a provisioner whose arguments hold
/// a sensitive or ephemeral value.
fn suppressed_note(spec: &ProvisionerSpec) -> Option<&'static str> {
    match (spec.suppress_output, spec.ephemeral_config) {
        (_, true) => Some(SUPPRESSED_EPHEMERAL),
        (true, false) => Some(SUPPRESSED),
        (false, false) => None,
    }
}
