//! Provider schemas: the shape of provider, resource and data source
//! configuration, as providers report it through `GetProviderSchema`.

use crate::types::Type;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema of one resource type, data source or provider configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Schema {
    pub version: i64,
    pub block: Block,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Block {
    pub attributes: BTreeMap<String, Attribute>,
    pub block_types: BTreeMap<String, NestedBlock>,
    pub description: String,
    pub deprecated: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribute {
    pub ty: Type,
    pub description: String,
    pub required: bool,
    pub optional: bool,
    pub computed: bool,
    pub sensitive: bool,
    pub deprecated: bool,
}

impl Attribute {
    /// A convenience constructor for providers and tests.
    pub fn new(ty: Type) -> Attribute {
        Attribute {
            ty,
            description: String::new(),
            required: false,
            optional: false,
            computed: false,
            sensitive: false,
            deprecated: false,
        }
    }

    pub fn required(mut self) -> Attribute {
        self.required = true;
        self
    }

    pub fn optional(mut self) -> Attribute {
        self.optional = true;
        self
    }

    pub fn computed(mut self) -> Attribute {
        self.computed = true;
        self
    }

    pub fn sensitive(mut self) -> Attribute {
        self.sensitive = true;
        self
    }

    pub fn describe(mut self, text: &str) -> Attribute {
        self.description = text.to_string();
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Nesting {
    Single,
    Group,
    List,
    Set,
    Map,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NestedBlock {
    pub nesting: Nesting,
    pub block: Block,
    pub min_items: i64,
    pub max_items: i64,
}

impl Block {
    /// The cty object type that values conforming to this block have.
    pub fn implied_type(&self) -> Type {
        let mut attrs: BTreeMap<String, Type> = self
            .attributes
            .iter()
            .map(|(k, a)| (k.clone(), a.ty.clone()))
            .collect();
        for (name, nb) in &self.block_types {
            let inner = nb.block.implied_type();
            let ty = match nb.nesting {
                Nesting::Single | Nesting::Group => inner,
                Nesting::List => Type::list(inner),
                Nesting::Set => Type::set(inner),
                Nesting::Map => Type::map(inner),
            };
            attrs.insert(name.clone(), ty);
        }
        Type::Object {
            attrs,
            optional: Default::default(),
        }
    }
}

impl Block {
    /// Paths of the attributes marked sensitive, in this block and in
    /// single (or group) nested blocks.
    pub fn sensitive_paths(&self) -> Vec<crate::provider::AttrPath> {
        use crate::value::PathStep;
        let mut out: Vec<crate::provider::AttrPath> = self
            .attributes
            .iter()
            .filter(|(_, a)| a.sensitive)
            .map(|(k, _)| vec![PathStep::Key(k.clone())])
            .collect();
        for (name, nb) in &self.block_types {
            if matches!(nb.nesting, Nesting::Single | Nesting::Group) {
                for mut p in nb.block.sensitive_paths() {
                    p.insert(0, PathStep::Key(name.clone()));
                    out.push(p);
                }
            }
        }
        out
    }
}

/// Everything one provider reports about itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderSchema {
    pub provider: Schema,
    pub resources: BTreeMap<String, Schema>,
    pub data_sources: BTreeMap<String, Schema>,
    pub capabilities: ServerCapabilities,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCapabilities {
    pub plan_destroy: bool,
    pub get_provider_schema_optional: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implied_type_wraps_nested_blocks_by_nesting_mode() {
        let mut inner = Block::default();
        inner
            .attributes
            .insert("x".into(), Attribute::new(Type::String).optional());
        let mut b = Block::default();
        b.attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        b.block_types.insert(
            "rule".into(),
            NestedBlock {
                nesting: Nesting::List,
                block: inner,
                min_items: 0,
                max_items: 0,
            },
        );
        assert_eq!(
            b.implied_type(),
            Type::object([
                ("id", Type::String),
                ("rule", Type::list(Type::object([("x", Type::String)])))
            ])
        );
    }
}
