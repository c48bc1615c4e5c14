//! `regex` and `regexall`, and the regular expressions `replace` uses:
//! Go's RE2 syntax run on the `regex` crate. The pattern is rewritten
//! where the two dialects differ (ASCII-only `\d \w \s \b`, `\Q…\E`,
//! literal `[` and `{` where Go takes them literally), matches advance
//! as Go's `FindAll`/`ReplaceAll` do around empty matches, and `$1` /
//! `${name}` expand as Go's `Regexp.Expand`.

use super::{Def, FnError, FnResult, Unknowns::Deep, def, str_arg};
use fleetform_shared::types::Type;
use fleetform_shared::value::{Value, ValueMap};
use regex::{Captures, Regex};

#[cfg(test)]
#[path = "regex_tests.rs"]
mod tests;

pub(super) const DEFS: &[Def] = &[def("regex", Deep, regex), def("regexall", Deep, regexall)];

/// A pattern Go's `regexp/syntax` would reject: its error code text and
/// the offending part of the expression.
#[derive(Debug)]
pub(super) struct PatternError {
    code: String,
    expr: String,
}

impl PatternError {
    /// As Go's `regexp.Compile` error reads (what `replace` reports).
    pub(super) fn go_error(&self) -> String {
        format!("error parsing regexp: {}: `{}`", self.code, self.expr)
    }
}

/// Compiles a Go (RE2) pattern.
pub(super) fn compile(pattern: &str) -> Result<Regex, PatternError> {
    let rust = translate(pattern);
    if let Err(e) = regex_syntax::ParserBuilder::new()
        .octal(true)
        .build()
        .parse(&rust)
    {
        return Err(pattern_error(pattern, &rust, &e));
    }
    regex::RegexBuilder::new(&rust)
        .octal(true)
        .build()
        .map_err(|e| PatternError {
            code: match e {
                regex::Error::CompiledTooBig(_) => "expression too large".into(),
                other => other.to_string(),
            },
            expr: pattern.to_string(),
        })
}

/// Go's error code and expression for a parse failure of the rewritten
/// pattern `rust` (spans point into it; close enough to Go's, which point
/// into the pattern as written).
fn pattern_error(pattern: &str, rust: &str, e: &regex_syntax::Error) -> PatternError {
    use regex_syntax::ast::ErrorKind as A;
    use regex_syntax::hir::ErrorKind as H;
    let (code, span) = match e {
        regex_syntax::Error::Parse(p) => {
            let code = match p.kind() {
                A::ClassUnclosed => "missing closing ]",
                A::GroupUnclosed => "missing closing )",
                A::GroupUnopened => "unexpected )",
                A::RepetitionMissing => "missing argument to repetition operator",
                A::ClassRangeInvalid | A::ClassRangeLiteral | A::UnicodeClassInvalid => {
                    "invalid character class range"
                }
                A::EscapeUnexpectedEof => "trailing backslash at end of expression",
                A::ClassEscapeInvalid
                | A::EscapeHexEmpty
                | A::EscapeHexInvalid
                | A::EscapeHexInvalidDigit
                | A::EscapeUnrecognized
                | A::UnsupportedBackreference => "invalid escape sequence",
                A::GroupNameDuplicate { .. }
                | A::GroupNameEmpty
                | A::GroupNameInvalid
                | A::GroupNameUnexpectedEof => "invalid named capture",
                A::RepetitionCountInvalid
                | A::RepetitionCountDecimalEmpty
                | A::RepetitionCountUnclosed
                | A::DecimalEmpty
                | A::DecimalInvalid => "invalid repeat count",
                A::NestLimitExceeded(_) => "expression nests too deeply",
                A::CaptureLimitExceeded => "expression too large",
                _ => "invalid or unsupported Perl syntax",
            };
            let whole = matches!(p.kind(), A::GroupUnclosed | A::GroupUnopened);
            let span = if whole {
                None
            } else if matches!(p.kind(), A::ClassUnclosed) {
                Some((p.span().start.offset, rust.len()))
            } else {
                Some((p.span().start.offset, p.span().end.offset))
            };
            (code, span)
        }
        regex_syntax::Error::Translate(t) => {
            let code = match t.kind() {
                H::UnicodePropertyNotFound
                | H::UnicodePropertyValueNotFound
                | H::UnicodePerlClassNotFound => "invalid character class range",
                _ => "invalid UTF-8",
            };
            (code, Some((t.span().start.offset, t.span().end.offset)))
        }
        _ => ("invalid or unsupported Perl syntax", None),
    };
    let expr = match span {
        Some((a, b)) if a < b && rust.is_char_boundary(a) && rust.is_char_boundary(b) => {
            rust[a..b].to_string()
        }
        _ => pattern.to_string(),
    };
    PatternError {
        code: code.to_string(),
        expr,
    }
}

/// Rewrites a Go pattern into the `regex` crate's dialect.
fn translate(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                let e = chars[i + 1];
                i += 2;
                match e {
                    // Go's perl classes and word boundaries are ASCII-only.
                    'd' | 'w' | 's' | 'b' | 'B' => {
                        out.push_str("(?-u:\\");
                        out.push(e);
                        out.push(')');
                    }
                    'D' => out.push_str("[^0-9]"),
                    'W' => out.push_str("[^0-9A-Za-z_]"),
                    'S' => out.push_str("[^\\t\\n\\f\\r ]"),
                    'Q' => {
                        // Literal text up to \E (or the end).
                        let mut lit = String::new();
                        while i < chars.len()
                            && !(chars[i] == '\\' && chars.get(i + 1) == Some(&'E'))
                        {
                            lit.push(chars[i]);
                            i += 1;
                        }
                        if i < chars.len() {
                            i += 2;
                        }
                        out.push_str(&regex::escape(&lit));
                    }
                    // `\<` and `\>` are literal in Go, word edges in Rust.
                    '<' | '>' => out.push(e),
                    e => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' => i = translate_class(&chars, i, &mut out),
            '{' if !is_repeat(&chars, i) => {
                // Go reads a brace that does not start a repeat literally.
                out.push_str("\\{");
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Whether `{` at `i` starts `{n}`, `{n,}` or `{n,m}`.
fn is_repeat(chars: &[char], i: usize) -> bool {
    let mut j = i + 1;
    let digits = |j: &mut usize| {
        let start = *j;
        while chars.get(*j).is_some_and(char::is_ascii_digit) {
            *j += 1;
        }
        *j > start
    };
    if !digits(&mut j) {
        return false;
    }
    if chars.get(j) == Some(&',') {
        j += 1;
        digits(&mut j);
    }
    chars.get(j) == Some(&'}')
}

/// Copies the bracket class starting at `i`, escaping what Rust's classes
/// treat specially but Go's do not (`[` outside `[:name:]`, `&&`, `~~`,
/// `--`). Returns the index after it.
fn translate_class(chars: &[char], mut i: usize, out: &mut String) -> usize {
    out.push('[');
    i += 1;
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        out.push_str("\\]");
        i += 1;
    }
    while i < chars.len() {
        let c = chars[i];
        match c {
            ']' => {
                out.push(']');
                return i + 1;
            }
            '\\' if i + 1 < chars.len() => {
                let e = chars[i + 1];
                match e {
                    'd' => out.push_str("0-9"),
                    'w' => out.push_str("0-9A-Za-z_"),
                    's' => out.push_str("\\t\\n\\f\\r "),
                    'D' => out.push_str("[^0-9]"),
                    'W' => out.push_str("[^0-9A-Za-z_]"),
                    'S' => out.push_str("[^\\t\\n\\f\\r ]"),
                    e => {
                        out.push('\\');
                        out.push(e);
                    }
                }
                i += 2;
            }
            '[' if chars.get(i + 1) == Some(&':') => {
                // A POSIX class `[:alpha:]` passes through whole.
                let end = (i + 2..chars.len().saturating_sub(1))
                    .find(|&j| chars[j] == ':' && chars[j + 1] == ']');
                match end {
                    Some(j) => {
                        out.extend(&chars[i..j + 2]);
                        i = j + 2;
                    }
                    None => {
                        out.push_str("\\[");
                        i += 1;
                    }
                }
            }
            '[' | '&' | '~' => {
                out.push('\\');
                out.push(c);
                i += 1;
            }
            '-' if chars.get(i + 1) == Some(&'-') => {
                out.push_str("-\\-");
                i += 2;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Unclosed: the parser reports the missing `]`.
    i
}

/// The matches Go's `FindAllStringSubmatchIndex` reports: leftmost-first,
/// and an empty match right after the previous match is skipped.
fn find_all<'h>(re: &Regex, text: &'h str) -> Vec<Captures<'h>> {
    let mut found = Vec::new();
    let (mut pos, mut prev_end) = (0usize, None);
    while pos <= text.len() {
        let Some(caps) = re.captures_at(text, pos) else {
            break;
        };
        let m = caps.get(0).expect("group 0 always matches");
        let mut accept = true;
        if m.end() == pos {
            // An empty match: step over one character.
            if Some(m.start()) == prev_end {
                accept = false;
            }
            pos += text[pos..].chars().next().map_or(1, char::len_utf8);
        } else {
            pos = m.end();
        }
        prev_end = Some(m.end());
        if accept {
            found.push(caps);
        }
    }
    found
}

/// Go's `Regexp.ReplaceAllString`.
pub(super) fn replace_all(re: &Regex, text: &str, template: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut last_end, mut search) = (0usize, 0usize);
    while search <= text.len() {
        let Some(caps) = re.captures_at(text, search) else {
            break;
        };
        let m = caps.get(0).expect("group 0 always matches");
        out.push_str(&text[last_end..m.start()]);
        // No replacement for an empty match right after another match.
        if m.end() > last_end || m.start() == 0 {
            expand(re, &caps, template, &mut out);
        }
        last_end = m.end();
        let width = text[search..].chars().next().map_or(0, char::len_utf8);
        if search + width > m.end() {
            search += width;
        } else if search + 1 > m.end() {
            search += 1;
        } else {
            search = m.end();
        }
    }
    out.push_str(&text[last_end..]);
    out
}

/// Go's `Regexp.Expand`: `$name`, `${name}`, `$1`, `$$`; a name is the
/// longest run of letters, digits and `_`, and an unknown group expands
/// to nothing. A `$` not followed by a name stays as it is.
fn expand(re: &Regex, caps: &Captures<'_>, template: &str, out: &mut String) {
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(r) = rest.strip_prefix('$') {
            out.push('$');
            rest = r;
            continue;
        }
        let (braced, body) = match rest.strip_prefix('{') {
            Some(b) => (true, b),
            None => (false, rest),
        };
        let len: usize = body
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .map(char::len_utf8)
            .sum();
        let name = &body[..len];
        let closed = !braced || body[len..].starts_with('}');
        if name.is_empty() || !closed {
            out.push('$');
            continue;
        }
        rest = &body[len + usize::from(braced)..];
        let group = match name.parse::<usize>() {
            Ok(n) if !(name.starts_with('0') && name.len() > 1) => caps.get(n),
            _ => re
                .capture_names()
                .enumerate()
                .filter(|(_, n)| *n == Some(name))
                .find_map(|(i, _)| caps.get(i)),
        };
        if let Some(g) = group {
            out.push_str(g.as_str());
        }
    }
    out.push_str(rest);
}

/// What each match yields: the whole match (no groups), a list of the
/// groups, or an object of the named groups.
enum Shape {
    Whole,
    Unnamed,
    Named,
}

fn compile_for_match(pattern: &str) -> Result<(Regex, Shape), FnError> {
    let re = compile(pattern).map_err(|e| {
        FnError::arg(
            0,
            format!("invalid regexp pattern: {} in {}", e.code, e.expr),
        )
    })?;
    let names: Vec<Option<&str>> = re.capture_names().skip(1).collect();
    let named = names.iter().filter(|n| n.is_some()).count();
    let shape = match (names.len() - named, named) {
        (0, 0) => Shape::Whole,
        (_, 0) => Shape::Unnamed,
        (0, _) => Shape::Named,
        _ => {
            return Err(FnError::arg(
                0,
                "invalid regexp pattern: cannot mix both named and unnamed capture groups",
            ));
        }
    };
    Ok((re, shape))
}

/// The type of one match, as Terraform declares it: a string, a tuple of
/// strings (one per group) or an object of strings (one per named group);
/// a group that did not match is a null string.
fn match_type(re: &Regex, shape: &Shape) -> Type {
    match shape {
        Shape::Whole => Type::String,
        Shape::Unnamed => Type::Tuple(vec![Type::String; re.captures_len() - 1]),
        Shape::Named => Type::object(re.capture_names().flatten().map(|n| (n, Type::String))),
    }
}

fn match_value(re: &Regex, shape: &Shape, caps: &Captures<'_>) -> Value {
    let group = |i: usize| {
        caps.get(i).map_or(Value::null_of(Type::String), |m| {
            Value::String(m.as_str().to_string())
        })
    };
    match shape {
        Shape::Whole => group(0),
        Shape::Unnamed => {
            Value::typed_list((1..caps.len()).map(group).collect(), match_type(re, shape))
        }
        Shape::Named => Value::Map(
            re.capture_names()
                .enumerate()
                .filter_map(|(i, n)| n.map(|n| (n.to_string(), group(i))))
                .collect::<ValueMap>()
                .typed(match_type(re, shape)),
        ),
    }
}

fn regex(a: &[Value]) -> FnResult {
    let (pattern, text) = (str_arg(a, 0)?, str_arg(a, 1)?);
    let (re, shape) = compile_for_match(&pattern)?;
    let caps = re
        .captures(&text)
        .ok_or_else(|| FnError::call("pattern did not match any part of the given string"))?;
    Ok(match_value(&re, &shape, &caps))
}

fn regexall(a: &[Value]) -> FnResult {
    let (pattern, text) = (str_arg(a, 0)?, str_arg(a, 1)?);
    let (re, shape) = compile_for_match(&pattern)?;
    Ok(Value::typed_list(
        find_all(&re, &text)
            .iter()
            .map(|caps| match_value(&re, &shape, caps))
            .collect(),
        Type::list(match_type(&re, &shape)),
    ))
}
