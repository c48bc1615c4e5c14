//! Opening, renewing and closing one ephemeral resource instance:
//! validate and open; renew or close with the private data the coordinator
//! sends back. The value goes back to the coordinator in the task's result
//! and nowhere else: the worker keeps no copy. Which worker and which
//! provider process take a renewal or a close is the coordinator's
//! decision (`coordinator/src/run/apply/ephemeral.rs`): any worker of the
//! pool, with its process of the run's provider configuration; `private`
//! is all the protocol gives a provider to renew or close with.

use super::{ProviderSource, call_failed};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::{
    EphemeralResourceRequest, OpenEphemeralResourceRequest, ValidateResourceConfigRequest,
};
use fleetform_shared::wire::{
    CloseTask, OpenOutcome, OpenTask, ProviderSpec, RenewOutcome, RenewTask,
};

pub(super) async fn open(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &OpenTask,
) -> Result<OpenOutcome, Diagnostics> {
    let (provider, schema) = source.configured(spec, run_id).await?;
    if !schema.ephemeral_resources.contains_key(&t.type_name) {
        return Err(Diagnostic::error(
            "Invalid ephemeral resource",
            format!(
                "The provider {} does not support ephemeral resource \"{}\".",
                spec.addr, t.type_name
            ),
        )
        .into());
    }
    let failed = |diagnostics| OpenOutcome {
        result: fleetform_shared::value::Value::null(),
        private: None,
        renew_at: None,
        diagnostics,
    };
    let mut diagnostics = provider
        .validate_ephemeral_resource_config(&ValidateResourceConfigRequest {
            type_name: t.type_name.clone(),
            config: t.config.clone(),
        })
        .await
        .map_err(|e| call_failed(spec, "validate", e))?;
    if diagnostics.has_errors() {
        return Ok(failed(diagnostics));
    }
    let resp = provider
        .open_ephemeral_resource(&OpenEphemeralResourceRequest {
            type_name: t.type_name.clone(),
            config: t.config.clone(),
        })
        .await
        .map_err(|e| call_failed(spec, "open", e))?;
    diagnostics.extend(resp.diagnostics);
    if diagnostics.has_errors() {
        return Ok(failed(diagnostics));
    }
    if resp.result.is_null() || !resp.result.is_wholly_known() {
        diagnostics.push(Diagnostic::error(
            "Provider produced invalid ephemeral resource instance",
            format!(
                "The provider for {} produced an invalid result for {}: it must be a wholly known object. This is a bug in the provider, which should be reported in the provider's own issue tracker.",
                t.addr.resource.resource.type_name, t.addr
            ),
        ));
        return Ok(failed(diagnostics));
    }
    Ok(OpenOutcome {
        result: resp.result,
        private: resp.private,
        renew_at: resp.renew_at,
        diagnostics,
    })
}

/// RenewEphemeralResource: the provider's errors are in the outcome (the
/// coordinator holds them against the instance's dependents).
pub(super) async fn renew(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &RenewTask,
) -> Result<RenewOutcome, Diagnostics> {
    let (provider, _) = source.configured(spec, run_id).await?;
    let resp = provider
        .renew_ephemeral_resource(&EphemeralResourceRequest {
            type_name: t.type_name.clone(),
            private: t.private.clone(),
        })
        .await
        .map_err(|e| call_failed(spec, "renew", e))?;
    Ok(RenewOutcome {
        private: resp.private,
        renew_at: resp.renew_at,
        diagnostics: resp.diagnostics,
    })
}

pub(super) async fn close(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &CloseTask,
) -> Result<Diagnostics, Diagnostics> {
    let (provider, _) = source.configured_for_cleanup(spec, run_id).await?;
    provider
        .close_ephemeral_resource(&EphemeralResourceRequest {
            type_name: t.type_name.clone(),
            private: t.private.clone(),
        })
        .await
        .map_err(|e| call_failed(spec, "close", e))
}
