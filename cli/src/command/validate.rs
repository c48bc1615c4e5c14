//! `validate`: the configuration checked without a state: syntax,
//! references, the graph, and the arguments against the providers' schemas.

use crate::bundle;
use crate::provider;
use fleetform_lang::config::load_config;
use fleetform_shared::diag::{Diagnostics, Severity};
use std::collections::BTreeMap;
use std::path::Path;

pub async fn run(dir: &Path, json: bool) -> anyhow::Result<u8> {
    let files = bundle::pack(dir)?;
    let (config, mut diags) = load_config(&files);
    if let Some(c) = &config
        && !diags.has_errors()
        && let Err(d) = fleetform_lang::graph::config::build(c, &[])
    {
        diags.extend(d);
    }
    if let Some(c) = &config {
        let clean = !diags.has_errors();
        match provider::schemas_of(c).await {
            Ok(schemas) => {
                // Reported with the other ephemeral errors (found without
                // schemas), in source order, as Terraform's validation does.
                let found = fleetform_lang::config::check_ephemeral_arguments(c, &schemas);
                if !found.is_empty() {
                    diags.extend(found);
                    diags.0.sort_by_key(|d| {
                        d.range.as_ref().map(|r| (r.filename.clone(), r.start.byte))
                    });
                }
                if clean {
                    diags.extend(fleetform_lang::config::check_against_schemas(c, &schemas));
                }
            }
            Err(d) if clean => diags.push(d),
            Err(_) => {}
        }
    }
    let valid = !diags.has_errors();
    if json {
        let list: Vec<serde_json::Value> = diags
            .iter()
            .map(|d| {
                crate::present::json_events::diagnostic(d, &files).to_serde()["diagnostic"].clone()
            })
            .collect();
        let errors = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let doc = serde_json::json!({
            "format_version": "1.0",
            "valid": valid,
            "error_count": errors,
            "warning_count": list.len() - errors,
            "diagnostics": list,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print_diags(&diags, &files);
        if valid {
            println!("Success! The configuration is valid.");
        }
    }
    Ok(if valid { 0 } else { 1 })
}

fn print_diags(diags: &Diagnostics, files: &BTreeMap<String, String>) {
    for d in diags.iter() {
        eprint!("{}", crate::present::run_text::diagnostic(d, files));
    }
}
