//! Runs: their registry, event logs and approval, and the driver that takes
//! a run from configuration to plan to applied state.
//!
//! # Layout
//!
//! Layers, from the top down; a file imports only from its own layer or
//! the layers below it.
//! - The registry of runs: the [`Coordinator`] (`registry.rs`), and the
//!   runs it takes up after a restart (`recover.rs`) or from a dead
//!   coordinator (`adopt.rs`).
//! - The driver: `start.rs` starts a run in the background, `driver.rs`
//!   takes it from configuration to plan to applied state
//!   (`foreign_state.rs`: the guard against planning against another
//!   configuration's state).
//! - The walks: `plan/` and `apply/`, which never import each other.
//! - Evaluation, below both walks: `eval/` (scope, expansion, named values,
//!   conditions and checks, sensitivity, `removed` blocks, provider
//!   configurations and functions, ephemeral instances).
//! - The run context every walk takes: `ctx.rs`, with what both walks use
//!   (the dispatch window, the prior object a task takes).
//! - The values a run knows so far (`values.rs`: plain data that the
//!   context keeps and evaluation reads).
//! - The handle types everything shares: `handle.rs` ([`RunHandle`] and
//!   `Shared`), the event log (`events.rs`), the workspace lock
//!   (`lock.rs`) and the guard for unwatched runs (`unwatched.rs`).

mod adopt;
mod apply;
mod background;
mod ctx;
mod driver;
mod emitter;
#[cfg(test)]
mod ephemeral_tests;
mod eval;
mod events;
mod foreign_state;
mod handle;
#[cfg(test)]
mod isolation_tests;
mod lock;
mod plan;
pub mod recover;
mod registry;
mod start;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
mod unwatched;
mod values;

pub use events::now_ms as events_now_ms;
pub use events::{EndedLogs, EventLog, Outgoing, PART as EVENT_PART};
pub use handle::RunHandle;
pub use registry::Coordinator;
