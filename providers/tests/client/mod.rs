//! A minimal go-plugin host for tests: starts a provider binary as a real
//! process, reads its handshake line, and connects over its unix socket,
//! with or without AutoMTLS. Kills the process on drop.

pub mod conn;

use anyhow::{Context, Result, bail};
use base64::Engine;
use fleetform_proto::plugin::grpc_controller_client::GrpcControllerClient;
use fleetform_proto::tfplugin6::provider_client::ProviderClient;
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::UnixStream;
use tokio::process::{Child, Command};
use tonic::transport::{Channel, Endpoint, Uri};

pub const COOKIE: (&str, &str) = (
    "TF_PLUGIN_MAGIC_COOKIE",
    "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
);

/// The host's side of AutoMTLS: its own certificate and key.
pub struct ClientIdentity {
    pub cert_pem: String,
    pub cert_der: CertificateDer<'static>,
    pub key_der: Vec<u8>,
}

impl ClientIdentity {
    pub fn generate() -> Result<ClientIdentity> {
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])?;
        Ok(ClientIdentity {
            cert_pem: ck.cert.pem(),
            cert_der: ck.cert.der().clone(),
            key_der: ck.signing_key.serialize_der(),
        })
    }
}

pub struct Plugin {
    pub child: Child,
    pub socket: PathBuf,
    /// The server certificate DER from the handshake; `None` without mTLS.
    pub server_cert: Option<Vec<u8>>,
    _socket_dir: tempfile::TempDir,
}

impl Plugin {
    /// Starts `bin` like a go-plugin host does; `mtls` is the identity the
    /// plugin must pin.
    pub async fn start(
        bin: &str,
        mtls: Option<&ClientIdentity>,
        env: &[(&str, &Path)],
    ) -> Result<Plugin> {
        Plugin::start_offering(bin, mtls, env, "5,6", "6").await
    }

    /// Starts `bin` offering `versions` in `PLUGIN_PROTOCOL_VERSIONS`; the
    /// plugin must choose protocol `want` in its handshake.
    pub async fn start_offering(
        bin: &str,
        mtls: Option<&ClientIdentity>,
        env: &[(&str, &Path)],
        versions: &str,
        want: &str,
    ) -> Result<Plugin> {
        let socket_dir = tempfile::tempdir()?;
        let mut cmd = Command::new(bin);
        cmd.env(COOKIE.0, COOKIE.1)
            .env("PLUGIN_PROTOCOL_VERSIONS", versions)
            .env("PLUGIN_UNIX_SOCKET_DIR", socket_dir.path())
            .env_remove("PLUGIN_CLIENT_CERT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(id) = mtls {
            cmd.env("PLUGIN_CLIENT_CERT", &id.cert_pem);
        }
        let mut child = cmd.spawn().with_context(|| format!("spawning {bin}"))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut line = String::new();
        tokio::time::timeout(
            Duration::from_secs(30),
            BufReader::new(stdout).read_line(&mut line),
        )
        .await
        .context("no handshake line within 30s")??;
        let fields: Vec<&str> = line.trim_end().split('|').collect();
        let [core, proto, network, addr, kind, cert] = fields[..] else {
            bail!("bad handshake line {line:?}")
        };
        if (core, proto, network, kind) != ("1", want, "unix", "grpc") {
            bail!("unexpected handshake {line:?}");
        }
        let server_cert = match (cert.is_empty(), mtls.is_some()) {
            (true, false) => None,
            (false, true) => Some(base64::engine::general_purpose::STANDARD_NO_PAD.decode(cert)?),
            _ => bail!(
                "certificate field {cert:?} does not match mtls={}",
                mtls.is_some()
            ),
        };
        Ok(Plugin {
            child,
            socket: PathBuf::from(addr),
            server_cert,
            _socket_dir: socket_dir,
        })
    }

    /// A channel to the plugin, presenting `identity` when the plugin uses mTLS.
    pub async fn channel(&self, identity: Option<&ClientIdentity>) -> Result<Channel> {
        let socket = self.socket.clone();
        let endpoint = Endpoint::try_from("http://localhost")?;
        let tls = match (&self.server_cert, identity) {
            (Some(server), Some(id)) => Some(tls_connector(server, id)?),
            (None, None) => None,
            _ => bail!("mtls mismatch"),
        };
        let channel = endpoint
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let (socket, tls) = (socket.clone(), tls.clone());
                async move {
                    let stream = UnixStream::connect(socket).await?;
                    Ok::<_, std::io::Error>(match tls {
                        Some(tls) => {
                            let name = ServerName::try_from("localhost").expect("valid name");
                            TokioIo::new(Conn::Tls(Box::new(tls.connect(name, stream).await?)))
                        }
                        None => TokioIo::new(Conn::Plain(stream)),
                    })
                }
            }))
            .await?;
        Ok(channel)
    }

    pub async fn provider(
        &self,
        identity: Option<&ClientIdentity>,
    ) -> Result<ProviderClient<Channel>> {
        Ok(ProviderClient::new(self.channel(identity).await?))
    }

    /// Asks the plugin to exit through go-plugin's controller and waits for it.
    pub async fn shutdown(
        mut self,
        identity: Option<&ClientIdentity>,
    ) -> Result<std::process::ExitStatus> {
        let mut ctl = GrpcControllerClient::new(self.channel(identity).await?);
        ctl.shutdown(fleetform_proto::plugin::Empty {}).await?;
        Ok(
            tokio::time::timeout(Duration::from_secs(10), self.child.wait())
                .await
                .context("plugin did not exit")??,
        )
    }
}

fn tls_connector(server_der: &[u8], id: &ClientIdentity) -> Result<tokio_rustls::TlsConnector> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(PinnedServer {
        pinned: server_der.to_vec(),
        algs: provider.signature_verification_algorithms,
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_auth_cert(
            vec![id.cert_der.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(id.key_der.clone())),
        )?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

/// go-plugin hosts trust exactly the certificate from the handshake line.
#[derive(Debug)]
struct PinnedServer {
    pinned: Vec<u8>,
    algs: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for PinnedServer {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.pinned.as_slice() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(m, c, d, &self.algs)
    }

    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(m, c, d, &self.algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algs.supported_schemes()
    }
}

/// One connection type for both transports, as the connector must return one.
enum Conn {
    Plain(UnixStream),
    Tls(Box<tokio_rustls::client::TlsStream<UnixStream>>),
}

impl tokio::io::AsyncRead for Conn {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => std::pin::Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl tokio::io::AsyncWrite for Conn {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => std::pin::Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => std::pin::Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => std::pin::Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => std::pin::Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
