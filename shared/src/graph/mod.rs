//! Dependency graphs.
