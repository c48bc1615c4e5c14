//! A Terraform state beside the configuration: a directory that Terraform
//! managed has a `terraform.tfstate` (or the file a `backend "local"` block
//! names). fleetform never plans against an empty state of its own while
//! such a file holds objects: that plan would create every one of them
//! again. It says so, and `init -migrate-state` takes the state over (a
//! `state push` of that file: lineage, serial and every object kept).

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

/// The working directory's `backend "s3"` block, when it has one whose
/// bucket and key are literal strings.
fn s3_backend() -> Option<S3Backend> {
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
            for b in tf.body().blocks().filter(|b| {
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
                if !s3.bucket.is_empty() && !s3.key.is_empty() {
                    return Some(s3);
                }
            }
        }
    }
    None
}

/// The state an S3 backend holds for `ws`, read with the credentials of
/// the environment (`AWS_*`, as Terraform's S3 backend reads them). Not
/// there or not readable: none (a warning says why when it is not
/// readable).
async fn read_s3(backend: &S3Backend, ws: &str) -> Option<(String, Vec<u8>)> {
    use object_store::ObjectStoreExt;
    let mut builder =
        object_store::aws::AmazonS3Builder::from_env().with_bucket_name(&backend.bucket);
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
    let store = match builder.build() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Warning: cannot check the S3 backend's state {shown}: {e}");
            return None;
        }
    };
    match store
        .get(&object_store::path::Path::from(key.as_str()))
        .await
    {
        Ok(got) => match got.bytes().await {
            Ok(b) => Some((shown, b.to_vec())),
            Err(e) => {
                eprintln!("Warning: cannot read the S3 backend's state {shown}: {e}");
                None
            }
        },
        Err(object_store::Error::NotFound { .. }) => None,
        Err(e) => {
            eprintln!("Warning: cannot read the S3 backend's state {shown}: {e}");
            None
        }
    }
}

/// A state file's summary, when it is one.
fn summarize(path: PathBuf, text: Vec<u8>) -> Option<Found> {
    let doc: serde_json::Value = serde_json::from_slice(&text).ok()?;
    let instances = doc["resources"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .filter(|r| r["mode"] == "managed")
                .map(|r| r["instances"].as_array().map_or(0, Vec::len))
                .sum()
        })
        .unwrap_or(0);
    Some(Found {
        path,
        instances,
        serial: doc["serial"].as_u64().unwrap_or(0),
        text,
    })
}

/// The Terraform state of `ws`: the S3 backend's when the configuration
/// has one, else the local file.
pub async fn find_any(ws: &str) -> Option<Found> {
    if let Some(backend) = s3_backend() {
        let (shown, text) = read_s3(&backend, ws).await?;
        return summarize(PathBuf::from(shown), text);
    }
    find(ws)
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
/// readable one exists.
pub fn find(ws: &str) -> Option<Found> {
    let path = state_path(ws);
    let text = std::fs::read(&path).ok()?;
    summarize(path, text)
}

/// Whether fleetform has ever stored a state for `ws`.
async fn has_state(client: &mut Client, ws: &str) -> anyhow::Result<bool> {
    let history = client
        .state_history(pb::StateHistoryRequest {
            workspace: ws.to_string(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("reading the state history: {}", s.message()))?
        .into_inner()
        .snapshots;
    if !history.is_empty() {
        return Ok(true);
    }
    // A state written before snapshots had history records.
    Ok(crate::commands::load_state(client, ws).await?.is_some())
}

/// Before a plan: the error that stops it when a Terraform state with
/// objects is present and fleetform has no state for the workspace yet.
pub async fn check(client: &mut Client, ws: &str) -> anyhow::Result<Option<Diagnostic>> {
    // Terraform names the file by the workspace alone (`ws` is the state key).
    let tf_ws = fleetform_coordinator::store::workspace_of(ws);
    let Some(found) = find_any(tf_ws).await.filter(|f| f.instances > 0) else {
        return Ok(None);
    };
    if has_state(client, ws).await? {
        return Ok(None);
    }
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

/// `init -migrate-state`: pushes the Terraform state of `ws` into
/// fleetform's state. Refused (by `state push`'s rules) when fleetform's
/// state is of another lineage or newer.
pub async fn migrate(client: &mut Client, ws: &str) -> anyhow::Result<u8> {
    let tf_ws = fleetform_coordinator::store::workspace_of(ws);
    let Some(found) = find_any(tf_ws).await else {
        let place = match s3_backend() {
            Some(b) => format!("s3://{}/{}", b.bucket, b.key_of(tf_ws)),
            None => state_path(tf_ws).display().to_string(),
        };
        println!("\nNo Terraform state to migrate: {place} does not exist or is not a state file.");
        return Ok(0);
    };
    println!(
        "\nMigrating the Terraform state {} ({} resource instance(s), serial {}) into fleetform's state for workspace {ws:?}...",
        found.path.display(),
        found.instances,
        found.serial
    );
    let code = crate::workspaces::push_text(
        client,
        ws,
        found.text.clone(),
        &found.path.display().to_string(),
        false,
    )
    .await?;
    if code == 0 {
        println!(
            "fleetform manages this state from now on; {} is left as it was (Terraform would no longer see fleetform's changes in it).",
            found.path.display()
        );
    }
    Ok(code)
}
