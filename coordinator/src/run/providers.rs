//! Provider configurations of a run: local names to source addresses,
//! schemas fetched through a worker (once per coordinator), and provider
//! blocks decoded against their schema.

use super::Shared;
use super::scope::EvalScope;
use fleetform_shared::ProviderAddr;
use fleetform_shared::config::Module;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ProviderSpec, Task, TaskKind, TaskOutcome};
use std::sync::Arc;

/// The source address of a provider local name (`null` → hashicorp/null
/// unless `required_providers` says otherwise).
pub fn provider_addr(module: &Module, local: &str) -> ProviderAddr {
    let base = local.split('.').next().unwrap_or(local);
    module
        .required_providers
        .get(base)
        .map(|r| r.source.clone())
        .unwrap_or_else(|| ProviderAddr::implied(base))
}

/// The local name under which `addr` is known in `module` (reverse lookup).
pub fn local_name(module: &Module, addr: &ProviderAddr) -> String {
    module
        .required_providers
        .iter()
        .find(|(_, r)| &r.source == addr)
        .map(|(k, _)| k.clone())
        .unwrap_or_else(|| addr.type_name.clone())
}

pub fn version_constraint(module: &Module, local: &str) -> Option<String> {
    let base = local.split('.').next().unwrap_or(local);
    module
        .required_providers
        .get(base)
        .and_then(|r| r.version.clone())
}

/// Fetches a provider's schema, from the cache or through a worker.
pub async fn schema(
    shared: &Shared,
    run_id: &str,
    spec: &ProviderSpec,
) -> Result<Arc<ProviderSchema>, Diagnostics> {
    if let Some(s) = shared.schemas.lock().expect("schema lock").get(&spec.addr) {
        return Ok(s.clone());
    }
    let task = Task {
        id: format!("{run_id}:schema:{}", spec.addr),
        run_id: run_id.to_string(),
        provider: ProviderSpec {
            config: Value::Null,
            ..spec.clone()
        },
        kind: TaskKind::Schema,
    };
    let rx = shared.dispatcher.dispatch(vec![task]).await.map_err(|e| {
        Diagnostics::from(Diagnostic::error(
            "Failed to dispatch a task",
            e.to_string(),
        ))
    })?;
    let result = rx
        .into_iter()
        .next()
        .expect("one receiver")
        .await
        .map_err(|_| {
            Diagnostics::from(Diagnostic::error(
                "Lost a task",
                "the coordinator stopped waiting for a provider schema",
            ))
        })?;
    match result.outcome {
        TaskOutcome::Schema(s) => {
            let s: Arc<ProviderSchema> = Arc::new(*s);
            shared
                .schemas
                .lock()
                .expect("schema lock")
                .insert(spec.addr.clone(), s.clone());
            Ok(s)
        }
        TaskOutcome::Failed(d) => Err(d),
        other => Err(Diagnostics::from(Diagnostic::error(
            "Unexpected worker answer",
            format!("asked for the schema of {}, got {other:?}", spec.addr),
        ))),
    }
}

/// Decodes the `provider` block (if any) against the provider schema.
pub fn configure(
    module: &Module,
    local: &str,
    schema: &ProviderSchema,
    scope: &EvalScope<'_>,
) -> Result<Value, Diagnostics> {
    let (value, diags) = match module.providers.get(local) {
        Some(block) => block.body.decode(&schema.provider.block, scope),
        None => {
            let empty = fleetform_shared::config::Body::default();
            empty.decode(&schema.provider.block, scope)
        }
    };
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(value)
    }
}
