//! The worker's Prometheus metrics (served by `fleetform-worker
//! --metrics-listen ADDR` at `/metrics`). Labels are addresses of kinds,
//! never values: provider, resource type, action, outcome, pool.

use fleetform_shared::wire::{ApplyOp, Task, TaskKind, TaskOutcome};
use std::time::Duration;

/// What kind of operation a task is: `plan`, `create`, `update`,
/// `delete`, `read`, `import`, `provision`, `schema`, `function`.
pub fn action(task: &Task) -> &'static str {
    match &task.kind {
        TaskKind::Schema { .. } => "schema",
        TaskKind::Plan(_) => "plan",
        TaskKind::Apply(a) => match a.op {
            ApplyOp::Create => "create",
            ApplyOp::Update => "update",
            ApplyOp::Delete => "delete",
            ApplyOp::Read => "read",
            ApplyOp::Open => "open",
            ApplyOp::Renew => "renew",
            ApplyOp::Close => "close",
        },
        TaskKind::Read(_) => "read",
        TaskKind::Import(_) => "import",
        TaskKind::Provision(_) => "provision",
        TaskKind::Function(_) => "function",
        TaskKind::Open(_) => "open",
        TaskKind::Renew(_) => "renew",
        TaskKind::Close(_) => "close",
    }
}

fn resource_type(task: &Task) -> &str {
    match &task.kind {
        TaskKind::Schema { .. } => "",
        TaskKind::Plan(p) => &p.type_name,
        TaskKind::Apply(a) => &a.type_name,
        TaskKind::Read(r) => &r.type_name,
        TaskKind::Import(i) => &i.type_name,
        TaskKind::Provision(p) => &p.addr.resource.resource.type_name,
        TaskKind::Function(_) => "",
        TaskKind::Open(o) => &o.type_name,
        TaskKind::Renew(r) => &r.type_name,
        TaskKind::Close(c) => &c.type_name,
    }
}

/// `ok`, `error` (the provider or a check said no), `failed` (the task
/// could not be carried out), `cancelled`, `interrupted`.
pub fn outcome(o: &TaskOutcome) -> &'static str {
    let errored = |d: &fleetform_shared::diag::Diagnostics| d.has_errors();
    match o {
        TaskOutcome::Schema { .. } => "ok",
        TaskOutcome::Plan(p) if errored(&p.diagnostics) => "error",
        TaskOutcome::Apply(a) if errored(&a.diagnostics) => "error",
        TaskOutcome::Read(r) if errored(&r.diagnostics) => "error",
        TaskOutcome::Import(i) if errored(&i.diagnostics) => "error",
        TaskOutcome::Provision(p) if p.steps.iter().any(|s| s.errored) => "error",
        TaskOutcome::Function(Err(_)) => "error",
        TaskOutcome::Function(Ok(_)) => "ok",
        TaskOutcome::Open(o) if errored(&o.diagnostics) => "error",
        TaskOutcome::Renew(r) if errored(&r.diagnostics) => "error",
        TaskOutcome::Close(d) if errored(d) => "error",
        TaskOutcome::Open(_) | TaskOutcome::Renew(_) | TaskOutcome::Close(_) => "ok",
        TaskOutcome::Plan(_)
        | TaskOutcome::Apply(_)
        | TaskOutcome::Read(_)
        | TaskOutcome::Import(_)
        | TaskOutcome::Provision(_) => "ok",
        TaskOutcome::Failed(_) => "failed",
        TaskOutcome::Cancelled => "cancelled",
        TaskOutcome::Interrupted { .. } => "interrupted",
    }
}

/// One operation done: `fleetform_operations_total` and
/// `fleetform_operation_duration_seconds`.
pub fn operation(task: &Task, result: &TaskOutcome, took: Duration) {
    let labels = [
        ("provider", task.provider.addr.to_string()),
        ("type", resource_type(task).to_string()),
        ("action", action(task).to_string()),
        ("outcome", outcome(result).to_string()),
    ];
    metrics::counter!("fleetform_operations_total", &labels).increment(1);
    metrics::histogram!("fleetform_operation_duration_seconds", &labels).record(took.as_secs_f64());
}

/// A task delivered again (its earlier delivery went unanswered).
pub fn redelivered(task: &Task) {
    metrics::counter!("fleetform_task_redeliveries_total", "action" => action(task)).increment(1);
}

/// Tasks running on this worker now.
pub fn in_flight(pool: &str, n: u64) {
    metrics::gauge!("fleetform_worker_tasks_in_flight", "pool" => pool.to_string()).set(n as f64);
}

/// Provider processes this worker runs now.
pub fn provider_processes(n: usize) {
    metrics::gauge!("fleetform_provider_processes").set(n as f64);
}

/// Calls to `provider` this worker lets run at once now
/// (`--provider-limit`, lowered while the provider throttles).
pub fn provider_limit(provider: &fleetform_shared::addr::ProviderAddr, limit: usize) {
    metrics::gauge!("fleetform_provider_concurrency_limit", "provider" => provider.to_string())
        .set(limit as f64);
}

/// A provider call refused with a throttling error.
pub fn provider_throttled(provider: &fleetform_shared::addr::ProviderAddr) {
    metrics::counter!("fleetform_provider_throttled_total", "provider" => provider.to_string())
        .increment(1);
}

/// A result that could not be published at once and is being retried.
pub fn publish_retry() {
    metrics::counter!("fleetform_result_publish_retries_total").increment(1);
}

/// Serves every metric recorded in this process at `http://ADDR/metrics`.
pub fn serve(addr: std::net::SocketAddr) -> anyhow::Result<()> {
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_http_listener(addr)
        .set_buckets(&[
            0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
        ])?
        .install()
        .map_err(|e| anyhow::anyhow!("serving metrics on {addr}: {e}"))
}
