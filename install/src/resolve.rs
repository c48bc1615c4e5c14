//! Choosing a provider's executable the way Terraform installs providers:
//! `dev_overrides` first (any version, with a warning), then the newest
//! version allowed by the constraint among `FLEETFORM_PLUGIN_DIR` and the
//! CLI configuration's filesystem mirrors (or Terraform's implied mirror
//! directories), then fleetform's bundled providers when nothing else has
//! the provider. The sources themselves are described in [`crate::sources`].
//! Built-in providers (`terraform.io/builtin/terraform`) are different: they
//! come with fleetform, next to its executable, and, as in Terraform, no
//! installation method, override or version constraint applies to them.

use crate::sources::{
    Candidate, Environment, Package, Search, SearchKind, Sources, candidates, package_executable,
};
use crate::{Version, VersionConstraints};
use fleetform_shared::ProviderAddr;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

pub use crate::sources::PLUGIN_DIR_ENV;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResolveError {
    #[error("{}", not_found(.addr, .constraint.as_deref(), .searched, .available, .config_file.as_deref()))]
    NotFound {
        addr: String,
        /// The version constraint, when there is one.
        constraint: Option<String>,
        /// Every location that was looked at, in order, with notes.
        searched: Vec<String>,
        /// Versions present that the constraint rejected, with where.
        available: Vec<String>,
        /// The CLI configuration file that configured the search.
        config_file: Option<String>,
    },
    #[error("provider {addr}: {reason}")]
    Package { addr: String, reason: String },
    #[error("provider {addr}: {source}")]
    Constraint {
        addr: String,
        source: crate::ConstraintError,
    },
    /// A built-in provider that fleetform does not have or cannot use.
    #[error("provider {addr}: {reason}")]
    BuiltIn { addr: String, reason: String },
    /// The CLI configuration file is missing or invalid.
    #[error("{0}")]
    Config(String),
}

fn not_found(
    addr: &str,
    constraint: Option<&str>,
    searched: &[String],
    available: &[String],
    config_file: Option<&str>,
) -> String {
    let mut out = match constraint {
        Some(c) => format!("no available version of provider {addr} matches the constraint {c:?}"),
        None => format!("provider {addr} was not found"),
    };
    if !available.is_empty() {
        out.push_str(&format!(" (available: {})", available.join(", ")));
    }
    if searched.is_empty() {
        out.push_str("; no installation method includes it");
    } else {
        out.push_str(&format!("; searched: {}", searched.join(", ")));
    }
    if let Some(file) = config_file {
        out.push_str(&format!("; CLI configuration: {file}"));
    }
    out
}

/// The executable chosen for a provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub executable: PathBuf,
    /// `None` for a development override or an unversioned executable.
    pub version: Option<Version>,
}

/// Resolves providers against the sources of one environment, remembering
/// what it found (workers resolve once per provider, not once per task).
#[derive(Debug)]
pub struct Resolver {
    sources: Result<Sources, String>,
    platform: String,
    found: Mutex<HashMap<(ProviderAddr, Option<String>), Resolved>>,
}

impl Resolver {
    /// Sources from this process's environment and CLI configuration.
    pub fn from_env() -> Resolver {
        Resolver::new(&Environment::current())
    }

    pub fn new(env: &Environment) -> Resolver {
        Resolver::with_sources(Sources::load(env), platform())
    }

    pub fn with_sources(sources: Result<Sources, String>, platform: String) -> Resolver {
        Resolver {
            sources,
            platform,
            found: Mutex::default(),
        }
    }

    pub fn resolve(
        &self,
        addr: &ProviderAddr,
        constraint: Option<&str>,
    ) -> Result<Resolved, ResolveError> {
        let key = (addr.clone(), constraint.map(str::to_string));
        if let Some(r) = self.found.lock().expect("resolver lock").get(&key) {
            return Ok(r.clone());
        }
        let sources = self
            .sources
            .as_ref()
            .map_err(|e| ResolveError::Config(e.clone()))?;
        let constraints: VersionConstraints =
            constraint
                .unwrap_or("")
                .parse()
                .map_err(|source| ResolveError::Constraint {
                    addr: addr.to_string(),
                    source,
                })?;
        let resolved = resolve_with(sources, &self.platform, addr, &constraints)?;
        self.found
            .lock()
            .expect("resolver lock")
            .insert(key, resolved.clone());
        Ok(resolved)
    }
}

/// Resolves `addr` once from the current environment.
pub fn resolve_provider(
    addr: &ProviderAddr,
    constraint: Option<&str>,
) -> Result<PathBuf, ResolveError> {
    Resolver::from_env()
        .resolve(addr, constraint)
        .map(|r| r.executable)
}

/// Finds the executable for `addr` in plugin directories only (flat or
/// mirror layout), any version: for tests and tools pointing at a build.
/// Built-in providers are looked for in `dirs` as in the directory of the
/// fleetform executable.
pub fn resolve_in(addr: &ProviderAddr, dirs: &[PathBuf]) -> Result<PathBuf, ResolveError> {
    let each = |kind: fn(PathBuf) -> SearchKind| {
        dirs.iter()
            .map(|d| Search {
                kind: kind(d.clone()),
                include: Vec::new(),
                exclude: Vec::new(),
            })
            .collect()
    };
    let sources = if addr.is_builtin() {
        Sources {
            bundled: each(SearchKind::Bundled),
            ..Sources::default()
        }
    } else {
        Sources {
            searches: each(SearchKind::PluginDir),
            ..Sources::default()
        }
    };
    resolve_with(&sources, &platform(), addr, &VersionConstraints::default()).map(|r| r.executable)
}

fn resolve_with(
    sources: &Sources,
    platform: &str,
    addr: &ProviderAddr,
    constraints: &VersionConstraints,
) -> Result<Resolved, ResolveError> {
    if addr.is_builtin() {
        return resolve_builtin(sources, addr, constraints);
    }
    if let Some((_, dir)) = sources.dev_overrides.iter().find(|(a, _)| a == addr) {
        let executable =
            package_executable(dir, &addr.type_name).map_err(|reason| ResolveError::Package {
                addr: addr.to_string(),
                reason: format!("development override: {reason}"),
            })?;
        warn_dev_override(addr, dir);
        return Ok(Resolved {
            executable,
            version: None,
        });
    }
    let mut searched = Vec::new();
    let mut available = Vec::new();
    for group in [&sources.searches, &sources.bundled] {
        let mut found: Vec<Candidate> = Vec::new();
        for search in group.iter() {
            if !search.selects(addr) {
                continue;
            }
            searched.push(search.describe());
            found.extend(candidates(search, addr, platform));
        }
        if found.is_empty() {
            continue;
        }
        if let Some(c) = choose(&found, constraints) {
            return open(addr, c);
        }
        available.extend(found.iter().map(|c| match &c.version {
            Some(v) => format!("{v} in {}", package_path(&c.package).display()),
            None => package_path(&c.package).display().to_string(),
        }));
        // Something provides this address: the bundled providers stay out.
        break;
    }
    Err(ResolveError::NotFound {
        addr: addr.to_string(),
        constraint: constraints
            .is_constrained()
            .then(|| constraints.to_string()),
        searched,
        available,
        config_file: sources
            .config_file
            .as_ref()
            .map(|f| f.display().to_string()),
    })
}

/// The built-in provider types fleetform bundles (Terraform's
/// `builtInProviderTypes`).
const BUILTIN_TYPES: [&str; 1] = ["terraform"];

/// A built-in provider: only the executable bundled next to fleetform's
/// (`terraform-provider-<type>`), with Terraform's errors for a type it
/// does not have and for a version constraint.
fn resolve_builtin(
    sources: &Sources,
    addr: &ProviderAddr,
    constraints: &VersionConstraints,
) -> Result<Resolved, ResolveError> {
    let err = |reason: String| ResolveError::BuiltIn {
        addr: addr.to_string(),
        reason,
    };
    let type_name = addr.type_name.to_ascii_lowercase();
    if !BUILTIN_TYPES.contains(&type_name.as_str()) {
        return Err(err(format!(
            "this fleetform release has no built-in provider named {:?}",
            addr.type_name
        )));
    }
    if constraints.is_constrained() {
        return Err(err(
            "built-in providers do not support explicit version constraints".into(),
        ));
    }
    let file = format!("terraform-provider-{type_name}");
    let mut searched = Vec::new();
    for search in &sources.bundled {
        let SearchKind::Bundled(dir) = &search.kind else {
            continue;
        };
        let executable = dir.join(&file);
        if is_executable(&executable) {
            return Ok(Resolved {
                executable,
                version: None,
            });
        }
        searched.push(dir.display().to_string());
    }
    Err(err(format!(
        "the built-in provider is bundled with fleetform as the executable {file} next to the fleetform executable, but it is not there (searched: {}); reinstall fleetform with its providers",
        if searched.is_empty() {
            "nothing: the fleetform executable's directory is unknown".to_string()
        } else {
            searched.join(", ")
        }
    )))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The newest allowed version (the earliest source on a tie); else the
/// first unversioned executable, whose version cannot be checked.
fn choose<'a>(found: &'a [Candidate], constraints: &VersionConstraints) -> Option<&'a Candidate> {
    let mut best: Option<&Candidate> = None;
    for c in found {
        let Some(v) = &c.version else { continue };
        if !constraints.allows(v) {
            continue;
        }
        let newer = best
            .and_then(|b| b.version.as_ref())
            .is_none_or(|b| v.precedence(b).is_gt());
        if newer {
            best = Some(c);
        }
    }
    best.or_else(|| found.iter().find(|c| c.version.is_none()))
}

fn open(addr: &ProviderAddr, c: &Candidate) -> Result<Resolved, ResolveError> {
    let err = |reason: String| ResolveError::Package {
        addr: addr.to_string(),
        reason,
    };
    let executable = match &c.package {
        Package::Executable(p) => p.clone(),
        Package::Unpacked(dir) => package_executable(dir, &addr.type_name).map_err(err)?,
        Package::Packed(zip) => {
            return Err(err(format!(
                "{} is a packed (zip) filesystem mirror package, which fleetform does not support yet; unpack it into {}",
                zip.display(),
                unpacked_hint(zip, c.version.as_ref()).display()
            )));
        }
    };
    Ok(Resolved {
        executable,
        version: c.version.clone(),
    })
}

/// Where the unpacked layout would put a packed package's contents.
fn unpacked_hint(zip: &Path, version: Option<&Version>) -> PathBuf {
    let dir = zip.parent().unwrap_or(zip);
    match version {
        Some(v) => dir.join(v.to_string()).join(platform()),
        None => dir.to_path_buf(),
    }
}

fn package_path(p: &Package) -> &Path {
    match p {
        Package::Executable(p) | Package::Unpacked(p) | Package::Packed(p) => p,
    }
}

/// Terraform warns about development overrides; once per provider and
/// process is enough for a worker that resolves many times.
fn warn_dev_override(addr: &ProviderAddr, dir: &Path) {
    static WARNED: OnceLock<Mutex<HashSet<ProviderAddr>>> = OnceLock::new();
    let first = WARNED
        .get_or_init(Mutex::default)
        .lock()
        .expect("warned lock")
        .insert(addr.clone());
    if first {
        tracing::warn!(
            provider = %addr,
            dir = %dir.display(),
            "provider development overrides are in effect: the behavior may not match any released version of the provider, and applying changes may make the state incompatible with published releases"
        );
    }
}

/// Terraform's name for this platform (`linux_amd64`, `darwin_arm64`).
pub fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    format!("{os}_{arch}")
}

#[cfg(test)]
mod tests;
