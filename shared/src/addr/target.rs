//! What `-target`, `-exclude` and `-replace` name: a module instance, a
//! resource or a resource instance, parsed once into [`Target`].
//!
//! A module step written without a key (`module.a`) stands for every
//! instance of that call, as `-target=module.a` means in Terraform; with a
//! key (`module.a["x"]`) only that instance.

use super::key::InstanceKey;
use super::module::{Module, ModuleInstance};
use super::parse::{AddrParseError, error, module_prefix, resource_steps, tokenize};
use super::resource::{AbsResource, AbsResourceInstance, ConfigResource};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Target {
    Module(ModuleInstance),
    Resource(AbsResource),
    Instance(AbsResourceInstance),
}

impl Target {
    /// The module instance path the target is in (or is).
    pub fn module(&self) -> &ModuleInstance {
        match self {
            Target::Module(m) => m,
            Target::Resource(r) => &r.module,
            Target::Instance(i) => &i.module,
        }
    }

    /// Whether this target covers the resource instance `addr`.
    pub fn contains_instance(&self, addr: &AbsResourceInstance) -> bool {
        match self {
            Target::Module(m) => module_matches_prefix(m, &addr.module),
            Target::Resource(r) => {
                r.resource == addr.resource.resource && module_matches(&r.module, &addr.module)
            }
            Target::Instance(i) => {
                i.resource == addr.resource && module_matches(&i.module, &addr.module)
            }
        }
    }

    /// Whether this target covers some instance of `resource` (the whole
    /// configuration resource, in any module instance).
    pub fn touches_config_resource(&self, resource: &ConfigResource) -> bool {
        match self {
            Target::Module(m) => m.module().contains(&resource.module),
            Target::Resource(r) => {
                r.resource == resource.resource && r.module.module() == resource.module
            }
            Target::Instance(i) => {
                i.resource.resource == resource.resource && i.module.module() == resource.module
            }
        }
    }

    /// Whether the target names its resource whole (every instance of it in
    /// the module instances it matches), rather than one instance.
    pub fn is_whole_resource(&self) -> bool {
        !matches!(self, Target::Instance(_))
    }

    /// The static module the target is in (or is).
    pub fn static_module(&self) -> Module {
        self.module().module()
    }
}

/// `pattern` (from a target) matches `actual` exactly, a keyless step
/// matching every key.
fn module_matches(pattern: &ModuleInstance, actual: &ModuleInstance) -> bool {
    pattern.0.len() == actual.0.len() && module_matches_prefix(pattern, actual)
}

fn module_matches_prefix(pattern: &ModuleInstance, actual: &ModuleInstance) -> bool {
    pattern.0.len() <= actual.0.len()
        && pattern
            .0
            .iter()
            .zip(&actual.0)
            .all(|((pn, pk), (an, ak))| pn == an && (*pk == InstanceKey::None || pk == ak))
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Module(m) => write!(f, "{m}"),
            Target::Resource(r) => write!(f, "{r}"),
            Target::Instance(i) => write!(f, "{i}"),
        }
    }
}

impl FromStr for Target {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let steps = tokenize(s).map_err(|r| error(s, &r))?;
        let (module, rest) = module_prefix(&steps);
        if rest.is_empty() {
            if module.is_root() {
                return Err(error(s, "empty address"));
            }
            return Ok(Target::Module(module));
        }
        match resource_steps(rest) {
            Some((resource, None)) => Ok(Target::Resource(AbsResource { module, resource })),
            Some((resource, Some(key))) => Ok(Target::Instance(AbsResourceInstance {
                module,
                resource: resource.instance(key),
            })),
            None => Err(error(
                s,
                "expected a module, resource or resource instance address, such as module.a, null_resource.b or module.a[\"k\"].null_resource.b[0]",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Target {
        s.parse().unwrap()
    }

    fn i(s: &str) -> AbsResourceInstance {
        s.parse().unwrap()
    }

    #[test]
    fn targets_parse_into_their_kind_and_round_trip() {
        assert!(matches!(t("module.a"), Target::Module(_)));
        assert!(matches!(
            t("module.a[\"x\"].null_resource.b"),
            Target::Resource(_)
        ));
        assert!(matches!(t("null_resource.b[0]"), Target::Instance(_)));
        assert!(matches!(t("data.x.y"), Target::Resource(_)));
        for s in [
            "module.a",
            "module.a[0].module.b",
            "module.a[\"k\"].null_resource.b[\"z\"]",
            "data.null_data_source.x",
        ] {
            assert_eq!(t(s).to_string(), s);
        }
        for bad in ["", "module", "module.a.b", "a.b.c", "module.a[0].x"] {
            assert!(bad.parse::<Target>().is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn a_keyless_module_step_matches_every_instance() {
        let all = t("module.a.null_resource.b");
        assert!(all.contains_instance(&i("module.a[0].null_resource.b")));
        assert!(all.contains_instance(&i("module.a[\"x\"].null_resource.b[3]")));
        assert!(all.contains_instance(&i("module.a.null_resource.b")));
        assert!(!all.contains_instance(&i("null_resource.b")));
        assert!(!all.contains_instance(&i("module.a.module.c.null_resource.b")));
        let one = t("module.a[1].null_resource.b[2]");
        assert!(one.contains_instance(&i("module.a[1].null_resource.b[2]")));
        assert!(!one.contains_instance(&i("module.a[0].null_resource.b[2]")));
        assert!(!one.contains_instance(&i("module.a[1].null_resource.b[1]")));
    }

    #[test]
    fn a_module_target_covers_its_descendants() {
        let m = t("module.a[0]");
        assert!(m.contains_instance(&i("module.a[0].x.y")));
        assert!(m.contains_instance(&i("module.a[0].module.b[\"k\"].x.y")));
        assert!(!m.contains_instance(&i("module.a[1].x.y")));
        assert!(!m.contains_instance(&i("x.y")));
        let cr = ConfigResource {
            module: "module.a.module.b".parse().unwrap(),
            resource: super::super::Resource::managed("x", "y"),
        };
        assert!(m.touches_config_resource(&cr));
        assert!(!t("module.b").touches_config_resource(&cr));
    }
}
