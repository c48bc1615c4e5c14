//! Stored coordinator tokens: the file `fleetform login` writes and every
//! command that talks to a coordinator reads.
//!
//! The file is Terraform's own, `~/.terraform.d/credentials.tfrc.json`
//! (`{"credentials": {"HOST": {"token": "…"}}}`), so that one file holds a
//! team's tokens for both tools and `terraform logout HOST` removes what
//! `fleetform login HOST` stored. Hosts are keyed as Terraform keys them:
//! lower case, with the port unless it is 443.
//!
//! A command's token comes from, in order: `FLEETFORM_TOKEN`; Terraform's
//! `TF_TOKEN_<host>` variable (dots as `_`, hyphens as `__`; hosts without
//! a port only, as Terraform); this file. Credentials blocks of a
//! `.terraformrc` and credentials helpers are not read.

use anyhow::Context;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `~/.terraform.d/credentials.tfrc.json`.
pub fn file() -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("HOME is not set: the credentials file lives in $HOME/.terraform.d")?;
    Ok(Path::new(&home)
        .join(".terraform.d")
        .join("credentials.tfrc.json"))
}

/// The key a host's token is stored under: `HOST[:PORT]` in lower case,
/// from a host or a URL (`https://coord.example.com:7400/` →
/// `coord.example.com:7400`); port 443 is left out, as Terraform does.
pub fn host_key(given: &str) -> anyhow::Result<String> {
    let rest = match given.split_once("://") {
        Some((scheme, rest)) if scheme == "http" || scheme == "https" => rest,
        Some((scheme, _)) => anyhow::bail!(
            "The given hostname {given:?} is not valid: a coordinator URL starts with http:// or https://, not {scheme}://"
        ),
        None => given,
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let lower = authority.to_ascii_lowercase();
    let (host, port) = match lower.strip_prefix('[') {
        // [IPv6]:PORT
        Some(v6) => match v6.split_once(']') {
            Some((addr, tail)) => (format!("[{addr}]"), tail.strip_prefix(':')),
            None => anyhow::bail!("The given hostname {given:?} is not valid: unclosed ["),
        },
        None => match lower.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (lower.clone(), None),
        },
    };
    let valid_name = |h: &str| {
        !h.is_empty()
            && h.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            })
    };
    let valid_v6 = |h: &str| {
        h.strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .is_some_and(|a| a.parse::<std::net::Ipv6Addr>().is_ok())
    };
    if !(valid_name(&host) || valid_v6(&host)) {
        anyhow::bail!(
            "The given hostname {given:?} is not valid: use a host name or address, with a port if it is not 443 (coord.example.com:7400), or the coordinator's URL"
        );
    }
    match port {
        None | Some("443") => Ok(host),
        Some(p) if p.parse::<u16>().is_ok_and(|n| n > 0) => Ok(format!("{host}:{p}")),
        Some(p) => anyhow::bail!("The given hostname {given:?} is not valid: bad port {p:?}"),
    }
}

/// Terraform's environment variable for `host`'s token; None for a host
/// with a port, which such a name cannot carry.
pub fn env_var_name(host: &str) -> Option<String> {
    if host.contains([':', '[']) {
        return None;
    }
    Some(format!(
        "TF_TOKEN_{}",
        host.replace('-', "__").replace('.', "_")
    ))
}

/// The stored file as JSON: None when it does not exist. A file that is
/// not a JSON object is an error, never overwritten.
fn read(path: &Path) -> anyhow::Result<Option<Map<String, Value>>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(_) => anyhow::bail!(
            "the credentials file {} is not a JSON object; fix or remove it",
            path.display()
        ),
        Err(e) => anyhow::bail!(
            "the credentials file {} is not valid JSON ({e}); fix or remove it",
            path.display()
        ),
    }
}

/// The token stored in `path` for `host`, if any.
pub fn stored(path: &Path, host: &str) -> anyhow::Result<Option<String>> {
    Ok(read(path)?.and_then(|m| {
        m.get("credentials")?
            .get(host)?
            .get("token")?
            .as_str()
            .map(str::to_string)
    }))
}

/// The token for the coordinator at `url` from the environment or the
/// credentials file (see the module doc for the order).
pub fn token_for(url: &str) -> anyhow::Result<Option<String>> {
    if let Some(t) = std::env::var("FLEETFORM_TOKEN")
        .ok()
        .filter(|t| !t.trim().is_empty())
    {
        return Ok(Some(t));
    }
    // A URL we cannot key has no stored token; connecting reports it.
    let Ok(host) = host_key(url) else {
        return Ok(None);
    };
    if let Some(t) = env_var_name(&host)
        .and_then(|v| std::env::var(v).ok())
        .filter(|t| !t.trim().is_empty())
    {
        return Ok(Some(t));
    }
    let Ok(path) = file() else {
        return Ok(None);
    };
    stored(&path, &host)
}

/// Sets (Some) or removes (None) `host`'s token in `path`, keeping every
/// other entry; true when something changed. Written whole to a new file
/// readable by its owner only, then renamed over the old one, so a crash
/// leaves either file, never half of one.
pub fn update(path: &Path, host: &str, token: Option<&str>) -> anyhow::Result<bool> {
    let mut doc = read(path)?.unwrap_or_default();
    let creds = doc
        .entry("credentials")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(creds) = creds else {
        anyhow::bail!(
            "\"credentials\" in {} is not a JSON object; fix or remove it",
            path.display()
        );
    };
    let changed = match token {
        Some(t) => {
            let mut entry = Map::new();
            entry.insert("token".into(), Value::String(t.to_string()));
            creds.insert(host.to_string(), Value::Object(entry));
            true
        }
        None => creds.remove(host).is_some(),
    };
    if !changed {
        return Ok(false);
    }
    let dir = path.parent().context("credentials file has no directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let text = serde_json::to_string_pretty(&Value::Object(doc))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".credentials")
        .tempfile_in(dir)
        .with_context(|| format!("writing in {}", dir.display()))?;
    // tempfile creates it 0600 already; said here because it matters.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("replacing {}", path.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_keyed_as_terraform_keys_them() {
        assert_eq!(
            host_key("https://Coord.Example.com/").unwrap(),
            "coord.example.com"
        );
        assert_eq!(
            host_key("https://coord.example.com:443").unwrap(),
            "coord.example.com"
        );
        assert_eq!(host_key("http://127.0.0.1:7400").unwrap(), "127.0.0.1:7400");
        assert_eq!(
            host_key("coord.example.com:7400").unwrap(),
            "coord.example.com:7400"
        );
        assert_eq!(host_key("https://[::1]:7400").unwrap(), "[::1]:7400");
        for bad in [
            "bad host!",
            "ftp://x",
            "a..b",
            "-a.com",
            "h:0",
            "h:99999",
            "",
        ] {
            assert!(host_key(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn terraform_s_variable_names_encode_dots_and_hyphens() {
        assert_eq!(
            env_var_name("my-coord.example.com").as_deref(),
            Some("TF_TOKEN_my__coord_example_com")
        );
        assert_eq!(env_var_name("127.0.0.1:7400"), None);
    }

    #[test]
    fn entries_are_added_and_removed_keeping_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d").join("credentials.tfrc.json");
        assert_eq!(stored(&path, "a.example").unwrap(), None);
        assert!(update(&path, "a.example", Some("T1")).unwrap());
        assert!(update(&path, "b.example", Some("T2")).unwrap());
        assert_eq!(stored(&path, "a.example").unwrap().as_deref(), Some("T1"));
        assert!(update(&path, "a.example", None).unwrap());
        assert!(!update(&path, "a.example", None).unwrap());
        assert_eq!(stored(&path, "a.example").unwrap(), None);
        assert_eq!(stored(&path, "b.example").unwrap().as_deref(), Some("T2"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Terraform's layout: two-space indentation, no final newline.
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"credentials\": {\n    \"b.example\": {\n      \"token\": \"T2\"\n    }\n  }\n}"
        );
    }

    #[test]
    fn a_file_that_is_not_json_is_reported_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("credentials.tfrc.json");
        std::fs::write(&path, "{not json").unwrap();
        let e = update(&path, "a.example", Some("T"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not valid JSON"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
        assert!(stored(&path, "a.example").is_err());
    }
}
