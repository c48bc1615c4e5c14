//! `workers`: the fleet's live workers, their pools, load and versions.

use crate::client::Client;
use anyhow::Context;
use fleetform_proto::fleetform as pb;

/// `fleetform workers`.
pub async fn run(client: &mut Client) -> anyhow::Result<u8> {
    let resp = client
        .list_workers(pb::ListWorkersRequest {})
        .await
        .context("listing the workers")?
        .into_inner();
    if !resp.known {
        println!(
            "This coordinator runs its workers in process (embedded mode): there is no fleet to list."
        );
        return Ok(0);
    }
    let workers: Vec<fleetform_shared::wire::WorkerInfo> = rmp_serde::from_slice(&resp.workers)?;
    if workers.is_empty() {
        println!("No live workers.");
        return Ok(0);
    }
    println!(
        "{:<24}  {:<10}  {:<16}  {:<8}  {:>11}  {:>9}  {:>9}  {:<10}  {:<20}",
        "WORKER",
        "POOL",
        "HOST",
        "VERSION",
        "CONCURRENCY",
        "IN FLIGHT",
        "DONE",
        "LOCAL-EXEC",
        "LAST SEEN"
    );
    for w in workers {
        println!(
            "{:<24}  {:<10}  {:<16}  {:<8}  {:>11}  {:>9}  {:>9}  {:<10}  {:<20}",
            w.id,
            w.pool,
            w.host,
            w.version,
            w.concurrency,
            w.in_flight,
            w.completed,
            if w.allow_local_exec {
                "allowed"
            } else {
                "refused"
            },
            w.seen_at
        );
    }
    Ok(0)
}
