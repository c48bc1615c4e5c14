//! Module addresses: the static path of a module in the configuration tree
//! ([`Module`], `module.a.module.b`), the path of one module instance
//! ([`ModuleInstance`], `module.a["x"].module.b[0]`), and module calls
//! ([`ModuleCall`], [`AbsModuleCall`]).

use super::key::InstanceKey;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A module in the configuration tree, by the names of the calls that lead
/// to it; empty is the root module. All instances of a module share it.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Module(pub Vec<String>);

impl Module {
    pub fn root() -> Module {
        Module(Vec::new())
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn child(&self, call: &str) -> Module {
        let mut path = self.0.clone();
        path.push(call.to_string());
        Module(path)
    }

    /// The module that calls this one, and the call's name; None for the root.
    pub fn parent(&self) -> Option<(Module, &str)> {
        let (last, init) = self.0.split_last()?;
        Some((Module(init.to_vec()), last))
    }

    /// Whether `self` is `other` or one of its ancestors.
    pub fn contains(&self, other: &Module) -> bool {
        other.0.starts_with(&self.0)
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, ".")?;
            }
            write!(f, "module.{name}")?;
        }
        Ok(())
    }
}

/// One instance of a module: each step is a call name and the instance key
/// the call's `count`/`for_each` gave it. Empty is the root module.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ModuleInstance(pub Vec<(String, InstanceKey)>);

impl ModuleInstance {
    pub fn root() -> ModuleInstance {
        ModuleInstance(Vec::new())
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn child(&self, call: &str, key: InstanceKey) -> ModuleInstance {
        let mut path = self.0.clone();
        path.push((call.to_string(), key));
        ModuleInstance(path)
    }

    /// The module instance that called this one, and the call with the key.
    pub fn parent(&self) -> Option<(ModuleInstance, &str, &InstanceKey)> {
        let ((name, key), init) = self.0.split_last()?;
        Some((ModuleInstance(init.to_vec()), name, key))
    }

    /// The static module this is an instance of.
    pub fn module(&self) -> Module {
        Module(self.0.iter().map(|(n, _)| n.clone()).collect())
    }

    /// The call that made this instance, with the module instance it is in.
    pub fn call(&self) -> Option<AbsModuleCall> {
        let (parent, name, _) = self.parent()?;
        Some(AbsModuleCall {
            module: parent,
            call: ModuleCall::new(name),
        })
    }

    /// Whether `self` is `other` or an ancestor of it.
    pub fn contains(&self, other: &ModuleInstance) -> bool {
        other.0.starts_with(&self.0)
    }
}

impl fmt::Display for ModuleInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, key)) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, ".")?;
            }
            write!(f, "module.{name}{key}")?;
        }
        Ok(())
    }
}

/// A `module "NAME"` block, by its name, within the module that holds it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ModuleCall {
    pub name: String,
}

impl ModuleCall {
    pub fn new(name: &str) -> ModuleCall {
        ModuleCall {
            name: name.to_string(),
        }
    }
}

impl fmt::Display for ModuleCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "module.{}", self.name)
    }
}

/// A module call within one instance of the module that holds it: all the
/// instances its `count`/`for_each` makes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AbsModuleCall {
    pub module: ModuleInstance,
    pub call: ModuleCall,
}

impl AbsModuleCall {
    pub fn instance(&self, key: InstanceKey) -> ModuleInstance {
        self.module.child(&self.call.name, key)
    }
}

impl fmt::Display for AbsModuleCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        write!(f, "{}", self.call)
    }
}
