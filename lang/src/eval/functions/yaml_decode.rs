//! `yamldecode`, as Terraform 1.9 reads YAML (go-cty-yaml 1.0.3): one
//! document only; plain scalars resolved with YAML 1.1's words (`yes`,
//! `on`, `y` are true), integers in decimal, `0o` and `0x` with `_`
//! separators, timestamps turned into RFC 3339 strings, `<<` merge keys;
//! anchors and aliases; cty's error texts, placed at the event's position
//! (cty counts lines from 0 and leaves the first line unmarked). Syntax is
//! parsed by `saphyr-parser`, so its syntax error texts are its own.

use super::{Def, FnError, FnResult, Unknowns::Deep, def, go_fmt, str_arg};
use fleetform_shared::value::{Number, Value};
use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span};
use std::collections::{BTreeMap, HashMap};

pub(super) const DEFS: &[Def] = &[def("yamldecode", Deep, yamldecode)];

const TAG_PREFIX: &str = "tag:yaml.org,2002:";

fn yamldecode(a: &[Value]) -> FnResult {
    let mut src = str_arg(a, 0)?;
    if src.is_empty() {
        // cty reads empty source as a single line break.
        src.push('\n');
    }
    Decoder::new(&src).document().map_err(FnError::call)
}

struct Decoder<'a> {
    src: &'a str,
    events: Parser<'a, saphyr_parser::StrInput<'a>>,
    /// Anchor ids whose node is still being read.
    pending: HashMap<usize, usize>,
    anchors: HashMap<usize, Value>,
}

/// Places an error at an event as cty does: "on line L, column C" with
/// L counted from 0, and nothing at all on the first line.
fn at(span: &Span, msg: impl std::fmt::Display) -> String {
    let line0 = span.start.line().saturating_sub(1);
    if line0 == 0 {
        msg.to_string()
    } else {
        format!("on line {line0}, column {}: {msg}", span.start.col() + 1)
    }
}

fn syntax_error(e: &ScanError) -> String {
    let line0 = e.marker().line().saturating_sub(1);
    if line0 == 0 {
        e.info().to_string()
    } else {
        format!(
            "on line {}, column {}: {}",
            line0 + 1,
            e.marker().col() + 1,
            e.info()
        )
    }
}

/// A scalar resolved: a value, or the merge key `<<`.
enum Scalar {
    Value(Value),
    Merge,
}

impl<'a> Decoder<'a> {
    fn new(src: &'a str) -> Decoder<'a> {
        Decoder {
            src,
            events: Parser::new_from_str(src),
            pending: HashMap::new(),
            anchors: HashMap::new(),
        }
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), String> {
        match self.events.next() {
            Some(Ok(e)) => Ok(e),
            Some(Err(e)) => Err(syntax_error(&e)),
            None => Err("unexpected end of YAML input".into()),
        }
    }

    fn document(&mut self) -> Result<Value, String> {
        let (ev, span) = self.next()?;
        if !matches!(ev, Event::StreamStart) {
            return Err(at(&span, "missing stream start token"));
        }
        let (ev, span) = self.next()?;
        if !matches!(ev, Event::DocumentStart(_)) {
            return Err(at(&span, "missing start of document"));
        }
        let value = self.node()?;
        let (ev, span) = self.next()?;
        match ev {
            Event::DocumentStart(_) => return Err(at(&span, "only a single document is allowed")),
            Event::DocumentEnd => {}
            other => {
                return Err(at(
                    &span,
                    format!(
                        "unexpected extra content ({}) after value",
                        event_name(&other)
                    ),
                ));
            }
        }
        let (ev, span) = self.next()?;
        if !matches!(ev, Event::StreamEnd) {
            return Err(at(&span, "unexpected extra content after value"));
        }
        Ok(value)
    }

    fn node(&mut self) -> Result<Value, String> {
        let (ev, span) = self.next()?;
        self.node_from(ev, span)
    }

    fn node_from(&mut self, ev: Event<'a>, span: Span) -> Result<Value, String> {
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                self.begin(anchor);
                let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix));
                let v = match resolve(tag.as_deref().unwrap_or(""), &text, style) {
                    Ok(Scalar::Value(v)) => v,
                    Ok(Scalar::Merge) => Value::String("<<".into()),
                    Err(e) => return Err(at(&span, e)),
                };
                self.complete(anchor, &v);
                Ok(v)
            }
            Event::Alias(id) => {
                let name = self.alias_name(&span);
                if self.pending.contains_key(&id) {
                    return Err(at(
                        &span,
                        format!(
                            "cannot refer to anchor {} from inside its own definition",
                            go_fmt::quote(&name)
                        ),
                    ));
                }
                self.anchors.get(&id).cloned().ok_or_else(|| {
                    at(
                        &span,
                        format!("reference to undefined anchor {}", go_fmt::quote(&name)),
                    )
                })
            }
            Event::SequenceStart(anchor, tag) => {
                let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix));
                if let Some(t) = tag.filter(|t| *t != format!("{TAG_PREFIX}seq")) {
                    return Err(at(&span, format!("can't interpret sequence as {t}")));
                }
                self.begin(anchor);
                let mut items = Vec::new();
                loop {
                    let (ev, span) = self.next()?;
                    if matches!(ev, Event::SequenceEnd) {
                        break;
                    }
                    items.push(self.node_from(ev, span)?);
                }
                let v = Value::tuple(items);
                self.complete(anchor, &v);
                Ok(v)
            }
            Event::MappingStart(anchor, tag) => {
                let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix));
                if let Some(t) = tag.filter(|t| *t != format!("{TAG_PREFIX}map")) {
                    return Err(at(&span, format!("can't interpret mapping as {t}")));
                }
                self.begin(anchor);
                let v = Value::Map(self.mapping()?.into());
                self.complete(anchor, &v);
                Ok(v)
            }
            Event::DocumentStart(_) => Err(at(&span, "only a single document is allowed")),
            Event::StreamEnd => Err(at(&span, "expecting value but found end of stream")),
            other => Err(at(
                &span,
                format!("unexpected parser event {}", event_name(&other)),
            )),
        }
    }

    fn mapping(&mut self) -> Result<BTreeMap<String, Value>, String> {
        let mut out = BTreeMap::new();
        loop {
            let (ev, span) = self.next()?;
            let (text, style, tag) = match ev {
                Event::MappingEnd => return Ok(out),
                Event::Scalar(text, style, _, tag) => (text, style, tag),
                _ => return Err(at(&span, "only strings are allowed as mapping keys")),
            };
            let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix));
            let key = match resolve(tag.as_deref().unwrap_or(""), &text, style)? {
                Scalar::Merge => {
                    match self.node()? {
                        Value::Map(m) => out.extend(m.into_iter().map(|(k, v)| (k.to_string(), v))),
                        other => {
                            return Err(at(
                                &span,
                                format!("cannot merge {} into mapping", type_name(&other)),
                            ));
                        }
                    }
                    continue;
                }
                Scalar::Value(Value::Null(_)) => {
                    return Err(at(&span, "mapping key cannot be null"));
                }
                Scalar::Value(v) => crate::eval::ops::to_string(&v)
                    .ok_or_else(|| at(&span, "only strings are allowed as mapping keys"))?,
            };
            let value = self.node()?;
            out.insert(key, value);
        }
    }

    fn begin(&mut self, anchor: usize) {
        if anchor != 0 {
            *self.pending.entry(anchor).or_default() += 1;
        }
    }

    fn complete(&mut self, anchor: usize, v: &Value) {
        if anchor == 0 {
            return;
        }
        if let Some(n) = self.pending.get_mut(&anchor) {
            *n -= 1;
            if *n == 0 {
                self.pending.remove(&anchor);
            }
        }
        self.anchors.insert(anchor, v.clone());
    }

    /// The anchor name an alias event spells (`*name` at its position).
    fn alias_name(&self, span: &Span) -> String {
        self.src
            .chars()
            .skip(span.start.index() + 1)
            .take_while(|c| !c.is_whitespace() && !",[]{}".contains(*c))
            .collect()
    }
}

fn event_name(ev: &Event<'_>) -> &'static str {
    match ev {
        Event::StreamStart => "STREAM-START",
        Event::StreamEnd => "STREAM-END",
        Event::DocumentStart(_) => "DOCUMENT-START",
        Event::DocumentEnd => "DOCUMENT-END",
        Event::Alias(_) => "ALIAS",
        Event::Scalar(..) => "SCALAR",
        Event::SequenceStart(..) => "SEQUENCE-START",
        Event::SequenceEnd => "SEQUENCE-END",
        Event::MappingStart(..) => "MAPPING-START",
        Event::MappingEnd => "MAPPING-END",
        Event::Nothing => "NO",
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "tuple",
        Value::Null(_) => "dynamic",
        v => v.kind(),
    }
}

/// cty-yaml's first-character hints: which scalars may be more than text.
fn hint(src: &str) -> Option<char> {
    match src.bytes().next() {
        None => Some('N'),
        Some(b'+' | b'-') => Some('S'),
        Some(b'0'..=b'9') => Some('D'),
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => {
            Some('M')
        }
        Some(b'.') => Some('.'),
        _ => None,
    }
}

/// The YAML 1.1 words cty-yaml recognises.
fn word(src: &str) -> Option<Value> {
    Some(match src {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Value::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Value::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Value::null(),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            Value::Number(Number::Float(f64::INFINITY))
        }
        "-.inf" | "-.Inf" | "-.INF" => Value::Number(Number::Float(f64::NEG_INFINITY)),
        _ => return None,
    })
}

/// `\A[-+]?(|0o[0-7_]+|[0-9_]+|0x[0-9a-fA-F_]+)\z` (go-cty-yaml 1.0.3).
fn looks_integer(src: &str) -> bool {
    let s = src.strip_prefix(['-', '+']).unwrap_or(src);
    let all = |s: &str, ok: fn(char) -> bool| !s.is_empty() && s.chars().all(ok);
    s.is_empty()
        || s.strip_prefix("0o")
            .is_some_and(|r| all(r, |c| matches!(c, '0'..='7' | '_')))
        || all(s, |c| c.is_ascii_digit() || c == '_')
        || s.strip_prefix("0x")
            .is_some_and(|r| all(r, |c| c.is_ascii_hexdigit() || c == '_'))
}

/// `\A[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\z`
fn looks_float(src: &str) -> bool {
    let s = src.strip_prefix(['-', '+']).unwrap_or(src);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    let exp_ok = exp.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exp_ok
}

/// Go's `strconv.ParseInt(s, 0, 64)` then `ParseUint`: sign, and `0x`,
/// `0o`, `0b` or a leading `0` (octal) for the base.
fn go_parse_int(s: &str) -> Option<Number> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (radix, digits) = if let Some(d) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (16, d)
    } else if let Some(d) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (8, d)
    } else if let Some(d) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (2, d)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if neg {
        let v = i64::try_from(magnitude)
            .map(|m| -m)
            .or_else(|_| (magnitude == 1 << 63).then_some(i64::MIN).ok_or(()))
            .ok()?;
        Some(Number::Int(v))
    } else {
        Some(Number::from(magnitude))
    }
}

/// cty-yaml's `resolveScalar`: the value a scalar with this tag, text and
/// style stands for.
fn resolve(tag: &str, src: &str, style: ScalarStyle) -> Result<Scalar, String> {
    let short = tag.strip_prefix(TAG_PREFIX);
    let resolvable = tag.is_empty()
        || matches!(
            short,
            Some("str" | "bool" | "int" | "float" | "null" | "timestamp" | "binary")
        );
    if !resolvable {
        return Err(format!("unsupported tag {}", go_fmt::quote(tag)));
    }
    let mut tag = tag.to_string();
    let is = |t: &str, name: &str| t.strip_prefix(TAG_PREFIX) == Some(name);
    if let Some(h) = hint(src)
        && !is(&tag, "str")
        && !is(&tag, "binary")
    {
        if matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted) {
            return Ok(Scalar::Value(Value::String(src.into())));
        }
        if let Some(v) = word(src) {
            return Ok(Scalar::Value(v));
        }
        if tag.is_empty() && matches!(src, ".nan" | ".NaN" | ".NAN") {
            return Err("floating point NaN is not supported".into());
        }
        match h {
            '.' => {
                if let Some(n) = Number::parse(src) {
                    return Ok(Scalar::Value(Value::Number(n)));
                }
            }
            'D' | 'S' => {
                if (tag.is_empty() || is(&tag, "timestamp"))
                    && let Some(t) = timestamp(src)
                {
                    return Ok(Scalar::Value(Value::String(t)));
                }
                if looks_integer(src) {
                    tag = format!("{TAG_PREFIX}int");
                } else if looks_float(src) {
                    tag = format!("{TAG_PREFIX}float");
                }
            }
            _ => {}
        }
    }
    if tag.is_empty() && src == "<<" {
        return Ok(Scalar::Merge);
    }
    let cannot = || format!("cannot parse {} as {tag}", go_fmt::quote(src));
    let v = match tag.strip_prefix(TAG_PREFIX).unwrap_or(&tag) {
        "" | "str" => Value::String(src.into()),
        "binary" => {
            super::encoding_text::go_base64_decode(src).map_err(|_| {
                format!(
                    "cannot parse {} as {tag}: not valid base64",
                    go_fmt::quote(src)
                )
            })?;
            Value::String(src.into())
        }
        "bool" => match word(src) {
            Some(b @ Value::Bool(_)) => b,
            _ => return Err(cannot()),
        },
        "int" | "float" => {
            let plain = src.replace('_', "");
            let n = Number::parse(&plain)
                .filter(|_| plain.trim() == plain)
                .or_else(|| go_parse_int(&plain))
                .ok_or_else(cannot)?;
            Value::Number(n)
        }
        "timestamp" => Value::String(timestamp(src).ok_or_else(cannot)?),
        "null" => Value::null(),
        _ => return Err(format!("unsupported tag {}", go_fmt::quote(&tag))),
    };
    Ok(Scalar::Value(v))
}

/// A YAML timestamp in one of the forms cty-yaml accepts (Go layouts
/// `2006-1-2T15:4:5.999999999Z07:00`, with a lower-case `t`, `2006-1-2
/// 15:4:5.999999999` in UTC, or `2006-1-2`), as RFC 3339 text without
/// fractional seconds.
fn timestamp(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let year: i64 = s[..4].parse().ok()?;
    let mut rest = &s[5..];
    // Go's non-padded fields: one digit, or two when the second is one.
    let num = |rest: &mut &str| -> Option<u32> {
        let b = rest.as_bytes();
        let n = match b {
            [a, c, ..] if a.is_ascii_digit() && c.is_ascii_digit() => 2,
            [a, ..] if a.is_ascii_digit() => 1,
            _ => return None,
        };
        let v = rest[..n].parse().ok()?;
        *rest = &rest[n..];
        Some(v)
    };
    let lit = |rest: &mut &str, c: char| -> Option<()> {
        *rest = rest.strip_prefix(c)?;
        Some(())
    };
    let month = num(&mut rest)?;
    lit(&mut rest, '-')?;
    let day = num(&mut rest)?;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month) || day < 1 || day > days[month as usize - 1] {
        return None;
    }
    if rest.is_empty() {
        return Some(format!("{year:04}-{month:02}-{day:02}T00:00:00Z"));
    }
    let zoned = match rest.as_bytes()[0] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return None,
    };
    rest = &rest[1..];
    let hour = num(&mut rest)?;
    lit(&mut rest, ':')?;
    let minute = num(&mut rest)?;
    lit(&mut rest, ':')?;
    let second = num(&mut rest)?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    // Optional fractional seconds, dropped from the result.
    if let Some(r) = rest
        .strip_prefix(['.', ','])
        .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    {
        rest = r.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let zone = if !zoned {
        if !rest.is_empty() {
            return None;
        }
        "Z".to_string()
    } else if rest == "Z" {
        "Z".to_string()
    } else {
        let b = rest.as_bytes();
        let ok = b.len() == 6
            && matches!(b[0], b'+' | b'-')
            && b[1..3].iter().all(u8::is_ascii_digit)
            && b[3] == b':'
            && b[4..6].iter().all(u8::is_ascii_digit);
        if !ok {
            return None;
        }
        let (h, m): (u32, u32) = (rest[1..3].parse().ok()?, rest[4..6].parse().ok()?);
        if h > 24 || m > 59 {
            return None;
        }
        if h == 0 && m == 0 {
            "Z".to_string()
        } else {
            rest.to_string()
        }
    };
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}{zone}"
    ))
}
