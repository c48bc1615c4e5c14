//! JSON documents whose numbers keep every digit.
//!
//! cty writes a number into JSON as its full decimal text and reads it back
//! exactly; `serde_json::Value` holds only what `i64`, `u64` or `f64` hold
//! (short of its `arbitrary_precision` feature, which would change number
//! handling for every crate in the build). So the documents that carry
//! values (cty JSON on the provider wire, `show -json`, `output -json`,
//! `jsonencode`) use this tree: numbers are [`Number`]s, written in
//! decimal without an exponent, and [`Json::parse`] reads number literals
//! without going through `f64`. Strings are escaped and unescaped by
//! serde_json, so text is byte-for-byte what serde_json writes.

use crate::value::{Number, Value};
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

/// A JSON value; objects keep their keys sorted, as serde_json's do.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Json {
    #[default]
    Null,
    Bool(bool),
    /// Always finite when parsed; an infinity or NaN is written as `null`.
    Number(Number),
    String(String),
    Array(Vec<Json>),
    Object(Map),
}

pub type Map = BTreeMap<String, Json>;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{message} at byte {offset}")]
pub struct ParseError {
    pub message: String,
    pub offset: usize,
}

/// serde_json's nesting limit: deeper input is refused rather than
/// overflowing the stack.
const MAX_DEPTH: usize = 128;

impl Json {
    /// Parses one JSON document (surrounded by optional whitespace).
    pub fn parse(text: &[u8]) -> Result<Json, ParseError> {
        let mut p = Parser { text, pos: 0 };
        let value = p.value(0)?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(p.error("trailing characters"));
        }
        Ok(value)
    }

    /// An object from `(key, value)` pairs.
    pub fn object<K: Into<String>>(items: impl IntoIterator<Item = (K, Json)>) -> Json {
        Json::Object(items.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }

    /// Indented like `serde_json::to_string_pretty`.
    pub fn to_string_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(0)).expect("writing to a String");
        out
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        self.as_object()?.get(key)
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Json>> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// The serde_json value; numbers that `f64` cannot hold are rounded.
    /// For documents without such numbers (types, test assertions).
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Json::Null => serde_json::Value::Null,
            Json::Bool(b) => (*b).into(),
            Json::Number(n) => match n.as_i64() {
                Some(i) => i.into(),
                None => serde_json::Number::from_f64(n.as_f64())
                    .map_or(serde_json::Value::Null, serde_json::Value::Number),
            },
            Json::String(s) => s.as_str().into(),
            Json::Array(items) => items.iter().map(Json::to_serde).collect(),
            Json::Object(m) => m
                .iter()
                .map(|(k, v)| (k.clone(), v.to_serde()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }

    /// Compact when `indent` is `None`, else pretty-printed at that depth.
    fn write(&self, out: &mut String, indent: Option<usize>) -> fmt::Result {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => write!(out, "{b}")?,
            Json::Number(n) if n.as_f64().is_finite() => write!(out, "{n}")?,
            Json::Number(_) => out.push_str("null"),
            Json::String(s) => write_str(out, s),
            Json::Array(items) => {
                write_seq(out, '[', ']', items.iter(), indent, |out, item, ind| {
                    item.write(out, ind)
                })?
            }
            Json::Object(m) => write_seq(out, '{', '}', m.iter(), indent, |out, (k, v), ind| {
                write_str(out, k);
                out.push_str(if ind.is_some() { ": " } else { ":" });
                v.write(out, ind)
            })?,
        }
        Ok(())
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("strings serialise"));
}

fn write_seq<T>(
    out: &mut String,
    open: char,
    close: char,
    items: impl ExactSizeIterator<Item = T>,
    indent: Option<usize>,
    mut each: impl FnMut(&mut String, T, Option<usize>) -> fmt::Result,
) -> fmt::Result {
    out.push(open);
    let empty = items.len() == 0;
    let inner = indent.map(|i| i + 1);
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        if let Some(depth) = inner {
            out.push('\n');
            out.push_str(&"  ".repeat(depth));
        }
        each(out, item, inner)?;
    }
    if let (Some(depth), false) = (indent, empty) {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    }
    out.push(close);
    Ok(())
}

/// Compact, like `serde_json::to_string`.
impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(&mut out, None)?;
        f.write_str(&out)
    }
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ParseError {
        ParseError {
            message: message.to_string(),
            offset: self.pos,
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.text.get(self.pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn keyword(&mut self, word: &str, value: Json) -> Result<Json, ParseError> {
        if self.text[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("expected value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.skip_ws();
        match self.text.get(self.pos) {
            None => Err(self.error("unexpected end of input")),
            Some(b'n') => self.keyword("null", Json::Null),
            Some(b't') => self.keyword("true", Json::Bool(true)),
            Some(b'f') => self.keyword("false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'[') => self.array(depth + 1),
            Some(b'{') => self.object(depth + 1),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected value")),
        }
    }

    fn enter(&self, depth: usize) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.error("recursion limit exceeded"));
        }
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.text.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.text.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut map = Map::new();
        self.skip_ws();
        if self.text.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Json::Object(map));
        }
        loop {
            self.skip_ws();
            if self.text.get(self.pos) != Some(&b'"') {
                return Err(self.error("expected an object key"));
            }
            let key = self.string()?;
            self.skip_ws();
            if self.text.get(self.pos) != Some(&b':') {
                return Err(self.error("expected `:`"));
            }
            self.pos += 1;
            let value = self.value(depth)?;
            map.insert(key, value);
            self.skip_ws();
            match self.text.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(map));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    /// Finds the closing quote, then lets serde_json unescape (and
    /// validate) the literal.
    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        let mut i = start + 1;
        loop {
            match self.text.get(i) {
                None => return Err(self.error("unterminated string")),
                Some(b'\\') => i += 2,
                Some(b'"') => break,
                Some(_) => i += 1,
            }
        }
        let literal = &self.text[start..=i];
        let s = serde_json::from_slice(literal).map_err(|e| self.error(&format!("{e}")))?;
        self.pos = i + 1;
        Ok(s)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, read exactly.
    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let from = p.pos;
            while p.text.get(p.pos).is_some_and(u8::is_ascii_digit) {
                p.pos += 1;
            }
            p.pos - from
        };
        if self.text.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let leading_zero = self.text.get(self.pos) == Some(&b'0');
        let int_digits = digits(self);
        if int_digits == 0 || (leading_zero && int_digits > 1) {
            return Err(self.error("invalid number"));
        }
        if self.text.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if matches!(self.text.get(self.pos), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.text.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("invalid number"));
            }
        }
        let text = std::str::from_utf8(&self.text[start..self.pos]).expect("ASCII digits");
        Number::parse(text)
            .map(Json::Number)
            .ok_or_else(|| self.error("number out of range"))
    }
}

impl From<serde_json::Value> for Json {
    fn from(v: serde_json::Value) -> Json {
        match v {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(b),
            serde_json::Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => Json::Number(Number::Int(i)),
                (_, Some(u)) => Json::Number(Number::from(u)),
                _ => Json::Number(Number::from_f64(n.as_f64().unwrap_or(f64::NAN))),
            },
            serde_json::Value::String(s) => Json::String(s),
            serde_json::Value::Array(items) => items.into_iter().map(Json::from).collect(),
            serde_json::Value::Object(m) => m.into_iter().map(|(k, v)| (k, v.into())).collect(),
        }
    }
}

/// A value as untyped JSON (what state stores and `jsonencode` writes):
/// unknowns, which state never holds, and infinities become `null`.
impl From<&Value> for Json {
    fn from(v: &Value) -> Json {
        match v {
            Value::Null(_) | Value::Unknown(_) => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) if n.as_f64().is_finite() => Json::Number(n.clone()),
            Value::Number(_) => Json::Null,
            Value::String(s) => Json::String(s.clone()),
            Value::List(items) => items.iter().map(Json::from).collect(),
            Value::Map(m) => m
                .iter()
                .map(|(k, x)| (k.to_string(), Json::from(x)))
                .collect(),
        }
    }
}

/// The value a JSON document stands for, untyped (`jsondecode`).
impl From<&Json> for Value {
    fn from(j: &Json) -> Value {
        match j {
            Json::Null => Value::null(),
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::String(s) => Value::String(s.clone()),
            Json::Array(items) => Value::List(items.iter().map(Value::from).collect()),
            Json::Object(m) => Value::Map(m.iter().map(|(k, x)| (k.clone(), x.into())).collect()),
        }
    }
}

impl From<Number> for Json {
    fn from(n: Number) -> Json {
        Json::Number(n)
    }
}

impl From<i64> for Json {
    fn from(i: i64) -> Json {
        Json::Number(Number::Int(i))
    }
}

impl From<u64> for Json {
    fn from(u: u64) -> Json {
        Json::Number(Number::from(u))
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Json {
        Json::Bool(b)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::String(s.to_string())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::String(s)
    }
}

impl From<&[&str]> for Json {
    fn from(items: &[&str]) -> Json {
        items.iter().map(|s| Json::from(*s)).collect()
    }
}

impl From<Vec<Json>> for Json {
    fn from(items: Vec<Json>) -> Json {
        Json::Array(items)
    }
}

impl From<Map> for Json {
    fn from(m: Map) -> Json {
        Json::Object(m)
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(v: Option<T>) -> Json {
        v.map_or(Json::Null, Into::into)
    }
}

impl FromIterator<Json> for Json {
    fn from_iter<I: IntoIterator<Item = Json>>(iter: I) -> Json {
        Json::Array(iter.into_iter().collect())
    }
}

impl FromIterator<(String, Json)> for Json {
    fn from_iter<I: IntoIterator<Item = (String, Json)>>(iter: I) -> Json {
        Json::Object(iter.into_iter().collect())
    }
}

/// Missing keys and indexes read as `null`, as with `serde_json::Value`.
impl std::ops::Index<&str> for Json {
    type Output = Json;
    fn index(&self, key: &str) -> &Json {
        static NULL: Json = Json::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

impl std::ops::Index<usize> for Json {
    type Output = Json;
    fn index(&self, i: usize) -> &Json {
        static NULL: Json = Json::Null;
        self.as_array().and_then(|a| a.get(i)).unwrap_or(&NULL)
    }
}

/// Compares with a serde_json value, for assertions written with `json!`.
impl PartialEq<serde_json::Value> for Json {
    fn eq(&self, other: &serde_json::Value) -> bool {
        use serde_json::Value as S;
        match (self, other) {
            (Json::Null, S::Null) => true,
            (Json::Bool(a), S::Bool(b)) => a == b,
            (Json::Number(a), S::Number(b)) => match (b.as_i64(), b.as_u64(), b.as_f64()) {
                (Some(i), _, _) => a.as_i64() == Some(i),
                (_, Some(u), _) => *a == Number::from(u),
                (_, _, Some(f)) => *a == Number::from_f64(f),
                _ => false,
            },
            (Json::String(a), S::String(b)) => a == b,
            (Json::Array(a), S::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            (Json::Object(a), S::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, x)| b.get(k).is_some_and(|y| x == y))
            }
            _ => false,
        }
    }
}

impl PartialEq<&str> for Json {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<bool> for Json {
    fn eq(&self, other: &bool) -> bool {
        *self == Json::Bool(*other)
    }
}

impl PartialEq<i64> for Json {
    fn eq(&self, other: &i64) -> bool {
        matches!(self, Json::Number(n) if n.as_i64() == Some(*other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn numbers_keep_every_digit_both_ways() {
        let text = r#"{"big":12345678901234567890123,"neg":-12345678901234567890123,"u":18446744073709551615,"d":0.1000000000000000000001,"e":1.5e3,"f":2.5}"#;
        let j = Json::parse(text.as_bytes()).unwrap();
        assert_eq!(
            j.to_string(),
            r#"{"big":12345678901234567890123,"d":0.1000000000000000000001,"e":1500,"f":2.5,"neg":-12345678901234567890123,"u":18446744073709551615}"#
        );
        assert_eq!(
            j["big"],
            Json::Number(Number::parse("12345678901234567890123").unwrap())
        );
    }

    #[test]
    fn output_matches_serde_json() {
        let v = json!({"a": [1, "x\"\u{1}é", null, true], "b": {}, "c": [], "d": {"e": -2.5}});
        let j = Json::from(v.clone());
        assert_eq!(j.to_string(), serde_json::to_string(&v).unwrap());
        assert_eq!(
            j.to_string_pretty(),
            serde_json::to_string_pretty(&v).unwrap()
        );
        assert_eq!(Json::parse(j.to_string().as_bytes()).unwrap(), j);
    }

    #[test]
    fn malformed_input_is_refused() {
        for bad in [
            "", "01", "1.", ".5", "-", "1e", "+1", "[1,]", "{\"a\"}", "{a:1}", "\"\\x\"", "\"a",
            "nul", "[1] 2", "NaN", "1e999999",
        ] {
            assert!(Json::parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(Json::parse(deep.as_bytes()).is_err());
        assert_eq!(
            Json::parse(b" [ 1 , {\"a\" : null} ] ").unwrap(),
            json!([1, {"a": null}])
        );
    }

    fn arb_json() -> impl Strategy<Value = Json> {
        let number = prop_oneof![
            any::<i64>().prop_map(Number::Int),
            (any::<i64>(), 0u32..40)
                .prop_map(|(m, s)| { Number::parse(&format!("{m}e-{s}")).expect("a decimal") }),
            "[1-9][0-9]{0,60}".prop_map(|d| Number::parse(&d).expect("digits")),
        ];
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            number.prop_map(Json::Number),
            any::<String>().prop_map(Json::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..6).prop_map(Json::Object),
            ]
        })
    }

    proptest! {
        #[test]
        fn written_json_parses_back_identically(j in arb_json()) {
            prop_assert_eq!(Json::parse(j.to_string().as_bytes()).unwrap(), j.clone());
            prop_assert_eq!(Json::parse(j.to_string_pretty().as_bytes()).unwrap(), j.clone());
            // And serde_json reads what we write.
            prop_assert!(serde_json::from_str::<serde_json::Value>(&j.to_string()).is_ok());
        }
    }
}
