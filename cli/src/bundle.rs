//! Packing a configuration: the root module's `.tf` and `.tf.json` files
//! (override files included; editor files Terraform ignores left out) and those of
//! every module it calls, keyed by their path relative to the root
//! directory (`main.tf`, `modules/net/main.tf`, `../shared/x.tf`), plus the
//! module manifest and the dependency lock file, so a coordinator elsewhere loads exactly the tree the
//! CLI sees.
//!
//! Local sources are followed on disk; installed (remote) modules are found
//! through `.terraform/modules/modules.json` as the language's loader finds
//! them. A module directory that cannot be read is left out, and the loader
//! then reports the call with its source location.

use anyhow::Context;
use fleetform_lang::config::{
    LOCK_FILE, MODULES_MANIFEST, ManifestEntry, is_config_file, load_module, parse_manifest,
    resolve_source,
};
use fleetform_lang::eval::normalize_path;
use fleetform_shared::addr::Module;
use fleetform_shared::wire::Blob;
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
    // The dependency lock file goes with the configuration: the workers
    // that run it use the versions it selects.
    match std::fs::read_to_string(dir.join(LOCK_FILE)) {
        Ok(text) => {
            files.insert(LOCK_FILE.to_string(), text);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(e).with_context(|| format!("reading {}", dir.join(LOCK_FILE).display()));
        }
    }
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

/// A data file larger than this is not packed: `file()` of it fails with
/// "no file exists". Terraform reads such files from disk; a bundle that
/// travels to a coordinator elsewhere has to stop somewhere.
pub const MAX_DATA_FILE: u64 = 64 << 20;
/// All data files together stay under this (the API takes up to 1 GiB).
pub const MAX_DATA_TOTAL: u64 = 512 << 20;

/// The other files of every packed module directory (recursively): what
/// `file()`, `templatefile()` and `fileset()` may read. Hidden entries
/// (`.terraform`, `.git`, `.fleetform`), configuration files, state files
/// and fleetform's own plan files (encrypted ones too: no file function
/// reads anything of a file only fleetform decrypts) are left out.
///
/// A plan file (`plan -out=FILE`, usually in the root module's directory)
/// holds the data files it was made with. Packed into the next one, each
/// plan held all the ones before it (`plan -out` of 1,000 instances five
/// times in one directory, before plan files were compressed: 0.44, 0.88,
/// 1.32, 1.77, 2.21 MB), and every run after them carried the last. So
/// `fileset()` does not list plan files, where Terraform, reading the
/// disk, would.
pub fn pack_data(
    root: &Path,
    files: &BTreeMap<String, String>,
) -> anyhow::Result<BTreeMap<String, Blob>> {
    let mut dirs: Vec<String> = files
        .keys()
        .filter(|k| k.ends_with(".tf") || k.ends_with(".tf.json"))
        .map(|k| match k.rsplit_once('/') {
            Some((d, _)) => d.to_string(),
            None => ".".to_string(),
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    let mut out = BTreeMap::new();
    let mut total = 0u64;
    for dir in dirs {
        walk_data(root, &dir, &mut out, &mut total)?;
    }
    Ok(out)
}

fn walk_data(
    root: &Path,
    rel: &str,
    out: &mut BTreeMap<String, Blob>,
    total: &mut u64,
) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let key = normalize_path(&format!("{rel}/{name}"));
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            walk_data(root, &key, out, total)?;
            continue;
        }
        let config = name.ends_with(".tf") || name.ends_with(".tf.json");
        let state = name.contains(".tfstate");
        if !meta.is_file()
            || config
            || state
            || meta.len() > MAX_DATA_FILE
            || out.contains_key(&key)
        {
            continue;
        }
        if written_by_fleetform(&entry.path()) {
            continue;
        }
        *total += meta.len();
        if *total > MAX_DATA_TOTAL {
            anyhow::bail!(
                "the module directories hold more than {} MiB of files besides configuration; fleetform packs them all so that file() and templatefile() work on a remote coordinator. Move large files that the configuration does not read out of the module directories",
                MAX_DATA_TOTAL >> 20
            );
        }
        let bytes = std::fs::read(entry.path())
            .with_context(|| format!("reading {}", entry.path().display()))?;
        out.insert(key, Blob(bytes));
    }
    Ok(())
}

/// Whether the file at `path` is a fleetform plan file, or a file
/// fleetform encrypted (a plan file written with a key set); only its first
/// bytes are read. One that cannot be read is not: reading it whole reports
/// why.
fn written_by_fleetform(path: &Path) -> bool {
    use std::io::Read;
    let mut prefix = Vec::with_capacity(fleetform_shared::plan::PLAN_FILE_SNIFF_BYTES);
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    if file
        .take(fleetform_shared::plan::PLAN_FILE_SNIFF_BYTES as u64)
        .read_to_end(&mut prefix)
        .is_err()
    {
        return false;
    }
    fleetform_shared::plan::SavedPlan::is_plan_file(&prefix)
        || fleetform_shared::seal::Sealer::is_sealed(&prefix)
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
        // Data files of the module directories, not hidden ones.
        write("live/modules/a/templates/t.tpl", "hi ${name}");
        write("live/terraform.tfstate", "{}");
        // A plan file, whatever its name, is not data (see pack_data).
        let plan = fleetform_shared::plan::SavedPlan::new(
            "default",
            fleetform_shared::plan::Plan::default(),
            files.clone(),
        );
        std::fs::write(root.join("release.plan"), plan.encode()).unwrap();
        std::fs::write(root.join("modules/a/tfplan"), plan.encode()).unwrap();
        // Encrypted (FLEETFORM_ENCRYPTION_KEY set when it was written).
        let key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
        let sealer = fleetform_shared::seal::Sealer::from_vars(
            |v| (v == "FLEETFORM_ENCRYPTION_KEY").then(|| key.to_string()),
            |_| Err(std::io::Error::other("no key file in this test")),
        )
        .unwrap();
        assert!(sealer.encrypts());
        std::fs::write(
            root.join("sealed.plan"),
            sealer.seal("a plan file", plan.encode()).unwrap(),
        )
        .unwrap();
        let data = pack_data(&root, &files).unwrap();
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        // An editor's backup is no configuration, but file() may read any
        // file, so it travels as data.
        assert_eq!(keys, ["main.tf~", "modules/a/templates/t.tpl", "notes.txt"]);
    }
}
