//! The evaluation environment: what functions see besides their arguments.
//! Files come from the configuration bundle (the CLI packed them), never
//! from the coordinator's own disk, so a coordinator on another host reads
//! exactly what the user's machine holds.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

/// What `file()`, `fileset()`, `templatefile()` and friends read.
///
/// Paths are given as the configuration writes them (`"${path.module}/x"`
/// is `"modules/net/x"`): relative to the root module's directory, with
/// `..` allowed to reach above it when the bundle holds those files.
pub trait FileSystem: Send + Sync {
    /// The bytes of the regular file at `path`.
    fn read(&self, path: &str) -> Result<Vec<u8>, String>;
    /// Whether a regular file is at `path` (false for a directory).
    fn is_file(&self, path: &str) -> bool;
    /// Whether a directory is at `path`.
    fn is_dir(&self, path: &str) -> bool;
    /// Every regular file below directory `dir` (recursively), as paths
    /// relative to `dir` with `/` separators, sorted.
    fn files_under(&self, dir: &str) -> Vec<String>;
}

/// A file system with nothing in it.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoFiles;

impl FileSystem for NoFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        Err(format!("no file exists at {path:?}"))
    }
    fn is_file(&self, _: &str) -> bool {
        false
    }
    fn is_dir(&self, _: &str) -> bool {
        false
    }
    fn files_under(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
}

/// Files by normalized relative path ([`normalize_path`]): the bundle.
#[derive(Clone, Debug, Default)]
pub struct MapFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl MapFiles {
    pub fn new(files: impl IntoIterator<Item = (String, Vec<u8>)>) -> MapFiles {
        MapFiles {
            files: files
                .into_iter()
                .map(|(k, v)| (normalize_path(&k), v))
                .collect(),
        }
    }
}

impl FileSystem for MapFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        let key = normalize_path(path);
        self.files.get(&key).cloned().ok_or_else(|| {
            if self.is_dir(path) {
                format!("{path:?} is a directory, not a file")
            } else {
                format!("no file exists at {path:?}")
            }
        })
    }

    fn is_file(&self, path: &str) -> bool {
        self.files.contains_key(&normalize_path(path))
    }

    fn is_dir(&self, path: &str) -> bool {
        let dir = normalize_path(path);
        if dir == "." {
            return true;
        }
        let prefix = format!("{dir}/");
        self.files
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix))
    }

    fn files_under(&self, dir: &str) -> Vec<String> {
        let dir = normalize_path(dir);
        if dir == "." {
            return self
                .files
                .keys()
                .filter(|k| !k.starts_with("../"))
                .cloned()
                .collect();
        }
        let prefix = format!("{dir}/");
        self.files
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k[prefix.len()..].to_string())
            .collect()
    }
}

/// A path with `.` steps and `x/..` pairs removed and `\` turned into `/`,
/// as a key into the bundle: `./a/../b/c` → `b/c`, `../m/./x` → `../m/x`,
/// the root directory itself → `.`. Absolute paths keep their leading `/`.
pub fn normalize_path(path: &str) -> String {
    let path = path.replace('\\', "/");
    let absolute = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match out.last() {
                Some(&last) if last != ".." => {
                    out.pop();
                }
                _ if absolute => {}
                _ => out.push(".."),
            },
            p => out.push(p),
        }
    }
    let joined = out.join("/");
    match (absolute, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// Everything an evaluation may consult besides the scope's named values.
#[derive(Clone)]
pub struct EvalEnv {
    pub files: Arc<dyn FileSystem>,
    /// True while applying: impure functions (`timestamp`, `uuid`, `bcrypt`)
    /// return values; while planning they are unknown, as in Terraform.
    pub apply: bool,
    /// The time the plan was made, RFC 3339 (`plantimestamp()`); None → unknown.
    pub plan_timestamp: Option<String>,
    /// The root module's directory as an absolute path on the machine that
    /// submitted the run (`path.cwd`, `abspath()`).
    pub cwd: String,
}

impl Default for EvalEnv {
    fn default() -> EvalEnv {
        EvalEnv {
            files: Arc::new(NoFiles),
            apply: false,
            plan_timestamp: None,
            cwd: ".".to_string(),
        }
    }
}

impl std::fmt::Debug for EvalEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalEnv")
            .field("apply", &self.apply)
            .field("plan_timestamp", &self.plan_timestamp)
            .field("cwd", &self.cwd)
            .finish_non_exhaustive()
    }
}

/// The environment of scopes that do not provide one: no files, planning.
pub(crate) static DEFAULT_ENV: LazyLock<EvalEnv> = LazyLock::new(EvalEnv::default);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_lexically() {
        for (input, want) in [
            ("./a/../b/c", "b/c"),
            ("../m/./x", "../m/x"),
            (".", "."),
            ("", "."),
            ("a/..", "."),
            ("../../x/../y", "../../y"),
            ("/abs/./p/../q", "/abs/q"),
            ("modules\\net\\main.tf", "modules/net/main.tf"),
        ] {
            assert_eq!(normalize_path(input), want, "{input}");
        }
    }

    #[test]
    fn map_files_answer_by_normalized_path() {
        let fs = MapFiles::new([
            ("main.tf".to_string(), b"x".to_vec()),
            ("templates/a.tpl".to_string(), b"a".to_vec()),
            ("templates/sub/b.tpl".to_string(), b"b".to_vec()),
            ("../shared/c.txt".to_string(), b"c".to_vec()),
        ]);
        assert_eq!(fs.read("./templates/../templates/a.tpl").unwrap(), b"a");
        assert!(fs.is_file("../shared/c.txt"));
        assert!(fs.is_dir("templates"));
        assert!(!fs.is_dir("templ"));
        assert!(!fs.is_file("templates"));
        assert!(fs.read("templates").unwrap_err().contains("is a directory"));
        assert_eq!(fs.files_under("templates"), ["a.tpl", "sub/b.tpl"]);
        assert_eq!(
            fs.files_under("."),
            ["main.tf", "templates/a.tpl", "templates/sub/b.tpl"]
        );
    }
}
