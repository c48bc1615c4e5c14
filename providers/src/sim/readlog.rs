//! The sim store's read log, `reads.log` in the store directory: one line
//! per object read (`ID TIMESTAMP_MS`), kept only when the file exists, so
//! a test that wants to count reads creates it and nothing else pays for
//! it. Lines are single `O_APPEND` writes, so provider processes never
//! interleave them.

use std::io::Write;
use std::path::Path;

pub const FILE: &str = "reads.log";

/// Notes a read of object `id`, when the store keeps a read log. A failure
/// to note it never fails the read.
pub fn note(dir: &Path, id: &str) {
    let path = dir.join(FILE);
    let Ok(mut file) = std::fs::OpenOptions::new().append(true).open(&path) else {
        return;
    };
    let line = format!("{id} {}\n", super::stored::now_ms());
    if let Err(e) = file.write_all(line.as_bytes()) {
        tracing::warn!(error = %e, "noting a read in the read log failed");
    }
}

/// The ids read, in order, as the log at `dir` has them.
pub fn reads(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(FILE))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}
