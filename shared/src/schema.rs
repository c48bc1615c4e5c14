//! Provider schemas: the shape of provider, resource and data source
//! configuration, as providers report it through `GetProviderSchema`.

use crate::types::Type;
use crate::value::AttrPath;
use crate::value::{PathStep, Value};
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
    /// Terraform 1.11's write-only attribute: its configured value goes to
    /// the provider but never into plans or state.
    #[serde(default)]
    pub write_only: bool,
    /// For a protocol 6 nested attribute (whose `ty` is the object type its
    /// attributes imply): those attributes, which say what a type cannot,
    /// which of them are sensitive.
    #[serde(default)]
    pub nested: Option<NestedAttributes>,
}

/// The attributes inside a protocol 6 nested attribute, and how its
/// objects are nested (`Group` does not occur).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NestedAttributes {
    pub nesting: Nesting,
    pub attributes: BTreeMap<String, Attribute>,
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
            write_only: false,
            nested: None,
        }
    }

    /// Whether this attribute, or one nested in it, is write-only.
    pub fn has_write_only(&self) -> bool {
        self.write_only
            || self
                .nested
                .as_ref()
                .is_some_and(|n| n.attributes.values().any(Attribute::has_write_only))
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
    /// The value of this block with nothing set: attributes null, nested
    /// blocks empty (a group block: its own empty value).
    pub fn empty_value(&self) -> crate::value::Value {
        use crate::value::Value;
        let mut out: crate::value::ValueMap = self
            .attributes
            .keys()
            .map(|k| (k.clone(), Value::null()))
            .collect();
        for (name, nb) in &self.block_types {
            out.insert(
                name.clone(),
                match nb.nesting {
                    Nesting::List | Nesting::Set => Value::tuple(Vec::new()),
                    Nesting::Map => Value::Map(Default::default()),
                    Nesting::Group => nb.block.empty_value(),
                    Nesting::Single => Value::null(),
                },
            );
        }
        Value::Map(out)
    }

    /// The cty object type that values conforming to this block have.
    pub fn implied_type(&self) -> Type {
        implied_object(
            self.attributes.iter().map(|(k, a)| (k, a.ty.clone())),
            self.block_types
                .iter()
                .map(|(k, nb)| (k, nb.nesting, nb.block.implied_type())),
        )
    }
}

/// The object type of a block with these attributes (name, type) and
/// nested block types (name, nesting, the nested block's object type).
pub fn implied_object<'a>(
    attributes: impl Iterator<Item = (&'a String, Type)>,
    blocks: impl Iterator<Item = (&'a String, Nesting, Type)>,
) -> Type {
    let mut attrs: BTreeMap<String, Type> = attributes.map(|(k, t)| (k.clone(), t)).collect();
    for (name, nesting, inner) in blocks {
        let ty = match nesting {
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

impl Block {
    /// Paths of the attributes marked sensitive in `value`, an object of
    /// this block's type: in this block, in nested attributes and in nested
    /// blocks of every nesting mode (one path per object present, by index
    /// or map key). Attributes are marked even when null, as Terraform does.
    pub fn sensitive_paths(&self, value: &Value) -> Vec<AttrPath> {
        let mut out = attribute_paths(&self.attributes, value);
        for (name, nb) in &self.block_types {
            for (element, v) in objects(nb.nesting, value.get_attr(name)) {
                for p in nb.block.sensitive_paths(v) {
                    out.push(nested_path(name, &element, p));
                }
            }
        }
        out
    }
}

/// The sensitive attributes of `value`, an object with attributes `attrs`,
/// and those inside its nested attributes.
fn attribute_paths(attrs: &BTreeMap<String, Attribute>, value: &Value) -> Vec<AttrPath> {
    let mut out = Vec::new();
    for (name, a) in attrs {
        if a.sensitive {
            out.push(vec![PathStep::Key(name.clone())]);
            continue;
        }
        let Some(nested) = &a.nested else {
            continue;
        };
        for (element, v) in objects(nested.nesting, value.get_attr(name)) {
            for p in attribute_paths(&nested.attributes, v) {
                out.push(nested_path(name, &element, p));
            }
        }
    }
    out
}

/// The objects a nested block or attribute holds, each with the step to it
/// (none for a single object).
fn objects(nesting: Nesting, v: &Value) -> Vec<(Option<PathStep>, &Value)> {
    match (nesting, v) {
        (Nesting::Single | Nesting::Group, v @ Value::Map(_)) => vec![(None, v)],
        (Nesting::List | Nesting::Set, Value::List(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (Some(PathStep::Index(i as i64)), v))
            .collect(),
        (Nesting::Map, Value::Map(items)) => items
            .iter()
            .map(|(k, v)| (Some(PathStep::Key(k.to_string())), v))
            .collect(),
        _ => Vec::new(),
    }
}

fn nested_path(name: &str, element: &Option<PathStep>, rest: AttrPath) -> AttrPath {
    let mut path = vec![PathStep::Key(name.to_string())];
    path.extend(element.clone());
    path.extend(rest);
    path
}

/// Everything one provider reports about itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderSchema {
    pub provider: Schema,
    pub resources: BTreeMap<String, Schema>,
    pub data_sources: BTreeMap<String, Schema>,
    /// Ephemeral resource types (Terraform 1.10): opened for a walk, never
    /// recorded. Schemas cached before they were known read as having none.
    #[serde(default)]
    pub ephemeral_resources: BTreeMap<String, Schema>,
    pub capabilities: ServerCapabilities,
    /// The functions the provider offers (`provider::NAME::FUNC`), by name.
    /// Schemas cached before functions were known read as having none.
    #[serde(default)]
    pub functions: BTreeMap<String, crate::function::FunctionSignature>,
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
    #[test]
    fn sensitive_paths_reach_into_nested_blocks_and_nested_attributes() {
        let mut inner = Block::default();
        inner
            .attributes
            .insert("secret".into(), Attribute::new(Type::String).sensitive());
        inner
            .attributes
            .insert("plain".into(), Attribute::new(Type::String));
        let mut b = Block::default();
        b.attributes
            .insert("token".into(), Attribute::new(Type::String).sensitive());
        for (name, nesting) in [("one", Nesting::Single), ("many", Nesting::List)] {
            b.block_types.insert(
                name.into(),
                NestedBlock {
                    nesting,
                    block: inner.clone(),
                    min_items: 0,
                    max_items: 0,
                },
            );
        }
        // A protocol 6 nested attribute: a map of objects like `inner`'s.
        let mut endpoints = Attribute::new(Type::map(inner.implied_type()));
        endpoints.nested = Some(NestedAttributes {
            nesting: Nesting::Map,
            attributes: inner.attributes.clone(),
        });
        b.attributes.insert("endpoints".into(), endpoints);
        let item = Value::object([("secret", Value::from("s")), ("plain", Value::from("p"))]);
        let v = Value::object([
            ("token", Value::null()),
            ("endpoints", Value::object([("e1", item.clone())])),
            ("one", item.clone()),
            ("many", Value::tuple(vec![item.clone(), item])),
        ]);
        let k = |s: &str| PathStep::Key(s.into());
        let mut paths = b.sensitive_paths(&v);
        paths.sort();
        assert_eq!(
            paths,
            vec![
                vec![k("endpoints"), k("e1"), k("secret")],
                vec![k("many"), PathStep::Index(0), k("secret")],
                vec![k("many"), PathStep::Index(1), k("secret")],
                vec![k("one"), k("secret")],
                vec![k("token")],
            ]
        );
    }
}
