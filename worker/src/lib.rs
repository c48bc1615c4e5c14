//! The fleetform worker: takes tasks from the queue, runs them through
//! provider plugins, publishes the results.
//!
//! # Layout
//! - [`plugin`]: the provider plugin host (handshake, AutoMTLS, tfplugin6
//!   client, executable resolution, process pool).
//! - [`handler`]: one task → provider calls → outcome, with the contract checks.
//! - [`pool_source`]: the plugin pool as the handler's provider source.
//! - [`source`]: task sources and result sinks (JetStream, in-process).
//! - [`runtime`]: the worker loop with its concurrency limit.
//! - [`status`]: answers a coordinator asking about an overdue task.
//! - [`throttle`]: per-provider concurrency limits, retries of throttled
//!   calls, and the adaptive limit of a provider that throttles.
//! - [`metrics`]: the worker's Prometheus metrics.
//!
//! Which provider executable a task uses (CLI configuration, mirrors,
//! versions, the lock file's rules) comes from `fleetform-install`, shared
//! with the CLI's `init`. The worker does not depend on the language crate
//! (`fleetform-lang`): it rebuilds only when what it runs changes.

pub mod handler;
pub mod metrics;
pub mod plugin;
pub mod pool_source;
pub mod runtime;
pub mod source;
pub mod status;
pub mod throttle;

pub use runtime::Worker;
