//! The connection to a coordinator: connecting with the stored token,
//! refusals for missing credentials, the `-lock-timeout` every locking
//! request carries, and fetching state. Following a submitted run is
//! [`crate::follow`].

use anyhow::Context;
use fleetform_proto::fleetform as pb;
use fleetform_proto::fleetform::fleetform_client::FleetformClient;
use fleetform_shared::plan::shape::Shapes;
use fleetform_shared::state::State;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

pub type Client = FleetformClient<InterceptedService<Channel, Credentials>>;

/// Sends the bearer token, if any, with every request.
#[derive(Clone)]
pub struct Credentials {
    header: Option<tonic::metadata::AsciiMetadataValue>,
}

impl tonic::service::Interceptor for Credentials {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(h) = &self.header {
            req.metadata_mut().insert("authorization", h.clone());
        }
        Ok(req)
    }
}

/// Connects to the coordinator at `url` with the credentials of the
/// environment: a bearer token (`FLEETFORM_TOKEN`, else the one `fleetform
/// login` stored for the host: see [`crate::credentials`]), and for an `https://`
/// URL `FLEETFORM_CA_CERT` (PEM CA certificates the coordinator's
/// certificate is checked against; the system's roots when unset) and
/// `FLEETFORM_CLIENT_CERT` / `FLEETFORM_CLIENT_KEY` (a client certificate
/// for mutual TLS).
pub async fn connect(url: &str) -> anyhow::Result<Client> {
    let token = crate::credentials::token_for(url)?;
    connect_as(url, token.as_deref()).await
}

/// [`connect`] with `token` instead of the environment's or the stored one.
pub async fn connect_as(url: &str, token: Option<&str>) -> anyhow::Result<Client> {
    let env_file = |var: &str| -> anyhow::Result<Option<Vec<u8>>> {
        match std::env::var_os(var).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(p) => std::fs::read(&p)
                .map(Some)
                .with_context(|| format!("reading {var}={}", p.to_string_lossy())),
        }
    };
    let mut endpoint = Endpoint::from_shared(url.to_string())
        .with_context(|| format!("invalid coordinator URL {url:?}"))?;
    let (cert, key) = (
        env_file("FLEETFORM_CLIENT_CERT")?,
        env_file("FLEETFORM_CLIENT_KEY")?,
    );
    if url.starts_with("https://") {
        let mut tls = ClientTlsConfig::new();
        tls = match env_file("FLEETFORM_CA_CERT")? {
            Some(ca) => tls.ca_certificate(Certificate::from_pem(ca)),
            None => tls.with_native_roots(),
        };
        match (cert, key) {
            (Some(c), Some(k)) => tls = tls.identity(Identity::from_pem(c, k)),
            (None, None) => {}
            _ => anyhow::bail!(
                "FLEETFORM_CLIENT_CERT and FLEETFORM_CLIENT_KEY go together: set both or neither"
            ),
        }
        endpoint = endpoint
            .tls_config(tls)
            .context("the TLS settings (FLEETFORM_CA_CERT, FLEETFORM_CLIENT_CERT)")?;
    } else if cert.is_some() || std::env::var_os("FLEETFORM_CA_CERT").is_some() {
        anyhow::bail!(
            "FLEETFORM_CA_CERT / FLEETFORM_CLIENT_CERT are set but the coordinator URL {url} is not https://: use https:// to connect over TLS"
        );
    }
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| anyhow::anyhow!("connecting to the coordinator at {url}: {}", chain(&e)))?;
    let header = match token {
        Some(t) => Some(
            format!("Bearer {}", t.trim())
                .parse()
                .map_err(|_| anyhow::anyhow!("the token has characters a header cannot carry"))?,
        ),
        None => None,
    };
    Ok(
        FleetformClient::with_interceptor(channel, Credentials { header })
            .max_decoding_message_size(1 << 30)
            .max_encoding_message_size(1 << 30),
    )
}

/// An error with its causes, which for TLS say what was wrong.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(&format!(": {s}"));
        source = s.source();
    }
    out
}

/// A refusal for missing or insufficient credentials, passed on as the
/// error itself so it prints as one line (`Error: permission denied:
/// ...`) whatever command met it; any other status is given back for the
/// command to explain.
pub fn access(s: tonic::Status) -> anyhow::Result<tonic::Status> {
    match s.code() {
        tonic::Code::Unauthenticated | tonic::Code::PermissionDenied => Err(s.into()),
        _ => Ok(s),
    }
}

/// `-lock-timeout`, set once from the command line.
static LOCK_TIMEOUT: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();

pub fn set_lock_timeout(wait: std::time::Duration) {
    let _ = LOCK_TIMEOUT.set(wait);
}

/// `-lock-timeout` as every request that takes the lock carries it.
pub fn lock_timeout_ms() -> u64 {
    LOCK_TIMEOUT.get().map_or(0, |d| d.as_millis() as u64)
}

pub async fn state(client: &mut Client, workspace: &str) -> anyhow::Result<Option<State>> {
    Ok(state_with(client, workspace, false).await?.0)
}

/// The state with the schema shapes of its resource types, for drawing
/// its objects (`show`, `state show`).
pub async fn state_and_shapes(
    client: &mut Client,
    workspace: &str,
) -> anyhow::Result<(Option<State>, Shapes)> {
    state_with(client, workspace, true).await
}

async fn state_with(
    client: &mut Client,
    workspace: &str,
    shapes: bool,
) -> anyhow::Result<(Option<State>, Shapes)> {
    let resp = client
        .get_state(pb::GetStateRequest {
            workspace: workspace.to_string(),
            serial: 0,
            state_file: false,
            shapes,
        })
        .await?
        .into_inner();
    // A coordinator that sends none: drawn without.
    let shapes = match resp.shapes.is_empty() {
        true => Shapes::default(),
        false => rmp_serde::from_slice(&resp.shapes).context("decoding schema shapes")?,
    };
    if resp.state.is_empty() {
        return Ok((None, shapes));
    }
    Ok((
        Some(State::decode(&resp.state).context("decoding state")?),
        shapes,
    ))
}

pub async fn set_tainted(
    client: &mut Client,
    workspace: &str,
    address: &str,
    tainted: bool,
) -> anyhow::Result<()> {
    client
        .set_tainted(pb::SetTaintedRequest {
            workspace: workspace.to_string(),
            address: address.to_string(),
            tainted,
            lock_timeout_ms: lock_timeout_ms(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?;
    Ok(())
}
