//! fleetform's own provider plugins and the small framework they share:
//! real tfplugin6 servers that Terraform, OpenTofu and fleetform can run.
//!
//! # Layout
//! - [`framework`]: the `Provider`, `Resource` and `DataSource` traits and
//!   the default planning rules.
//! - [`server`]: the tfplugin6 gRPC service over a `Provider`.
//! - [`serve`]: the plugin process: go-plugin handshake, listener, shutdown.
//! - [`tls`]: go-plugin AutoMTLS (server certificate, pinned client).
//! - [`null`]: `hashicorp/null`-like provider.
//! - [`sim`]: a simulated cloud backed by a directory of JSON files.

pub mod framework;
pub mod null;
pub mod serve;
pub mod server;
pub mod sim;
pub mod tls;

pub use framework::{CallResult, DataSource, Provider, Resource};
