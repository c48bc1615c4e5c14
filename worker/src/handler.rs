//! Carrying out one task: the provider calls of a plan or an apply of one
//! resource instance, and the checks Terraform core makes on their answers
//! (seeds/resource-instance-change-lifecycle.md).

use crate::plugin::Provider;
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::plan::proposed_new_state;
use fleetform_shared::provider::{
    ApplyResourceChangeRequest, PlanResourceChangeRequest, ReadResourceRequest,
};
use fleetform_shared::schema::{ProviderSchema, Schema};
use fleetform_shared::value::{PathStep, Value, path_string};
use fleetform_shared::wire::{
    ApplyOp, ApplyOutcome, ApplyTask, PlanOutcome, PlanTask, PriorObject, ProviderSpec, Task,
    TaskKind, TaskOutcome,
};
use std::sync::Arc;

/// Where the handler gets providers from: the plugin pool, or a fake in tests.
#[async_trait]
pub trait ProviderSource: Send + Sync {
    /// The provider's schema; starts the provider if needed, without configuring it.
    async fn schema(&self, spec: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics>;
    /// A provider configured with `spec.config`, with its schema.
    async fn configured(
        &self,
        spec: &ProviderSpec,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics>;
}

/// Runs a task to its outcome. Never panics on provider misbehaviour: every
/// problem becomes diagnostics in the outcome.
pub async fn handle(source: &dyn ProviderSource, task: &Task) -> TaskOutcome {
    let result = match &task.kind {
        TaskKind::Schema => source
            .schema(&task.provider)
            .await
            .map(|s| TaskOutcome::Schema(Box::new((*s).clone()))),
        TaskKind::Plan(p) => plan(source, &task.provider, p).await.map(TaskOutcome::Plan),
        TaskKind::Apply(a) => apply(source, &task.provider, a)
            .await
            .map(TaskOutcome::Apply),
        TaskKind::Read(_) => Err(Diagnostic::error(
            "Unsupported task",
            "data source reads are not implemented yet",
        )
        .into()),
    };
    result.unwrap_or_else(TaskOutcome::Failed)
}

fn resource_schema<'s>(
    schema: &'s ProviderSchema,
    spec: &ProviderSpec,
    type_name: &str,
) -> Result<&'s Schema, Diagnostics> {
    schema.resources.get(type_name).ok_or_else(|| {
        Diagnostic::error(
            "Invalid resource type",
            format!(
                "The provider {} does not support resource type \"{type_name}\".",
                spec.addr
            ),
        )
        .into()
    })
}

fn call_failed(spec: &ProviderSpec, what: &str, e: impl std::fmt::Display) -> Diagnostics {
    Diagnostic::error(
        format!("Plugin error during {what}"),
        format!("The plugin {} failed: {e}", spec.addr),
    )
    .into()
}

async fn plan(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    t: &PlanTask,
) -> Result<PlanOutcome, Diagnostics> {
    let (provider, schema) = source.configured(spec).await?;
    let rschema = resource_schema(&schema, spec, &t.type_name)?;
    let mut diagnostics = Diagnostics::new();
    let mut prior = t.prior.clone();
    if let (Some(p), true) = (&prior, t.refresh) {
        let resp = provider
            .read_resource(&ReadResourceRequest {
                type_name: t.type_name.clone(),
                current_state: p.value.clone(),
                private: p.private.clone(),
            })
            .await
            .map_err(|e| call_failed(spec, "refresh", e))?;
        let failed = resp.diagnostics.has_errors();
        diagnostics.extend(resp.diagnostics);
        if failed {
            return Ok(failed_plan(prior, diagnostics));
        }
        prior = (!resp.new_state.is_null()).then_some(PriorObject {
            value: resp.new_state,
            private: resp.private,
            schema_version: p.schema_version,
        });
    }
    let prior_value = prior
        .as_ref()
        .map(|p| p.value.clone())
        .unwrap_or(Value::Null);
    let prior_private = prior
        .as_ref()
        .map(|p| p.private.clone())
        .unwrap_or_default();
    let resp = plan_call(
        provider.as_ref(),
        spec,
        rschema,
        &t.type_name,
        &prior_value,
        &t.config,
        &prior_private,
    )
    .await?;
    let failed = resp.diagnostics.has_errors();
    diagnostics.extend(resp.diagnostics.clone());
    if failed {
        return Ok(failed_plan(prior, diagnostics));
    }
    diagnostics.extend(check_planned_against_config(
        spec,
        &t.addr.to_string(),
        rschema,
        &t.config,
        &prior_value,
        &resp.planned_state,
    ));
    let replace = prior.is_some()
        && !t.config.is_null()
        && (t.force_replace
            || (!resp.requires_replace.is_empty() && resp.planned_state != prior_value));
    if replace {
        // A replacement creates a new object: plan that create.
        let create = plan_call(
            provider.as_ref(),
            spec,
            rschema,
            &t.type_name,
            &Value::Null,
            &t.config,
            &[],
        )
        .await?;
        diagnostics.extend(create.diagnostics);
        return Ok(PlanOutcome {
            prior,
            planned: create.planned_state,
            planned_private: create.planned_private,
            requires_replace: resp.requires_replace,
            replace: true,
            diagnostics,
        });
    }
    Ok(PlanOutcome {
        prior,
        planned: resp.planned_state,
        planned_private: resp.planned_private,
        requires_replace: resp.requires_replace,
        replace: false,
        diagnostics,
    })
}

fn failed_plan(prior: Option<PriorObject>, diagnostics: Diagnostics) -> PlanOutcome {
    PlanOutcome {
        prior,
        planned: Value::Unknown,
        planned_private: vec![],
        requires_replace: vec![],
        replace: false,
        diagnostics,
    }
}

#[allow(clippy::too_many_arguments)]
async fn plan_call(
    provider: &dyn Provider,
    spec: &ProviderSpec,
    rschema: &Schema,
    type_name: &str,
    prior: &Value,
    config: &Value,
    prior_private: &[u8],
) -> Result<fleetform_shared::provider::PlanResourceChangeResponse, Diagnostics> {
    provider
        .plan_resource_change(&PlanResourceChangeRequest {
            type_name: type_name.to_string(),
            prior_state: prior.clone(),
            proposed_new_state: proposed_new_state(&rschema.block, prior, config),
            config: config.clone(),
            prior_private: prior_private.to_vec(),
        })
        .await
        .map_err(|e| call_failed(spec, "plan", e))
}

async fn apply(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    t: &ApplyTask,
) -> Result<ApplyOutcome, Diagnostics> {
    let (provider, schema) = source.configured(spec).await?;
    let rschema = resource_schema(&schema, spec, &t.type_name)?;
    let prior_value = t
        .prior
        .as_ref()
        .map(|p| p.value.clone())
        .unwrap_or(Value::Null);
    let prior_private = t
        .prior
        .as_ref()
        .map(|p| p.private.clone())
        .unwrap_or_default();
    let (planned, planned_private, mut diagnostics) = match t.op {
        ApplyOp::Delete => (Value::Null, prior_private.clone(), Diagnostics::new()),
        ApplyOp::Read => {
            return Err(Diagnostic::error(
                "Unsupported task",
                "data source reads are not yet carried out by workers",
            )
            .into());
        }
        ApplyOp::Create | ApplyOp::Update => {
            // Plan again with the final configuration; it must keep every
            // promise the first plan made.
            let resp = plan_call(
                provider.as_ref(),
                spec,
                rschema,
                &t.type_name,
                &prior_value,
                &t.config,
                &prior_private,
            )
            .await?;
            if resp.diagnostics.has_errors() {
                return Ok(ApplyOutcome {
                    new_state: Value::Null,
                    private: vec![],
                    diagnostics: resp.diagnostics,
                });
            }
            let mut d = resp.diagnostics;
            d.extend(check_final_plan(
                spec,
                &t.addr.to_string(),
                &t.planned,
                &resp.planned_state,
            ));
            if d.has_errors() {
                return Ok(ApplyOutcome {
                    new_state: Value::Null,
                    private: vec![],
                    diagnostics: d,
                });
            }
            (resp.planned_state, resp.planned_private, d)
        }
    };
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
    Ok(ApplyOutcome {
        new_state: resp.new_state,
        private: resp.private,
        diagnostics,
    })
}

/// "Provider produced inconsistent final plan": a value known in the first
/// plan must be identical in the second.
fn check_final_plan(spec: &ProviderSpec, addr: &str, first: &Value, second: &Value) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let mut problems = Vec::new();
    first.walk(&mut Vec::new(), &mut |path: &[PathStep], v: &Value| {
        if v.is_wholly_known()
            && !path.is_empty()
            && second.at_path(path) != Some(v)
            && parent_known(first, path)
        {
            problems.push(path.to_vec());
        }
    });
    problems.dedup_by(|a, b| a.starts_with(b));
    for p in problems {
        diags.push(
            Diagnostic::error(
                "Provider produced inconsistent final plan",
                format!(
                    "When expanding the plan for {addr} to include new values learned so far during apply, provider \"{}\" produced an invalid new value for .{}: was {}, but now {}.\n\nThis is a bug in the provider, which should be reported in the provider's own issue tracker.",
                    spec.addr,
                    path_string(&p),
                    fleetform_shared::plan::render_value(first.at_path(&p).unwrap_or(&Value::Null)),
                    fleetform_shared::plan::render_value(second.at_path(&p).unwrap_or(&Value::Null)),
                ),
            )
            .for_address(addr),
        );
    }
    diags
}

/// Only report the outermost differing known value.
fn parent_known(v: &Value, path: &[PathStep]) -> bool {
    path.len() <= 1
        || !v
            .at_path(&path[..path.len() - 1])
            .is_some_and(Value::is_wholly_known)
}

/// A non-computed attribute set in configuration must be planned as the
/// configuration says (or as the prior value, for normalisation).
fn check_planned_against_config(
    spec: &ProviderSpec,
    addr: &str,
    schema: &Schema,
    config: &Value,
    prior: &Value,
    planned: &Value,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if config.is_null() {
        return diags;
    }
    for (name, attr) in &schema.block.attributes {
        let c = config.get_attr(name);
        let p = planned.get_attr(name);
        if attr.computed || c.is_unknown() {
            continue;
        }
        if p != c && p != prior.get_attr(name) {
            diags.push(
                Diagnostic::error(
                    "Provider produced invalid plan",
                    format!(
                        "Provider \"{}\" planned an invalid value for {addr}.{name}: planned value {} does not match config value {}.\n\nThis is a bug in the provider, which should be reported in the provider's own issue tracker.",
                        spec.addr,
                        fleetform_shared::plan::render_value(p),
                        fleetform_shared::plan::render_value(c)
                    ),
                )
                .for_address(addr),
            );
        }
    }
    diags
}
