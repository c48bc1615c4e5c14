//! The dependency lock file, `.terraform.lock.hcl`, read and written as
//! Terraform reads and writes it: one `provider` block per provider with
//! the selected `version`, the `constraints` the configuration gave, and
//! `hashes` of the package. fleetform computes Terraform's `h1:` hash (a
//! SHA-256 over the sorted list of the package's files and their SHA-256s)
//! of the package it resolves on this machine; it cannot fetch the `zh:`
//! hashes of other platforms from a registry, and keeps any already
//! recorded.
//!
//! Checks, as `terraform init` makes them: a provider whose installed
//! package does not match the hashes recorded for its version is an error
//! (a package changed under the lock); a locked provider keeps its version
//! unless `-upgrade`, and a locked version the configuration's constraints
//! no longer allow needs `-upgrade`. A provider not
//! installed on this machine is a warning only: in a fleet the workers
//! resolve providers, not the machine that runs the CLI.

use fleetform_install::locked::{h1, package_of};
use fleetform_install::resolve::Resolver;
use fleetform_lang::config::{LockEntry as Entry, parse_lock_file, render_lock_file as render};
use fleetform_shared::ProviderAddr;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub use fleetform_lang::config::LOCK_FILE;

/// The entries of the lock file at `path` (none when there is no file).
pub fn read(path: &Path) -> Result<BTreeMap<String, Entry>, Diagnostic> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_lock_file(&text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(Diagnostic::error(
            "Failed to read the dependency lock file",
            format!("{}: {e}", path.display()),
        )),
    }
}

/// Checks the configuration's providers against the lock file and writes
/// it; returns the problems (errors stop init).
pub fn update(upgrade: bool, requirements: &BTreeMap<ProviderAddr, Option<String>>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let path = Path::new(LOCK_FILE);
    let locked = match read(path) {
        Ok(l) => l,
        Err(d) => {
            diags.push(d);
            return diags;
        }
    };
    if requirements.is_empty() {
        return diags;
    }
    println!("\nInitializing provider plugins...");
    let resolver = Resolver::from_env();
    let mut next: BTreeMap<String, Entry> = BTreeMap::new();
    for (addr, constraint) in requirements {
        let source = addr.to_string();
        let previous = locked.get(&source);
        // As Terraform's init: a provider already locked keeps its version
        // (the one installed is looked for) unless -upgrade asks for the
        // newest allowed; a locked version the constraints no longer allow
        // needs -upgrade.
        let keep = previous.filter(|_| !upgrade);
        if let (Some(p), Some(c)) = (keep, constraint)
            && let (Ok(v), Ok(allowed)) = (
                p.version.parse::<fleetform_install::Version>(),
                c.parse::<fleetform_install::VersionConstraints>(),
            )
            && !allowed.allows(&v)
        {
            diags.push(Diagnostic::error(
                "Provider version differs from the dependency lock file",
                format!("The lock file selects {source} {}, which the configuration's version constraints {c:?} no longer allow. Run `fleetform init -upgrade` to select the newest allowed version and record it.", p.version),
            ));
            next.insert(source, p.clone());
            continue;
        }
        let wanted = match keep {
            Some(p) => Some(format!("= {}", p.version)),
            None => constraint.clone(),
        };
        let resolved = match resolver.resolve(addr, wanted.as_deref()) {
            Ok(r) => r,
            Err(e) => {
                diags.push(Diagnostic::warning(
                    "Provider not installed here",
                    format!("{source}: {e}. fleetform cannot download providers yet; the workers resolve providers themselves, so runs on workers that have it still work. The lock file keeps what it recorded for it."),
                ));
                if let Some(p) = previous {
                    next.insert(source, p.clone());
                }
                continue;
            }
        };
        let Some(version) = resolved.version.as_ref().map(ToString::to_string) else {
            println!(
                "- Using {source} from {} (a development override or an unversioned build: not recorded in the lock file)",
                resolved.executable.display()
            );
            continue;
        };
        let hash = match h1(&package_of(&resolved.executable)) {
            Ok(h) => h,
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Failed to hash a provider package",
                    format!("{source} at {}: {e}", resolved.executable.display()),
                ));
                continue;
            }
        };
        let mut entry = Entry {
            version: version.clone(),
            constraints: constraint.clone(),
            hashes: BTreeSet::from([hash.clone()]),
        };
        match previous {
            Some(p) if p.version == version => {
                let h1_recorded: Vec<&String> =
                    p.hashes.iter().filter(|h| h.starts_with("h1:")).collect();
                if !h1_recorded.is_empty() && !p.hashes.contains(&hash) {
                    diags.push(Diagnostic::error(
                        "Failed to verify a provider package",
                        format!("The installed package of {source} {version} ({}) does not match any of the checksums recorded in {LOCK_FILE}: it is {hash}. The package changed since it was locked; if you trust the new one, remove its entry from the lock file and run init again.", resolved.executable.display()),
                    ));
                    next.insert(source, p.clone());
                    continue;
                }
                entry.hashes.extend(p.hashes.iter().cloned());
                println!("- Using previously-installed {source} v{version}");
            }
            _ => println!(
                "- Selected {source} v{version} ({})",
                resolved.executable.display()
            ),
        }
        next.insert(source, entry);
    }
    if diags.has_errors() {
        return diags;
    }
    let text = render(&next);
    let before = std::fs::read_to_string(path).unwrap_or_default();
    // Nothing versioned to record, and no file yet: none is made.
    if next.is_empty() && before.is_empty() {
        return diags;
    }
    if text != before {
        if let Err(e) = std::fs::write(path, &text) {
            diags.push(Diagnostic::error(
                "Failed to write the dependency lock file",
                format!("{LOCK_FILE}: {e}"),
            ));
        } else if before.is_empty() {
            println!(
                "\nfleetform has created a lock file {LOCK_FILE} to record the provider\nselections it made above. Include this file in your version control repository\nso that fleetform can guarantee to make the same selections by default when\nyou run \"fleetform init\" in the future."
            );
        }
    }
    diags
}
