//! Fetching git module sources with the system `git` binary.
//!
//! Why the binary and not a library: go-getter, which Terraform and OpenTofu
//! use, shells out to `git` too, so the same credentials, ssh
//! configuration, proxies, `insteadOf` rewrites and credential helpers work
//! unchanged, and fleetform needs no libgit2 (a C dependency) to build.
//!
//! A branch or tag is cloned shallow (`--depth 1 --branch REF`); a ref that
//! looks like a commit id needs the history, so that is a full clone and a
//! checkout. `?depth=N` overrides the depth, as in go-getter.

use super::source::GitSource;
use std::path::Path;
use std::process::{Command, Stdio};

/// Clones `src` into `dest` (which must not exist) and checks out its ref.
pub fn clone(src: &GitSource, dest: &Path) -> Result<(), String> {
    let is_commit = src.git_ref.as_deref().is_some_and(looks_like_commit);
    let depth = match (src.depth, is_commit) {
        (Some(d), _) => Some(d),
        (None, false) => Some(1),
        (None, true) => None,
    };
    let mut args: Vec<String> = vec!["clone".into(), "--quiet".into()];
    if let Some(d) = depth {
        args.push(format!("--depth={d}"));
    }
    if let (Some(r), false) = (&src.git_ref, is_commit) {
        args.push(format!("--branch={r}"));
    }
    args.push("--".into());
    args.push(src.url.clone());
    args.push(dest.to_string_lossy().into_owned());
    run_git(None, &args)?;
    if let (Some(r), true) = (&src.git_ref, is_commit) {
        run_git(
            Some(dest),
            &["checkout".into(), "--quiet".into(), r.clone()],
        )?;
    }
    if dest.join(".gitmodules").is_file() {
        let args = ["submodule", "update", "--init", "--recursive", "--quiet"];
        run_git(Some(dest), &args.map(String::from))?;
    }
    Ok(())
}

/// 7 to 40 hexadecimal digits: an abbreviated or full commit id.
fn looks_like_commit(r: &str) -> bool {
    (7..=40).contains(&r.len()) && r.bytes().all(|c| c.is_ascii_hexdigit())
}

fn run_git(dir: Option<&Path>, args: &[String]) -> Result<(), String> {
    let mut cmd = Command::new("git");
    // A detached HEAD after checking out a tag or commit is expected.
    cmd.args(["-c", "advice.detachedHead=false"]);
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Never wait for a password nobody can type: fail instead.
        .env("GIT_TERMINAL_PROMPT", "0")
        // A surrounding repository's settings (e.g. when run from a git
        // hook) must not leak into the clone.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    let out = cmd.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            "the git command was not found; fleetform runs the system git to install git module sources, so install git and run init again".to_string()
        } else {
            format!("running git: {e}")
        }
    })?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(format!(
        "git {} failed: {}",
        args.first().map(String::as_str).unwrap_or(""),
        if stderr.is_empty() {
            out.status.to_string()
        } else {
            stderr
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_ids_are_told_from_branch_and_tag_names() {
        assert!(looks_like_commit("51d4629"));
        assert!(looks_like_commit(
            "51d462976d84fdea54b47d80dcabbf680badcdb8"
        ));
        assert!(!looks_like_commit("v1.2.0"));
        assert!(!looks_like_commit("main"));
        assert!(!looks_like_commit("abc123"));
    }
}
