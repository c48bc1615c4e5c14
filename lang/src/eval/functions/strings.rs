//! String functions: case, trimming, splitting, joining, substrings,
//! `replace` (plain and `/regex/`), `indent` (`tostring` and `tobool` are
//! conversions, in `conversion.rs`).
//! Lengths and offsets count grapheme clusters, as cty does.

use super::{Def, FnError, FnResult, Unknowns::Deep, def, num_arg, str_arg};
use fleetform_shared::value::Value;
use unicode_segmentation::UnicodeSegmentation;

#[cfg(test)]
#[path = "strings_tests.rs"]
mod tests;

pub(super) const DEFS: &[Def] = &[
    def("upper", Deep, upper),
    def("lower", Deep, lower),
    def("title", Deep, title),
    // Variadic lists after the separator, as cty's join takes them.
    def("join", Deep, join),
    def("split", Deep, split),
    def("replace", Deep, replace),
    def("substr", Deep, substr),
    def("trimspace", Deep, trimspace),
    def("trim", Deep, trim),
    def("trimprefix", Deep, trimprefix),
    def("trimsuffix", Deep, trimsuffix),
    def("chomp", Deep, chomp),
    def("indent", Deep, indent),
    def("startswith", Deep, startswith),
    def("endswith", Deep, endswith),
    def("strcontains", Deep, strcontains),
    def("strrev", Deep, strrev),
];

fn s(v: String) -> FnResult {
    Ok(Value::String(v))
}

/// Go's `unicode.ToUpper`: the simple (one character) mapping, so `ß`
/// stays `ß` rather than becoming `SS` as Rust's full mapping has it.
fn simple_upper(c: char) -> char {
    let u = c as u32;
    // Greek letters with ypogegrammeni: the simple mapping is the
    // titlecase letter, the full one two letters.
    let greek = match u {
        0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7 => Some(u + 8),
        0x1FB3 => Some(0x1FBC),
        0x1FC3 => Some(0x1FCC),
        0x1FF3 => Some(0x1FFC),
        _ => None,
    };
    if let Some(g) = greek.and_then(char::from_u32) {
        return g;
    }
    let mut up = c.to_uppercase();
    match (up.next(), up.next()) {
        (Some(one), None) => one,
        _ => c,
    }
}

/// Go's `unicode.ToLower` (simple mapping; `İ` becomes `i`).
fn simple_lower(c: char) -> char {
    if c == '\u{130}' {
        return 'i';
    }
    let mut low = c.to_lowercase();
    match (low.next(), low.next()) {
        (Some(one), None) => one,
        _ => c,
    }
}

/// Go's `unicode.ToTitle`: the upper case except for the Latin digraphs,
/// which have title forms, and Georgian, whose title case is itself.
fn simple_title(c: char) -> char {
    match c as u32 {
        0x1C4..=0x1C6 => '\u{1C5}',
        0x1C7..=0x1C9 => '\u{1C8}',
        0x1CA..=0x1CC => '\u{1CB}',
        0x1F1..=0x1F3 => '\u{1F2}',
        0x10D0..=0x10FA | 0x10FD..=0x10FF => c,
        _ => simple_upper(c),
    }
}

pub(super) fn upper(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.chars().map(simple_upper).collect())
}

pub(super) fn lower(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.chars().map(simple_lower).collect())
}

/// Go's `strings.Title`: the character after a separator becomes title
/// case. ASCII separators are all but letters, digits and `_`; beyond
/// ASCII only spaces separate (so `é` or a combining mark does not).
pub(super) fn title(a: &[Value]) -> FnResult {
    let separator = |c: char| {
        if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else {
            c.is_whitespace()
        }
    };
    let mut prev = ' ';
    let out = str_arg(a, 0)?
        .chars()
        .map(|c| {
            let t = if separator(prev) { simple_title(c) } else { c };
            prev = c;
            t
        })
        .collect();
    s(out)
}

pub(super) fn join(a: &[Value]) -> FnResult {
    let sep = str_arg(a, 0)?;
    if a.len() < 2 {
        return Err(FnError::call("at least one list is required"));
    }
    let mut parts = Vec::new();
    for (ai, list) in a.iter().enumerate().skip(1) {
        let items = match list {
            Value::List(items) => items,
            Value::Null(_) => return Err(FnError::arg(ai, "argument must not be null")),
            _ => return Err(FnError::arg(ai, "list of string required")),
        };
        for (ei, item) in items.iter().enumerate() {
            match item {
                Value::Null(_) if a.len() > 2 => {
                    return Err(FnError::arg(
                        ai,
                        format!(
                            "element {ei} of list {ai} is null; cannot concatenate null values"
                        ),
                    ));
                }
                Value::Null(_) => {
                    return Err(FnError::arg(
                        ai,
                        format!("element {ei} is null; cannot concatenate null values"),
                    ));
                }
                v => {
                    parts.push(crate::eval::ops::to_string(v).ok_or_else(|| {
                        FnError::arg(ai, format!("element {ei}: string required"))
                    })?)
                }
            }
        }
    }
    s(parts.join(&sep))
}

/// Go's `strings.Split`: an empty separator splits between characters.
pub(super) fn split(a: &[Value]) -> FnResult {
    let (sep, text) = (str_arg(a, 0)?, str_arg(a, 1)?);
    let parts: Vec<Value> = if sep.is_empty() {
        text.chars().map(|c| Value::String(c.to_string())).collect()
    } else {
        text.split(sep.as_str())
            .map(|p| Value::String(p.to_string()))
            .collect()
    };
    Ok(Value::tuple(parts))
}

/// Plain replacement, or a regular expression when the search string is
/// written `/like this/` (then `$1` and `${name}` expand as in Go).
pub(super) fn replace(a: &[Value]) -> FnResult {
    let (text, from, to) = (str_arg(a, 0)?, str_arg(a, 1)?, str_arg(a, 2)?);
    if from.len() > 1 && from.starts_with('/') && from.ends_with('/') {
        let re = super::regex::compile(&from[1..from.len() - 1])
            .map_err(|e| FnError::call(e.go_error()))?;
        return s(super::regex::replace_all(&re, &text, &to));
    }
    s(text.replace(&from, &to))
}

/// An argument that Go reads into an `int`.
fn go_int(a: &[Value], i: usize) -> Result<i64, FnError> {
    num_arg(a, i)?.as_i64().ok_or_else(|| {
        FnError::call(format!(
            "value must be a whole number, between {} and {}",
            i64::MIN,
            i64::MAX
        ))
    })
}

/// cty's substr: offsets and lengths in grapheme clusters; a negative
/// offset counts from the end, a negative length takes the rest.
pub(super) fn substr(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    let (mut offset, length) = (go_int(a, 1)?, go_int(a, 2)?);
    let clusters: Vec<&str> = text.graphemes(true).collect();
    let total = clusters.len() as i64;
    if offset < 0 {
        offset += total;
    } else if length == 0 {
        return s(String::new());
    }
    // An offset still negative starts at the beginning; one at or past
    // the end leaves nothing.
    let start = offset.clamp(0, total) as usize;
    if offset > 0 && offset >= total {
        return s(String::new());
    }
    let rest = &clusters[start..];
    // A zero length only gets here with a negative offset, where cty's
    // scan never stops early and so takes the rest as well.
    let take = if length <= 0 {
        rest.len()
    } else {
        (length as usize).min(rest.len())
    };
    s(rest[..take].concat())
}

pub(super) fn trimspace(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.trim().to_string())
}

pub(super) fn trim(a: &[Value]) -> FnResult {
    let cut: Vec<char> = str_arg(a, 1)?.chars().collect();
    s(str_arg(a, 0)?
        .trim_matches(|c| cut.contains(&c))
        .to_string())
}

pub(super) fn trimprefix(a: &[Value]) -> FnResult {
    let (text, prefix) = (str_arg(a, 0)?, str_arg(a, 1)?);
    s(text
        .strip_prefix(prefix.as_str())
        .unwrap_or(&text)
        .to_string())
}

pub(super) fn trimsuffix(a: &[Value]) -> FnResult {
    let (text, suffix) = (str_arg(a, 0)?, str_arg(a, 1)?);
    s(text
        .strip_suffix(suffix.as_str())
        .unwrap_or(&text)
        .to_string())
}

pub(super) fn chomp(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.trim_end_matches(['\n', '\r']).to_string())
}

/// Adds spaces after every newline (not before the first line).
pub(super) fn indent(a: &[Value]) -> FnResult {
    let spaces = go_int(a, 0)?;
    let text = str_arg(a, 1)?;
    if spaces < 0 {
        // Go's strings.Repeat panics here; cty reports the panic.
        return Err(FnError::call(
            "panic in function implementation: strings: negative Repeat count",
        ));
    }
    let pad = " ".repeat(spaces as usize);
    s(text.replace('\n', &format!("\n{pad}")))
}

pub(super) fn startswith(a: &[Value]) -> FnResult {
    Ok(Value::Bool(str_arg(a, 0)?.starts_with(&str_arg(a, 1)?)))
}

pub(super) fn endswith(a: &[Value]) -> FnResult {
    Ok(Value::Bool(str_arg(a, 0)?.ends_with(&str_arg(a, 1)?)))
}

pub(super) fn strcontains(a: &[Value]) -> FnResult {
    Ok(Value::Bool(str_arg(a, 0)?.contains(&str_arg(a, 1)?)))
}

/// Reverses grapheme clusters, so combining marks stay on their letter.
pub(super) fn strrev(a: &[Value]) -> FnResult {
    s(str_arg(a, 0)?.graphemes(true).rev().collect())
}
