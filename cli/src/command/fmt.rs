//! `fmt`: rewrites configuration files in the canonical style, as
//! `terraform fmt` does (`fleetform_lang::fmt`, byte for byte equal to
//! Terraform 1.11's output on its golden corpus).
//!
//! Targets are files or directories (default: the working directory; `-`:
//! standard input to standard output). In a directory, `.tf` and
//! `.tfvars` files; `-recursive` descends into subdirectories (not into
//! `.terraform`, `.fleetform` or `.git`). Changed files are listed and
//! rewritten; `-check` rewrites nothing and exits 3 when any file is not
//! formatted; `-diff` shows the changes; a file that does not parse is an
//! error (exit 2) and is left as it is.
//!
//! Like Terraform (hclwrite keeps the tokens after the last one as they
//! are), the end of a file is kept: no final newline is added to a file
//! without one, and several are not folded into one. Standard input is
//! written out through Terraform's UI writer, which ends what it prints
//! with exactly one newline of its own: the formatted text gains a final
//! newline when it has none.

use crate::args::FmtArgs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

fn is_formattable(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "tf" || e == "tfvars")
}

const SKIPPED_DIRS: [&str; 3] = [".terraform", ".fleetform", ".git"];

/// The files a target names, sorted.
fn files_of(target: &Path, recursive: bool, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if target.is_file() {
        out.push(target.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(target)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if recursive && !name.is_some_and(|n| SKIPPED_DIRS.contains(&n.as_str())) {
                files_of(&path, recursive, out)?;
            }
        } else if is_formattable(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// The formatted text with the source's own end: its run of trailing
/// newlines (none, one or several) instead of the formatter's.
fn keep_end(src: &str, formatted: String) -> String {
    let body = src.trim_end_matches(['\n', '\r']);
    let tail = &src[body.len()..];
    let mut out = formatted.trim_end_matches(['\n', '\r']).to_string();
    if out.is_empty() && body.trim().is_empty() {
        return src.to_string();
    }
    out.push_str(tail);
    out
}

/// What Terraform's UI writer prints for `text`: one final newline.
fn ui_line(text: &str) -> String {
    format!("{}\n", text.strip_suffix('\n').unwrap_or(text))
}

fn unified_diff(name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("old/{name}"), &format!("new/{name}"))
        .to_string()
}

pub fn run(args: &FmtArgs) -> anyhow::Result<u8> {
    let write = args.write && !args.check;
    let targets: Vec<PathBuf> = if args.targets.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.targets.clone()
    };
    if targets.iter().any(|t| t.as_os_str() == "-") {
        let mut src = String::new();
        std::io::stdin().read_to_string(&mut src)?;
        return Ok(match fleetform_lang::fmt::format(&src) {
            Ok(out) => {
                let out = keep_end(&src, out);
                if args.diff && out != src {
                    print!("{}", ui_line(&unified_diff("<stdin>", &src, &out)));
                } else if !args.check && !args.diff {
                    print!("{}", ui_line(&out));
                }
                if args.check && out != src { 3 } else { 0 }
            }
            Err(e) => {
                eprintln!("Error: Invalid syntax in standard input: {e}");
                2
            }
        });
    }
    let mut files = Vec::new();
    for t in &targets {
        if !t.exists() {
            eprintln!("Error: No file or directory at {}", t.display());
            return Ok(2);
        }
        if t.is_file() && !is_formattable(t) {
            eprintln!(
                "Error: Only .tf and .tfvars files can be formatted; {} is neither.",
                t.display()
            );
            return Ok(2);
        }
        files_of(t, args.recursive, &mut files)?;
    }
    let (mut unformatted, mut failed) = (false, false);
    let mut stdout = std::io::stdout().lock();
    for path in files {
        let name = path
            .strip_prefix("./")
            .unwrap_or(&path)
            .display()
            .to_string();
        let src = std::fs::read_to_string(&path)?;
        let out = match fleetform_lang::fmt::format(&src) {
            Ok(out) => keep_end(&src, out),
            Err(e) => {
                eprintln!("Error: Invalid syntax in {name}, {e}; the file is left as it is.");
                failed = true;
                continue;
            }
        };
        if out == src {
            continue;
        }
        unformatted = true;
        if args.list {
            writeln!(stdout, "{name}")?;
        }
        if args.diff {
            write!(stdout, "{}", unified_diff(&name, &src, &out))?;
        }
        if write {
            std::fs::write(&path, &out)?;
        }
    }
    Ok(if failed {
        2
    } else if args.check && unformatted {
        3
    } else {
        0
    })
}
