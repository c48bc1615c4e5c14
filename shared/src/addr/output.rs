//! Output value addresses: `output.x` in one module instance.

use super::module::ModuleInstance;
use serde::{Deserialize, Serialize};
use std::fmt;

/// An `output "NAME"` of one module instance.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AbsOutputValue {
    pub module: ModuleInstance,
    pub name: String,
}

impl AbsOutputValue {
    pub fn root(name: &str) -> AbsOutputValue {
        AbsOutputValue {
            module: ModuleInstance::root(),
            name: name.to_string(),
        }
    }
}

impl fmt::Display for AbsOutputValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        write!(f, "output.{}", self.name)
    }
}
