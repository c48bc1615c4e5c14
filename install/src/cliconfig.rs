//! Terraform's CLI configuration file (`.terraformrc`, `TF_CLI_CONFIG_FILE`)
//! parsed into a model: the `provider_installation` block (`dev_overrides`,
//! `filesystem_mirror`, `network_mirror`, `direct`, each with `include` and
//! `exclude`) and `plugin_cache_dir`. Other settings (`credentials`, `host`,
//! `disable_checkpoint` ...) are accepted and ignored, as Terraform ignores
//! what it does not know.
//!
//! The file is read with `hcl-edit` (which keeps each item's place, for
//! errors with a line), not with the language crate: installation, and the
//! worker with it, stays independent of the Terraform language.
//!
//! The file is HCL 1, where `dev_overrides { "hashicorp/null" = "/dir" }`
//! (a quoted key in a block body) is valid; HCL 2 only allows quoted keys in
//! object expressions, so such blocks are read as `dev_overrides = { ... }`
//! before parsing, keeping every line where it was.

use crate::pattern::{PatternError, ProviderPattern};
use fleetform_shared::addr::ProviderAddr;
use hcl_edit::Span;
use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::structure::{Attribute, Block, Body, Structure};
use hcl_edit::template::Element;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

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
        crate::pattern::selects(&self.include, &self.exclude, addr)
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
    /// Where each line of the parsed text starts (byte offsets).
    line_starts: Vec<usize>,
    list: Vec<CliConfigError>,
}

impl Errors<'_> {
    /// The 1-based line of byte `at` of the parsed text.
    fn line(&self, at: usize) -> usize {
        self.line_starts.partition_point(|&start| start <= at)
    }

    fn at(&mut self, span: Option<Range<usize>>, message: impl Into<String>) {
        let line = span.map_or(1, |s| self.line(s.start));
        self.list.push(CliConfigError {
            file: self.file.to_string(),
            line,
            message: message.into(),
        });
    }
}

/// A block's arguments by name (the parser refuses a repeated one) and
/// its nested blocks, in the order written.
struct Items<'b> {
    attributes: BTreeMap<String, &'b Attribute>,
    blocks: Vec<&'b Block>,
}

fn items(body: &Body) -> Items<'_> {
    let mut out = Items {
        attributes: BTreeMap::new(),
        blocks: Vec::new(),
    };
    for s in body.iter() {
        match s {
            Structure::Attribute(a) => {
                out.attributes.insert(a.key.value().to_string(), a);
            }
            Structure::Block(b) => out.blocks.push(b),
        }
    }
    out
}

/// The block's labels, as written.
fn block_labels(b: &Block) -> Vec<String> {
    b.labels.iter().map(|l| l.as_str().to_string()).collect()
}

/// Parses the CLI configuration `source` read from `file`.
pub fn parse_cli_config(file: &str, source: &str) -> Result<CliConfig, CliConfigErrors> {
    let rewritten = dev_overrides_as_attributes(source);
    let line_starts = std::iter::once(0)
        .chain(rewritten.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut errors = Errors {
        file,
        line_starts,
        list: Vec::new(),
    };
    let body = match hcl_edit::parser::parse_body(&rewritten) {
        Ok(body) => body,
        Err(e) => {
            errors.list.push(CliConfigError {
                file: file.to_string(),
                line: e.location().line(),
                message: format!(
                    "invalid HCL syntax at column {}: {}",
                    e.location().column(),
                    e.message()
                ),
            });
            return Err(CliConfigErrors(errors.list));
        }
    };
    let top = items(&body);
    let mut config = CliConfig::default();
    if let Some(a) = top.attributes.get("plugin_cache_dir") {
        config.plugin_cache_dir = string_value(a, &mut errors);
    }
    let blocks: Vec<&Block> = top
        .blocks
        .iter()
        .copied()
        .filter(|b| b.ident.value().as_str() == "provider_installation")
        .collect();
    if let Some(a) = top.attributes.get("provider_installation") {
        errors.at(
            a.span(),
            "the provider_installation block must not be introduced with an equals sign",
        );
    }
    if let Some(second) = blocks.get(1) {
        errors.at(
            second.span(),
            "no more than one provider_installation block may be specified",
        );
    }
    if let Some(block) = blocks.first() {
        if !block.labels.is_empty() {
            errors.at(
                block.span(),
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
    let inner = items(body);
    let first_method = inner
        .blocks
        .iter()
        .filter_map(|b| b.span().map(|s| s.start))
        .min();
    for (name, attr) in &inner.attributes {
        if name != "dev_overrides" {
            errors.at(
                attr.span(),
                "the items inside the provider_installation block must all be blocks",
            );
            continue;
        }
        let start = attr.span().map_or(0, |s| s.start);
        if first_method.is_some_and(|b| b < start) {
            errors.at(
                attr.span(),
                "the dev_overrides block must appear before all other installation methods, because development overrides always have the highest priority",
            );
            continue;
        }
        out.dev_overrides = dev_overrides(attr, errors);
    }
    for block in &inner.blocks {
        if !block.labels.is_empty() {
            errors.at(
                block.span(),
                format!(
                    "the blocks inside the provider_installation block may not have any labels (found {:?})",
                    block_labels(block)
                ),
            );
        }
        let b = items(&block.body);
        let location = match block.ident.value().as_str() {
            "direct" => Location::Direct,
            "filesystem_mirror" => match b.attributes.get("path") {
                Some(a) => match string_value(a, errors) {
                    Some(p) if !p.is_empty() => Location::FilesystemMirror(p),
                    _ => continue,
                },
                None => {
                    errors.at(
                        block.span(),
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
                        block.span(),
                        "method network_mirror requires a non-empty \"url\" argument",
                    );
                    continue;
                }
            },
            other => {
                errors.at(
                    block.span(),
                    format!("unknown provider installation method {other:?}"),
                );
                continue;
            }
        };
        out.methods.push(InstallMethod {
            location,
            include: patterns(b.attributes.get("include").copied(), errors),
            exclude: patterns(b.attributes.get("exclude").copied(), errors),
            line: block.span().map_or(1, |s| errors.line(s.start)),
        });
    }
    out
}

fn dev_overrides(attr: &Attribute, errors: &mut Errors<'_>) -> BTreeMap<ProviderAddr, String> {
    let mut out = BTreeMap::new();
    let Some(Literal::Map(items)) = constant(attr, errors) else {
        errors.at(
            attr.span(),
            "dev_overrides must map provider source addresses to directories",
        );
        return out;
    };
    for (key, value) in items {
        let Literal::String(dir) = value else {
            errors.at(
                attr.span(),
                format!("the dev_overrides entry {key:?} must be a directory path string"),
            );
            continue;
        };
        match key.parse::<ProviderAddr>() {
            Ok(addr) => {
                out.insert(addr, dir);
            }
            Err(_) => errors.at(
                attr.span(),
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
        Some(Literal::List(items)) => items,
        Some(_) => {
            errors.at(
                attr.span(),
                format!("{} must be a list of provider patterns", attr.key.value()),
            );
            return Vec::new();
        }
        None => return Vec::new(),
    };
    let mut out = Vec::new();
    for item in items {
        let parsed = match item {
            Literal::String(s) => s.parse::<ProviderPattern>(),
            other => Err(PatternError {
                input: other.kind().to_string(),
                reason: "must be a string".into(),
            }),
        };
        match parsed {
            Ok(p) => out.push(p),
            Err(e) => errors.at(attr.span(), e.to_string()),
        }
    }
    out
}

fn string_value(attr: &Attribute, errors: &mut Errors<'_>) -> Option<String> {
    match constant(attr, errors)? {
        Literal::String(s) => Some(s),
        _ => {
            errors.at(
                attr.span(),
                format!("{} must be a string", attr.key.value()),
            );
            None
        }
    }
}

/// What an argument of the file may be: literals only, as in the HCL 1
/// files Terraform reads (no variables, functions or interpolation).
#[derive(Debug)]
enum Literal {
    String(String),
    List(Vec<Literal>),
    Map(Vec<(String, Literal)>),
    /// A number, a bool or null: never what an argument here wants.
    Other(&'static str),
}

impl Literal {
    fn kind(&self) -> &'static str {
        match self {
            Literal::String(_) => "a string",
            Literal::List(_) => "a list",
            Literal::Map(_) => "a map",
            Literal::Other(kind) => kind,
        }
    }
}

/// The value of an argument that may only be a literal.
fn constant(attr: &Attribute, errors: &mut Errors<'_>) -> Option<Literal> {
    match literal(&attr.value) {
        Ok(v) => Some(v),
        Err(why) => {
            errors.at(
                attr.span(),
                format!("{} must be a literal value: {why}", attr.key.value()),
            );
            None
        }
    }
}

fn literal(expr: &Expression) -> Result<Literal, &'static str> {
    Ok(match expr {
        Expression::String(s) => Literal::String(s.value().clone()),
        Expression::StringTemplate(t) => {
            let mut text = String::new();
            for element in t.iter() {
                match element {
                    Element::Literal(part) => text.push_str(part.value()),
                    _ => return Err("interpolation and template directives are not allowed"),
                }
            }
            Literal::String(text)
        }
        Expression::Array(items) => {
            Literal::List(items.iter().map(literal).collect::<Result<_, _>>()?)
        }
        Expression::Object(object) => {
            let mut out = Vec::new();
            for (key, value) in object.iter() {
                let key = match key {
                    ObjectKey::Ident(k) => k.value().to_string(),
                    ObjectKey::Expression(Expression::String(s)) => s.value().clone(),
                    ObjectKey::Expression(_) => {
                        return Err("object keys must be names or quoted strings");
                    }
                };
                out.push((key, literal(value.expr())?));
            }
            Literal::Map(out)
        }
        Expression::Parenthesis(p) => literal(p.inner())?,
        Expression::Number(_) => Literal::Other("a number"),
        Expression::Bool(_) => Literal::Other("a bool"),
        Expression::Null(_) => Literal::Other("null"),
        Expression::Variable(_) | Expression::Traversal(_) => {
            return Err("variables are not allowed");
        }
        Expression::FuncCall(_) => return Err("function calls are not allowed"),
        Expression::HeredocTemplate(_) => return Err("use a quoted string instead of a heredoc"),
        _ => return Err("only strings, and lists and maps of them, are allowed"),
    })
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
