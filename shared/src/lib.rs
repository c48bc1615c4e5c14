//! fleetform's domain, without I/O: what the coordinator, the workers, the
//! providers and the CLI exchange and agree on. The language (configuration,
//! evaluation, functions, the configuration graph) is `fleetform-lang`;
//! presentation is the CLI's; provider installation is the worker's.
//!
//! # Layout
//! - [`value`], [`types`]: dynamic values with unknowns, and cty types.
//! - [`marks`]: the sensitivity marks that travel beside values.
//! - [`cty`]: the cty msgpack and JSON codecs used on the provider wire.
//! - [`json`]: JSON documents whose numbers keep every digit.
//! - [`addr`]: module, resource, instance, output and provider addresses.
//! - [`schema`]: provider schemas (blocks, attributes, nesting).
//! - [`function`]: provider-defined functions' signatures and errors.
//! - [`diag`]: user-facing diagnostics with source ranges, and their rendering.
//! - [`graph`]: dependency graphs, cycle detection, the ready-set walk and
//!   the apply graph.
//! - [`plan`]: plan data, action selection and the proposed-new-state rules.
//! - [`state`]: state snapshots.
//! - [`seal`]: encryption at rest of states, run archives and plan files.
//! - [`wire`]: messages between coordinator and workers.

pub mod addr;
pub mod cty;
pub mod diag;
pub mod function;
pub mod graph;
pub mod json;
pub mod marks;
pub mod name;
pub mod parts;
pub mod plan;
pub mod provider;
pub mod schema;
pub mod seal;
pub mod state;
pub mod state_edit;
pub mod statefile;
pub mod types;
pub mod value;
pub mod wire;

pub use addr::{
    AbsResourceInstance, InstanceKey, ProviderAddr, Resource, ResourceInstance, ResourceMode,
};
pub use diag::{Diagnostic, Diagnostics, Severity, SourceRange};
pub use marks::Marks;
pub use types::Type;
pub use value::{Number, Value};
