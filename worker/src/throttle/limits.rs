//! Per-provider concurrency limits as a worker is given them
//! (`--provider-limit NAME=N`, `FLEETFORM_PROVIDER_LIMITS=NAME=N,...`).
//! NAME is a provider's type name (`aws`: every provider of that type,
//! whatever its namespace) or its source address (`hashicorp/aws`,
//! `registry.terraform.io/hashicorp/aws`); an address is more specific
//! and wins over a type name.

use fleetform_shared::addr::ProviderAddr;

/// Which providers a limit is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderMatch {
    TypeName(String),
    Source(ProviderAddr),
}

/// `NAME=N`: at most N calls to the provider in flight on the worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderLimit {
    pub provider: ProviderMatch,
    pub limit: usize,
}

impl std::str::FromStr for ProviderLimit {
    type Err = String;

    fn from_str(s: &str) -> Result<ProviderLimit, String> {
        let bad = |why: &str| {
            format!(
                "provider limit {s:?}: {why} (expected NAME=N, e.g. aws=10 or hashicorp/aws=10)"
            )
        };
        let (name, n) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        let (name, n) = (name.trim(), n.trim());
        let limit = match n.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(bad("N must be a whole number of at least 1")),
        };
        let provider = if name.contains('/') {
            ProviderMatch::Source(name.parse().map_err(|_| bad("not a provider address"))?)
        } else if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            ProviderMatch::TypeName(name.to_string())
        } else {
            return Err(bad("not a provider type name"));
        };
        Ok(ProviderLimit { provider, limit })
    }
}

/// The limits a worker was given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProviderLimits(Vec<ProviderLimit>);

impl ProviderLimits {
    pub fn new(limits: Vec<ProviderLimit>) -> ProviderLimits {
        ProviderLimits(limits)
    }

    /// The limit for `addr`: by address, else by type name; the last one
    /// given wins among equals.
    pub fn for_provider(&self, addr: &ProviderAddr) -> Option<usize> {
        let by = |wanted: &dyn Fn(&ProviderMatch) -> bool| {
            self.0
                .iter()
                .rev()
                .find(|l| wanted(&l.provider))
                .map(|l| l.limit)
        };
        by(&|m| matches!(m, ProviderMatch::Source(a) if a == addr))
            .or_else(|| by(&|m| matches!(m, ProviderMatch::TypeName(t) if *t == addr.type_name)))
    }

    /// Parses `FLEETFORM_PROVIDER_LIMITS`'s value: `NAME=N` separated by
    /// commas (empty: none).
    pub fn parse_list(s: &str) -> Result<ProviderLimits, String> {
        s.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(ProviderLimits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_win_over_type_names() {
        let limits =
            ProviderLimits::parse_list("aws=10, registry.terraform.io/hashicorp/aws=4,sim=2")
                .unwrap();
        let addr = |s: &str| s.parse::<ProviderAddr>().unwrap();
        assert_eq!(limits.for_provider(&addr("hashicorp/aws")), Some(4));
        assert_eq!(limits.for_provider(&addr("someone/aws")), Some(10));
        assert_eq!(limits.for_provider(&addr("fleetform/sim")), Some(2));
        assert_eq!(limits.for_provider(&addr("hashicorp/null")), None);
        let short = ProviderLimits::parse_list("hashicorp/aws=3").unwrap();
        assert_eq!(short.for_provider(&addr("hashicorp/aws")), Some(3));
        assert_eq!(
            ProviderLimits::parse_list(" ").unwrap(),
            ProviderLimits::default()
        );
    }

    #[test]
    fn bad_settings_say_what_is_expected() {
        for bad in ["aws", "aws=0", "aws=-1", "aws=x", "=3", "a b=3", "a//b=3"] {
            let e = bad.parse::<ProviderLimit>().unwrap_err();
            assert!(e.contains("expected NAME=N"), "{bad}: {e}");
        }
    }
}
