//! Resolving a provider under the run's dependency lock file, and
//! Terraform's `h1:` package hash that the file records.
//!
//! The rules (Terraform's, at plan and apply time):
//! - a locked provider uses exactly the locked version; a configuration
//!   whose constraints no longer allow it must be re-selected with
//!   `init -upgrade`;
//! - when the file records `h1:` hashes, the package found must match one
//!   (only `zh:` hashes, which are hashes of registry archives fleetform
//!   never sees, cannot be checked and are trusted as Terraform trusts an
//!   already-installed package);
//! - with a lock file, a provider it does not name is not used;
//! - development overrides, unversioned builds and built-in providers are
//!   exempt: there is no version to lock.

use crate::resolve::{Resolved, Resolver};
use crate::{Version, VersionConstraints};
use fleetform_shared::ProviderAddr;
use fleetform_shared::wire::ProviderLock;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// The name of the lock file, in messages.
const LOCK_FILE: &str = ".terraform.lock.hcl";

/// Resolves `addr` as the lock allows; the error is a sentence for the
/// user.
pub fn resolve(
    resolver: &Resolver,
    hashes: &PackageHashes,
    addr: &ProviderAddr,
    constraint: Option<&str>,
    lock: &ProviderLock,
) -> Result<Resolved, String> {
    match lock {
        ProviderLock::NoLockFile => resolver
            .resolve(addr, constraint)
            .map_err(|e| e.to_string()),
        ProviderLock::NotSelected => {
            let resolved = resolver
                .resolve(addr, constraint)
                .map_err(|e| e.to_string())?;
            match resolved.version {
                None => Ok(resolved),
                Some(_) => Err(format!(
                    "provider {addr}: required by this configuration but no version is selected in the dependency lock file {LOCK_FILE}. To make the initial selection, run `fleetform init` (or `fleetform init -upgrade` to update the selections)."
                )),
            }
        }
        ProviderLock::Locked {
            version,
            hashes: recorded,
        } => {
            let locked: Version = version.parse().map_err(|e| {
                format!("provider {addr}: the dependency lock file {LOCK_FILE} selects version {version:?}, which is not a version: {e}")
            })?;
            if let Some(c) = constraint {
                let allowed: VersionConstraints =
                    c.parse().map_err(|e| format!("provider {addr}: {e}"))?;
                if !allowed.allows(&locked) {
                    return Err(format!(
                        "provider {addr}: locked version selection {version} doesn't match the updated version constraints {c:?}. To update the locked dependency selections to match a changed configuration, run `fleetform init -upgrade`."
                    ));
                }
            }
            let resolved = resolver
                .resolve(addr, Some(&format!("= {version}")))
                .map_err(|e| {
                    format!(
                        "{e}. The dependency lock file {LOCK_FILE} selects {addr} {version}: install that version where this worker finds providers, or select another with `fleetform init -upgrade`."
                    )
                })?;
            if resolved.version.is_none() {
                return Ok(resolved);
            }
            let h1: Vec<&String> = recorded.iter().filter(|h| h.starts_with("h1:")).collect();
            if h1.is_empty() {
                return Ok(resolved);
            }
            let package = package_of(&resolved.executable);
            let found = hashes
                .h1(&package)
                .map_err(|e| format!("provider {addr}: hashing {}: {e}", package.display()))?;
            if h1.iter().any(|h| **h == found) {
                Ok(resolved)
            } else {
                Err(format!(
                    "provider {addr} {version}: the package at {} ({found}) does not match any of the checksums recorded in the dependency lock file {LOCK_FILE}. The package changed since it was locked: install the locked package again, or, if you trust this one, remove its entry from the lock file and run `fleetform init`.",
                    package.display()
                ))
            }
        }
    }
}

/// `h1:` hashes of packages, each computed once while the package's
/// executable keeps its size and modification time (a provider can be a
/// hundred megabytes; a worker resolves it for every run).
#[derive(Debug, Default)]
pub struct PackageHashes {
    known: Mutex<HashMap<PathBuf, Hashed>>,
}

/// A package's hash and the stamp (size, modification time) it had.
type Hashed = (u64, Option<SystemTime>, String);

impl PackageHashes {
    pub fn h1(&self, package: &Path) -> std::io::Result<String> {
        let meta = std::fs::metadata(package)?;
        let stamp = (meta.len(), meta.modified().ok());
        if let Some((len, modified, hash)) = self.known.lock().expect("hash lock").get(package)
            && (*len, *modified) == stamp
        {
            return Ok(hash.clone());
        }
        let hash = h1(package)?;
        self.known
            .lock()
            .expect("hash lock")
            .insert(package.to_path_buf(), (stamp.0, stamp.1, hash.clone()));
        Ok(hash)
    }
}

/// Terraform's `h1:` hash of a package: a directory (every file in it,
/// by relative path) or a single executable (by its file name). It is the
/// SHA-256 of the sorted lines "SHA256HEX  NAME\n", one per file, in
/// base64.
pub fn h1(package: &Path) -> std::io::Result<String> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    if package.is_dir() {
        collect(package, package, &mut files)?;
    } else {
        let name = package
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.push((name, package.to_path_buf()));
    }
    files.sort();
    let mut summary = Sha256::new();
    for (name, path) in files {
        let digest = Sha256::digest(std::fs::read(&path)?);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        summary.update(format!("{hex}  {name}\n").as_bytes());
    }
    use base64::Engine;
    Ok(format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(summary.finalize())
    ))
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(root, &path, out)?;
        } else {
            let rel = path
                .strip_prefix(root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            out.push((rel, path));
        }
    }
    Ok(())
}

/// The package an executable belongs to: its directory when that is a
/// provider package in the mirror layout (`.../VERSION/OS_ARCH/`), else
/// the executable alone.
pub fn package_of(executable: &Path) -> PathBuf {
    let platform = crate::resolve::platform();
    match executable.parent() {
        Some(dir)
            if dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy() == platform) =>
        {
            dir.to_path_buf()
        }
        _ => executable.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::Environment;

    #[test]
    fn h1_is_terraforms_dirhash() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(pkg.join("sub")).unwrap();
        std::fs::write(pkg.join("b"), b"hello\n").unwrap();
        std::fs::write(pkg.join("sub/a"), b"").unwrap();
        // By hand: sha256 of each file, the sorted summary lines
        // "HEX  NAME\n", then base64 of the summary's sha256.
        let line = |data: &[u8], name: &str| {
            let d = Sha256::digest(data);
            let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
            format!("{hex}  {name}\n")
        };
        let summary = format!("{}{}", line(b"hello\n", "b"), line(b"", "sub/a"));
        use base64::Engine;
        let want = format!(
            "h1:{}",
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(summary.as_bytes()))
        );
        assert_eq!(h1(&pkg).unwrap(), want);
        let single = h1(&pkg.join("b")).unwrap();
        assert!(single.starts_with("h1:") && single != want);
        // The cache notices a changed file.
        let cache = PackageHashes::default();
        assert_eq!(cache.h1(&pkg.join("b")).unwrap(), single);
        std::fs::write(pkg.join("b"), b"hello, longer\n").unwrap();
        assert_ne!(cache.h1(&pkg.join("b")).unwrap(), single);
    }

    /// A plugin directory in the mirror layout with null 1.0.0 and 2.0.0.
    fn mirror() -> (tempfile::TempDir, Resolver) {
        let dir = tempfile::tempdir().unwrap();
        let platform = crate::resolve::platform();
        for v in ["1.0.0", "2.0.0"] {
            let pkg = dir.path().join(format!(
                "registry.terraform.io/hashicorp/null/{v}/{platform}"
            ));
            std::fs::create_dir_all(&pkg).unwrap();
            let exe = pkg.join(format!("terraform-provider-null_v{v}"));
            std::fs::write(&exe, format!("#!/bin/sh\n# {v}\n")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let resolver = Resolver::new(&Environment::plugin_dir_only(dir.path()));
        (dir, resolver)
    }

    #[test]
    fn a_lock_selects_the_version_checks_the_hash_and_names_what_is_missing() {
        let (dir, resolver) = mirror();
        let cache = PackageHashes::default();
        let null = ProviderAddr::new("hashicorp", "null");
        let platform = crate::resolve::platform();
        let pkg1 = dir.path().join(format!(
            "registry.terraform.io/hashicorp/null/1.0.0/{platform}"
        ));
        let good = h1(&pkg1).unwrap();

        // Without a lock file: the newest.
        let r = resolve(&resolver, &cache, &null, None, &ProviderLock::NoLockFile).unwrap();
        assert_eq!(r.version.unwrap().to_string(), "2.0.0");
        // Locked to 1.0.0 with its hash: 1.0.0.
        let locked = |hashes: Vec<String>| ProviderLock::Locked {
            version: "1.0.0".into(),
            hashes,
        };
        let r = resolve(&resolver, &cache, &null, None, &locked(vec![good.clone()])).unwrap();
        assert_eq!(r.version.unwrap().to_string(), "1.0.0");
        // Only zh: hashes recorded: nothing to check here, accepted.
        let r = resolve(
            &resolver,
            &cache,
            &null,
            None,
            &locked(vec!["zh:00".into()]),
        )
        .unwrap();
        assert_eq!(r.version.unwrap().to_string(), "1.0.0");
        // A recorded h1: that the package does not match: refused.
        let e = resolve(
            &resolver,
            &cache,
            &null,
            None,
            &locked(vec!["h1:AAAA".into()]),
        )
        .unwrap_err();
        assert!(e.contains("does not match any of the checksums"), "{e}");
        assert!(e.contains(&good), "{e}");
        // The configuration's constraint no longer allows the locked version.
        let e = resolve(
            &resolver,
            &cache,
            &null,
            Some("~> 2.0"),
            &locked(vec![good]),
        )
        .unwrap_err();
        assert!(
            e.contains("doesn't match the updated version constraints"),
            "{e}"
        );
        assert!(e.contains("init -upgrade"), "{e}");
        // A locked version that is not installed.
        let e = resolve(
            &resolver,
            &cache,
            &null,
            None,
            &ProviderLock::Locked {
                version: "1.5.0".into(),
                hashes: vec![],
            },
        )
        .unwrap_err();
        assert!(
            e.contains("selects registry.terraform.io/hashicorp/null 1.5.0"),
            "{e}"
        );
        // A lock file that does not name the provider.
        let e = resolve(&resolver, &cache, &null, None, &ProviderLock::NotSelected).unwrap_err();
        assert!(e.contains("no version is selected"), "{e}");
    }
}
