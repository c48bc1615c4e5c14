//! Addresses of resources, resource instances and providers.
//!
//! Addresses are immutable values: `Display` and `FromStr` round-trip, and
//! they are `Ord + Hash` so they serve as map keys. Module paths are carried
//! from the start (root = empty) so modules fit in later without new types.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ResourceMode {
    Managed,
    Data,
}

/// A resource in a module: `null_resource.a`, `data.sim_object.b`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Resource {
    pub mode: ResourceMode,
    pub type_name: String,
    pub name: String,
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
        if self.mode == ResourceMode::Data {
            write!(f, "data.")?;
        }
        write!(f, "{}.{}", self.type_name, self.name)
    }
}

/// The key of one instance of a resource: none (no `count`/`for_each`), an
/// integer (`count`) or a string (`for_each`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum InstanceKey {
    None,
    Int(i64),
    Str(String),
}

impl fmt::Display for InstanceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::None => Ok(()),
            InstanceKey::Int(i) => write!(f, "[{i}]"),
            InstanceKey::Str(s) => write!(f, "[{}]", quote(s)),
        }
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
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

/// A path of module calls from the root; empty is the root module.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ModuleInstance(pub Vec<(String, InstanceKey)>);

impl ModuleInstance {
    pub fn root() -> ModuleInstance {
        ModuleInstance(Vec::new())
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
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

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid address {input:?}: {reason}")]
pub struct AddrParseError {
    pub input: String,
    pub reason: String,
}

/// Splits `a.b["x.y"][0].c` into steps: names and bracketed keys.
fn tokenize(input: &str) -> Result<Vec<(String, Option<InstanceKey>)>, String> {
    let mut out: Vec<(String, Option<InstanceKey>)> = Vec::new();
    let chars: Vec<char> = input.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
            i += 1;
        }
        let name: String = chars[start..i].iter().collect();
        if name.is_empty() {
            return Err("empty name".into());
        }
        let mut key = None;
        if i < chars.len() && chars[i] == '[' {
            let close_from = i + 1;
            if chars.get(close_from) == Some(&'"') {
                let mut j = close_from + 1;
                let mut s = String::new();
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' && j + 1 < chars.len() {
                        j += 1;
                    }
                    s.push(chars[j]);
                    j += 1;
                }
                if chars.get(j + 1) != Some(&']') {
                    return Err("unterminated key".into());
                }
                key = Some(InstanceKey::Str(s));
                i = j + 2;
            } else {
                let end = chars[close_from..]
                    .iter()
                    .position(|c| *c == ']')
                    .ok_or("unterminated index")?;
                let text: String = chars[close_from..close_from + end].iter().collect();
                let n = text
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| format!("invalid index {text:?}"))?;
                key = Some(InstanceKey::Int(n));
                i = close_from + end + 1;
            }
        }
        out.push((name, key));
        if i < chars.len() {
            if chars[i] != '.' {
                return Err(format!("unexpected {:?}", chars[i]));
            }
            i += 1;
            if i == chars.len() {
                return Err("trailing dot".into());
            }
        }
    }
    Ok(out)
}

impl FromStr for AbsResourceInstance {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: &str| AddrParseError {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let steps = tokenize(s).map_err(|r| err(&r))?;
        let mut rest = &steps[..];
        let mut module = Vec::new();
        while rest.len() >= 2 && rest[0].0 == "module" && rest[0].1.is_none() {
            module.push((
                rest[1].0.clone(),
                rest[1].1.clone().unwrap_or(InstanceKey::None),
            ));
            rest = &rest[2..];
        }
        let mode = if rest
            .first()
            .is_some_and(|(n, k)| n == "data" && k.is_none())
        {
            rest = &rest[1..];
            ResourceMode::Data
        } else {
            ResourceMode::Managed
        };
        match rest {
            [(type_name, None), (name, key)] => Ok(AbsResourceInstance {
                module: ModuleInstance(module),
                resource: ResourceInstance {
                    resource: Resource {
                        mode,
                        type_name: type_name.clone(),
                        name: name.clone(),
                    },
                    key: key.clone().unwrap_or(InstanceKey::None),
                },
            }),
            _ => Err(err(
                "expected a resource address such as null_resource.a or sim_object.b[0]",
            )),
        }
    }
}

impl FromStr for AbsResource {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let inst: AbsResourceInstance = s.parse()?;
        if inst.resource.key != InstanceKey::None {
            return Err(AddrParseError {
                input: s.into(),
                reason: "a resource address has no instance key".into(),
            });
        }
        Ok(inst.containing_resource())
    }
}

/// A provider's source address: `registry.terraform.io/hashicorp/null`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProviderAddr {
    pub hostname: String,
    pub namespace: String,
    pub type_name: String,
}

pub const DEFAULT_REGISTRY: &str = "registry.terraform.io";

impl ProviderAddr {
    pub fn new(namespace: &str, type_name: &str) -> ProviderAddr {
        ProviderAddr {
            hostname: DEFAULT_REGISTRY.into(),
            namespace: namespace.into(),
            type_name: type_name.into(),
        }
    }

    /// Terraform's legacy rule: a provider with no `required_providers` entry
    /// is `hashicorp/<local name>`.
    pub fn implied(local_name: &str) -> ProviderAddr {
        ProviderAddr::new("hashicorp", local_name)
    }
}

impl fmt::Display for ProviderAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.hostname, self.namespace, self.type_name)
    }
}

impl FromStr for ProviderAddr {
    type Err = AddrParseError;

    /// Accepts `type`, `namespace/type` and `hostname/namespace/type`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split('/').collect();
        let valid = |p: &str| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        };
        if !parts.iter().all(|p| valid(p)) {
            return Err(AddrParseError {
                input: s.into(),
                reason: "invalid provider source address".into(),
            });
        }
        match parts[..] {
            [t] => Ok(ProviderAddr::new("hashicorp", t)),
            [n, t] => Ok(ProviderAddr::new(n, t)),
            [h, n, t] => Ok(ProviderAddr {
                hostname: h.into(),
                namespace: n.into(),
                type_name: t.into(),
            }),
            _ => Err(AddrParseError {
                input: s.into(),
                reason: "expected [hostname/]namespace/type".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_addresses_round_trip() {
        for s in [
            "null_resource.a",
            "sim_object.b[0]",
            "sim_object.c[\"key.with.dots\"]",
            "data.null_data_source.x",
            "module.net.sim_object.d[3]",
            "module.a[\"x\"].module.b.null_resource.e",
        ] {
            let a: AbsResourceInstance = s.parse().unwrap();
            assert_eq!(a.to_string(), s);
        }
    }

    #[test]
    fn bad_addresses_are_rejected() {
        for s in [
            "",
            "null_resource",
            "a.b.c",
            "x.y[",
            "x.y[z]",
            "x.",
            "x.y[0]z",
        ] {
            assert!(
                s.parse::<AbsResourceInstance>().is_err(),
                "{s} should not parse"
            );
        }
    }

    #[test]
    fn addresses_order_by_type_name_then_key() {
        let mut v: Vec<AbsResourceInstance> = ["b.x[1]", "a.y", "b.x[0]"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        v.sort();
        let names: Vec<String> = v.iter().map(|a| a.to_string()).collect();
        assert_eq!(names, ["a.y", "b.x[0]", "b.x[1]"]);
    }

    #[test]
    fn provider_sources_default_like_terraform() {
        assert_eq!(
            "hashicorp/null"
                .parse::<ProviderAddr>()
                .unwrap()
                .to_string(),
            "registry.terraform.io/hashicorp/null"
        );
        assert_eq!(
            "null".parse::<ProviderAddr>().unwrap(),
            ProviderAddr::implied("null")
        );
        assert_eq!(
            "example.com/fleetform/sim"
                .parse::<ProviderAddr>()
                .unwrap()
                .hostname,
            "example.com"
        );
        assert!("a/b/c/d".parse::<ProviderAddr>().is_err());
    }

    #[test]
    fn implied_provider_is_the_type_prefix() {
        assert_eq!(
            Resource::managed("sim_object", "a").implied_provider(),
            "sim"
        );
    }
}
