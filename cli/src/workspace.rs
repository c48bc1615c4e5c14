//! Which workspace a command uses, and the workspaces a project has.
//!
//! The selected workspace is remembered per directory in
//! `.fleetform/environment` (Terraform keeps it in `.terraform/environment`;
//! ours sits beside fleetform's other local files so the two tools never
//! overwrite each other's choice). `fleetform workspace ...` is
//! [`crate::command::workspace`].

use crate::client::Client;
use anyhow::Context;
use fleetform_coordinator::store::workspace_of;
use fleetform_proto::fleetform as pb;
use fleetform_shared::diag::Diagnostic;
use std::path::Path;

const ENVIRONMENT_FILE: &str = ".fleetform/environment";

/// The workspace a command uses: `-workspace` (or `FLEETFORM_WORKSPACE`),
/// else `TF_WORKSPACE`, else the one selected in this directory, else
/// `default`.
pub fn current(flag: Option<&str>) -> Result<String, Diagnostic> {
    let (name, source) = if let Some(f) = flag {
        (f.to_string(), "-workspace")
    } else if let Ok(tf) = std::env::var("TF_WORKSPACE")
        && !tf.is_empty()
    {
        (tf, "TF_WORKSPACE")
    } else if let Some(selected) = selected(Path::new("."))? {
        (selected, ENVIRONMENT_FILE)
    } else {
        ("default".to_string(), "")
    };
    check_name(&name).map_err(|mut d| {
        if !source.is_empty() {
            d.detail = format!("{} It comes from {source}.", d.detail);
        }
        d
    })?;
    Ok(name)
}

fn selected(dir: &Path) -> Result<Option<String>, Diagnostic> {
    match std::fs::read_to_string(dir.join(ENVIRONMENT_FILE)) {
        Ok(text) => Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Diagnostic::error(
            "Cannot read the selected workspace",
            format!("Reading {ENVIRONMENT_FILE}: {e}."),
        )),
    }
}

pub fn select_here(name: &str) -> anyhow::Result<()> {
    let path = Path::new(ENVIRONMENT_FILE);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, format!("{name}\n")).with_context(|| format!("writing {ENVIRONMENT_FILE}"))
}

/// The names a workspace can have: they become object store keys.
pub fn check_name(name: &str) -> Result<(), Diagnostic> {
    if fleetform_coordinator::store::valid_workspace_name(name) {
        Ok(())
    } else {
        Err(Diagnostic::error(
            "Invalid workspace name",
            format!(
                "{name:?} is not a valid workspace name: use letters, digits, - and _ (up to 90 characters)."
            ),
        ))
    }
}

/// The workspaces of `project`, by their names within it.
pub async fn names(
    client: &mut Client,
    project: Option<&str>,
) -> anyhow::Result<Vec<pb::WorkspaceInfo>> {
    let mut all = client
        .list_workspaces(pb::ListWorkspacesRequest {
            project: project.unwrap_or_default().to_string(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("listing workspaces: {}", s.message()))?
        .into_inner()
        .workspaces;
    for w in &mut all {
        w.name = workspace_of(&w.name).to_string();
    }
    Ok(all)
}
