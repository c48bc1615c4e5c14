//! `fleetform-worker`: a worker process of a fleet.

use clap::Parser;
use fleetform_worker::pool_source::PoolSource;
use fleetform_worker::runtime::follow_control;
use fleetform_worker::{Worker, source};
use std::sync::Arc;

/// Runs provider operations for fleetform coordinators: pulls tasks from
/// NATS JetStream, runs them through provider plugins, publishes results.
/// Start as many as you like; they share the work.
#[derive(Parser, Debug)]
#[command(name = "fleetform-worker", version)]
struct Args {
    /// NATS server URL; the nodes of a cluster separated by commas.
    #[arg(long, env = "FLEETFORM_NATS", default_value = "nats://127.0.0.1:4222")]
    nats: String,
    /// Worker pool to take tasks from.
    #[arg(long, env = "FLEETFORM_POOL", default_value = fleetform_shared::wire::DEFAULT_POOL)]
    pool: String,
    /// Tasks run at the same time by this worker.
    #[arg(long, env = "FLEETFORM_CONCURRENCY", default_value_t = 64)]
    concurrency: usize,
    /// Processes of one provider configuration (per run) this worker may
    /// run: when every one is busy with a call, the next call starts
    /// another, up to N. Raise it for a provider that uses one core (a
    /// single-threaded provider, or one with a global lock); each process
    /// costs the provider's memory.
    #[arg(
        long,
        env = "FLEETFORM_PROVIDER_PROCESSES",
        default_value_t = 1,
        value_name = "N",
        value_parser = clap::value_parser!(u16).range(1..=256)
    )]
    provider_processes: u16,
    /// At most N calls to a provider in flight on this worker at once,
    /// across runs: NAME=N, NAME being a provider's type name (`aws`: of
    /// any namespace) or its source address (`hashicorp/aws`, which wins
    /// over a type name). Repeatable; comma-separated in the environment
    /// variable. Without one, a provider may have as many as
    /// --concurrency. Either way, the limit halves while the provider
    /// answers with throttling errors (those calls are retried with
    /// backoff) and comes back one at a time as calls succeed.
    #[arg(
        long = "provider-limit",
        env = "FLEETFORM_PROVIDER_LIMITS",
        value_name = "NAME=N",
        value_delimiter = ','
    )]
    provider_limits: Vec<fleetform_worker::throttle::ProviderLimit>,
    /// Seconds a task may go unacknowledged before the queue hands it to
    /// another worker (the worker reports progress at a third of it). Set
    /// by the first worker of a pool; later ones share the pool's value.
    #[arg(long, env = "FLEETFORM_ACK_WAIT", default_value_t = source::ACK_WAIT.as_secs(), value_name = "SECONDS")]
    ack_wait: u64,
    /// Name of this worker in results and logs (default: host name and pid).
    #[arg(long, env = "FLEETFORM_WORKER_ID")]
    id: Option<String>,
    /// Resolve creates that a dead worker may have carried out by looking
    /// the object up instead of reporting them interrupted:
    /// TYPE=DATA_SOURCE(ATTR,...) finds objects of resource type TYPE with
    /// the provider's data source DATA_SOURCE by the planned values of the
    /// ATTRs. One object found: it is the create's result. An error saying
    /// "not found": the create runs. Anything else: interrupted, as without
    /// a rule. Repeatable; e.g. sim_object=sim_object(name).
    #[arg(long = "lookup-rule", value_name = "RULE")]
    lookup_rules: Vec<fleetform_worker::handler::lookup::LookupRule>,
    /// Run `local-exec` provisioners, with a clean environment (PATH,
    /// HOME, USER, LOGNAME, LANG, TMPDIR, SHELL and what the provisioner
    /// sets), as this worker's user. Refused by default: they run commands
    /// from the configuration on a machine that holds the fleet's
    /// credentials. A pool whose live workers all refuse them fails a run
    /// that has one at plan time.
    #[arg(long, env = "FLEETFORM_ALLOW_LOCAL_EXEC")]
    allow_local_exec: bool,
    /// Take no task sent to this process directly: every task comes
    /// through the pool's queue. By default a coordinator may send the
    /// next link of a chain straight to the worker that ran the link
    /// before (fewer round trips between hosts); a coordinator whose task
    /// finds no such worker sends it through the queue instead.
    #[arg(long, env = "FLEETFORM_NO_DIRECT")]
    no_direct: bool,
    /// Serve Prometheus metrics at http://ADDR/metrics: operations by
    /// provider, resource type, action and outcome, their durations,
    /// tasks in flight, redeliveries, provider processes.
    #[arg(long, env = "FLEETFORM_METRICS_LISTEN", value_name = "ADDR")]
    metrics_listen: Option<std::net::SocketAddr>,
    /// Log lines as text, or as JSON objects (one per line, with the
    /// run id and task id of what they are about).
    #[arg(long, env = "FLEETFORM_LOG_FORMAT", value_enum, default_value_t = fleetform_telemetry::LogFormat::Text)]
    log_format: fleetform_telemetry::LogFormat,
    #[command(flatten)]
    nats_auth: fleetform_nats::NatsAuth,
}

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    if let Err(e) = work(Args::parse()).await {
        // One line, whatever RUST_BACKTRACE says: what went wrong and
        // what to change (NATS out of reach or refusing, at start).
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
}

async fn work(args: Args) -> anyhow::Result<()> {
    let _telemetry = fleetform_telemetry::init("fleetform-worker", args.log_format)?;
    let id = args
        .id
        .clone()
        .unwrap_or_else(|| format!("{}-{}", host_name(), std::process::id()));
    if let Some(addr) = args.metrics_listen {
        fleetform_worker::metrics::serve(addr)?;
    }
    let ack_wait = std::time::Duration::from_secs(args.ack_wait.max(1));
    let client = fleetform_nats::connect(
        &args.nats,
        &args.nats_auth,
        &format!("fleetform-worker {id}"),
    )
    .await?;
    use fleetform_worker::handler::local_exec::{LocalExecPolicy, set_policy};
    set_policy(if args.allow_local_exec {
        LocalExecPolicy::CleanEnvironment
    } else {
        LocalExecPolicy::Refused {
            pool: args.pool.clone(),
        }
    });
    let heartbeat_client = client.clone();
    let status_client = client.clone();
    let incarnation = format!("{:016x}", rand::random::<u64>());
    let process = source::Process {
        worker: id.clone(),
        incarnation: incarnation.clone(),
    };
    let (source, sink, control) = source::connect(
        client,
        &args.pool,
        ack_wait,
        args.nats_auth.replicas(),
        args.concurrency,
        (!args.no_direct).then_some(&process),
    )
    .await?;
    let providers = Arc::new(PoolSource::with_processes(usize::from(
        args.provider_processes,
    )));
    let throttles = fleetform_worker::throttle::Throttles::new(
        fleetform_worker::throttle::ProviderLimits::new(args.provider_limits.clone()),
        args.concurrency,
    );
    let mut worker = Worker::new(id.clone(), args.concurrency, providers.clone())
        .with_throttles(Arc::new(throttles));
    worker.incarnation = incarnation.clone();
    worker.progress_every = ack_wait / 3;
    worker.lookup = Arc::new(fleetform_worker::handler::lookup::LookupRules::new(
        args.lookup_rules,
    ));
    // Before the first task is taken: a coordinator may ask about any.
    fleetform_worker::status::answer_status(
        status_client,
        id.clone(),
        incarnation,
        worker.taken.clone(),
    )
    .await?;
    tokio::spawn(follow_control(
        control,
        providers.clone(),
        worker.stopped.clone(),
    ));
    let (stop_heartbeat, heartbeat_stopped) = tokio::sync::oneshot::channel::<()>();
    let heartbeat = {
        let started_at = now_rfc3339();
        let host = host_name();
        let (in_flight, completed) = (worker.in_flight.clone(), worker.completed.clone());
        let (id, pool, concurrency) = (id.clone(), args.pool.clone(), args.concurrency as u64);
        let allow_local_exec = args.allow_local_exec;
        let processes = providers.clone();
        tokio::spawn(source::heartbeat(
            heartbeat_client,
            format!("{pool}.{id}"),
            move || fleetform_shared::wire::WorkerInfo {
                id: id.clone(),
                pool: pool.clone(),
                host: host.clone(),
                version: env!("CARGO_PKG_VERSION").to_string(),
                concurrency,
                in_flight: {
                    let n = in_flight.load(std::sync::atomic::Ordering::Relaxed);
                    fleetform_worker::metrics::in_flight(&pool, n);
                    fleetform_worker::metrics::provider_processes(processes.processes());
                    n
                },
                completed: completed.load(std::sync::atomic::Ordering::Relaxed),
                allow_local_exec,
                started_at: started_at.clone(),
                seen_at: now_rfc3339(),
            },
            async {
                let _ = heartbeat_stopped.await;
            },
            args.nats_auth.replicas(),
        ))
    };
    // Tests wait for this line before submitting work.
    println!("worker {id} ready");
    tracing::info!(worker = %id, pool = %args.pool, concurrency = args.concurrency, "worker ready");
    worker
        .run(Arc::new(source), Arc::new(sink), async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    let _ = stop_heartbeat.send(());
    let _ = heartbeat.await;
    providers.shutdown().await;
    // Tests read this line to see how the work was spread.
    println!(
        "worker {id} completed {} tasks",
        worker.completed.load(std::sync::atomic::Ordering::Relaxed)
    );
    Ok(())
}

fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "worker".into())
}

/// Now, in RFC 3339 to the second in UTC (`2026-11-28T14:05:09Z`), as the
/// coordinator writes its times.
fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.replace_nanosecond(0)
        .unwrap_or(now)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
