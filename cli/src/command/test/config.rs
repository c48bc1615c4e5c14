//! The configuration a run plans: the directory under test (or the local
//! module the run names), with the test file's `provider` blocks put in
//! place of the module's own, and the run's variable values as one more
//! variables file after the command line's.

use crate::bundle;
use fleetform_lang::config::{Config, TestFile, TestProvider, TestRun, load_config};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::value::Value;
use fleetform_shared::wire::Blob;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the test file's provider blocks go: an override file for the
/// providers the module configures itself, a plain file for the others.
const PROVIDERS_FILE: &str = "zz_fleetform_test_providers.tf";
const PROVIDERS_OVERRIDE_FILE: &str = "zz_fleetform_test_providers_override.tf";

/// The name diagnostics give the run's variable values.
pub const VARIABLES_SOURCE: &str = "<test variables>";

pub struct RunConfig {
    /// The module directory, relative to the working directory.
    pub dir: PathBuf,
    pub files: BTreeMap<String, String>,
    pub data_files: BTreeMap<String, Blob>,
    pub config: Config,
}

/// Packs and loads the run's module with the test file's providers.
pub fn prepare(test: &TestFile, run: &TestRun) -> Result<RunConfig, Diagnostics> {
    let dir = match &run.module {
        Some(m) => PathBuf::from(&m.source),
        None => PathBuf::from("."),
    };
    let io = |e: anyhow::Error| {
        let mut d = Diagnostic::error(
            "Failed to load the configuration",
            format!("Reading {}: {e:#}.", dir.display()),
        );
        if let Some(m) = &run.module {
            d = d
                .at(m.range.clone())
                .in_context(format!("run {:?}", run.name));
        }
        Diagnostics::from(d)
    };
    let mut files = bundle::pack(&dir).map_err(io)?;
    if !files
        .keys()
        .any(|k| fleetform_lang::config::is_config_file(k))
    {
        return Err(io(anyhow::anyhow!("no configuration files")));
    }
    let data_files = bundle::pack_data(&dir, &files).map_err(io)?;
    let (config, diags) = load_config(&files);
    let config = match config {
        Some(c) if !diags.has_errors() => c,
        _ => return Err(diags),
    };
    let declared = &config.root.module.providers;
    let mut plain = String::new();
    let mut overrides = String::new();
    for (config_key, p) in providers_for(test, run)? {
        let (name, alias) = match config_key.split_once('.') {
            Some((n, a)) => (n.to_string(), Some(a.to_string())),
            None => (config_key.clone(), None),
        };
        let alias_line = alias
            .map(|a| format!("  alias = {a:?}\n"))
            .unwrap_or_default();
        let block = format!("provider {name:?} {{\n{alias_line}{}\n}}\n", p.body_text);
        if declared.contains_key(&config_key) {
            overrides.push_str(&block);
        } else {
            plain.push_str(&block);
        }
    }
    let mut with_providers = files.clone();
    for (name, text) in [
        (PROVIDERS_FILE, plain),
        (PROVIDERS_OVERRIDE_FILE, overrides),
    ] {
        if !text.is_empty() {
            with_providers.insert(name.to_string(), text);
        }
    }
    if with_providers.len() != files.len() {
        let (config, diags) = load_config(&with_providers);
        files = with_providers;
        return match config {
            Some(config) if !diags.has_errors() => Ok(RunConfig {
                dir,
                files,
                data_files,
                config,
            }),
            _ => Err(diags),
        };
    }
    Ok(RunConfig {
        dir,
        files,
        data_files,
        config,
    })
}

/// The test file's providers a run uses, by the name the module knows
/// each by: those its `providers` map names, or every one as it is.
fn providers_for<'t>(
    test: &'t TestFile,
    run: &TestRun,
) -> Result<Vec<(String, &'t TestProvider)>, Diagnostics> {
    let Some(map) = &run.providers else {
        return Ok(test.providers.iter().map(|p| (p.key(), p)).collect());
    };
    let mut out = Vec::new();
    for (config_key, test_key, range) in map {
        match test.providers.iter().find(|p| p.key() == *test_key) {
            Some(p) => out.push((config_key.clone(), p)),
            None => {
                return Err(Diagnostics::from(
                    Diagnostic::error(
                        format!("Missing provider definition for {test_key}"),
                        "This provider block references a provider definition that does not exist.",
                    )
                    .at(range.clone())
                    .in_context(format!("run {:?}", run.name)),
                ));
            }
        }
    }
    Ok(out)
}

/// A variables file setting `values` (already evaluated).
pub fn variables_file(values: &BTreeMap<String, Value>) -> String {
    values
        .iter()
        .map(|(k, v)| format!("{k} = {}\n", literal(v)))
        .collect()
}

/// A value as an HCL expression that evaluates to it.
fn literal(v: &Value) -> String {
    match v {
        Value::Null(_) | Value::Unknown(_) => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => serde_json::to_string(s)
            .unwrap_or_default()
            .replace("${", "$${")
            .replace("%{", "%%{"),
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(literal).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Map(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{} = {}",
                        serde_json::to_string(k).unwrap_or_default(),
                        literal(v)
                    )
                })
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// The absolute path of a module directory (`path.cwd`, `abspath()`).
pub fn absolute(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_file_reads_back_as_the_values() {
        let values = BTreeMap::from([
            ("a".to_string(), Value::string("x ${y} %{z} \"q\"\n")),
            (
                "b".to_string(),
                Value::object([("k", Value::int(1)), ("l", Value::Bool(true))]),
            ),
            ("c".to_string(), Value::List(vec![Value::null()].into())),
        ]);
        let text = variables_file(&values);
        let (body, diags) = fleetform_lang::config::parse_file("v.tfvars", &text);
        assert!(!diags.has_errors(), "{text}");
        let body = body.unwrap();
        for (name, want) in &values {
            let got = fleetform_lang::eval::evaluate(
                &body.attributes[name].expr,
                &fleetform_lang::eval::MapScope::new(),
            )
            .unwrap();
            assert_eq!(&got, want, "{name} from {text}");
        }
    }
}
