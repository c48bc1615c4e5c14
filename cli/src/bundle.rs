//! Packing a configuration directory: every `.tf` file by name.

use anyhow::Context;
use std::collections::BTreeMap;
use std::path::Path;

pub fn pack(dir: &Path) -> anyhow::Result<BTreeMap<String, String>> {
    let mut files = BTreeMap::new();
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("reading configuration directory {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "tf") && path.is_file() {
            let name = path
                .file_name()
                .expect("file has a name")
                .to_string_lossy()
                .to_string();
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            files.insert(name, text);
        }
    }
    Ok(files)
}
