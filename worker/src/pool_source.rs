//! The plugin pool as the task handler's [`ProviderSource`]: executables
//! found by provider address, processes kept per configuration, schemas
//! cached per executable.

use crate::handler::ProviderSource;
use crate::handler::valid::ValidConfigs;
use crate::plugin::{PluginClient, PluginConfig, PoolConfig, Provider, ProviderKey, ProviderPool};
use async_trait::async_trait;
use fleetform_install::locked::PackageHashes;
use fleetform_install::resolve::{Resolved, Resolver};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::function::FunctionSignature;
use fleetform_shared::provider::{CallFunctionRequest, CallFunctionResponse};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::wire::ProviderSpec;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One run's [`ValidConfigs`], by digest of provider address and
/// configuration.
struct RunValid {
    /// When this worker first took a task of the run.
    since: std::time::Instant,
    by_provider: HashMap<[u8; 16], Arc<ValidConfigs>>,
}

/// Runs whose valid configurations a worker keeps at most: a run's end is
/// told to the workers connected then, and one that missed it would keep
/// the run's digests for good.
const RUNS_REMEMBERED: usize = 64;

/// A provider configuration of a run, as its tasks name it, with what is
/// worked out from it once: the executable, the pool's key and the digest
/// its valid configurations are kept under. Working them out again for
/// every task (the configuration encoded and hashed three times, its
/// address written out) took about 3% of the CPU of a 10,000-instance plan
/// (perf, 2026-11-27).
///
/// So the executable is found, and checked against the run's dependency
/// lock file, when the run's first task on this worker needs it, not again
/// for each task: like Terraform, which checks a provider when it loads it
/// for the run. A process started later for the run (another lane, or
/// after a crash) runs the same path.
struct Known {
    run_id: String,
    spec: ProviderSpec,
    binary: PathBuf,
    key: ProviderKey,
    valid: Option<[u8; 16]>,
}

/// Configurations kept in [`PoolSource::known`]: a run names a few, and a
/// worker serves a few runs at a time. Older ones are worked out again.
const KNOWN_KEPT: usize = 32;

pub struct PoolSource {
    pool: ProviderPool,
    resolver: Resolver,
    hashes: PackageHashes,
    schemas: Mutex<HashMap<PathBuf, Arc<ProviderSchema>>>,
    /// By run, then by provider address and configuration.
    valid: Mutex<HashMap<String, RunValid>>,
    /// The latest configurations used, newest first.
    known: Mutex<std::collections::VecDeque<Arc<Known>>>,
    reaper: tokio::task::JoinHandle<()>,
}

impl PoolSource {
    pub fn new() -> PoolSource {
        PoolSource::with_processes(1)
    }

    /// Up to `processes` processes per provider configuration of a run:
    /// a call that finds them all busy starts another.
    pub fn with_processes(processes: usize) -> PoolSource {
        let pool = ProviderPool::new(
            PoolConfig {
                processes: processes.max(1),
                ..PoolConfig::default()
            },
            PluginConfig::new(PathBuf::new(), "provider"),
        );
        let reaper = pool.spawn_reaper();
        PoolSource {
            pool,
            resolver: Resolver::from_env(),
            hashes: PackageHashes::default(),
            schemas: Mutex::default(),
            valid: Mutex::default(),
            known: Mutex::default(),
            reaper,
        }
    }

    /// Provider processes running now.
    pub fn processes(&self) -> usize {
        self.pool.len()
    }

    /// Stops every provider process.
    pub async fn shutdown(&self) {
        self.reaper.abort();
        self.pool.close_all().await;
    }

    /// The executable for `spec`, as the run's lock file allows.
    fn resolved(&self, spec: &ProviderSpec) -> Result<Resolved, Diagnostics> {
        fleetform_install::locked::resolve(
            &self.resolver,
            &self.hashes,
            &spec.addr,
            spec.version_constraint.as_deref(),
            &spec.lock,
        )
        .map_err(|e| Diagnostics::from(Diagnostic::error("Failed to find provider", e)))
    }

    fn binary(&self, spec: &ProviderSpec) -> Result<PathBuf, Diagnostics> {
        self.resolved(spec).map(|r| r.executable)
    }

    /// `spec` of `run_id` worked out, from [`PoolSource::known`] when it
    /// was used lately. A configuration whose executable cannot be found is
    /// not kept: the next task looks again.
    fn known(&self, spec: &ProviderSpec, run_id: &str) -> Result<Arc<Known>, Diagnostics> {
        {
            let known = self.known.lock().expect("known lock");
            if let Some(k) = known.iter().find(|k| k.run_id == run_id && k.spec == *spec) {
                return Ok(k.clone());
            }
        }
        let binary = self.binary(spec)?;
        let known = Arc::new(Known {
            run_id: run_id.to_string(),
            key: ProviderKey::new(&binary, &spec.config, run_id),
            valid: ValidConfigs::digest(&spec.addr.to_string(), &spec.config),
            spec: spec.clone(),
            binary,
        });
        let mut kept = self.known.lock().expect("known lock");
        kept.push_front(known.clone());
        kept.truncate(KNOWN_KEPT);
        Ok(known)
    }

    fn cached(&self, binary: &Path) -> Option<Arc<ProviderSchema>> {
        self.schemas
            .lock()
            .expect("schema lock")
            .get(binary)
            .cloned()
    }

    fn remember(&self, binary: &Path, schema: ProviderSchema) -> Arc<ProviderSchema> {
        let s = Arc::new(schema);
        self.schemas
            .lock()
            .expect("schema lock")
            .insert(binary.to_path_buf(), s.clone());
        s
    }
}

impl Default for PoolSource {
    fn default() -> Self {
        PoolSource::new()
    }
}

/// `<address>@<version>`; an executable without a version (a bundled or
/// flat one) is told apart by its size and modification time, so a rebuilt
/// provider is never served an old schema.
fn fingerprint(
    addr: &fleetform_shared::ProviderAddr,
    version: Option<String>,
    executable: &Path,
) -> String {
    match version {
        Some(v) => format!("{addr}@{v}"),
        None => {
            let meta = std::fs::metadata(executable).ok();
            let size = meta.as_ref().map_or(0, |m| m.len());
            let mtime = meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{addr}@unversioned-{size}-{mtime}")
        }
    }
}

fn plugin_error(spec: &ProviderSpec, e: impl std::fmt::Display) -> Diagnostics {
    Diagnostic::error(
        "Failed to start provider",
        format!("provider {}: {e}", spec.addr),
    )
    .into()
}

#[async_trait]
impl ProviderSource for PoolSource {
    async fn fingerprint(&self, spec: &ProviderSpec) -> Result<String, Diagnostics> {
        let resolved = self.resolved(spec)?;
        Ok(fingerprint(
            &spec.addr,
            resolved.version.as_ref().map(ToString::to_string),
            &resolved.executable,
        ))
    }

    async fn schema(&self, spec: &ProviderSpec) -> Result<Arc<ProviderSchema>, Diagnostics> {
        let binary = self.binary(spec)?;
        if let Some(s) = self.cached(&binary) {
            return Ok(s);
        }
        // The schema is needed before the configuration can be decoded, so
        // this process is never configured; it is stopped right away.
        let client = PluginClient::start(&PluginConfig::new(
            binary.clone(),
            spec.addr.type_name.clone(),
        ))
        .await
        .map_err(|e| plugin_error(spec, e))?;
        let resp = client.get_provider_schema().await;
        client.close().await;
        let resp = resp.map_err(|e| plugin_error(spec, e))?;
        if resp.diagnostics.has_errors() {
            return Err(resp.diagnostics);
        }
        Ok(self.remember(&binary, resp.schema))
    }

    async fn call_function(
        &self,
        spec: &ProviderSpec,
        req: &CallFunctionRequest,
        signature: &FunctionSignature,
    ) -> Result<CallFunctionResponse, Diagnostics> {
        let binary = self.binary(spec)?;
        // A process of its own, never configured: a function sees only its
        // arguments. The coordinator asks once per distinct call of a run.
        let client = PluginClient::start(&PluginConfig::new(binary, spec.addr.type_name.clone()))
            .await
            .map_err(|e| plugin_error(spec, e))?;
        let resp = client.call_function(req, signature).await;
        client.close().await;
        resp.map_err(|e| plugin_error(spec, e))
    }

    async fn configured(
        &self,
        spec: &ProviderSpec,
        run_id: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        let known = self.known(spec, run_id)?;
        let binary = &known.binary;
        let provider = self
            .pool
            .get_keyed(&known.key, &spec.config)
            .await
            .map_err(|e| match e {
                crate::plugin::ProviderError::Configure(d) => d,
                crate::plugin::ProviderError::RunStopped => Diagnostic::error(
                    "Run cancelled",
                    "The operation did not start: the run was cancelled.",
                )
                .into(),
                other => plugin_error(spec, other),
            })?;
        let schema = match self.cached(binary) {
            Some(s) => s,
            None => {
                let resp = provider
                    .get_provider_schema()
                    .await
                    .map_err(|e| plugin_error(spec, e))?;
                self.remember(binary, resp.schema)
            }
        };
        Ok((provider, schema))
    }

    fn valid_configs(&self, spec: &ProviderSpec, run_id: &str) -> Option<Arc<ValidConfigs>> {
        let key = match self.known(spec, run_id) {
            Ok(known) => known.valid?,
            // Its executable is not found: the task fails on that.
            Err(_) => ValidConfigs::digest(&spec.addr.to_string(), &spec.config)?,
        };
        let mut runs = self.valid.lock().expect("valid lock");
        if !runs.contains_key(run_id) && runs.len() >= RUNS_REMEMBERED {
            // A run whose end this worker never heard of (it was not
            // connected then): the one it heard from longest ago goes.
            let oldest = runs
                .iter()
                .min_by_key(|(_, r)| r.since)
                .map(|(id, _)| id.clone());
            if let Some(id) = oldest {
                runs.remove(&id);
            }
        }
        let run = runs.entry(run_id.to_string()).or_insert_with(|| RunValid {
            since: std::time::Instant::now(),
            by_provider: HashMap::new(),
        });
        Some(run.by_provider.entry(key).or_default().clone())
    }

    async fn stop_run(&self, run_id: &str) {
        let n = self.pool.stop_run(run_id).await;
        tracing::info!(
            run_id,
            processes = n,
            "run cancelled: providers told to stop"
        );
    }

    async fn configured_for_cleanup(
        &self,
        spec: &ProviderSpec,
        run_id: &str,
    ) -> Result<(Arc<dyn Provider>, Arc<ProviderSchema>), Diagnostics> {
        match self.pool.is_stopped(run_id) {
            true => self.configured(spec, &cleanup_run(run_id)).await,
            false => self.configured(spec, run_id).await,
        }
    }

    async fn finish_run(&self, run_id: &str) {
        self.valid.lock().expect("valid lock").remove(run_id);
        let cleanup = cleanup_run(run_id);
        self.known
            .lock()
            .expect("known lock")
            .retain(|k| k.run_id != run_id && k.run_id != cleanup);
        let n = self.pool.release_run(run_id) + self.pool.release_run(&cleanup);
        tracing::debug!(run_id, processes = n, "run finished: its providers close");
    }
}

/// Where a cancelled run's clean-up gets its provider processes (see
/// [`ProviderSource::configured_for_cleanup`]).
fn cleanup_run(run_id: &str) -> String {
    format!("{run_id}/cleanup")
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::value::Value;

    fn spec(region: &str) -> ProviderSpec {
        ProviderSpec {
            addr: "registry.terraform.io/fleetform/sim".parse().unwrap(),
            version_constraint: None,
            config: Value::object([("region", Value::from(region))]),
            lock: Default::default(),
        }
    }

    /// A source whose resolver finds `fleetform/sim` 1.0.0 in a plugin
    /// directory (a script: nothing is started here).
    fn with_sim_executable() -> (tempfile::TempDir, PoolSource) {
        use fleetform_install::resolve::platform;
        use fleetform_install::sources::Environment;
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join(format!(
            "registry.terraform.io/fleetform/sim/1.0.0/{}",
            platform()
        ));
        std::fs::create_dir_all(&pkg).unwrap();
        let exe = pkg.join("terraform-provider-sim_v1.0.0");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut source = PoolSource::new();
        source.resolver = Resolver::new(&Environment::plugin_dir_only(dir.path()));
        (dir, source)
    }

    /// A configuration is worked out once per run (executable, pool key,
    /// digest), told apart by run and by configuration, and forgotten
    /// when its run ends or when newer ones push it out.
    #[tokio::test]
    async fn a_run_s_provider_configuration_is_worked_out_once() {
        let (_dir, source) = with_sim_executable();
        let first = source.known(&spec("a"), "r1").unwrap();
        assert!(first.binary.ends_with("terraform-provider-sim_v1.0.0"));
        assert_eq!(
            first.valid,
            ValidConfigs::digest(&spec("a").addr.to_string(), &spec("a").config)
        );
        assert!(Arc::ptr_eq(
            &first,
            &source.known(&spec("a"), "r1").unwrap()
        ));
        let other_run = source.known(&spec("a"), "r2").unwrap();
        let other_config = source.known(&spec("b"), "r1").unwrap();
        assert!(!Arc::ptr_eq(&first, &other_run));
        assert!(!Arc::ptr_eq(&first, &other_config));
        assert_ne!(first.key, other_run.key);
        assert_ne!(first.key, other_config.key);
        assert_eq!(
            first.key,
            ProviderKey::new(&first.binary, &spec("a").config, "r1")
        );

        source.finish_run("r1").await;
        assert!(!Arc::ptr_eq(
            &first,
            &source.known(&spec("a"), "r1").unwrap()
        ));
        assert!(Arc::ptr_eq(
            &other_run,
            &source.known(&spec("a"), "r2").unwrap()
        ));

        for i in 0..KNOWN_KEPT {
            source.known(&spec(&format!("z{i}")), "r3").unwrap();
        }
        assert_eq!(source.known.lock().unwrap().len(), KNOWN_KEPT);
        assert!(!Arc::ptr_eq(
            &other_run,
            &source.known(&spec("a"), "r2").unwrap()
        ));

        // Not found: an error, and nothing kept for it.
        let mut missing = spec("a");
        missing.addr = "registry.terraform.io/fleetform/nowhere".parse().unwrap();
        assert!(source.known(&missing, "r1").is_err());
        assert!(
            !source
                .known
                .lock()
                .unwrap()
                .iter()
                .any(|k| k.spec == missing)
        );
        source.shutdown().await;
    }

    /// Valid configurations are remembered per run and per provider
    /// configuration, and forgotten when the run ends.
    #[tokio::test]
    async fn valid_configurations_are_kept_per_run_and_provider_configuration() {
        let source = PoolSource::new();
        let digest = ValidConfigs::digest("sim_object", &Value::from("x")).unwrap();
        let first = source.valid_configs(&spec("a"), "r1").unwrap();
        first.insert(digest);
        assert!(
            source
                .valid_configs(&spec("a"), "r1")
                .unwrap()
                .contains(&digest)
        );
        assert!(
            !source
                .valid_configs(&spec("b"), "r1")
                .unwrap()
                .contains(&digest)
        );
        assert!(
            !source
                .valid_configs(&spec("a"), "r2")
                .unwrap()
                .contains(&digest)
        );
        source.finish_run("r1").await;
        assert!(source.valid_configs(&spec("a"), "r1").unwrap().is_empty());
        // Runs never told to have ended: the oldest go.
        source
            .valid_configs(&spec("a"), "r1")
            .unwrap()
            .insert(digest);
        for i in 0..RUNS_REMEMBERED {
            source.valid_configs(&spec("a"), &format!("later-{i}"));
        }
        assert_eq!(source.valid.lock().unwrap().len(), RUNS_REMEMBERED);
        assert!(
            !source
                .valid_configs(&spec("a"), "r1")
                .unwrap()
                .contains(&digest)
        );
        source.shutdown().await;
    }
}
