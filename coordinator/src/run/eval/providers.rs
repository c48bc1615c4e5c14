//! Provider configurations of a run: what a worker needs to start one,
//! schemas fetched through a worker (once per coordinator), and provider
//! blocks decoded against their schema.

use crate::run::eval::scope::EvalScope;
use crate::run::handle::Shared;
use fleetform_lang::config::{Config, Module};
use fleetform_shared::addr::{AbsProviderConfig, LocalProviderConfig};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ProviderLock, ProviderSpec, Task, TaskKind, TaskOutcome};
use std::sync::Arc;

/// The version constraint for a provider address: from the module that
/// declares the configuration, else from any module that requires it.
pub fn version_constraint(config: &Config, p: &AbsProviderConfig) -> Option<String> {
    let from = |m: &Module| {
        m.required_providers
            .values()
            .find(|r| r.source == p.provider)
            .and_then(|r| r.version.clone())
    };
    config
        .module(&p.module)
        .and_then(|n| from(&n.module))
        .or_else(|| config.modules().iter().find_map(|n| from(&n.module)))
}

/// What a worker needs to start the provider of configuration `p`, before
/// its configuration is known.
pub fn spec(config: &Config, p: &AbsProviderConfig) -> ProviderSpec {
    let lock = match &config.provider_locks {
        None => ProviderLock::NoLockFile,
        Some(locks) => match locks.get(&p.provider) {
            Some(entry) => ProviderLock::Locked {
                version: entry.version.clone(),
                hashes: entry.hashes.iter().cloned().collect(),
            },
            None => ProviderLock::NotSelected,
        },
    };
    ProviderSpec {
        addr: p.provider.clone(),
        version_constraint: version_constraint(config, p),
        config: Value::null(),
        lock,
    }
}

/// Fetches a provider's schema through a worker, which says which provider
/// version it resolves to and sends the schema only if this coordinator
/// does not hold it already (in memory or in redb).
pub async fn schema(
    shared: &Shared,
    run_id: &str,
    local: &str,
    spec: &ProviderSpec,
) -> Result<Arc<ProviderSchema>, Diagnostics> {
    let cached = shared
        .schema_cache
        .fingerprints(&spec.addr)
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "reading the schema cache failed");
            Vec::new()
        });
    let (fingerprint, sent) = ask(shared, run_id, local, spec, cached).await?;
    if let Some(s) = sent {
        return Ok(remember(shared, fingerprint, *s));
    }
    if let Some(s) = shared
        .schemas
        .lock()
        .expect("schema lock")
        .get(&fingerprint)
    {
        return Ok(s.clone());
    }
    if let Ok(Some(s)) = shared.schema_cache.get(&fingerprint) {
        return Ok(remember(shared, fingerprint, s));
    }
    // The cached entry is unreadable: ask again, holding nothing.
    match ask(shared, run_id, local, spec, Vec::new()).await? {
        (fingerprint, Some(s)) => Ok(remember(shared, fingerprint, *s)),
        (fingerprint, None) => Err(Diagnostics::from(Diagnostic::error(
            "Provider schema missing",
            format!("the worker did not send the schema of {fingerprint}"),
        ))),
    }
}

fn remember(shared: &Shared, fingerprint: String, schema: ProviderSchema) -> Arc<ProviderSchema> {
    if let Err(e) = shared.schema_cache.put(&fingerprint, &schema) {
        tracing::warn!(error = %e, %fingerprint, "caching a provider schema failed");
    }
    let s = Arc::new(schema);
    shared
        .schemas
        .lock()
        .expect("schema lock")
        .insert(fingerprint, s.clone());
    s
}

/// One Schema task: the fingerprint the worker resolved, and the schema
/// unless it is among `cached`.
async fn ask(
    shared: &Shared,
    run_id: &str,
    local: &str,
    spec: &ProviderSpec,
    cached: Vec<String>,
) -> Result<(String, Option<Box<ProviderSchema>>), Diagnostics> {
    let attempt = if cached.is_empty() { "fetch" } else { "check" };
    let task = Task {
        // By configuration: each configuration (alias, module) asks once.
        id: format!("{run_id}:schema-{attempt}:{local}"),
        run_id: run_id.to_string(),
        provider: Arc::new(ProviderSpec {
            config: Value::null(),
            ..spec.clone()
        }),
        kind: TaskKind::Schema { cached },
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
        TaskOutcome::Schema {
            fingerprint,
            schema,
        } => Ok((fingerprint, schema)),
        TaskOutcome::Failed(d) => Err(d),
        other => Err(Diagnostics::from(Diagnostic::error(
            "Unexpected worker answer",
            format!("asked for the schema of {}, got {other:?}", spec.addr),
        ))),
    }
}

/// Decodes the `provider` block of configuration `p` (if the module has
/// one; an implied configuration is empty) against the provider schema.
pub fn configure(
    config: &Config,
    p: &AbsProviderConfig,
    schema: &ProviderSchema,
    scope: &EvalScope<'_>,
) -> Result<Value, Diagnostics> {
    let block = config.module(&p.module).and_then(|n| {
        n.module.providers.iter().find_map(|(key, block)| {
            let local: LocalProviderConfig = key.parse().ok()?;
            (local.alias == p.alias && n.module.provider_addr(&local.local_name) == p.provider)
                .then_some(block)
        })
    });
    let (value, diags) = match block {
        Some(block) => block.body.decode(&schema.provider.block, scope),
        None => {
            let empty = fleetform_lang::config::Body::default();
            empty.decode(&schema.provider.block, scope)
        }
    };
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(value)
    }
}
