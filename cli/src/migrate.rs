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

/// A Terraform state file found for a workspace.
pub struct Found {
    pub path: PathBuf,
    /// Managed resource instances it holds.
    pub instances: usize,
    pub serial: u64,
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
    })
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
    let Some(found) = find(ws).filter(|f| f.instances > 0) else {
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
    let Some(found) = find(ws) else {
        println!(
            "\nNo Terraform state to migrate: {} does not exist or is not a state file.",
            state_path(ws).display()
        );
        return Ok(0);
    };
    println!(
        "\nMigrating the Terraform state {} ({} resource instance(s), serial {}) into fleetform's state for workspace {ws:?}...",
        found.path.display(),
        found.instances,
        found.serial
    );
    let code = crate::workspaces::push(
        client,
        ws,
        &crate::args::StatePushArgs {
            force: false,
            file: found.path.clone(),
        },
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
