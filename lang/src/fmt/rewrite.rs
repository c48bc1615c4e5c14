//! The changes `terraform fmt` makes beyond whitespace, all on tokens:
//!
//! - An attribute value that is a template holding one interpolation and
//!   nothing else, `"${ expr }"`, becomes `expr` (the legacy 0.11 style).
//!   Line breaks at the ends of the interpolation go; when the expression
//!   still spans lines it is put in parentheses, where line breaks are
//!   allowed (unless it begins with `(` and ends with `)`). Only whole
//!   attribute values: not object items, arguments or nested templates.
//! - The `type` of a top-level `variable` block given as a quoted legacy
//!   keyword becomes a type expression: `"string"` → `string`, `"list"` →
//!   `list(string)`, `"map"` → `map(string)`; a bare `list`, `map` or `set`
//!   becomes `list(any)`, `map(any)`, `set(any)`. That attribute is never
//!   unwrapped as above.
//! - Block labels are written anew from their values: a bare identifier is
//!   quoted, escapes are normalized (`"\u0041"` → `"A"`, a tab → `"\t"`,
//!   an unprintable character → `\uXXXX`), and comments between the block
//!   type and its last label go.
//!
//! Where Terraform v1.11.4 would lose meaning we do not follow it: it
//! drops a label whose text holds `$` or `%` (`b "a$b" {` becomes `b {`);
//! here such a label stays as written. (Its other such change, `x[false]`
//! to `x[]`, is simply not made: nothing here touches indexes.)

use super::lexer::{Kind, Token};
use super::parser::{Attr, Header, Structure};
use regex::Regex;
use std::sync::LazyLock;

pub(super) fn apply(tokens: Vec<Token>, s: &Structure) -> Vec<Token> {
    // (first, last inclusive, replacement); ranges never overlap.
    let mut edits: Vec<(usize, usize, Vec<Token>)> = Vec::new();
    for a in &s.attrs {
        let new = if a.variable_type {
            legacy_type(&tokens, a)
        } else {
            unwrap_interpolation(&tokens, a)
        };
        if let Some(new) = new {
            edits.push((a.first, a.last, new));
        }
    }
    for h in &s.headers {
        let last = h.labels.last().map_or(h.after_type, |l| l.1);
        edits.push((h.after_type, last, labels(&tokens, h)));
    }
    if edits.is_empty() {
        return tokens;
    }
    edits.sort_by_key(|e| e.0);
    let mut out = Vec::with_capacity(tokens.len() + 2 * edits.len());
    let mut edits = edits.into_iter().peekable();
    let mut skip_to = 0;
    for (i, t) in tokens.into_iter().enumerate() {
        if i < skip_to {
            continue;
        }
        if let Some((_, last, new)) = edits.next_if(|e| e.0 == i) {
            out.extend(new);
            skip_to = last + 1;
        } else {
            out.push(t);
        }
    }
    out
}

fn synth(kind: Kind, text: &str, pos: usize) -> Token {
    Token {
        kind,
        text: text.to_string(),
        pos,
        heredoc_top: false,
    }
}

/// A legacy `type` of a variable as a type expression: `"string"`,
/// `"list"`, `"map"` (0.11's quoted keywords, whose collections held
/// strings) and bare `list`, `map`, `set` (collections of any type).
fn legacy_type(tokens: &[Token], a: &Attr) -> Option<Vec<Token>> {
    let v = &tokens[a.first..=a.last];
    let pos = v[0].pos;
    let ident = |s: &str| synth(Kind::Ident, s, pos);
    let collection = |s: &str, elem: &str| {
        vec![
            ident(s),
            synth(Kind::OParen, "(", pos),
            ident(elem),
            synth(Kind::CParen, ")", pos),
        ]
    };
    match v {
        [open, lit, close]
            if (open.kind, lit.kind, close.kind)
                == (Kind::OQuote, Kind::QuotedLit, Kind::CQuote) =>
        {
            match lit.text.as_str() {
                "string" => Some(vec![ident("string")]),
                "list" | "map" => Some(collection(&lit.text, "string")),
                _ => None,
            }
        }
        [name]
            if name.kind == Kind::Ident && matches!(name.text.as_str(), "list" | "map" | "set") =>
        {
            Some(collection(&name.text, "any"))
        }
        _ => None,
    }
}

/// A block's labels written anew (see the module documentation).
fn labels(tokens: &[Token], h: &Header) -> Vec<Token> {
    let mut out = Vec::new();
    for &(first, last) in &h.labels {
        let t = &tokens[first];
        let written: String = tokens[first..=last]
            .iter()
            .map(|t| t.text.as_str())
            .collect();
        let value = if t.kind == Kind::Ident {
            Some(t.text.clone())
        } else if written.contains(['$', '%']) {
            None
        } else {
            unescape(&written[1..written.len() - 1])
        };
        match value {
            Some(v) => {
                out.push(synth(Kind::OQuote, "\"", t.pos));
                let lit = escape(&v);
                if !lit.is_empty() {
                    out.push(synth(Kind::QuotedLit, &lit, t.pos));
                }
                out.push(synth(Kind::CQuote, "\"", t.pos));
            }
            None => out.extend(tokens[first..=last].iter().cloned()),
        }
    }
    out
}

/// The value of a quoted string literal's text (no templates in it); None
/// when an escape does not give a character.
fn unescape(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let hex = |chars: &mut std::str::Chars<'_>, n: usize| {
            let h: String = chars.by_ref().take(n).collect();
            u32::from_str_radix(&h, 16).ok().and_then(char::from_u32)
        };
        out.push(match chars.next()? {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            '"' => '"',
            '\\' => '\\',
            'u' => hex(&mut chars, 4)?,
            'U' => hex(&mut chars, 8)?,
            _ => return None,
        });
    }
    Some(out)
}

/// Characters Terraform writes as themselves in a quoted string: letters,
/// marks, numbers, punctuation, symbols and the ASCII space.
static PRINTABLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$").expect("a valid pattern"));

/// A string's value as the text of a quoted literal.
fn escape(v: &str) -> String {
    let mut out = String::new();
    let mut buf = [0u8; 4];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            // `${` and `%{` would begin a template sequence.
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            _ if PRINTABLE.is_match(c.encode_utf8(&mut buf)) => out.push(c),
            _ if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            _ => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out
}

/// `"${ expr }"` as `expr` (or `(expr)` when it spans lines).
fn unwrap_interpolation(tokens: &[Token], a: &Attr) -> Option<Vec<Token>> {
    let v = &tokens[a.first..=a.last];
    let n = v.len();
    if n < 5
        || v[0].kind != Kind::OQuote
        || v[1].kind != Kind::TemplateInterp
        || v[n - 2].kind != Kind::TemplateSeqEnd
        || v[n - 1].kind != Kind::CQuote
    {
        return None;
    }
    // The interpolation opened at 1 must be the one closed at n - 2 (not
    // `"${a}${b}"`, nor `"${a} and ${b}"`).
    let mut depth = 0;
    for (k, t) in v.iter().enumerate().take(n - 1).skip(1) {
        match t.kind {
            Kind::TemplateInterp | Kind::TemplateControl => depth += 1,
            Kind::TemplateSeqEnd => depth -= 1,
            _ => {}
        }
        if depth == 0 && k != n - 2 {
            return None;
        }
    }
    let mut inner = &v[2..n - 2];
    while let [
        Token {
            kind: Kind::Newline,
            ..
        },
        rest @ ..,
    ] = inner
    {
        inner = rest;
    }
    while let [
        rest @ ..,
        Token {
            kind: Kind::Newline,
            ..
        },
    ] = inner
    {
        inner = rest;
    }
    // Parentheses, unless the tokens already begin with `(` and end with
    // `)` (even two groups, `(a) + (b)`: Terraform looks no further).
    let parenthesized = inner.first().is_some_and(|t| t.kind == Kind::OParen)
        && inner.last().is_some_and(|t| t.kind == Kind::CParen);
    if inner.iter().any(|t| t.kind == Kind::Newline) && !parenthesized {
        let mut out = vec![synth(Kind::OParen, "(", v[0].pos)];
        out.extend(inner.iter().cloned());
        out.push(synth(Kind::CParen, ")", v[n - 1].pos));
        Some(out)
    } else {
        Some(inner.to_vec())
    }
}
