//! Provider installation as Terraform configures it, without I/O: the CLI
//! configuration file model ([`cliconfig`]), `include`/`exclude` provider
//! patterns ([`pattern`]), and versions with Terraform's constraint syntax
//! ([`version`]). The worker reads files and directories and applies these
//! rules.
//!
//! The CLI configuration file is HCL, so this module reads it with the
//! language crate's body parser and constant evaluator: one HCL reader in
//! the project, at the cost of the worker depending on `fleetform-lang`
//! (provider binaries still do not).

pub mod cliconfig;
pub mod pattern;
pub mod version;

pub use cliconfig::{
    CliConfig, CliConfigError, CliConfigErrors, InstallMethod, Location, ProviderInstallation,
    parse_cli_config,
};
pub use pattern::ProviderPattern;
pub use version::{ConstraintError, Version, VersionConstraints, VersionError};
