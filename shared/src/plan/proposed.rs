//! The proposed new state: configuration merged with the computed values of
//! the prior object, so providers need not reimplement the merge
//! (docs/planning/change-lifecycle.md).

use crate::schema::{Block, Nesting};
use crate::value::Value;

/// Merges `config` with `prior` under `schema`: non-null configuration wins;
/// a computed attribute left null in configuration keeps its prior value.
/// Returns `Null` when `config` is null (a delete).
pub fn proposed_new_state(schema: &Block, prior: &Value, config: &Value) -> Value {
    if config.is_null() {
        return Value::null();
    }
    if config.is_unknown() {
        return Value::unknown();
    }
    let mut out = crate::value::ValueMap::new();
    for (name, attr) in &schema.attributes {
        let cfg = config.get_attr(name);
        let v = if attr.computed && cfg.is_null() {
            prior.get_attr(name).clone()
        } else {
            cfg.clone()
        };
        out.insert(name.clone(), v);
    }
    for (name, nb) in &schema.block_types {
        let cfg = config.get_attr(name);
        let pr = prior.get_attr(name);
        let v = match (nb.nesting, cfg) {
            (Nesting::Single | Nesting::Group, Value::Map(_)) => {
                proposed_new_state(&nb.block, pr, cfg)
            }
            (Nesting::List, Value::List(items)) => Value::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let p = match pr {
                            Value::List(ps) => ps.get(i).cloned().unwrap_or(Value::null()),
                            _ => Value::null(),
                        };
                        proposed_new_state(&nb.block, &p, c)
                    })
                    .collect(),
            ),
            (Nesting::Map, Value::Map(items)) => Value::Map(
                items
                    .iter()
                    .map(|(k, c)| (k.clone(), proposed_new_state(&nb.block, pr.get_attr(k), c)))
                    .collect(),
            ),
            // Set elements have no identity to match prior ones by; nested
            // computed attributes in sets are left to the provider.
            _ => cfg.clone(),
        };
        out.insert(name.clone(), v);
    }
    Value::Map(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Attribute;
    use crate::types::Type;

    #[test]
    fn computed_attributes_keep_prior_values() {
        let mut b = Block::default();
        b.attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        b.attributes
            .insert("name".into(), Attribute::new(Type::String).required());
        b.attributes.insert(
            "size".into(),
            Attribute::new(Type::Number).optional().computed(),
        );
        let prior = Value::object([
            ("id", Value::from("x")),
            ("name", Value::from("a")),
            ("size", Value::int(3)),
        ]);
        let config = Value::object([
            ("id", Value::null()),
            ("name", Value::from("b")),
            ("size", Value::null()),
        ]);
        let p = proposed_new_state(&b, &prior, &config);
        assert_eq!(
            p,
            Value::object([
                ("id", Value::from("x")),
                ("name", Value::from("b")),
                ("size", Value::int(3))
            ])
        );
        assert_eq!(
            proposed_new_state(&b, &prior, &Value::null()),
            Value::null()
        );
        let create = proposed_new_state(&b, &Value::null(), &config);
        assert_eq!(create.get_attr("id"), &Value::null());
    }
}
