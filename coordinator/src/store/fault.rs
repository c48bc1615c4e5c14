//! What an object-store failure means for whoever runs fleetform: an
//! outage that passes (a connection refused or reset, a timeout, a 5xx,
//! throttling), which runs wait out and say so, or a misconfiguration that
//! waiting does not mend (a missing bucket, credentials the store refuses
//! or that may not use the bucket, a plain-HTTP endpoint the S3 client
//! refuses), which ends what met it with one line naming the fix.
//!
//! The S3 client hands the response it refused (status and body) over as
//! text only, so the status and S3's error code are read from that text.
//! Errors of stores that are not HTTP (a local directory, memory) are all
//! passing: they were retried before this module existed, and still are.

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::client::{ClientConfigKey, HttpError, HttpErrorKind};

/// What a failure calls for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// Waiting may mend it: retried.
    Passing,
    /// Waiting does not mend it; the line says what to change.
    Lasting(String),
}

/// Where the S3 client connects and with which credentials, as the
/// messages name them: read from the same `AWS_*` variables as the client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct S3Settings {
    /// `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT`); None: AWS itself.
    pub endpoint: Option<String>,
    /// `AWS_ALLOW_HTTP` is true.
    pub allow_http: bool,
    pub region: String,
    /// Where the credentials came from, naming the variables.
    pub credentials: String,
}

impl S3Settings {
    /// The settings `AmazonS3Builder::from_env` reads.
    pub fn from_env() -> S3Settings {
        S3Settings::of(&AmazonS3Builder::from_env())
    }

    pub fn of(b: &AmazonS3Builder) -> S3Settings {
        let get = |k: AmazonS3ConfigKey| b.get_config_value(&k).filter(|v| !v.is_empty());
        let allow_http =
            get(AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp)).is_some_and(|v| {
                // As the client parses it.
                matches!(
                    v.to_ascii_lowercase().as_str(),
                    "1" | "true" | "on" | "yes" | "y"
                )
            });
        let region = get(AmazonS3ConfigKey::Region)
            .or_else(|| get(AmazonS3ConfigKey::DefaultRegion))
            .unwrap_or_else(|| "us-east-1".into());
        let credentials = if get(AmazonS3ConfigKey::SkipSignature).as_deref() == Some("true") {
            "no credentials (AWS_SKIP_SIGNATURE)".to_string()
        } else if let Some(id) = get(AmazonS3ConfigKey::AccessKeyId) {
            // The key id's end identifies it without giving it away.
            let tail: String = id
                .chars()
                .rev()
                .take(4)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let token = if get(AmazonS3ConfigKey::Token).is_some() {
                ", AWS_SESSION_TOKEN"
            } else {
                ""
            };
            format!("AWS_ACCESS_KEY_ID (ending in {tail}), AWS_SECRET_ACCESS_KEY{token}")
        } else if get(AmazonS3ConfigKey::WebIdentityTokenFile).is_some() {
            "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN".to_string()
        } else if get(AmazonS3ConfigKey::ContainerCredentialsRelativeUri).is_some()
            || get(AmazonS3ConfigKey::ContainerCredentialsFullUri).is_some()
        {
            "the container's credentials (AWS_CONTAINER_CREDENTIALS_*)".to_string()
        } else {
            "the instance's role (no AWS_ACCESS_KEY_ID is set)".to_string()
        };
        S3Settings {
            endpoint: get(AmazonS3ConfigKey::Endpoint),
            allow_http,
            region,
            credentials,
        }
    }

    /// The endpoint as the messages name it.
    pub fn endpoint(&self) -> String {
        self.endpoint
            .clone()
            .unwrap_or_else(|| format!("https://s3.{}.amazonaws.com", self.region))
    }

    /// A plain-HTTP endpoint that the client refuses (it says only
    /// "builder error" when it meets one).
    pub fn refused_plain_http(&self) -> Option<String> {
        let endpoint = self.endpoint.as_deref()?;
        (endpoint.to_ascii_lowercase().starts_with("http://") && !self.allow_http).then(|| {
            format!(
                "the state store's endpoint {endpoint} is plain HTTP, which the S3 client refuses unless allowed: set AWS_ALLOW_HTTP=true (or use an https:// endpoint)"
            )
        })
    }
}

/// Whether `e` passes, or what to change when it does not.
pub(crate) fn classify(e: &object_store::Error, s: &S3Settings) -> Fault {
    use object_store::Error as E;
    let text = e.to_string();
    let reply = Reply::of(&text);
    match e {
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => {
            Fault::Lasting(refused(&reply, s))
        }
        E::NotFound { .. } if reply.code.as_deref() == Some("NoSuchBucket") => {
            Fault::Lasting(no_bucket(&reply, s))
        }
        E::NotSupported { .. } | E::NotImplemented { .. } | E::UnknownConfigurationKey { .. } => {
            Fault::Lasting(format!(
                "the state store cannot do what fleetform needs: {text}"
            ))
        }
        E::Generic { .. } => generic(e, &text, &reply, s),
        // A missing object, a lost race, a task that panicked: what the
        // caller makes of it, or passing.
        _ => Fault::Passing,
    }
}

fn generic(e: &object_store::Error, text: &str, reply: &Reply, s: &S3Settings) -> Fault {
    if let Some(http) = http_error(e) {
        // The request was not answered: out of reach, or refused by the
        // client itself before it was sent.
        return match http.kind() {
            HttpErrorKind::Unknown if text.contains("builder error") => {
                Fault::Lasting(s.refused_plain_http().unwrap_or_else(|| {
                    format!(
                        "the S3 client cannot make requests to {}: {text}",
                        s.endpoint()
                    )
                }))
            }
            _ => Fault::Passing,
        };
    }
    if text.contains("Received redirect without LOCATION") {
        return Fault::Lasting(wrong_region(reply, s));
    }
    let Some(status) = reply.status else {
        // Not an answer of the server: a local store's trouble.
        return Fault::Passing;
    };
    match (status, reply.code.as_deref()) {
        (500.., _) | (408 | 429, _) | (_, Some("SlowDown" | "InternalError")) => Fault::Passing,
        (401 | 403, _) => Fault::Lasting(refused(reply, s)),
        (_, Some("NoSuchBucket")) => Fault::Lasting(no_bucket(reply, s)),
        (301 | 307 | 308, _) | (_, Some("PermanentRedirect" | "AuthorizationHeaderMalformed")) => {
            Fault::Lasting(wrong_region(reply, s))
        }
        (400..=499, _) => Fault::Lasting(format!(
            "the state store at {} refuses fleetform's requests ({}): {}",
            s.endpoint(),
            reply.what(status),
            text
        )),
        _ => Fault::Passing,
    }
}

/// What an error answer said: its status and S3's XML error fields.
#[derive(Debug, Default)]
struct Reply {
    status: Option<u16>,
    code: Option<String>,
    message: Option<String>,
    bucket: Option<String>,
}

impl Reply {
    fn of(text: &str) -> Reply {
        let status = text
            .split_once("status code: ")
            .and_then(|(_, rest)| rest.get(..3))
            .and_then(|s| s.parse().ok());
        Reply {
            status,
            code: xml_field(text, "Code"),
            message: xml_field(text, "Message"),
            bucket: xml_field(text, "BucketName"),
        }
    }

    /// `Code: Message`, or the status.
    fn what(&self, status: u16) -> String {
        match (&self.code, &self.message) {
            (Some(c), Some(m)) => format!("{c}: {m}"),
            (Some(c), None) => c.clone(),
            _ => format!("HTTP {status}"),
        }
    }
}

fn xml_field(text: &str, name: &str) -> Option<String> {
    let (_, rest) = text.split_once(&format!("<{name}>"))?;
    let (value, _) = rest.split_once(&format!("</{name}>"))?;
    Some(value.trim().to_string())
}

/// The transport error inside `e`, if the request was never answered.
fn http_error(e: &object_store::Error) -> Option<&HttpError> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<HttpError>() {
            return Some(h);
        }
        source = s.source();
    }
    None
}

fn no_bucket(reply: &Reply, s: &S3Settings) -> String {
    let bucket = reply.bucket.as_deref().unwrap_or("of the state URL");
    format!(
        "bucket {bucket} does not exist at {}: create it (for example `aws s3 mb s3://{bucket}`), or give a state URL (s3://BUCKET/PREFIX) whose bucket exists",
        s.endpoint()
    )
}

fn refused(reply: &Reply, s: &S3Settings) -> String {
    let what = reply.what(reply.status.unwrap_or(403));
    let denied = matches!(
        reply.code.as_deref(),
        Some("AccessDenied" | "AllAccessDisabled")
    );
    if denied {
        let bucket = reply
            .bucket
            .as_deref()
            .map_or(String::new(), |b| format!(" {b}"));
        format!(
            "the state store at {} does not let these credentials use the bucket{bucket} ({what}): grant them s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject there, or use other credentials (the S3 client used {})",
            s.endpoint(),
            s.credentials
        )
    } else {
        format!(
            "the state store at {} refuses the credentials ({what}): the S3 client used {}; set valid ones",
            s.endpoint(),
            s.credentials
        )
    }
}

fn wrong_region(reply: &Reply, s: &S3Settings) -> String {
    let bucket = reply
        .bucket
        .as_deref()
        .map_or(String::new(), |b| format!(" {b}"));
    format!(
        "the bucket{bucket} is not in region {} (the store redirected the request): set AWS_REGION to the bucket's region",
        s.region
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> S3Settings {
        S3Settings {
            endpoint: Some("http://127.0.0.1:9000".into()),
            allow_http: true,
            region: "us-east-1".into(),
            credentials: "AWS_ACCESS_KEY_ID (ending in test), AWS_SECRET_ACCESS_KEY".into(),
        }
    }

    fn generic(msg: &str) -> object_store::Error {
        object_store::Error::Generic {
            store: "S3",
            source: msg.to_string().into(),
        }
    }

    fn lasting(f: Fault) -> String {
        match f {
            Fault::Lasting(m) => m,
            Fault::Passing => panic!("taken for passing"),
        }
    }

    /// S3's answers as the client words them (moto's bodies): a missing
    /// bucket, refused credentials and a refused access end with their
    /// fix; a 5xx and throttling pass.
    #[test]
    fn answers_are_told_apart_by_status_and_code() {
        let s = settings();
        let missing = generic(
            "Error performing list request: Error performing GET http://127.0.0.1:9000/nope?list-type=2 in 4ms - Server returned non-2xx status code: 404 Not Found: <?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>nope</BucketName></Error>",
        );
        let m = lasting(classify(&missing, &s));
        assert!(
            m.contains("bucket nope does not exist at http://127.0.0.1:9000: create it"),
            "{m}"
        );
        let key = generic(
            "Server returned non-2xx status code: 403 Forbidden: <Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>",
        );
        let m = lasting(classify(&key, &s));
        assert!(
            m.contains("refuses the credentials (InvalidAccessKeyId: The AWS Access Key Id"),
            "{m}"
        );
        assert!(
            m.contains("used AWS_ACCESS_KEY_ID (ending in test), AWS_SECRET_ACCESS_KEY"),
            "{m}"
        );
        let denied = object_store::Error::PermissionDenied {
            path: "states/default/lock".into(),
            source: "Server returned non-2xx status code: 403 Forbidden: <Error><Code>AccessDenied</Code><Message>Access Denied</Message><BucketName>b</BucketName></Error>".into(),
        };
        let m = lasting(classify(&denied, &s));
        assert!(
            m.contains("use the bucket b (AccessDenied: Access Denied): grant them s3:ListBucket"),
            "{m}"
        );
        for passing in [
            "Server returned non-2xx status code: 503 Service Unavailable: <Error><Code>SlowDown</Code></Error>",
            "Server returned non-2xx status code: 500 Internal Server Error: ",
            "Server returned non-2xx status code: 429 Too Many Requests: ",
            "Server returned error response: <Error><Code>InternalError</Code></Error>",
        ] {
            assert_eq!(classify(&generic(passing), &s), Fault::Passing, "{passing}");
        }
        let redirect = generic(
            "Server returned non-2xx status code: 301 Moved Permanently: <Error><Code>PermanentRedirect</Code><BucketName>b</BucketName></Error>",
        );
        assert!(lasting(classify(&redirect, &s)).contains("set AWS_REGION"));
    }

    /// A missing object is the caller's business; a local store's
    /// trouble passes, as it did before.
    #[test]
    fn missing_objects_and_local_trouble_pass() {
        let s = settings();
        let missing_key = object_store::Error::NotFound {
            path: "states/default/head".into(),
            source: "Server returned non-2xx status code: 404 Not Found: <Error><Code>NoSuchKey</Code></Error>".into(),
        };
        assert_eq!(classify(&missing_key, &s), Fault::Passing);
        assert_eq!(
            classify(
                &generic("Unable to open file /x: No space left on device"),
                &s
            ),
            Fault::Passing
        );
    }

    /// The endpoint the client refuses is found before any request, and
    /// named with the variable that allows it.
    #[test]
    fn a_plain_http_endpoint_needs_the_opt_in() {
        let mut s = settings();
        assert_eq!(s.refused_plain_http(), None);
        s.allow_http = false;
        let m = s.refused_plain_http().expect("refused");
        assert!(m.contains("http://127.0.0.1:9000 is plain HTTP"), "{m}");
        assert!(m.contains("set AWS_ALLOW_HTTP=true"), "{m}");
        s.endpoint = Some("https://s3.example.com".into());
        assert_eq!(s.refused_plain_http(), None);
        s.endpoint = None;
        assert_eq!(s.endpoint(), "https://s3.us-east-1.amazonaws.com");
    }

    #[test]
    fn settings_name_the_credentials_without_the_secret() {
        let b = AmazonS3Builder::new()
            .with_access_key_id("AKIAEXAMPLE1234")
            .with_secret_access_key("very-secret")
            .with_endpoint("http://localhost:1")
            .with_allow_http(true);
        let s = S3Settings::of(&b);
        assert_eq!(s.endpoint.as_deref(), Some("http://localhost:1"));
        assert!(s.allow_http);
        assert_eq!(
            s.credentials,
            "AWS_ACCESS_KEY_ID (ending in 1234), AWS_SECRET_ACCESS_KEY"
        );
        assert!(!format!("{s:?}").contains("very-secret"));
    }
}
