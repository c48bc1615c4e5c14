//! Wiring: a coordinator with its store, journal and queue, served on a
//! bound listener until a shutdown future resolves.

use crate::api::Api;
use crate::dispatch::{Dispatcher, LocalQueue, NatsQueue, ResultRouter, TaskQueue, spawn_settler};
use crate::run::{Coordinator, recover};
use crate::store::{
    CachedStore, Journal, SchemaCache, SegmentPolicy, StateStore, open, open_db_or_reset,
};
use fleetform_shared::wire::{RunControl, TaskProgress, TaskResult};
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long a restarted coordinator waits for results of operations that
/// were in flight when the previous process stopped.
const RECOVERY_WAIT: Duration = Duration::from_secs(120);
use tokio::sync::{broadcast, mpsc};

/// Where tasks go.
pub enum Transport {
    Nats {
        url: String,
        consumer: String,
        /// Credentials and TLS for the connection.
        auth: fleetform_nats::NatsAuth,
    },
    /// In-process: the caller runs workers on the returned channels.
    Local,
}

/// The in-process ends handed to embedded workers.
pub struct LocalEnds {
    pub tasks: mpsc::UnboundedReceiver<crate::dispatch::LocalTask>,
    pub results: mpsc::UnboundedSender<TaskResult>,
    pub progress: mpsc::UnboundedSender<TaskProgress>,
    pub control: broadcast::Receiver<RunControl>,
    /// Ends once the runs an earlier process left are taken up.
    pub recovering: Option<tokio::task::JoinHandle<()>>,
}

/// Builds a coordinator: state at `state_url`, cache and journal in
/// `data_dir/coordinator.redb`.
pub async fn build(
    state_url: &str,
    data_dir: &Path,
    transport: Transport,
) -> anyhow::Result<(Coordinator, Option<LocalEnds>)> {
    build_with(state_url, data_dir, transport, Tuning::default()).await
}

/// What a coordinator process may change of its defaults.
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    /// When applying runs write their state segments.
    pub segments: SegmentPolicy,
    /// How long a workspace lease lasts unless renewed: how long a dead
    /// coordinator's runs wait before another one takes them over.
    pub lock_ttl: Duration,
    /// How long a task's result may be awaited with nothing heard of it
    /// before it is settled (see `dispatch::settle`): the queue may have
    /// lost the task or its result.
    pub settle_after: Duration,
    /// How long after a run ends its task claims are deleted.
    pub claims_kept: Duration,
    /// Refresh each workspace's objects this often in the background
    /// (none: only runs read objects).
    pub refresh_every: Option<Duration>,
    /// At most this many background reads per second per workspace.
    pub refresh_rate: Option<f64>,
    /// Send the next link of a chain to the worker process that ran the
    /// link before, its claim written first (see
    /// `dispatch::TaskQueue::send_direct`); off, every task goes through
    /// the queue.
    pub direct_dispatch: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            segments: SegmentPolicy::default(),
            lock_ttl: Duration::from_secs(30),
            settle_after: crate::dispatch::SETTLE_EVERY,
            direct_dispatch: true,
            claims_kept: crate::dispatch::CLAIMS_KEPT,
            refresh_every: None,
            refresh_rate: None,
        }
    }
}

/// [`build`] with `tuning`.
pub async fn build_with(
    state_url: &str,
    data_dir: &Path,
    transport: Transport,
    tuning: Tuning,
) -> anyhow::Result<(Coordinator, Option<LocalEnds>)> {
    let (db, notice) = open_db_or_reset(&data_dir.join("coordinator.redb"))?;
    let embedded = matches!(transport, Transport::Local);
    if let Some(notice) = notice {
        if embedded {
            // Embedded: the person at the terminal is the operator.
            eprintln!("Warning: {notice}\n");
        } else {
            tracing::warn!("{notice}");
        }
    }
    // Encryption at rest, from FLEETFORM_ENCRYPTION_* (none when unset).
    let sealer = Arc::new(crate::store::sealer_from_env()?);
    let objects = open(state_url)?.with_sealer(sealer.clone());
    // A store that cannot work stops the process now, with its fix, rather
    // than every run retrying it.
    crate::store::check_at_start(state_url, data_dir).await?;
    let leases = objects.leases();
    let claims = objects.claims();
    let archive = objects.archive();
    // A local directory needs no copy of its snapshots in the database:
    // that copy cost a second encoding of the state and a write as large
    // as the snapshot at the end of every apply (39 MB at 100,000
    // instances), when memory is at its peak.
    let store: Arc<dyn StateStore> = if state_url.starts_with("file://") {
        Arc::new(objects)
    } else {
        Arc::new(CachedStore::new(objects, db.clone()).with_sealer(sealer.clone()))
    };
    let router = ResultRouter::new();
    let journal = Journal::new(db.clone()).with_sealer(sealer.clone());
    // Before any result is consumed, so results queued for operations that
    // were in flight when the last process stopped find their waiters.
    let recoveries = recover::prepare(&journal, &router)?;
    // In-process workers ended with the process that ran them: nothing in
    // flight can still answer. Workers of a fleet may, once reconnected.
    let recovery_wait = match transport {
        Transport::Nats { .. } => RECOVERY_WAIT,
        Transport::Local => Duration::ZERO,
    };
    // Who holds leases: the coordinator's name (its result consumer), so a
    // restarted one knows its predecessor's locks from another's.
    let owner_name = match &transport {
        Transport::Nats { consumer, .. } => consumer.clone(),
        Transport::Local => "embedded".to_string(),
    };
    let (queue, ends): (Arc<dyn TaskQueue>, _) = match transport {
        Transport::Nats {
            url,
            consumer,
            auth,
        } => {
            let client =
                fleetform_nats::connect(&url, &auth, &format!("fleetform-coordinator {consumer}"))
                    .await?;
            let queue: Arc<dyn TaskQueue> = Arc::new(
                NatsQueue::start(
                    client,
                    &consumer,
                    router.clone(),
                    auth.replicas(),
                    claims.clone(),
                )
                .await?
                .sending_direct(tuning.direct_dispatch),
            );
            // The in-process queue loses nothing the process does not
            // lose with it; only a fleet's queue needs watching.
            spawn_settler(
                router.clone(),
                queue.clone(),
                claims,
                tuning.settle_after,
                tuning.claims_kept,
                ended_before(&journal),
            );
            (queue, None)
        }
        Transport::Local => {
            let (q, ends) = LocalQueue::new(router.clone());
            let control = q.control_receiver();
            (
                Arc::new(q),
                Some(LocalEnds {
                    tasks: ends.tasks,
                    results: ends.results,
                    progress: ends.progress,
                    control,
                    recovering: None,
                }),
            )
        }
    };
    let coordinator = Coordinator::new(
        store,
        journal,
        SchemaCache::new(db),
        Dispatcher::new(queue, router),
    )
    .with_leases(leases, &owner_name)
    .with_archive(archive, tuning.segments)
    .with_lock_ttl(tuning.lock_ttl);
    // Embedded: the process ends with its runs.
    let coordinator = if embedded {
        coordinator
            .without_packing_ended_logs()
            .reading_local_files()
    } else {
        let dir = data_dir.join("ended-runs");
        let logs = crate::run::EndedLogs::new(dir.clone(), sealer)
            .map_err(|e| anyhow::anyhow!("clearing {}: {e}", dir.display()))?;
        coordinator.with_ended_logs(logs)
    };
    // Last: from here the coordinator's shared parts are shared.
    let coordinator = match tuning.refresh_every {
        Some(every) if !embedded => coordinator.with_background_refresh(every, tuning.refresh_rate),
        _ => coordinator,
    };
    let in_flight_lost = recovery_wait.is_zero();
    let recovering = coordinator.recover(recoveries, recovery_wait, in_flight_lost);
    if !in_flight_lost {
        // A fleet: runs whose coordinator died, here or on another host,
        // are taken over once their lease expires (checked every half lease).
        let c = coordinator.clone();
        tokio::spawn(async move {
            loop {
                c.adopt_orphans(RECOVERY_WAIT).await;
                tokio::time::sleep(c.lock_ttl() / 2).await;
            }
        });
    }
    let ends = ends.map(|e| LocalEnds { recovering, ..e });
    Ok((coordinator, ends))
}

/// Serves the API on `listener` until `shutdown` resolves, without TLS
/// or authentication.
pub async fn serve(
    coordinator: Coordinator,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    serve_with(coordinator, listener, ApiSecurity::default(), shutdown).await
}

/// How the API is protected.
#[derive(Clone, Default)]
pub struct ApiSecurity {
    /// PEM certificate chain and private key: serve over TLS.
    pub tls: Option<(Vec<u8>, Vec<u8>)>,
    /// PEM CA certificates that client certificates are verified against
    /// (mutual TLS); needs `tls`.
    pub client_ca: Option<Vec<u8>>,
    /// Who may do what; None: anyone who can connect may do anything.
    pub auth: Option<Arc<crate::auth::Auth>>,
}

/// Chooses rustls's crypto provider for this process: two are in the
/// dependency tree (ring, which tonic and the plugin host use, and
/// aws-lc-rs, which the S3 client brings), so rustls cannot choose one
/// by itself and a TLS server or client would panic. Idempotent.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// [`serve`] with TLS and authentication.
pub async fn serve_with(
    coordinator: Coordinator,
    listener: TcpListener,
    security: ApiSecurity,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    install_crypto_provider();
    let mut builder = tonic::transport::Server::builder();
    if let Some((cert, key)) = &security.tls {
        let mut tls = tonic::transport::ServerTlsConfig::new()
            .identity(tonic::transport::Identity::from_pem(cert, key));
        if let Some(ca) = &security.client_ca {
            // A certificate is verified against the CA when presented, and
            // required by the API's authentication, not by the handshake:
            // a client without one is then told what it lacks, where a
            // refused handshake says only "transport error".
            tls = tls
                .client_ca_root(tonic::transport::Certificate::from_pem(ca))
                .client_auth_optional(true);
        }
        builder = builder
            .tls_config(tls)
            .map_err(|e| anyhow::anyhow!("TLS configuration: {e}"))?;
    }
    builder
        .add_service(
            Api::new(coordinator)
                .with_auth(security.auth)
                .into_service(),
        )
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    Ok(())
}

/// The runs the journal remembers as ended, with how long ago each ended
/// (by this host's clock; one whose end is unreadable or in the future
/// counts as just ended, so its claims are kept the longest).
fn ended_before(journal: &Journal) -> Vec<(String, std::time::Duration)> {
    let runs = journal.ended_runs().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "reading the ended runs failed; their claims are kept");
        Vec::new()
    });
    let now = std::time::SystemTime::now();
    runs.into_iter()
        .map(|(id, ended)| {
            let ago = fleetform_lang::eval::parse_rfc3339(&ended.ended_at)
                .and_then(|t| now.duration_since(t).ok())
                .unwrap_or_default();
            (id, ago)
        })
        .collect()
}
