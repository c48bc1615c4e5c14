//! fleetform's own provider plugins and the small framework they share:
//! real tfplugin6 (and tfplugin5) servers that Terraform, OpenTofu and fleetform can run.
//!
//! # Layout
//! - [`framework`]: the `Provider`, `Resource` and `DataSource` traits and
//!   the default planning rules.
//! - [`service`]: the tfplugin6 gRPC service over a `Provider`, and
//!   `service::v5`, the same service over tfplugin5 for protocol 5 hosts.
//! - [`plugin_process`]: the plugin process: go-plugin handshake,
//!   listener, shutdown.
//! - [`tls`]: go-plugin AutoMTLS (server certificate, pinned client).
//! - [`defaults`]: plan-time defaults for optional+computed arguments.
//! - [`null`]: `hashicorp/null`-like provider.
//! - [`random`], [`local`], [`time`]: like `hashicorp/random`, `hashicorp/local`
//!   and `hashicorp/time`.
//! - [`sim`]: a simulated cloud backed by a directory of JSON files.
//! - [`terraform`]: Terraform's built-in provider (`terraform.io/builtin/terraform`):
//!   `terraform_data` and `terraform_remote_state`.

pub mod defaults;
pub mod framework;
pub mod hclog;
pub mod local;
pub mod null;
pub mod plugin_process;
pub mod random;
pub mod service;
pub mod sim;
pub mod terraform;
pub mod time;
pub mod tls;

pub use framework::{CallResult, DataSource, Provider, Resource};
