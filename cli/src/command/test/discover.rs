//! Which test files `fleetform test` runs: the `.tftest.hcl` files of the
//! working directory and of its test directory (`tests` unless
//! `-test-directory` says otherwise), by path, narrowed by `-filter`.
//! JSON test files (`.tftest.json`) are listed too, for the caller to
//! refuse: a file that exists is never silently left out.

use fleetform_lang::config::is_test_file;
use std::path::Path;

/// The test files' paths from the working directory, in name order.
pub fn test_files(test_directory: &str, filters: &[String]) -> anyhow::Result<Vec<String>> {
    let mut found = Vec::new();
    for dir in [".", test_directory] {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(anyhow::anyhow!("reading {dir}: {e}")),
        };
        for entry in entries {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if !is_test_file(&name) && !name.ends_with(".tftest.json") {
                continue;
            }
            let path = if dir == "." {
                name
            } else {
                format!("{}/{name}", dir.trim_end_matches('/'))
            };
            if Path::new(&path).is_file() {
                found.push(path);
            }
        }
    }
    found.sort();
    found.dedup();
    if !filters.is_empty() {
        let wanted = |p: &String| {
            filters
                .iter()
                .any(|f| Path::new(f.trim_start_matches("./")) == Path::new(p))
        };
        found.retain(wanted);
    }
    Ok(found)
}
