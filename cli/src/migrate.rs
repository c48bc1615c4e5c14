//! A Terraform state beside the configuration: a directory that Terraform
//! managed has a `terraform.tfstate` (or the file a `backend "local"` block
//! names). fleetform never plans against an empty state of its own while
//! such a file holds objects: that plan would create every one of them
//! again. It says so, and `init -migrate-state` takes the state over (a
//! `state push` of that file: lineage, serial and every object kept), with
//! [`push_text`], which `state push` uses too.
//!
//! A Terraform state that is there but cannot be read (an S3 backend that
//! cannot be reached or refuses, a file that is not a state) stops the run
//! too: treated as absent, it would lead to the same plan.

use crate::client::Client;
use fleetform_proto::fleetform as pb;
use fleetform_shared::diag::Diagnostic;
use std::path::{Path, PathBuf};

/// A Terraform state found for a workspace.
pub struct Found {
    /// Where: a file, or `s3://BUCKET/KEY`.
    pub path: PathBuf,
    /// Managed resource instances it holds.
    pub instances: usize,
    pub serial: u64,
    /// The state file's text.
    pub text: Vec<u8>,
}

/// A `backend "s3"` block's settings that say where the state is.
#[derive(Debug, Default, PartialEq)]
struct S3Backend {
    bucket: String,
    key: String,
    region: Option<String>,
    endpoint: Option<String>,
    workspace_key_prefix: Option<String>,
    path_style: bool,
}

impl S3Backend {
    /// The object key of workspace `ws`'s state, as the backend names it.
    fn key_of(&self, ws: &str) -> String {
        if ws == "default" {
            self.key.clone()
        } else {
            let prefix = self.workspace_key_prefix.as_deref().unwrap_or("env:");
            format!("{prefix}/{ws}/{}", self.key)
        }
    }
}

/// The working directory's `backend "s3"` block, when it has one: an error
/// when its bucket or key is not a literal string (a partial configuration
/// given to `terraform init -backend-config`), which leaves its state
/// unknown.
fn s3_backend() -> Option<Result<S3Backend, Diagnostic>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(".")
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tf"))
        .collect();
    files.sort();
    for file in files {
        let Ok(Ok(body)) = std::fs::read_to_string(&file).map(|t| hcl::parse(&t)) else {
            continue;
        };
        for tf in body.blocks().filter(|b| b.identifier() == "terraform") {
            if let Some(b) = tf.body().blocks().find(|b| {
                b.identifier() == "backend"
                    && b.labels().first().is_some_and(|l| l.as_str() == "s3")
            }) {
                let mut s3 = S3Backend::default();
                for a in b.body().attributes() {
                    match (a.key(), a.expr()) {
                        ("bucket", hcl::Expression::String(v)) => s3.bucket = v.clone(),
                        ("key", hcl::Expression::String(v)) => s3.key = v.clone(),
                        ("region", hcl::Expression::String(v)) => s3.region = Some(v.clone()),
                        ("endpoint", hcl::Expression::String(v)) => s3.endpoint = Some(v.clone()),
                        ("workspace_key_prefix", hcl::Expression::String(v)) => {
                            s3.workspace_key_prefix = Some(v.clone())
                        }
                        ("use_path_style" | "force_path_style", hcl::Expression::Bool(v)) => {
                            s3.path_style = *v
                        }
                        _ => {}
                    }
                }
                // Terraform 1.6+: endpoints { s3 = "..." }.
                for e in b.body().blocks().filter(|e| e.identifier() == "endpoints") {
                    for a in e.body().attributes() {
                        if let (true, hcl::Expression::String(v)) = (a.key() == "s3", a.expr()) {
                            s3.endpoint = Some(v.clone());
                        }
                    }
                }
                // Credentials come from the environment only: say so
                // rather than use other ones quietly.
                let unused: Vec<&str> = b
                    .body()
                    .attributes()
                    .map(|a| a.key())
                    .filter(|k| {
                        matches!(
                            *k,
                            "profile"
                                | "role_arn"
                                | "shared_credentials_file"
                                | "shared_credentials_files"
                                | "shared_config_files"
                                | "access_key"
                                | "secret_key"
                                | "token"
                        )
                    })
                    .chain(
                        b.body()
                            .blocks()
                            .filter(|x| x.identifier() == "assume_role")
                            .map(|_| "assume_role"),
                    )
                    .collect();
                if !unused.is_empty() {
                    eprintln!(
                        "Note: the s3 backend's {} {} not used to read its state: fleetform reads it with the AWS_* credentials of the environment.",
                        unused.join(", "),
                        if unused.len() == 1 { "is" } else { "are" }
                    );
                }
                if s3.bucket.is_empty() || s3.key.is_empty() {
                    return Some(Err(unreadable(
                        "the place the backend \"s3\" block names",
                        "its bucket and key are not both given as literal strings in the backend block (fleetform does not read a partial configuration given to `terraform init -backend-config`)".into(),
                        "Give bucket and key in the block as strings; or take the state over from a local file: `terraform state pull > terraform.tfstate`, remove the backend block, then `fleetform init -migrate-state`.",
                    )));
                }
                return Some(Ok(s3));
            }
        }
    }
    None
}

/// Reading a backend's state gives up after seconds, not minutes: the
/// client's own timeouts bound each attempt (connect 5 s, whole request
/// 30 s; and here a stalled read 10 s), but its default retries (10, with
/// backoff, for up to 3 minutes) would leave a command waiting that long on
/// an endpoint that cannot be reached.
fn s3_retries() -> object_store::RetryConfig {
    object_store::RetryConfig {
        backoff: object_store::BackoffConfig {
            init_backoff: std::time::Duration::from_millis(100),
            max_backoff: std::time::Duration::from_secs(1),
            base: 2.0,
        },
        max_retries: 2,
        retry_timeout: std::time::Duration::from_secs(10),
    }
}

/// The state an S3 backend holds for `ws`, read with the credentials of
/// the environment (`AWS_*`, as Terraform's S3 backend reads them): none
/// when there is no object at its key; an error when the bucket is
/// missing or the state cannot be read.
async fn read_s3(backend: &S3Backend, ws: &str) -> Result<Option<(String, Vec<u8>)>, Diagnostic> {
    use object_store::ClientConfigKey;
    use object_store::ObjectStoreExt;
    use object_store::aws::AmazonS3ConfigKey;
    let mut builder = object_store::aws::AmazonS3Builder::from_env()
        .with_bucket_name(&backend.bucket)
        .with_retry(s3_retries())
        .with_config(
            AmazonS3ConfigKey::Client(ClientConfigKey::ReadTimeout),
            "10s",
        );
    if let Some(r) = &backend.region {
        builder = builder.with_region(r);
    }
    if let Some(e) = &backend.endpoint {
        builder = builder
            .with_endpoint(e)
            .with_allow_http(e.starts_with("http://"));
    }
    if backend.path_style {
        builder = builder.with_virtual_hosted_style_request(false);
    }
    let key = backend.key_of(ws);
    let shown = format!("s3://{}/{key}", backend.bucket);
    let endpoint = builder
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .unwrap_or_else(|| {
            let region = builder
                .get_config_value(&AmazonS3ConfigKey::Region)
                .unwrap_or_else(|| "us-east-1".into());
            format!("AWS S3 in {region}")
        });
    let what = format!("{shown} (endpoint {endpoint})");
    let store = builder
        .build()
        .map_err(|e| unreadable(&what, causes(&e), S3_FIX))?;
    let got = match store
        .get(&object_store::path::Path::from(key.as_str()))
        .await
    {
        Ok(got) => got,
        // Only S3's own answer for a missing key means that there is no
        // state: S3 answers 404 for a missing bucket too, and so does a
        // server that is not S3 at all.
        Err(object_store::Error::NotFound { source, .. })
            if source.to_string().contains("<Code>NoSuchKey</Code>") =>
        {
            return Ok(None);
        }
        Err(object_store::Error::NotFound { source, .. })
            if source.to_string().contains("<Code>NoSuchBucket</Code>") =>
        {
            return Err(unreadable(
                &what,
                format!(
                    "the bucket {} does not exist: {}",
                    backend.bucket,
                    causes(&*source)
                ),
                "Create the bucket, or correct the block's bucket; if this configuration never had a state there, remove the backend block.",
            ));
        }
        Err(object_store::Error::NotFound { source, .. }) => {
            return Err(unreadable(
                &what,
                format!(
                    "{}; that is not S3's answer for a missing object (NoSuchKey): is the endpoint an S3 server?",
                    causes(&*source)
                ),
                S3_FIX,
            ));
        }
        Err(e) => return Err(unreadable(&what, causes(&e), S3_FIX)),
    };
    match got.bytes().await {
        Ok(b) => Ok(Some((shown, b.to_vec()))),
        Err(e) => Err(unreadable(&what, causes(&e), S3_FIX)),
    }
}

/// An error and its causes, each once: the client's top error ("error
/// sending request") does not say what failed ("Connection refused").
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        source = cause.source();
    }
    text
}

/// What to check when an S3 backend's state cannot be read.
const S3_FIX: &str = "Check that the endpoint can be reached (over http://, AWS_ALLOW_HTTP=true allows it), that the AWS_* credentials of the environment may read the object (fleetform reads the state with them, not with the block's profile or role), and that the bucket exists. If the state is elsewhere, or this configuration never had one, remove the backend block.";

/// The error that stops a run when the Terraform state at `what` cannot be
/// read: `error` says why, `fix` what to do about it.
fn unreadable(what: &str, error: String, fix: &str) -> Diagnostic {
    Diagnostic::error(
        "Cannot read the Terraform state",
        format!(
            "fleetform could not read the Terraform state at {what}: {error}.\n\nPlanning without that state would create again every object it holds, so fleetform stops here. {fix}"
        ),
    )
}

/// A state file's summary; an error when it is not a state fleetform can
/// read (JSON, format version 4: Terraform 0.12 and later).
fn summarize(path: PathBuf, text: Vec<u8>) -> Result<Found, Diagnostic> {
    let what = path.display().to_string();
    let restore = if what.starts_with("s3://") {
        "Restore the object from a backup (a version of it, when the bucket keeps versions), or remove the backend block if it is not this configuration's state."
    } else {
        "Restore the file from a backup, or move it away if it is not a state."
    };
    let doc: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        unreadable(
            &what,
            format!("it is not a Terraform state (not JSON: {e})"),
            restore,
        )
    })?;
    match doc["version"].as_u64() {
        Some(4) => {}
        Some(v) if v < 4 => {
            return Err(unreadable(
                &what,
                format!(
                    "its format version is {v}; fleetform reads version 4 (Terraform 0.12 and later)"
                ),
                "Let Terraform 0.12 or later upgrade it (`terraform refresh` writes it again in version 4).",
            ));
        }
        _ => {
            return Err(unreadable(
                &what,
                "it is not a Terraform state (no format version 4)".into(),
                restore,
            ));
        }
    }
    let instances = doc["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter(|r| r["mode"] == "managed")
                .map(|r| r["instances"].as_array().map_or(0, Vec::len))
                .sum()
        })
        .unwrap_or(0);
    Ok(Found {
        path,
        instances,
        serial: doc["serial"].as_u64().unwrap_or(0),
        text,
    })
}

/// The Terraform state of `ws`: the S3 backend's when the configuration
/// has one, else the local file; none when there is none; an error when
/// there may be one that cannot be read.
pub async fn find_any(ws: &str) -> Result<Option<Found>, Diagnostic> {
    if let Some(backend) = s3_backend() {
        return match read_s3(&backend?, ws).await? {
            Some((shown, text)) => summarize(PathBuf::from(shown), text).map(Some),
            None => Ok(None),
        };
    }
    read_local(ws)
}

/// The local backend's settings in the working directory's `.tf` files:
/// (path, workspace_dir), each when set. Files that do not parse are left
/// to the configuration loader to report.
fn local_backend() -> (Option<String>, Option<String>) {
    let mut out = (None, None);
    let Ok(entries) = std::fs::read_dir(".") else {
        return out;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "tf"))
        .collect();
    files.sort();
    for file in files {
        let Ok(body) = std::fs::read_to_string(&file).map(|t| hcl::parse(&t)) else {
            continue;
        };
        let Ok(body) = body else { continue };
        for tf in body.blocks().filter(|b| b.identifier() == "terraform") {
            for backend in tf.body().blocks().filter(|b| {
                b.identifier() == "backend"
                    && b.labels().first().is_some_and(|l| l.as_str() == "local")
            }) {
                for a in backend.body().attributes() {
                    if let hcl::Expression::String(v) = a.expr() {
                        match a.key() {
                            "path" => out.0 = Some(v.clone()),
                            "workspace_dir" => out.1 = Some(v.clone()),
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    out
}

/// Where Terraform keeps workspace `ws`'s state in this directory: the
/// local backend's rules (default workspace: `path`, else
/// `workspace_dir/WS/terraform.tfstate`).
fn state_path(ws: &str) -> PathBuf {
    let (path, workspace_dir) = local_backend();
    if ws == "default" {
        return PathBuf::from(path.unwrap_or_else(|| "terraform.tfstate".into()));
    }
    Path::new(&workspace_dir.unwrap_or_else(|| "terraform.tfstate.d".into()))
        .join(ws)
        .join("terraform.tfstate")
}

/// The Terraform state of workspace `ws` in the working directory, if a
/// readable one exists (for a hint; a plan reports one it cannot read).
pub fn find(ws: &str) -> Option<Found> {
    read_local(ws).ok().flatten()
}

/// The Terraform state file of workspace `ws` in the working directory:
/// none when there is no file, or an empty one (Terraform reads that as no
/// state); an error when it cannot be read or is not a state.
fn read_local(ws: &str) -> Result<Option<Found>, Diagnostic> {
    let path = state_path(ws);
    let text = match std::fs::read(&path) {
        Ok(text) if text.is_empty() => return Ok(None),
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(unreadable(
                &path.display().to_string(),
                e.to_string(),
                "Make the file readable, or move it away if it is not a state.",
            ));
        }
    };
    summarize(path, text).map(Some)
}

/// Whether fleetform has ever stored a state for `ws`.
async fn has_state(client: &mut Client, ws: &str) -> anyhow::Result<bool> {
    let history = client
        .state_history(pb::StateHistoryRequest {
            workspace: ws.to_string(),
        })
        .await;
    // A refusal of the credentials is said as such (one line), whatever
    // command met it first.
    let history = match history {
        Ok(h) => h.into_inner().snapshots,
        Err(s) => {
            let s = crate::client::access(s)?;
            anyhow::bail!("reading the state history: {}", s.message())
        }
    };
    if !history.is_empty() {
        return Ok(true);
    }
    // A state written before snapshots had history records.
    Ok(crate::client::state(client, ws).await?.is_some())
}

/// Before a plan: the error that stops it when fleetform has no state for
/// the workspace yet and a Terraform state with objects is present, or one
/// may be present but cannot be read. Once fleetform has a state, the
/// Terraform state is not read.
pub async fn check(client: &mut Client, ws: &str) -> anyhow::Result<Option<Diagnostic>> {
    // Terraform names the file by the workspace alone (`ws` is the state key).
    let tf_ws = fleetform_coordinator::store::workspace_of(ws);
    // Nothing of Terraform's here: no need to ask the store anything (a run
    // started while the store is out of reach waits for it in the run).
    if s3_backend().is_none() && std::fs::symlink_metadata(state_path(tf_ws)).is_err() {
        return Ok(None);
    }
    match has_state(client, ws).await {
        Ok(true) => return Ok(None),
        Ok(false) => {}
        // Credentials that may not read the state: the command's own
        // request is refused with the role it needs.
        Err(e)
            if e.downcast_ref::<tonic::Status>().is_some_and(|s| {
                matches!(
                    s.code(),
                    tonic::Code::Unauthenticated | tonic::Code::PermissionDenied
                )
            }) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e),
    }
    let found = match find_any(tf_ws).await {
        Ok(Some(found)) if found.instances > 0 => found,
        Ok(_) => return Ok(None),
        Err(d) => return Ok(Some(d)),
    };
    Ok(Some(Diagnostic::error(
        "A Terraform state is present",
        format!(
            "{} holds {} resource instance(s) (serial {}), and fleetform has no state yet for workspace {ws:?}. A plan now would create every one of those objects again.\n\nTake the Terraform state over with:\n  fleetform init -migrate-state\nIt copies the state into fleetform's state store (lineage, serial and every object kept) and leaves the file as it is. To start from an empty state on purpose, move the file away.",
            found.path.display(),
            found.instances,
            found.serial
        ),
    )))
}

/// Where the Terraform state of workspace `ws` is looked for, as said to
/// people: the `backend "s3"` object, or the local file.
pub fn place_of(ws: &str) -> String {
    match s3_backend() {
        Some(Ok(b)) => format!("s3://{}/{}", b.bucket, b.key_of(ws)),
        _ => state_path(ws).display().to_string(),
    }
}

/// Pushes a state file's text (`shown` names it in messages).
pub async fn push_text(
    client: &mut Client,
    ws: &str,
    text: Vec<u8>,
    shown: &str,
    force: bool,
) -> anyhow::Result<u8> {
    let doc = fleetform_shared::json::Json::parse(&text).map_err(|e| e.to_string());
    if let Ok(doc) = &doc {
        for note in push_notes(doc) {
            eprintln!("Note: {note}");
        }
    }
    let state = doc.and_then(|doc| fleetform_shared::statefile::from_v4(&doc));
    let state = match state {
        Ok(s) => s,
        Err(e) => {
            return Ok(crate::present::report::report(
                false,
                &Diagnostic::error(
                    "Invalid state file",
                    format!("{shown}: {e}. Nothing was changed."),
                ),
            ));
        }
    };
    match client
        .push_state(pb::PushStateRequest {
            workspace: ws.to_string(),
            state: state.encode(),
            force,
            lock_timeout_ms: crate::client::lock_timeout_ms(),
            source: crate::project::source(Path::new(".")),
        })
        .await
    {
        Ok(r) => {
            println!(
                "Pushed {} resource instance(s) into workspace {ws:?} (serial {}).",
                state.resources.len(),
                r.into_inner().serial
            );
            Ok(0)
        }
        Err(s) => {
            let s = crate::client::access(s)?;
            Ok(crate::present::report::report(
                false,
                &Diagnostic::error("Failed to push the state", s.message()),
            ))
        }
    }
}

/// What of a Terraform state file fleetform does not keep, said rather
/// than dropped silently.
fn push_notes(doc: &fleetform_shared::json::Json) -> Vec<String> {
    use fleetform_shared::json::Json;
    let mut notes = Vec::new();
    let resources = doc.get("resources").and_then(Json::as_array);
    for r in resources.into_iter().flatten() {
        let provider = r.get("provider").and_then(Json::as_str).unwrap_or_default();
        // Anything but a root module's default configuration.
        if !provider.starts_with("provider[") || !provider.ends_with(']') {
            let name = format!(
                "{}.{}",
                r.get("type").and_then(Json::as_str).unwrap_or("?"),
                r.get("name").and_then(Json::as_str).unwrap_or("?")
            );
            notes.push(format!(
                "{name} was managed through {provider}; fleetform records the provider only, and the next plan uses the configuration's provider block for it"
            ));
        }
    }
    notes
}
