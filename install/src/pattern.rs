//! Provider matching patterns of `include` and `exclude` in the CLI
//! configuration, as Terraform defines them: `hostname/namespace/type` or
//! `namespace/type` (hostname `registry.terraform.io`), where `*` matches any
//! type, any namespace (only with a wildcard type) or any hostname (only
//! with both others wildcards).

use fleetform_shared::addr::{DEFAULT_REGISTRY, ProviderAddr};
use std::fmt;
use std::str::FromStr;

const WILDCARD: &str = "*";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderPattern {
    pub hostname: String,
    pub namespace: String,
    pub type_name: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid provider matching pattern {input:?}: {reason}")]
pub struct PatternError {
    pub input: String,
    pub reason: String,
}

impl FromStr for ProviderPattern {
    type Err = PatternError;

    fn from_str(s: &str) -> Result<ProviderPattern, PatternError> {
        let err = |reason: &str| PatternError {
            input: s.to_string(),
            reason: reason.to_string(),
        };
        let parts: Vec<&str> = s.split('/').collect();
        let (hostname, namespace, type_name) = match parts[..] {
            [n, t] => (DEFAULT_REGISTRY.to_string(), n, t),
            [h, n, t] => {
                let valid_host = h == WILDCARD
                    || (!h.is_empty()
                        && h.chars()
                            .all(|c| c.is_alphanumeric() || c == '-' || c == '.' || c == ':'));
                if !valid_host {
                    return Err(err("invalid hostname"));
                }
                (h.to_lowercase(), n, t)
            }
            _ => return Err(err("must have either two or three slash-separated parts")),
        };
        let valid_part = |p: &str| {
            p == WILDCARD
                || (!p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        };
        if !valid_part(type_name) {
            return Err(err(
                "the provider type must either be the wildcard * or a provider type name",
            ));
        }
        if !valid_part(namespace) {
            return Err(err(
                "the namespace must either be the wildcard * or a literal namespace",
            ));
        }
        if hostname == WILDCARD && (namespace != WILDCARD || type_name != WILDCARD) {
            return Err(err(
                "hostname can be a wildcard only if both namespace and provider type are also wildcards",
            ));
        }
        if namespace == WILDCARD && type_name != WILDCARD {
            return Err(err(
                "namespace can be a wildcard only if the provider type is also a wildcard",
            ));
        }
        Ok(ProviderPattern {
            hostname,
            namespace: namespace.to_lowercase(),
            type_name: type_name.to_lowercase(),
        })
    }
}

impl fmt::Display for ProviderPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.hostname, self.namespace, self.type_name)
    }
}

impl ProviderPattern {
    pub fn matches(&self, addr: &ProviderAddr) -> bool {
        let part =
            |pattern: &str, value: &str| pattern == WILDCARD || pattern.eq_ignore_ascii_case(value);
        part(&self.hostname, &addr.hostname)
            && part(&self.namespace, &addr.namespace)
            && part(&self.type_name, &addr.type_name)
    }
}

/// Terraform's rule for one installation method: an address is handled
/// when it matches some `include` pattern (or there are none) and no
/// `exclude` pattern.
pub fn selects(
    include: &[ProviderPattern],
    exclude: &[ProviderPattern],
    addr: &ProviderAddr,
) -> bool {
    (include.is_empty() || include.iter().any(|p| p.matches(addr)))
        && !exclude.iter().any(|p| p.matches(addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> ProviderPattern {
        s.parse().unwrap()
    }

    fn addr(s: &str) -> ProviderAddr {
        s.parse().unwrap()
    }

    #[test]
    fn two_part_patterns_mean_the_public_registry() {
        assert!(p("hashicorp/null").matches(&addr("hashicorp/null")));
        assert!(!p("hashicorp/null").matches(&addr("example.com/hashicorp/null")));
        assert!(p("hashicorp/*").matches(&addr("hashicorp/random")));
        assert!(!p("hashicorp/*").matches(&addr("fleetform/sim")));
        assert_eq!(
            p("HashiCorp/Null").to_string(),
            "registry.terraform.io/hashicorp/null"
        );
    }

    #[test]
    fn wildcards_match_any_part() {
        assert!(p("registry.terraform.io/hashicorp/*").matches(&addr("hashicorp/null")));
        assert!(p("*/*/*").matches(&addr("example.com/acme/thing")));
        assert!(p("example.com/*/*").matches(&addr("example.com/acme/thing")));
        assert!(!p("example.com/*/*").matches(&addr("acme/thing")));
    }

    #[test]
    fn malformed_patterns_are_rejected() {
        for (s, reason) in [
            ("null", "two or three"),
            ("a/b/c/d", "two or three"),
            ("*/hashicorp/null", "hostname can be a wildcard only"),
            ("*/null", "namespace can be a wildcard only"),
            ("hashicorp/nu ll", "provider type"),
            ("hashi.corp/null", "namespace"),
        ] {
            let e = s.parse::<ProviderPattern>().unwrap_err();
            assert!(e.to_string().contains(reason), "{s}: {e}");
        }
    }

    #[test]
    fn include_and_exclude_combine() {
        let inc = [p("hashicorp/*")];
        let exc = [p("hashicorp/aws")];
        assert!(selects(&inc, &exc, &addr("hashicorp/null")));
        assert!(!selects(&inc, &exc, &addr("hashicorp/aws")));
        assert!(!selects(&inc, &exc, &addr("fleetform/sim")));
        assert!(selects(&[], &exc, &addr("fleetform/sim")));
        assert!(selects(&[], &[], &addr("hashicorp/aws")));
    }
}
