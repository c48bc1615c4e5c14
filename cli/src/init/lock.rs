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
//! (a package changed under the lock); a locked version other than the one
//! fleetform would use is an error unless `-upgrade`. A provider not
//! installed on this machine is a warning only: in a fleet the workers
//! resolve providers, not the machine that runs the CLI.

use fleetform_shared::ProviderAddr;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_worker::plugin::resolve::Resolver;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub const LOCK_FILE: &str = ".terraform.lock.hcl";

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Entry {
    pub version: String,
    pub constraints: Option<String>,
    pub hashes: BTreeSet<String>,
}

/// The entries of a lock file, by provider source address.
pub fn read(path: &Path) -> Result<BTreeMap<String, Entry>, Diagnostic> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => {
            return Err(Diagnostic::error(
                "Failed to read the dependency lock file",
                format!("{}: {e}", path.display()),
            ));
        }
    };
    let body = hcl::parse(&text).map_err(|e| {
        Diagnostic::error(
            "Invalid dependency lock file",
            format!("{}: {e}", path.display()),
        )
    })?;
    let mut out = BTreeMap::new();
    for b in body.blocks().filter(|b| b.identifier() == "provider") {
        let Some(source) = b.labels().first().map(|l| l.as_str().to_string()) else {
            continue;
        };
        let mut entry = Entry::default();
        for a in b.body().attributes() {
            match (a.key(), a.expr()) {
                ("version", hcl::Expression::String(v)) => entry.version = v.clone(),
                ("constraints", hcl::Expression::String(c)) => entry.constraints = Some(c.clone()),
                ("hashes", hcl::Expression::Array(items)) => {
                    for i in items {
                        if let hcl::Expression::String(h) = i {
                            entry.hashes.insert(h.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        out.insert(source, entry);
    }
    Ok(out)
}

/// The file's text: Terraform's layout, providers by address.
pub fn render(entries: &BTreeMap<String, Entry>) -> String {
    let mut out = String::from(
        "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n",
    );
    for (source, e) in entries {
        out.push_str(&format!("\nprovider {source:?} {{\n"));
        match &e.constraints {
            Some(c) => {
                out.push_str(&format!("  version     = {:?}\n", e.version));
                out.push_str(&format!("  constraints = {c:?}\n"));
            }
            None => out.push_str(&format!("  version = {:?}\n", e.version)),
        }
        out.push_str("  hashes = [\n");
        for h in &e.hashes {
            out.push_str(&format!("    {h:?},\n"));
        }
        out.push_str("  ]\n}\n");
    }
    out
}

/// Terraform's `h1:` hash of a package: a directory (every file in it,
/// by relative path) or a single executable (by its file name).
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
fn package_of(executable: &Path) -> PathBuf {
    let platform = fleetform_worker::plugin::resolve::platform();
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
        let resolved = match resolver.resolve(addr, constraint.as_deref()) {
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
            Some(p) if p.version != version && !upgrade => {
                diags.push(Diagnostic::error(
                    "Provider version differs from the dependency lock file",
                    format!("The lock file selects {source} {}, and the newest installed version that the configuration allows is {version}. Run `fleetform init -upgrade` to select {version} and record it, or install {} again.", p.version, p.version),
                ));
                next.insert(source, p.clone());
                continue;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h1_is_terraforms_dirhash_and_files_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("pkg");
        std::fs::create_dir_all(pkg.join("sub")).unwrap();
        std::fs::write(pkg.join("b"), b"hello\n").unwrap();
        std::fs::write(pkg.join("sub/a"), b"").unwrap();
        // Computed by hand: sha256 of each file, the sorted summary lines
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
        // A single file hashes as a package of one.
        let single = h1(&pkg.join("b")).unwrap();
        assert!(single.starts_with("h1:") && single != want);

        let mut entries = BTreeMap::new();
        entries.insert(
            "registry.terraform.io/hashicorp/null".to_string(),
            Entry {
                version: "3.2.1".into(),
                constraints: Some("~> 3.2".into()),
                hashes: BTreeSet::from([want.clone(), "zh:abc".into()]),
            },
        );
        entries.insert(
            "registry.terraform.io/hashicorp/random".to_string(),
            Entry {
                version: "3.5.1".into(),
                constraints: None,
                hashes: BTreeSet::from([single]),
            },
        );
        let text = render(&entries);
        assert!(
            text.contains("  version     = \"3.2.1\"\n  constraints = \"~> 3.2\"\n  hashes = [\n"),
            "{text}"
        );
        assert!(
            text.contains("  version = \"3.5.1\"\n  hashes = [\n"),
            "{text}"
        );
        let path = dir.path().join(LOCK_FILE);
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read(&path).unwrap(), entries);
    }
}
