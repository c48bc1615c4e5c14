//! Configuration: raw parsing of native syntax ([`parse_file`]) and JSON
//! syntax ([`parse_json_file`]) into schema-less [`Body`]s, the validated
//! configuration model ([`load_module`] → [`Module`], override files merged
//! in), the configuration tree of a root module and its module calls
//! ([`load_config`] → [`Config`]), plus schema-directed decoding of bodies
//! ([`Body::decode`]).

mod against_schema;
mod body;
mod checks;
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
mod named_values;
mod newlines;
mod provisioner;
mod repeated_keys;
mod resource;
mod test_file;
mod tree;

pub use against_schema::{check_against_schemas, check_ephemeral_arguments};
pub use body::{Attribute, Body, NestedBlockSyntax, parse_file};
pub use context::{context_at, top_level_blocks};
pub use contributing::{Changed, ResourceAttr, contributing_attributes};
pub use ephemeral::{
    EPHEMERAL_AS_NULL, check_resource_arguments, ephemeral_references, ephemeral_source,
    is_ephemeral_reference,
};
pub use files::{is_config_file, is_override_file};
pub use json_body::{JsonProperty, parse_json_file};
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
    load_config, manifest_key, parse_manifest, resolve_source,
};

#[cfg(test)]
mod checks_tests;
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
