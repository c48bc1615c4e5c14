//! Configuration: raw HCL parsing ([`parse_file`], schema-less [`Body`]) and
//! the validated configuration model ([`load_module`] → [`Module`]), plus
//! schema-directed decoding of bodies ([`Body::decode`]).

mod body;
mod decode;
mod dynamic;
mod load;
mod model;
mod named_values;
mod resource;

pub use body::{Attribute, Body, NestedBlockSyntax, parse_file};
pub use load::load_module;
pub use model::{
    CheckRule, IgnoreChanges, Import, Lifecycle, Local, Module, ModuleCall, Moved, Output,
    ProviderBlock, ProviderRequirement, ResourceBlock, Variable,
};

#[cfg(test)]
mod tests;
