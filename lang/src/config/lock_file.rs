//! The dependency lock file, `.terraform.lock.hcl`, as Terraform reads and
//! writes it: one `provider "ADDRESS"` block per provider with the selected
//! `version`, the `constraints` the configuration gave when it was
//! selected, and the `hashes` of the package.
//!
//! The CLI sends the file with the configuration (it is a key of the
//! bundle, beside the `.tf` files), so every run, wherever its workers are,
//! uses the versions the user locked: see `ProviderLock` in the wire
//! messages for what a worker does with it.

use fleetform_shared::ProviderAddr;
use fleetform_shared::diag::Diagnostic;
use std::collections::{BTreeMap, BTreeSet};

pub const LOCK_FILE: &str = ".terraform.lock.hcl";

/// One provider's entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LockEntry {
    pub version: String,
    pub constraints: Option<String>,
    /// `h1:` and `zh:` hashes, as recorded.
    pub hashes: BTreeSet<String>,
}

/// The entries of a lock file's text, by provider source address as the
/// file spells it (`registry.terraform.io/hashicorp/null`).
pub fn parse_lock_file(text: &str) -> Result<BTreeMap<String, LockEntry>, Diagnostic> {
    let body = hcl::parse(text).map_err(|e| {
        Diagnostic::error(
            "Invalid dependency lock file",
            format!("{LOCK_FILE}: {e}. Fix the file, or delete it and run `fleetform init` to select the providers again."),
        )
    })?;
    let mut out = BTreeMap::new();
    for b in body.blocks().filter(|b| b.identifier() == "provider") {
        let Some(source) = b.labels().first().map(|l| l.as_str().to_string()) else {
            return Err(Diagnostic::error(
                "Invalid dependency lock file",
                format!("{LOCK_FILE}: a provider block has no address label."),
            ));
        };
        let mut entry = LockEntry::default();
        for a in b.body().attributes() {
            match (a.key(), a.expr()) {
                ("version", hcl::Expression::String(v)) => entry.version = v.clone(),
                ("constraints", hcl::Expression::String(c)) => entry.constraints = Some(c.clone()),
                ("hashes", hcl::Expression::Array(items)) => {
                    for i in items {
                        if let hcl::Expression::String(h) = i {
                            entry.hashes.insert(h.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        if entry.version.is_empty() {
            return Err(Diagnostic::error(
                "Invalid dependency lock file",
                format!("{LOCK_FILE}: the entry for {source} has no version."),
            ));
        }
        out.insert(source, entry);
    }
    Ok(out)
}

/// The entries by provider address, for a run: an address the file spells
/// in a way that is not a provider address is an error.
pub fn lock_by_provider(text: &str) -> Result<BTreeMap<ProviderAddr, LockEntry>, Diagnostic> {
    let mut out = BTreeMap::new();
    for (source, entry) in parse_lock_file(text)? {
        let addr: ProviderAddr = source.parse().map_err(|e| {
            Diagnostic::error(
                "Invalid dependency lock file",
                format!("{LOCK_FILE}: {source:?} is not a provider address: {e}"),
            )
        })?;
        out.insert(addr, entry);
    }
    Ok(out)
}

/// The file's text in Terraform's layout, providers by address.
pub fn render_lock_file(entries: &BTreeMap<String, LockEntry>) -> String {
    let mut out = String::from(
        "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n",
    );
    for (source, e) in entries {
        out.push_str(&format!("\nprovider {source:?} {{\n"));
        match &e.constraints {
            Some(c) => {
                out.push_str(&format!("  version     = {:?}\n", e.version));
                out.push_str(&format!("  constraints = {c:?}\n"));
            }
            None => out.push_str(&format!("  version = {:?}\n", e.version)),
        }
        out.push_str("  hashes = [\n");
        for h in &e.hashes {
            out.push_str(&format!("    {h:?},\n"));
        }
        out.push_str("  ]\n}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_bad_files_are_errors() {
        let mut entries = BTreeMap::new();
        entries.insert(
            "registry.terraform.io/hashicorp/null".to_string(),
            LockEntry {
                version: "3.2.1".into(),
                constraints: Some("~> 3.2".into()),
                hashes: BTreeSet::from(["h1:abc=".into(), "zh:def".into()]),
            },
        );
        entries.insert(
            "registry.terraform.io/hashicorp/random".to_string(),
            LockEntry {
                version: "3.5.1".into(),
                constraints: None,
                hashes: BTreeSet::from(["h1:xyz=".into()]),
            },
        );
        let text = render_lock_file(&entries);
        assert!(
            text.contains("  version     = \"3.2.1\"\n  constraints = \"~> 3.2\"\n  hashes = [\n"),
            "{text}"
        );
        assert!(
            text.contains("  version = \"3.5.1\"\n  hashes = [\n"),
            "{text}"
        );
        assert_eq!(parse_lock_file(&text).unwrap(), entries);
        let by_addr = lock_by_provider(&text).unwrap();
        assert_eq!(
            by_addr[&ProviderAddr::new("hashicorp", "null")].version,
            "3.2.1"
        );

        let broken = parse_lock_file("provider \"x\" {").unwrap_err();
        assert_eq!(broken.summary, "Invalid dependency lock file");
        let no_version = parse_lock_file(
            "provider \"registry.terraform.io/hashicorp/null\" {\n  hashes = []\n}\n",
        )
        .unwrap_err();
        assert!(
            no_version.detail.contains("has no version"),
            "{no_version:?}"
        );
        let bad_addr =
            lock_by_provider("provider \"a/b/c/d\" {\n  version = \"1.0.0\"\n}\n").unwrap_err();
        assert!(
            bad_addr.detail.contains("not a provider address"),
            "{bad_addr:?}"
        );
    }
}
