//! Objects and outputs of a state as `terraform show` and `state show`
//! print them: four spaces a level, attributes that are null left out, map
//! keys quoted and their `=` aligned.

use fleetform_shared::value::Value;

/// An object's attributes as the body of its resource block, `{` to `}`.
pub fn object_body(value: &Value) -> String {
    let Some(attrs) = value.as_map() else {
        return show_value(value, 0);
    };
    let shown: Vec<(&fleetform_shared::name::Name, &Value)> =
        attrs.iter().filter(|(_, v)| !v.is_null()).collect();
    let width = shown.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = String::from("{\n");
    for (k, v) in shown {
        out.push_str(&format!("    {k:<width$} = {}\n", show_value(v, 4)));
    }
    out.push('}');
    out
}

/// A value at `indent` columns: collections over several lines, their
/// items four columns further in.
pub fn show_value(v: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent + 4);
    let close = " ".repeat(indent);
    match v {
        Value::List(items) if !items.is_empty() => {
            let body: String = items
                .iter()
                .map(|i| format!("{pad}{},\n", show_value(i, indent + 4)))
                .collect();
            format!("[\n{body}{close}]")
        }
        Value::Map(m) if !m.is_empty() => {
            let keys: Vec<String> = m.keys().map(|k| quoted(k)).collect();
            let width = keys.iter().map(|k| k.chars().count()).max().unwrap_or(0);
            let body: String = keys
                .iter()
                .zip(m.values())
                .map(|(k, x)| format!("{pad}{k:<width$} = {}\n", show_value(x, indent + 4)))
                .collect();
            format!("{{\n{body}{close}}}")
        }
        Value::List(_) => "[]".into(),
        Value::Map(_) => "{}".into(),
        other => fleetform_shared::plan::render_value(other),
    }
}

/// Values carry no type here, so every key is written as a map's is: an
/// object-typed value (a `terraform_data` input) shows quoted keys where
/// Terraform writes bare names.
fn quoted(k: &str) -> String {
    serde_json::to_string(k).unwrap_or_else(|_| format!("\"{k}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_are_left_out_and_levels_are_four_spaces() {
        let v = Value::object([
            ("id", Value::from("x")),
            ("size", Value::null()),
            (
                "tags",
                Value::object([("env", Value::from("dev")), ("two words", Value::from("y"))]),
            ),
            ("list", Value::tuple(vec![Value::int(1), Value::null()])),
        ]);
        assert_eq!(
            object_body(&v),
            "{\n    id   = \"x\"\n    list = [\n        1,\n        null,\n    ]\n    tags = {\n        \"env\"       = \"dev\"\n        \"two words\" = \"y\"\n    }\n}"
        );
    }
}
