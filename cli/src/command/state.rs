//! `state list|show|pull|push|mv|rm|history|replace-provider`: reading the
//! workspace's state, its history of snapshots, and the edits made to it
//! without a run.

use crate::args::StateCommand;
use crate::client::{self, Client};
use crate::present::object_text::instance_text;
use fleetform_proto::fleetform as pb;
use fleetform_shared::AbsResourceInstance;
use fleetform_shared::addr::ResourceMode;
use fleetform_shared::diag::Diagnostic;

/// The `state` subcommands, on the state of workspace `ws`.
pub async fn run(
    client: &mut Client,
    ws: &str,
    command: &StateCommand,
    input: bool,
) -> anyhow::Result<u8> {
    match command {
        StateCommand::List => {
            let mut addrs = client::state(client, ws)
                .await?
                .map(|s| s.resources.into_keys().collect::<Vec<_>>())
                .unwrap_or_default();
            addrs.sort_by(|a, b| list_order(a).cmp(&list_order(b)));
            for addr in addrs {
                println!("{addr}");
            }
            Ok(0)
        }
        StateCommand::Show(a) => show(client, ws, &a.address).await,
        StateCommand::Pull(a) => pull(client, ws, a.serial).await,
        StateCommand::History => history(client, ws).await,
        StateCommand::Push(a) => push(client, ws, a).await,
        StateCommand::Mv(a) => {
            let change = fleetform_shared::state_edit::StateEdit::Move {
                from: a.source.clone(),
                to: a.destination.clone(),
            };
            edit(client, ws, change, a.dry_run).await
        }
        StateCommand::Rm(a) => {
            let change = fleetform_shared::state_edit::StateEdit::Remove {
                addrs: a.addresses.clone(),
            };
            edit(client, ws, change, a.dry_run).await
        }
        StateCommand::ReplaceProvider(a) => replace_provider(client, ws, a, input).await,
    }
}

/// `state list`'s order, Terraform 1.11's: shallower modules first, then
/// by module address; within a module its data sources before its managed
/// resources, then by type, name and instance key (`x[2]` before `x[10]`).
fn list_order(a: &AbsResourceInstance) -> impl Ord + '_ {
    let r = &a.resource.resource;
    (
        a.module.0.len(),
        &a.module,
        r.mode != ResourceMode::Data,
        r,
        &a.resource.key,
    )
}

fn fail(d: Diagnostic) -> u8 {
    crate::present::report::report(false, &d)
}

/// `state show ADDRESS`.
async fn show(client: &mut Client, ws: &str, address: &str) -> anyhow::Result<u8> {
    let addr: AbsResourceInstance = address.parse()?;
    let (state, shapes) = client::state_and_shapes(client, ws).await?;
    let Some(obj) = state.as_ref().and_then(|s| s.current(&addr)) else {
        eprintln!(
            "Error: No instance found for the given address!\n\nThis command requires that the address references one specific instance."
        );
        return Ok(1);
    };
    let provider = &state.as_ref().expect("found in it").resources[&addr].provider;
    let r = &addr.resource.resource;
    let shape = shapes.get(provider, r.mode, &r.type_name);
    print!("{}", instance_text(&addr, obj, None, shape));
    Ok(0)
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
    crate::migrate::push_text(client, ws, text, &shown, a.force).await
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

#[cfg(test)]
mod tests {
    use super::list_order;
    use fleetform_shared::AbsResourceInstance;

    /// The order `terraform state list` (1.11) printed for these addresses.
    #[test]
    fn state_list_is_in_terraforms_order() {
        let terraform = [
            "data.sim_object.z",
            "sim_object.b[\"B\"]",
            "sim_object.b[\"a\"]",
            "sim_object.x[2]",
            "sim_object.x[10]",
            "module.m.data.sim_object.d",
            "module.m.sim_object.q",
            "module.z.sim_object.q",
            "module.a.module.b.sim_object.y",
        ];
        let mut addrs: Vec<AbsResourceInstance> =
            terraform.iter().rev().map(|a| a.parse().unwrap()).collect();
        addrs.sort_by(|a, b| list_order(a).cmp(&list_order(b)));
        let listed: Vec<String> = addrs.iter().map(ToString::to_string).collect();
        assert_eq!(listed, terraform);
    }
}
