//! The order cty keeps a set's elements in, which is the order Terraform
//! iterates and draws them in: strings and numbers by value, booleans
//! false first, anything else by the bytes of cty's set hash string (an
//! object is `<` then each attribute's hash string and `;` by attribute
//! name, then `>`; null is `~`, unknown `?`; a number is Go's `%.10g` of
//! it, a string Go's `%q`), unknown elements after known ones and null
//! elements last. The language's sets (`toset`, the set functions) and the
//! plan renderer both use it.

use crate::types::Type;
use crate::value::Value;
use std::cmp::Ordering;

/// `items` in cty's set order.
pub fn sorted(mut items: Vec<&Value>) -> Vec<&Value> {
    items.sort_by(|a, b| compare(a, b));
    items
}

/// cty's `Less` for two elements of one set.
pub fn compare(a: &Value, b: &Value) -> Ordering {
    let rank = |v: &Value| match v {
        Value::Null(_) => 2,
        Value::Unknown(_) => 1,
        _ => 0,
    };
    match (a, b) {
        _ if rank(a) != 0 || rank(b) != 0 => rank(a).cmp(&rank(b)),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => x.compare(y).unwrap_or(Ordering::Equal),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => hash_string(a).cmp(&hash_string(b)),
    }
}

/// cty's set hash string of `v`.
pub fn hash_string(v: &Value) -> String {
    let mut s = String::new();
    append(v, &mut s);
    s
}

fn append(v: &Value, s: &mut String) {
    match v {
        Value::Null(_) => s.push('~'),
        Value::Unknown(_) => s.push('?'),
        Value::Bool(b) => s.push(if *b { 'T' } else { 'F' }),
        Value::Number(n) => s.push_str(&go_g10(&n.to_string())),
        Value::String(x) => go_quote(x, s),
        Value::List(l) => {
            let tuple = !matches!(l.ty(), Some(Type::List(_) | Type::Set(_)));
            s.push(if tuple { '<' } else { '[' });
            for x in l.iter() {
                append(x, s);
                s.push(';');
            }
            s.push(if tuple { '>' } else { ']' });
        }
        Value::Map(m) if matches!(m.ty(), Some(Type::Map(_))) => {
            s.push('{');
            for (k, x) in m.iter() {
                go_quote(k, s);
                s.push(':');
                append(x, s);
                s.push(';');
            }
            s.push('}');
        }
        Value::Map(m) => {
            s.push('<');
            for x in m.values() {
                append(x, s);
                s.push(';');
            }
            s.push('>');
        }
    }
}

/// Go's `%.10g` of a number given as plain decimal text (`-12.5`,
/// `12345678901`): ten significant digits (the eleventh rounds half up),
/// an exponent form below 1e-4 and from 1e10, trailing zeros dropped.
fn go_g10(text: &str) -> String {
    let (neg, text) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let all: String = format!("{int}{frac}");
    let Some(first) = all.find(|c: char| c != '0') else {
        return "0".to_string();
    };
    // Scientific exponent of the first significant digit.
    let mut exp = int.len() as i64 - 1 - first as i64;
    let mut digits: Vec<u8> = all[first..].bytes().map(|b| b - b'0').collect();
    if digits.len() > 10 {
        let round_up = digits[10] >= 5;
        digits.truncate(10);
        if round_up {
            let mut i = 9;
            loop {
                if digits[i] == 9 {
                    digits[i] = 0;
                    if i == 0 {
                        digits.insert(0, 1);
                        digits.truncate(10);
                        exp += 1;
                        break;
                    }
                    i -= 1;
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
    }
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    let d: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
    let body = if !(-4..10).contains(&exp) {
        let mantissa = if d.len() > 1 {
            format!("{}.{}", &d[..1], &d[1..])
        } else {
            d
        };
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else if exp < 0 {
        format!("0.{}{d}", "0".repeat((-exp - 1) as usize))
    } else {
        let point = exp as usize + 1;
        if d.len() <= point {
            format!("{d}{}", "0".repeat(point - d.len()))
        } else {
            format!("{}.{}", &d[..point], &d[point..])
        }
    };
    if neg { format!("-{body}") } else { body }
}

/// Go's `%q` of a string: Go's escapes, printable characters as they are.
fn go_quote(x: &str, s: &mut String) {
    s.push('"');
    for c in x.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\u{7}' => s.push_str("\\a"),
            '\u{8}' => s.push_str("\\b"),
            '\u{c}' => s.push_str("\\f"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\t' => s.push_str("\\t"),
            '\u{b}' => s.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => s.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => {
                if (c as u32) <= 0xffff {
                    s.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    s.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => s.push(c),
        }
    }
    s.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_sort_by_their_hash_strings_and_primitives_by_value() {
        let rule = |port: i64, protocol: Value| {
            Value::object([("port", Value::int(port)), ("protocol", protocol)])
        };
        let (tcp, bare) = (rule(80, Value::from("tcp")), rule(2222, Value::null()));
        assert_eq!(hash_string(&bare), "<2222;~;>");
        assert_eq!(sorted(vec![&tcp, &bare]), vec![&bare, &tcp]);
        let (n2, n10) = (Value::int(2), Value::int(10));
        assert_eq!(
            sorted(vec![&n10, &Value::null(), &n2]),
            vec![&n2, &n10, &Value::null()]
        );
    }

    #[test]
    fn numbers_hash_as_go_s_ten_significant_digits() {
        for (plain, go) in [
            ("0", "0"),
            ("2222", "2222"),
            ("-2.5", "-2.5"),
            ("1000000", "1000000"),
            ("9999999999", "9999999999"),
            ("12345678901", "1.23456789e+10"),
            ("99999999999", "1e+11"),
            ("0.0001", "0.0001"),
            ("0.00001234", "1.234e-05"),
            ("3.14159265358979", "3.141592654"),
            ("9007199254740993", "9.007199255e+15"),
        ] {
            assert_eq!(go_g10(plain), go, "{plain}");
        }
    }

    #[test]
    fn strings_hash_as_go_quotes_them() {
        let mut s = String::new();
        go_quote("a\"b\\c\n\u{1}é", &mut s);
        assert_eq!(s, r#""a\"b\\c\n\x01é""#);
    }
}
