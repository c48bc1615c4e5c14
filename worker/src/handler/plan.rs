//! Planning one managed resource instance: refresh the prior object, then
//! ValidateResourceConfig and PlanResourceChange (twice for a replacement),
//! checking every planned object against the configuration.

use super::contracts::{Subject, plan_valid, write_only_null};
use super::upgrade::upgrade;
use super::valid::ValidConfigs;
use super::{ProviderSource, call_failed, resource_schema};
use crate::plugin::Provider;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::plan::proposed_new_state;
use fleetform_shared::provider::{
    PlanResourceChangeRequest, PlanResourceChangeResponse, ReadResourceRequest,
    ValidateResourceConfigRequest,
};
use fleetform_shared::schema::Schema;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{PlanOutcome, PlanTask, PriorObject, ProviderSpec};
use std::sync::Arc;

pub(super) async fn plan(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &PlanTask,
) -> Result<PlanOutcome, Diagnostics> {
    let (provider, schema) = source.configured(spec, run_id).await?;
    let rschema = resource_schema(&schema, spec, &t.type_name)?;
    let mut diagnostics = Diagnostics::new();
    let mut prior = match t.prior.clone() {
        Some(p) => match upgrade(provider.as_ref(), spec, rschema, &t.type_name, p.clone()).await {
            Ok(u) => Some(u),
            Err(d) => {
                diagnostics.extend(d);
                return Ok(failed_plan(Some(p), diagnostics));
            }
        },
        None => None,
    };
    let upgraded = match (&prior, &t.prior) {
        (Some(u), Some(given)) if u.value != given.value => Some(u.value.clone()),
        _ => None,
    };
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
    let planner = Planner {
        provider: provider.as_ref(),
        valid: source.valid_configs(spec, run_id),
        spec,
        schema: rschema,
        type_name: &t.type_name,
        subject: Subject {
            provider: &spec.addr,
            addr: t.addr.to_string(),
        },
    };
    let prior_value = prior.as_ref().map_or(Value::null(), |p| p.value.clone());
    let prior_private = prior
        .as_ref()
        .map(|p| p.private.clone())
        .unwrap_or_default();
    let resp = planner
        .plan(&prior_value, &t.config, &prior_private, &mut diagnostics)
        .await?;
    let Some(resp) = resp else {
        return Ok(failed_plan(prior, diagnostics));
    };
    let replace = prior.is_some()
        && !t.config.is_null()
        && (t.force_replace
            || (!resp.requires_replace.is_empty() && resp.planned_state != prior_value));
    if !replace {
        return Ok(PlanOutcome {
            prior,
            upgraded,
            planned: resp.planned_state,
            planned_private: resp.planned_private,
            requires_replace: resp.requires_replace,
            replace: false,
            diagnostics,
        });
    }
    // A replacement creates a new object: plan that create.
    let create = planner
        .plan(&Value::null(), &t.config, &[], &mut diagnostics)
        .await?;
    let Some(create) = create else {
        return Ok(failed_plan(prior, diagnostics));
    };
    Ok(PlanOutcome {
        prior,
        upgraded,
        planned: create.planned_state,
        planned_private: create.planned_private,
        requires_replace: resp.requires_replace,
        replace: true,
        diagnostics,
    })
}

fn failed_plan(prior: Option<PriorObject>, diagnostics: Diagnostics) -> PlanOutcome {
    PlanOutcome {
        prior,
        upgraded: None,
        planned: Value::unknown(),
        planned_private: vec![],
        requires_replace: vec![],
        replace: false,
        diagnostics,
    }
}

/// One instance's planning calls, shared by the plan and the final plan.
pub(super) struct Planner<'a> {
    pub provider: &'a dyn Provider,
    /// Configurations found valid earlier in the run ([`ValidConfigs`]).
    pub valid: Option<Arc<ValidConfigs>>,
    pub spec: &'a ProviderSpec,
    pub schema: &'a Schema,
    pub type_name: &'a str,
    pub subject: Subject<'a>,
}

impl Planner<'_> {
    /// Validates the configuration (Terraform validates again before every
    /// plan: values unknown at validation may be known now; unless this run
    /// found the same configuration valid already, see [`ValidConfigs`]), plans, and
    /// checks the planned object. `None` when there were errors; they are
    /// in `diagnostics`.
    pub async fn plan(
        &self,
        prior: &Value,
        config: &Value,
        prior_private: &[u8],
        diagnostics: &mut Diagnostics,
    ) -> Result<Option<PlanResourceChangeResponse>, Diagnostics> {
        let digest = match (&self.valid, config.is_null()) {
            (Some(_), false) => ValidConfigs::digest(self.type_name, config),
            _ => None,
        };
        let validated = matches!((&self.valid, &digest), (Some(v), Some(d)) if v.contains(d));
        if !config.is_null() && !validated {
            let d = self
                .provider
                .validate_resource_config(&ValidateResourceConfigRequest {
                    type_name: self.type_name.to_string(),
                    config: config.clone(),
                })
                .await
                .map_err(|e| call_failed(self.spec, "validate", e))?;
            if let (Some(v), Some(digest), true) = (&self.valid, digest, d.is_empty()) {
                v.insert(digest);
            }
            let failed = d.has_errors();
            diagnostics.extend(d);
            if failed {
                return Ok(None);
            }
        }
        let resp = self
            .provider
            .plan_resource_change(&PlanResourceChangeRequest {
                type_name: self.type_name.to_string(),
                prior_state: prior.clone(),
                proposed_new_state: proposed_new_state(&self.schema.block, prior, config),
                config: config.clone(),
                prior_private: prior_private.to_vec(),
            })
            .await
            .map_err(|e| call_failed(self.spec, "plan", e))?;
        let failed = resp.diagnostics.has_errors();
        diagnostics.extend(resp.diagnostics.clone());
        if failed {
            return Ok(None);
        }
        // Terraform exempts the legacy SDK from the plan contract: its
        // providers cannot keep it, and only log the violations.
        let d = write_only_null(
            &self.subject,
            &self.schema.block,
            &resp.planned_state,
            "Provider produced invalid plan",
            "during planning",
        );
        if d.has_errors() {
            diagnostics.extend(d);
            return Ok(None);
        }
        if !resp.legacy_type_system {
            let d = plan_valid(
                &self.subject,
                &self.schema.block,
                config,
                prior,
                &resp.planned_state,
            );
            if d.has_errors() {
                diagnostics.extend(d);
                return Ok(None);
            }
        }
        Ok(Some(resp))
    }
}
