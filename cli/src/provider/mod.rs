//! The providers a configuration needs: its modules' requirements joined
//! ([`needed`]), the dependency lock file that pins them ([`lock_file`]),
//! and their schemas, resolved as the workers resolve them (CLI
//! configuration, mirrors, bundled providers) and asked for in this
//! process ([`schemas_of`]). `init`, `providers` and `validate` use them.

pub mod lock_file;

use fleetform_install::resolve::Resolver;
use fleetform_lang::config::Module;
use fleetform_shared::ProviderAddr;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::schema::ProviderSchema;
use fleetform_worker::plugin::{PluginClient, PluginConfig, Provider};
use std::collections::BTreeMap;

/// The schema of every provider the configuration needs, resolved as the
/// workers resolve providers and asked in this process.
pub async fn schemas_of(
    config: &fleetform_lang::config::Config,
) -> Result<BTreeMap<ProviderAddr, ProviderSchema>, Diagnostic> {
    let resolver = Resolver::from_env();
    let mut schemas = BTreeMap::new();
    for (addr, constraint) in needed(config) {
        let s = fetch(&resolver, &addr, constraint.as_deref()).await?;
        schemas.insert(addr, s);
    }
    Ok(schemas)
}

/// Every provider the configuration needs, each with the constraints of
/// every module that requires it.
pub fn needed(config: &fleetform_lang::config::Config) -> BTreeMap<ProviderAddr, Option<String>> {
    let mut needed: BTreeMap<ProviderAddr, Option<String>> = BTreeMap::new();
    for node in config.modules() {
        for (addr, constraint) in requirements(&node.module) {
            let entry = needed.entry(addr).or_default();
            *entry = join_constraints(entry.take(), constraint);
        }
    }
    needed
}

/// Every provider the module needs, with its version constraints joined
/// (several local names may name one provider, as in Terraform).
pub fn requirements(module: &Module) -> BTreeMap<ProviderAddr, Option<String>> {
    let mut out: BTreeMap<ProviderAddr, Option<String>> = BTreeMap::new();
    for local in module.provider_local_names() {
        let addr = module.provider_addr(&local);
        let version = module
            .required_providers
            .get(&local)
            .and_then(|r| r.version.clone());
        let entry = out.entry(addr).or_default();
        *entry = join_constraints(entry.take(), version);
    }
    out
}

/// Two modules' constraints on one provider: both must hold.
fn join_constraints(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) if a != b => Some(format!("{a}, {b}")),
        (a, b) => a.or(b),
    }
}

async fn fetch(
    resolver: &Resolver,
    addr: &ProviderAddr,
    constraint: Option<&str>,
) -> Result<ProviderSchema, Diagnostic> {
    let resolved = resolver
        .resolve(addr, constraint)
        .map_err(|e| Diagnostic::error("Failed to find provider", e.to_string()))?;
    let failed = |e: String| {
        Diagnostic::error(
            "Failed to load plugin schemas",
            format!("Error while loading schemas for plugin components: provider {addr}: {e}."),
        )
    };
    let client = PluginClient::start(&PluginConfig::new(resolved.executable, addr.to_string()))
        .await
        .map_err(|e| failed(e.to_string()))?;
    let response = client.get_provider_schema().await;
    client.close().await;
    let response = response.map_err(|e| failed(e.to_string()))?;
    if let Some(d) = response.diagnostics.iter().find(|d| d.is_error()) {
        return Err(failed(format!("{}: {}", d.summary, d.detail)));
    }
    Ok(response.schema)
}
