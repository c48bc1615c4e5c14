//! Packing a configuration: the root module's `.tf` and `.tf.json` files
//! (override files included; editor files Terraform ignores left out) and those of
//! every module it calls, keyed by their path relative to the root
//! directory (`main.tf`, `modules/net/main.tf`, `../shared/x.tf`), plus the
//! module manifest, so a coordinator elsewhere loads exactly the tree the
//! CLI sees.
//!
//! Local sources are followed on disk; installed (remote) modules are found
//! through `.terraform/modules/modules.json` as the language's loader finds
//! them. A module directory that cannot be read is left out, and the loader
//! then reports the call with its source location.

use anyhow::Context;
use fleetform_lang::config::{
    MODULES_MANIFEST, ManifestEntry, is_config_file, load_module, parse_manifest, resolve_source,
};
use fleetform_lang::eval::normalize_path;
use fleetform_shared::addr::Module;
use std::collections::BTreeMap;
use std::path::Path;

pub fn pack(dir: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    let manifest_path = dir.join(MODULES_MANIFEST);
    let manifest: Vec<ManifestEntry> = match std::fs::read_to_string(&manifest_path) {
        Ok(text) => {
            let entries = parse_manifest(&text).unwrap_or_default();
            files.insert(MODULES_MANIFEST.to_string(), text);
            entries
        }
        Err(_) => Vec::new(),
    };
    pack_module(dir, ".", &Module::root(), &manifest, &mut files, true)?;
    Ok(files)
}

fn pack_module(
    root: &Path,
    rel: &str,
    path: &Module,
    manifest: &[ManifestEntry],
    files: &mut BTreeMap<String, String>,
    is_root: bool,
) -> anyhow::Result<()> {
    if path.0.len() > 32 {
        return Ok(()); // the loader reports the runaway nesting
    }
    let on_disk = root.join(rel);
    let entries = match std::fs::read_dir(&on_disk) {
        Ok(e) => e,
        Err(e) if is_root => {
            return Err(e)
                .with_context(|| format!("reading configuration directory {}", on_disk.display()));
        }
        Err(_) => return Ok(()),
    };
    let mut own = BTreeMap::new();
    for entry in entries {
        let p = entry?.path();
        let name = p
            .file_name()
            .expect("file has a name")
            .to_string_lossy()
            .to_string();
        if is_config_file(&name) && p.is_file() {
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            own.insert(normalize_path(&format!("{rel}/{name}")), text);
        }
    }
    // The calls are read without judging the module: its errors are the
    // loader's to report, with everything else, once the bundle is whole.
    let (module, _) = load_module(&own);
    files.extend(own);
    let Some(module) = module else {
        return Ok(());
    };
    for (name, call) in &module.module_calls {
        let child = path.child(name);
        if let Ok(child_dir) = resolve_source(rel, &child, call, manifest) {
            let already = files
                .keys()
                .any(|k| k.starts_with(&format!("{child_dir}/")));
            if !already {
                pack_module(root, &child_dir, &child, manifest, files, false)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_the_module_tree_by_relative_path() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("live");
        let write = |rel: &str, text: &str| {
            let p = tmp.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "live/main.tf",
            "module \"a\" {\n  source = \"./modules/a\"\n}\nmodule \"s\" {\n  source = \"../shared\"\n}\nmodule \"r\" {\n  source = \"acme/r/aws\"\n}\n",
        );
        write("live/notes.txt", "not configuration");
        write(
            "live/vars.tf.json",
            r#"{"variable": {"j": {"default": "${not a template}"}}}"#,
        );
        write(
            "live/override.tf.json",
            r#"{"variable": {"j": {"default": 2}}}"#,
        );
        write("live/.#main.tf", "editor lock file");
        write("live/main.tf~", "editor backup");
        write(
            "live/modules/a/main.tf",
            "module \"again\" {\n  source = \"../../../shared\"\n}\n",
        );
        write("shared/x.tf", "variable \"v\" {\n  default = 1\n}\n");
        write(
            "live/.terraform/modules/r/main.tf",
            "output \"o\" {\n  value = 1\n}\n",
        );
        write(
            "live/.terraform/modules/modules.json",
            r#"{"Modules":[{"Key":"r","Source":"registry.terraform.io/acme/r/aws","Dir":".terraform/modules/r"}]}"#,
        );
        let files = pack(&root).unwrap();
        let keys: Vec<&str> = files.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "../shared/x.tf",
                ".terraform/modules/modules.json",
                ".terraform/modules/r/main.tf",
                "main.tf",
                "modules/a/main.tf",
                "override.tf.json",
                "vars.tf.json",
            ]
        );
        let (config, diags) = fleetform_lang::config::load_config(&files);
        assert!(!diags.has_errors(), "{diags}");
        let config = config.unwrap();
        assert_eq!(config.modules().len(), 5);
        assert_eq!(
            config.root.module.variables["j"].default,
            Some(fleetform_shared::value::Value::int(2))
        );
    }
}
