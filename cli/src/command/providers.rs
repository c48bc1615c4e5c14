//! `providers` (the providers the configuration and the state need, as a
//! tree), `providers schema -json [DIR]` (their schemas in the format of
//! `terraform providers schema -json`), `providers lock`, `providers mirror`
//! and `version` (with the selected providers' versions).

use crate::args::ProvidersSchemaArgs;
use crate::bundle;
use crate::present::report::report;
use crate::present::schema_json::providers_schema_json;
use crate::provider::{needed, requirements, schemas_of};
use fleetform_install::resolve::Resolver;
use fleetform_lang::config::load_config;
#[cfg(test)]
use fleetform_lang::config::load_module;
use fleetform_shared::diag::Diagnostic;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub async fn schema(args: &ProvidersSchemaArgs) -> anyhow::Result<u8> {
    if !args.json {
        return Ok(report(
            false,
            &Diagnostic::error(
                "The `fleetform providers schema` command requires the `-json` flag.",
                "",
            ),
        ));
    }
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let files = bundle::pack(&dir)?;
    let (config, diags) = load_config(&files);
    for d in diags.iter() {
        eprint!("{}", crate::present::run_text::diagnostic(d, &files));
    }
    let Some(config) = config.filter(|_| !diags.has_errors()) else {
        return Ok(1);
    };
    match schemas_of(&config).await {
        Ok(schemas) => {
            println!("{}", providers_schema_json(&schemas));
            Ok(0)
        }
        Err(d) => Ok(report(false, &d)),
    }
}

/// `providers lock`: the lock file step of `init`, alone.
pub fn lock() -> anyhow::Result<u8> {
    let files = bundle::pack(std::path::Path::new("."))?;
    let (config, diags) = load_config(&files);
    let Some(config) = config.filter(|_| !diags.has_errors()) else {
        for d in diags.iter() {
            eprint!("{}", crate::present::run_text::diagnostic(d, &files));
        }
        return Ok(1);
    };
    let found = crate::provider::lock_file::update(false, &needed(&config));
    for d in found.iter() {
        eprint!("{}", crate::present::run_text::diagnostic(d, &files));
    }
    if found.has_errors() {
        return Ok(1);
    }
    println!("\nSuccess! fleetform has updated the lock file.");
    Ok(0)
}

/// `providers mirror DIR`: copies the package of every provider the
/// configuration needs, as installed here, into DIR in the layout a
/// `filesystem_mirror` reads (HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/).
pub fn mirror(target: &std::path::Path) -> anyhow::Result<u8> {
    let files = bundle::pack(std::path::Path::new("."))?;
    let (config, diags) = load_config(&files);
    let Some(config) = config.filter(|_| !diags.has_errors()) else {
        for d in diags.iter() {
            eprint!("{}", crate::present::run_text::diagnostic(d, &files));
        }
        return Ok(1);
    };
    let resolver = Resolver::from_env();
    let platform = fleetform_install::resolve::platform();
    let mut failed = false;
    for (addr, constraint) in needed(&config) {
        println!("- Mirroring {addr}...");
        let resolved = match resolver.resolve(&addr, constraint.as_deref()) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("  Error: {e}");
                failed = true;
                continue;
            }
        };
        let Some(version) = &resolved.version else {
            println!(
                "  - skipped: {} is not a versioned package (a development override or an unversioned build)",
                resolved.executable.display()
            );
            continue;
        };
        let dir = target
            .join(addr.hostname.as_str())
            .join(addr.namespace.as_str())
            .join(addr.type_name.as_str())
            .join(version.to_string())
            .join(&platform);
        std::fs::create_dir_all(&dir)?;
        let source_dir = resolved.executable.parent().filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy() == platform)
        });
        match source_dir {
            Some(src) => copy_dir(src, &dir)?,
            None => {
                let name = resolved
                    .executable
                    .file_name()
                    .expect("an executable has a name");
                std::fs::copy(&resolved.executable, dir.join(name))?;
            }
        }
        println!("  - {version} for {platform}: {}", dir.display());
    }
    Ok(if failed { 1 } else { 0 })
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let dest = to.join(path.file_name().expect("a directory entry has a name"));
        if path.is_dir() {
            copy_dir(&path, &dest)?;
        } else {
            std::fs::copy(&path, &dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_cover_required_and_implied_providers() {
        let files = BTreeMap::from([(
            "main.tf".to_string(),
            r#"
terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 3.2"
    }
    thing = {
      source = "example.com/acme/thing"
    }
  }
}
resource "random_id" "a" {
  byte_length = 4
}
resource "null_resource" "b" {}
"#
            .to_string(),
        )]);
        let (module, diags) = load_module(&files);
        assert!(!diags.has_errors(), "{diags:?}");
        let reqs = requirements(&module.unwrap());
        let shown: Vec<(String, Option<&str>)> = reqs
            .iter()
            .map(|(a, c)| (a.to_string(), c.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [
                ("example.com/acme/thing".to_string(), None),
                (
                    "registry.terraform.io/hashicorp/null".to_string(),
                    Some("~> 3.2")
                ),
                ("registry.terraform.io/hashicorp/random".to_string(), None),
            ]
        );
    }
}

/// `version [-json]`: fleetform's version, the platform in Terraform's
/// spelling (`linux_amd64`), and the provider versions the dependency lock
/// file (.terraform.lock.hcl) of the working directory selects.
pub fn version(json: bool) -> u8 {
    let version = env!("CARGO_PKG_VERSION");
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    let platform = format!("{}_{arch}", std::env::consts::OS);
    let selections = lock_selections(std::path::Path::new(".terraform.lock.hcl"));
    if json {
        let doc = serde_json::json!({
            "fleetform_version": version,
            "platform": platform,
            "provider_selections": selections,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("JSON of strings")
        );
    } else {
        println!("fleetform v{version}\non {platform}");
        for (provider, v) in &selections {
            println!("+ provider {provider} v{v}");
        }
    }
    0
}

/// Provider source address → version, from a dependency lock file (none
/// when it is missing or unreadable: `version` reports what it can).
fn lock_selections(path: &std::path::Path) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return BTreeMap::new();
    };
    let Ok(body) = hcl::parse(&text) else {
        return BTreeMap::new();
    };
    body.blocks()
        .filter(|b| b.identifier() == "provider")
        .filter_map(|b| {
            let source = b.labels().first()?.as_str().to_string();
            let version = b.body().attributes().find_map(|a| match a.expr() {
                hcl::Expression::String(v) if a.key() == "version" => Some(v.clone()),
                _ => None,
            })?;
            Some((source, version))
        })
        .collect()
}

#[cfg(test)]
mod version_tests {
    #[test]
    fn provider_selections_come_from_the_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".terraform.lock.hcl");
        std::fs::write(
            &path,
            r#"# This file is maintained automatically by "terraform init".
provider "registry.terraform.io/hashicorp/null" {
  version     = "3.2.1"
  constraints = "~> 3.0"
  hashes = [
    "h1:abc=",
  ]
}

provider "registry.terraform.io/hashicorp/random" {
  version = "3.5.1"
}
"#,
        )
        .unwrap();
        let got = super::lock_selections(&path);
        assert_eq!(got.len(), 2);
        assert_eq!(got["registry.terraform.io/hashicorp/null"], "3.2.1");
        assert_eq!(got["registry.terraform.io/hashicorp/random"], "3.5.1");
        assert!(super::lock_selections(&dir.path().join("missing")).is_empty());
    }
}

/// `providers`: what the configuration requires, as a tree by module, and
/// what the state uses (Terraform's layout).
pub async fn tree(client: &mut crate::client::Client, ws: &str) -> anyhow::Result<u8> {
    let files = bundle::pack(std::path::Path::new("."))?;
    let (config, diags) = load_config(&files);
    for d in diags.iter() {
        eprint!("{}", crate::present::run_text::diagnostic(d, &files));
    }
    let Some(config) = config.filter(|_| !diags.has_errors()) else {
        return Ok(1);
    };
    println!("\nProviders required by configuration:\n.");
    print!("{}", tree_lines(&config.root, ""));
    let state = crate::client::state(client, ws).await?;
    let used: std::collections::BTreeSet<String> = state
        .iter()
        .flat_map(|s| s.resources.values().map(|i| i.provider.to_string()))
        .collect();
    if !used.is_empty() {
        println!("\nProviders required by state:\n");
        for p in used {
            println!("    provider[{p}]\n");
        }
    }
    Ok(0)
}

/// One module's providers, then its calls, drawn as a tree under `indent`.
fn tree_lines(node: &fleetform_lang::config::ModuleNode, indent: &str) -> String {
    let mut items: Vec<(String, Option<&fleetform_lang::config::ModuleNode>)> =
        requirements(&node.module)
            .into_iter()
            .map(|(addr, constraint)| {
                let c = constraint.map(|c| format!(" {c}")).unwrap_or_default();
                (format!("provider[{addr}]{c}"), None)
            })
            .collect();
    for (name, child) in &node.children {
        items.push((format!("module.{name}"), Some(child)));
    }
    let mut out = String::new();
    let n = items.len();
    for (i, (label, child)) in items.into_iter().enumerate() {
        let last = i + 1 == n;
        out.push_str(&format!(
            "{indent}{}{label}\n",
            if last { "└── " } else { "├── " }
        ));
        if let Some(child) = child {
            let deeper = format!("{indent}{}", if last { "    " } else { "│   " });
            out.push_str(&tree_lines(child, &deeper));
        }
    }
    out
}
