//! What each command does; returns the process exit code.

use crate::args::{ApplyArgs, Cli, Command, RunArgs, StateCommand};
use crate::bundle;
use crate::client::{self, Client};
use crate::embedded::Embedded;
use crate::render::{Renderer, hcl_value, json_value};
use anyhow::Context;
use fleetform_shared::config::load_module;
use fleetform_shared::diag::{Diagnostics, render};
use fleetform_shared::state::{ObjectStatus, State};
use fleetform_shared::wire::{Operation, RunRequest, RunStatus};
use std::path::{Path, PathBuf};

pub async fn run(cli: Cli) -> anyhow::Result<u8> {
    if let Some(dir) = &cli.chdir {
        std::env::set_current_dir(dir)
            .with_context(|| format!("changing to directory {}", dir.display()))?;
    }
    if let Command::Validate(d) = &cli.command {
        return validate(&config_dir(&d.dir));
    }
    let (mut client, embedded) = match &cli.coordinator {
        Some(url) => (client::connect(url).await?, None),
        None => {
            let e = Embedded::start(&std::env::current_dir()?).await?;
            (client::connect(&e.url).await?, Some(e))
        }
    };
    let result = dispatch(&cli, &mut client).await;
    if let Some(e) = embedded {
        e.stop().await;
    }
    result
}

fn config_dir(dir: &Option<PathBuf>) -> PathBuf {
    dir.clone().unwrap_or_else(|| PathBuf::from("."))
}

async fn dispatch(cli: &Cli, client: &mut Client) -> anyhow::Result<u8> {
    let ws = &cli.workspace;
    match &cli.command {
        Command::Plan(p) => {
            let op = if p.destroy {
                Operation::Destroy
            } else {
                Operation::Plan
            };
            // `plan -destroy` only plans: keep the operation a plan but in destroy mode.
            let (status, has_changes) = plan_or_apply(client, ws, &p.run, op, false, true).await?;
            Ok(match status {
                RunStatus::Failed => 1,
                _ if p.detailed_exitcode && has_changes => 2,
                _ => 0,
            })
        }
        Command::Apply(a) => apply(client, ws, a, Operation::Apply).await,
        Command::Destroy(a) => apply(client, ws, a, Operation::Destroy).await,
        Command::Validate(_) => unreachable!("handled before connecting"),
        Command::Output(o) => output(client, ws, o.name.as_deref(), o.json, o.raw).await,
        Command::State(StateCommand::List) => {
            for addr in load_state(client, ws)
                .await?
                .map(|s| s.resources.into_keys().collect::<Vec<_>>())
                .unwrap_or_default()
            {
                println!("{addr}");
            }
            Ok(0)
        }
        Command::State(StateCommand::Show(a)) => state_show(client, ws, &a.address).await,
        Command::Taint(a) => {
            client::set_tainted(client, ws, &a.address, true).await?;
            println!(
                "Resource instance {} has been marked as tainted.",
                a.address
            );
            Ok(0)
        }
        Command::Untaint(a) => {
            client::set_tainted(client, ws, &a.address, false).await?;
            println!(
                "Resource instance {} has been successfully untainted.",
                a.address
            );
            Ok(0)
        }
    }
}

async fn apply(client: &mut Client, ws: &str, a: &ApplyArgs, op: Operation) -> anyhow::Result<u8> {
    let (status, _) = plan_or_apply(client, ws, &a.run, op, a.auto_approve, false).await?;
    Ok(if status == RunStatus::Succeeded { 0 } else { 1 })
}

fn parse_vars(vars: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    vars.iter()
        .map(|v| {
            v.split_once('=')
                .map(|(k, val)| (k.trim().to_string(), val.to_string()))
                .with_context(|| format!("invalid -var option {v:?}: the given -var option must be in the form name=value"))
        })
        .collect()
}

/// Runs a plan, apply or destroy; returns the final status and whether the
/// plan had changes.
async fn plan_or_apply(
    client: &mut Client,
    ws: &str,
    args: &RunArgs,
    op: Operation,
    auto_approve: bool,
    plan_only: bool,
) -> anyhow::Result<(RunStatus, bool)> {
    let files = bundle::pack(&config_dir(&args.dir))?;
    if files.is_empty() {
        anyhow::bail!(
            "no configuration files in {}: fleetform needs at least one .tf file",
            config_dir(&args.dir).display()
        );
    }
    let request = RunRequest {
        operation: op,
        files: files.clone(),
        variables: parse_vars(&args.vars)?,
        auto_approve,
        saved_plan: None,
        plan_only,
        options: fleetform_shared::wire::PlanOptions {
            refresh: args.refresh,
            ..Default::default()
        },
    };
    let mut renderer = Renderer::new(files, op);
    let end = client::run(client, ws, request, &mut renderer).await?;
    let has_changes = end.plan.as_ref().is_some_and(|p| p.has_changes());
    if end.status == RunStatus::Succeeded && op != Operation::Plan && !plan_only && has_changes {
        renderer.apply_complete(&end.summary);
    }
    if end.status == RunStatus::Failed && op != Operation::Plan && has_changes {
        eprintln!(
            "\nApply failed; the state records everything that was created before the failure."
        );
    }
    Ok((end.status, has_changes))
}

fn validate(dir: &Path) -> anyhow::Result<u8> {
    let files = bundle::pack(dir)?;
    let (module, mut diags) = load_module(&files);
    if let Some(m) = &module
        && !diags.has_errors()
        && let Err(d) = fleetform_shared::graph::config::build(m, &[])
    {
        diags.extend(d);
    }
    print_diags(&diags, &files);
    if diags.has_errors() {
        return Ok(1);
    }
    println!("Success! The configuration is valid.");
    Ok(0)
}

fn print_diags(diags: &Diagnostics, files: &std::collections::BTreeMap<String, String>) {
    for d in diags.iter() {
        eprint!("{}", render(d, files));
    }
}

async fn load_state(client: &mut Client, ws: &str) -> anyhow::Result<Option<State>> {
    client::state(client, ws).await
}

async fn state_show(client: &mut Client, ws: &str, address: &str) -> anyhow::Result<u8> {
    let addr: fleetform_shared::AbsResourceInstance = address.parse()?;
    let state = load_state(client, ws).await?;
    let Some(obj) = state.as_ref().and_then(|s| s.current(&addr)) else {
        eprintln!(
            "Error: No instance found for the given address!\n\nThis command requires that the address references one specific instance."
        );
        return Ok(1);
    };
    let r = &addr.resource.resource;
    let tainted = if obj.status == ObjectStatus::Tainted {
        " (tainted)"
    } else {
        ""
    };
    println!("# {addr}:{tainted}");
    println!(
        "resource \"{}\" \"{}\" {}",
        r.type_name,
        r.name,
        hcl_value(&obj.value, 0)
    );
    Ok(0)
}

async fn output(
    client: &mut Client,
    ws: &str,
    name: Option<&str>,
    json: bool,
    raw: bool,
) -> anyhow::Result<u8> {
    let outputs = load_state(client, ws)
        .await?
        .map(|s| s.outputs)
        .unwrap_or_default();
    match name {
        Some(n) => {
            let Some(o) = outputs.get(n) else {
                eprintln!(
                    "Error: Output \"{n}\" not found\n\nThe output variable requested could not be found in the state file."
                );
                return Ok(1);
            };
            if json {
                println!("{}", json_value(&o.value));
            } else if raw {
                match &o.value {
                    fleetform_shared::Value::String(s) => println!("{s}"),
                    fleetform_shared::Value::Number(n) => println!("{n}"),
                    fleetform_shared::Value::Bool(b) => println!("{b}"),
                    _ => {
                        eprintln!(
                            "Error: Unsupported value for raw output\n\nThe -raw option only supports strings, numbers, and boolean values."
                        );
                        return Ok(1);
                    }
                }
            } else {
                println!("{}", hcl_value(&o.value, 0));
            }
        }
        None if json => {
            let obj: serde_json::Map<String, serde_json::Value> = outputs
                .iter()
                .map(|(k, o)| (k.clone(), serde_json::json!({"sensitive": o.sensitive, "value": json_value(&o.value)})))
                .collect();
            println!("{}", serde_json::to_string_pretty(&obj)?);
        }
        None => {
            for (k, o) in &outputs {
                let v = if o.sensitive {
                    "<sensitive>".to_string()
                } else {
                    hcl_value(&o.value, 0)
                };
                println!("{k} = {v}");
            }
        }
    }
    Ok(0)
}
