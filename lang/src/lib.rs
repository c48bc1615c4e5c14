//! The Terraform language as fleetform reads it: everything between `.tf`
//! files and the values a plan is made of. It depends on
//! `fleetform-shared` for values, types, addresses and diagnostics, and
//! nothing depends on it but the coordinator (which evaluates) and the CLI
//! (which validates and packs), so provider binaries and workers do not
//! rebuild when the language changes.
//!
//! # Layout
//! - [`config`]: raw HCL parsing and the validated configuration model.
//! - [`eval`]: expression evaluation with unknown values and sensitivity
//!   marks, and the built-in function library.
//! - [`graph`]: the configuration graph and `-target`/`-exclude` selection.
//! - [`inputs`]: root module input variables from `TF_VAR_*`, variables
//!   files and `-var`, by Terraform's precedence, and their `validation`
//!   rules.
//! - [`provider_functions`]: which provider-defined functions a module
//!   can call, and the built-in `terraform` provider's.
//! - [`rules`]: planning rules that read configuration (`moved`,
//!   `ignore_changes`, `prevent_destroy`).

pub mod config;
pub mod eval;
pub mod fmt;
pub mod graph;
pub mod inputs;
pub mod provider_functions;
pub mod rules;
