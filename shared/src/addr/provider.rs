//! Provider addresses: a provider's source address ([`ProviderAddr`]), a
//! provider configuration as a module refers to it ([`LocalProviderConfig`],
//! `aws.west`) and as state and plans record it ([`AbsProviderConfig`],
//! `module.a.provider["registry.terraform.io/hashicorp/aws"].west`).

use super::module::Module;
use super::parse::AddrParseError;
use crate::name::Name;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A provider's source address: `registry.terraform.io/hashicorp/null`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProviderAddr {
    pub hostname: Name,
    pub namespace: Name,
    pub type_name: Name,
}

pub const DEFAULT_REGISTRY: &str = "registry.terraform.io";
/// The hostname and namespace of providers built into Terraform (and
/// bundled with fleetform): `terraform.io/builtin/terraform`.
pub const BUILTIN_HOST: &str = "terraform.io";
pub const BUILTIN_NAMESPACE: &str = "builtin";

impl ProviderAddr {
    pub fn new(namespace: &str, type_name: &str) -> ProviderAddr {
        ProviderAddr {
            hostname: DEFAULT_REGISTRY.into(),
            namespace: namespace.into(),
            type_name: type_name.into(),
        }
    }

    /// Terraform's rule for a provider with no `required_providers` entry
    /// (`addrs.ImpliedProviderForUnqualifiedType`): `hashicorp/<local name>`,
    /// except that `terraform` is the built-in provider, not the
    /// unmaintained `registry.terraform.io/hashicorp/terraform`.
    pub fn implied(local_name: &str) -> ProviderAddr {
        if local_name == "terraform" {
            return ProviderAddr::builtin(local_name);
        }
        ProviderAddr::new("hashicorp", local_name)
    }

    /// A provider built into Terraform: `terraform.io/builtin/<type>`.
    pub fn builtin(type_name: &str) -> ProviderAddr {
        ProviderAddr {
            hostname: BUILTIN_HOST.into(),
            namespace: BUILTIN_NAMESPACE.into(),
            type_name: type_name.into(),
        }
    }

    /// Whether this is a built-in provider, which is never installed: it
    /// comes with the program (hostnames compare case-insensitively).
    pub fn is_builtin(&self) -> bool {
        self.hostname.eq_ignore_ascii_case(BUILTIN_HOST)
            && self.namespace.eq_ignore_ascii_case(BUILTIN_NAMESPACE)
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
            return Err(super::parse::error(s, "invalid provider source address"));
        }
        match parts[..] {
            [t] => Ok(ProviderAddr::new("hashicorp", t)),
            [n, t] => Ok(ProviderAddr::new(n, t)),
            [h, n, t] => Ok(ProviderAddr {
                hostname: h.into(),
                namespace: n.into(),
                type_name: t.into(),
            }),
            _ => Err(super::parse::error(s, "expected [hostname/]namespace/type")),
        }
    }
}

/// A provider configuration as a module names it: `aws` or `aws.west`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LocalProviderConfig {
    pub local_name: String,
    pub alias: Option<String>,
}

impl LocalProviderConfig {
    pub fn new(local_name: &str, alias: Option<&str>) -> LocalProviderConfig {
        LocalProviderConfig {
            local_name: local_name.to_string(),
            alias: alias.map(str::to_string),
        }
    }
}

impl fmt::Display for LocalProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.local_name)?;
        if let Some(a) = &self.alias {
            write!(f, ".{a}")?;
        }
        Ok(())
    }
}

impl FromStr for LocalProviderConfig {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let valid = |p: &str| {
            p.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        match s.split('.').collect::<Vec<_>>()[..] {
            [n] if valid(n) => Ok(LocalProviderConfig::new(n, None)),
            [n, a] if valid(n) && valid(a) => Ok(LocalProviderConfig::new(n, Some(a))),
            _ => Err(super::parse::error(
                s,
                "expected a provider configuration such as aws or aws.west",
            )),
        }
    }
}

/// A provider configuration in a module, as state and plans record it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AbsProviderConfig {
    pub module: Module,
    pub provider: ProviderAddr,
    pub alias: Option<String>,
}

impl fmt::Display for AbsProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.module.is_root() {
            write!(f, "{}.", self.module)?;
        }
        write!(f, "provider[\"{}\"]", self.provider)?;
        if let Some(a) = &self.alias {
            write!(f, ".{a}")?;
        }
        Ok(())
    }
}

impl FromStr for AbsProviderConfig {
    type Err = AddrParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |r: &str| super::parse::error(s, r);
        let start = s
            .find("provider[\"")
            .ok_or_else(|| err("expected provider[\"SOURCE\"]"))?;
        let module = match s[..start].strip_suffix('.') {
            Some(m) => m.parse::<Module>()?,
            None if start == 0 => Module::root(),
            None => return Err(err("expected a module path before provider")),
        };
        let rest = &s[start + "provider[\"".len()..];
        let end = rest
            .find("\"]")
            .ok_or_else(|| err("unterminated provider source"))?;
        let provider: ProviderAddr = rest[..end].parse()?;
        let alias = match &rest[end + 2..] {
            "" => None,
            a => Some(
                a.strip_prefix('.')
                    .filter(|a| !a.is_empty())
                    .ok_or_else(|| err("expected .ALIAS after the provider"))?
                    .to_string(),
            ),
        };
        Ok(AbsProviderConfig {
            module,
            provider,
            alias,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terraform_implies_the_builtin_provider() {
        let t = ProviderAddr::implied("terraform");
        assert_eq!(t.to_string(), "terraform.io/builtin/terraform");
        assert!(t.is_builtin());
        assert_eq!(
            ProviderAddr::implied("null").to_string(),
            "registry.terraform.io/hashicorp/null"
        );
        assert!(!ProviderAddr::implied("null").is_builtin());
        assert!(
            "Terraform.IO/Builtin/terraform"
                .parse::<ProviderAddr>()
                .unwrap()
                .is_builtin()
        );
        assert!(
            !"hashicorp/terraform"
                .parse::<ProviderAddr>()
                .unwrap()
                .is_builtin()
        );
        let config: AbsProviderConfig = "provider[\"terraform.io/builtin/terraform\"]"
            .parse()
            .unwrap();
        assert_eq!(config.provider, t);
    }
}
