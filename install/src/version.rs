//! Provider versions and version constraints as Terraform writes them
//! (`= 1.2.3`, `!= 1.2.3`, `> >= < <=`, `~> 1.2` pessimistic, comma-separated
//! conjunctions), and selection of the newest version that meets them.
//!
//! The `semver` crate is not used: it has no `~>` or `!=`, its `~1.2` means
//! `>= 1.2, < 1.3` where Terraform's `~> 1.2` means `>= 1.2, < 2.0`, and its
//! pre-release rules differ from Terraform's (a pre-release is selected only
//! by an exact `=` constraint naming it).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A semantic version `MAJOR.MINOR.PATCH[-PRERELEASE][+METADATA]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub prerelease: String,
    pub metadata: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid version {input:?}: {reason}")]
pub struct VersionError {
    pub input: String,
    pub reason: String,
}

fn version_error(input: &str, reason: impl Into<String>) -> VersionError {
    VersionError {
        input: input.to_string(),
        reason: reason.into(),
    }
}

/// The numeric parts given (1 to 3) and the version with the rest zero.
fn parse_partial(s: &str) -> Result<(Version, usize), VersionError> {
    if s.starts_with('v') {
        return Err(version_error(s, "a \"v\" prefix should not be used"));
    }
    let (rest, metadata) = match s.split_once('+') {
        Some((r, m)) => (r, m.to_string()),
        None => (s, String::new()),
    };
    let (core, prerelease) = match rest.split_once('-') {
        Some((c, p)) => (c, p.to_string()),
        None => (rest, String::new()),
    };
    let extra_ok = |e: &str| {
        e.split('.')
            .all(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    };
    if (s.contains('-') && !extra_ok(&prerelease)) || (s.contains('+') && !extra_ok(&metadata)) {
        return Err(version_error(s, "invalid pre-release or metadata suffix"));
    }
    let nums: Vec<&str> = core.split('.').collect();
    if nums.len() > 3 {
        return Err(version_error(
            s,
            "too many numbered portions; only three are allowed (major, minor, patch)",
        ));
    }
    let mut parts = [0u64; 3];
    for (i, n) in nums.iter().enumerate() {
        if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()) {
            return Err(version_error(s, format!("{n:?} is not a number")));
        }
        parts[i] = n
            .parse()
            .map_err(|_| version_error(s, format!("{n} is too large")))?;
    }
    let v = Version {
        major: parts[0],
        minor: parts[1],
        patch: parts[2],
        prerelease,
        metadata,
    };
    Ok((v, nums.len()))
}

impl FromStr for Version {
    type Err = VersionError;

    /// An exact version: all three numbers are required.
    fn from_str(s: &str) -> Result<Version, VersionError> {
        let (v, count) = parse_partial(s)?;
        if count != 3 {
            return Err(version_error(
                s,
                "a version needs major, minor and patch numbers",
            ));
        }
        Ok(v)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.prerelease.is_empty() {
            write!(f, "-{}", self.prerelease)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

impl Version {
    pub fn new(major: u64, minor: u64, patch: u64) -> Version {
        Version {
            major,
            minor,
            patch,
            prerelease: String::new(),
            metadata: String::new(),
        }
    }

    pub fn is_prerelease(&self) -> bool {
        !self.prerelease.is_empty()
    }

    /// Semantic-version precedence: metadata is ignored, a pre-release sorts
    /// before its release, pre-release identifiers compare numerically when
    /// both are numbers.
    pub fn precedence(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.is_prerelease(), other.is_prerelease()) {
                (false, false) => Ordering::Equal,
                (false, true) => Ordering::Greater,
                (true, false) => Ordering::Less,
                (true, true) => compare_prerelease(&self.prerelease, &other.prerelease),
            })
    }
}

fn compare_prerelease(a: &str, b: &str) -> Ordering {
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let ord = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => x.cmp(y),
                };
                if ord != Ordering::Equal {
                    return ord;
                }
            }
        }
    }
}

impl Ord for Version {
    /// Precedence, then metadata so that the order agrees with `Eq`.
    fn cmp(&self, other: &Version) -> Ordering {
        self.precedence(other)
            .then_with(|| self.metadata.cmp(&other.metadata))
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Version) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    /// `~>`: the last given number may grow.
    Pessimistic,
}

/// One comparison: an operator and a version whose missing numbers are zero.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Term {
    op: Op,
    version: Version,
    /// How many numbers were written (`~> 1.2` → 2).
    given: usize,
}

impl Term {
    fn allows(&self, v: &Version) -> bool {
        let ord = v.precedence(&self.version);
        let same = ord == Ordering::Equal
            && (self.version.metadata.is_empty() || self.version.metadata == v.metadata);
        match self.op {
            Op::Eq => same,
            Op::Ne => !same,
            Op::Gt => ord == Ordering::Greater,
            Op::Ge => ord != Ordering::Less,
            Op::Lt => ord == Ordering::Less,
            Op::Le => ord != Ordering::Greater,
            Op::Pessimistic => {
                let b = &self.version;
                let upper = if self.given == 3 {
                    Version::new(b.major, b.minor + 1, 0)
                } else {
                    Version::new(b.major + 1, 0, 0)
                };
                ord != Ordering::Less && v.precedence(&upper) == Ordering::Less
            }
        }
    }
}

/// A conjunction of comparisons, e.g. `>= 1.2, < 2.0, != 1.5.0`.
/// The empty constraint allows every released version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionConstraints {
    terms: Vec<Term>,
    text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid version constraint {input:?}: {reason}")]
pub struct ConstraintError {
    pub input: String,
    pub reason: String,
}

impl FromStr for VersionConstraints {
    type Err = ConstraintError;

    fn from_str(s: &str) -> Result<VersionConstraints, ConstraintError> {
        let err = |reason: String| ConstraintError {
            input: s.to_string(),
            reason,
        };
        let mut terms = Vec::new();
        if s.trim().is_empty() {
            return Ok(VersionConstraints::default());
        }
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(err("empty constraint between commas".into()));
            }
            let op_len = part
                .find(|c: char| c.is_ascii_digit() || c.is_whitespace() || c == 'v')
                .unwrap_or(part.len());
            let (op_text, rest) = part.split_at(op_len);
            let op = match op_text {
                "" | "=" => Op::Eq,
                "!=" => Op::Ne,
                ">" => Op::Gt,
                ">=" => Op::Ge,
                "<" => Op::Lt,
                "<=" => Op::Le,
                "~>" => Op::Pessimistic,
                "=<" => return Err(err("invalid operator \"=<\"; did you mean \"<=\"?".into())),
                "=>" => return Err(err("invalid operator \"=>\"; did you mean \">=\"?".into())),
                other => return Err(err(format!("invalid operator {other:?}"))),
            };
            let text = rest.trim_start();
            if text.contains(char::is_whitespace) {
                return Err(err(format!("missing comma after {part:?}")));
            }
            let (version, given) = parse_partial(text).map_err(|e| err(e.reason))?;
            terms.push(Term { op, version, given });
        }
        Ok(VersionConstraints {
            terms,
            text: s.trim().to_string(),
        })
    }
}

impl fmt::Display for VersionConstraints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            f.write_str("any version")
        } else {
            f.write_str(&self.text)
        }
    }
}

impl VersionConstraints {
    /// False for the empty constraint (any released version).
    pub fn is_constrained(&self) -> bool {
        !self.terms.is_empty()
    }

    /// Whether `v` meets every term. A pre-release version is allowed only
    /// when an exact (`=`) term names it, as Terraform documents.
    pub fn allows(&self, v: &Version) -> bool {
        if v.is_prerelease()
            && !self
                .terms
                .iter()
                .any(|t| t.op == Op::Eq && t.version.precedence(v) == Ordering::Equal)
        {
            return false;
        }
        self.terms.iter().all(|t| t.allows(v))
    }

    /// The newest of `versions` that the constraints allow.
    pub fn newest<'a>(
        &self,
        versions: impl IntoIterator<Item = &'a Version>,
    ) -> Option<&'a Version> {
        versions
            .into_iter()
            .filter(|v| self.allows(v))
            .max_by(|a, b| a.precedence(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        s.parse().unwrap()
    }

    fn allows(c: &str, version: &str) -> bool {
        c.parse::<VersionConstraints>().unwrap().allows(&v(version))
    }

    #[test]
    fn versions_order_by_semantic_precedence() {
        assert!(v("1.10.0") > v("1.9.9"));
        assert!(v("1.0.0-alpha") < v("1.0.0"));
        assert!(v("1.0.0-alpha.2") < v("1.0.0-alpha.10"));
        assert!(v("1.0.0-alpha.1") < v("1.0.0-beta"));
        assert_eq!(v("1.0.0+a").precedence(&v("1.0.0+b")), Ordering::Equal);
        assert_eq!(v("2.1.0-rc.1+build.5").to_string(), "2.1.0-rc.1+build.5");
        for bad in ["1.2", "v1.2.3", "1.2.3.4", "1.x.0", "1.2.3-", ""] {
            assert!(bad.parse::<Version>().is_err(), "{bad}");
        }
    }

    #[test]
    fn pessimistic_operator_bounds_the_last_given_number() {
        assert!(allows("~> 1.2", "1.2.0"));
        assert!(allows("~> 1.2", "1.9.3"));
        assert!(!allows("~> 1.2", "2.0.0"));
        assert!(!allows("~> 1.2", "1.1.9"));
        assert!(allows("~> 1.2.3", "1.2.9"));
        assert!(!allows("~> 1.2.3", "1.3.0"));
        assert!(!allows("~> 1.2.3", "1.2.2"));
        assert!(allows("~> 1", "1.7.0"));
        assert!(!allows("~> 1", "2.0.0"));
        assert!(allows("~>3.2", "3.2.1"));
    }

    #[test]
    fn comparison_operators_and_conjunctions() {
        assert!(allows("1.2.3", "1.2.3"));
        assert!(allows("= 1.2", "1.2.0"));
        assert!(!allows("= 1.2", "1.2.1"));
        assert!(!allows("!= 1.2.3", "1.2.3"));
        assert!(allows("!= 1.2.3", "1.2.4"));
        assert!(allows("> 1.2.3", "1.2.4") && !allows("> 1.2.3", "1.2.3"));
        assert!(allows(">= 1.2.3", "1.2.3") && !allows(">= 1.2.3", "1.2.2"));
        assert!(allows("< 2", "1.99.0") && !allows("< 2", "2.0.0"));
        assert!(allows("<= 2.0.0", "2.0.0") && !allows("<= 2.0.0", "2.0.1"));
        assert!(allows(">= 1.0, < 2.0, != 1.5.0", "1.4.0"));
        assert!(!allows(">= 1.0, < 2.0, != 1.5.0", "1.5.0"));
        assert!(!allows(">= 1.0, < 2.0", "2.1.0"));
        assert!(allows("", "0.0.1"));
    }

    #[test]
    fn prereleases_need_an_exact_constraint() {
        assert!(!allows(">= 1.0.0", "2.0.0-beta1"));
        assert!(!allows("~> 2.0", "2.1.0-rc1"));
        assert!(!allows("", "2.1.0-rc1"));
        assert!(allows("= 2.1.0-rc1", "2.1.0-rc1"));
        assert!(allows("2.1.0-rc1, >= 2", "2.1.0-rc1"));
        assert!(!allows("= 2.1.0-rc1", "2.1.0-rc2"));
    }

    #[test]
    fn bad_constraints_are_explained() {
        for (text, reason) in [
            ("=> 1.0", "did you mean \">=\"?"),
            ("=< 1.0", "did you mean \"<=\"?"),
            (">= v1.0", "\"v\" prefix"),
            (">= 1.0 < 2.0", "missing comma"),
            (">= 1.0,", "empty constraint"),
            ("^1.0", "invalid operator \"^\""),
            ("~> 1.2.3.4", "too many numbered portions"),
            (">= 1.x", "not a number"),
        ] {
            let e = text.parse::<VersionConstraints>().unwrap_err();
            assert!(e.to_string().contains(reason), "{text}: {e}");
        }
    }

    #[test]
    fn newest_picks_the_highest_allowed_version() {
        let all: Vec<Version> = ["3.1.0", "3.2.1", "3.10.0", "4.0.0", "3.11.0-beta"]
            .iter()
            .map(|s| v(s))
            .collect();
        let c: VersionConstraints = "~> 3.2".parse().unwrap();
        assert_eq!(c.newest(&all), Some(&v("3.10.0")));
        let c: VersionConstraints = "< 3.0".parse().unwrap();
        assert_eq!(c.newest(&all), None);
        assert_eq!(
            VersionConstraints::default().newest(&all),
            Some(&v("4.0.0"))
        );
    }
}
