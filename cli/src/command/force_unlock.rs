//! `force-unlock`: releases the lock a vanished run left on the workspace,
//! after asking (or with `-force`).

use crate::args::ForceUnlockArgs;
use crate::client::Client;
use fleetform_proto::fleetform as pb;

/// `fleetform force-unlock`.
pub async fn run(
    client: &mut Client,
    workspace: &str,
    a: &ForceUnlockArgs,
    input: bool,
) -> anyhow::Result<u8> {
    if !a.force {
        if !input {
            eprintln!("Error: force-unlock asks for confirmation; with -input=false, add -force.");
            return Ok(1);
        }
        println!("Do you really want to force-unlock?");
        println!(
            "  fleetform will remove the lock on workspace {workspace}. If its run is still going, two runs may then write one state."
        );
        println!("  Only 'yes' will be accepted to confirm.\n");
        print!("  Enter a value: ");
        use std::io::{BufRead, Write};
        std::io::stdout().flush()?;
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        if line.trim() != "yes" {
            println!("\nforce-unlock cancelled.");
            return Ok(1);
        }
    }
    match client
        .force_unlock(pb::ForceUnlockRequest {
            workspace: workspace.to_string(),
            lock_id: a.lock_id.clone(),
        })
        .await
    {
        Ok(r) => {
            let r = r.into_inner();
            println!(
                "fleetform state has been successfully unlocked! (the lock of run {} held by {})",
                r.run_id, r.owner
            );
            Ok(0)
        }
        Err(s) => {
            let s = crate::client::access(s)?;
            eprintln!("Error: Failed to unlock state: {}", s.message());
            Ok(1)
        }
    }
}
