//! Which workspace a command uses, `fleetform workspace ...`, and the
//! workspace's state history (`state history`, `state pull`).
//!
//! The selected workspace is remembered per directory in
//! `.fleetform/environment` (Terraform keeps it in `.terraform/environment`;
//! ours sits beside fleetform's other local files so the two tools never
//! overwrite each other's choice).

use crate::args::{WorkspaceCommand, WorkspaceDeleteArgs};
use crate::client::{self, Client};
use anyhow::Context;
use fleetform_coordinator::store::{state_key, workspace_of};
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

fn select_here(name: &str) -> anyhow::Result<()> {
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

/// `workspace show`, which needs no coordinator.
pub fn show(ws: &str) -> u8 {
    println!("{ws}");
    0
}

/// `ws` is the state key: the workspace within the directory's project,
/// whose other workspaces these commands list, create and select.
pub async fn run(client: &mut Client, ws: &str, command: &WorkspaceCommand) -> anyhow::Result<u8> {
    let project = fleetform_coordinator::store::project_of(ws);
    match command {
        WorkspaceCommand::Show => Ok(show(workspace_of(ws))),
        WorkspaceCommand::List => list(client, project, workspace_of(ws)).await,
        WorkspaceCommand::New(a) => new(client, project, &a.name).await,
        WorkspaceCommand::Select(a) => select(client, project, &a.name, a.or_create).await,
        WorkspaceCommand::Delete(a) => delete(client, project, workspace_of(ws), a).await,
    }
}

fn fail(d: Diagnostic) -> u8 {
    crate::commands::report(false, &d)
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

async fn list(client: &mut Client, project: Option<&str>, ws: &str) -> anyhow::Result<u8> {
    let mut all = names(client, project).await?;
    if !all.iter().any(|w| w.name == ws) {
        // Selected but without a state yet: it exists once a run writes one.
        all.push(pb::WorkspaceInfo {
            name: ws.to_string(),
            ..Default::default()
        });
        all[1..].sort_by(|a, b| a.name.cmp(&b.name));
    }
    for w in all {
        let mark = if w.name == ws { '*' } else { ' ' };
        println!("{mark} {}", w.name);
    }
    println!();
    Ok(0)
}

async fn new(client: &mut Client, project: Option<&str>, name: &str) -> anyhow::Result<u8> {
    if let Err(d) = check_name(name) {
        return Ok(fail(d));
    }
    match client
        .create_workspace(pb::CreateWorkspaceRequest {
            workspace: state_key(project, name),
        })
        .await
    {
        Ok(_) => {}
        Err(s) if s.code() == tonic::Code::AlreadyExists => {
            return Ok(fail(Diagnostic::error(
                format!("Workspace {name:?} already exists"),
                format!("Select it with: fleetform workspace select {name}"),
            )));
        }
        Err(s) => {
            let s = crate::client::access(s)?;
            anyhow::bail!("creating workspace {name}: {}", s.message())
        }
    }
    select_here(name)?;
    println!("Created and switched to workspace {name:?}!\n");
    println!(
        "It has an empty state of its own: plans here will not see the objects of any other workspace."
    );
    Ok(0)
}

async fn select(
    client: &mut Client,
    project: Option<&str>,
    name: &str,
    or_create: bool,
) -> anyhow::Result<u8> {
    if let Err(d) = check_name(name) {
        return Ok(fail(d));
    }
    let exists = name == "default" || names(client, project).await?.iter().any(|w| w.name == name);
    if !exists {
        if or_create {
            return new(client, project, name).await;
        }
        return Ok(fail(Diagnostic::error(
            format!("Workspace {name:?} doesn't exist"),
            format!(
                "Create it with: fleetform workspace new {name}\n(or select it with -or-create)"
            ),
        )));
    }
    select_here(name)?;
    println!("Switched to workspace {name:?}.");
    Ok(0)
}

async fn delete(
    client: &mut Client,
    project: Option<&str>,
    ws: &str,
    a: &WorkspaceDeleteArgs,
) -> anyhow::Result<u8> {
    if let Err(d) = check_name(&a.name) {
        return Ok(fail(d));
    }
    if a.name == ws {
        return Ok(fail(Diagnostic::error(
            format!("Workspace {:?} is your active workspace", a.name),
            "You cannot delete the workspace you are using. Select another one first (fleetform workspace select default).",
        )));
    }
    match client
        .delete_workspace(pb::DeleteWorkspaceRequest {
            workspace: state_key(project, &a.name),
            force: a.force,
            lock_timeout_ms: client::lock_timeout_ms(),
        })
        .await
    {
        Ok(r) => {
            let forgotten = r.into_inner().forgotten;
            if forgotten > 0 {
                println!(
                    "Warning: workspace {:?} tracked {forgotten} resource instance(s); fleetform no longer manages their objects.\n",
                    a.name
                );
            }
            println!("Deleted workspace {:?}!", a.name);
            Ok(0)
        }
        Err(s) => {
            let s = crate::client::access(s)?;
            let summary = match s.code() {
                tonic::Code::NotFound => format!("Workspace {:?} doesn't exist", a.name),
                tonic::Code::FailedPrecondition if s.message().contains("state lock") => {
                    "Error acquiring the state lock".to_string()
                }
                tonic::Code::FailedPrecondition => {
                    format!("Workspace {:?} is not empty", a.name)
                }
                _ => format!("Cannot delete workspace {:?}", a.name),
            };
            Ok(fail(Diagnostic::error(summary, s.message())))
        }
    }
}

/// `state history`.
pub async fn history(client: &mut Client, ws: &str) -> anyhow::Result<u8> {
    let snapshots = client
        .state_history(pb::StateHistoryRequest {
            workspace: ws.to_string(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("reading the state history: {}", s.message()))?
        .into_inner()
        .snapshots;
    if snapshots.is_empty() {
        println!("Workspace {ws:?} has no state yet.");
        return Ok(0);
    }
    println!(
        "{:>7}  {:<20}  {:<32}  {:<9}  {:>9}  LINEAGE",
        "SERIAL", "WRITTEN", "RUN", "BY", "BYTES"
    );
    let dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    for s in snapshots {
        println!(
            "{:>7}  {:<20}  {:<32}  {:<9}  {:>9}  {}",
            s.serial,
            s.written_at,
            dash(&s.run_id),
            dash(&s.operation),
            s.bytes,
            dash(&s.lineage)
        );
    }
    Ok(0)
}

/// `state pull [-serial N]`: Terraform's state file format on stdout.
pub async fn pull(client: &mut Client, ws: &str, serial: Option<u64>) -> anyhow::Result<u8> {
    // 0 means "the latest" on the wire; as a flag it would be a typo.
    if serial == Some(0) {
        return Ok(fail(Diagnostic::error(
            "Invalid value for -serial",
            "Serials start at 1 (fleetform state history lists them); leave -serial out for the latest.",
        )));
    }
    let resp = match client
        .get_state(pb::GetStateRequest {
            workspace: ws.to_string(),
            serial: serial.unwrap_or(0),
            state_file: true,
            shapes: false,
        })
        .await
    {
        Ok(r) => r.into_inner(),
        Err(s) if s.code() == tonic::Code::NotFound => {
            return Ok(fail(Diagnostic::error(
                "No such state snapshot",
                s.message(),
            )));
        }
        Err(s) if s.code() == tonic::Code::FailedPrecondition => {
            return Ok(fail(Diagnostic::error(
                "Cannot write the state file",
                s.message(),
            )));
        }
        Err(s) => {
            let s = crate::client::access(s)?;
            anyhow::bail!("reading the state: {}", s.message())
        }
    };
    if resp.state.is_empty() {
        // As Terraform: an empty workspace pulls as nothing.
        return Ok(0);
    }
    println!("{}", String::from_utf8_lossy(&resp.state_file));
    Ok(0)
}

/// `state push [-force] FILE`.
pub async fn push(
    client: &mut Client,
    ws: &str,
    a: &crate::args::StatePushArgs,
) -> anyhow::Result<u8> {
    let shown = a.file.display().to_string();
    let text = if shown == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)?;
        buf
    } else {
        match std::fs::read(&a.file) {
            Ok(t) => t,
            Err(e) => {
                return Ok(fail(Diagnostic::error(
                    "Cannot read the state file",
                    format!("{shown}: {e}"),
                )));
            }
        }
    };
    push_text(client, ws, text, &shown, a.force).await
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
            return Ok(fail(Diagnostic::error(
                "Invalid state file",
                format!("{shown}: {e}. Nothing was changed."),
            )));
        }
    };
    match client
        .push_state(pb::PushStateRequest {
            workspace: ws.to_string(),
            state: state.encode(),
            force,
            lock_timeout_ms: client::lock_timeout_ms(),
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
            Ok(fail(Diagnostic::error(
                "Failed to push the state",
                s.message(),
            )))
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

/// `state mv`, `state rm`: one edit, said line by line as Terraform says
/// it ("Would ..." for a dry run).
pub async fn edit(
    client: &mut Client,
    ws: &str,
    edit: fleetform_shared::state_edit::StateEdit,
    dry_run: bool,
) -> anyhow::Result<u8> {
    let request = pb::EditStateRequest {
        workspace: ws.to_string(),
        edit: rmp_serde::to_vec(&edit)?,
        dry_run,
        lock_timeout_ms: client::lock_timeout_ms(),
    };
    match client.edit_state(request).await {
        Ok(r) => {
            for line in r.into_inner().lines {
                if dry_run {
                    // "Move ..." / "Removed ..." become what would happen.
                    let line = line
                        .strip_prefix("Removed ")
                        .map(|rest| format!("Would remove {rest}"))
                        .or_else(|| {
                            line.strip_prefix("Move ")
                                .map(|rest| format!("Would move {rest}"))
                        })
                        .unwrap_or(line);
                    if !line.starts_with("Successfully") {
                        println!("{line}");
                    }
                } else {
                    println!("{line}");
                }
            }
            Ok(0)
        }
        Err(s) => {
            let s = crate::client::access(s)?;
            Ok(fail(Diagnostic::error(
                "Invalid state change",
                format!("{} Nothing was changed.", s.message()),
            )))
        }
    }
}

/// `state replace-provider FROM TO`: shows what changes, asks (unless
/// -auto-approve), then makes the change.
pub async fn replace_provider(
    client: &mut Client,
    ws: &str,
    a: &crate::args::StateReplaceProviderArgs,
    input: bool,
) -> anyhow::Result<u8> {
    let change = fleetform_shared::state_edit::StateEdit::ReplaceProvider {
        from: a.from.clone(),
        to: a.to.clone(),
    };
    if !a.auto_approve {
        let request = pb::EditStateRequest {
            workspace: ws.to_string(),
            edit: rmp_serde::to_vec(&change)?,
            dry_run: true,
            lock_timeout_ms: client::lock_timeout_ms(),
        };
        let lines = match client.edit_state(request).await {
            Ok(r) => r.into_inner().lines,
            Err(s) => {
                let s = crate::client::access(s)?;
                return Ok(fail(Diagnostic::error(
                    "Invalid provider replacement",
                    format!("{} Nothing was changed.", s.message()),
                )));
            }
        };
        for line in lines.iter().filter(|l| !l.starts_with("Successfully")) {
            println!("{line}");
        }
        if !input {
            return Ok(fail(Diagnostic::error(
                "Approval required",
                "-input=false means fleetform cannot ask for approval: add -auto-approve.",
            )));
        }
        print!(
            "\nDo you want to make these changes?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: "
        );
        std::io::Write::flush(&mut std::io::stdout())?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if answer.trim() != "yes" {
            println!("\nCancelled replacing providers.");
            return Ok(1);
        }
    }
    edit(client, ws, change, false).await
}
