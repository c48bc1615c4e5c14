//! Where providers are installed on this machine, as Terraform finds them:
//! the CLI configuration file (`TF_CLI_CONFIG_FILE`, `TERRAFORM_CONFIG`,
//! `FLEETFORM_CLI_CONFIG_FILE`, else `~/.terraformrc`), the search
//! locations it implies, and what a filesystem mirror directory holds for
//! one provider (unpacked and packed layouts).

use crate::{CliConfig, Location, ProviderPattern, Version, parse_cli_config};
use fleetform_shared::ProviderAddr;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Terraform's variable naming the CLI configuration file.
pub const TF_CLI_CONFIG_FILE_ENV: &str = "TF_CLI_CONFIG_FILE";
/// Terraform's older name for it.
pub const TERRAFORM_CONFIG_ENV: &str = "TERRAFORM_CONFIG";
/// fleetform's own variable, used when Terraform's are unset.
pub const FLEETFORM_CLI_CONFIG_FILE_ENV: &str = "FLEETFORM_CLI_CONFIG_FILE";
/// Colon-separated extra filesystem mirror directories, searched before the
/// CLI configuration's; flat `terraform-provider-<type>[_v<version>]` files
/// there are accepted too.
pub const PLUGIN_DIR_ENV: &str = "FLEETFORM_PLUGIN_DIR";

/// fleetform's own providers, shipped next to the `fleetform` executable.
pub const BUNDLED: [(&str, &str); 5] = [
    ("hashicorp", "null"),
    ("hashicorp", "random"),
    ("hashicorp", "local"),
    ("hashicorp", "time"),
    ("fleetform", "sim"),
];

/// Everything resolution reads from the process environment, so tests can
/// build one without touching the real environment.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    pub tf_cli_config_file: Option<OsString>,
    pub terraform_config: Option<OsString>,
    pub fleetform_cli_config_file: Option<OsString>,
    pub plugin_dirs: Option<OsString>,
    pub home: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    pub xdg_data_dirs: Option<OsString>,
    pub cwd: PathBuf,
    /// The directory of the running executable (bundled providers).
    pub exe_dir: Option<PathBuf>,
}

impl Environment {
    /// Providers only from the plugin directory `dir`, with a home and
    /// working directory inside it: for tests (here and in the worker's),
    /// which must not read the user's CLI configuration.
    pub fn plugin_dir_only(dir: &std::path::Path) -> Environment {
        Environment {
            plugin_dirs: Some(dir.as_os_str().to_owned()),
            home: Some(dir.join("home")),
            cwd: dir.join("work"),
            ..Environment::default()
        }
    }

    pub fn current() -> Environment {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        Environment {
            tf_cli_config_file: var(TF_CLI_CONFIG_FILE_ENV),
            terraform_config: var(TERRAFORM_CONFIG_ENV),
            fleetform_cli_config_file: var(FLEETFORM_CLI_CONFIG_FILE_ENV),
            plugin_dirs: var(PLUGIN_DIR_ENV),
            home: var("HOME").map(PathBuf::from),
            xdg_data_home: var("XDG_DATA_HOME").map(PathBuf::from),
            xdg_data_dirs: var("XDG_DATA_DIRS"),
            cwd: std::env::current_dir().unwrap_or_default(),
            exe_dir: std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf)),
        }
    }

    /// The CLI configuration file, and whether it should exist (a variable
    /// names it; Terraform warns when it does not).
    fn cli_config_file(&self) -> Option<(PathBuf, bool)> {
        let named = self
            .tf_cli_config_file
            .as_ref()
            .or(self.terraform_config.as_ref())
            .or(self.fleetform_cli_config_file.as_ref());
        match named {
            Some(p) => Some((PathBuf::from(p), true)),
            None => self.home.as_ref().map(|h| (h.join(".terraformrc"), false)),
        }
    }

    /// Terraform's implied local mirrors, used without a
    /// `provider_installation` block: `terraform.d/plugins`, the CLI
    /// configuration directory's `plugins`, then the platform's data dirs.
    fn implied_mirrors(&self) -> Vec<PathBuf> {
        let mut dirs = vec![self.cwd.join("terraform.d/plugins")];
        if let Some(home) = &self.home {
            dirs.push(home.join(".terraform.d/plugins"));
        }
        if cfg!(target_os = "macos") {
            if let Some(home) = &self.home {
                dirs.push(home.join("Library/Application Support/io.terraform/plugins"));
            }
            dirs.push(PathBuf::from(
                "/Library/Application Support/io.terraform/plugins",
            ));
            return dirs;
        }
        let data_home = self
            .xdg_data_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".local/share")));
        dirs.extend(data_home.map(|d| d.join("terraform/plugins")));
        let data_dirs = self
            .xdg_data_dirs
            .clone()
            .unwrap_or_else(|| OsString::from("/usr/local/share/:/usr/share/"));
        dirs.extend(
            std::env::split_paths(&data_dirs)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| p.join("terraform/plugins")),
        );
        dirs
    }
}

/// How one location is searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchKind {
    /// A filesystem mirror (unpacked and packed layouts).
    Mirror(PathBuf),
    /// A `FLEETFORM_PLUGIN_DIR` directory: a mirror, plus flat
    /// `terraform-provider-<type>[_v<version>]` executables of any namespace.
    PluginDir(PathBuf),
    /// The directory of the `fleetform` executable: flat executables of
    /// [`BUNDLED`] providers only.
    Bundled(PathBuf),
    /// A method fleetform cannot use (`direct`, `network_mirror`): it
    /// installs nothing from the network.
    Unsupported(String),
}

/// One place to look, with the include/exclude rules of its method.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    pub kind: SearchKind,
    pub include: Vec<ProviderPattern>,
    pub exclude: Vec<ProviderPattern>,
}

impl Search {
    fn all(kind: SearchKind) -> Search {
        Search {
            kind,
            include: Vec::new(),
            exclude: Vec::new(),
        }
    }

    pub fn selects(&self, addr: &ProviderAddr) -> bool {
        crate::pattern::selects(&self.include, &self.exclude, addr)
    }

    /// How the location is named in a "not found" message.
    pub fn describe(&self) -> String {
        let dir = |d: &Path, what: &str| {
            let missing = if d.is_dir() { "" } else { ", does not exist" };
            format!("{} ({what}{missing})", d.display())
        };
        match &self.kind {
            SearchKind::Mirror(d) => dir(d, "filesystem mirror"),
            SearchKind::PluginDir(d) => dir(d, PLUGIN_DIR_ENV),
            SearchKind::Bundled(d) => dir(d, "bundled with fleetform"),
            SearchKind::Unsupported(what) => what.clone(),
        }
    }
}

/// The installation sources of this machine, in order of preference.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sources {
    /// The CLI configuration file that was read, if any.
    pub config_file: Option<PathBuf>,
    pub dev_overrides: Vec<(ProviderAddr, PathBuf)>,
    /// `FLEETFORM_PLUGIN_DIR`, then the CLI configuration's methods (or the
    /// implied mirrors): the newest allowed version among them wins.
    pub searches: Vec<Search>,
    /// fleetform's own providers, used only when no search has the provider.
    pub bundled: Vec<Search>,
}

impl Sources {
    /// Reads the CLI configuration named by `env` and lists the sources.
    pub fn load(env: &Environment) -> Result<Sources, String> {
        let mut sources = Sources::default();
        let mut config = CliConfig::default();
        if let Some((path, must_exist)) = env.cli_config_file() {
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    config = parse_cli_config(&path.display().to_string(), &text)
                        .map_err(|e| e.to_string())?;
                    sources.config_file = Some(path);
                }
                // Terraform warns about a named file that does not exist
                // and goes on with the defaults.
                // A variable naming a missing file means "no configuration";
                // machines often set TF_CLI_CONFIG_FILE to a default path
                // that was never created, so this stays quiet by default.
                Err(e) if must_exist && e.kind() == std::io::ErrorKind::NotFound => {
                    tracing::info!(
                        file = %path.display(),
                        "unable to open CLI configuration file: the CLI configuration file does not exist"
                    );
                }
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(format!(
                        "cannot read the CLI configuration file {}: {e}",
                        path.display()
                    ));
                }
                Err(_) => {}
            }
        }
        if let Some(dirs) = &env.plugin_dirs {
            sources.searches.extend(
                std::env::split_paths(dirs)
                    .filter(|p| !p.as_os_str().is_empty())
                    .map(|d| Search::all(SearchKind::PluginDir(d))),
            );
        }
        match config.provider_installation {
            Some(pi) => {
                sources.dev_overrides = pi
                    .dev_overrides
                    .into_iter()
                    .map(|(addr, dir)| (addr, PathBuf::from(dir)))
                    .collect();
                for m in pi.methods {
                    let kind = match m.location {
                        Location::FilesystemMirror(p) => SearchKind::Mirror(PathBuf::from(p)),
                        Location::Direct => SearchKind::Unsupported(format!(
                            "direct installation from the origin registry (line {}): not supported by fleetform",
                            m.line
                        )),
                        Location::NetworkMirror(url) => SearchKind::Unsupported(format!(
                            "network mirror {url} (line {}): not supported by fleetform",
                            m.line
                        )),
                    };
                    sources.searches.push(Search {
                        kind,
                        include: m.include,
                        exclude: m.exclude,
                    });
                }
            }
            None => sources.searches.extend(
                env.implied_mirrors()
                    .into_iter()
                    .map(|d| Search::all(SearchKind::Mirror(d))),
            ),
        }
        if let Some(exe) = &env.exe_dir {
            sources.bundled = vec![
                Search::all(SearchKind::Mirror(exe.join("providers"))),
                Search::all(SearchKind::Bundled(exe.clone())),
            ];
        }
        Ok(sources)
    }
}

/// What a location holds for one provider at one version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Package {
    /// An executable file (flat layouts).
    Executable(PathBuf),
    /// `<version>/<os>_<arch>/` of the unpacked mirror layout.
    Unpacked(PathBuf),
    /// `terraform-provider-<type>_<version>_<os>_<arch>.zip` of the packed layout.
    Packed(PathBuf),
}

/// A provider package found for this platform; `version` is `None` for
/// unversioned flat executables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub version: Option<Version>,
    pub package: Package,
}

/// Everything `search` holds for `addr` on `platform`.
pub fn candidates(search: &Search, addr: &ProviderAddr, platform: &str) -> Vec<Candidate> {
    match &search.kind {
        SearchKind::Mirror(d) => mirror(d, addr, platform),
        SearchKind::PluginDir(d) => {
            let mut found = mirror(d, addr, platform);
            found.extend(flat(d, &addr.type_name));
            found
        }
        SearchKind::Bundled(d) => {
            let bundled = BUNDLED.iter().any(|(ns, ty)| {
                addr.hostname == fleetform_shared::addr::DEFAULT_REGISTRY
                    && addr.namespace == *ns
                    && addr.type_name == *ty
            });
            if bundled {
                flat(d, &addr.type_name)
            } else {
                Vec::new()
            }
        }
        SearchKind::Unsupported(_) => Vec::new(),
    }
}

/// The unpacked and packed layouts under `<dir>/<hostname>/<namespace>/<type>/`.
fn mirror(dir: &Path, addr: &ProviderAddr, platform: &str) -> Vec<Candidate> {
    let Some(type_dir) = child_ignoring_case(dir, &addr.hostname)
        .and_then(|d| child_ignoring_case(&d, &addr.namespace))
        .and_then(|d| child_ignoring_case(&d, &addr.type_name))
    else {
        return Vec::new();
    };
    let packed_prefix = format!("terraform-provider-{}_", addr.type_name);
    let packed_suffix = format!("_{platform}.zip");
    let mut out = Vec::new();
    for name in dir_names(&type_dir) {
        let path = type_dir.join(&name);
        if let Some(v) = name
            .strip_prefix(&packed_prefix)
            .and_then(|rest| rest.strip_suffix(&packed_suffix))
        {
            if let Ok(version) = v.parse() {
                out.push(Candidate {
                    version: Some(version),
                    package: Package::Packed(path),
                });
            }
            continue;
        }
        let Ok(version) = name.parse::<Version>() else {
            tracing::debug!(dir = %path.display(), "not a provider version directory");
            continue;
        };
        let platform_dir = path.join(platform);
        if platform_dir.is_dir() {
            out.push(Candidate {
                version: Some(version),
                package: Package::Unpacked(platform_dir),
            });
        }
    }
    out
}

/// `terraform-provider-<type>` and `terraform-provider-<type>_v<version>[_x5]`
/// executables directly in `dir`.
fn flat(dir: &Path, type_name: &str) -> Vec<Candidate> {
    let exact = format!("terraform-provider-{type_name}");
    let versioned = format!("{exact}_v");
    let mut out = Vec::new();
    for name in dir_names(dir) {
        let version = if name == exact {
            None
        } else if let Some(rest) = name.strip_prefix(&versioned) {
            match rest.split('_').next().unwrap_or("").parse::<Version>() {
                Ok(v) => Some(v),
                Err(_) => continue,
            }
        } else {
            continue;
        };
        let path = dir.join(&name);
        if is_executable(&path) {
            out.push(Candidate {
                version,
                package: Package::Executable(path),
            });
        }
    }
    out
}

/// The executable in a package directory, by Terraform's rule: the first
/// file named `terraform-provider-<type>`, optionally followed by `_...` or
/// `.` and more.
pub fn package_executable(dir: &Path, type_name: &str) -> Result<PathBuf, String> {
    let prefix = format!("terraform-provider-{type_name}");
    let mut names = dir_names(dir);
    names.sort();
    for name in names {
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        if !(rest.is_empty() || rest.starts_with('_') || rest.starts_with('.')) {
            continue;
        }
        let path = dir.join(&name);
        if !path.is_file() {
            return Err(format!("{} is not a regular file", path.display()));
        }
        return Ok(path);
    }
    Err(format!(
        "could not find an executable file starting with {prefix} in {}",
        dir.display()
    ))
}

/// `dir/name`, matching `name` without regard to case (Terraform compares
/// hostnames, namespaces and types case-insensitively).
fn child_ignoring_case(dir: &Path, name: &str) -> Option<PathBuf> {
    let exact = dir.join(name);
    if exact.is_dir() {
        return Some(exact);
    }
    dir_names(dir)
        .into_iter()
        .find(|n| n.eq_ignore_ascii_case(name))
        .map(|n| dir.join(n))
        .filter(|p| p.is_dir())
}

fn dir_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect()
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}
