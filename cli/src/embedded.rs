//! Embedded mode: a coordinator and in-process workers inside the CLI, state
//! under `.fleetform/` of the working directory, served to the CLI's own
//! gRPC client on a loopback port so both modes share one client path.

use fleetform_coordinator::auth::Auth;
use fleetform_coordinator::server::{ApiSecurity, Transport, build, serve_with};
use fleetform_worker::Worker;
use fleetform_worker::pool_source::PoolSource;
use fleetform_worker::runtime::{StoppedRuns, follow_control};
use fleetform_worker::source::{LocalSink, LocalSource, local_control};
use fleetform_worker::throttle::{ProviderLimits, Throttles};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::oneshot;

/// In-process workers; each runs up to [`CONCURRENCY`] tasks at once.
const WORKERS: usize = 4;
const CONCURRENCY: usize = 64;

/// Set once this process runs its own coordinator: runs followed then
/// live and die with the process.
static RUNNING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process runs the coordinator it talks to.
pub fn is_running() -> bool {
    RUNNING.load(std::sync::atomic::Ordering::Relaxed)
}

pub struct Embedded {
    pub url: String,
    /// The only credential the in-process API accepts: another local
    /// user who finds its loopback port can do nothing with it.
    pub token: String,
    stop: Option<oneshot::Sender<()>>,
    server: tokio::task::JoinHandle<anyhow::Result<()>>,
    providers: Arc<PoolSource>,
}

impl Embedded {
    pub async fn start(workdir: &Path) -> anyhow::Result<Embedded> {
        RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
        let data = workdir.join(".fleetform");
        let state_dir = data.join("state");
        std::fs::create_dir_all(&state_dir)?;
        let state_url = format!("file://{}", std::fs::canonicalize(&state_dir)?.display());
        let (coordinator, ends) = build(&state_url, &data, Transport::Local).await?;
        let mut ends = ends.expect("local transport returns its ends");
        let recovering = ends.recovering.take();
        let source = Arc::new(LocalSource::new(ends.tasks));
        let sink = Arc::new(LocalSink::new(ends.results, ends.progress));
        let providers = Arc::new(PoolSource::with_processes(provider_processes()?));
        // One set of limits for the process: they are the provider's, not
        // one in-process worker's.
        let throttles = Arc::new(Throttles::new(provider_limits()?, WORKERS * CONCURRENCY));
        let stopped = Arc::new(StoppedRuns::default());
        tokio::spawn(follow_control(
            local_control(ends.control),
            providers.clone(),
            stopped.clone(),
        ));
        for i in 0..WORKERS {
            // In-process delivery happens once: the worker need not
            // remember finished tasks to answer a second delivery.
            let worker = Worker::new(format!("embedded-{i}"), CONCURRENCY, providers.clone())
                .remembering(CONCURRENCY)
                .with_stopped(stopped.clone())
                .with_throttles(throttles.clone());
            let (source, sink) = (source.clone(), sink.clone());
            tokio::spawn(async move { worker.run(source, sink, std::future::pending()).await });
        }
        // A run an earlier process left applying is finished first: it holds
        // the workspace, and this command must start from what it leaves.
        if let Some(r) = recovering {
            let _ = r.await;
        }
        for run in coordinator.runs() {
            eprintln!(
                "Finishing run {}, which an earlier fleetform process left applying...",
                run.id
            );
            run.events.wait_finished().await;
            for event in run.events.since(0) {
                use fleetform_shared::wire::RunEvent;
                let (addr, diags) = match event {
                    RunEvent::ApplyErrored {
                        addr, diagnostics, ..
                    } => (Some(addr), diagnostics),
                    RunEvent::Diagnostics(d) => (None, d),
                    _ => continue,
                };
                for d in d_errors(&diags) {
                    match &addr {
                        Some(a) => eprintln!("  {a}: {}: {}", d.summary, d.detail),
                        None => eprintln!("  {}: {}", d.summary, d.detail),
                    }
                }
            }
            let status = run.events.status();
            eprintln!(
                "Run {} ended: {:?}.",
                run.id,
                status.unwrap_or(fleetform_shared::wire::RunStatus::Failed)
            );
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let (tx, rx) = oneshot::channel::<()>();
        let token = random_token();
        let server = tokio::spawn(serve_with(
            coordinator,
            listener,
            embedded_security(&token),
            async {
                let _ = rx.await;
            },
        ));
        Ok(Embedded {
            url,
            token,
            stop: Some(tx),
            server,
            providers,
        })
    }

    /// A coordinator for commands that only read the state, while another
    /// process holds this directory's database: its own scratch database,
    /// the same state files, no workers.
    pub async fn start_reader(workdir: &Path) -> anyhow::Result<Embedded> {
        RUNNING.store(true, std::sync::atomic::Ordering::Relaxed);
        let state_dir = workdir.join(".fleetform").join("state");
        let state_url = format!("file://{}", std::fs::canonicalize(&state_dir)?.display());
        let scratch = tempfile::tempdir()?;
        let (coordinator, _ends) = build(&state_url, scratch.path(), Transport::Local).await?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let (tx, rx) = oneshot::channel::<()>();
        let token = random_token();
        let security = embedded_security(&token);
        let server = tokio::spawn(async move {
            let _scratch = scratch;
            serve_with(coordinator, listener, security, async {
                let _ = rx.await;
            })
            .await
        });
        Ok(Embedded {
            url,
            token,
            stop: Some(tx),
            server,
            providers: Arc::new(PoolSource::new()),
        })
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.server).await;
        self.providers.shutdown().await;
    }
}

fn d_errors(
    diags: &fleetform_shared::diag::Diagnostics,
) -> impl Iterator<Item = &fleetform_shared::diag::Diagnostic> {
    diags
        .iter()
        .filter(|d| d.severity == fleetform_shared::diag::Severity::Error)
}

/// Whether starting failed because another fleetform process holds this
/// directory's database.
pub fn busy(e: &anyhow::Error) -> bool {
    format!("{e:#}").contains("Database already open")
}

/// What a command that changes the state says when another process runs
/// in the directory: Terraform's lock error, with the holder if known.
pub async fn busy_error(workdir: &Path, workspace: &str) -> fleetform_shared::diag::Diagnostic {
    let state_dir = workdir.join(".fleetform").join("state");
    let holder =
        match fleetform_coordinator::store::open(&format!("file://{}", state_dir.display())) {
            Ok(store) => store.leases().holder(workspace).await.ok().flatten(),
            Err(_) => None,
        };
    let who = match holder {
        Some(h) => format!(
            "\n\nLock Info:\n  ID:        {}\n  Run:       {}\n  Operation: {}\n  Who:       {}\n  Created:   {}",
            h.id, h.run_id, h.operation, h.owner, h.created
        ),
        None => String::new(),
    };
    fleetform_shared::diag::Diagnostic::error(
        "Error acquiring the state lock",
        format!(
            "Another fleetform process is running in {} (it holds .fleetform/coordinator.redb).{who}\n\nWait for it to finish, or follow it from its own terminal. Commands that only read the state (state list, state show, output, show) work meanwhile.",
            workdir.display()
        ),
    )
}

/// 244 random bits.
fn random_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

fn embedded_security(token: &str) -> ApiSecurity {
    ApiSecurity {
        auth: Some(Arc::new(Auth::single_admin(token))),
        ..ApiSecurity::default()
    }
}

/// Processes per provider configuration in embedded mode:
/// `FLEETFORM_PROVIDER_PROCESSES`, else one per core (a provider that uses
/// one core then uses them all; extra processes start only while every one
/// is busy).
fn provider_processes() -> anyhow::Result<usize> {
    match std::env::var("FLEETFORM_PROVIDER_PROCESSES") {
        Ok(v) if !v.trim().is_empty() => match v.trim().parse::<usize>() {
            Ok(n) if (1..=256).contains(&n) => Ok(n),
            _ => anyhow::bail!(
                "FLEETFORM_PROVIDER_PROCESSES={v:?}: expected a number of processes from 1 to 256"
            ),
        },
        _ => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// Per-provider limits in embedded mode: `FLEETFORM_PROVIDER_LIMITS`, the
/// same `NAME=N` list as a worker's `--provider-limit` (e.g.
/// `aws=10,hashicorp/google=4`); none by default, so a provider may have
/// as many calls in flight as the in-process workers run tasks.
fn provider_limits() -> anyhow::Result<ProviderLimits> {
    let v = std::env::var("FLEETFORM_PROVIDER_LIMITS").unwrap_or_default();
    ProviderLimits::parse_list(&v).map_err(|e| anyhow::anyhow!("FLEETFORM_PROVIDER_LIMITS: {e}"))
}
