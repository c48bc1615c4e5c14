//! [`ProviderPool`]: one configured provider process per (binary,
//! configuration), shared by every task that needs it, stopped when idle.

use super::client::{PluginClient, PluginConfig};
use super::fake::FakeProvider;
use super::{Provider, ProviderError};
use async_trait::async_trait;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::provider::{ConfigureProviderRequest, ValidateProviderConfigRequest};
use fleetform_shared::value::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// A provider the pool can end when it is no longer needed.
#[async_trait]
pub trait ManagedProvider: Provider {
    async fn close(&self);
}

#[async_trait]
impl ManagedProvider for PluginClient {
    async fn close(&self) {
        PluginClient::close(self).await;
    }
}

#[async_trait]
impl ManagedProvider for FakeProvider {
    async fn close(&self) {}
}

/// Starts (unconfigured) providers for the pool.
#[async_trait]
pub trait Launcher: Send + Sync {
    async fn launch(&self, binary: &Path) -> Result<Arc<dyn ManagedProvider>, ProviderError>;
}

/// Launches real plugin processes, with `template` for everything but the path.
pub struct PluginLauncher {
    pub template: PluginConfig,
}

#[async_trait]
impl Launcher for PluginLauncher {
    async fn launch(&self, binary: &Path) -> Result<Arc<dyn ManagedProvider>, ProviderError> {
        let name = binary
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let config = PluginConfig {
            path: binary.to_path_buf(),
            name,
            ..self.template.clone()
        };
        Ok(Arc::new(PluginClient::start(&config).await?))
    }
}

#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// A process nobody has checked out for this long is stopped.
    pub idle_timeout: Duration,
    /// Sent in `ConfigureProvider`.
    pub terraform_version: String,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            idle_timeout: Duration::from_secs(300),
            terraform_version: "1.9.0".into(),
        }
    }
}

/// Identifies one pooled process.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProviderKey {
    pub binary: PathBuf,
    /// The provider configuration, serialised (values are not `Hash`).
    config: Vec<u8>,
}

impl ProviderKey {
    pub fn new(binary: &Path, config: &Value) -> ProviderKey {
        let config = rmp_serde::to_vec(config).expect("values always serialise");
        ProviderKey {
            binary: binary.to_path_buf(),
            config,
        }
    }
}

type Cell = Arc<OnceCell<Arc<dyn ManagedProvider>>>;

struct Slot {
    cell: Cell,
    last_used: Instant,
}

struct Inner {
    launcher: Arc<dyn Launcher>,
    config: PoolConfig,
    slots: Mutex<HashMap<ProviderKey, Slot>>,
}

#[derive(Clone)]
pub struct ProviderPool {
    inner: Arc<Inner>,
}

impl ProviderPool {
    /// A pool of real plugin processes started with `plugin`'s settings.
    pub fn new(config: PoolConfig, plugin: PluginConfig) -> ProviderPool {
        ProviderPool::with_launcher(config, Arc::new(PluginLauncher { template: plugin }))
    }

    pub fn with_launcher(config: PoolConfig, launcher: Arc<dyn Launcher>) -> ProviderPool {
        ProviderPool {
            inner: Arc::new(Inner {
                launcher,
                config,
                slots: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The configured provider for `binary` and `config`, starting and
    /// configuring it on first use. Concurrent first uses share one start.
    /// A configuration the provider rejects is [`ProviderError::Configure`]
    /// and is not kept.
    pub async fn get(
        &self,
        binary: &Path,
        config: &Value,
    ) -> Result<Arc<dyn Provider>, ProviderError> {
        let key = ProviderKey::new(binary, config);
        let cell = {
            let mut slots = self.inner.slots.lock().expect("pool lock");
            let slot = slots.entry(key.clone()).or_insert_with(|| Slot {
                cell: Arc::new(OnceCell::new()),
                last_used: Instant::now(),
            });
            slot.last_used = Instant::now();
            slot.cell.clone()
        };
        match cell.get_or_try_init(|| self.start(binary, config)).await {
            Ok(provider) => {
                let provider: Arc<dyn Provider> = provider.clone();
                Ok(provider)
            }
            Err(e) => {
                let mut slots = self.inner.slots.lock().expect("pool lock");
                if slots
                    .get(&key)
                    .is_some_and(|s| Arc::ptr_eq(&s.cell, &cell) && !cell.initialized())
                {
                    slots.remove(&key);
                }
                Err(e)
            }
        }
    }

    async fn start(
        &self,
        binary: &Path,
        config: &Value,
    ) -> Result<Arc<dyn ManagedProvider>, ProviderError> {
        let provider = self.inner.launcher.launch(binary).await?;
        match self.configure(provider.as_ref(), config).await {
            Ok(warnings) => {
                for w in warnings.iter() {
                    tracing::warn!(binary = %binary.display(), summary = w.summary.as_str(), detail = w.detail.as_str(), "provider configuration warning");
                }
                Ok(provider)
            }
            Err(e) => {
                provider.close().await;
                Err(e)
            }
        }
    }

    /// Schema, validation and configuration, as Terraform does before any
    /// resource call; returns the warnings.
    async fn configure(
        &self,
        provider: &dyn ManagedProvider,
        config: &Value,
    ) -> Result<Diagnostics, ProviderError> {
        let mut diags = provider.get_provider_schema().await?.diagnostics;
        if !diags.has_errors() {
            diags.extend(
                provider
                    .validate_provider_config(&ValidateProviderConfigRequest {
                        config: config.clone(),
                    })
                    .await?,
            );
        }
        if !diags.has_errors() {
            let req = ConfigureProviderRequest {
                terraform_version: self.inner.config.terraform_version.clone(),
                config: config.clone(),
            };
            diags.extend(provider.configure_provider(&req).await?);
        }
        if diags.has_errors() {
            Err(ProviderError::Configure(diags))
        } else {
            Ok(diags)
        }
    }

    /// Stops every process that nobody holds and nobody has checked out for
    /// `idle_for`; returns how many were stopped.
    pub async fn evict_idle(&self, idle_for: Duration) -> usize {
        let evicted: Vec<Arc<dyn ManagedProvider>> = {
            let mut slots = self.inner.slots.lock().expect("pool lock");
            let idle: Vec<ProviderKey> = slots
                .iter()
                .filter(|(_, s)| s.last_used.elapsed() >= idle_for)
                .filter(|(_, s)| s.cell.get().is_some_and(|p| Arc::strong_count(p) == 1))
                .map(|(k, _)| k.clone())
                .collect();
            idle.iter()
                .filter_map(|k| slots.remove(k)?.cell.get().cloned())
                .collect()
        };
        for p in &evicted {
            p.close().await;
        }
        evicted.len()
    }

    /// Stops every process, in use or not.
    pub async fn close_all(&self) {
        let all: Vec<Arc<dyn ManagedProvider>> = {
            let mut slots = self.inner.slots.lock().expect("pool lock");
            slots
                .drain()
                .filter_map(|(_, s)| s.cell.get().cloned())
                .collect()
        };
        for p in all {
            p.close().await;
        }
    }

    /// How many providers are running or starting.
    pub fn len(&self) -> usize {
        self.inner.slots.lock().expect("pool lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Evicts idle processes periodically until the pool is dropped.
    pub fn spawn_reaper(&self) -> tokio::task::JoinHandle<()> {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let idle = self.inner.config.idle_timeout;
        let every = (idle / 2).max(Duration::from_secs(1));
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            loop {
                ticks.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                ProviderPool { inner }.evict_idle(idle).await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    struct CountingLauncher {
        launches: AtomicUsize,
    }

    #[async_trait]
    impl Launcher for CountingLauncher {
        async fn launch(&self, _: &Path) -> Result<Arc<dyn ManagedProvider>, ProviderError> {
            self.launches.fetch_add(1, Ordering::SeqCst);
            Ok(Arc::new(FakeProvider::new()))
        }
    }

    fn pool() -> (ProviderPool, Arc<CountingLauncher>) {
        let launcher = Arc::new(CountingLauncher::default());
        (
            ProviderPool::with_launcher(PoolConfig::default(), launcher.clone()),
            launcher,
        )
    }

    #[tokio::test]
    async fn one_process_per_binary_and_configuration() {
        let (pool, launcher) = pool();
        let bin = Path::new("/bin/fake");
        let a = Value::object([("region", Value::from("a"))]);
        let b = Value::object([("region", Value::from("b"))]);
        let (p1, p2) = tokio::join!(pool.get(bin, &a), pool.get(bin, &a));
        assert!(Arc::ptr_eq(&p1.unwrap(), &p2.unwrap()));
        pool.get(bin, &b).await.unwrap();
        assert_eq!(launcher.launches.load(Ordering::SeqCst), 2);
        assert_eq!(pool.len(), 2);
    }

    #[tokio::test]
    async fn only_unused_idle_processes_are_evicted() {
        let (pool, launcher) = pool();
        let held = pool.get(Path::new("/bin/a"), &Value::Null).await.unwrap();
        drop(pool.get(Path::new("/bin/b"), &Value::Null).await.unwrap());
        assert_eq!(
            pool.evict_idle(Duration::from_secs(3600)).await,
            0,
            "recently used"
        );
        assert_eq!(
            pool.evict_idle(Duration::ZERO).await,
            1,
            "only the one nobody holds"
        );
        assert_eq!(pool.len(), 1);
        drop(held);
        assert_eq!(pool.evict_idle(Duration::ZERO).await, 1);
        pool.get(Path::new("/bin/a"), &Value::Null).await.unwrap();
        assert_eq!(
            launcher.launches.load(Ordering::SeqCst),
            3,
            "evicted processes are started again"
        );
    }
}
