//! The plugin process: go-plugin's server handshake as Terraform expects it
//! (magic cookie, protocol negotiation, one handshake line on stdout), the
//! listener, AutoMTLS, and the gRPC services until the host shuts us down.
//!
//! Like a go-plugin server with versioned plugins, we serve tfplugin6 or
//! tfplugin5: the highest version the host offers in
//! `PLUGIN_PROTOCOL_VERSIONS`, else the lowest we have.

use crate::framework::Provider;
use crate::service::ProviderService;
use crate::service::v5::ProviderServiceV5;
use crate::tls::{ServerTls, TlsError};
use fleetform_proto::health::health_check_response::ServingStatus;
use fleetform_proto::health::health_server::{Health, HealthServer};
use fleetform_proto::health::{HealthCheckRequest, HealthCheckResponse};
use fleetform_proto::plugin::Empty;
use fleetform_proto::plugin::grpc_controller_server::{GrpcController, GrpcControllerServer};
use fleetform_proto::tfplugin5::provider_server::ProviderServer as ProviderServerV5;
use fleetform_proto::tfplugin6::provider_server::ProviderServer;
use futures::Stream;
use std::future::Future;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, UnixListener};
use tokio::sync::Notify;
use tokio_rustls::TlsAcceptor;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream, UnixListenerStream};
use tonic::transport::server::Connected;
use tonic::{Request, Response, Status};

pub const MAGIC_COOKIE_KEY: &str = "TF_PLUGIN_MAGIC_COOKIE";
pub const MAGIC_COOKIE_VALUE: &str =
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
/// go-plugin's own protocol version, the first handshake field.
pub const CORE_PROTOCOL_VERSION: u32 = 1;
/// The Terraform plugin protocol versions we serve, lowest first.
pub const PROTOCOL_VERSIONS: [u32; 2] = [5, 6];
/// Schemas and states of large configurations exceed gRPC's 4 MiB default.
pub const MAX_MESSAGE_SIZE: usize = 256 * 1024 * 1024;

const NOT_A_COMMAND: &str = "This binary is a plugin. These are not meant to be executed directly.
Please execute the program that consumes these plugins, which will
load any plugins automatically";

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("no listener: {0}")]
    Listen(io::Error),
    #[error("writing the handshake: {0}")]
    Handshake(io::Error),
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("grpc server: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// The whole life of a plugin process; a provider binary's `main` calls this.
pub fn run<P: Provider>(provider: P) -> ExitCode {
    if std::env::var(MAGIC_COOKIE_KEY).as_deref() != Ok(MAGIC_COOKIE_VALUE) {
        eprintln!("{NOT_A_COMMAND}");
        return ExitCode::from(1);
    }
    init_tracing(provider.name());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the runtime");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(serve_from_env(provider)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "plugin failed");
            ExitCode::from(1)
        }
    }
}

/// Logs go to stderr as go-hclog JSON lines, which go-plugin hosts collect
/// and show at their level; stdout carries only the handshake line.
fn init_tracing(name: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FLEETFORM_PROVIDER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .event_format(crate::hclog::HclogJson {
            module: format!("provider.{name}"),
        })
        .with_writer(io::stderr)
        .try_init();
}

/// Picks our protocol version from the host's `PLUGIN_PROTOCOL_VERSIONS`:
/// the highest one both sides support, `None` when there is none (go-plugin
/// then announces its lowest version anyway and lets the host refuse, and
/// so do we). Entries that are not numbers are skipped, as go-plugin does.
pub fn negotiate_protocol(offered: Option<&str>) -> Option<u32> {
    offered?
        .split(',')
        .filter_map(|v| v.trim().parse::<u32>().ok())
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .max()
}

/// `CORE|APP|NETWORK|ADDRESS|grpc|CERT`
pub fn handshake_line(
    listener: &PluginListener,
    protocol_version: u32,
    server_cert: &str,
) -> String {
    format!(
        "{CORE_PROTOCOL_VERSION}|{protocol_version}|{}|{}|grpc|{server_cert}",
        listener.network(),
        listener.address()
    )
}

async fn serve_from_env<P: Provider>(provider: P) -> Result<(), ServeError> {
    let offered = std::env::var("PLUGIN_PROTOCOL_VERSIONS").ok();
    let version = negotiate_protocol(offered.as_deref()).unwrap_or_else(|| {
        if offered.is_some() {
            tracing::warn!(
                offered = offered.as_deref().unwrap_or(""),
                "host offers no protocol we serve (5, 6)"
            );
        }
        PROTOCOL_VERSIONS[0]
    });
    let tls = match std::env::var("PLUGIN_CLIENT_CERT") {
        Ok(pem) if !pem.trim().is_empty() => Some(ServerTls::new(&pem)?),
        _ => None,
    };
    let listener = PluginListener::from_env().map_err(ServeError::Listen)?;
    let line = handshake_line(
        &listener,
        version,
        &tls.as_ref()
            .map(ServerTls::handshake_cert)
            .unwrap_or_default(),
    );
    {
        let mut out = io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(ServeError::Handshake)?;
    }
    tracing::info!(provider = provider.name(), protocol = version, network = listener.network(), address = %listener.address(), mtls = tls.is_some(), "serving");
    serve(
        listener,
        tls.map(|t| t.acceptor),
        ProviderService::new(provider),
        version,
        termination(),
    )
    .await
}

/// Resolves on SIGTERM. SIGINT is ignored like go-plugin does: the host
/// handles the user's interrupt and stops us itself.
async fn termination() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    loop {
        tokio::select! {
            _ = term.recv() => return,
            _ = int.recv() => tracing::debug!("interrupt ignored; the host stops plugins"),
        }
    }
}

/// Serves the provider over tfplugin `protocol_version` (5, else 6), the
/// go-plugin controller and the health service on `listener` until
/// `shutdown` resolves or the host calls `GRPCController.Shutdown`.
pub async fn serve<P: Provider>(
    listener: PluginListener,
    tls: Option<TlsAcceptor>,
    provider: ProviderService<P>,
    protocol_version: u32,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    let (v5, v6) = if protocol_version == 5 {
        let v5 = ProviderServerV5::new(ProviderServiceV5::from(provider))
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
            .max_encoding_message_size(MAX_MESSAGE_SIZE);
        (Some(v5), None)
    } else {
        let v6 = ProviderServer::new(provider)
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
            .max_encoding_message_size(MAX_MESSAGE_SIZE);
        (None, Some(v6))
    };
    let stop = Arc::new(Notify::new());
    let router = tonic::transport::Server::builder()
        .add_optional_service(v5)
        .add_optional_service(v6)
        .add_service(GrpcControllerServer::new(Controller { stop: stop.clone() }))
        .add_service(HealthServer::new(PluginHealth));
    let signal = {
        let stop = stop.clone();
        async move {
            tokio::select! {
                () = shutdown => {}
                () = stop.notified() => {}
            }
            tracing::info!("shutting down");
        }
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let signal = async move {
        signal.await;
        let _ = tx.send(());
    };
    let PluginListener { inner, socket_file } = listener;
    let _socket_file = socket_file;
    let server = async move {
        match (inner, tls) {
            (Inner::Unix(listener), None) => {
                router
                    .serve_with_incoming_shutdown(UnixListenerStream::new(listener), signal)
                    .await
            }
            (Inner::Unix(listener), Some(acceptor)) => {
                router
                    .serve_with_incoming_shutdown(
                        tls_incoming(UnixListenerStream::new(listener), acceptor),
                        signal,
                    )
                    .await
            }
            (Inner::Tcp(listener), None) => {
                router
                    .serve_with_incoming_shutdown(TcpListenerStream::new(listener), signal)
                    .await
            }
            (Inner::Tcp(listener), Some(acceptor)) => {
                router
                    .serve_with_incoming_shutdown(
                        tls_incoming(TcpListenerStream::new(listener), acceptor),
                        signal,
                    )
                    .await
            }
        }
    };
    tokio::pin!(server);
    // Connections the host keeps open must not keep us alive after shutdown.
    tokio::select! {
        r = &mut server => return r.map_err(ServeError::from),
        _ = rx => {}
    }
    match tokio::time::timeout(Duration::from_secs(5), server).await {
        Ok(r) => r.map_err(ServeError::from),
        Err(_) => Ok(()),
    }
}

/// TLS handshakes run off the accept loop so one slow client cannot stall
/// the others; failed handshakes are logged and dropped.
fn tls_incoming<S, IO>(
    plain: S,
    acceptor: TlsAcceptor,
) -> impl Stream<Item = io::Result<tokio_rustls::server::TlsStream<IO>>>
where
    S: Stream<Item = io::Result<IO>> + Send + 'static,
    IO: AsyncRead + AsyncWrite + Connected + Unpin + Send + 'static,
{
    use futures::StreamExt;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        let mut plain = std::pin::pin!(plain);
        while let Some(conn) = plain.next().await {
            let conn = match conn {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            };
            let (acceptor, conn_tx) = (acceptor.clone(), tx.clone());
            tokio::spawn(async move {
                match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(conn)).await {
                    Ok(Ok(tls)) => {
                        let _ = conn_tx.send(Ok(tls)).await;
                    }
                    // Hosts open and drop connections while closing a
                    // plugin; a refused certificate shows on the host's side.
                    Ok(Err(e)) => tracing::debug!(error = %e, "tls handshake failed"),
                    Err(_) => tracing::warn!("tls handshake timed out"),
                }
            });
            if tx.is_closed() {
                break;
            }
        }
    });
    ReceiverStream::new(rx)
}

struct Controller {
    stop: Arc<Notify>,
}

#[tonic::async_trait]
impl GrpcController for Controller {
    async fn shutdown(&self, _: Request<Empty>) -> Result<Response<Empty>, Status> {
        // notify_one stores a permit, so a shutdown that races the server's
        // start is not lost.
        self.stop.notify_one();
        Ok(Response::new(Empty {}))
    }
}

struct PluginHealth;

#[tonic::async_trait]
impl Health for PluginHealth {
    async fn check(
        &self,
        _: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        Ok(Response::new(HealthCheckResponse {
            status: ServingStatus::Serving.into(),
        }))
    }
}

/// Where the plugin listens: a unix socket (its file removed on drop), or
/// loopback TCP.
pub struct PluginListener {
    inner: Inner,
    socket_file: Option<SocketFile>,
}

enum Inner {
    Unix(UnixListener),
    Tcp(TcpListener),
}

struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl PluginListener {
    /// A unix socket in `PLUGIN_UNIX_SOCKET_DIR` (else the temp dir); TCP on
    /// 127.0.0.1 within `PLUGIN_MIN_PORT`..=`PLUGIN_MAX_PORT` when that fails.
    pub fn from_env() -> io::Result<PluginListener> {
        let dir = std::env::var_os("PLUGIN_UNIX_SOCKET_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        match PluginListener::unix_in(&dir) {
            Ok(l) => Ok(l),
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "no unix socket, using tcp");
                let port = |key, default| {
                    std::env::var(key)
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(default)
                };
                PluginListener::tcp_in(
                    port("PLUGIN_MIN_PORT", 10000),
                    port("PLUGIN_MAX_PORT", 25000),
                )
            }
        }
    }

    pub fn unix_in(dir: &Path) -> io::Result<PluginListener> {
        let path = dir.join(format!("plugin{}", rand::random::<u32>()));
        let listener = UnixListener::bind(&path)?;
        Ok(PluginListener {
            inner: Inner::Unix(listener),
            socket_file: Some(SocketFile(path)),
        })
    }

    pub fn tcp_in(min_port: u16, max_port: u16) -> io::Result<PluginListener> {
        let mut last = io::Error::new(io::ErrorKind::AddrNotAvailable, "empty port range");
        for port in min_port..=max_port {
            let std = std::net::TcpListener::bind(("127.0.0.1", port)).and_then(|l| {
                l.set_nonblocking(true)?;
                Ok(l)
            });
            match std.and_then(TcpListener::from_std) {
                Ok(l) => {
                    return Ok(PluginListener {
                        inner: Inner::Tcp(l),
                        socket_file: None,
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    pub fn network(&self) -> &'static str {
        match self.inner {
            Inner::Unix(_) => "unix",
            Inner::Tcp(_) => "tcp",
        }
    }

    pub fn address(&self) -> String {
        match (&self.inner, &self.socket_file) {
            (Inner::Unix(_), Some(f)) => f.0.display().to_string(),
            (Inner::Unix(l), None) => format!("{:?}", l.local_addr().ok()),
            (Inner::Tcp(l), _) => l.local_addr().map(|a| a.to_string()).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_version_both_sides_support_is_chosen() {
        assert_eq!(negotiate_protocol(Some("5,6")), Some(6));
        assert_eq!(negotiate_protocol(Some("6,5")), Some(6));
        assert_eq!(negotiate_protocol(Some(" 6 ")), Some(6));
        // Terraform 0.12 to 0.15 offer only 5.
        assert_eq!(negotiate_protocol(Some("5")), Some(5));
        assert_eq!(negotiate_protocol(Some("4,5,x")), Some(5));
        assert_eq!(negotiate_protocol(Some("5,6,7")), Some(6));
        assert_eq!(negotiate_protocol(Some("4,7")), None);
        assert_eq!(negotiate_protocol(Some("")), None);
        assert_eq!(negotiate_protocol(None), None);
    }

    #[tokio::test]
    async fn handshake_line_names_the_socket() {
        let dir = std::env::temp_dir();
        let l = PluginListener::unix_in(&dir).unwrap();
        let path = l.address();
        assert!(Path::new(&path).exists());
        assert_eq!(handshake_line(&l, 6, ""), format!("1|6|unix|{path}|grpc|"));
        assert_eq!(handshake_line(&l, 5, ""), format!("1|5|unix|{path}|grpc|"));
        drop(l);
        assert!(!Path::new(&path).exists());
        let t = PluginListener::tcp_in(20000, 20100).unwrap();
        assert!(handshake_line(&t, 6, "CERT").starts_with("1|6|tcp|127.0.0.1:"));
        assert!(handshake_line(&t, 6, "CERT").ends_with("|grpc|CERT"));
    }
}
