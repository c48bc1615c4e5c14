//! `fleetform runs list|watch|cancel`: runs found again by their id.

use crate::args::RunsCommand;
use crate::client::Client;
use crate::follow::Follow;
use crate::present::run_text::Renderer;
use anyhow::Context;
use fleetform_proto::fleetform as pb;
use fleetform_shared::wire::{Operation, RunStatus};
use std::collections::BTreeMap;

pub async fn run(
    client: &mut Client,
    workspace: &str,
    command: &RunsCommand,
) -> anyhow::Result<u8> {
    match command {
        RunsCommand::List => list(client).await,
        RunsCommand::Watch(a) => watch(client, &a.run_id).await,
        RunsCommand::Cancel(a) => cancel(client, &a.run_id).await,
        RunsCommand::Show(a) => show(client, workspace, &a.run_id).await,
    }
}

async fn show(client: &mut Client, workspace: &str, run_id: &str) -> anyhow::Result<u8> {
    let info = runs(client).await?.into_iter().find(|r| r.run_id == run_id);
    let workspace = match &info {
        Some(r) => {
            println!("Run:        {}", r.run_id);
            println!("Workspace:  {}", r.workspace);
            println!("Command:    {}", r.operation);
            let resumed = if r.resumed { " (resumed)" } else { "" };
            println!("Status:     {}{resumed}", r.status);
            println!("Started:    {}", r.started_at);
            r.workspace.clone()
        }
        None => {
            println!(
                "Run:        {run_id} (not known to this coordinator; looked up in workspace {workspace})"
            );
            workspace.to_string()
        }
    };
    let state = crate::client::state(client, &workspace).await?;
    let interrupted: Vec<_> = state
        .iter()
        .flat_map(|s| s.interrupted.iter())
        .filter(|(_, op)| op.run_id == run_id)
        .collect();
    if interrupted.is_empty() {
        println!("\nNo interrupted operations.");
        return Ok(if info.is_some() { 0 } else { 1 });
    }
    println!(
        "\nInterrupted operations (the provider may have acted; fleetform did not repeat them):"
    );
    for (addr, op) in interrupted {
        println!("  {addr}: {} at {}", op.operation, op.at);
        let choices = match op.operation.as_str() {
            "create" => format!(
                "the object may exist outside the state: if it does, import it (fleetform import {addr} ID) so that no second one is created; if it does not, the next apply creates it"
            ),
            "update" => format!(
                "the next plan refreshes the object and shows what differs; -replace={addr} replaces it if it is broken"
            ),
            _ => "the next apply deletes the object if it is still there".to_string(),
        };
        println!("    {choices}");
    }
    Ok(0)
}

async fn runs(client: &mut Client) -> anyhow::Result<Vec<pb::RunInfo>> {
    Ok(client
        .list_runs(pb::ListRunsRequest::default())
        .await
        .context("listing runs")?
        .into_inner()
        .runs)
}

async fn list(client: &mut Client) -> anyhow::Result<u8> {
    let runs = runs(client).await?;
    if runs.is_empty() {
        println!("No runs.");
        return Ok(0);
    }
    println!(
        "{:<32}  {:<12}  {:<8}  {:<10}  {:<20}",
        "RUN", "WORKSPACE", "COMMAND", "STATUS", "STARTED"
    );
    for r in runs {
        let status = if r.resumed {
            format!("{} (resumed)", r.status)
        } else {
            r.status
        };
        println!(
            "{:<32}  {:<12}  {:<8}  {:<10}  {:<20}",
            r.run_id, r.workspace, r.operation, status, r.started_at
        );
    }
    Ok(0)
}

async fn watch(client: &mut Client, run_id: &str) -> anyhow::Result<u8> {
    let info = runs(client)
        .await?
        .into_iter()
        .find(|r| r.run_id == run_id)
        .with_context(|| {
            format!("the coordinator knows no run {run_id} (see fleetform runs list)")
        })?;
    let operation = match info.operation.as_str() {
        "apply" => Operation::Apply,
        "destroy" => Operation::Destroy,
        _ => Operation::Plan,
    };
    let mut renderer = Renderer::new(BTreeMap::new(), operation);
    let end = Follow {
        client,
        run_id: run_id.to_string(),
        operation,
        keep_plan: false,
        embedded: crate::embedded::is_running(),
        interrupts: crate::follow::Interrupts::new()?,
    }
    .run(&mut renderer)
    .await?;
    let changed = end.has_changes;
    if end.status == RunStatus::Succeeded && operation != Operation::Plan && changed {
        renderer.apply_complete(&end.summary);
    }
    Ok(match end.status {
        RunStatus::Succeeded | RunStatus::Planned => 0,
        _ => 1,
    })
}

async fn cancel(client: &mut Client, run_id: &str) -> anyhow::Result<u8> {
    let cancelling = client
        .cancel_run(pb::CancelRunRequest {
            run_id: run_id.to_string(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("{}", s.message()))?
        .into_inner()
        .cancelling;
    if cancelling {
        println!(
            "Cancelling run {run_id}: nothing new starts, operations in progress are asked to stop."
        );
        println!("Follow it with: fleetform runs watch {run_id}");
        Ok(0)
    } else {
        println!("Run {run_id} had already finished.");
        Ok(0)
    }
}
