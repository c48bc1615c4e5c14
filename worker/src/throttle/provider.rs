//! [`ThrottledSource`]: the handler's provider source with every provider
//! it hands out wrapped, so that calls to a provider wait for a slot under
//! its limit, and calls it refuses with a throttling error are retried
//! when that is safe.
//!
//! Which calls are retried: a throttling error means the provider (its
//! API) refused the call before doing anything, so repeating it cannot do
//! anything twice. That holds for reads and plans always, as they change
//! nothing (ReadResource, PlanResourceChange, ReadDataSource,
//! ImportResourceState). ApplyResourceChange is retried only when the
//! provider also answered the prior object unchanged (no object for a
//! create): a provider that made part of a change before it was throttled
//! (created the object, then a tagging call was refused) answers the new
//! object, and then its error is reported as it is, since repeating the
//! create would make a second object. Validation, schema, upgrade and
//! configuration calls are local to the provider: they neither take a slot
//! nor get retried.

use super::aimd::Gate;
use super::classify::{MARKERS, retry_after, throttling};
use super::{Notice, Throttles};
use crate::handler::{Progress, ProviderSource, StopSignal};
use crate::plugin::{Provider, ProviderError};
use async_trait::async_trait;
use fleetform_shared::addr::ProviderAddr;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::{
    ApplyResourceChangeRequest, ApplyResourceChangeResponse, ConfigureProviderRequest,
    GetProviderSchemaResponse, ImportResourceStateRequest, ImportResourceStateResponse,
    PlanResourceChangeRequest, PlanResourceChangeResponse, ReadDataSourceRequest,
    ReadDataSourceResponse, ReadResourceRequest, ReadResourceResponse, UpgradeResourceStateRequest,
    UpgradeResourceStateResponse, ValidateProviderConfigRequest, ValidateResourceConfigRequest,
};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::wire::{ProgressEvent, ProviderSpec, ProviderThrottled};
use std::future::Future;
use std::sync::Arc;

/// How long calls a provider refuses with a retry-after are tried again
/// before its error is reported: rate limiting is transient, and a call
/// refused this long finds a provider whose account is not giving back
/// (Terraform's AWS provider retries such errors 25 times by default).
const RATE_LIMITED_FOR: std::time::Duration = std::time::Duration::from_secs(300);

/// Who makes a task's provider calls: the worker, where its notices go,
/// and when its run is cancelled (a retry then stops waiting).
pub struct CallContext {
    pub worker: String,
    pub progress: Arc<dyn Progress>,
    pub stop: Arc<dyn StopSignal>,
}

/// A provider source whose providers obey the worker's [`Throttles`].
pub struct ThrottledSource<'a> {
    pub inner: &'a dyn ProviderSource,
    pub throttles: Arc<Throttles>,
    pub context: Arc<CallContext>,
}

#[async_trait]
impl ProviderSource for ThrottledSource<'_> {
    async fn fingerprint(&self, spec: &ProviderSpec) -> Result<String, Diagnostics> {
        self.inner.fingerprint(spec).await
    }

    async fn schema(&self, spec: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics> {
        self.inner.schema(spec).await
    }

    async fn configured(
        &self,
        spec: &ProviderSpec,
        run_id: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        let (inner, schema) = self.inner.configured(spec, run_id).await?;
        let provider = Arc::new(ThrottledProvider {
            inner,
            gate: self.throttles.gate(&spec.addr),
            throttles: self.throttles.clone(),
            provider: spec.addr.clone(),
            run_id: run_id.to_string(),
            context: self.context.clone(),
        });
        Ok((provider, schema))
    }

    /// A clean-up (an ephemeral resource's close, after a cancel too) is
    /// one call, and is not held back.
    async fn configured_for_cleanup(
        &self,
        spec: &ProviderSpec,
        run_id: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        self.inner.configured_for_cleanup(spec, run_id).await
    }

    /// Functions are not throttled: they call no API, only the plugin.
    async fn call_function(
        &self,
        spec: &ProviderSpec,
        req: &fleetform_shared::provider::CallFunctionRequest,
        signature: &fleetform_shared::function::FunctionSignature,
    ) -> Result<fleetform_shared::provider::CallFunctionResponse, Diagnostics> {
        self.inner.call_function(spec, req, signature).await
    }

    fn valid_configs(
        &self,
        spec: &ProviderSpec,
        run_id: &str,
    ) -> Option<Arc<crate::handler::valid::ValidConfigs>> {
        self.inner.valid_configs(spec, run_id)
    }

    async fn stop_run(&self, run_id: &str) {
        self.inner.stop_run(run_id).await
    }

    async fn finish_run(&self, run_id: &str) {
        self.inner.finish_run(run_id).await
    }
}

struct ThrottledProvider {
    inner: Arc<dyn Provider>,
    gate: Arc<Gate>,
    throttles: Arc<Throttles>,
    provider: ProviderAddr,
    run_id: String,
    context: Arc<CallContext>,
}

/// What a throttling error says, for the notice: its summary, or its
/// detail when the summary does not say it (cut to one short line).
fn said(d: &Diagnostic) -> String {
    let summary = d.summary.to_lowercase();
    let text = if MARKERS.iter().any(|m| summary.contains(m)) || d.detail.is_empty() {
        &d.summary
    } else {
        &d.detail
    };
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// A call the provider refused by throttling it: what it said, and the
/// wait it asked for, if it said one.
struct Refusal {
    message: String,
    retry_after: Option<std::time::Duration>,
}

fn refused(diags: &Diagnostics) -> Option<Refusal> {
    throttling(diags).map(|d| Refusal {
        message: said(d),
        retry_after: retry_after(d),
    })
}

/// Sends the run a notice, and logs it.
fn tell(context: &CallContext, n: ProviderThrottled) {
    tracing::warn!(provider = %n.provider, limit_before = n.limit_before, limit = n.limit, retry_in_ms = n.retry_in_ms, errors = n.errors, message = %n.message, "provider throttled: retrying with backoff at a lower concurrency");
    context.progress.report(0, ProgressEvent::Throttled(n));
}

impl ThrottledProvider {
    fn tell(&self, n: ProviderThrottled) {
        tell(&self.context, n);
    }

    /// Makes a call in a slot of the provider's gate. An answer that
    /// `throttled` calls refused (with what the provider said) is retried
    /// after a backoff, up to the attempts allowed; then, or when the run
    /// is cancelled meanwhile, the last answer is returned as it is.
    async fn call<T, F, Fut>(
        &self,
        method: &'static str,
        call: F,
        throttled: impl Fn(&T) -> Option<Refusal>,
    ) -> Result<T, ProviderError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, ProviderError>>,
    {
        let backoff = self.throttles.backoff;
        let mut failed = 0;
        let mut first_refused: Option<std::time::Instant> = None;
        loop {
            let permit = self.gate.acquire().await;
            let out = call().await;
            let Some(Refusal {
                message,
                retry_after,
            }) = out.as_ref().ok().and_then(&throttled)
            else {
                // A call that failed outright says nothing about the rate.
                if out.is_ok()
                    && let Some(limit) = self.gate.succeeded(&permit)
                {
                    crate::metrics::provider_limit(&self.provider, limit);
                }
                return out;
            };
            failed += 1;
            let since = *first_refused.get_or_insert_with(std::time::Instant::now);
            // Not sooner than the provider asked for; and no call of this
            // worker asks it sooner either.
            if let Some(wait) = retry_after {
                self.gate.hold(tokio::time::Instant::now() + wait);
            }
            let delay = backoff
                .delay(failed, &mut rand::rng())
                .max(retry_after.unwrap_or_default());
            // A provider that says when to retry is rate limiting, not
            // failing: its refusals are retried for RATE_LIMITED_FOR, not
            // counted against the attempts (under an account's limit, many
            // calls share few slots, and one can be refused many times).
            let gave_up = failed >= backoff.attempts
                && (retry_after.is_none() || since.elapsed() >= RATE_LIMITED_FOR);
            // The last attempt's error is reported as it is: no notice of
            // a retry that will not come.
            let (notice, lowered) = if gave_up {
                (None, self.gate.throttled(&permit))
            } else {
                let (notice, lowered) = self.throttles.throttled(
                    &self.provider,
                    &self.run_id,
                    || self.gate.throttled(&permit),
                    delay,
                    &message,
                    &self.context.worker,
                );
                (Some(notice), lowered)
            };
            drop(permit);
            crate::metrics::provider_throttled(&self.provider);
            if let Some((_, limit)) = lowered {
                crate::metrics::provider_limit(&self.provider, limit);
            }
            let Some(notice) = notice else {
                tracing::warn!(provider = %self.provider, method, attempts = failed, %message, "provider call throttled on every attempt: its error is reported");
                return out;
            };
            match notice {
                Notice::Now(n) => self.tell(n),
                Notice::After(wait) => {
                    // The window's end: what happened in it, and the limit then.
                    let (throttles, provider, run_id, context) = (
                        self.throttles.clone(),
                        self.provider.clone(),
                        self.run_id.clone(),
                        self.context.clone(),
                    );
                    tokio::spawn(async move {
                        tokio::time::sleep(wait).await;
                        if let Some(n) = throttles.trailing(&provider, &run_id) {
                            tell(&context, n);
                        }
                    });
                }
                Notice::Quiet => {}
            }
            tracing::debug!(provider = %self.provider, method, attempt = failed, retry_in_ms = delay.as_millis() as u64, "provider call throttled; retrying");
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.context.stop.stopped() => return out,
            }
        }
    }
}

#[async_trait]
impl Provider for ThrottledProvider {
    async fn get_provider_schema(&self) -> Result<GetProviderSchemaResponse, ProviderError> {
        self.inner.get_provider_schema().await
    }

    async fn validate_provider_config(
        &self,
        req: &ValidateProviderConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner.validate_provider_config(req).await
    }

    async fn validate_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner.validate_resource_config(req).await
    }

    async fn validate_data_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner.validate_data_resource_config(req).await
    }

    async fn configure_provider(
        &self,
        req: &ConfigureProviderRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner.configure_provider(req).await
    }

    async fn upgrade_resource_state(
        &self,
        req: &UpgradeResourceStateRequest,
    ) -> Result<UpgradeResourceStateResponse, ProviderError> {
        self.inner.upgrade_resource_state(req).await
    }

    async fn read_resource(
        &self,
        req: &ReadResourceRequest,
    ) -> Result<ReadResourceResponse, ProviderError> {
        self.call(
            "ReadResource",
            || self.inner.read_resource(req),
            |r: &ReadResourceResponse| refused(&r.diagnostics),
        )
        .await
    }

    async fn plan_resource_change(
        &self,
        req: &PlanResourceChangeRequest,
    ) -> Result<PlanResourceChangeResponse, ProviderError> {
        self.call(
            "PlanResourceChange",
            || self.inner.plan_resource_change(req),
            |r: &PlanResourceChangeResponse| refused(&r.diagnostics),
        )
        .await
    }

    async fn apply_resource_change(
        &self,
        req: &ApplyResourceChangeRequest,
    ) -> Result<ApplyResourceChangeResponse, ProviderError> {
        self.call(
            "ApplyResourceChange",
            || self.inner.apply_resource_change(req),
            // Only when nothing changed (see the module's comment).
            |r: &ApplyResourceChangeResponse| {
                if r.new_state == req.prior_state {
                    refused(&r.diagnostics)
                } else {
                    None
                }
            },
        )
        .await
    }

    async fn read_data_source(
        &self,
        req: &ReadDataSourceRequest,
    ) -> Result<ReadDataSourceResponse, ProviderError> {
        self.call(
            "ReadDataSource",
            || self.inner.read_data_source(req),
            |r: &ReadDataSourceResponse| refused(&r.diagnostics),
        )
        .await
    }

    async fn stop(&self) -> Result<(), ProviderError> {
        self.inner.stop().await
    }

    async fn validate_ephemeral_resource_config(
        &self,
        req: &ValidateResourceConfigRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner.validate_ephemeral_resource_config(req).await
    }

    async fn open_ephemeral_resource(
        &self,
        req: &fleetform_shared::provider::OpenEphemeralResourceRequest,
    ) -> Result<fleetform_shared::provider::OpenEphemeralResourceResponse, ProviderError> {
        self.call(
            "OpenEphemeralResource",
            || self.inner.open_ephemeral_resource(req),
            |r: &fleetform_shared::provider::OpenEphemeralResourceResponse| refused(&r.diagnostics),
        )
        .await
    }

    async fn renew_ephemeral_resource(
        &self,
        req: &fleetform_shared::provider::EphemeralResourceRequest,
    ) -> Result<fleetform_shared::provider::RenewEphemeralResourceResponse, ProviderError> {
        self.inner.renew_ephemeral_resource(req).await
    }

    async fn close_ephemeral_resource(
        &self,
        req: &fleetform_shared::provider::EphemeralResourceRequest,
    ) -> Result<Diagnostics, ProviderError> {
        self.inner.close_ephemeral_resource(req).await
    }

    async fn import_resource_state(
        &self,
        req: &ImportResourceStateRequest,
    ) -> Result<ImportResourceStateResponse, ProviderError> {
        self.call(
            "ImportResourceState",
            || self.inner.import_resource_state(req),
            |r: &ImportResourceStateResponse| refused(&r.diagnostics),
        )
        .await
    }
}

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;
