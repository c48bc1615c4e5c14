//! Pass 2: the provider configuration of every resource, by Terraform's
//! rules, and a node per configuration used.
//!
//! A resource names a provider configuration by local name (`aws`,
//! `aws.west`, implied by its type), which its module maps to a provider
//! address. The configuration it gets is the first of:
//! 1. a `provider` block for that address and alias in its own module;
//! 2. in the root module, an implied empty configuration;
//! 3. what the module call passes (`providers = { aws = aws.west }`),
//!    resolved in the calling module;
//! 4. otherwise the default (non-aliased) configuration is inherited from
//!    the calling module, also when the call passes others (Terraform
//!    1.11 does so); an alias must be passed explicitly.
//!
//! A resource that is only in state keeps the configuration its state
//! records: it must still be in the configuration (an implied default one
//! of the root always is), or planning stops, as Terraform's does.

use super::{ConfigGraph, ConfigNode};
use crate::config::Config;
use fleetform_shared::addr::{AbsProviderConfig, ConfigResource, LocalProviderConfig, Module};
use fleetform_shared::diag::{Diagnostic, Diagnostics};

pub(super) fn add(
    g: &mut ConfigGraph,
    config: &Config,
    orphans: &[(ConfigResource, AbsProviderConfig)],
    diags: &mut Diagnostics,
) {
    for node in config.modules() {
        for key in node.module.providers.keys() {
            let local: LocalProviderConfig = match key.parse() {
                Ok(l) => l,
                Err(_) => continue,
            };
            let p = AbsProviderConfig {
                module: node.path.clone(),
                provider: node.module.provider_addr(&local.local_name),
                alias: local.alias,
            };
            g.add(ConfigNode::Provider(p));
        }
        for (r, block) in &node.module.resources {
            let local: LocalProviderConfig = match block.provider.parse() {
                Ok(l) => l,
                Err(_) => LocalProviderConfig::new(&block.provider, None),
            };
            let p = match resolve_provider(config, &node.path, &local) {
                Ok(p) => p,
                Err(d) => {
                    diags.push(d.at(block.decl_range.clone()));
                    continue;
                }
            };
            let cr = ConfigResource {
                module: node.path.clone(),
                resource: r.clone(),
            };
            let pn = ConfigNode::Provider(p.clone());
            g.add(pn.clone());
            g.depend(&ConfigNode::Resource(cr.clone()), &pn);
            g.resource_providers.insert(cr, p);
        }
    }
    for (r, p) in orphans {
        if g.resource_providers.contains_key(r) {
            continue;
        }
        let implied = p.module.is_root() && p.alias.is_none();
        let declared = config.module(&p.module).is_some_and(|node| {
            node.module.providers.keys().any(|k| {
                k.parse::<LocalProviderConfig>().is_ok_and(|l| {
                    l.alias == p.alias && node.module.provider_addr(&l.local_name) == p.provider
                })
            })
        });
        if !implied && !declared {
            diags.push(configuration_not_present(r, p));
            continue;
        }
        g.add(ConfigNode::Provider(p.clone()));
        g.resource_providers.insert(r.clone(), p.clone());
    }
}

/// Terraform's words when an object only in state needs a provider
/// configuration that is gone.
fn configuration_not_present(r: &ConfigResource, p: &AbsProviderConfig) -> Diagnostic {
    Diagnostic::error(
        "Provider configuration not present",
        format!(
            "To work with {r} (orphan) its original provider configuration at {p} is required, but it has been removed. This occurs when a provider configuration is removed while objects created by that provider still exist in the state. Re-add the provider configuration to destroy {r} (orphan), after which you can remove the provider configuration again."
        ),
    )
}

/// The provider configuration that `local` in module `path` refers to.
pub fn resolve_provider(
    config: &Config,
    path: &Module,
    local: &LocalProviderConfig,
) -> Result<AbsProviderConfig, Diagnostic> {
    let node = config
        .module(path)
        .ok_or_else(|| Diagnostic::error("Unknown module", format!("no module {path}")))?;
    let addr = node.module.provider_addr(&local.local_name);
    let declared = node.module.providers.keys().any(|k| {
        k.parse::<LocalProviderConfig>().is_ok_and(|l| {
            l.alias == local.alias && node.module.provider_addr(&l.local_name) == addr
        })
    });
    let here = AbsProviderConfig {
        module: path.clone(),
        provider: addr.clone(),
        alias: local.alias.clone(),
    };
    if declared {
        return Ok(here);
    }
    let Some((parent, _)) = path.parent() else {
        return Ok(here);
    };
    let call = config.call(path).expect("a child module has a call");
    let parent_module = &config.module(&parent).expect("parent exists").module;
    let passed = call.providers.iter().find(|(child, _, _)| {
        child.alias == local.alias && node.module.provider_addr(&child.local_name) == addr
    });
    if let Some((_, in_parent, _)) = passed {
        // The parent's name may differ; what it resolves to is the parent's.
        let parent_addr = parent_module.provider_addr(&in_parent.local_name);
        if parent_addr != addr {
            return Err(Diagnostic::error(
                "Invalid type for provider module argument",
                format!(
                    "Cannot pass a configuration of {parent_addr} as the provider {local} of module {path}, which needs {addr}."
                ),
            ));
        }
        return resolve_provider(config, &parent, in_parent);
    }
    // A default configuration the call does not pass is inherited even
    // where the call passes others: Terraform 1.11 places
    // `module.m.random_id.b` under the root's `provider[".../random"]`
    // when the call says only `providers = { null = null.two }`.
    if local.alias.is_some() {
        return Err(missing_alias(path, local));
    }
    // Inherit the calling module's default configuration of this provider,
    // whatever local name it uses there.
    let parent_local = parent_module
        .required_providers
        .iter()
        .find(|(_, r)| r.source == addr)
        .map(|(name, _)| name.clone())
        .unwrap_or_else(|| addr.type_name.to_string());
    resolve_provider(
        config,
        &parent,
        &LocalProviderConfig::new(&parent_local, None),
    )
}

fn missing_alias(path: &Module, local: &LocalProviderConfig) -> Diagnostic {
    Diagnostic::error(
        "Provider configuration not present",
        format!(
            "Module {path} uses the provider configuration {local}, which it neither declares nor receives: pass it in the module call with providers = {{ {local} = ... }}."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_config;

    fn config(files: &[(&str, &str)]) -> Config {
        let files = files
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let (c, d) = load_config(&files);
        assert!(!d.has_errors(), "{d}");
        c.unwrap()
    }

    fn resolve(c: &Config, path: &str, local: &str) -> Result<String, String> {
        let path: Module = if path.is_empty() {
            Module::root()
        } else {
            path.parse().unwrap()
        };
        resolve_provider(c, &path, &local.parse().unwrap())
            .map(|p| p.to_string())
            .map_err(|d| d.summary)
    }

    #[test]
    fn configurations_are_inherited_passed_or_implied_by_address() {
        let c = config(&[
            (
                "main.tf",
                "terraform {\n  required_providers {\n    s = { source = \"acme/sim\" }\n  }\n}\nprovider \"s\" {}\nprovider \"s\" {\n  alias = \"west\"\n}\nmodule \"a\" {\n  source = \"./a\"\n}\nmodule \"b\" {\n  source    = \"./a\"\n  providers = { sim = s.west }\n}\n",
            ),
            (
                "a/main.tf",
                "terraform {\n  required_providers {\n    sim = { source = \"acme/sim\" }\n  }\n}\nresource \"sim_x\" \"r\" {}\nresource \"null_resource\" \"n\" {}\n",
            ),
        ]);
        // Inherited: the root's default configuration, though named `s` there.
        assert_eq!(
            resolve(&c, "module.a", "sim"),
            Ok("provider[\"registry.terraform.io/acme/sim\"]".into())
        );
        // Passed: the alias the call names.
        assert_eq!(
            resolve(&c, "module.b", "sim"),
            Ok("provider[\"registry.terraform.io/acme/sim\"].west".into())
        );
        // With a providers argument that does not name it: inherited all the
        // same, implied at the root (as Terraform 1.11 resolves it).
        assert_eq!(
            resolve(&c, "module.b", "null"),
            Ok("provider[\"registry.terraform.io/hashicorp/null\"]".into())
        );
        // Without one: inherited, implied at the root.
        assert_eq!(
            resolve(&c, "module.a", "null"),
            Ok("provider[\"registry.terraform.io/hashicorp/null\"]".into())
        );
        // An alias the call does not pass is an error.
        assert_eq!(
            resolve(&c, "module.a", "sim.east"),
            Err("Provider configuration not present".into())
        );
    }

    /// `null` is a keyword and a provider: `null = null.two` in a call's
    /// providers names the null provider's configuration `two` (accepted by
    /// Terraform 1.11), and a provider the call does not name is the root's.
    #[test]
    fn the_null_provider_is_passed_by_its_keyword_name() {
        let c = config(&[
            (
                "main.tf",
                "provider \"null\" {\n  alias = \"two\"\n}\nmodule \"m\" {\n  source = \"./m\"\n  providers = {\n    null = null.two\n  }\n}\nresource \"null_resource\" \"r\" {\n  provider = null.two\n}\n",
            ),
            (
                "m/main.tf",
                "resource \"null_resource\" \"a\" {}\nresource \"random_id\" \"b\" {\n  byte_length = 2\n}\n",
            ),
        ]);
        assert_eq!(
            resolve(&c, "module.m", "null"),
            Ok("provider[\"registry.terraform.io/hashicorp/null\"].two".into())
        );
        assert_eq!(
            resolve(&c, "module.m", "random"),
            Ok("provider[\"registry.terraform.io/hashicorp/random\"]".into())
        );
        let root = &c.module(&Module::root()).unwrap().module;
        let r = root.resources.values().next().unwrap();
        assert_eq!(r.provider, "null.two");
    }
}
