//! A JSON parser for `.tf.json` files that keeps what HCL's JSON syntax
//! needs and ordinary JSON libraries drop: the source range of every value
//! and property name, property order, repeated property names, and numbers
//! as their exact text. Syntax errors carry the summaries and details of
//! HCL's own JSON parser, at the offending token.

use fleetform_shared::diag::{Diagnostic, Pos, SourceRange};

/// One JSON value with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonValue {
    pub kind: JsonKind,
    /// The whole value, brackets and quotes included.
    pub range: SourceRange,
}

#[derive(Clone, Debug, PartialEq)]
pub enum JsonKind {
    Null,
    Bool(bool),
    /// The number's text, exactly as written (validated JSON number syntax).
    Number(String),
    /// The string's content, escapes resolved.
    String(String, Escapes),
    Array(Vec<JsonValue>),
    /// Properties in source order, repeats kept; `close` is the closing brace.
    Object {
        members: Vec<JsonMember>,
        close: SourceRange,
    },
}

/// One `"name": value` property of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonMember {
    pub name: String,
    pub name_escapes: Escapes,
    pub name_range: SourceRange,
    pub value: JsonValue,
}

/// Where a string's escapes were, to map a position in its content back
/// to the file: (content byte, bytes of the escape, bytes it decoded to).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Escapes(Vec<(usize, usize, usize)>);

impl Escapes {
    /// The file position of byte `at` of the content `s` of a string
    /// token starting (at its quote) at `quote`. Escapes are ASCII and a
    /// string is on one line, so the column moves with the characters.
    pub fn position(&self, s: &str, quote: Pos, at: usize) -> Pos {
        let at = at.min(s.len());
        let (mut bytes, mut columns) = (at, s[..floor(s, at)].chars().count());
        for &(_, raw, decoded) in self.0.iter().take_while(|(pos, _, _)| *pos < at) {
            bytes += raw - decoded;
            columns += raw - 1;
        }
        Pos {
            line: quote.line,
            column: quote.column + 1 + columns,
            byte: quote.byte + 1 + bytes,
        }
    }
}

fn floor(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl JsonValue {
    /// The first character of the value: where HCL reports a value of the wrong type.
    pub fn start_range(&self) -> SourceRange {
        let mut r = self.range.clone();
        if matches!(self.kind, JsonKind::Array(_) | JsonKind::Object { .. }) {
            r.end = Pos {
                line: r.start.line,
                column: r.start.column + 1,
                byte: r.start.byte + 1,
            };
        }
        r
    }
}

/// Parses a whole file; the first syntax error stops parsing, as in HCL.
pub fn parse(filename: &str, source: &str) -> Result<JsonValue, Diagnostic> {
    let mut p = Parser {
        filename,
        src: source.as_bytes(),
        text: source,
        pos: Pos {
            line: 1,
            column: 1,
            byte: 0,
        },
    };
    let value = p.value()?;
    let next = p.token();
    if next.kind != Tok::Eof {
        return Err(Diagnostic::error(
            "Extraneous data after value",
            "Extra characters appear after the JSON value.",
        )
        .at(next.range));
    }
    Ok(value)
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok {
    BraceO,
    BraceC,
    BrackO,
    BrackC,
    Comma,
    Colon,
    /// `=`: only recognised to remind the author that JSON uses colons.
    Equals,
    Keyword,
    String,
    Number,
    Eof,
    Invalid,
}

#[derive(Clone, Debug)]
struct Token {
    kind: Tok,
    range: SourceRange,
    /// Byte offsets of the token's text.
    start: usize,
    end: usize,
}

struct Parser<'a> {
    filename: &'a str,
    src: &'a [u8],
    text: &'a str,
    pos: Pos,
}

const VALUE_START: &str =
    "A JSON value must start with a brace, a bracket, a number, a string, or a keyword.";

impl Parser<'_> {
    fn range(&self, start: Pos, end: Pos) -> SourceRange {
        SourceRange {
            filename: self.filename.to_string(),
            start,
            end,
        }
    }

    /// Advances over one character, keeping line and column.
    fn bump(&mut self) {
        let Some(c) = self.text[self.pos.byte..].chars().next() else {
            return;
        };
        self.pos.byte += c.len_utf8();
        if c == '\n' {
            self.pos.line += 1;
            self.pos.column = 1;
        } else {
            self.pos.column += 1;
        }
    }

    fn peek_byte(&self) -> Option<u8> {
        self.src.get(self.pos.byte).copied()
    }

    fn token(&mut self) -> Token {
        while matches!(self.peek_byte(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.bump();
        }
        let start = self.pos;
        let kind = match self.peek_byte() {
            None => Tok::Eof,
            Some(b) => {
                let kind = match b {
                    b'{' => Tok::BraceO,
                    b'}' => Tok::BraceC,
                    b'[' => Tok::BrackO,
                    b']' => Tok::BrackC,
                    b',' => Tok::Comma,
                    b':' => Tok::Colon,
                    b'=' => Tok::Equals,
                    b'"' => Tok::String,
                    b'-' | b'+' | b'.' | b'0'..=b'9' => Tok::Number,
                    b if b.is_ascii_alphabetic() => Tok::Keyword,
                    _ => Tok::Invalid,
                };
                match kind {
                    Tok::String => self.scan_string(),
                    Tok::Number => {
                        while matches!(
                            self.peek_byte(),
                            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                        ) {
                            self.bump();
                        }
                    }
                    Tok::Keyword => {
                        while self
                            .peek_byte()
                            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                        {
                            self.bump();
                        }
                    }
                    _ => self.bump(),
                }
                kind
            }
        };
        Token {
            kind,
            range: self.range(start, self.pos),
            start: start.byte,
            end: self.pos.byte,
        }
    }

    /// Moves past a string token: to its closing quote, or to the first
    /// control character or the end of input when it is unterminated.
    fn scan_string(&mut self) {
        self.bump();
        let mut escaping = false;
        while let Some(b) = self.peek_byte() {
            match b {
                b'\\' => escaping = !escaping,
                b'"' if !escaping => {
                    self.bump();
                    return;
                }
                0..=31 => return,
                _ => escaping = false,
            }
            self.bump();
        }
    }

    fn peek(&mut self) -> Token {
        let saved = self.pos;
        let t = self.token();
        self.pos = saved;
        t
    }

    fn value(&mut self) -> Result<JsonValue, Diagnostic> {
        let tok = self.token();
        let err = |summary: &str, detail: &str| {
            Err(Diagnostic::error(summary, detail).at(tok.range.clone()))
        };
        match tok.kind {
            Tok::BraceO => self.object(tok),
            Tok::BrackO => self.array(tok),
            Tok::Number => self.number(tok),
            Tok::String => {
                let (s, escapes) = self.string(&tok)?;
                Ok(JsonValue {
                    kind: JsonKind::String(s, escapes),
                    range: tok.range,
                })
            }
            Tok::Keyword => self.keyword(tok),
            Tok::BraceC => err("Missing JSON value", VALUE_START),
            Tok::BrackC => err("Missing array element value", VALUE_START),
            Tok::Eof => err("Missing value", "The JSON data ends prematurely."),
            _ => err("Invalid start of value", VALUE_START),
        }
    }

    fn object(&mut self, open: Token) -> Result<JsonValue, Diagnostic> {
        let mut members = Vec::new();
        if self.peek().kind == Tok::BraceC {
            let close = self.token();
            return Ok(self.finish_object(open, members, close));
        }
        loop {
            let key = self.value()?;
            let JsonKind::String(name, name_escapes) = key.kind else {
                return Err(Diagnostic::error(
                    "Invalid object property name",
                    "A JSON object property name must be a string",
                )
                .at(key.start_range()));
            };
            let colon = self.token();
            match colon.kind {
                Tok::Colon => {}
                Tok::BraceC | Tok::Comma => {
                    return Err(Diagnostic::error(
                        "Missing object value",
                        "A JSON object attribute must have a value, introduced by a colon.",
                    )
                    .at(colon.range));
                }
                Tok::Equals => {
                    return Err(Diagnostic::error(
                        "Missing property value colon",
                        "JSON uses a colon as its name/value delimiter, not an equals sign.",
                    )
                    .at(colon.range));
                }
                _ => {
                    return Err(Diagnostic::error(
                        "Missing property value colon",
                        "A colon must appear between an object property's name and its value.",
                    )
                    .at(colon.range));
                }
            }
            let value = self.value()?;
            members.push(JsonMember {
                name,
                name_escapes,
                name_range: key.range,
                value,
            });
            let next = self.token();
            match next.kind {
                Tok::Comma => {
                    if self.peek().kind == Tok::BraceC {
                        return Err(Diagnostic::error(
                            "Trailing comma in object",
                            "JSON does not permit a trailing comma after the final property in an object.",
                        )
                        .at(next.range));
                    }
                }
                Tok::BraceC => return Ok(self.finish_object(open, members, next)),
                Tok::Eof => {
                    return Err(Diagnostic::error(
                        "Unclosed object",
                        "No closing brace was found for this JSON object.",
                    )
                    .at(open.range));
                }
                Tok::BrackC => {
                    return Err(Diagnostic::error(
                        "Mismatched braces",
                        "A JSON object must be closed with a brace, not a bracket.",
                    )
                    .at(next.range));
                }
                _ => {
                    return Err(Diagnostic::error(
                        "Missing attribute seperator comma",
                        "A comma must appear between each property definition in an object.",
                    )
                    .at(next.range));
                }
            }
        }
    }

    fn finish_object(&self, open: Token, members: Vec<JsonMember>, close: Token) -> JsonValue {
        JsonValue {
            range: self.range(open.range.start, close.range.end),
            kind: JsonKind::Object {
                members,
                close: close.range,
            },
        }
    }

    fn array(&mut self, open: Token) -> Result<JsonValue, Diagnostic> {
        let mut items = Vec::new();
        if self.peek().kind == Tok::BrackC {
            let close = self.token();
            return Ok(JsonValue {
                kind: JsonKind::Array(items),
                range: self.range(open.range.start, close.range.end),
            });
        }
        loop {
            items.push(self.value()?);
            let next = self.token();
            match next.kind {
                Tok::Comma => {
                    if self.peek().kind == Tok::BrackC {
                        return Err(Diagnostic::error(
                            "Trailing comma in array",
                            "JSON does not permit a trailing comma after the final value in an array.",
                        )
                        .at(next.range));
                    }
                }
                Tok::BrackC => {
                    return Ok(JsonValue {
                        kind: JsonKind::Array(items),
                        range: self.range(open.range.start, next.range.end),
                    });
                }
                Tok::Colon => {
                    return Err(Diagnostic::error(
                        "Invalid array value",
                        "A colon is not used to introduce values in a JSON array.",
                    )
                    .at(next.range));
                }
                Tok::Eof => {
                    return Err(Diagnostic::error(
                        "Unclosed object",
                        "No closing bracket was found for this JSON array.",
                    )
                    .at(open.range));
                }
                Tok::BraceC => {
                    return Err(Diagnostic::error(
                        "Mismatched brackets",
                        "A JSON array must be closed with a bracket, not a brace.",
                    )
                    .at(next.range));
                }
                _ => {
                    return Err(Diagnostic::error(
                        "Missing attribute seperator comma",
                        "A comma must appear between each value in an array.",
                    )
                    .at(next.range));
                }
            }
        }
    }

    fn number(&mut self, tok: Token) -> Result<JsonValue, Diagnostic> {
        let text = &self.text[tok.start..tok.end];
        if !is_json_number(text) {
            return Err(Diagnostic::error(
                "Invalid JSON number",
                "There is a syntax error in the given JSON number.",
            )
            .at(tok.range));
        }
        Ok(JsonValue {
            kind: JsonKind::Number(text.to_string()),
            range: tok.range,
        })
    }

    fn keyword(&mut self, tok: Token) -> Result<JsonValue, Diagnostic> {
        let word = &self.text[tok.start..tok.end];
        let kind = match word {
            "true" => JsonKind::Bool(true),
            "false" => JsonKind::Bool(false),
            "null" => JsonKind::Null,
            "undefined" | "NaN" | "Infinity" => {
                return Err(Diagnostic::error(
                    "Invalid JSON keyword",
                    format!("The JavaScript identifier {word:?} cannot be used in JSON."),
                )
                .at(tok.range));
            }
            _ => {
                let suggestion = suggestion(word, &["false", "true", "null"])
                    .map(|s| format!(" Did you mean {s:?}?"))
                    .unwrap_or_default();
                return Err(Diagnostic::error(
                    "Invalid JSON keyword",
                    format!("{word:?} is not a valid JSON keyword.{suggestion}"),
                )
                .at(tok.range));
            }
        };
        Ok(JsonValue {
            kind,
            range: tok.range,
        })
    }

    /// The content of a string token, escapes resolved; an error points at
    /// the character where the string goes wrong.
    fn string(&self, tok: &Token) -> Result<(String, Escapes), Diagnostic> {
        let raw = &self.text[tok.start..tok.end];
        match unescape(raw) {
            Ok(s) => Ok(s),
            Err(offset) => {
                // The position of the bad character on the token's line
                // (a JSON string never spans lines).
                let before = raw.get(..offset).unwrap_or(raw);
                let start = Pos {
                    line: tok.range.start.line,
                    column: tok.range.start.column + before.chars().count(),
                    byte: tok.start + offset,
                };
                let end = Pos {
                    column: start.column + 1,
                    byte: (start.byte + 1).min(self.text.len()),
                    ..start
                };
                Err(Diagnostic::error(
                    "Invalid JSON string",
                    "There is a syntax error in the given JSON string.",
                )
                .at(self.range(start, end)))
            }
        }
    }
}

/// Decodes a quoted JSON string token; Err is the byte offset of the problem.
fn unescape(raw: &str) -> Result<(String, Escapes), usize> {
    let bytes = raw.as_bytes();
    if bytes.len() < 2 || bytes[0] != b'"' || bytes[bytes.len() - 1] != b'"' {
        return Err(raw.len());
    }
    let mut out = String::with_capacity(raw.len());
    let mut escapes = Vec::new();
    let mut chars = raw[1..raw.len() - 1].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let at = i + 1;
        match c {
            '\\' => {
                let before = out.len();
                let Some((j, e)) = chars.next() else {
                    return Err(at);
                };
                // A bad escape is reported at the character after the backslash.
                let at = j + 1;
                match e {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    '/' => out.push('/'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'u' => {
                        let unit = hex4(&mut chars).ok_or(at)?;
                        let c = if (0xD800..0xDC00).contains(&unit) {
                            // A surrogate pair: the low half must follow.
                            let low = match (chars.next(), chars.next()) {
                                (Some((_, '\\')), Some((_, 'u'))) => hex4(&mut chars),
                                _ => None,
                            };
                            match low {
                                Some(low @ 0xDC00..0xE000) => char::from_u32(
                                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                                ),
                                _ => None,
                            }
                        } else {
                            char::from_u32(unit)
                        };
                        // cty and Go replace a lone surrogate with U+FFFD.
                        out.push(c.unwrap_or('\u{FFFD}'));
                    }
                    _ => return Err(at),
                }
                let end = chars.peek().map(|(j, _)| *j).unwrap_or(raw.len() - 2);
                escapes.push((before, end - i, out.len() - before));
            }
            c if (c as u32) < 0x20 => return Err(at),
            c => out.push(c),
        }
    }
    Ok((out, Escapes(escapes)))
}

fn hex4(chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>) -> Option<u32> {
    let mut v = 0;
    for _ in 0..4 {
        let (_, c) = chars.next()?;
        v = v * 16 + c.to_digit(16)?;
    }
    Some(v)
}

/// RFC 8259 number syntax: `-? int frac? exp?`.
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let digits = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == digits {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let digits = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == digits {
            return false;
        }
    }
    i == b.len()
}

/// The first candidate within edit distance 2 of `given`, as HCL suggests names.
pub(super) fn suggestion<'a>(given: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .copied()
        .find(|c| levenshtein(given, c) < 3)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
