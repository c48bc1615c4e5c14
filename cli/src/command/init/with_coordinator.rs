//! The steps of `init` that need a coordinator, after the local ones:
//! `-project=NAME` binds the directory to a project ([`bind`]), and
//! `-migrate-state` takes over a Terraform state found beside the
//! configuration ([`migrate_state`]: a `state push` of it, lineage, serial
//! and every object kept).

use crate::args::InitArgs;
use crate::client::Client;
use crate::migrate::{find_any, place_of};
use crate::project::{
    BINDING_FILE, bind_here, bound, check_name, describe, listing, source, states_of,
};
use fleetform_coordinator::store::state_key;
use fleetform_proto::fleetform as pb;
use fleetform_shared::diag::Diagnostic;
use std::path::Path;

/// `init -project=NAME` and `init -migrate-state`, on the state key `ws`.
pub async fn run(client: &mut Client, ws: &str, a: &InitArgs) -> anyhow::Result<u8> {
    let mut key = ws.to_string();
    if let Some(name) = &a.project {
        let code = bind(client, name, a.reconfigure, a.migrate_state).await?;
        if code != 0 {
            return Ok(code);
        }
        // A Terraform state here goes into the new binding.
        let ws = fleetform_coordinator::store::workspace_of(ws);
        key = fleetform_coordinator::store::state_key(Some(name), ws);
    }
    let code = if a.migrate_state {
        migrate_state(client, &key).await?
    } else {
        0
    };
    if code == 0 {
        super::say_initialized();
    }
    Ok(code)
}

/// `init -project=NAME`: binds the directory, refusing to leave the states
/// of the current binding behind unless told how (`-reconfigure`,
/// `-migrate-state`). Returns the exit code.
async fn bind(
    client: &mut Client,
    name: &str,
    reconfigure: bool,
    migrate: bool,
) -> anyhow::Result<u8> {
    if let Err(d) = check_name(name, "-project") {
        return Ok(crate::present::report::report(false, &d));
    }
    let old = match bound(Path::new(".")) {
        Ok(b) => b,
        Err(d) => return Ok(crate::present::report::report(false, &d)),
    };
    // Bound already: -migrate-state copies the directory's unbound states
    // (a binding made before they were looked at, e.g. through a
    // coordinator while they are embedded).
    let old = match old {
        Some(b) if b == name && !migrate => {
            println!("\nThis directory is bound to project {name:?} already.");
            return Ok(0);
        }
        Some(b) if b == name => None,
        other => other,
    };
    let left = states_of(client, old.as_deref()).await?;
    let left_objects: u64 = left.iter().map(|w| w.resources).sum();
    if left_objects > 0 && !reconfigure && !migrate {
        let d = Diagnostic::error(
            "Project change",
            format!(
                "This directory's states are in {} and hold objects:\n{}\nBinding it to project {name:?} would plan against that project's states instead, and create those objects again there.\n\nCopy the states into {name:?} (refused where {name:?} has states of its own):\n  fleetform init -project={name} -migrate-state\nor use {name:?}'s states and leave these as they are:\n  fleetform init -project={name} -reconfigure",
                describe(old.as_deref()),
                listing(&left),
            ),
        );
        return Ok(crate::present::report::report(false, &d));
    }
    if migrate && !left.is_empty() {
        for w in &left {
            let ws = &w.name;
            let from = state_key(old.as_deref(), ws);
            let to = state_key(Some(name), ws);
            let got = client
                .get_state(pb::GetStateRequest {
                    workspace: from.clone(),
                    serial: 0,
                    state_file: false,
                    shapes: false,
                })
                .await
                .map_err(|s| anyhow::anyhow!("reading the state of {from}: {}", s.message()))?
                .into_inner();
            match client
                .push_state(pb::PushStateRequest {
                    workspace: to.clone(),
                    state: got.state,
                    force: false,
                    lock_timeout_ms: crate::client::lock_timeout_ms(),
                    source: source(Path::new(".")),
                })
                .await
            {
                Ok(r) => println!(
                    "Copied workspace {ws:?} ({} resource instance(s)) into project {name:?} (serial {}).",
                    w.resources,
                    r.into_inner().serial
                ),
                Err(s) => {
                    let s = crate::client::access(s)?;
                    let d = Diagnostic::error(
                        format!("Cannot copy workspace {ws:?} into project {name:?}"),
                        format!(
                            "{}\n\nNothing was bound: this directory still uses {}.",
                            s.message(),
                            describe(old.as_deref())
                        ),
                    );
                    return Ok(crate::present::report::report(false, &d));
                }
            }
        }
    }
    bind_here(name)?;
    let theirs = states_of(client, Some(name)).await?;
    println!(
        "\nThis directory is now bound to project {name:?} ({BINDING_FILE}); every command here uses its states."
    );
    if theirs.is_empty() {
        println!("Project {name:?} has no state yet: the first apply creates it.");
    } else {
        println!("Its workspaces with a state:\n{}", listing(&theirs));
    }
    if !left.is_empty() && !migrate {
        println!(
            "The states of {} are left as they are.",
            describe(old.as_deref())
        );
    }
    Ok(0)
}

/// `init -migrate-state`: pushes the Terraform state of `ws` into
/// fleetform's state. Refused (by `state push`'s rules) when fleetform's
/// state is of another lineage or newer.
async fn migrate_state(client: &mut Client, ws: &str) -> anyhow::Result<u8> {
    let tf_ws = fleetform_coordinator::store::workspace_of(ws);
    let found = match find_any(tf_ws).await {
        Ok(found) => found,
        Err(d) => return Ok(crate::present::report::report(false, &d)),
    };
    let Some(found) = found else {
        let place = place_of(tf_ws);
        println!("\nNo Terraform state to migrate: {place} does not exist (or is empty).");
        return Ok(0);
    };
    println!(
        "\nMigrating the Terraform state {} ({} resource instance(s), serial {}) into fleetform's state for workspace {ws:?}...",
        found.path.display(),
        found.instances,
        found.serial
    );
    let code = crate::migrate::push_text(
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
