//! Runs: their registry, event logs and approval, and the driver that takes
//! a run from configuration to plan to applied state.
//!
//! # Layout
//!
//! From the top down; a file imports only files below it.
//! - `registry.rs`: the [`Coordinator`], the registry of runs; `recover.rs`
//!   and `adopt.rs` take up runs left unfinished.
//! - `start.rs` and `driver.rs`: one run from request to end.
//! - The walks: `plan_walk.rs` and its neighbours, `apply_walk.rs` and
//!   `ephemeral_apply.rs`.
//! - Evaluation: `scope.rs`, `expand.rs`, `named_values.rs`,
//!   `conditions.rs`, `checks.rs`, `sensitivity.rs`.
//! - `ctx.rs`: the run context every walk takes.
//! - `handle.rs`: the handle types everything shares ([`RunHandle`],
//!   `Shared`); `events.rs`, the run's event log.

mod adopt;
mod apply_result;
mod apply_walk;
mod checks;
mod conditions;
mod ctx;
mod drift;
mod driver;
mod ephemeral;
mod ephemeral_apply;
#[cfg(test)]
mod ephemeral_tests;
mod events;
mod expand;
mod foreign_state;
mod functions;
mod handle;
mod imports;
mod lock;
mod named_values;
mod plan_conditions;
mod plan_destroy;
mod plan_ephemeral;
mod plan_import;
mod plan_resource;
mod plan_walk;
mod providers;
pub mod recover;
mod registry;
mod removed;
mod scope;
mod sensitivity;
mod shapes;
mod start;
mod state_file;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
mod unwatched;

pub use events::now_ms as events_now_ms;
pub use events::{EndedLogs, EventLog};
pub use handle::RunHandle;
pub use registry::Coordinator;
