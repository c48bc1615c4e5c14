//! The order cty keeps a set's elements in, which is the order Terraform
//! draws them in: strings and numbers by value, booleans false first,
//! anything else by the bytes of cty's set hash string (an object is
//! `<` then each attribute's hash string and `;` by attribute name, then
//! `>`; null is `~`, unknown `?`), unknown and null elements last.

use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::cmp::Ordering;

/// `items` in cty's set order.
pub fn sorted(mut items: Vec<&Value>) -> Vec<&Value> {
    items.sort_by(|a, b| compare(a, b));
    items
}

fn compare(a: &Value, b: &Value) -> Ordering {
    let rank = |v: &Value| match v {
        Value::Null => 2,
        Value::Unknown => 1,
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

/// cty's set hash string of `v`. Numbers are written as cty writes them
/// (`big.Float`'s ten significant digits) for the integers and plain
/// decimals plans hold; others as fleetform prints them.
pub fn hash_string(v: &Value) -> String {
    let mut s = String::new();
    append(v, &mut s);
    s
}

fn append(v: &Value, s: &mut String) {
    match v {
        Value::Null => s.push('~'),
        Value::Unknown => s.push('?'),
        Value::Bool(b) => s.push(if *b { 'T' } else { 'F' }),
        Value::Number(n) => s.push_str(&n.to_string()),
        Value::String(x) => s.push_str(&serde_json::to_string(x).unwrap_or_default()),
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
                s.push_str(&serde_json::to_string(k).unwrap_or_default());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_sort_by_their_hash_strings_and_primitives_by_value() {
        let rule = |port: i64, protocol: Value| {
            Value::object([("port", Value::int(port)), ("protocol", protocol)])
        };
        let (tcp, bare) = (rule(80, Value::from("tcp")), rule(2222, Value::Null));
        assert_eq!(hash_string(&bare), "<2222;~;>");
        assert_eq!(sorted(vec![&tcp, &bare]), vec![&bare, &tcp]);
        let (n2, n10) = (Value::int(2), Value::int(10));
        assert_eq!(
            sorted(vec![&n10, &Value::Null, &n2]),
            vec![&n2, &n10, &Value::Null]
        );
    }
}
