//! `fleetform modules [-json]`: the modules the configuration declares, as
//! Terraform 1.10+ lists them: a tree of calls with their sources, or a
//! JSON list in the order the tree reads.

use fleetform_lang::config::{ModuleNode, load_config};
use serde_json::json;
use std::path::Path;

/// Loads the configuration here and prints its module calls; 1 when it
/// does not load (its diagnostics on standard error).
pub fn run(json_out: bool) -> anyhow::Result<u8> {
    let files = crate::bundle::pack(Path::new("."))?;
    let (config, diags) = load_config(&files);
    let config = match config {
        Some(c) if !diags.has_errors() => c,
        _ => {
            for d in diags.iter() {
                eprint!("{}", crate::present::run_text::diagnostic(d, &files));
            }
            return Ok(1);
        }
    };
    if json_out {
        let mut list = Vec::new();
        listed(&config.root, &mut list);
        println!("{}", json!({ "format_version": "1.0", "modules": list }));
    } else {
        let mut text = String::from("\nModules declared by configuration:\n.\n");
        drawn(&config.root, "", &mut text);
        println!("{text}");
    }
    Ok(0)
}

/// A call's source and version constraint, from its parent's block.
fn call_of<'a>(parent: &'a ModuleNode, name: &str) -> (&'a str, &'a str) {
    parent
        .module
        .module_calls
        .get(name)
        .map(|c| (c.source.as_str(), c.version.as_deref().unwrap_or("")))
        .unwrap_or(("", ""))
}

/// Each call under `node`, depth first, calls in name order.
fn listed(node: &ModuleNode, out: &mut Vec<serde_json::Value>) {
    for (name, child) in &node.children {
        let (source, version) = call_of(node, name);
        out.push(json!({ "key": name, "source": source, "version": version }));
        listed(child, out);
    }
}

/// The calls under `node` as tree branches, each line after `prefix`.
fn drawn(node: &ModuleNode, prefix: &str, out: &mut String) {
    let count = node.children.len();
    for (i, (name, child)) in node.children.iter().enumerate() {
        let last = i + 1 == count;
        let (source, version) = call_of(node, name);
        let version = if version.is_empty() {
            String::new()
        } else {
            format!(" {version}")
        };
        let branch = if last { "└── " } else { "├── " };
        out.push_str(&format!("{prefix}{branch}\"{name}\"[{source}]{version}\n"));
        // Terraform's tree draws a continuing branch with two no-break
        // spaces.
        let deeper = format!("{prefix}{}", if last { "    " } else { "│\u{a0}\u{a0} " });
        drawn(child, &deeper, out);
    }
}
