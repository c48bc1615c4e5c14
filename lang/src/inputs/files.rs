//! Variables files: `name = value` attributes in HCL (`.tfvars`) or the
//! properties of one JSON object (`.tfvars.json`), each with the range of
//! its value for diagnostics.

use super::Given;
use super::constant::type_range;
use crate::config::parse_file;
use fleetform_shared::diag::{Diagnostic, Diagnostics, LineIndex, SourceRange};
use fleetform_shared::json::Json;
use fleetform_shared::value::Value;

/// One value a variables file defines.
pub(super) struct FileValue {
    pub name: String,
    pub given: Given,
    /// The value's expression.
    pub range: SourceRange,
}

/// The values a variables file defines; problems go to `diags`. Like
/// Terraform, a name ending in `.json` means JSON.
pub(super) fn parse(filename: &str, content: &str, diags: &mut Diagnostics) -> Vec<FileValue> {
    if filename.ends_with(".json") {
        json(filename, content, diags)
    } else {
        hcl(filename, content, diags)
    }
}

fn hcl(filename: &str, content: &str, diags: &mut Diagnostics) -> Vec<FileValue> {
    let (body, parse_diags) = parse_file(filename, content);
    diags.extend(parse_diags);
    let Some(body) = body else {
        return Vec::new();
    };
    // Declaring variables in a tfvars file is a common mistake, worth a
    // message of its own before the generic one about blocks.
    let mut declared = false;
    for b in body.blocks_of("variable") {
        let name = b.labels.first().cloned().unwrap_or_default();
        declared = true;
        diags.push(
            Diagnostic::error(
                "Variable declaration in .tfvars file",
                format!("A .tfvars file is used to assign values to variables that have already been declared in .tf files, not to declare new variables. To declare variable {name:?}, place this block in one of your .tf files, such as variables.tf.\n\nTo set a value for this variable in {filename}, use the definition syntax instead:\n    {name} = <value>"),
            )
            .at(type_range(&b.decl_range, &b.type_name)),
        );
    }
    if declared {
        return Vec::new();
    }
    if let Some(b) = body.blocks.first() {
        diags.push(
            Diagnostic::error(
                format!("Unexpected {:?} block", b.type_name),
                "Blocks are not allowed here.",
            )
            .at(type_range(&b.decl_range, &b.type_name)),
        );
    }
    body.attributes
        .into_values()
        .map(|a| FileValue {
            name: a.name,
            range: a.expr.range.clone(),
            given: Given::Expr(a.expr),
        })
        .collect()
}

fn json(filename: &str, content: &str, diags: &mut Diagnostics) -> Vec<FileValue> {
    let lines = LineIndex::new(content);
    let range = |start: usize, end: usize| lines.range(filename, content, start, end);
    if let Err(e) = Json::parse(content.as_bytes()) {
        diags.push(
            Diagnostic::error(
                "Invalid JSON",
                format!("There is a syntax error in the given JSON: {}.", e.message),
            )
            .at(range(e.offset, (e.offset + 1).min(content.len()))),
        );
        return Vec::new();
    }
    let Some(members) = members(content) else {
        let start = content.len() - content.trim_start().len();
        diags.push(
            Diagnostic::error(
                "Incorrect JSON value type",
                "A JSON object is required here, setting the arguments for this block.",
            )
            .at(range(start, (start + 1).min(content.len()))),
        );
        return Vec::new();
    };
    let mut out: Vec<FileValue> = Vec::new();
    let mut name_ranges: Vec<SourceRange> = Vec::new();
    for m in members {
        // HCL's JSON syntax treats "//" properties as comments.
        if m.name == "//" {
            continue;
        }
        let name_range = range(m.name_span.0, m.name_span.1);
        if let Some(i) = out.iter().position(|v| v.name == m.name) {
            diags.push(
                Diagnostic::error(
                    "Duplicate attribute definition",
                    format!(
                        "The argument {:?} was already set at {}.",
                        m.name,
                        super::hcl_range(&SourceRange {
                            end: out[i].range.end,
                            ..name_ranges[i].clone()
                        })
                    ),
                )
                .at(name_range),
            );
            continue;
        }
        let (start, end) = m.value_span;
        // The document parsed, so each member's text does too.
        let value = Json::parse(&content.as_bytes()[start..end])
            .map(|j| Value::from(&j))
            .unwrap_or(Value::null());
        out.push(FileValue {
            name: m.name,
            given: Given::Json(value),
            range: range(start, end),
        });
        name_ranges.push(name_range);
    }
    out
}

/// A property of the top-level object, by byte spans.
struct Member {
    name: String,
    name_span: (usize, usize),
    value_span: (usize, usize),
}

/// The properties of a valid JSON document's top-level object in source
/// order (duplicates kept), or None when the document is not an object.
/// The JSON tree keeps neither positions nor duplicate keys, so this walks
/// the text itself.
fn members(text: &str) -> Option<Vec<Member>> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut out = Vec::new();
    i = skip_ws(b, i + 1);
    while b.get(i) == Some(&b'"') {
        let name_end = skip_string(b, i);
        let name = match Json::parse(&b[i..name_end]) {
            Ok(Json::String(s)) => s,
            _ => return None,
        };
        let name_span = (i, name_end);
        i = skip_ws(b, name_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(b, i + 1);
        let end = skip_value(b, start);
        out.push(Member {
            name,
            name_span,
            value_span: (start, end),
        });
        i = skip_ws(b, end);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
    Some(out)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (just past its closing quote).
fn skip_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of the value starting at `i`.
fn skip_value(b: &[u8], mut i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => skip_string(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_string(b, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            b.len()
        }
        _ => {
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                i += 1;
            }
            i
        }
    }
}
