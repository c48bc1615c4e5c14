//! The gRPC channel to a plugin: tcp or unix socket, TLS with the pinned
//! server certificate (AutoMTLS) or plain HTTP/2 without it.

use super::ProviderError;
use super::handshake::Network;
use super::tls::server_name;
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};
use tokio_rustls::TlsConnector;
use tonic::transport::{Channel, Endpoint, Uri};

trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

/// Opens the channel eagerly, so a TLS or connection problem shows at start.
pub(super) async fn connect(
    network: &Network,
    tls: Option<Arc<ClientConfig>>,
    timeout: Duration,
) -> Result<Channel, ProviderError> {
    // The URI only names the authority in requests; the connector ignores it.
    let endpoint = Endpoint::from_static("http://localhost").connect_timeout(timeout);
    let network = network.clone();
    let connector = tower::service_fn(move |_: Uri| dial(network.clone(), tls.clone()));
    Ok(endpoint.connect_with_connector(connector).await?)
}

async fn dial(
    network: Network,
    tls: Option<Arc<ClientConfig>>,
) -> std::io::Result<TokioIo<Box<dyn Stream>>> {
    let raw: Box<dyn Stream> = match &network {
        Network::Tcp(addr) => {
            let tcp = TcpStream::connect(addr).await?;
            tcp.set_nodelay(true)?;
            Box::new(tcp)
        }
        Network::Unix(path) => Box::new(UnixStream::connect(path).await?),
    };
    let stream: Box<dyn Stream> = match tls {
        None => raw,
        Some(config) => Box::new(
            TlsConnector::from(config)
                .connect(server_name(), raw)
                .await?,
        ),
    };
    Ok(TokioIo::new(stream))
}
