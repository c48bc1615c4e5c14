//! `drift`: the workspace's objects that changed outside fleetform, as the
//! coordinator's record of the latest reads has them, without planning.

use crate::client::Client;
use anyhow::Context;
use fleetform_proto::fleetform as pb;

/// `fleetform drift`: one line per drifted object with how long ago the
/// read that found it was made; exit code 2 when there is any (as
/// `plan -detailed-exitcode` says "changes"), so scripts can test it.
pub async fn run(client: &mut Client, workspace: &str) -> anyhow::Result<u8> {
    let resp = client
        .list_drift(pb::ListDriftRequest {
            workspace: workspace.to_string(),
        })
        .await
        .context("listing the drift")?
        .into_inner();
    if resp.objects.is_empty() {
        println!(
            "No drift recorded: the latest reads of the objects in state match it (a plan that refreshes records what it reads)."
        );
        return Ok(0);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    println!("Objects changed outside fleetform, as last read:");
    for o in &resp.objects {
        println!(
            "  {}  (read {} ago)",
            o.address,
            age(now.saturating_sub(o.read_at_ms))
        );
    }
    println!("\nRun a plan to see what changed and what applying the configuration would do.");
    Ok(2)
}

/// `2m10s`: whole seconds, Go's way of writing a duration.
fn age(ms: u64) -> String {
    let s = ms / 1000;
    match (s / 3600, (s / 60) % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, m, s) => format!("{h}h{m}m{s}s"),
    }
}
