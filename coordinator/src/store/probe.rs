//! The look a coordinator takes at its state store as it starts: one
//! listing of its prefix, with a client that gives up within seconds, so a
//! store that cannot work (a plain-HTTP endpoint not allowed, a missing
//! bucket, refused credentials, an endpoint nobody answers at) stops the
//! process at once with one line naming the fix, instead of every run
//! retrying for minutes.
//!
//! An endpoint that does not answer is a misconfiguration the first time,
//! and an outage once this data directory has used the store: a
//! coordinator restarted during an outage waits for the store, as its runs
//! do (the chaos tests restart coordinators while the store refuses
//! service). The data directory remembers the store URLs that answered.

use super::fault::{Fault, S3Settings, classify};
use object_store::aws::AmazonS3ConfigKey;
use object_store::client::ClientConfigKey;
use std::path::Path;
use std::time::Duration;

/// The most the look at start takes, whatever the endpoint does (it must
/// stay well under 10 s, process start included).
const PROBE_WITHIN: Duration = Duration::from_secs(7);

/// File in the data directory listing the state URLs that answered.
const SEEN: &str = "state-stores-seen";

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Waiting does not mend it.
    #[error("{0}")]
    Misconfigured(String),
    /// Nothing answered, and this data directory never used the store.
    #[error("{0}")]
    Unreachable(String),
}

/// Checks the store at `url` (`s3://` only; a local directory was made
/// when it was opened, memory needs nothing) as a process starts with
/// `data_dir`.
pub async fn check_at_start(url: &str, data_dir: &Path) -> Result<(), StartError> {
    let Some((builder, prefix)) = s3_of(url) else {
        return Ok(());
    };
    check_with(builder, &prefix, url, data_dir).await
}

async fn check_with(
    builder: object_store::aws::AmazonS3Builder,
    prefix: &str,
    url: &str,
    data_dir: &Path,
) -> Result<(), StartError> {
    match probe(builder, prefix).await {
        Ok(()) => {
            remember(data_dir, url);
            Ok(())
        }
        Err(StartError::Unreachable(why)) if seen(data_dir, url) => {
            tracing::warn!(state = %url, error = %why, "the state store does not answer; this coordinator used it before, so runs wait for it as for any outage");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// The S3 client `ObjectStateStore::from_url` builds for `url`, and the
/// prefix; None for other schemes.
fn s3_of(url: &str) -> Option<(object_store::aws::AmazonS3Builder, String)> {
    let parsed = url::Url::parse(url).ok()?;
    if parsed.scheme() != "s3" {
        return None;
    }
    let bucket = parsed.host_str()?;
    Some((
        super::object::s3_builder(bucket),
        parsed.path().trim_matches('/').to_string(),
    ))
}

/// One listing of `prefix`, with retries and timeouts short enough that
/// the whole takes at most [`PROBE_WITHIN`].
async fn probe(
    builder: object_store::aws::AmazonS3Builder,
    prefix: &str,
) -> Result<(), StartError> {
    let settings = S3Settings::of(&builder);
    // The client would say only "builder error".
    if let Some(fix) = settings.refused_plain_http() {
        return Err(StartError::Misconfigured(fix));
    }
    let retry = object_store::RetryConfig {
        backoff: object_store::BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            base: 2.0,
        },
        max_retries: 2,
        retry_timeout: Duration::from_secs(3),
    };
    let client = |k| AmazonS3ConfigKey::Client(k);
    let store = builder
        .with_retry(retry)
        .with_config(client(ClientConfigKey::ConnectTimeout), "2s")
        .with_config(client(ClientConfigKey::Timeout), "3s")
        .build()
        .map_err(|e| StartError::Misconfigured(format!("the S3 client cannot be set up: {e}")))?;
    let prefix = (!prefix.is_empty()).then(|| object_store::path::Path::from(prefix));
    let listed = tokio::time::timeout(
        PROBE_WITHIN,
        object_store::ObjectStore::list_with_delimiter(&store, prefix.as_ref()),
    )
    .await;
    let e = match listed {
        Ok(Ok(_)) => return Ok(()),
        Ok(Err(e)) => e,
        Err(_) => {
            return Err(StartError::Unreachable(unreachable(
                &settings,
                &format!("no answer within {}s", PROBE_WITHIN.as_secs()),
            )));
        }
    };
    match classify(&e, &settings) {
        Fault::Lasting(fix) => Err(StartError::Misconfigured(fix)),
        Fault::Passing => Err(StartError::Unreachable(unreachable(
            &settings,
            &root_cause(&e),
        ))),
    }
}

fn unreachable(s: &S3Settings, why: &str) -> String {
    let variable = if s.endpoint.is_some() {
        "AWS_ENDPOINT_URL"
    } else {
        "AWS_REGION (or AWS_ENDPOINT_URL)"
    };
    format!(
        "the state store at {} does not answer ({why}): check {variable} and that the S3 server runs and can be reached from here",
        s.endpoint()
    )
}

/// The innermost cause of `e` ("Connection refused (os error 111)").
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e;
    while let Some(s) = last.source() {
        last = s;
    }
    last.to_string()
}

fn seen(data_dir: &Path, url: &str) -> bool {
    std::fs::read_to_string(data_dir.join(SEEN)).is_ok_and(|t| t.lines().any(|l| l == url))
}

fn remember(data_dir: &Path, url: &str) {
    if seen(data_dir, url) {
        return;
    }
    let path = data_dir.join(SEEN);
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    text.push_str(url);
    text.push('\n');
    if let Err(e) = std::fs::create_dir_all(data_dir).and_then(|()| std::fs::write(&path, text)) {
        tracing::warn!(path = %path.display(), error = %e, "recording that the state store answered failed: a restart during an outage will stop instead of waiting");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::aws::AmazonS3Builder;

    fn builder(endpoint: &str) -> AmazonS3Builder {
        AmazonS3Builder::new()
            .with_bucket_name("b")
            .with_region("us-east-1")
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_endpoint(endpoint)
    }

    fn closed_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    /// The real client's errors: a plain-HTTP endpoint without the opt-in
    /// (found before any request), and one nobody listens at, named with
    /// what happened; both within seconds.
    #[tokio::test]
    async fn a_store_that_cannot_work_is_told_within_seconds() {
        let endpoint = format!("http://127.0.0.1:{}", closed_port());
        let started = std::time::Instant::now();
        let e = probe(builder(&endpoint), "states").await.unwrap_err();
        assert!(
            matches!(&e, StartError::Misconfigured(m) if m.contains("set AWS_ALLOW_HTTP=true")),
            "{e}"
        );
        let e = probe(builder(&endpoint).with_allow_http(true), "states")
            .await
            .unwrap_err();
        let StartError::Unreachable(m) = &e else {
            panic!("{e}")
        };
        assert!(
            m.contains(&format!("the state store at {endpoint} does not answer")),
            "{m}"
        );
        assert!(m.contains("Connection refused"), "{m}");
        assert!(started.elapsed() < PROBE_WITHIN, "{:?}", started.elapsed());
    }

    /// The client's own "builder error" for a plain-HTTP endpoint, met
    /// after start, is no outage.
    #[tokio::test]
    async fn the_clients_builder_error_lasts() {
        let endpoint = format!("http://127.0.0.1:{}", closed_port());
        let store = builder(&endpoint).build().unwrap();
        let e = object_store::ObjectStore::list_with_delimiter(&store, None)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("builder error"), "{e}");
        let s = S3Settings::of(&builder(&endpoint));
        match classify(&e, &s) {
            Fault::Lasting(m) => assert!(m.contains("set AWS_ALLOW_HTTP=true"), "{m}"),
            Fault::Passing => panic!("taken for passing: {e}"),
        }
        let refused =
            builder(&endpoint)
                .with_allow_http(true)
                .with_retry(object_store::RetryConfig {
                    max_retries: 0,
                    ..Default::default()
                });
        let e = object_store::ObjectStore::list_with_delimiter(&refused.build().unwrap(), None)
            .await
            .unwrap_err();
        assert_eq!(classify(&e, &s), Fault::Passing, "{e}");
    }

    /// Out of reach at the first start stops the process; once this data
    /// directory used the store, it is an outage, waited out.
    #[tokio::test]
    async fn a_store_used_before_may_be_out_of_reach_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let url = "s3://b/states";
        let down = || builder(&format!("http://127.0.0.1:{}", closed_port())).with_allow_http(true);
        assert!(matches!(
            check_with(down(), "states", url, dir.path()).await,
            Err(StartError::Unreachable(_))
        ));
        remember(dir.path(), url);
        check_with(down(), "states", url, dir.path())
            .await
            .expect("waited out");
        remember(dir.path(), "s3://other/x");
        remember(dir.path(), url);
        assert!(seen(dir.path(), url));
        assert_eq!(
            std::fs::read_to_string(dir.path().join(SEEN)).unwrap(),
            "s3://b/states\ns3://other/x\n"
        );
        assert!(check_at_start("memory://", dir.path()).await.is_ok());
    }
}
