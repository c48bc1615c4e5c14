//! Configuration: raw HCL parsing ([`parse_file`], schema-less [`Body`]) and
//! the validated configuration model ([`load_module`] → [`Module`]), the
//! configuration tree of a root module and its module calls
//! ([`load_config`] → [`Config`]), plus
//! schema-directed decoding of bodies ([`Body::decode`]).

mod body;
mod decode;
mod dynamic;
mod load;
mod model;
mod named_values;
mod provisioner;
mod resource;
mod tree;

pub use body::{Attribute, Body, NestedBlockSyntax, parse_file};
pub use load::load_module;
pub use model::{
    CheckRule, IgnoreChanges, Import, Lifecycle, Local, Module, ModuleCall, Moved, Output,
    ProviderBlock, ProviderRequirement, Provisioner, ProvisionerOnFailure, ProvisionerWhen,
    ResourceBlock, Variable,
};
pub use tree::{
    Config, MODULES_MANIFEST, ManifestEntry, ModuleNode, files_in_dir, is_local_source,
    load_config, manifest_key, parse_manifest, resolve_source,
};

#[cfg(test)]
mod tests;
