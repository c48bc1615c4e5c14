//! Configuration written for an imported object (`plan
//! -generate-config-out`), following Terraform's rules: the arguments of
//! the resource type's schema with the object's values, computed-only
//! attributes left out, sensitive ones written `null`, then the nested
//! blocks. The text is not aligned: callers format it.

use crate::schema::{Attribute, Block, Nesting};
use crate::value::Value;
use std::fmt::Write;

/// What the generated block's arguments decode to: the object with what
/// the block leaves out (computed-only and sensitive attributes) null.
/// Planning the import with this as its configuration plans what applying
/// the written file would.
pub fn generated_config(schema: &Block, object: &Value) -> Value {
    let mut out = crate::value::ValueMap::new();
    for (name, attr) in &schema.attributes {
        let v = object.get_attr(name);
        let kept = if !written(attr) || attr.sensitive {
            Value::null()
        } else {
            nested_config(attr, v)
        };
        out.insert(name.clone(), kept);
    }
    for (name, nb) in &schema.block_types {
        let v = object.get_attr(name);
        let kept = match (nb.nesting, v) {
            (_, Value::Null(_)) => Value::null(),
            (Nesting::Single | Nesting::Group, v) => generated_config(&nb.block, v),
            (_, Value::List(items)) => Value::List(
                items
                    .iter()
                    .map(|i| generated_config(&nb.block, i))
                    .collect(),
            ),
            (Nesting::Map, Value::Map(m)) => Value::Map(
                m.iter()
                    .map(|(k, i)| (k.clone(), generated_config(&nb.block, i)))
                    .collect(),
            ),
            (_, other) => other.clone(),
        };
        out.insert(name.clone(), kept);
    }
    Value::Map(out)
}

/// An argument the configuration can set (not computed only).
fn written(attr: &Attribute) -> bool {
    attr.required || attr.optional
}

/// A nested attribute's value with its own computed-only attributes null.
fn nested_config(attr: &Attribute, v: &Value) -> Value {
    let Some(nested) = &attr.nested else {
        return v.clone();
    };
    let one = |o: &Value| match o {
        Value::Map(m) => Value::Map(
            m.iter()
                .map(|(k, x)| {
                    let keep = nested
                        .attributes
                        .get(k.as_str())
                        .is_none_or(|a| written(a) && !a.sensitive);
                    (k.clone(), if keep { x.clone() } else { Value::null() })
                })
                .collect(),
        ),
        other => other.clone(),
    };
    match (nested.nesting, v) {
        (Nesting::List | Nesting::Set, Value::List(items)) => {
            Value::List(items.iter().map(one).collect())
        }
        (Nesting::Map, Value::Map(m)) => {
            Value::Map(m.iter().map(|(k, o)| (k.clone(), one(o))).collect())
        }
        _ => one(v),
    }
}

/// The resource block for `object`, imported from `id`, with the comment
/// Terraform puts above it ("fleetform" for "Terraform").
pub fn generated_block(
    type_name: &str,
    name: &str,
    id: &str,
    schema: &Block,
    object: &Value,
) -> String {
    let mut out = format!(
        "# __generated__ by fleetform from {}\nresource {} {} {{\n",
        quoted(id),
        quoted(type_name),
        quoted(name)
    );
    let config = generated_config(schema, object);
    write_body(&mut out, schema, &config, 1);
    out.push_str("}\n");
    out
}

fn write_body(out: &mut String, schema: &Block, config: &Value, depth: usize) {
    let pad = "  ".repeat(depth);
    for (name, attr) in schema.attributes.iter().filter(|(_, a)| written(a)) {
        let value = if attr.sensitive {
            "null # sensitive".to_string()
        } else {
            hcl(config.get_attr(name), depth)
        };
        let _ = writeln!(out, "{pad}{name} = {value}");
    }
    for (name, nb) in &schema.block_types {
        let mut block = |label: Option<&str>, v: &Value| {
            let label = label.map(|l| format!(" {}", quoted(l))).unwrap_or_default();
            let _ = writeln!(out, "{pad}{name}{label} {{");
            write_body(out, &nb.block, v, depth + 1);
            let _ = writeln!(out, "{pad}}}");
        };
        match config.get_attr(name) {
            Value::Null(_) => {}
            Value::List(items) => items.iter().for_each(|i| block(None, i)),
            Value::Map(m) if nb.nesting == Nesting::Map => {
                m.iter().for_each(|(k, i)| block(Some(k), i))
            }
            v => block(None, v),
        }
    }
}

/// A value in HCL syntax, as Terraform's `hclwrite` writes one: lists on
/// one line, objects one attribute a line.
fn hcl(v: &Value, depth: usize) -> String {
    match v {
        Value::Null(_) | Value::Unknown(_) => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quoted(s),
        Value::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| hcl(i, depth))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Map(m) if m.is_empty() => "{}".into(),
        Value::Map(m) => {
            let pad = "  ".repeat(depth + 1);
            let mut s = "{\n".to_string();
            for (k, x) in m.iter() {
                let _ = writeln!(s, "{pad}{} = {}", key(k), hcl(x, depth + 1));
            }
            s.push_str(&"  ".repeat(depth));
            s.push('}');
            s
        }
    }
}

/// An object key: bare when it is an identifier, quoted otherwise.
fn key(k: &str) -> String {
    let mut chars = k.chars();
    let ident = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ident { k.to_string() } else { quoted(k) }
}

/// A quoted HCL string: JSON's escapes, and template sequences escaped so
/// that the text stays literal.
fn quoted(s: &str) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""));
    json.replace("${", "$${").replace("%{", "%%{")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::NestedBlock;
    use crate::types::Type;

    /// The schema of a `sim_object` with a block and a secret added.
    fn schema() -> Block {
        let mut b = Block::default();
        let attrs = [
            ("id", Attribute::new(Type::String).computed()),
            ("name", Attribute::new(Type::String).required()),
            ("note", Attribute::new(Type::String).optional()),
            (
                "secret",
                Attribute::new(Type::String).optional().sensitive(),
            ),
            ("size", Attribute::new(Type::Number).optional().computed()),
            (
                "tags",
                Attribute::new(Type::Map(Box::new(Type::String))).optional(),
            ),
        ];
        for (n, a) in attrs {
            b.attributes.insert(n.into(), a);
        }
        let mut rule = Block::default();
        rule.attributes
            .insert("port".into(), Attribute::new(Type::Number).required());
        rule.attributes
            .insert("uid".into(), Attribute::new(Type::String).computed());
        b.block_types.insert(
            "rule".into(),
            NestedBlock {
                nesting: Nesting::List,
                block: rule,
                min_items: 0,
                max_items: 0,
            },
        );
        b
    }

    fn object() -> Value {
        Value::object([
            ("id", Value::from("c9e4")),
            ("name", Value::from("a \"${x}\"")),
            ("note", Value::null()),
            ("secret", Value::from("hunter2")),
            ("size", Value::int(3)),
            (
                "tags",
                Value::object([("env", Value::from("test")), ("a b", Value::from("c"))]),
            ),
            (
                "rule",
                Value::tuple(vec![Value::object([
                    ("port", Value::int(80)),
                    ("uid", Value::from("u1")),
                ])]),
            ),
        ])
    }

    /// Terraform's rules: computed-only attributes out, optional nulls
    /// written `null`, sensitive values never written, blocks after the
    /// attributes, strings escaped so they stay literal.
    #[test]
    fn the_block_has_the_arguments_of_the_object() {
        assert_eq!(
            generated_block("sim_object", "g", "c9e4", &schema(), &object()),
            concat!(
                "# __generated__ by fleetform from \"c9e4\"\n",
                "resource \"sim_object\" \"g\" {\n",
                "  name = \"a \\\"$${x}\\\"\"\n",
                "  note = null\n",
                "  secret = null # sensitive\n",
                "  size = 3\n",
                "  tags = {\n",
                "    \"a b\" = \"c\"\n",
                "    env = \"test\"\n",
                "  }\n",
                "  rule {\n",
                "    port = 80\n",
                "  }\n",
                "}\n",
            )
        );
        let config = generated_config(&schema(), &object());
        assert_eq!(config.get_attr("id"), &Value::null());
        assert_eq!(config.get_attr("secret"), &Value::null());
        assert_eq!(config.get_attr("size"), &Value::int(3));
        assert_eq!(
            config.get_attr("rule"),
            &Value::tuple(vec![Value::object([
                ("port", Value::int(80)),
                ("uid", Value::null())
            ])])
        );
    }
}
