//! Finding the executable of a provider: plugin directories from
//! `FLEETFORM_PLUGIN_DIR`, then beside the running executable, each either
//! flat (`terraform-provider-<type>[_v<version>]`) or laid out as Terraform's
//! filesystem mirror (`<host>/<namespace>/<type>/<version>/<os>_<arch>/`).

use fleetform_shared::ProviderAddr;
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

/// Colon-separated plugin directories searched first.
pub const PLUGIN_DIR_ENV: &str = "FLEETFORM_PLUGIN_DIR";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("no executable found for provider {addr}; searched: {}", searched_list(.searched))]
pub struct ResolveError {
    pub addr: String,
    /// Every path that was looked at, in order.
    pub searched: Vec<PathBuf>,
}

fn searched_list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The directories searched, in order.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os(PLUGIN_DIR_ENV)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if let Some(exe_dir) = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
    {
        dirs.push(exe_dir.join("providers"));
        dirs.push(exe_dir);
    }
    dirs
}

/// Finds the executable for `addr` in [`search_dirs`].
pub fn resolve_provider(addr: &ProviderAddr) -> Result<PathBuf, ResolveError> {
    resolve_in(addr, &search_dirs())
}

/// Finds the executable for `addr` in `dirs`; the first directory that has
/// one wins, and within a directory the highest version.
pub fn resolve_in(addr: &ProviderAddr, dirs: &[PathBuf]) -> Result<PathBuf, ResolveError> {
    let mut searched = Vec::new();
    for dir in dirs {
        searched.push(dir.clone());
        if let Some(found) = best_executable(dir, &addr.type_name) {
            return Ok(found);
        }
        let type_dir = dir
            .join(&addr.hostname)
            .join(&addr.namespace)
            .join(&addr.type_name);
        searched.push(type_dir.clone());
        let mut versions: Vec<(Vec<u64>, String)> = read_dir_names(&type_dir)
            .into_iter()
            .filter(|v| type_dir.join(v).is_dir())
            .map(|v| (version_key(&v), v))
            .collect();
        versions.sort_by(|a, b| compare_versions(b, a));
        for (_, version) in versions {
            let platform_dir = type_dir.join(version).join(platform());
            searched.push(platform_dir.clone());
            if let Some(found) = best_executable(&platform_dir, &addr.type_name) {
                return Ok(found);
            }
        }
    }
    Err(ResolveError {
        addr: addr.to_string(),
        searched,
    })
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

/// `terraform-provider-<type>` or the highest `terraform-provider-<type>_v<version>` in `dir`.
fn best_executable(dir: &Path, type_name: &str) -> Option<PathBuf> {
    let exact = format!("terraform-provider-{type_name}");
    let versioned = format!("{exact}_v");
    let mut candidates: Vec<(Vec<u64>, String)> = read_dir_names(dir)
        .into_iter()
        .filter(|n| *n == exact || n.starts_with(&versioned))
        .filter(|n| is_executable(&dir.join(n)))
        .map(|n| (version_key(n.strip_prefix(&versioned).unwrap_or("")), n))
        .collect();
    candidates.sort_by(|a, b| compare_versions(b, a));
    candidates.into_iter().next().map(|(_, n)| dir.join(n))
}

fn read_dir_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The numeric parts of a version (`1.10.2-beta` → `[1, 10, 2]`), so 1.10 sorts above 1.9.
fn version_key(v: &str) -> Vec<u64> {
    let core = v
        .trim_start_matches('v')
        .split(['-', '+'])
        .next()
        .unwrap_or("");
    core.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

fn compare_versions(a: &(Vec<u64>, String), b: &(Vec<u64>, String)) -> Ordering {
    a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn touch(path: &Path, executable: bool) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"#!/bin/sh\n").unwrap();
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn flat_directories_prefer_the_highest_version() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join("terraform-provider-null_v3.9.0"), true);
        touch(&dir.path().join("terraform-provider-null_v3.10.1"), true);
        touch(&dir.path().join("terraform-provider-null_v9.0.0"), false);
        touch(&dir.path().join("terraform-provider-nullish"), true);
        let found =
            resolve_in(&ProviderAddr::implied("null"), &[dir.path().to_path_buf()]).unwrap();
        assert_eq!(found, dir.path().join("terraform-provider-null_v3.10.1"));
    }

    #[test]
    fn filesystem_mirror_layout_is_searched_after_earlier_dirs() {
        let empty = tempfile::tempdir().unwrap();
        let mirror = tempfile::tempdir().unwrap();
        let addr: ProviderAddr = "example.com/acme/sim".parse().unwrap();
        let base = mirror.path().join("example.com/acme/sim");
        touch(
            &base
                .join("0.1.0")
                .join(platform())
                .join("terraform-provider-sim_v0.1.0"),
            true,
        );
        touch(
            &base
                .join("0.2.0")
                .join(platform())
                .join("terraform-provider-sim_v0.2.0"),
            true,
        );
        touch(
            &base
                .join("0.3.0")
                .join("plan9_mips")
                .join("terraform-provider-sim_v0.3.0"),
            true,
        );
        let dirs = [empty.path().to_path_buf(), mirror.path().to_path_buf()];
        let found = resolve_in(&addr, &dirs).unwrap();
        assert_eq!(
            found,
            base.join("0.2.0")
                .join(platform())
                .join("terraform-provider-sim_v0.2.0")
        );
    }

    #[test]
    fn missing_providers_list_every_searched_path() {
        let dir = tempfile::tempdir().unwrap();
        let err =
            resolve_in(&ProviderAddr::implied("aws"), &[dir.path().to_path_buf()]).unwrap_err();
        assert_eq!(
            err.searched,
            vec![
                dir.path().to_path_buf(),
                dir.path().join("registry.terraform.io/hashicorp/aws")
            ]
        );
        assert!(
            err.to_string()
                .contains("registry.terraform.io/hashicorp/aws"),
            "{err}"
        );
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(version_key("1.10.0") > version_key("1.9.9"));
        assert_eq!(version_key("v2.1.0-beta"), vec![2, 1, 0]);
    }
}
