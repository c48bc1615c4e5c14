//! Terraform's CLI configuration file (`.terraformrc`, `TF_CLI_CONFIG_FILE`)
//! parsed into a model: the `provider_installation` block (`dev_overrides`,
//! `filesystem_mirror`, `network_mirror`, `direct`, each with `include` and
//! `exclude`) and `plugin_cache_dir`. Other settings (`credentials`, `host`,
//! `disable_checkpoint` ...) are accepted and ignored, as Terraform ignores
//! what it does not know.
//!
//! The file is HCL 1, where `dev_overrides { "hashicorp/null" = "/dir" }`
//! (a quoted key in a block body) is valid; HCL 2 only allows quoted keys in
//! object expressions, so such blocks are read as `dev_overrides = { ... }`
//! before parsing, keeping every line where it was.

use super::pattern::{PatternError, ProviderPattern};
use fleetform_lang::config::{Attribute, Body, NestedBlockSyntax, parse_file};
use fleetform_lang::eval::{EmptyScope, evaluate};
use fleetform_shared::addr::ProviderAddr;
use fleetform_shared::diag::SourceRange;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;
use std::fmt;

/// What fleetform uses of a CLI configuration file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CliConfig {
    /// Accepted and not used: fleetform installs nothing from the network.
    pub plugin_cache_dir: Option<String>,
    /// `None` without a `provider_installation` block: Terraform then uses
    /// its implied local mirror directories.
    pub provider_installation: Option<ProviderInstallation>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderInstallation {
    /// Provider → directory holding its executable; consulted before any
    /// method, whatever the version constraint.
    pub dev_overrides: BTreeMap<ProviderAddr, String>,
    /// In the order written: the order of preference.
    pub methods: Vec<InstallMethod>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InstallMethod {
    pub location: Location,
    pub include: Vec<ProviderPattern>,
    pub exclude: Vec<ProviderPattern>,
    /// Where the block is, for messages.
    pub line: usize,
}

impl InstallMethod {
    /// Whether this method is used for `addr` (its include/exclude rules).
    pub fn selects(&self, addr: &ProviderAddr) -> bool {
        super::pattern::selects(&self.include, &self.exclude, addr)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// `filesystem_mirror { path = "..." }`.
    FilesystemMirror(String),
    /// `network_mirror { url = "..." }`.
    NetworkMirror(String),
    /// `direct {}`: the provider's origin registry.
    Direct,
}

/// A problem in a CLI configuration file, with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CliConfigError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for CliConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.message)
    }
}

/// Every problem found in one file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct CliConfigErrors(pub Vec<CliConfigError>);

impl fmt::Display for CliConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        write!(f, "invalid CLI configuration: {}", lines.join("; "))
    }
}

struct Errors<'a> {
    file: &'a str,
    list: Vec<CliConfigError>,
}

impl Errors<'_> {
    fn at(&mut self, range: &SourceRange, message: impl Into<String>) {
        self.list.push(CliConfigError {
            file: self.file.to_string(),
            line: range.start.line,
            message: message.into(),
        });
    }
}

/// Parses the CLI configuration `source` read from `file`.
pub fn parse_cli_config(file: &str, source: &str) -> Result<CliConfig, CliConfigErrors> {
    let rewritten = dev_overrides_as_attributes(source);
    let (body, diags) = parse_file(file, &rewritten);
    let mut errors = Errors {
        file,
        list: Vec::new(),
    };
    for d in diags.iter().filter(|d| d.is_error()) {
        let line = d.range.as_ref().map_or(1, |r| r.start.line);
        let message = format!("{}: {}", d.summary, d.detail);
        errors.list.push(CliConfigError {
            file: file.to_string(),
            line,
            message,
        });
    }
    let Some(body) = body else {
        return Err(CliConfigErrors(errors.list));
    };
    let mut config = CliConfig::default();
    if let Some(a) = body.attributes.get("plugin_cache_dir") {
        config.plugin_cache_dir = string_value(a, &mut errors);
    }
    let blocks: Vec<&NestedBlockSyntax> = body.blocks_of("provider_installation").collect();
    if let Some(a) = body.attributes.get("provider_installation") {
        errors.at(
            &a.range,
            "the provider_installation block must not be introduced with an equals sign",
        );
    }
    if let Some(second) = blocks.get(1) {
        errors.at(
            &second.decl_range,
            "no more than one provider_installation block may be specified",
        );
    }
    if let Some(block) = blocks.first() {
        if !block.labels.is_empty() {
            errors.at(
                &block.decl_range,
                "the provider_installation block must not have any labels",
            );
        }
        config.provider_installation = Some(installation(&block.body, &mut errors));
    }
    if errors.list.is_empty() {
        Ok(config)
    } else {
        Err(CliConfigErrors(errors.list))
    }
}

fn installation(body: &Body, errors: &mut Errors<'_>) -> ProviderInstallation {
    let mut out = ProviderInstallation::default();
    let first_method = body.blocks.iter().map(|b| b.range.start.byte).min();
    for (name, attr) in &body.attributes {
        if name != "dev_overrides" {
            errors.at(
                &attr.range,
                "the items inside the provider_installation block must all be blocks",
            );
            continue;
        }
        if first_method.is_some_and(|b| b < attr.range.start.byte) {
            errors.at(
                &attr.range,
                "the dev_overrides block must appear before all other installation methods, because development overrides always have the highest priority",
            );
            continue;
        }
        out.dev_overrides = dev_overrides(attr, errors);
    }
    for block in &body.blocks {
        if !block.labels.is_empty() {
            errors.at(
                &block.decl_range,
                "the blocks inside the provider_installation block may not have any labels",
            );
        }
        let b = &block.body;
        let location = match block.type_name.as_str() {
            "direct" => Location::Direct,
            "filesystem_mirror" => match b.attributes.get("path") {
                Some(a) => match string_value(a, errors) {
                    Some(p) if !p.is_empty() => Location::FilesystemMirror(p),
                    _ => continue,
                },
                None => {
                    errors.at(
                        &block.decl_range,
                        "method filesystem_mirror requires a non-empty \"path\" argument",
                    );
                    continue;
                }
            },
            "network_mirror" => match b
                .attributes
                .get("url")
                .and_then(|a| string_value(a, errors))
            {
                Some(u) if !u.is_empty() => Location::NetworkMirror(u),
                _ => {
                    errors.at(
                        &block.decl_range,
                        "method network_mirror requires a non-empty \"url\" argument",
                    );
                    continue;
                }
            },
            other => {
                errors.at(
                    &block.decl_range,
                    format!("unknown provider installation method {other:?}"),
                );
                continue;
            }
        };
        out.methods.push(InstallMethod {
            location,
            include: patterns(b.attributes.get("include"), errors),
            exclude: patterns(b.attributes.get("exclude"), errors),
            line: block.decl_range.start.line,
        });
    }
    out
}

fn dev_overrides(attr: &Attribute, errors: &mut Errors<'_>) -> BTreeMap<ProviderAddr, String> {
    let mut out = BTreeMap::new();
    let Some(Value::Map(items)) = constant(attr, errors) else {
        errors.at(
            &attr.range,
            "dev_overrides must map provider source addresses to directories",
        );
        return out;
    };
    for (key, value) in items {
        let Value::String(dir) = value else {
            errors.at(
                &attr.range,
                format!("the dev_overrides entry {key:?} must be a directory path string"),
            );
            continue;
        };
        match key.parse::<ProviderAddr>() {
            Ok(addr) => {
                out.insert(addr, dir);
            }
            Err(_) => errors.at(
                &attr.range,
                format!("the dev_overrides entry {key:?} is not a valid provider source string"),
            ),
        }
    }
    out
}

fn patterns(attr: Option<&Attribute>, errors: &mut Errors<'_>) -> Vec<ProviderPattern> {
    let Some(attr) = attr else {
        return Vec::new();
    };
    let items = match constant(attr, errors) {
        Some(Value::List(items)) => items,
        Some(_) => {
            errors.at(
                &attr.range,
                format!("{} must be a list of provider patterns", attr.name),
            );
            return Vec::new();
        }
        None => return Vec::new(),
    };
    let mut out = Vec::new();
    for item in items {
        let parsed = match item {
            Value::String(s) => s.parse::<ProviderPattern>(),
            other => Err(PatternError {
                input: format!("{other:?}"),
                reason: "must be a string".into(),
            }),
        };
        match parsed {
            Ok(p) => out.push(p),
            Err(e) => errors.at(&attr.range, e.to_string()),
        }
    }
    out
}

fn string_value(attr: &Attribute, errors: &mut Errors<'_>) -> Option<String> {
    match constant(attr, errors)? {
        Value::String(s) => Some(s),
        _ => {
            errors.at(&attr.range, format!("{} must be a string", attr.name));
            None
        }
    }
}

/// The value of an argument that may only be a literal.
fn constant(attr: &Attribute, errors: &mut Errors<'_>) -> Option<Value> {
    match evaluate(&attr.expr, &EmptyScope) {
        Ok(v) => Some(v),
        Err(diags) => {
            let detail = diags
                .iter()
                .map(|d| d.summary.clone())
                .collect::<Vec<_>>()
                .join("; ");
            errors.at(
                &attr.range,
                format!("{} must be a literal value: {detail}", attr.name),
            );
            None
        }
    }
}

/// Rewrites `dev_overrides {` to `dev_overrides={` (outside strings and
/// comments) so the HCL 2 parser reads its body as an object expression.
/// Line numbers do not change.
fn dev_overrides_as_attributes(source: &str) -> String {
    const KEYWORD: &str = "dev_overrides";
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len() + 8);
    let mut i = 0;
    let mut copied = 0;
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'#' => i = skip_line(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'/') => i = skip_line(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = source[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |end| i + 2 + end + 2);
            }
            b if ident(b) => {
                let start = i;
                while i < bytes.len() && ident(bytes[i]) {
                    i += 1;
                }
                if &source[start..i] != KEYWORD {
                    continue;
                }
                let mut j = i;
                while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'\t') {
                    j += 1;
                }
                if bytes.get(j) == Some(&b'{') {
                    out.push_str(&source[copied..i]);
                    // Keep the column of `{` when there is a space to spare.
                    out.push('=');
                    copied = if j > i { i + 1 } else { i };
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    out.push_str(&source[copied.min(source.len())..]);
    out
}

fn skip_line(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i] != b'\n' {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests;
