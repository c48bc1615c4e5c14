//! Filesystem functions: file, fileexists, filebase64, the file hashes
//! (filemd5, filesha1, filesha256, filesha512, filebase64sha256,
//! filebase64sha512), and the path functions abspath, dirname, basename,
//! pathexpand. fileset and templatefile have their own files.
//!
//! Files come from the configuration bundle ([`EvalEnv::files`]), named as
//! Terraform names them: `~` expanded, then relative to the root module's
//! directory and cleaned lexically. Paths print in errors as Terraform
//! prints them, so messages match its own (including Go's `open …: no such
//! file or directory` where Terraform passes Go's error through).

#[cfg(test)]
mod tests;

use super::hashes::{base64, md5_bytes, sha1_bytes, sha256_bytes, sha512_bytes};
use super::{Def, FnError, FnResult, Unknowns::Deep, def, def_env, str_arg};
use crate::eval::env::EvalEnv;
use fleetform_shared::value::Value;

pub(super) const DEFS: &[Def] = &[
    def_env("file", Deep, file),
    def_env("filebase64", Deep, filebase64),
    def_env("fileexists", Deep, fileexists),
    def_env("filemd5", Deep, filemd5),
    def_env("filesha1", Deep, filesha1),
    def_env("filesha256", Deep, filesha256),
    def_env("filesha512", Deep, filesha512),
    def_env("filebase64sha256", Deep, filebase64sha256),
    def_env("filebase64sha512", Deep, filebase64sha512),
    def_env("abspath", Deep, abspath),
    def("dirname", Deep, dirname),
    def("basename", Deep, basename),
    def("pathexpand", Deep, pathexpand),
];

/// Go's `path.Clean` for `/`-separated paths: `.` steps and `x/..` pairs
/// removed, repeated slashes merged; `..` above a relative start kept,
/// above the root dropped; `""` is `"."`.
pub(super) fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match out.last() {
                Some(&last) if last != ".." => {
                    out.pop();
                }
                _ if rooted => {}
                _ => out.push(".."),
            },
            p => out.push(p),
        }
    }
    let joined = out.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `filepath.Join`: the non-empty parts joined with `/`, cleaned.
pub(super) fn join(parts: &[&str]) -> String {
    let parts: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return String::new();
    }
    clean(&parts.join("/"))
}

/// go-homedir's `Expand`: a leading `~` (alone or before a separator)
/// becomes the home directory. The home directory is the `HOME` of the
/// process evaluating the configuration, read at each call: on the
/// coordinator that may differ from the user's machine.
pub(super) fn expand_home(path: &str) -> Result<String, String> {
    let Some(rest) = path.strip_prefix('~') else {
        return Ok(path.to_string());
    };
    if !rest.is_empty() && !rest.starts_with(['/', '\\']) {
        return Err("cannot expand user-specific home dir".into());
    }
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() => Ok(join(&[&home, rest])),
        // go-homedir falls back to asking the system, and fails so when
        // that gives nothing.
        _ => Err("blank output when reading home directory".into()),
    }
}

/// What is at a path of the bundle.
pub(super) enum Entry {
    File(Vec<u8>),
    Dir,
    Missing,
    /// A path through a regular file (`a.txt/b`): Go reports "not a directory".
    NotDir,
}

/// The path Terraform opens for `raw` (home expanded, relative to the root
/// module, cleaned), or the expansion error.
pub(super) fn resolve(raw: &str) -> Result<String, String> {
    expand_home(raw)
        .map(|p| clean(&p))
        .map_err(|e| format!("failed to expand ~: {e}"))
}

pub(super) fn lookup(env: &EvalEnv, path: &str) -> Entry {
    let fs = &env.files;
    if fs.is_file(path) {
        return match fs.read(path) {
            Ok(bytes) => Entry::File(bytes),
            Err(_) => Entry::Missing,
        };
    }
    if fs.is_dir(path) {
        return Entry::Dir;
    }
    let through_file = path
        .match_indices('/')
        .map(|(i, _)| &path[..i])
        .any(|dir| !dir.is_empty() && fs.is_file(dir));
    if through_file {
        Entry::NotDir
    } else {
        Entry::Missing
    }
}

/// The bytes of the file `file()`, `filebase64()` and `templatefile()`
/// read, with their errors, all blamed on the path argument.
pub(super) fn read_config_file(env: &EvalEnv, raw: &str) -> Result<Vec<u8>, FnError> {
    let blame = |m: String| FnError::arg(0, m);
    let path = resolve(raw).map_err(blame)?;
    match lookup(env, &path) {
        Entry::File(bytes) => Ok(bytes),
        Entry::Missing => Err(blame(format!(
            "no file exists at {path:?}; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource{}",
            env.files
                .missing_note()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        ))),
        Entry::Dir => Err(blame(format!(
            "failed to read file: read {path}: is a directory"
        ))),
        Entry::NotDir => Err(blame(format!("open {path}: not a directory"))),
    }
}

/// A file's text, which must be UTF-8 (`file()`, `templatefile()`).
pub(super) fn read_text(env: &EvalEnv, raw: &str) -> Result<String, FnError> {
    String::from_utf8(read_config_file(env, raw)?).map_err(|_| {
        FnError::call(format!(
            "contents of {raw:?} are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead"
        ))
    })
}

fn file(env: &EvalEnv, a: &[Value]) -> FnResult {
    read_text(env, &str_arg(a, 0)?).map(Value::String)
}

fn filebase64(env: &EvalEnv, a: &[Value]) -> FnResult {
    let bytes = read_config_file(env, &str_arg(a, 0)?)?;
    Ok(Value::String(base64(&bytes)))
}

/// Whether a regular file is at the path; a directory is an error, as in
/// Terraform (which blames an argument the function does not have, so it
/// surfaces as an error of the call).
fn fileexists(env: &EvalEnv, a: &[Value]) -> FnResult {
    let path = resolve(&str_arg(a, 0)?).map_err(FnError::call)?;
    match lookup(env, &path) {
        Entry::File(_) => Ok(Value::Bool(true)),
        Entry::Missing => Ok(Value::Bool(false)),
        Entry::Dir => Err(FnError::call(format!(
            "{path:?} is a directory, not a file"
        ))),
        Entry::NotDir => Err(FnError::call(format!("failed to stat {path:?}"))),
    }
}

/// The file-hash functions pass Go's own errors through, as errors of the
/// call.
fn file_hash(
    env: &EvalEnv,
    a: &[Value],
    hash: fn(&[u8]) -> Vec<u8>,
    encode: fn(&[u8]) -> String,
) -> FnResult {
    let path = resolve(&str_arg(a, 0)?).map_err(FnError::call)?;
    let bytes = match lookup(env, &path) {
        Entry::File(bytes) => bytes,
        Entry::Missing => {
            return Err(FnError::call(format!(
                "open {path}: no such file or directory"
            )));
        }
        Entry::Dir => return Err(FnError::call(format!("read {path}: is a directory"))),
        Entry::NotDir => return Err(FnError::call(format!("open {path}: not a directory"))),
    };
    Ok(Value::String(encode(&hash(&bytes))))
}

fn hex(b: &[u8]) -> String {
    hex::encode(b)
}

fn filemd5(env: &EvalEnv, a: &[Value]) -> FnResult {
    file_hash(env, a, md5_bytes, hex)
}

fn filesha1(env: &EvalEnv, a: &[Value]) -> FnResult {
    file_hash(env, a, sha1_bytes, hex)
}

fn filesha256(env: &EvalEnv, a: &[Value]) -> FnResult {
    file_hash(env, a, sha256_bytes, hex)
}

fn filesha512(env: &EvalEnv, a: &[Value]) -> FnResult {
    file_hash(env, a, sha512_bytes, hex)
}

fn filebase64sha256(env: &EvalEnv, a: &[Value]) -> FnResult {
    file_hash(env, a, sha256_bytes, base64)
}

fn filebase64sha512(env: &EvalEnv, a: &[Value]) -> FnResult {
    file_hash(env, a, sha512_bytes, base64)
}

/// The path made absolute against the root module's directory on the
/// machine that submitted the run (Terraform's working directory there).
fn abspath(env: &EvalEnv, a: &[Value]) -> FnResult {
    let path = str_arg(a, 0)?;
    Ok(Value::String(if path.starts_with('/') {
        clean(&path)
    } else {
        join(&[&env.cwd, &path])
    }))
}

/// Go's `filepath.Dir`: everything before the last separator, cleaned.
fn dirname(a: &[Value]) -> FnResult {
    let path = str_arg(a, 0)?;
    let head = path.rfind('/').map_or("", |i| &path[..=i]);
    Ok(Value::String(clean(head)))
}

/// Go's `filepath.Base`: the last element, trailing separators ignored.
fn basename(a: &[Value]) -> FnResult {
    let path = str_arg(a, 0)?;
    if path.is_empty() {
        return Ok(Value::from("."));
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return Ok(Value::from("/"));
    }
    let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
    Ok(Value::from(last))
}

fn pathexpand(a: &[Value]) -> FnResult {
    expand_home(&str_arg(a, 0)?)
        .map(Value::String)
        .map_err(FnError::call)
}
