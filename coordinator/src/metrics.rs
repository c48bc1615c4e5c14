//! The coordinator's Prometheus metrics (served by `fleetform-coordinator
//! --metrics-listen ADDR` at `/metrics`). Labels name kinds, never values:
//! operation, status, pool, kind.

use std::time::Duration;

/// A run started: `fleetform_runs_active` goes up.
pub fn run_started(operation: &str) {
    metrics::gauge!("fleetform_runs_active", "operation" => operation.to_string()).increment(1.0);
}

/// A run ended: `fleetform_runs_total{operation, status}`.
pub fn run_ended(operation: &str, status: &str) {
    metrics::gauge!("fleetform_runs_active", "operation" => operation.to_string()).decrement(1.0);
    metrics::counter!(
        "fleetform_runs_total",
        "operation" => operation.to_string(),
        "status" => status.to_string()
    )
    .increment(1);
}

/// Tasks published to the queue.
pub fn dispatched(n: usize) {
    metrics::counter!("fleetform_tasks_dispatched_total").increment(n as u64);
    metrics::gauge!("fleetform_tasks_in_flight").increment(n as f64);
}

/// A task sent to a worker process directly (also counted as dispatched).
pub fn dispatched_direct() {
    metrics::counter!("fleetform_tasks_direct_total").increment(1);
}

/// A result reached the task's waiter.
pub fn answered() {
    metrics::counter!("fleetform_task_results_total").increment(1);
    metrics::gauge!("fleetform_tasks_in_flight").decrement(1.0);
}

/// A publish of tasks retried while the queue was out of reach.
pub fn dispatch_retry() {
    metrics::counter!("fleetform_dispatch_retries_total").increment(1);
}

/// An overdue task was settled (`fleetform_tasks_settled_total{action}`):
/// published again, its result sent again by its worker, still running...
pub fn settled(action: &str) {
    metrics::counter!("fleetform_tasks_settled_total", "action" => action.to_string()).increment(1);
}

/// Messages waiting in the pool's task queue (JetStream's count).
pub fn queue_depth(pool: &str, n: u64) {
    metrics::gauge!("fleetform_queue_depth", "pool" => pool.to_string()).set(n as f64);
}

/// How long a journal write took.
pub fn journal_write(took: Duration) {
    metrics::histogram!("fleetform_journal_write_seconds").record(took.as_secs_f64());
}

/// How long writing a state snapshot took.
pub fn snapshot_write(took: Duration) {
    metrics::histogram!("fleetform_snapshot_write_seconds").record(took.as_secs_f64());
}

/// What one plan did to refresh its objects:
/// `fleetform_refresh_objects_total{kind}`, `kind` one of `read` (read by
/// the plan), `reused` (a recorded read younger than `-refresh-max-age`)
/// and `reread` (a reused read the plan would have changed, read again).
pub fn refreshed(read: usize, reused: usize, reread: usize) {
    for (kind, n) in [("read", read), ("reused", reused), ("reread", reread)] {
        if n > 0 {
            metrics::counter!("fleetform_refresh_objects_total", "kind" => kind)
                .increment(n as u64);
        }
    }
}

/// Objects a plan found changed outside fleetform:
/// `fleetform_drift_objects_total`.
pub fn drift_found(n: usize) {
    if n > 0 {
        metrics::counter!("fleetform_drift_objects_total").increment(n as u64);
    }
}

/// Serves every metric recorded in this process at `http://ADDR/metrics`.
pub fn serve(addr: std::net::SocketAddr) -> anyhow::Result<()> {
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_http_listener(addr)
        .set_buckets(&[
            0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
        ])?
        .install()
        .map_err(|e| anyhow::anyhow!("serving metrics on {addr}: {e}"))
}
