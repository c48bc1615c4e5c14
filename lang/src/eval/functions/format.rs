//! `format` and `formatlist`: cty's printf dialect, verb by verb, with its
//! error texts (byte offsets, Go quoting) and its grapheme-based widths.

use super::go_fmt::{self, Spec};
use super::{Def, FnError, FnResult, Unknowns, def, str_arg};
use crate::eval::ops::to_number;
use fleetform_shared::value::{Number, Value};
use unicode_segmentation::UnicodeSegmentation;

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;

pub(super) const DEFS: &[Def] = &[
    def("format", Unknowns::Deep, format),
    // Shallow: a list argument with unknown elements still yields a list
    // whose other elements are known, as in Terraform.
    def("formatlist", Unknowns::Shallow, formatlist),
];

/// Why formatting failed: most failures are the call's, but surplus
/// arguments are blamed on the first unused one (a value index).
enum FmtError {
    Call(String),
    Surplus(usize, String),
}

fn format(a: &[Value]) -> FnResult {
    let spec = str_arg(a, 0)?;
    format_values(&spec, &a[1..])
        .map(Value::String)
        .map_err(|e| match e {
            FmtError::Call(m) => FnError::call(m),
            FmtError::Surplus(i, m) => FnError::arg(i + 1, m),
        })
}

fn formatlist(a: &[Value]) -> FnResult {
    if a.len() == 1 {
        // Without arguments it is `format` in a list, errors unwrapped.
        return Ok(Value::tuple(vec![format(a)?]));
    }
    let spec = str_arg(a, 0)?;
    let args = &a[1..];
    // cty takes a null argument for one whose value is not known yet.
    if args.iter().any(Value::is_null) {
        return Ok(Value::unknown());
    }
    // The first list argument fixes the length the others must have.
    let mut len: Option<(usize, usize)> = None;
    for (i, arg) in args.iter().enumerate() {
        if let Value::List(items) = arg {
            match len {
                None => len = Some((items.len(), i)),
                Some((n, first)) if n != items.len() => {
                    return Err(FnError::arg(
                        i + 1,
                        format!(
                            "argument {} has length {}, which is inconsistent with argument {} of length {n}",
                            i + 1,
                            items.len(),
                            first + 1
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    let n = len.map_or(1, |(n, _)| n);
    let mut out = Vec::with_capacity(n);
    for row in 0..n {
        let vals: Vec<Value> = args
            .iter()
            .map(|v| match v {
                Value::List(items) => items[row].clone(),
                v => v.clone(),
            })
            .collect();
        if vals.iter().any(|v| !v.is_wholly_known()) {
            out.push(Value::unknown());
            continue;
        }
        let text = format_values(&spec, &vals).map_err(|e| {
            let msg = match e {
                FmtError::Call(m) | FmtError::Surplus(_, m) => m,
            };
            FnError::call(format!("error on format iteration {row}: {msg}"))
        })?;
        out.push(Value::String(text));
    }
    Ok(Value::tuple(out))
}

/// One `%` sequence as written.
struct Verb<'a> {
    raw: &'a str,
    offset: usize,
    arg: usize,
    mode: char,
    spec: Spec,
}

/// Formats `args` by `spec`, following cty's scanner: `%`, flags
/// (`0 # - + space`), width, `.precision`, `[n]`, then a letter.
fn format_values(spec: &str, args: &[Value]) -> Result<String, FmtError> {
    let bytes = spec.as_bytes();
    let mut out = String::new();
    let mut next_arg = 1usize;
    let mut highest = 0usize;
    let mut p = 0usize;
    let bad_char = |p: usize| {
        let c = spec[p..].chars().next().unwrap_or('\u{fffd}');
        FmtError::Call(format!(
            "unrecognized format character {} at offset {p}",
            go_fmt::quote_rune(c)
        ))
    };
    let unterminated = || {
        FmtError::Call(format!(
            "invalid format string starting at offset {}",
            bytes.len()
        ))
    };
    while p < bytes.len() {
        if bytes[p] != b'%' {
            let c = spec[p..].chars().next().expect("char boundary");
            out.push(c);
            p += c.len_utf8();
            continue;
        }
        let start = p;
        p += 1;
        match bytes.get(p) {
            None => return Err(unterminated()),
            Some(b'%') => {
                out.push('%');
                p += 1;
                continue;
            }
            Some(_) => {}
        }
        let mut s = Spec::default();
        while let Some(&b) = bytes.get(p) {
            match b {
                b'0' => s.zero = true,
                b'#' => s.sharp = true,
                b'-' => s.minus = true,
                b'+' => s.plus = true,
                b' ' => s.space = true,
                _ => break,
            }
            p += 1;
        }
        if matches!(bytes.get(p), Some(b'1'..=b'9')) {
            s.width = Some(digits(bytes, &mut p));
        }
        if bytes.get(p) == Some(&b'.') {
            p += 1;
            s.prec = Some(digits(bytes, &mut p));
        }
        let mut arg = next_arg;
        if bytes.get(p) == Some(&b'[') {
            p += 1;
            match bytes.get(p) {
                Some(b'1'..=b'9') => arg = digits(bytes, &mut p),
                None => return Err(unterminated()),
                Some(_) => return Err(bad_char(p)),
            }
            match bytes.get(p) {
                Some(b']') => p += 1,
                None => return Err(unterminated()),
                Some(_) => return Err(bad_char(p)),
            }
        }
        let mode = match bytes.get(p) {
            Some(b) if b.is_ascii_alphabetic() => *b as char,
            None => return Err(unterminated()),
            Some(_) => return Err(bad_char(p)),
        };
        p += 1;
        let verb = Verb {
            raw: &spec[start..p],
            offset: start,
            arg,
            mode,
            spec: s,
        };
        highest = highest.max(arg);
        append_verb(&mut out, &verb, args).map_err(FmtError::Call)?;
        next_arg = arg + 1;
    }
    if highest < args.len() {
        let msg = if highest == 0 {
            "too many arguments; no verbs in format string".to_string()
        } else {
            format!("too many arguments; only {highest} used by format string")
        };
        return Err(FmtError::Surplus(highest, msg));
    }
    Ok(out)
}

/// Reads a run of ASCII digits as a number (saturating).
fn digits(bytes: &[u8], p: &mut usize) -> usize {
    let mut n = 0usize;
    while let Some(d @ b'0'..=b'9') = bytes.get(*p) {
        n = n.saturating_mul(10).saturating_add((d - b'0') as usize);
        *p += 1;
    }
    n
}

fn append_verb(out: &mut String, verb: &Verb<'_>, args: &[Value]) -> Result<(), String> {
    let raw = go_fmt::quote(verb.raw);
    let at = verb.offset;
    let Some(arg) = args.get(verb.arg - 1) else {
        return Err(format!(
            "not enough arguments for {raw} at {at}: need index {} but have {} total",
            verb.arg,
            args.len()
        ));
    };
    if verb.mode != 'v' && arg.is_null() {
        return Err(format!(
            "unsupported value for {raw} at {at}: null value cannot be formatted"
        ));
    }
    let unsupported = |why: &str| format!("unsupported value for {raw} at {at}: {why}");
    match verb.mode {
        'v' => {
            let text = match arg {
                Value::String(s) if !verb.spec.sharp => s.clone(),
                Value::Number(n) if !verb.spec.sharp => go_fmt::fmt_g_shortest_number(n),
                v => go_fmt::html_safe_json(super::encoding::to_json(v).to_string()),
            };
            out.push_str(&pad(&verb.spec, text));
        }
        't' => {
            let b = match arg {
                Value::Bool(b) => *b,
                Value::String(s) => string_to_bool(s).map_err(|m| unsupported(&m))?,
                _ => return Err(unsupported("bool required")),
            };
            // cty writes booleans without any padding.
            out.push_str(if b { "true" } else { "false" });
        }
        'b' | 'd' | 'o' | 'x' | 'X' => {
            let n = number_of(arg).map_err(|m| unsupported(&m))?;
            let int = n
                .to_decimal()
                .filter(|d| d.is_integer())
                .map(|d| d.with_scale(0).as_bigint_and_exponent().0)
                .ok_or_else(|| unsupported("an integer is required"))?;
            out.push_str(&go_fmt::int_verb(verb.mode, &int, &verb.spec));
        }
        'e' | 'E' | 'f' | 'g' | 'G' => {
            let n = number_of(arg).map_err(|m| unsupported(&m))?;
            out.push_str(&go_fmt::float_verb(verb.mode, &n, &verb.spec));
        }
        's' | 'q' => {
            let text = match arg {
                Value::List(_) | Value::Map(_) => return Err(unsupported("string required")),
                v => crate::eval::ops::to_string(v).unwrap_or_default(),
            };
            // Precision limits the characters taken from the input (a
            // zero precision takes them all, as cty reads it).
            let text = match verb.spec.prec {
                Some(p) if p > 0 => text.graphemes(true).take(p).collect(),
                _ => text,
            };
            let text = if verb.mode == 'q' {
                go_fmt::html_safe_json(serde_json::to_string(&text).unwrap_or_default())
            } else {
                text
            };
            out.push_str(&pad(&verb.spec, text));
        }
        other => {
            return Err(format!(
                "unsupported format verb {} in {raw} at offset {at}",
                go_fmt::quote_rune(other)
            ));
        }
    }
    Ok(())
}

/// cty's own padding for `%v`, `%s`, `%q`: widths count grapheme clusters,
/// and the zero flag pads with zeros on whichever side `-` picks.
fn pad(spec: &Spec, text: String) -> String {
    let Some(width) = spec.width else {
        return text;
    };
    let len = text.graphemes(true).count();
    if len >= width {
        return text;
    }
    let fill = if spec.zero { "0" } else { " " }.repeat(width - len);
    if spec.minus {
        text + &fill
    } else {
        fill + &text
    }
}

/// A number as cty converts one for a numeric verb.
fn number_of(v: &Value) -> Result<Number, String> {
    match v {
        Value::Number(n) => Ok(n.clone()),
        // Go's number parser takes no surrounding spaces.
        Value::String(s) if s.trim() == s => {
            to_number(v).ok_or_else(|| "a number is required".into())
        }
        Value::String(_) => Err("a number is required".into()),
        _ => Err("number required".into()),
    }
}

/// A string as cty converts one to bool.
pub(super) fn string_to_bool(s: &str) -> Result<bool, String> {
    match s {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => match s.to_lowercase().as_str() {
            "true" => {
                Err("a bool is required; to convert from string, use lowercase \"true\"".into())
            }
            "false" => {
                Err("a bool is required; to convert from string, use lowercase \"false\"".into())
            }
            _ => Err("a bool is required".into()),
        },
    }
}
