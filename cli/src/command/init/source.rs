//! Module source addresses as `terraform init` reads them: local paths,
//! registry addresses and go-getter addresses, normalized the way Terraform
//! records them in `.terraform/modules/modules.json` (its `addrs` package and
//! go-getter's "detectors"), so a manifest written by either tool matches the
//! other's idea of "the same source".
//!
//! Order of recognition (as in Terraform): a `./` or `../` prefix makes a
//! local path; anything that parses as `[HOST/]NAMESPACE/NAME/SYSTEM` is a
//! registry address; everything else is a go-getter address, whose shorthands
//! (`github.com/o/r`, `git@host:o/r.git`, `bitbucket.org/o/r`) are expanded
//! to `git::https://…` / `git::ssh://…` before it is classified.

use fleetform_lang::eval::normalize_path;
use std::fmt;

/// The default host of registry addresses without one.
pub const DEFAULT_REGISTRY_HOST: &str = "registry.terraform.io";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModuleSource {
    /// A path relative to the calling module, normalized (`./x`, `../x`).
    Local(String),
    Registry(RegistrySource),
    Git(GitSource),
    /// A go-getter address fleetform cannot fetch yet (`s3::`, `gcs::`,
    /// `hg::`, http archives, absolute paths): usable only when another
    /// tool installed it.
    Other(OtherSource),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistrySource {
    /// Lowercased hostname, `registry.terraform.io` when not given.
    pub host: String,
    pub namespace: String,
    pub name: String,
    pub system: String,
    pub subdir: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitSource {
    /// The package address as Terraform normalizes it, query included:
    /// `git::https://example.com/repo.git?ref=v1`.
    pub package: String,
    /// What `git clone` is given: the URL without the arguments go-getter
    /// itself consumes (`ref`, `depth`, `sshkey`).
    pub url: String,
    /// `?ref=`: a branch, tag or commit.
    pub git_ref: Option<String>,
    /// `?depth=`: clone depth.
    pub depth: Option<u32>,
    /// `?sshkey=`: go-getter writes this key to a file for ssh; not supported.
    pub ssh_key: bool,
    /// The directory inside the repository (`//subdir`), normalized, or "".
    pub subdir: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OtherSource {
    /// What fetches it: `s3`, `gcs`, `hg`, `http`, `https`, `file`, ...
    pub kind: String,
    pub package: String,
    pub subdir: String,
}

/// Why a source address cannot be used at all (Terraform rejects it too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidSource {
    /// Nothing recognizes it; Terraform's "Module not found", whose text
    /// suggests the `./` a relative path needs.
    NotFound(String),
    /// A recognized form with a bad part.
    Invalid(String),
}

impl InvalidSource {
    pub fn message(&self) -> &str {
        match self {
            InvalidSource::NotFound(m) | InvalidSource::Invalid(m) => m,
        }
    }
}

impl fmt::Display for InvalidSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl ModuleSource {
    /// The address as Terraform writes it into the manifest's `Source`.
    pub fn address(&self) -> String {
        match self {
            ModuleSource::Local(p) => p.clone(),
            ModuleSource::Registry(r) => with_subdir(&r.package(), &r.subdir),
            ModuleSource::Git(g) => with_subdir(&g.package, &g.subdir),
            ModuleSource::Other(o) => with_subdir(&o.package, &o.subdir),
        }
    }
}

impl RegistrySource {
    /// `HOST/NAMESPACE/NAME/SYSTEM`, the host always given.
    pub fn package(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.host, self.namespace, self.name, self.system
        )
    }
}

/// Terraform's `ModuleSourceRemote.String()`: the subdirectory goes before
/// the query string (`…/repo.git//modules/vpc?ref=v1`).
fn with_subdir(package: &str, subdir: &str) -> String {
    if subdir.is_empty() {
        return package.to_string();
    }
    match package.split_once('?') {
        Some((base, query)) => format!("{base}//{subdir}?{query}"),
        None => format!("{package}//{subdir}"),
    }
}

/// Parses the `source` argument of a module block.
pub fn parse(raw: &str) -> Result<ModuleSource, InvalidSource> {
    if ["./", "../", ".\\", "..\\"]
        .iter()
        .any(|p| raw.starts_with(p))
    {
        return Ok(ModuleSource::Local(local_path(raw)));
    }
    if let Some(r) = parse_registry(raw) {
        return Ok(ModuleSource::Registry(r));
    }
    parse_remote(raw)
}

/// A relative path cleaned like Go's `path.Clean`, keeping a leading `./`
/// (without it, it would read as a registry address).
fn local_path(raw: &str) -> String {
    let clean = normalize_path(&raw.replace('\\', "/"));
    if clean.starts_with("../") || clean == ".." {
        clean
    } else {
        format!("./{clean}")
    }
}

/// Splits `PACKAGE//SUBDIR?QUERY` into `PACKAGE?QUERY` and a cleaned
/// `SUBDIR`. The `//` of a URL scheme and anything in the query do not count.
pub fn split_package_subdir(src: &str) -> (String, String) {
    let stop = src.find('?').unwrap_or(src.len());
    let offset = src[..stop].find("://").map(|i| i + 3).unwrap_or(0);
    let Some(i) = src[offset..stop].find("//") else {
        return (src.to_string(), String::new());
    };
    let i = offset + i;
    let (mut package, mut subdir) = (src[..i].to_string(), &src[i + 2..]);
    if let Some(q) = subdir.find('?') {
        package.push_str(&subdir[q..]);
        subdir = &subdir[..q];
    }
    let subdir = if subdir.is_empty() {
        String::new()
    } else {
        normalize_path(subdir)
    };
    (package, subdir)
}

fn parse_registry(raw: &str) -> Option<RegistrySource> {
    let (package, subdir) = split_package_subdir(raw);
    if subdir == ".." || subdir.starts_with("../") {
        return None;
    }
    let parts: Vec<&str> = package.split('/').collect();
    let (host, rest) = match parts.len() {
        3 => (DEFAULT_REGISTRY_HOST.to_string(), &parts[..]),
        4 => (registry_host(parts[0])?, &parts[1..]),
        _ => return None,
    };
    let name_ok = |s: &str| {
        let b = s.as_bytes();
        let edge = |c: u8| c.is_ascii_alphanumeric();
        let inner = |c: &u8| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_';
        (1..=64).contains(&b.len()) && edge(b[0]) && edge(b[b.len() - 1]) && b.iter().all(inner)
    };
    let system_ok = |s: &str| {
        (1..=64).contains(&s.len())
            && s.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    if !(name_ok(rest[0]) && name_ok(rest[1]) && system_ok(rest[2])) {
        return None;
    }
    Some(RegistrySource {
        host,
        namespace: rest[0].to_string(),
        name: rest[1].to_string(),
        system: rest[2].to_string(),
        subdir,
    })
}

/// A registry hostname, compared lowercased; it needs a dot, and the two
/// version-control hosts are reserved for their shorthands.
fn registry_host(given: &str) -> Option<String> {
    let host = given.to_lowercase();
    let (name, port) = match host.split_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (host.as_str(), None),
    };
    let name_ok = !name.is_empty()
        && name.contains('.')
        && !name.contains("--")
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '.');
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()));
    if !name_ok || !port_ok || name == "github.com" || name == "bitbucket.org" {
        return None;
    }
    Some(host)
}

fn parse_remote(raw: &str) -> Result<ModuleSource, InvalidSource> {
    let (package, subdir) = split_package_subdir(raw);
    if subdir == ".." || subdir.starts_with("../") {
        return Err(InvalidSource::Invalid(format!(
            "subdirectory path {subdir:?} leads outside of the module package"
        )));
    }
    let (package, detected_subdir) = detect(&package)?;
    let subdir = match (detected_subdir.is_empty(), subdir.is_empty()) {
        (true, _) => subdir,
        (false, true) => normalize_path(&detected_subdir),
        (false, false) => normalize_path(&format!("{detected_subdir}/{subdir}")),
    };
    classify(package, subdir)
}

/// `FORCE::REST` → (Some(FORCE), REST).
fn forced(src: &str) -> (Option<&str>, &str) {
    match src.split_once("::") {
        Some((f, rest))
            if !f.is_empty()
                && !rest.is_empty()
                && f.bytes().all(|c| c.is_ascii_alphanumeric()) =>
        {
            (Some(f), rest)
        }
        _ => (None, src),
    }
}

/// The scheme of a URL (`https` of `https://x`), as Go's URL parser finds
/// one: letters first, then letters, digits, `+`, `-`, `.` up to a colon.
fn url_scheme(src: &str) -> Option<&str> {
    let colon = src.find(':')?;
    let scheme = &src[..colon];
    let mut chars = scheme.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (first_ok && rest_ok).then_some(scheme)
}

/// go-getter's detection: an address with a URL scheme stays as it is;
/// the shorthands become full addresses with a forced getter. Returns the
/// package address and any subdirectory the shorthand itself named.
fn detect(given: &str) -> Result<(String, String), InvalidSource> {
    let (force, src) = forced(given);
    if url_scheme(src).is_some() {
        return Ok((given.to_string(), String::new()));
    }
    let (detected_force, url, subdir) = if let Some(d) = detect_github(src)? {
        d
    } else if let Some(d) = detect_git_ssh(src) {
        d
    } else if let Some(rest) = src.strip_prefix("bitbucket.org/") {
        let (path, query) = split_query(rest);
        let path = if path.ends_with(".git") {
            path.to_string()
        } else {
            format!("{path}.git")
        };
        let url = format!("https://bitbucket.org/{path}{query}");
        (Some("git"), url, String::new())
    } else if src.contains("googleapis.com/") {
        (Some("gcs"), detect_gcs(src)?, String::new())
    } else if src.contains(".amazonaws.com/") {
        (Some("s3"), detect_s3(src)?, String::new())
    } else if let Some(abs) = src.strip_prefix('/') {
        (None, format!("file:///{abs}"), String::new())
    } else {
        return Err(InvalidSource::NotFound(format!(
            "The module address {given:?} could not be resolved.\n\nIf you intended this as a path relative to the current module, use \"./{given}\" instead. The \"./\" prefix indicates that the address is a relative filesystem path."
        )));
    };
    let package = match force.or(detected_force) {
        Some(f) => format!("{f}::{url}"),
        None => url,
    };
    Ok((package, subdir))
}

/// `www.googleapis.com/storage/VERSION/BUCKET/OBJECT` → an https URL.
fn detect_gcs(src: &str) -> Result<String, InvalidSource> {
    let parts: Vec<&str> = src.split('/').collect();
    if parts.len() < 5 {
        return Err(InvalidSource::Invalid("URL is not a valid GCS URL".into()));
    }
    Ok(format!(
        "https://www.googleapis.com/storage/{}/{}/{}",
        parts[2],
        parts[3],
        parts[4..].join("/")
    ))
}

/// The three S3 host styles → an https URL naming region and bucket.
fn detect_s3(src: &str) -> Result<String, InvalidSource> {
    let parts: Vec<&str> = src.split('/').collect();
    let host: Vec<&str> = parts[0].split('.').collect();
    let rest = parts[1..].join("/");
    match host.len() {
        3 => Ok(format!("https://{}.amazonaws.com/{rest}", host[0])),
        4 => Ok(format!(
            "https://{}.amazonaws.com/{}/{rest}",
            host[1], host[0]
        )),
        5 if host[1] == "s3" => Ok(format!(
            "https://s3.{}.amazonaws.com/{}/{rest}",
            host[2], host[0]
        )),
        _ => Err(InvalidSource::Invalid("URL is not a valid S3 URL".into())),
    }
}

fn split_query(s: &str) -> (&str, &str) {
    match s.find('?') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// What a shorthand becomes: the getter it forces, the URL, a subdirectory.
type Detected = (Option<&'static str>, String, String);

/// `github.com/ORG/REPO[/SUBDIR][?QUERY]` → `https://github.com/ORG/REPO.git?QUERY`.
fn detect_github(src: &str) -> Result<Option<Detected>, InvalidSource> {
    if !src.starts_with("github.com/") {
        return Ok(None);
    }
    let (path, query) = split_query(src);
    let parts: Vec<&str> = path.split('/').collect();
    if parts.len() < 3 {
        return Err(InvalidSource::Invalid(
            "GitHub URLs should be github.com/username/repo".into(),
        ));
    }
    let mut repo = parts[..3].join("/");
    if !repo.ends_with(".git") {
        repo.push_str(".git");
    }
    let subdir = parts[3..].join("/");
    Ok(Some((
        Some("git"),
        format!("https://{repo}{query}"),
        subdir,
    )))
}

/// SCP-like ssh addresses (`git@github.com:org/repo.git`); only user `git`
/// makes it a git address, as in go-getter.
fn detect_git_ssh(src: &str) -> Option<Detected> {
    let (user, rest) = src.split_once('@')?;
    if user != "git" || rest.contains('@') {
        return None;
    }
    let (host, path) = rest.split_once(':')?;
    if host.is_empty() || host.contains('/') {
        return None;
    }
    let path = path.strip_prefix('/').unwrap_or(path);
    if path.is_empty() {
        return None;
    }
    let (path, query) = split_query(path);
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{}", encode_query(&parse_query(&query[1..])))
    };
    Some((
        Some("git"),
        format!("ssh://git@{host}/{path}{query}"),
        String::new(),
    ))
}

/// `k=v&k2=v2`, percent-decoded, in order.
fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (unescape(k), unescape(v))
        })
        .collect()
}

/// Go's `url.Values.Encode`: keys sorted, values query-escaped.
fn encode_query(pairs: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = pairs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted
        .iter()
        .map(|(k, v)| format!("{}={}", escape(k), escape(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.bytes() {
        match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(c as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{c:02X}")),
        }
    }
    out
}

/// Sorts a normalized go-getter address by what would fetch it.
fn classify(package: String, subdir: String) -> Result<ModuleSource, InvalidSource> {
    let (force, rest) = forced(&package);
    let kind = match (force, url_scheme(rest)) {
        (Some(f), _) => f.to_lowercase(),
        (None, Some(s)) => s.to_lowercase(),
        (None, None) => {
            return Err(InvalidSource::Invalid(format!(
                "invalid source address: {package}"
            )));
        }
    };
    if kind != "git" {
        return Ok(ModuleSource::Other(OtherSource {
            kind,
            package,
            subdir,
        }));
    }
    let rest = rest.to_string();
    let (base, query) = match rest.split_once('?') {
        Some((b, q)) => (b.to_string(), q),
        None => (rest.clone(), ""),
    };
    let mut git_ref = None;
    let mut depth = None;
    let mut ssh_key = false;
    let mut kept = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        match unescape(k).as_str() {
            "ref" => git_ref = Some(unescape(v)).filter(|r| !r.is_empty()),
            "depth" => {
                let d = unescape(v);
                depth = Some(d.parse::<u32>().map_err(|_| {
                    InvalidSource::Invalid(format!(
                        "the depth argument {d:?} is not a whole number"
                    ))
                })?)
                .filter(|d| *d > 0);
            }
            "sshkey" => ssh_key = true,
            _ => kept.push(part),
        }
    }
    let url = if kept.is_empty() {
        base
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok(ModuleSource::Git(GitSource {
        package,
        url,
        git_ref,
        depth,
        ssh_key,
        subdir,
    }))
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
