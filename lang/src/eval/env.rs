//! The evaluation environment: what functions see besides their arguments.
//!
//! In a fleet, files come from the configuration bundle (the CLI packed
//! them), never from the coordinator's own disk, so a coordinator on another
//! host reads exactly what the user's machine held when the run was
//! submitted. A file written while the run applies (by a `local-exec`
//! provisioner, which runs on a worker host) is not in the bundle: the file
//! functions say so in their error rather than read some host's disk.
//!
//! In embedded mode the CLI, the coordinator and the provisioners share one
//! machine and one directory, so [`DiskFiles`] reads that directory when
//! the functions are called, at plan and at apply time, as Terraform does:
//! a resource that depends on a provisioner may read the file it wrote.

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
    /// Why a file may be missing here that the user sees on their disk,
    /// said after a file function's "no file exists" (a fleet's bundle).
    fn missing_note(&self) -> Option<&'static str> {
        None
    }
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
    /// Said after "no file exists" (see [`MapFiles::missing_note`]).
    missing_note: Option<&'static str>,
}

/// Why a fleet's apply does not see a file written during the run.
pub const FLEET_FILES_NOTE: &str = "in a fleet the file functions read the configuration directory as the CLI sent it when the run started, so a file written during the apply (for example by a local-exec provisioner, which ran on a worker) is not there";

impl MapFiles {
    pub fn new(files: impl IntoIterator<Item = (String, Vec<u8>)>) -> MapFiles {
        MapFiles {
            files: files
                .into_iter()
                .map(|(k, v)| (normalize_path(&k), v))
                .collect(),
            missing_note: None,
        }
    }

    /// Adds `note` to the message for a missing file.
    pub fn missing_note(mut self, note: &'static str) -> MapFiles {
        self.missing_note = Some(note);
        self
    }
}

impl FileSystem for MapFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        let key = normalize_path(path);
        self.files.get(&key).cloned().ok_or_else(|| {
            if self.is_dir(path) {
                format!("{path:?} is a directory, not a file")
            } else if let Some(note) = self.missing_note {
                format!("no file exists at {path:?} ({note})")
            } else {
                format!("no file exists at {path:?}")
            }
        })
    }

    fn is_file(&self, path: &str) -> bool {
        self.files.contains_key(&normalize_path(path))
    }

    fn missing_note(&self) -> Option<&'static str> {
        self.missing_note
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

/// The directory of the configuration on this machine, read when a
/// function asks (embedded mode, see the module comment); the bundle
/// answers for what the directory does not hold (module files the CLI
/// found elsewhere).
pub struct DiskFiles {
    root: std::path::PathBuf,
    bundle: MapFiles,
}

impl DiskFiles {
    pub fn new(root: impl Into<std::path::PathBuf>, bundle: MapFiles) -> DiskFiles {
        DiskFiles {
            root: root.into(),
            bundle,
        }
    }

    fn at(&self, path: &str) -> std::path::PathBuf {
        self.root.join(normalize_path(path))
    }
}

impl FileSystem for DiskFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        let p = self.at(path);
        if p.is_dir() {
            return Err(format!("{path:?} is a directory, not a file"));
        }
        match std::fs::read(&p) {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => self.bundle.read(path),
            Err(e) => Err(format!("failed to read {path:?}: {e}")),
        }
    }

    fn is_file(&self, path: &str) -> bool {
        self.at(path).is_file() || self.bundle.is_file(path)
    }

    fn is_dir(&self, path: &str) -> bool {
        self.at(path).is_dir() || self.bundle.is_dir(path)
    }

    fn files_under(&self, dir: &str) -> Vec<String> {
        let top = self.at(dir);
        if !top.is_dir() {
            return self.bundle.files_under(dir);
        }
        let mut out = Vec::new();
        let mut stack = vec![top.clone()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for entry in entries.flatten() {
                let p = entry.path();
                // Symbolic links are followed, as Terraform's fileset does.
                if p.is_dir() {
                    stack.push(p);
                } else if p.is_file()
                    && let Ok(rel) = p.strip_prefix(&top)
                {
                    out.push(rel.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        out.sort();
        out
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
    fn disk_files_read_the_directory_now_and_the_bundle_for_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let bundle =
            MapFiles::new([("elsewhere.txt".to_string(), b"b".to_vec())]).missing_note("a note");
        let fs = DiskFiles::new(dir.path(), bundle);
        assert!(!fs.is_file("out.txt"));
        let err = fs.read("out.txt").unwrap_err();
        assert!(
            err.contains("no file exists") && err.contains("a note"),
            "{err}"
        );
        // Written after the files were first consulted: seen at once.
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("out.txt"), "hello").unwrap();
        std::fs::write(dir.path().join("sub/x.txt"), "x").unwrap();
        assert_eq!(fs.read("./out.txt").unwrap(), b"hello");
        assert!(fs.is_file("out.txt") && fs.is_dir("sub"));
        assert_eq!(fs.files_under("."), ["out.txt", "sub/x.txt"]);
        assert_eq!(fs.read("elsewhere.txt").unwrap(), b"b");
        assert!(fs.read("sub").unwrap_err().contains("is a directory"));
    }

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
