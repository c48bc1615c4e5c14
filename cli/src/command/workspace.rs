//! `workspace show|list|new|select|delete`: the workspaces of the
//! directory's project, and which one this directory selects (which
//! workspace a command uses is [`crate::workspace`]).

use crate::args::{WorkspaceCommand, WorkspaceDeleteArgs};
use crate::client::{self, Client};
use crate::workspace::{check_name, names, select_here};
use fleetform_coordinator::store::{state_key, workspace_of};
use fleetform_proto::fleetform as pb;
use fleetform_shared::diag::Diagnostic;

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
    crate::present::report::report(false, &d)
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
