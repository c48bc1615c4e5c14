//! `fleetform-coordinator`: the coordinator as a server process.

use clap::Parser;
use fleetform_coordinator::server::{Transport, build, serve};
use std::path::PathBuf;

/// Plans and applies fleetform runs by dispatching operations to workers
/// over NATS JetStream, and keeps state in an object store.
#[derive(Parser, Debug)]
#[command(name = "fleetform-coordinator", version)]
struct Args {
    /// Address to serve the gRPC API on.
    #[arg(long, env = "FLEETFORM_LISTEN", default_value = "127.0.0.1:7400")]
    listen: String,
    /// NATS server URL.
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
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let state = absolutize_file_url(&args.state)?;
    let (coordinator, _) = build(
        &state,
        &args.data_dir,
        Transport::Nats {
            url: args.nats.clone(),
            consumer: args.name,
        },
    )
    .await?;
    let listener = tokio::net::TcpListener::bind(&args.listen).await?;
    // Tests bind port 0 and read the address from this line.
    println!("listening on {}", listener.local_addr()?);
    tracing::info!(addr = %listener.local_addr()?, nats = %args.nats, state = %state, "coordinator ready");
    serve(coordinator, listener, async {
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
