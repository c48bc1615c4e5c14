//! Applying one half of a planned change: plan again with the final
//! configuration (the final plan must keep the first plan's promises), then
//! ApplyResourceChange; or read a data source whose read was deferred.

use super::contracts::{Subject, applied_known, final_plan_consistent, write_only_null};
use super::plan::Planner;
use super::upgrade::upgrade;
use super::{
    ApplyGate, Progress, ProviderSource, StopSignal, call_failed, data_source_schema,
    resource_schema,
};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::ApplyResourceChangeRequest;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ApplyOp, ApplyOutcome, ApplyTask, ProviderSpec};
use std::sync::Arc;

pub(super) async fn apply(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &ApplyTask,
    stop: &dyn StopSignal,
    progress: &Arc<dyn Progress>,
    gate: &dyn ApplyGate,
) -> Result<ApplyOutcome, Diagnostics> {
    // Destroy-time provisioners run before the delete; a failure (with
    // `on_failure = fail`) keeps the object, as Terraform does.
    let provisioned = if t.op == ApplyOp::Delete && !t.provisioners.is_empty() {
        let outcome = super::provision::run(&t.addr, &t.provisioners, stop, progress).await;
        if outcome.diagnostics.has_errors() {
            return Ok(ApplyOutcome {
                provisioned: outcome.steps,
                ..nothing_applied(outcome.diagnostics)
            });
        }
        outcome.steps
    } else {
        Vec::new()
    };
    let mut out = match apply_change(source, spec, run_id, t, gate).await {
        Ok(out) => out,
        // The provisioners' output is still shown.
        Err(d) if !provisioned.is_empty() => nothing_applied(d),
        Err(d) => return Err(d),
    };
    out.provisioned = provisioned;
    Ok(out)
}

async fn apply_change(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &ApplyTask,
    gate: &dyn ApplyGate,
) -> Result<ApplyOutcome, Diagnostics> {
    let (provider, schema) = source.configured(spec, run_id).await?;
    let subject = || Subject {
        provider: &spec.addr,
        addr: t.addr.to_string(),
    };
    if t.op == ApplyOp::Read {
        let dschema = data_source_schema(&schema, spec, &t.type_name)?;
        let read = super::read::read_data(
            provider.as_ref(),
            spec,
            dschema,
            subject(),
            &t.type_name,
            &t.config,
        )
        .await?;
        return Ok(ApplyOutcome {
            new_state: read.state,
            private: vec![],
            diagnostics: read.diagnostics,
            provisioned: vec![],
        });
    }
    let rschema = resource_schema(&schema, spec, &t.type_name)?;
    // The object as stored may be from an older schema version.
    let prior = match t.prior.clone() {
        Some(p) => Some(upgrade(provider.as_ref(), spec, rschema, &t.type_name, p).await?),
        None => None,
    };
    let prior_value = prior.as_ref().map_or(Value::null(), |p| p.value.clone());
    let prior_private = prior
        .as_ref()
        .map(|p| p.private.clone())
        .unwrap_or_default();
    let mut diagnostics = Diagnostics::new();
    let (planned, planned_private) = match t.op {
        // Open, Renew and Close are events' words only; no apply task has them.
        ApplyOp::Delete | ApplyOp::Read | ApplyOp::Open | ApplyOp::Renew | ApplyOp::Close => {
            (Value::null(), prior_private)
        }
        ApplyOp::Create | ApplyOp::Update => {
            let planner = Planner {
                provider: provider.as_ref(),
                valid: source.valid_configs(spec, run_id),
                spec,
                schema: rschema,
                type_name: &t.type_name,
                subject: subject(),
            };
            let resp = planner
                .plan(&prior_value, &t.config, &prior_private, &mut diagnostics)
                .await?;
            let Some(resp) = resp else {
                return Ok(nothing_applied(diagnostics));
            };
            if !resp.legacy_type_system {
                diagnostics.extend(final_plan_consistent(
                    &subject(),
                    &t.planned,
                    &resp.planned_state,
                ));
                if diagnostics.has_errors() {
                    return Ok(nothing_applied(diagnostics));
                }
            }
            (resp.planned_state, resp.planned_private)
        }
    };
    // In a span of its own: waiting for the task's claim (a create or an
    // update in a fleet, see `runtime`) is the queue's time, not the
    // provider's, though it falls inside the task's provider calls
    // (bench/hops.py tells them apart).
    let open = tracing::Instrument::instrument(gate.open(), tracing::info_span!("claim wait"));
    if !open.await {
        return Err(Diagnostic::error(
            "Operation not applied",
            format!(
                "{} was taken up before (by another worker, or before a crash); it is not applied again.",
                t.addr
            ),
        )
        .into());
    }
    let resp = provider
        .apply_resource_change(&ApplyResourceChangeRequest {
            type_name: t.type_name.clone(),
            prior_state: prior_value,
            planned_state: planned,
            config: t.config.clone(),
            planned_private,
        })
        .await
        .map_err(|e| call_failed(spec, "apply", e))?;
    diagnostics.extend(resp.diagnostics);
    let wrote_back = write_only_null(
        &subject(),
        &rschema.block,
        &resp.new_state,
        "Provider produced invalid object",
        "after apply",
    );
    if wrote_back.has_errors() {
        // Not recorded: the value it holds is the configuration's secret.
        diagnostics.extend(wrote_back);
        return Ok(ApplyOutcome {
            new_state: prior.as_ref().map_or(Value::null(), |p| p.value.clone()),
            private: prior.map(|p| p.private).unwrap_or_default(),
            diagnostics,
            provisioned: vec![],
        });
    }
    let (new_state, unknowns) = applied_known(&subject(), resp.new_state);
    diagnostics.extend(unknowns);
    Ok(ApplyOutcome {
        new_state,
        private: resp.private,
        diagnostics,
        provisioned: vec![],
    })
}

/// The apply stopped before ApplyResourceChange: nothing changed.
fn nothing_applied(diagnostics: Diagnostics) -> ApplyOutcome {
    ApplyOutcome {
        new_state: Value::null(),
        private: vec![],
        diagnostics,
        provisioned: vec![],
    }
}
