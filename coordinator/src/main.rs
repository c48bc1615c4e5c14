//! `fleetform-coordinator`: the coordinator as a server process.

use clap::Parser;
use fleetform_coordinator::auth::Auth;
use fleetform_coordinator::server::{ApiSecurity, Transport, Tuning, build_with, serve_with};
use fleetform_coordinator::store::SegmentPolicy;
use std::path::PathBuf;

/// Plans and applies fleetform runs by dispatching operations to workers
/// over NATS JetStream, and keeps state in an object store.
#[derive(Parser, Debug)]
#[command(name = "fleetform-coordinator", version)]
struct Args {
    /// Address to serve the gRPC API on.
    #[arg(long, env = "FLEETFORM_LISTEN", default_value = "127.0.0.1:7400")]
    listen: String,
    /// NATS server URL; the nodes of a cluster separated by commas.
    #[arg(long, env = "FLEETFORM_NATS", default_value = "nats://127.0.0.1:4222")]
    nats: String,
    /// Where state snapshots live: s3://bucket/prefix, file:///path or memory://.
    #[arg(
        long,
        env = "FLEETFORM_STATE",
        default_value = "file://./.fleetform/state"
    )]
    state: String,
    /// Local directory for the redb cache and journal.
    #[arg(
        long,
        env = "FLEETFORM_DATA_DIR",
        default_value = ".fleetform/coordinator"
    )]
    data_dir: PathBuf,
    /// Name of this coordinator's durable result consumer.
    #[arg(
        long,
        env = "FLEETFORM_COORDINATOR_NAME",
        default_value = "fleetform-coordinator"
    )]
    name: String,
    /// While a run applies, write its state changes to the object store
    /// after this many recorded operations (or --segment-interval, whichever
    /// comes first), so a coordinator on another host can finish the run
    /// if this one dies with its disk, and `state pull` shows progress.
    #[arg(
        long,
        env = "FLEETFORM_SEGMENT_OPS",
        default_value_t = 200,
        value_name = "N"
    )]
    segment_ops: usize,
    /// ...or this long after the first unwritten change (`5s`, `500ms`).
    #[arg(
        long,
        env = "FLEETFORM_SEGMENT_INTERVAL",
        default_value = "5s",
        value_name = "DURATION"
    )]
    segment_interval: String,
    /// How long a workspace lock lasts unless its holder renews it (every
    /// third of it): a coordinator that dies holds its workspaces that
    /// long, then another coordinator takes its applying runs over.
    #[arg(
        long,
        env = "FLEETFORM_LOCK_TTL",
        default_value = "30s",
        value_name = "DURATION"
    )]
    lock_ttl: String,
    /// How long a task's result may be awaited with nothing heard of the
    /// task before the coordinator settles it: looks its claim up, asks
    /// the worker holding it, or publishes it again (the queue may have
    /// lost the task or its result).
    #[arg(
        long,
        env = "FLEETFORM_SETTLE_AFTER",
        default_value = "30s",
        value_name = "DURATION"
    )]
    settle_after: String,
    /// Send every task through the queue, none to a worker directly. By
    /// default the next link of a chain (a create or update whose
    /// dependency just finished) goes to the worker process that ran the
    /// link before, its claim written for that process first: across
    /// hosts apart, a link then costs 3 round trips instead of 5.
    #[arg(long, env = "FLEETFORM_NO_DIRECT_DISPATCH")]
    no_direct_dispatch: bool,
    /// How long after a run ended its task claims (in the state store,
    /// under `claims/<run id>/`) are deleted.
    #[arg(
        long,
        env = "FLEETFORM_CLAIMS_KEPT",
        default_value = "24h",
        value_name = "DURATION"
    )]
    claims_kept: String,
    /// Keep each workspace's objects refreshed in the background: every
    /// DURATION, the workspace's latest plan or apply that ended well is
    /// run again as a refresh-only plan that reads the objects whose
    /// recorded read is older than half of DURATION. Plans with
    /// `-refresh-max-age=DURATION` (or longer) then reuse those reads,
    /// and `fleetform drift` shows what changed outside. A run a user
    /// submits cancels the workspace's refresh and goes first. Off by
    /// default: every read costs the cloud account's API rate.
    #[arg(long, env = "FLEETFORM_REFRESH_EVERY", value_name = "DURATION")]
    refresh_every: Option<String>,
    /// With --refresh-every: read at most N objects per second per
    /// workspace in the background (e.g. a quarter of the cloud account's
    /// read limit, leaving the rest to users' runs). Default: as fast as
    /// the workers and the providers allow.
    #[arg(
        long,
        env = "FLEETFORM_REFRESH_RATE",
        value_name = "N",
        requires = "refresh_every"
    )]
    refresh_rate: Option<f64>,
    /// Serve the API over TLS with this PEM certificate (chain)...
    #[arg(
        long,
        env = "FLEETFORM_TLS_CERT",
        value_name = "FILE",
        requires = "tls_key"
    )]
    tls_cert: Option<PathBuf>,
    /// ...and this PEM private key.
    #[arg(
        long,
        env = "FLEETFORM_TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert"
    )]
    tls_key: Option<PathBuf>,
    /// Verify client certificates against these PEM CA certificates
    /// (mutual TLS; needs --tls-cert). A certificate's subject common name
    /// is granted roles by `cert:NAME ROLE GLOB` lines of --auth-token-file.
    #[arg(
        long,
        env = "FLEETFORM_CLIENT_CA",
        value_name = "FILE",
        requires = "tls_cert",
        requires = "auth_token_file"
    )]
    client_ca: Option<PathBuf>,
    /// Require credentials on every API request. The file has one grant
    /// per line, `TOKEN ROLE WORKSPACE-GLOB` (or `cert:COMMON-NAME ROLE
    /// GLOB`); roles: read (show, state pull, output, runs watch), plan,
    /// apply (also approve, cancel, taint), admin (force-unlock, state
    /// push/mv/rm, workspace delete), each including the ones before.
    /// The CLI sends its token from FLEETFORM_TOKEN, or the one `fleetform
    /// login` stored.
    #[arg(long, env = "FLEETFORM_AUTH_TOKEN_FILE", value_name = "FILE")]
    auth_token_file: Option<PathBuf>,
    /// Allow serving the API without authentication on an address other
    /// than loopback: anyone who reaches the port can then run, approve
    /// and cancel runs and read every state.
    #[arg(long)]
    insecure: bool,
    /// Serve Prometheus metrics at http://ADDR/metrics: runs by operation
    /// and status, tasks dispatched and in flight, queue depth, dispatch
    /// retries, journal and snapshot write latency.
    #[arg(long, env = "FLEETFORM_METRICS_LISTEN", value_name = "ADDR")]
    metrics_listen: Option<std::net::SocketAddr>,
    /// Serve the live view, a web page of the runs with each run's graph
    /// drawn as it executes, at http://ADDR/ (https with --tls-cert). It
    /// has the API's protection: sign in with an API token or a client
    /// certificate; a run needs the read role on its workspace. Like the
    /// API, it serves only loopback without --auth-token-file unless
    /// --insecure.
    #[arg(long, env = "FLEETFORM_UI_LISTEN", value_name = "ADDR")]
    ui_listen: Option<String>,
    /// Log lines as text, or as JSON objects (one per line, with the
    /// run id and task id of what they are about).
    #[arg(long, env = "FLEETFORM_LOG_FORMAT", value_enum, default_value_t = fleetform_telemetry::LogFormat::Text)]
    log_format: fleetform_telemetry::LogFormat,
    #[command(flatten)]
    nats_auth: fleetform_nats::NatsAuth,
}

/// The API's protection from the flags; refuses an unauthenticated API on
/// a reachable address unless --insecure.
fn security(args: &Args, listen: std::net::SocketAddr) -> anyhow::Result<ApiSecurity> {
    let read = |p: &PathBuf, what: &str| {
        std::fs::read(p).map_err(|e| anyhow::anyhow!("{what} {}: {e}", p.display()))
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => Some((read(c, "--tls-cert")?, read(k, "--tls-key")?)),
        _ => None,
    };
    let client_ca = args
        .client_ca
        .as_ref()
        .map(|p| read(p, "--client-ca"))
        .transpose()?;
    let auth = args
        .auth_token_file
        .as_ref()
        .map(|p| Auth::from_file(p))
        .transpose()?
        .map(std::sync::Arc::new);
    if auth.is_none() && !listen.ip().is_loopback() && !args.insecure {
        anyhow::bail!(
            "refusing to serve the API on {listen} without authentication: anyone who can reach it could run, approve and cancel runs and read every state. Give --auth-token-file (and --tls-cert/--tls-key), listen on a loopback address, or pass --insecure if the network itself is trusted."
        );
    }
    match (&auth, &tls) {
        (None, _) if listen.ip().is_loopback() => eprintln!(
            "API without authentication: listening on loopback ({listen}) only; give --auth-token-file to serve other hosts"
        ),
        (None, _) => eprintln!(
            "WARNING: API without authentication on {listen} (--insecure): anyone who can reach it may do anything"
        ),
        (Some(_), None) if !listen.ip().is_loopback() => eprintln!(
            "WARNING: API tokens travel in clear text on {listen}: give --tls-cert and --tls-key"
        ),
        _ => {}
    }
    Ok(ApiSecurity {
        tls,
        client_ca,
        auth,
    })
}

#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    fleetform_coordinator::memory::purge_promptly();
    let served = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Each thread gives back what it freed once a run has ended.
        .on_thread_park(|| {
            fleetform_coordinator::memory::collect_when_idle();
        })
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|rt| rt.block_on(serve()));
    if let Err(e) = served {
        // One line, whatever RUST_BACKTRACE says: what went wrong and
        // what to change (a misconfigured store or NATS, at start).
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
}

async fn serve() -> anyhow::Result<()> {
    let args = Args::parse();
    let _telemetry = fleetform_telemetry::init("fleetform-coordinator", args.log_format)?;
    let state = absolutize_file_url(&args.state)?;
    let interval = fleetform_lang::eval::parse_go_duration(&args.segment_interval)
        .map_err(|e| anyhow::anyhow!("--segment-interval: {e}"))?;
    anyhow::ensure!(args.segment_ops > 0, "--segment-ops must be at least 1");
    let lock_ttl = fleetform_lang::eval::parse_go_duration(&args.lock_ttl)
        .map_err(|e| anyhow::anyhow!("--lock-ttl: {e}"))?;
    anyhow::ensure!(
        lock_ttl >= std::time::Duration::from_secs(3),
        "--lock-ttl must be at least 3s"
    );
    let settle_after = fleetform_lang::eval::parse_go_duration(&args.settle_after)
        .map_err(|e| anyhow::anyhow!("--settle-after: {e}"))?;
    anyhow::ensure!(
        settle_after >= std::time::Duration::from_millis(500),
        "--settle-after must be at least 500ms"
    );
    let claims_kept = fleetform_lang::eval::parse_go_duration(&args.claims_kept)
        .map_err(|e| anyhow::anyhow!("--claims-kept: {e}"))?;
    let refresh_every = match &args.refresh_every {
        None => None,
        Some(text) => {
            let every = fleetform_lang::eval::parse_go_duration(text)
                .map_err(|e| anyhow::anyhow!("--refresh-every: {e}"))?;
            anyhow::ensure!(
                every >= std::time::Duration::from_secs(1),
                "--refresh-every must be at least 1s"
            );
            Some(every)
        }
    };
    if let Some(rate) = args.refresh_rate {
        anyhow::ensure!(
            rate.is_finite() && rate >= 0.01,
            "--refresh-rate must be a number of reads per second, at least 0.01"
        );
    }
    if let Some(addr) = args.metrics_listen {
        fleetform_coordinator::metrics::serve(addr)?;
    }
    // The API's protection is checked before anything starts.
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    let security = security(&args, listener.local_addr()?)?;
    let (coordinator, _) = build_with(
        &state,
        &args.data_dir,
        Transport::Nats {
            url: args.nats.clone(),
            consumer: args.name.clone(),
            auth: args.nats_auth.clone(),
        },
        Tuning {
            segments: SegmentPolicy {
                ops: args.segment_ops,
                interval,
            },
            lock_ttl,
            settle_after,
            claims_kept,
            refresh_every,
            refresh_rate: args.refresh_rate,
            direct_dispatch: !args.no_direct_dispatch,
        },
    )
    .await?;
    if let Some(addr) = &args.ui_listen {
        let ui = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("--ui-listen {addr}: {e}"))?;
        let ui_addr = ui.local_addr()?;
        if security.auth.is_none() && !ui_addr.ip().is_loopback() && !args.insecure {
            anyhow::bail!(
                "refusing to serve the live view on {ui_addr} without authentication: anyone who can reach it could read every run. Give --auth-token-file, listen on a loopback address, or pass --insecure."
            );
        }
        let scheme = if security.tls.is_some() {
            "https"
        } else {
            "http"
        };
        // Tests bind port 0 and read the address from this line.
        println!("live view on {scheme}://{ui_addr}/");
        let (c, sec) = (coordinator.clone(), security.clone());
        tokio::spawn(async move {
            if let Err(e) = fleetform_coordinator::ui::serve(c, ui, sec).await {
                tracing::error!(error = %e, "the live view stopped");
                eprintln!("Error: the live view stopped: {e:#}");
            }
        });
    }
    // Tests bind port 0 and read the address from this line.
    println!("listening on {}", listener.local_addr()?);
    tracing::info!(addr = %listener.local_addr()?, nats = %args.nats, state = %state, tls = security.tls.is_some(), auth = security.auth.is_some(), "coordinator ready");
    serve_with(coordinator, listener, security, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
}

/// `file://./x` is relative to the working directory; object_store wants absolute paths.
fn absolutize_file_url(url: &str) -> anyhow::Result<String> {
    match url.strip_prefix("file://") {
        Some(p) if !p.starts_with('/') => Ok(format!(
            "file://{}",
            std::env::current_dir()?.join(p).display()
        )),
        _ => Ok(url.to_string()),
    }
}
