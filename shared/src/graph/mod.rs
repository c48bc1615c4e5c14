//! Dependency graphs: a small DAG type over petgraph with cycle diagnosis,
//! the ready-set walk every scheduler uses, and the apply graph builder
//! (the configuration graph belongs to `fleetform-lang`).

pub mod apply;
mod dag;
mod walk;

pub use dag::{Cycle, Dag, NodeId};
pub use walk::Walk;
