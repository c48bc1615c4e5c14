//! Conversion of values to a type constraint, with cty's implicit conversions
//! (number ↔ string, "true" → bool, tuple → list, object → map).

use super::ops::to_string;
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

/// Converts `value` to `ty`; the error is a cty-style message such as
/// `element "a": string required`. Null and unknown convert to any type.
pub fn convert(value: Value, ty: &Type) -> Result<Value, String> {
    match (value, ty) {
        (v @ (Value::Null | Value::Unknown), _) => Ok(v),
        (v, Type::Dynamic) => Ok(v),
        (v, Type::String) => match to_string(&v) {
            Some(s) => Ok(Value::String(s)),
            None => Err(format!("string required, but have {}", v.kind())),
        },
        (Value::Number(n), Type::Number) => Ok(Value::Number(n)),
        (Value::String(s), Type::Number) => fleetform_shared::value::Number::parse(&s)
            .map(Value::Number)
            .ok_or_else(|| format!("a number is required, but {s:?} is not a number")),
        (v, Type::Number) => Err(format!("number required, but have {}", v.kind())),
        (Value::Bool(b), Type::Bool) => Ok(Value::Bool(b)),
        (Value::String(s), Type::Bool) if s == "true" || s == "false" => {
            Ok(Value::Bool(s == "true"))
        }
        (v, Type::Bool) => Err(format!("bool required, but have {}", v.kind())),
        (Value::List(items), Type::List(elem)) => Ok(Value::List(convert_items(items, elem)?)),
        (Value::List(items), Type::Set(elem)) => {
            Ok(Value::List(set_items(convert_items(items, elem)?)))
        }
        (Value::List(items), Type::Tuple(types)) => {
            if items.len() != types.len() {
                return Err(format!(
                    "tuple required with {} elements, but have {}",
                    types.len(),
                    items.len()
                ));
            }
            items
                .into_iter()
                .zip(types)
                .enumerate()
                .map(|(i, (v, t))| convert(v, t).map_err(|e| format!("element {i}: {e}")))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::List)
        }
        (Value::Map(items), Type::Map(elem)) => items
            .into_iter()
            .map(|(k, v)| {
                let v = convert(v, elem).map_err(|e| format!("element {k:?}: {e}"))?;
                Ok((k, v))
            })
            .collect::<Result<BTreeMap<_, _>, String>>()
            .map(Value::Map),
        (Value::Map(mut items), Type::Object { attrs, optional }) => {
            let mut out = BTreeMap::new();
            for (name, t) in attrs {
                match items.remove(name) {
                    Some(v) => {
                        out.insert(
                            name.clone(),
                            convert(v, t).map_err(|e| format!("attribute {name:?}: {e}"))?,
                        );
                    }
                    None if optional.contains(name) => {
                        out.insert(name.clone(), Value::Null);
                    }
                    None => return Err(format!("attribute {name:?} is required")),
                }
            }
            Ok(Value::Map(out))
        }
        (v, ty) => Err(format!("{} required, but have {}", describe(ty), v.kind())),
    }
}

fn convert_items(items: Vec<Value>, elem: &Type) -> Result<Vec<Value>, String> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| convert(v, elem).map_err(|e| format!("element {i}: {e}")))
        .collect()
}

/// The elements of a set: duplicates removed, in the order cty iterates a
/// set. Values carry no type, so a set is a `Value::List`; this order is
/// what makes `toset(["b", "a"])` and a `set(string)` variable read back as
/// Terraform shows them.
///
/// As in cty: known values first, strings lexically (by bytes), numbers
/// numerically, `false` before `true`; then unknown values, then null.
/// Elements that are partly or wholly unknown are never merged (the unknown
/// may turn out equal to another element or not). cty orders lists and
/// objects by an internal hash, which is no contract; they keep their
/// first-seen order here, so results stay deterministic.
pub(crate) fn set_items(items: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for v in items {
        if !v.is_wholly_known() || !out.contains(&v) {
            out.push(v);
        }
    }
    // A stable sort on a total preorder: mixed kinds (only possible in a
    // set of `any`) group by kind rather than comparing as "equal" to each
    // other, which would not be transitive.
    out.sort_by(|a, b| set_rank(a).cmp(&set_rank(b)).then_with(|| set_cmp(a, b)));
    out
}

fn set_rank(v: &Value) -> u8 {
    match v {
        Value::Bool(_) => 0,
        Value::Number(_) => 1,
        Value::String(_) => 2,
        Value::List(_) | Value::Map(_) => 3,
        Value::Unknown => 4,
        Value::Null => 5,
    }
}

fn set_cmp(a: &Value, b: &Value) -> std::cmp::Ordering {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => x.compare(y).unwrap_or(std::cmp::Ordering::Equal),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => std::cmp::Ordering::Equal,
    }
}

/// How cty names a type in "X required" messages.
fn describe(ty: &Type) -> String {
    match ty {
        Type::List(e) => format!("list of {}", describe(e)),
        Type::Set(e) => format!("set of {}", describe(e)),
        Type::Map(e) => format!("map of {}", describe(e)),
        Type::Object { .. } => "object".into(),
        Type::Tuple(_) => "tuple".into(),
        Type::Dynamic => "any".into(),
        t => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_convert_like_cty() {
        assert_eq!(convert(Value::int(5), &Type::String), Ok(Value::from("5")));
        assert_eq!(
            convert(Value::from("2.5"), &Type::Number),
            Ok(Value::Number(fleetform_shared::Number::Float(2.5)))
        );
        assert_eq!(
            convert(Value::from("true"), &Type::Bool),
            Ok(Value::Bool(true))
        );
        assert!(convert(Value::from("x"), &Type::Number).is_err());
        assert!(convert(Value::List(vec![]), &Type::String).is_err());
        assert_eq!(convert(Value::Unknown, &Type::String), Ok(Value::Unknown));
    }

    #[test]
    fn collections_convert_elementwise_with_paths_in_errors() {
        let tags = Value::object([("a", Value::int(1)), ("b", Value::from("x"))]);
        assert_eq!(
            convert(tags, &Type::map(Type::String)),
            Ok(Value::object([
                ("a", Value::from("1")),
                ("b", Value::from("x"))
            ]))
        );
        let bad = Value::object([("a", Value::List(vec![]))]);
        assert_eq!(
            convert(bad, &Type::map(Type::String)),
            Err("element \"a\": string required, but have list".into())
        );
        let set = Value::List(vec![Value::from("a"), Value::from("a"), Value::int(1)]);
        assert_eq!(
            convert(set, &Type::set(Type::String)),
            Ok(Value::List(vec![Value::from("1"), Value::from("a")]))
        );
    }

    #[test]
    fn objects_fill_optional_attributes_and_drop_extras() {
        let mut ty = Type::object([("name", Type::String), ("size", Type::Number)]);
        if let Type::Object { optional, .. } = &mut ty {
            optional.insert("size".into());
        }
        let v = Value::object([("name", Value::from("a")), ("extra", Value::Bool(true))]);
        assert_eq!(
            convert(v, &ty),
            Ok(Value::object([
                ("name", Value::from("a")),
                ("size", Value::Null)
            ]))
        );
        assert_eq!(
            convert(Value::object([("size", Value::int(1))]), &ty),
            Err("attribute \"name\" is required".into())
        );
    }
}
