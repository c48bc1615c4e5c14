//! The fleetform coordinator: accepts runs over gRPC, plans and applies them
//! by dispatching every ready operation to workers, and keeps state.
//!
//! # Layout
//! - [`api`]: the tonic service.
//! - [`run`]: run registry, driver, plan walk, apply walk, evaluation scope.
//! - [`dispatch`]: task queues (JetStream, in-process) and result routing.
//! - [`store`]: state snapshots in an object store, redb cache and journal.
//! - [`server`]: wiring it all together behind a bound listener.
//! - [`metrics`]: the coordinator's Prometheus metrics.
//! - [`auth`]: who may call the API, with which role.
//! - [`ui`]: the live view of runs, a web page (`--ui-listen`).
//! - [`workspaces`]: what the API does to workspaces and their state
//!   outside runs (push, taint, state edits, create, delete, list).

pub mod api;
pub mod auth;
pub mod dispatch;
pub mod memory;
pub mod metrics;
pub mod run;
pub mod server;
pub mod store;
pub mod ui;
pub mod workspaces;

pub use run::Coordinator;
