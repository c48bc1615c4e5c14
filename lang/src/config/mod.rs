//! Configuration: raw parsing of native syntax ([`parse_file`]) and JSON
//! syntax ([`parse_json_file`]) into schema-less [`Body`]s, the validated
//! configuration model ([`load_module`] → [`Module`], override files merged
//! in), the configuration tree of a root module and its module calls
//! ([`load_config`] → [`Config`]), plus schema-directed decoding of bodies
//! ([`Body::decode`]).
//!
//! # Layers, each using only the ones below it
//! 1. Syntax: `json_parse` (JSON with positions) → `json_expr` →
//!    `body` (native syntax, the schema-less [`Body`], `dynamic` blocks'
//!    references) → `json_body` (JSON bodies as [`Body`]s), `files`.
//! 2. Argument helpers every block decoder uses: `args` (ranges, labels,
//!    literal arguments, refusing what a block does not take, conditions).
//! 3. Block decoders: `terraform_block`, `resource`, `provisioner`,
//!    `named_value_blocks` (variables, locals, outputs), `check_blocks` (`check`,
//!    `removed`), `test_file`; `model` holds what they produce.
//! 4. Module assembly: `merge` (override files), `load` (a module).
//! 5. The tree: `tree` (modules and their calls, the lock file), then the
//!    checks that need the whole tree (`ephemeral`), joined by
//!    [`load_config`] here.

mod against_schema;
mod args;
mod body;
mod check_blocks;
mod context;
mod contributing;
mod decode;
mod dynamic;
mod ephemeral;
mod files;
mod json_body;
mod json_expr;
mod json_parse;
mod load;
mod lock_file;
mod merge;
mod model;
mod named_value_blocks;
mod newlines;
mod provisioner;
mod repeated_keys;
mod resource;
mod terraform_block;
mod test_file;
mod tree;

pub use against_schema::{check_against_schemas, check_ephemeral_arguments};
pub use body::{Attribute, Body, JsonProperty, NestedBlockSyntax, parse_file};
pub use context::{context_at, top_level_blocks};
pub use contributing::{Changed, ResourceAttr, contributing_attributes};
pub use ephemeral::{
    EPHEMERAL_AS_NULL, check_resource_arguments, ephemeral_references, ephemeral_source,
    is_ephemeral_reference,
};
pub use files::{is_config_file, is_override_file};
pub use json_body::parse_json_file;
pub use json_parse::{JsonKind, JsonMember, JsonValue};
pub use load::load_module;
pub use lock_file::{LOCK_FILE, LockEntry, lock_by_provider, parse_lock_file, render_lock_file};
pub use model::{
    Check, CheckRule, IgnoreChanges, Import, Lifecycle, Local, Module, ModuleCall, Moved, Output,
    ProviderBlock, ProviderRequirement, Provisioner, ProvisionerOnFailure, ProvisionerWhen,
    Removed, RemovedTarget, ResourceBlock, Variable,
};
pub use test_file::{
    ExpectedFailure, TestCommand, TestFile, TestModule, TestPlanOptions, TestProvider, TestRun,
    is_test_file, load_test_file,
};
pub use tree::{
    Config, MODULES_MANIFEST, ManifestEntry, ModuleNode, files_in_dir, is_local_source,
    manifest_key, parse_manifest, resolve_source,
};

/// Loads a configuration from its bundle (file name → contents): the tree
/// of modules assembled, then the checks that need the whole tree (where
/// ephemeral values would be recorded). The configuration is None only
/// when a file has a syntax error; other problems are diagnostics beside
/// it.
pub fn load_config(
    files: &std::collections::BTreeMap<String, String>,
) -> (Option<Config>, fleetform_shared::diag::Diagnostics) {
    let (config, mut diags) = tree::assemble(files);
    if let Some(c) = &config {
        diags.extend(ephemeral::check(c));
    }
    (config, diags)
}

#[cfg(test)]
mod check_blocks_tests;
#[cfg(test)]
mod ephemeral_tests;
#[cfg(test)]
mod json_schema_tests;
#[cfg(test)]
mod json_tests;
#[cfg(test)]
mod override_tests;
#[cfg(test)]
mod tests;
