//! Running an instance's provisioners in order: each one's output and
//! failure, with `on_failure` deciding whether a failure stops the rest and
//! fails the operation.

use super::StopSignal;
use super::local_exec;
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::{OnFailure, ProvisionOutcome, ProvisionStep, ProvisionerSpec};

/// What replaces every output message when the arguments had sensitive
/// values (Terraform's text).
pub(super) const SUPPRESSED: &str = "(output suppressed due to sensitive value in config)";

pub(super) async fn run(
    addr: &AbsResourceInstance,
    specs: &[ProvisionerSpec],
    stop: &dyn StopSignal,
) -> ProvisionOutcome {
    let mut out = ProvisionOutcome::default();
    for spec in specs {
        let (output, result) = match spec.kind.as_str() {
            "local-exec" => local_exec::run(spec, stop).await,
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
        let output = if spec.suppress_output {
            output.iter().map(|_| SUPPRESSED.to_string()).collect()
        } else {
            output
        };
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
