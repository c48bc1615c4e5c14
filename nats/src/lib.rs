//! Connecting to NATS the way a production cluster asks for: a `.creds`
//! file (JWT and NKey seed, as `nsc` writes it), an NKey seed, a user and
//! password, or a token, and TLS with a private CA and a client
//! certificate. The coordinator and every worker take the same flags
//! ([`NatsAuth`], flattened into their command lines) and connect through
//! [`connect`].
//!
//! # Layout
//! One file: the flags and the connection.

pub mod layout;

use anyhow::Context;
use std::path::PathBuf;

/// How to authenticate to NATS and protect the connection. At most one
/// way of authenticating; a user and password may also be in the URL
/// (`nats://user:pass@host:4222`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct NatsAuth {
    /// A NATS credentials file (JWT and NKey seed, as `nsc` writes it).
    #[arg(long, env = "FLEETFORM_NATS_CREDS", value_name = "FILE")]
    pub nats_creds: Option<PathBuf>,
    /// A file holding an NKey seed (`SU...`).
    #[arg(long, env = "FLEETFORM_NATS_NKEY", value_name = "FILE")]
    pub nats_nkey: Option<PathBuf>,
    /// A user name (with --nats-password).
    #[arg(long, env = "FLEETFORM_NATS_USER", requires = "nats_password")]
    pub nats_user: Option<String>,
    /// The user's password (with --nats-user).
    #[arg(
        long,
        env = "FLEETFORM_NATS_PASSWORD",
        requires = "nats_user",
        hide_env_values = true
    )]
    pub nats_password: Option<String>,
    /// A token.
    #[arg(long, env = "FLEETFORM_NATS_TOKEN", hide_env_values = true)]
    pub nats_token: Option<String>,
    /// PEM CA certificates that the server's certificate is checked
    /// against (implies TLS).
    #[arg(long, env = "FLEETFORM_NATS_TLS_CA", value_name = "FILE")]
    pub nats_tls_ca: Option<PathBuf>,
    /// A PEM client certificate for mutual TLS (with --nats-tls-key).
    #[arg(
        long,
        env = "FLEETFORM_NATS_TLS_CERT",
        value_name = "FILE",
        requires = "nats_tls_key"
    )]
    pub nats_tls_cert: Option<PathBuf>,
    /// The client certificate's PEM private key.
    #[arg(
        long,
        env = "FLEETFORM_NATS_TLS_KEY",
        value_name = "FILE",
        requires = "nats_tls_cert"
    )]
    pub nats_tls_key: Option<PathBuf>,
    /// Refuse to talk to NATS without TLS (implied by the TLS files).
    #[arg(long, env = "FLEETFORM_NATS_TLS")]
    pub nats_tls: bool,
    /// How many servers of a JetStream cluster keep a copy of fleetform's
    /// streams (tasks, results) and key-value buckets (claims, workers),
    /// when this process creates them: 3 on a three-node cluster, so
    /// losing one server loses nothing and stops nothing. Streams that
    /// exist keep their setting (a different one is logged).
    #[arg(
        long,
        env = "FLEETFORM_NATS_REPLICAS",
        default_value_t = 1,
        value_name = "N",
        value_parser = clap::value_parser!(u8).range(1..=5)
    )]
    pub nats_replicas: u8,
}

impl NatsAuth {
    /// The ways of authenticating given, by flag name.
    fn methods(&self) -> Vec<&'static str> {
        let mut m = Vec::new();
        if self.nats_creds.is_some() {
            m.push("--nats-creds");
        }
        if self.nats_nkey.is_some() {
            m.push("--nats-nkey");
        }
        if self.nats_user.is_some() {
            m.push("--nats-user");
        }
        if self.nats_token.is_some() {
            m.push("--nats-token");
        }
        m
    }

    /// Copies of each stream and bucket (at least 1).
    pub fn replicas(&self) -> usize {
        usize::from(self.nats_replicas.max(1))
    }

    /// Whether the connection must be TLS.
    pub fn tls(&self) -> bool {
        self.nats_tls || self.nats_tls_ca.is_some() || self.nats_tls_cert.is_some()
    }

    /// The connect options these settings give; `name` is how the server
    /// lists this client.
    pub async fn options(&self, name: &str) -> anyhow::Result<async_nats::ConnectOptions> {
        let methods = self.methods();
        anyhow::ensure!(
            methods.len() <= 1,
            "give one way of authenticating to NATS, not {}",
            methods.join(" and ")
        );
        // Two TLS backends are in the dependency tree (ring and aws-lc-rs),
        // so rustls cannot pick one by itself; any TLS connection (also
        // one the server asks for unasked) needs it chosen. An error means
        // one was chosen already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut o = async_nats::ConnectOptions::new().name(name);
        if let Some(path) = &self.nats_creds {
            o = o
                .credentials_file(path)
                .await
                .with_context(|| format!("reading the NATS credentials file {}", path.display()))?;
        }
        if let Some(path) = &self.nats_nkey {
            let seed = std::fs::read_to_string(path)
                .with_context(|| format!("reading the NKey seed file {}", path.display()))?;
            let seed = seed
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with('S'))
                .with_context(|| {
                    format!(
                        "{} holds no NKey seed (a line starting with S)",
                        path.display()
                    )
                })?
                .to_string();
            o = o.nkey(seed);
        }
        if let (Some(u), Some(p)) = (&self.nats_user, &self.nats_password) {
            o = o.user_and_password(u.clone(), p.clone());
        }
        if let Some(t) = &self.nats_token {
            o = o.token(t.clone());
        }
        if let Some(ca) = &self.nats_tls_ca {
            anyhow::ensure!(ca.is_file(), "--nats-tls-ca {}: no such file", ca.display());
            o = o.add_root_certificates(ca.clone());
        }
        if let (Some(c), Some(k)) = (&self.nats_tls_cert, &self.nats_tls_key) {
            for f in [c, k] {
                anyhow::ensure!(f.is_file(), "{}: no such file", f.display());
            }
            o = o.add_client_certificate(c.clone(), k.clone());
        }
        if self.tls() {
            o = o.require_tls(true);
        }
        Ok(o)
    }
}

/// The servers of `url`: one URL, or several separated by commas (the
/// nodes of a cluster; the client connects to one and moves to another
/// when it goes away, and also learns the cluster's other nodes from it).
pub fn server_addrs(url: &str) -> anyhow::Result<Vec<async_nats::ServerAddr>> {
    let addrs = url
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .map(|u| {
            u.parse::<async_nats::ServerAddr>()
                .map_err(|e| anyhow::anyhow!("invalid NATS server URL {u:?}: {e}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    anyhow::ensure!(!addrs.is_empty(), "no NATS server URL given");
    Ok(addrs)
}

/// How long connecting at start may take: a server that does not answer
/// (or refuses) stops the process within seconds, with what to change.
/// Once connected, the client reconnects by itself for as long as it takes.
const CONNECT_WITHIN: std::time::Duration = std::time::Duration::from_secs(8);

/// Connects to the NATS server(s) at `url` (see [`server_addrs`]) as `name`.
pub async fn connect(url: &str, auth: &NatsAuth, name: &str) -> anyhow::Result<async_nats::Client> {
    let addrs = server_addrs(url)?;
    let options = auth
        .options(name)
        .await?
        .connection_timeout(std::time::Duration::from_secs(3));
    let shown = redacted(url);
    match tokio::time::timeout(CONNECT_WITHIN, options.connect(addrs)).await {
        Ok(Ok(client)) => {
            without_jetstream(&client, &shown).await?;
            Ok(client)
        }
        Ok(Err(e)) => Err(anyhow::anyhow!("{}", refused(&shown, &e, auth))),
        Err(_) => anyhow::bail!(
            "NATS at {shown} does not answer (no connection within {}s): check --nats (FLEETFORM_NATS) and that nats-server runs and can be reached from here",
            CONNECT_WITHIN.as_secs()
        ),
    }
}

/// Fails at once when JetStream cannot be there: the server connected to
/// says it has none, and no other server of its cluster answers the
/// JetStream API. (A server without JetStream in a cluster whose other
/// nodes have it is a valid setup, and a cluster electing its leader
/// answers; both go on, and setting up the streams waits for a leader.)
async fn without_jetstream(client: &async_nats::Client, url: &str) -> anyhow::Result<()> {
    let info = client.server_info();
    if info.jetstream {
        return Ok(());
    }
    let js = async_nats::jetstream::new(client.clone());
    let asked = tokio::time::timeout(std::time::Duration::from_secs(3), js.query_account()).await;
    match asked {
        Ok(Err(e)) => anyhow::bail!(
            "NATS at {url} has no JetStream ({} {} says it has none, and nothing answers the JetStream API: {e}): start nats-server with -js (or a jetstream {{}} block in its configuration)",
            if info.server_name.is_empty() {
                "server"
            } else {
                info.server_name.as_str()
            },
            info.version
        ),
        _ => Ok(()),
    }
}

/// One line: why connecting failed, and what to change.
fn refused(url: &str, e: &async_nats::ConnectError, auth: &NatsAuth) -> String {
    use async_nats::ConnectErrorKind as K;
    match e.kind() {
        K::AuthorizationViolation | K::Authentication => {
            let methods = auth.methods();
            let given = if !methods.is_empty() {
                format!("this client gave {}", methods.join(", "))
            } else if url.contains('@') {
                "this client gave the user and password in the URL".to_string()
            } else {
                "this client gave no credentials".to_string()
            };
            format!(
                "NATS at {url} refuses this client ({e}): {given}; give the credentials the server expects (--nats-creds, --nats-nkey, --nats-user with --nats-password, or --nats-token; or FLEETFORM_NATS_CREDS, _NKEY, _USER, _PASSWORD, _TOKEN)"
            )
        }
        K::Tls => format!(
            "TLS with NATS at {url} failed ({e}): check --nats-tls-ca, and --nats-tls-cert with --nats-tls-key if the server asks for a client certificate"
        ),
        _ => format!(
            "NATS at {url} does not answer ({e}): check --nats (FLEETFORM_NATS) and that nats-server runs and can be reached from here"
        ),
    }
}

/// `url` without the passwords of `nats://user:password@host` URLs.
fn redacted(url: &str) -> String {
    url.split(',')
        .map(|u| match u.split_once("://") {
            Some((scheme, rest)) => match rest.rsplit_once('@') {
                Some((user, host)) => {
                    let user = user.split(':').next().unwrap_or_default();
                    format!("{scheme}://{user}:***@{host}")
                }
                None => u.to_string(),
            },
            None => u.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_is_a_list_of_urls() {
        let a = server_addrs("nats://10.0.0.1:4222, nats://10.0.0.2:4223,").unwrap();
        assert_eq!(a.len(), 2);
        assert_eq!(a[1].port(), 4223);
        assert!(
            server_addrs("nats://h:notaport")
                .unwrap_err()
                .to_string()
                .contains("nats://h:notaport")
        );
        assert!(server_addrs(" , ").is_err());
    }

    /// Nobody at the address: one line with the flag that names it,
    /// within seconds; a password in the URL is not shown.
    #[tokio::test]
    async fn a_server_out_of_reach_is_told_at_once() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("nats://me:secret@127.0.0.1:{port}");
        let started = std::time::Instant::now();
        let e = connect(&url, &NatsAuth::default(), "t")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            started.elapsed() < CONNECT_WITHIN,
            "{:?}",
            started.elapsed()
        );
        assert!(
            e.starts_with(&format!(
                "NATS at nats://me:***@127.0.0.1:{port} does not answer"
            )),
            "{e}"
        );
        assert!(e.contains("check --nats (FLEETFORM_NATS)"), "{e}");
        assert!(!e.contains("secret") && !e.contains('\n'), "{e}");
    }

    #[tokio::test]
    async fn one_way_of_authenticating_and_files_that_exist() {
        let two = NatsAuth {
            nats_token: Some("t".into()),
            nats_user: Some("u".into()),
            nats_password: Some("p".into()),
            ..NatsAuth::default()
        };
        let e = two.options("x").await.unwrap_err().to_string();
        assert!(e.contains("not --nats-user and --nats-token"), "{e}");
        let missing = NatsAuth {
            nats_creds: Some("/nonexistent/x.creds".into()),
            ..NatsAuth::default()
        };
        let e = format!("{:#}", missing.options("x").await.unwrap_err());
        assert!(
            e.contains("reading the NATS credentials file /nonexistent/x.creds"),
            "{e}"
        );
        let no_ca = NatsAuth {
            nats_tls_ca: Some("/nonexistent/ca.pem".into()),
            ..NatsAuth::default()
        };
        let e = no_ca.options("x").await.unwrap_err().to_string();
        assert!(
            e.contains("--nats-tls-ca /nonexistent/ca.pem: no such file"),
            "{e}"
        );
        assert!(no_ca.tls());
        assert!(!NatsAuth::default().tls());
    }
}
