//! Running `fleetform test` and `terraform test` on the same files and
//! comparing their reports (`tests/test_command.rs`). Normalised before
//! comparing: colours, trailing spaces (Terraform ends a blank line of a
//! diagnostic's box with one), UUIDs, and "Terraform" where a text names
//! the tool.

use crate::{CliRun, bin_dir, run_in};
use std::path::Path;
use std::process::{Command, Stdio};

/// Writes `files` under a fresh directory.
pub fn scenario(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = tmp.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    tmp
}

pub fn terraform_present() -> bool {
    let found = Command::new("terraform")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        println!("SKIP: the comparison with `terraform test` (no `terraform`)");
    }
    found
}

/// `terraform get` (local modules must be installed for Terraform) and
/// `terraform test ARGS` in a copy of `dir`, with our providers.
pub fn terraform_test(dir: &Path, args: &[&str]) -> CliRun {
    let copy = tempfile::tempdir().unwrap();
    copy_dir(dir, copy.path());
    let rc = copy.path().join("tf-cli.tfrc");
    std::fs::write(
        &rc,
        format!(
            "provider_installation {{\n  dev_overrides {{\n    \"hashicorp/null\" = \"{0}\"\n    \"hashicorp/random\" = \"{0}\"\n  }}\n  direct {{}}\n}}\n",
            bin_dir().display()
        ),
    )
    .unwrap();
    let tf = |args: &[&str]| {
        let out = Command::new("terraform")
            .args(args)
            .current_dir(copy.path())
            .env("TF_CLI_CONFIG_FILE", &rc)
            .env("CHECKPOINT_DISABLE", "1")
            .stdin(Stdio::null())
            .output()
            .expect("run terraform");
        CliRun {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    };
    // `get` installs the runs' modules; `init` would look providers up
    // in the registry, which this machine may not reach.
    let get = tf(&["get"]);
    assert_eq!(get.code, 0, "terraform get: {}", get.all_output());
    let mut full = vec!["test"];
    full.extend_from_slice(args);
    tf(&full)
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            if entry.file_name() == ".fleetform" {
                continue;
            }
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Colours and trailing spaces out, UUIDs masked, the tool's name as ours.
pub fn normalize(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out.lines()
        .map(|l| {
            mask_uuids(l.trim_end())
                .replace("Terraform ", "fleetform ")
                .replace("terraform plan", "fleetform plan")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn mask_uuids(line: &str) -> String {
    let is_uuid = |s: &str| {
        s.len() == 36
            && s.char_indices().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => c == '-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    let mut out = String::new();
    let mut i = 0;
    while i < line.len() {
        if line.get(i..i + 36).is_some_and(is_uuid) {
            out.push_str("<uuid>");
            i += 36;
            continue;
        }
        let c = line[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Runs `fleetform test ARGS` in `dir`, checks its report against the
/// expectations, then against `terraform test` when it is present.
/// `terraform_only` lines (none of ours) are dropped from Terraform's
/// standard error first: a known difference, named where it is used.
pub fn check(
    dir: &Path,
    args: &[&str],
    code: i32,
    stdout: &str,
    stderr: &str,
    terraform_only: &[&str],
) {
    let mut full = vec!["test"];
    full.extend_from_slice(args);
    let ours = run_in(dir, &full);
    let (out, err) = (normalize(&ours.stdout), normalize(&ours.stderr));
    assert_eq!(out, stdout.trim_end(), "stdout of fleetform test");
    assert_eq!(err, stderr.trim_end(), "stderr of fleetform test");
    assert_eq!(ours.code, code, "{}", ours.all_output());
    if !terraform_present() {
        return;
    }
    let theirs = terraform_test(dir, args);
    let their_err: String = normalize(&theirs.stderr)
        .lines()
        .filter(|l| !terraform_only.contains(l))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        out,
        normalize(&theirs.stdout),
        "stdout, fleetform vs terraform"
    );
    assert_eq!(err, their_err, "stderr, fleetform vs terraform");
    assert_eq!(ours.code, theirs.code, "exit code, fleetform vs terraform");
}
