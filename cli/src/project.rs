//! Which project a directory's configuration belongs to, and `init
//! -project=NAME` that binds it.
//!
//! A project is fleetform's equivalent of a Terraform backend
//! configuration: the name of one configuration's set of states. Each
//! project has its own workspaces, so a coordinator that serves many
//! configurations keeps each one's state apart: the state of workspace W
//! of project P is the state key `P/W`.
//!
//! - `fleetform init -project=NAME` binds the working directory to NAME and
//!   records it in `.fleetform/project`, where every later command finds it
//!   (as `terraform init` records the backend in `.terraform/`).
//! - `FLEETFORM_PROJECT=NAME` names it for a directory that is bound to no
//!   project (a CI checkout, where `.fleetform/` is not committed). A
//!   variable that names another project than the binding is refused: a
//!   switch is made on purpose, with `init`.
//! - Changing a binding is `init -project=OTHER` with `-reconfigure` (use
//!   OTHER's states, leave the old ones as they are) or `-migrate-state`
//!   (copy the old project's states into OTHER); without either, a binding
//!   whose states hold objects is not changed.
//! - With a coordinator, a command that uses a state needs a project: a
//!   coordinator serves many configurations, and one without a name would
//!   land in whichever state another unnamed configuration wrote. In
//!   embedded mode the state lives in the directory itself (as Terraform's
//!   local backend keeps it), so a directory bound to no project works as
//!   it always did; bound, it keeps its project's states the same way.

use crate::client::Client;
use fleetform_coordinator::store::valid_project_name;
use fleetform_proto::fleetform as pb;
use fleetform_shared::diag::Diagnostic;
use std::path::Path;

/// `HOST:DIRECTORY` of a configuration, recorded with the snapshots its
/// runs write so that a refusal can say which configuration wrote a state.
pub fn source(dir: &Path) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    format!("{host}:{}", dir.display())
}

/// Where `init -project` records the binding, relative to the directory.
pub const BINDING_FILE: &str = ".fleetform/project";

/// The environment variable that names a project for an unbound directory.
pub const PROJECT_VAR: &str = "FLEETFORM_PROJECT";

/// The project of the working directory: its binding, else
/// `FLEETFORM_PROJECT`, else none.
pub fn current() -> Result<Option<String>, Diagnostic> {
    let bound = bound(Path::new("."))?;
    let from_env = std::env::var(PROJECT_VAR).ok().filter(|v| !v.is_empty());
    match (bound, from_env) {
        (Some(b), Some(e)) if b != e => Err(Diagnostic::error(
            "Conflicting projects",
            format!(
                "This directory is bound to project {b:?} ({BINDING_FILE}), and {PROJECT_VAR} names {e:?}. fleetform does not switch a configuration to another project's state on the word of an environment variable.\n\nUnset {PROJECT_VAR} to use {b:?}, or switch on purpose with:\n  fleetform init -project={e} -reconfigure"
            ),
        )),
        (Some(b), _) => Ok(Some(b)),
        (None, Some(e)) => {
            check_name(&e, PROJECT_VAR)?;
            Ok(Some(e))
        }
        (None, None) => Ok(None),
    }
}

/// The project a directory is bound to.
pub fn bound(dir: &Path) -> Result<Option<String>, Diagnostic> {
    match std::fs::read_to_string(dir.join(BINDING_FILE)) {
        Ok(text) => {
            let name = text.trim().to_string();
            if name.is_empty() {
                return Ok(None);
            }
            check_name(&name, BINDING_FILE)?;
            Ok(Some(name))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Diagnostic::error(
            "Cannot read the project binding",
            format!("Reading {BINDING_FILE}: {e}."),
        )),
    }
}

pub fn check_name(name: &str, source: &str) -> Result<(), Diagnostic> {
    if valid_project_name(name) {
        Ok(())
    } else {
        Err(Diagnostic::error(
            "Invalid project name",
            format!(
                "{name:?} (from {source}) is not a valid project name: use letters, digits, - and _ (up to 90 characters)."
            ),
        ))
    }
}

pub fn bind_here(name: &str) -> anyhow::Result<()> {
    let path = Path::new(BINDING_FILE);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, format!("{name}\n"))
        .map_err(|e| anyhow::anyhow!("writing {BINDING_FILE}: {e}"))
}

/// The error for a command that needs a state through a coordinator from a
/// directory bound to no project.
pub fn missing() -> Diagnostic {
    Diagnostic::error(
        "No project",
        format!(
            "This configuration is bound to no project, and a coordinator keeps the states of many configurations: it must know which one is this configuration's.\n\nBind this directory once with:\n  fleetform init -project=NAME\n(recorded in {BINDING_FILE}), or set {PROJECT_VAR}=NAME (for a CI checkout). Use the name this configuration's state already has, if it has one: `fleetform workspace list` under that name shows its workspaces."
        ),
    )
}

/// A project's workspaces that have a state (by their names within it),
/// with their object counts.
pub async fn states_of(
    client: &mut Client,
    project: Option<&str>,
) -> anyhow::Result<Vec<pb::WorkspaceInfo>> {
    let mut all = crate::workspace::names(client, project).await?;
    all.retain(|w| w.serial > 0);
    Ok(all)
}

pub fn describe(project: Option<&str>) -> String {
    match project {
        Some(p) => format!("project {p:?}"),
        None => "no project (the states of configurations bound to none)".to_string(),
    }
}

/// Before a command in embedded mode with a project (bound, or from
/// `FLEETFORM_PROJECT`): the error when the directory's own unbound states
/// hold objects and the project has no state here yet. A binding made
/// through a coordinator, or the variable, would otherwise start this
/// directory over from an empty state, and its plan create those objects
/// again.
pub async fn check_embedded_switch(
    client: &mut Client,
    project: &str,
) -> anyhow::Result<Option<Diagnostic>> {
    if !states_of(client, Some(project)).await?.is_empty() {
        return Ok(None);
    }
    let own = states_of(client, None).await?;
    if own.iter().all(|w| w.resources == 0) {
        return Ok(None);
    }
    let how = match bound(Path::new(".")).ok().flatten() {
        Some(_) => format!(
            "This directory is bound to project {project:?} ({BINDING_FILE}), which has no state here yet"
        ),
        None => format!("{PROJECT_VAR} names project {project:?}, which has no state here yet"),
    };
    Ok(Some(Diagnostic::error(
        "Project change",
        format!(
            "{how}, and the directory's own states, from before it had a project, hold objects:\n{}\nA plan in {project:?} would create those objects again.\n\nCopy them into {project:?} (in embedded mode, without a coordinator):\n  fleetform init -project={project} -migrate-state",
            listing(&own)
        ),
    )))
}

pub fn listing(states: &[pb::WorkspaceInfo]) -> String {
    states
        .iter()
        .map(|w| {
            format!(
                "  {} (serial {}, {} resource instance(s))",
                w.name, w.serial, w.resources
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
