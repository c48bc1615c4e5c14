//! Resource addresses: a resource in a module ([`Resource`]), one instance
//! of it ([`ResourceInstance`]), both in a module instance ([`AbsResource`],
//! [`AbsResourceInstance`]), and a resource of the configuration across all
//! instances of its module ([`ConfigResource`]).

use super::key::InstanceKey;
use super::module::{Module, ModuleInstance};
use crate::name::Name;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ResourceMode {
    Managed,
    Data,
    /// `ephemeral "TYPE" "NAME"` (Terraform 1.10): opened for a walk, never
    /// in a plan or state.
    Ephemeral,
}

/// A resource in a module: `null_resource.a`, `data.sim_object.b`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Resource {
    pub mode: ResourceMode,
    pub type_name: Name,
    pub name: Name,
}

impl Resource {
    pub fn managed(type_name: &str, name: &str) -> Resource {
        Resource {
            mode: ResourceMode::Managed,
            type_name: type_name.into(),
            name: name.into(),
        }
    }

    pub fn data(type_name: &str, name: &str) -> Resource {
        Resource {
            mode: ResourceMode::Data,
            type_name: type_name.into(),
            name: name.into(),
        }
    }

    pub fn ephemeral(type_name: &str, name: &str) -> Resource {
        Resource {
            mode: ResourceMode::Ephemeral,
            type_name: type_name.into(),
            name: name.into(),
        }
    }

    pub fn instance(&self, key: InstanceKey) -> ResourceInstance {
        ResourceInstance {
            resource: self.clone(),
            key,
        }
    }

    /// The local name of the provider that implements this resource type,
    /// by Terraform's rule: the type name up to the first underscore.
    pub fn implied_provider(&self) -> &str {
        self.type_name.split('_').next().unwrap_or(&self.type_name)
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mode {
            ResourceMode::Data => write!(f, "data.")?,
            ResourceMode::Ephemeral => write!(f, "ephemeral.")?,
            ResourceMode::Managed => {}
        }
        write!(f, "{}.{}", self.type_name, self.name)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ResourceInstance {
    pub resource: Resource,
    pub key: InstanceKey,
}

impl fmt::Display for ResourceInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.resource, self.key)
    }
}

/// A resource in a particular module instance.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AbsResource {
    pub module: ModuleInstance,
    pub resource: Resource,
}

impl AbsResource {
    pub fn root(resource: Resource) -> AbsResource {
        AbsResource {
            module: ModuleInstance::root(),
            resource,
        }
    }

    pub fn instance(&self, key: InstanceKey) -> AbsResourceInstance {
        AbsResourceInstance {
            module: self.module.clone(),
            resource: self.resource.instance(key),
        }
    }
}

impl fmt::Display for AbsResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        write!(f, "{}", self.resource)
    }
}

/// A resource instance in a particular module instance: the unit of planning
/// and applying.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AbsResourceInstance {
    pub module: ModuleInstance,
    pub resource: ResourceInstance,
}

impl AbsResourceInstance {
    pub fn root(resource: ResourceInstance) -> AbsResourceInstance {
        AbsResourceInstance {
            module: ModuleInstance::root(),
            resource,
        }
    }

    pub fn containing_resource(&self) -> AbsResource {
        AbsResource {
            module: self.module.clone(),
            resource: self.resource.resource.clone(),
        }
    }

    pub fn key(&self) -> &InstanceKey {
        &self.resource.key
    }
}

impl fmt::Display for AbsResourceInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        write!(f, "{}", self.resource)
    }
}

/// A resource of the configuration: every instance of it in every instance
/// of its module (`module.a.null_resource.b`, whatever the keys).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ConfigResource {
    pub module: Module,
    pub resource: Resource,
}

impl ConfigResource {
    pub fn root(resource: Resource) -> ConfigResource {
        ConfigResource {
            module: Module::root(),
            resource,
        }
    }

    pub fn absolute(&self, module: ModuleInstance) -> AbsResource {
        AbsResource {
            module,
            resource: self.resource.clone(),
        }
    }
}

impl fmt::Display for ConfigResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        write!(f, "{}", self.resource)
    }
}

impl AbsResource {
    pub fn config(&self) -> ConfigResource {
        ConfigResource {
            module: self.module.module(),
            resource: self.resource.clone(),
        }
    }
}

impl AbsResourceInstance {
    pub fn config_resource(&self) -> ConfigResource {
        ConfigResource {
            module: self.module.module(),
            resource: self.resource.resource.clone(),
        }
    }
}
