//! [`ProviderPool`]: configured provider processes per (binary,
//! configuration, run), shared by every task of the run that needs them,
//! stopped when the run ends or when idle. One process by default; with
//! [`PoolConfig::processes`] above 1, a call that finds every process of
//! its configuration busy starts another, up to that many, and calls go
//! to the least busy one: a provider that uses one core (single-threaded,
//! or behind a global lock) then uses several.
//!
//! Processes are per run, as in Terraform, because `StopProvider` is
//! process-wide: cancelling one run must not interrupt another run's calls,
//! and a provider that was told to stop (the Go SDKs cancel their stop
//! context for good) is never handed out again.

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
    /// Processes one provider configuration of one run may have at most.
    pub processes: usize,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            idle_timeout: Duration::from_secs(300),
            terraform_version: "1.9.0".into(),
            processes: 1,
        }
    }
}

/// Identifies one pooled process. The configuration's part is shared, so
/// that trying the lanes of a configuration copies no bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProviderKey {
    base: Arc<KeyBase>,
    /// Which of the configuration's processes (0 up to `processes`).
    pub lane: usize,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct KeyBase {
    binary: PathBuf,
    /// The provider configuration, serialised (values are not `Hash`).
    config: Vec<u8>,
    run_id: String,
}

impl ProviderKey {
    pub fn new(binary: &Path, config: &Value, run_id: &str) -> ProviderKey {
        let config = rmp_serde::to_vec(config).expect("values always serialise");
        ProviderKey {
            base: Arc::new(KeyBase {
                binary: binary.to_path_buf(),
                config,
                run_id: run_id.to_string(),
            }),
            lane: 0,
        }
    }

    pub fn binary(&self) -> &Path {
        &self.base.binary
    }

    pub fn run_id(&self) -> &str {
        &self.base.run_id
    }
}

type Cell = Arc<OnceCell<Arc<dyn ManagedProvider>>>;

struct Slot {
    cell: Cell,
    last_used: Instant,
}

impl Slot {
    /// Calls waiting for the process to start, plus calls holding it.
    fn load(&self) -> usize {
        Arc::strong_count(&self.cell) - 1 + self.cell.get().map_or(0, |p| Arc::strong_count(p) - 1)
    }
}

struct Inner {
    launcher: Arc<dyn Launcher>,
    config: PoolConfig,
    slots: Mutex<HashMap<ProviderKey, Slot>>,
    /// Cancelled runs, until they finish: a process that was still starting
    /// when its run was cancelled is stopped as soon as it is ready.
    stopped: Mutex<std::collections::HashSet<String>>,
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
                stopped: Mutex::default(),
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
        run_id: &str,
    ) -> Result<Arc<dyn Provider>, ProviderError> {
        self.get_keyed(&ProviderKey::new(binary, config, run_id), config)
            .await
    }

    /// [`ProviderPool::get`] with the key made beforehand from the same
    /// executable, `config` and run (the caller keeps it for the run's
    /// next tasks).
    pub async fn get_keyed(
        &self,
        key: &ProviderKey,
        config: &Value,
    ) -> Result<Arc<dyn Provider>, ProviderError> {
        let run_id = key.run_id();
        let binary = key.binary();
        if self.is_stopped(run_id) {
            return Err(ProviderError::RunStopped);
        }
        let mut key = key.clone();
        let cell = {
            let mut slots = self.inner.slots.lock().expect("pool lock");
            key.lane = choose_lane(&slots, &key, self.inner.config.processes.max(1));
            let slot = slots.entry(key.clone()).or_insert_with(|| Slot {
                cell: Arc::new(OnceCell::new()),
                last_used: Instant::now(),
            });
            slot.last_used = Instant::now();
            slot.cell.clone()
        };
        match cell.get_or_try_init(|| self.start(binary, config)).await {
            Ok(provider) => {
                if self.is_stopped(run_id) {
                    // Cancelled while it started: `stop_run` did not see it.
                    let _ = provider.stop().await;
                    self.take_run(run_id);
                    close_when_unused(provider.clone());
                    return Err(ProviderError::RunStopped);
                }
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

    /// Whether `run_id` was cancelled ([`ProviderPool::stop_run`]).
    pub fn is_stopped(&self, run_id: &str) -> bool {
        self.inner
            .stopped
            .lock()
            .expect("pool lock")
            .contains(run_id)
    }

    /// Takes the processes of `run_id` out of the pool; later calls of the
    /// run start new ones.
    fn take_run(&self, run_id: &str) -> Vec<Arc<dyn ManagedProvider>> {
        let mut slots = self.inner.slots.lock().expect("pool lock");
        let keys: Vec<ProviderKey> = slots
            .keys()
            .filter(|k| k.run_id() == run_id)
            .cloned()
            .collect();
        keys.iter()
            .filter_map(|k| slots.remove(k)?.cell.get().cloned())
            .collect()
    }

    /// Cancels `run_id`: every process of the run gets `StopProvider` (its
    /// calls in progress end early, as the provider sees fit) and leaves the
    /// pool; each is closed once its last call returns. Returns how many
    /// processes were stopped.
    pub async fn stop_run(&self, run_id: &str) -> usize {
        self.inner
            .stopped
            .lock()
            .expect("pool lock")
            .insert(run_id.to_string());
        let taken = self.take_run(run_id);
        let stops = taken.iter().map(|p| async move {
            if let Err(e) = p.stop().await {
                tracing::warn!(run_id, error = %e, "StopProvider failed");
            }
        });
        futures::future::join_all(stops).await;
        let n = taken.len();
        for p in taken {
            close_when_unused(p);
        }
        n
    }

    /// The run ended: its processes leave the pool and close once unused.
    pub fn release_run(&self, run_id: &str) -> usize {
        self.inner.stopped.lock().expect("pool lock").remove(run_id);
        let taken = self.take_run(run_id);
        let n = taken.len();
        for p in taken {
            close_when_unused(p);
        }
        n
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

/// The process for a call of `key`'s configuration: an idle one, else a
/// new one while fewer than `max` run, else the least busy.
fn choose_lane(slots: &HashMap<ProviderKey, Slot>, key: &ProviderKey, max: usize) -> usize {
    let mut least: Option<(usize, usize)> = None;
    let mut unstarted = None;
    let mut probe = key.clone();
    for lane in 0..max {
        probe.lane = lane;
        match slots.get(&probe) {
            Some(slot) => {
                let load = slot.load();
                if least.is_none_or(|(l, _)| load < l) {
                    least = Some((load, lane));
                }
            }
            None => {
                unstarted.get_or_insert(lane);
            }
        }
    }
    match (least, unstarted) {
        (Some((0, lane)), _) => lane,
        (_, Some(lane)) => lane,
        (Some((_, lane)), None) => lane,
        (None, None) => 0,
    }
}

/// Closes a process that left the pool as soon as no call holds it.
fn close_when_unused(p: Arc<dyn ManagedProvider>) {
    tokio::spawn(async move {
        // Holders are tasks in progress; they end, so this ends.
        while Arc::strong_count(&p) > 1 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        p.close().await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    struct CountingLauncher {
        launches: AtomicUsize,
        /// Weak, so the pool's view of who holds a process is not disturbed.
        launched: Mutex<Vec<Weak<FakeProvider>>>,
    }

    #[async_trait]
    impl Launcher for CountingLauncher {
        async fn launch(&self, _: &Path) -> Result<Arc<dyn ManagedProvider>, ProviderError> {
            self.launches.fetch_add(1, Ordering::SeqCst);
            let p = Arc::new(FakeProvider::new());
            self.launched.lock().unwrap().push(Arc::downgrade(&p));
            Ok(p)
        }
    }

    fn stops(p: &FakeProvider) -> usize {
        p.calls().iter().filter(|c| **c == "StopProvider").count()
    }

    #[tokio::test]
    async fn stopping_a_run_stops_only_its_processes_and_retires_them() {
        let (pool, launcher) = pool();
        let bin = Path::new("/bin/fake");
        let one = pool.get(bin, &Value::null(), "one").await.unwrap();
        let two = pool.get(bin, &Value::null(), "two").await.unwrap();
        assert!(!Arc::ptr_eq(&one, &two), "runs get their own processes");
        assert_eq!(pool.stop_run("one").await, 1);
        let launched: Vec<Arc<FakeProvider>> = launcher
            .launched
            .lock()
            .unwrap()
            .iter()
            .map(|w| w.upgrade().expect("held by the test"))
            .collect();
        assert_eq!(stops(&launched[0]), 1, "the cancelled run's process");
        assert_eq!(stops(&launched[1]), 0, "another run's process");
        assert!(
            matches!(
                pool.get(bin, &Value::null(), "one").await,
                Err(ProviderError::RunStopped)
            ),
            "a cancelled run gets no provider"
        );
        assert_eq!(pool.release_run("one"), 0, "already out of the pool");
        let again = pool.get(bin, &Value::null(), "one").await.unwrap();
        assert!(
            !Arc::ptr_eq(&one, &again),
            "a stopped process is never handed out again"
        );
        assert_eq!(launcher.launches.load(Ordering::SeqCst), 3);
        assert_eq!(pool.release_run("two"), 1);
        assert_eq!(pool.len(), 1);
    }

    /// A launcher whose processes start only when the test says so.
    struct GatedLauncher {
        gate: tokio::sync::Semaphore,
        launched: Mutex<Vec<Arc<FakeProvider>>>,
    }

    #[async_trait]
    impl Launcher for GatedLauncher {
        async fn launch(&self, _: &Path) -> Result<Arc<dyn ManagedProvider>, ProviderError> {
            self.gate.acquire().await.expect("gate open").forget();
            let p = Arc::new(FakeProvider::new());
            self.launched.lock().unwrap().push(p.clone());
            Ok(p)
        }
    }

    #[tokio::test]
    async fn a_process_still_starting_when_its_run_is_cancelled_is_stopped_not_used() {
        let launcher = Arc::new(GatedLauncher {
            gate: tokio::sync::Semaphore::new(0),
            launched: Mutex::default(),
        });
        let pool = ProviderPool::with_launcher(PoolConfig::default(), launcher.clone());
        let starting = tokio::spawn({
            let pool = pool.clone();
            async move { pool.get(Path::new("/bin/fake"), &Value::null(), "r").await }
        });
        // Wait until the start is under way (its slot exists).
        while pool.is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(pool.stop_run("r").await, 0, "nothing was running yet");
        launcher.gate.add_permits(2);
        let got = starting.await.unwrap();
        assert!(
            matches!(got, Err(ProviderError::RunStopped)),
            "{:?}",
            got.err()
        );
        let launched = launcher.launched.lock().unwrap().clone();
        assert_eq!(stops(&launched[0]), 1, "stopped once it was ready");
        assert!(matches!(
            pool.get(Path::new("/bin/fake"), &Value::null(), "r").await,
            Err(ProviderError::RunStopped)
        ));
        pool.release_run("r");
        assert!(
            pool.get(Path::new("/bin/fake"), &Value::null(), "r")
                .await
                .is_ok()
        );
    }

    fn pool() -> (ProviderPool, Arc<CountingLauncher>) {
        let launcher = Arc::new(CountingLauncher::default());
        (
            ProviderPool::with_launcher(PoolConfig::default(), launcher.clone()),
            launcher,
        )
    }

    #[tokio::test]
    async fn busy_processes_make_room_for_more_up_to_the_limit() {
        let launcher = Arc::new(CountingLauncher::default());
        let config = PoolConfig {
            processes: 3,
            ..PoolConfig::default()
        };
        let pool = ProviderPool::with_launcher(config, launcher.clone());
        let bin = Path::new("/bin/fake");
        // One call at a time: the one process serves them all.
        for _ in 0..5 {
            let p = pool.get(bin, &Value::null(), "r").await.unwrap();
            drop(p);
        }
        assert_eq!(launcher.launches.load(Ordering::SeqCst), 1);
        // Calls that overlap: a new process each while all are busy, up to 3.
        let held: Vec<_> = futures::future::join_all(
            (0..3).map(|_| pool.get(bin, &fleetform_shared::value::NULL, "r")),
        )
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
        assert_eq!(launcher.launches.load(Ordering::SeqCst), 3);
        let distinct = |v: &[Arc<dyn Provider>]| {
            let mut ptrs: Vec<*const ()> = v.iter().map(|p| Arc::as_ptr(p) as *const ()).collect();
            ptrs.sort();
            ptrs.dedup();
            ptrs.len()
        };
        assert_eq!(distinct(&held), 3, "each on its own process");
        // A fourth overlapping call shares the least busy: no fourth process.
        let fourth = pool.get(bin, &Value::null(), "r").await.unwrap();
        assert_eq!(launcher.launches.load(Ordering::SeqCst), 3);
        assert_eq!(pool.len(), 3);
        // Another configuration or run has its own processes.
        let other = pool.get(bin, &Value::null(), "s").await.unwrap();
        assert!(held.iter().all(|h| !Arc::ptr_eq(h, &other)));
        drop((held, fourth, other));
        assert_eq!(pool.release_run("r"), 3, "the run's processes all leave");
    }

    #[tokio::test]
    async fn one_process_per_binary_and_configuration() {
        let (pool, launcher) = pool();
        let bin = Path::new("/bin/fake");
        let a = Value::object([("region", Value::from("a"))]);
        let b = Value::object([("region", Value::from("b"))]);
        let (p1, p2) = tokio::join!(pool.get(bin, &a, "r"), pool.get(bin, &a, "r"));
        assert!(Arc::ptr_eq(&p1.unwrap(), &p2.unwrap()));
        pool.get(bin, &b, "r").await.unwrap();
        assert_eq!(launcher.launches.load(Ordering::SeqCst), 2);
        assert_eq!(pool.len(), 2);
    }

    #[tokio::test]
    async fn only_unused_idle_processes_are_evicted() {
        let (pool, launcher) = pool();
        let held = pool
            .get(Path::new("/bin/a"), &Value::null(), "r")
            .await
            .unwrap();
        drop(
            pool.get(Path::new("/bin/b"), &Value::null(), "r")
                .await
                .unwrap(),
        );
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
        pool.get(Path::new("/bin/a"), &Value::null(), "r")
            .await
            .unwrap();
        assert_eq!(
            launcher.launches.load(Ordering::SeqCst),
            3,
            "evicted processes are started again"
        );
    }
}
