//! fleetform's domain, without I/O: everything the coordinator, the workers,
//! the providers and the CLI agree on.
//!
//! # Layout
//! - [`value`], [`types`]: dynamic values with unknowns, and cty types.
//! - [`cty`]: the cty msgpack and JSON codecs used on the provider wire.
//! - [`json`]: JSON documents whose numbers keep every digit.
//! - [`addr`]: resource, instance and provider addresses.
//! - [`schema`]: provider schemas (blocks, attributes, nesting); [`schema_json`]:
//!   them as `terraform providers schema -json` prints them.
//! - [`install`]: provider installation rules: the CLI configuration file,
//!   provider patterns, version constraints.
//! - [`diag`]: user-facing diagnostics with source ranges, and their rendering.
//! - [`config`]: raw HCL parsing into the configuration model.
//! - [`eval`]: expression evaluation with unknown values, and the sensitivity
//!   marks that travel beside values ([`eval::Marks`]).
//! - [`graph`]: dependency graphs, cycle detection and the ready-set walk.
//! - [`plan`]: plan data, action selection and the proposed-new-state rules.
//! - [`state`]: state snapshots.
//! - [`wire`]: messages between coordinator and workers.

pub mod addr;
pub mod config;
pub mod cty;
pub mod diag;
pub mod eval;
pub mod graph;
pub mod install;
pub mod json;
pub mod plan;
pub mod provider;
pub mod schema;
pub mod schema_json;
pub mod state;
pub mod types;
pub mod value;
pub mod wire;

pub use addr::{
    AbsResourceInstance, InstanceKey, ProviderAddr, Resource, ResourceInstance, ResourceMode,
};
pub use diag::{Diagnostic, Diagnostics, Severity, SourceRange};
pub use types::Type;
pub use value::{Number, Value};
