//! Dependency graphs: a small DAG type over petgraph with cycle diagnosis,
//! the ready-set walk every scheduler uses, and the builders for the
//! configuration graph and the apply graph.

pub mod apply;
pub mod config;
mod dag;
pub mod targeting;
mod walk;

pub use dag::{Cycle, Dag, NodeId};
pub use walk::Walk;
