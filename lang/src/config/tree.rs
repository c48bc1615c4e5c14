//! The configuration tree: the root module and, for each `module` call, the
//! child module it loads, each with its static path, its directory in the
//! bundle and the call that brought it in.
//!
//! The loader reads only the bundle (relative path → text, as the CLI packed
//! it). A local source (`./x`, `../x`) is a directory relative to the
//! calling module's; any other source must have been installed already, and
//! is found through `.terraform/modules/modules.json`, the manifest that
//! `terraform init`, `tofu init` and `fleetform init` write, so a directory
//! initialised by any of them loads as it is.

use super::load::load_module;
use super::model::{Module, ModuleCall};
use crate::eval::normalize_path;
use fleetform_shared::addr;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::json::Json;
use std::collections::BTreeMap;

/// Where the module manifest lives, relative to the root module.
pub const MODULES_MANIFEST: &str = ".terraform/modules/modules.json";

/// Module calls nest at most this deep: deeper is almost surely a module
/// that calls itself through a local path.
const MAX_DEPTH: usize = 32;

/// One module of the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleNode {
    pub path: addr::Module,
    /// The module's directory in the bundle, normalized (`.` for the root).
    pub dir: String,
    pub module: Module,
    /// Child modules by call name.
    pub children: BTreeMap<String, ModuleNode>,
}

/// The whole configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub root: ModuleNode,
    /// The dependency lock file that came with the configuration, by
    /// provider; None when there is none (then each provider's newest
    /// version that the constraints allow is used).
    pub provider_locks: Option<BTreeMap<addr::ProviderAddr, super::lock_file::LockEntry>>,
}

impl Config {
    /// The module at a static path.
    pub fn module(&self, path: &addr::Module) -> Option<&ModuleNode> {
        let mut node = &self.root;
        for name in &path.0 {
            node = node.children.get(name)?;
        }
        Some(node)
    }

    /// The call block that brings in the module at `path` (None for the root).
    pub fn call(&self, path: &addr::Module) -> Option<&ModuleCall> {
        let (parent, name) = path.parent()?;
        self.module(&parent)?.module.module_calls.get(name)
    }

    /// Every module, parents before children.
    pub fn modules(&self) -> Vec<&ModuleNode> {
        let mut out = Vec::new();
        let mut stack = vec![&self.root];
        while let Some(n) = stack.pop() {
            out.push(n);
            stack.extend(n.children.values().rev());
        }
        out
    }
}

/// One entry of `modules.json`: the module call key (`a.b` for module `b`
/// called from module `a`; empty for the root) and its directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestEntry {
    pub key: String,
    pub source: String,
    pub version: Option<String>,
    pub dir: String,
}

/// Reads `.terraform/modules/modules.json`.
pub fn parse_manifest(text: &str) -> Result<Vec<ManifestEntry>, String> {
    let json = Json::parse(text.as_bytes()).map_err(|e| format!("invalid JSON: {e}"))?;
    let modules = json
        .get("Modules")
        .and_then(Json::as_array)
        .ok_or("no \"Modules\" list")?;
    modules
        .iter()
        .map(|m| {
            let field = |k: &str| m.get(k).and_then(Json::as_str).map(str::to_string);
            Ok(ManifestEntry {
                key: field("Key").ok_or("a module without \"Key\"")?,
                source: field("Source").unwrap_or_default(),
                version: field("Version").filter(|v| !v.is_empty()),
                dir: field("Dir").ok_or("a module without \"Dir\"")?,
            })
        })
        .collect()
}

/// Whether a module source is a local path (Terraform: `./` or `../`).
pub fn is_local_source(source: &str) -> bool {
    source.starts_with("./") || source.starts_with("../") || source == "." || source == ".."
}

/// The manifest key of the module at `path`: call names joined by dots.
pub fn manifest_key(path: &addr::Module) -> String {
    path.0.join(".")
}

/// Where the module a call brings in lives: its directory in the bundle.
pub fn resolve_source(
    parent_dir: &str,
    path: &addr::Module,
    call: &ModuleCall,
    manifest: &[ManifestEntry],
) -> Result<String, Diagnostic> {
    if is_local_source(&call.source) {
        return Ok(normalize_path(&format!("{parent_dir}/{}", call.source)));
    }
    let key = manifest_key(path);
    match manifest.iter().find(|e| e.key == key) {
        Some(e) => Ok(normalize_path(&e.dir)),
        None => Err(Diagnostic::error(
            "Module not installed",
            format!(
                "This module (source {:?}) is not yet installed. Run \"fleetform init\" (or \"terraform init\") to install all modules required by this configuration.",
                call.source
            ),
        )
        .at(call.source_range.clone())),
    }
}

/// The configuration files (`.tf`, `.tf.json`) directly in `dir` (not in
/// its subdirectories), without the editor files Terraform ignores.
pub fn files_in_dir(files: &BTreeMap<String, String>, dir: &str) -> BTreeMap<String, String> {
    files
        .iter()
        .filter(|(k, _)| super::files::is_config_file(k) && parent_dir(k) == dir)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn parent_dir(path: &str) -> String {
    match normalize_path(path).rsplit_once('/') {
        Some((dir, _)) => dir.to_string(),
        None => ".".to_string(),
    }
}

/// Assembles the tree from the bundle: every module, its calls, the lock
/// file. The configuration is None only when a file has a syntax error;
/// other problems are diagnostics beside it. Checks of the whole tree come
/// after ([`super::load_config`]).
pub(super) fn assemble(files: &BTreeMap<String, String>) -> (Option<Config>, Diagnostics) {
    let mut diags = Diagnostics::new();
    let manifest = match files.get(MODULES_MANIFEST) {
        None => Vec::new(),
        Some(text) => parse_manifest(text).unwrap_or_else(|e| {
            diags.push(Diagnostic::error(
                "Failed to read module manifest",
                format!(
                    "{MODULES_MANIFEST}: {e}. Run \"fleetform init\" to install the modules again."
                ),
            ));
            Vec::new()
        }),
    };
    let provider_locks = match files.get(super::lock_file::LOCK_FILE) {
        None => None,
        Some(text) => match super::lock_file::lock_by_provider(text) {
            Ok(locks) => Some(locks),
            Err(d) => {
                diags.push(d);
                None
            }
        },
    };
    let root = load_node(files, &manifest, addr::Module::root(), ".", &mut diags);
    let config = root.map(|root| Config {
        root,
        provider_locks,
    });
    (config, diags)
}

fn load_node(
    files: &BTreeMap<String, String>,
    manifest: &[ManifestEntry],
    path: addr::Module,
    dir: &str,
    diags: &mut Diagnostics,
) -> Option<ModuleNode> {
    let (module, d) = load_module(&files_in_dir(files, dir));
    diags.extend(d);
    let module = module?;
    let mut node = ModuleNode {
        path: path.clone(),
        dir: dir.to_string(),
        module,
        children: BTreeMap::new(),
    };
    for (name, call) in &node.module.module_calls {
        let child_path = path.child(name);
        if child_path.0.len() > MAX_DEPTH {
            diags.push(
                Diagnostic::error(
                    "Module calls nest too deeply",
                    format!("The module call chain {child_path} is more than {MAX_DEPTH} levels deep; a module probably calls itself."),
                )
                .at(call.decl_range.clone()),
            );
            continue;
        }
        if is_local_source(&call.source) && call.version.is_some() {
            // Terraform refuses it too: a local directory has no versions.
            diags.push(
                Diagnostic::error(
                    "Invalid version constraint",
                    format!("Cannot apply a version constraint to module {name:?} because it has a relative local path."),
                )
                .at(call.decl_range.clone()),
            );
            continue;
        }
        let child_dir = match resolve_source(dir, &child_path, call, manifest) {
            Ok(d) => d,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        if files_in_dir(files, &child_dir).is_empty() {
            diags.push(
                Diagnostic::error(
                    "Unreadable module directory",
                    format!(
                        "The directory {child_dir} (source {:?}) contains no configuration files (.tf), or was not packed with the configuration.",
                        call.source
                    ),
                )
                .at(call.source_range.clone()),
            );
            continue;
        }
        if let Some(child) = load_node(files, manifest, child_path, &child_dir, diags) {
            node.children.insert(name.clone(), child);
        }
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_config;

    fn bundle(files: &[(&str, &str)]) -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn local_and_installed_modules_load_into_a_tree() {
        let files = bundle(&[
            (
                "main.tf",
                "module \"net\" {\n  source = \"./modules/net\"\n  cidr = \"10.0.0.0/16\"\n}\nmodule \"dns\" {\n  source  = \"acme/dns/aws\"\n  version = \"1.2.0\"\n}\n",
            ),
            (
                "modules/net/main.tf",
                "variable \"cidr\" {}\nmodule \"sub\" {\n  source = \"../sub\"\n  count  = 2\n}\n",
            ),
            (
                "modules/sub/main.tf",
                "resource \"null_resource\" \"x\" {}\n",
            ),
            (
                ".terraform/modules/dns/main.tf",
                "output \"zone\" {\n  value = \"z\"\n}\n",
            ),
            (
                MODULES_MANIFEST,
                r#"{"Modules":[{"Key":"","Source":"","Dir":"."},{"Key":"dns","Source":"registry.terraform.io/acme/dns/aws","Version":"1.2.0","Dir":".terraform/modules/dns"}]}"#,
            ),
        ]);
        let (config, diags) = load_config(&files);
        assert!(!diags.has_errors(), "{diags}");
        let config = config.unwrap();
        let paths: Vec<String> = config
            .modules()
            .iter()
            .map(|m| m.path.to_string())
            .collect();
        assert_eq!(
            paths,
            ["", "module.dns", "module.net", "module.net.module.sub"]
        );
        let sub = config
            .module(&"module.net.module.sub".parse().unwrap())
            .unwrap();
        assert_eq!(sub.dir, "modules/sub");
        assert_eq!(
            config.module(&"module.dns".parse().unwrap()).unwrap().dir,
            ".terraform/modules/dns"
        );
        let call = config.call(&"module.net".parse().unwrap()).unwrap();
        assert!(call.arguments.contains_key("cidr"));
        assert!(
            config
                .call(&"module.net.module.sub".parse().unwrap())
                .unwrap()
                .count
                .is_some()
        );
    }

    #[test]
    fn missing_modules_are_errors_naming_the_call() {
        let files = bundle(&[(
            "main.tf",
            "module \"a\" {\n  source = \"./nowhere\"\n}\nmodule \"b\" {\n  source = \"hashicorp/consul/aws\"\n}\n",
        )]);
        let (config, diags) = load_config(&files);
        assert!(config.unwrap().root.children.is_empty());
        let summaries: Vec<(&str, usize)> = diags
            .iter()
            .map(|d| (d.summary.as_str(), d.range.as_ref().unwrap().start.line))
            .collect();
        assert_eq!(
            summaries,
            [
                ("Unreadable module directory", 2),
                ("Module not installed", 5)
            ]
        );
    }

    #[test]
    fn a_version_on_a_local_module_is_an_error_not_ignored() {
        let files = bundle(&[
            (
                "main.tf",
                "module \"m\" {\n  source  = \"./m\"\n  version = \"1.0.0\"\n}\n",
            ),
            ("m/main.tf", "output \"o\" {\n  value = 1\n}\n"),
        ]);
        let (_, diags) = load_config(&files);
        let d = diags
            .iter()
            .find(|d| d.summary == "Invalid version constraint")
            .expect("an error");
        assert_eq!(d.range.as_ref().unwrap().start.line, 1);
    }

    #[test]
    fn a_module_calling_itself_stops_with_an_error() {
        let files = bundle(&[("main.tf", "module \"me\" {\n  source = \"./\"\n}\n")]);
        let (_, diags) = load_config(&files);
        assert!(
            diags
                .iter()
                .any(|d| d.summary == "Module calls nest too deeply"),
            "{diags}"
        );
    }

    #[test]
    fn module_call_meta_arguments_are_taken_out_of_the_inputs() {
        let files = bundle(&[
            (
                "main.tf",
                "module \"m\" {\n  source     = \"./m\"\n  for_each   = toset([\"a\"])\n  depends_on = [null_resource.x]\n  providers  = { aws = aws.west, \"google\" = google.x }\n  name       = each.key\n}\nresource \"null_resource\" \"x\" {}\n",
            ),
            ("m/main.tf", "variable \"name\" {}\n"),
        ]);
        let (config, diags) = load_config(&files);
        assert!(!diags.has_errors(), "{diags}");
        let call = config.unwrap().root.module.module_calls["m"].clone();
        assert!(call.for_each.is_some());
        assert_eq!(call.depends_on.len(), 1);
        assert_eq!(call.arguments.keys().collect::<Vec<_>>(), ["name"]);
        let providers: Vec<String> = call
            .providers
            .iter()
            .map(|(c, p, _)| format!("{c}={p}"))
            .collect();
        assert_eq!(providers, ["aws=aws.west", "google=google.x"]);
    }
}
