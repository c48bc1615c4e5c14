//! The module step of `fleetform init`: installs what `module` blocks call
//! into `.terraform/modules/` and records it in `modules.json`, the way
//! Terraform's module installer (`internal/initwd`) does, so a directory
//! initialised by Terraform/OpenTofu works in fleetform and the other way
//! round.
//!
//! Calls are visited depth first, in name order, each module's calls right
//! after it is installed. What each source becomes:
//! - local (`./x`, `../x`): nothing is copied; the record's Dir is the
//!   caller's Dir joined with the path (so inside an installed package it
//!   points into that package).
//! - git: cloned into `.terraform/modules/KEY` (KEY = call names joined by
//!   dots), Dir is that plus the `//subdir`.
//! - registry and other go-getter sources: fleetform cannot fetch them (no
//!   registry client yet); what Terraform/OpenTofu installed is kept,
//!   anything else is an error at the module block saying what to do.
//!
//! A call whose record has the same Source (and a directory on disk) is
//! kept as installed; a changed source drops the record and those of the
//! modules below it, and installs again; `-upgrade` installs every call again.

use super::git;
use super::manifest::manifest_json;
use super::source::{self, ModuleSource};
use fleetform_install::{Version, VersionConstraints};
use fleetform_lang::config::{
    MODULES_MANIFEST, ManifestEntry, Module, ModuleCall, load_module, manifest_key, parse_manifest,
};
use fleetform_lang::eval::normalize_path;
use fleetform_shared::addr;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

/// Where remote modules are installed, relative to the root module.
pub const MODULES_DIR: &str = ".terraform/modules";

/// Module calls nest at most this deep (the loader's limit too).
const MAX_DEPTH: usize = 32;

/// Installs the calls of `root_module` (the module in `root`). Progress
/// goes to `out`; every configuration file read is added to `files` (by
/// path relative to the root) so diagnostics can show their lines.
pub fn install(
    root: &Path,
    root_module: &Module,
    upgrade: bool,
    files: &mut BTreeMap<String, String>,
    out: &mut dyn Write,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let records = match std::fs::read_to_string(root.join(MODULES_MANIFEST)) {
        Err(_) => BTreeMap::new(),
        Ok(text) => match parse_manifest(&text) {
            Ok(entries) => entries.into_iter().map(|e| (e.key.clone(), e)).collect(),
            Err(e) => {
                diags.push(Diagnostic::error(
                    "Failed to read modules manifest file",
                    format!("Error reading manifest for {MODULES_DIR}: {e}."),
                ));
                return diags;
            }
        },
    };
    let mut installer = Installer {
        root,
        upgrade,
        out,
        records,
        seen: BTreeSet::new(),
        files,
        diags,
    };
    installer.walk(root_module, &addr::Module::root(), ".");
    installer.write_manifest();
    installer.diags
}

/// The `.tf` files directly in `root/dir`, keyed by their path relative to
/// the root (`.terraform/modules/vpc/main.tf`). None when the directory
/// cannot be read.
pub fn read_module_files(root: &Path, dir: &str) -> Option<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root.join(dir)).ok()? {
        let path = entry.ok()?.path();
        if path.extension().is_some_and(|e| e == "tf") && path.is_file() {
            let name = path.file_name()?.to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).ok()?;
            out.insert(normalize_path(&format!("{dir}/{name}")), text);
        }
    }
    Some(out)
}

struct Installer<'a> {
    root: &'a Path,
    upgrade: bool,
    out: &'a mut dyn Write,
    /// The manifest's records, updated as calls are installed.
    records: BTreeMap<String, ManifestEntry>,
    /// Keys of the calls the configuration has now: only these are written.
    seen: BTreeSet<String>,
    files: &'a mut BTreeMap<String, String>,
    diags: Diagnostics,
}

impl Installer<'_> {
    fn say(&mut self, line: &str) {
        let _ = writeln!(self.out, "{line}");
    }

    fn walk(&mut self, module: &Module, path: &addr::Module, dir: &str) {
        for (name, call) in &module.module_calls {
            let child = path.child(name);
            if child.0.len() > MAX_DEPTH {
                self.diags.push(
                    Diagnostic::error(
                        "Module calls nest too deeply",
                        format!("The module call chain {child} is more than {MAX_DEPTH} levels deep; a module probably calls itself."),
                    )
                    .at(call.decl_range.clone()),
                );
                continue;
            }
            let Some(child_dir) = self.install_call(&child, dir, call) else {
                continue;
            };
            if let Some(m) = self.load(&child_dir, call) {
                self.walk(&m, &child, &child_dir);
            }
        }
    }

    /// Installs (or keeps) one call; returns its directory relative to the root.
    fn install_call(
        &mut self,
        path: &addr::Module,
        parent_dir: &str,
        call: &ModuleCall,
    ) -> Option<String> {
        let key = manifest_key(path);
        self.seen.insert(key.clone());
        let src = match source::parse(&call.source) {
            Ok(s) => s,
            Err(source::InvalidSource::NotFound(detail)) => {
                self.error(call, "Module not found", detail);
                return None;
            }
            Err(e) => {
                self.error(
                    call,
                    "Invalid module source address",
                    format!("Failed to parse module source address: {e}."),
                );
                return None;
            }
        };
        if call.version.is_some() && !matches!(src, ModuleSource::Registry(_)) {
            let why = match src {
                ModuleSource::Local(_) => "it has a relative local path",
                _ => "it doesn't come from a module registry",
            };
            self.error(
                call,
                "Invalid version constraint",
                format!(
                    "Cannot apply a version constraint to module {:?} (at {}) because {why}.",
                    call.name,
                    at(call)
                ),
            );
            return None;
        }
        let address = src.address();
        let kept = self
            .records
            .get(&key)
            .filter(|r| r.source == address && self.root.join(&r.dir).is_dir())
            .cloned();
        match &src {
            ModuleSource::Local(rel) => {
                let dir = normalize_path(&format!("{parent_dir}/{rel}"));
                if kept.is_some() && !self.upgrade {
                    self.record(&key, &address, None, &dir);
                    return Some(dir);
                }
                self.forget(&key);
                if read_module_files(self.root, &dir).is_none_or(|f| f.is_empty()) {
                    self.error(
                        call,
                        "Unreadable module directory",
                        format!(
                            "The directory {dir} could not be read for module {:?} at {}.",
                            call.name,
                            at(call)
                        ),
                    );
                    return None;
                }
                self.installed(&key, &address, None, dir)
            }
            ModuleSource::Git(g) => {
                if let (Some(r), false) = (&kept, self.upgrade) {
                    return Some(r.dir.clone());
                }
                self.forget(&key);
                if g.ssh_key {
                    self.error(
                        call,
                        "Unsupported module source",
                        format!(
                            "Module {:?} (at {}) gives an sshkey argument, which fleetform does not support yet. Make the key available to git instead (ssh-agent, or an IdentityFile in ~/.ssh/config) and remove the argument.",
                            call.name,
                            at(call)
                        ),
                    );
                    return None;
                }
                let dir = self.clone_git(&key, g, call)?;
                self.installed(&key, &address, None, dir)
            }
            ModuleSource::Registry(r) => self.keep_installed(&key, kept, call, &src, Some(r)),
            ModuleSource::Other(_) => self.keep_installed(&key, kept, call, &src, None),
        }
    }

    /// Registry and other sources fleetform cannot fetch: what Terraform or
    /// OpenTofu installed is kept; otherwise an error says what to do.
    fn keep_installed(
        &mut self,
        key: &str,
        kept: Option<ManifestEntry>,
        call: &ModuleCall,
        src: &ModuleSource,
        registry: Option<&source::RegistrySource>,
    ) -> Option<String> {
        let constraints = match call
            .version
            .as_deref()
            .map(str::parse::<VersionConstraints>)
        {
            None => None,
            Some(Ok(c)) => Some(c),
            Some(Err(e)) => {
                self.error(call, "Invalid version constraint", format!("{e}."));
                return None;
            }
        };
        let installed_version = kept
            .as_ref()
            .and_then(|r| r.version.as_deref())
            .and_then(|v| v.parse::<Version>().ok());
        let version_ok = match (&constraints, &installed_version) {
            (Some(c), Some(v)) => c.allows(v),
            (Some(c), None) => !c.is_constrained(),
            (None, _) => true,
        };
        if let (Some(r), true) = (&kept, version_ok) {
            if self.upgrade {
                let version = r
                    .version
                    .as_ref()
                    .map(|v| format!(" (version {v})"))
                    .unwrap_or_default();
                self.diags.push(
                    Diagnostic::warning(
                        "Module not upgraded",
                        format!(
                            "fleetform cannot download module {:?} (source {:?}) itself, so -upgrade keeps the copy installed in {}{version}. Run \"terraform init -upgrade\" or \"tofu init -upgrade\" to upgrade it.",
                            call.name, call.source, r.dir
                        ),
                    )
                    .at(call.source_range.clone())
                    .in_context(format!("module {:?}", call.name)),
                );
            }
            return Some(r.dir.clone());
        }
        let constraint = call.version.as_deref().unwrap_or_default();
        let state = match (&kept, &installed_version) {
            (Some(_), Some(v)) => format!(
                " The installed version {v} does not meet the version constraint {constraint:?}."
            ),
            (Some(r), None) => format!(
                " The copy installed in {} records no version to check against the version constraint {constraint:?}.",
                r.dir
            ),
            _ => match self.records.get(key) {
                Some(r) if r.source != src.address() => format!(
                    " The copy installed in {} is from another source ({:?}).",
                    r.dir, r.source
                ),
                _ => String::new(),
            },
        };
        // A version that no longer fits stays recorded: it is still what is
        // installed, and fleetform cannot replace it. Another source's copy
        // must not stand in for this one.
        if self
            .records
            .get(key)
            .is_some_and(|r| r.source != src.address())
        {
            self.forget(key);
        }
        let (summary, detail) = match registry {
            Some(r) => (
                "Registry module not installed",
                format!(
                    "Module {:?} (at {}) comes from the module registry at {} (source {:?}{}), and fleetform cannot download from module registries yet.{state}\n\nInstall it with \"terraform init\" or \"tofu init\" in this directory: fleetform uses the modules they install in {MODULES_DIR}. Or use a git source, for example \"git::https://example.com/repo.git?ref=v1.2.0\".",
                    call.name,
                    at(call),
                    r.host,
                    call.source,
                    call.version
                        .as_deref()
                        .map(|v| format!(", version {v:?}"))
                        .unwrap_or_default()
                ),
            ),
            None => {
                let kind = match src {
                    ModuleSource::Other(o) => o.kind.as_str(),
                    _ => "unknown",
                };
                (
                    "Unsupported module source",
                    format!(
                        "Module {:?} (at {}) has the source {:?}, which is fetched with go-getter's {kind:?} getter; fleetform init does not support that yet. It installs local paths (./, ../) and git repositories (git::, github.com/..., git@host:...), and uses modules that \"terraform init\" or \"tofu init\" installed.{state}\n\nInstall it with \"terraform init\" or \"tofu init\" in this directory, or use a git source.",
                        call.name,
                        at(call),
                        call.source
                    ),
                )
            }
        };
        self.error(call, summary, detail);
        None
    }

    /// Clones into `.terraform/modules/KEY`; returns the module's directory.
    fn clone_git(&mut self, key: &str, g: &source::GitSource, call: &ModuleCall) -> Option<String> {
        let inst = format!("{MODULES_DIR}/{key}");
        let on_disk = self.root.join(&inst);
        if let Err(e) = remove_if_present(&on_disk) {
            self.error(
                call,
                "Failed to remove local module cache",
                format!("fleetform tried to remove {inst} in order to reinstall this module, but encountered an error: {e}"),
            );
            return None;
        }
        self.say(&format!("Downloading {} for {key}...", g.package));
        let cloned = std::fs::create_dir_all(self.root.join(MODULES_DIR))
            .map_err(|e| format!("creating {MODULES_DIR}: {e}"))
            .and_then(|()| git::clone(g, &on_disk));
        if let Err(e) = cloned {
            let _ = remove_if_present(&on_disk);
            self.error(
                call,
                "Failed to download module",
                format!(
                    "Could not download module {:?} ({}) source code from {:?}: {e}",
                    call.name,
                    at(call),
                    g.package
                ),
            );
            return None;
        }
        if g.subdir.is_empty() {
            return Some(inst);
        }
        let dir = normalize_path(&format!("{inst}/{}", g.subdir));
        if !self.root.join(&dir).is_dir() {
            self.error(
                call,
                "Unreadable module subdirectory",
                format!(
                    "The directory {dir} does not exist. The target submodule {} does not exist within the target module.",
                    g.subdir
                ),
            );
            return None;
        }
        Some(dir)
    }

    /// Reads and parses an installed module; None when it has no
    /// configuration or a syntax error (both reported).
    fn load(&mut self, dir: &str, call: &ModuleCall) -> Option<Module> {
        let own = read_module_files(self.root, dir).unwrap_or_default();
        if own.is_empty() {
            self.error(
                call,
                "Unreadable module directory",
                format!(
                    "The directory {dir} for module {:?} (at {}) contains no configuration files (.tf).",
                    call.name,
                    at(call)
                ),
            );
            return None;
        }
        let (module, diags) = load_module(&own);
        self.files.extend(own);
        self.diags.extend(diags);
        module
    }

    fn installed(
        &mut self,
        key: &str,
        source: &str,
        version: Option<String>,
        dir: String,
    ) -> Option<String> {
        self.record(key, source, version, &dir);
        self.say(&format!("- {key} in {dir}"));
        Some(dir)
    }

    fn record(&mut self, key: &str, source: &str, version: Option<String>, dir: &str) {
        let entry = ManifestEntry {
            key: key.to_string(),
            source: source.to_string(),
            version,
            dir: dir.to_string(),
        };
        self.records.insert(key.to_string(), entry);
    }

    /// Drops the record of `key` and of every module below it: reinstalling
    /// a module invalidates what was installed from inside it.
    fn forget(&mut self, key: &str) {
        let prefix = format!("{key}.");
        self.records
            .retain(|k, _| k != key && !k.starts_with(&prefix));
    }

    fn error(&mut self, call: &ModuleCall, summary: &str, detail: String) {
        self.diags.push(
            Diagnostic::error(summary, detail)
                .at(call.source_range.clone())
                .in_context(format!("module {:?}", call.name)),
        );
    }

    fn write_manifest(&mut self) {
        let mut entries = vec![ManifestEntry {
            key: String::new(),
            source: String::new(),
            version: None,
            dir: ".".into(),
        }];
        entries.extend(
            self.records
                .values()
                .filter(|r| !r.key.is_empty() && self.seen.contains(&r.key))
                .cloned(),
        );
        let written = std::fs::create_dir_all(self.root.join(MODULES_DIR)).and_then(|()| {
            std::fs::write(self.root.join(MODULES_MANIFEST), manifest_json(&entries))
        });
        if let Err(e) = written {
            self.diags.push(Diagnostic::error(
                "Failed to update module manifest",
                format!("Unable to write the module manifest file: {e}"),
            ));
        }
    }
}

/// `FILE:LINE` of the module block, as Terraform's installer messages say it.
fn at(call: &ModuleCall) -> String {
    format!(
        "{}:{}",
        call.decl_range.filename, call.decl_range.start.line
    )
}

fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}
