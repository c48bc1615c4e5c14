//! Addresses, as OpenTofu's `internal/addrs` has them: modules (static
//! paths and instances), module calls, resources (in a module, in a module
//! instance, across all instances), output values, provider configurations,
//! and the targets that `-target`/`-exclude`/`-replace` name.
//!
//! Addresses are immutable values: `Display` and `FromStr` round-trip, and
//! they are `Ord + Hash` so they serve as map keys.

mod key;
mod module;
mod output;
mod parse;
mod provider;
mod resource;
mod target;

pub use key::InstanceKey;
pub use module::{AbsModuleCall, Module, ModuleCall, ModuleInstance};
pub use output::AbsOutputValue;
pub use parse::AddrParseError;
pub use provider::{AbsProviderConfig, DEFAULT_REGISTRY, LocalProviderConfig, ProviderAddr};
pub use resource::{
    AbsResource, AbsResourceInstance, ConfigResource, Resource, ResourceInstance, ResourceMode,
};
pub use target::Target;

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

    #[test]
    fn provider_configs_round_trip() {
        for s in [
            "provider[\"registry.terraform.io/hashicorp/aws\"]",
            "provider[\"registry.terraform.io/hashicorp/aws\"].west",
            "module.a.module.b.provider[\"example.com/x/sim\"]",
        ] {
            let p: AbsProviderConfig = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
        }
        assert!("provider[\"a/b\"].".parse::<AbsProviderConfig>().is_err());
        assert!(
            "module.a[0].provider[\"a/b\"]"
                .parse::<AbsProviderConfig>()
                .is_err()
        );
        assert_eq!(
            "aws.west".parse::<LocalProviderConfig>().unwrap(),
            LocalProviderConfig::new("aws", Some("west"))
        );
        assert!("aws.west.x".parse::<LocalProviderConfig>().is_err());
    }

    #[test]
    fn module_paths_and_instances_relate() {
        let mi: ModuleInstance = "module.a[\"x\"].module.b[0]".parse().unwrap();
        assert_eq!(mi.module().to_string(), "module.a.module.b");
        let call = mi.call().unwrap();
        assert_eq!(call.to_string(), "module.a[\"x\"].module.b");
        assert_eq!(call.instance(InstanceKey::Int(0)), mi);
        let (parent, name, key) = mi.parent().unwrap();
        assert_eq!(
            (parent.to_string().as_str(), name, key),
            ("module.a[\"x\"]", "b", &InstanceKey::Int(0))
        );
        assert!("module.a[0]".parse::<Module>().is_err());
        assert!(Module::root().contains(&mi.module()));
        let r: AbsResourceInstance = "module.a[\"x\"].null_resource.c[2]".parse().unwrap();
        assert_eq!(r.config_resource().to_string(), "module.a.null_resource.c");
    }
}
