//! Provider installation, in one place for the CLI's `init` and `providers`
//! commands and for the worker: where provider plugins are installed on a
//! machine and which executable a run uses, as Terraform decides it.
//!
//! # Layout, from the bottom up
//! - [`version`]: versions and Terraform's constraint syntax.
//! - [`pattern`]: `include`/`exclude` provider patterns.
//! - [`cliconfig`]: the CLI configuration file (`.terraformrc`,
//!   `TF_CLI_CONFIG_FILE`) as a model: `provider_installation`,
//!   `dev_overrides`, mirrors, read with `hcl-edit` (literals only, as in
//!   the HCL 1 files Terraform reads): installation does not depend on
//!   the language crate.
//! - [`sources`]: where providers are installed on this machine (the CLI
//!   configuration's file and the search locations it implies, what a
//!   mirror directory holds).
//! - [`resolve`]: choosing a provider's executable for a version
//!   constraint (overrides, mirrors, bundled and built-in providers).
//! - [`locked`]: resolving under the dependency lock file, and the `h1:`
//!   package hash it records.
//!
//! The lock file's format (`.terraform.lock.hcl`) belongs to the
//! configuration and lives in `fleetform_lang::config` (`lock_file.rs`).

pub mod cliconfig;
pub mod locked;
pub mod pattern;
pub mod resolve;
pub mod sources;
pub mod version;

pub use cliconfig::{
    CliConfig, CliConfigError, CliConfigErrors, InstallMethod, Location, ProviderInstallation,
    parse_cli_config,
};
pub use pattern::ProviderPattern;
pub use resolve::{ResolveError, resolve_provider};
pub use version::{ConstraintError, Version, VersionConstraints, VersionError};
