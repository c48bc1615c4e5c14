//! The configuration graph (every variable, local, provider, resource and
//! output with an edge per reference) and `-target`/`-exclude` selection on it.

pub mod config;
pub mod targeting;
