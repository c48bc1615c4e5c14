//! tfplugin6 `Schema` ↔ shared [`Schema`], [`Block`], [`Attribute`],
//! [`NestedBlock`] and [`ProviderSchema`].
//!
//! Attribute types travel as cty type JSON. Protocol 6 nested attributes
//! (`nested_type`) have no counterpart in the shared schema; they become the
//! equivalent cty object / collection type, as Terraform's implied type does.

use super::ConvertError;
use crate::tfplugin6::schema::nested_block::NestingMode as BlockNesting;
use crate::tfplugin6::schema::object::NestingMode as ObjectNesting;
use crate::tfplugin6::schema::{
    Attribute as ProtoAttribute, Block as ProtoBlock, NestedBlock as ProtoNestedBlock,
    Object as ProtoObject,
};
use crate::tfplugin6::{
    Schema as ProtoSchema, ServerCapabilities as ProtoCapabilities, StringKind,
};
use fleetform_shared::cty;
use fleetform_shared::schema::{
    Attribute, Block, NestedAttributes, NestedBlock, Nesting, Schema, ServerCapabilities,
};
use fleetform_shared::types::Type;
use std::collections::{BTreeMap, BTreeSet};

impl TryFrom<ProtoSchema> for Schema {
    type Error = ConvertError;
    fn try_from(s: ProtoSchema) -> Result<Schema, ConvertError> {
        Ok(Schema {
            version: s.version,
            block: s
                .block
                .map(Block::try_from)
                .transpose()?
                .unwrap_or_default(),
        })
    }
}

impl TryFrom<ProtoBlock> for Block {
    type Error = ConvertError;
    fn try_from(b: ProtoBlock) -> Result<Block, ConvertError> {
        let mut attributes = BTreeMap::new();
        for a in b.attributes {
            let name = a.name.clone();
            attributes.insert(name, Attribute::try_from(a)?);
        }
        let mut block_types = BTreeMap::new();
        for nb in b.block_types {
            let name = nb.type_name.clone();
            block_types.insert(name, NestedBlock::try_from(nb)?);
        }
        Ok(Block {
            attributes,
            block_types,
            description: b.description,
            deprecated: b.deprecated,
        })
    }
}

impl TryFrom<ProtoAttribute> for Attribute {
    type Error = ConvertError;
    fn try_from(a: ProtoAttribute) -> Result<Attribute, ConvertError> {
        let ty = attribute_type(&a)?;
        let nested = a.nested_type.map(nested_attributes).transpose()?;
        Ok(Attribute {
            ty,
            description: a.description,
            required: a.required,
            optional: a.optional,
            computed: a.computed,
            sensitive: a.sensitive,
            deprecated: a.deprecated,
            write_only: a.write_only,
            nested,
        })
    }
}

/// A nested attribute's own attributes, kept beside the type they imply
/// for their sensitivity.
fn nested_attributes(obj: ProtoObject) -> Result<NestedAttributes, ConvertError> {
    let nesting = match ObjectNesting::try_from(obj.nesting) {
        Ok(ObjectNesting::Single) => Nesting::Single,
        Ok(ObjectNesting::List) => Nesting::List,
        Ok(ObjectNesting::Set) => Nesting::Set,
        Ok(ObjectNesting::Map) => Nesting::Map,
        Ok(ObjectNesting::Invalid) | Err(_) => {
            return Err(ConvertError::Unsupported("nested attribute nesting mode"));
        }
    };
    let mut attributes = BTreeMap::new();
    for a in obj.attributes {
        attributes.insert(a.name.clone(), Attribute::try_from(a)?);
    }
    Ok(NestedAttributes {
        nesting,
        attributes,
    })
}

fn attribute_type(a: &ProtoAttribute) -> Result<Type, ConvertError> {
    match &a.nested_type {
        Some(obj) => nested_object_type(obj),
        None => cty::type_from_json(&a.r#type).map_err(|e| ConvertError::Schema {
            name: a.name.clone(),
            message: e.to_string(),
        }),
    }
}

/// The cty type of a protocol 6 nested attribute: an object whose optional
/// or computed attributes may be omitted, wrapped by the nesting mode.
pub fn nested_object_type(obj: &ProtoObject) -> Result<Type, ConvertError> {
    let mut attrs = BTreeMap::new();
    let mut optional = BTreeSet::new();
    for a in &obj.attributes {
        attrs.insert(a.name.clone(), attribute_type(a)?);
        if a.optional || a.computed {
            optional.insert(a.name.clone());
        }
    }
    let inner = Type::Object { attrs, optional };
    match ObjectNesting::try_from(obj.nesting) {
        Ok(ObjectNesting::Single) => Ok(inner),
        Ok(ObjectNesting::List) => Ok(Type::list(inner)),
        Ok(ObjectNesting::Set) => Ok(Type::set(inner)),
        Ok(ObjectNesting::Map) => Ok(Type::map(inner)),
        Ok(ObjectNesting::Invalid) | Err(_) => {
            Err(ConvertError::Unsupported("nested attribute nesting mode"))
        }
    }
}

impl TryFrom<ProtoNestedBlock> for NestedBlock {
    type Error = ConvertError;
    fn try_from(nb: ProtoNestedBlock) -> Result<NestedBlock, ConvertError> {
        let nesting = match BlockNesting::try_from(nb.nesting) {
            Ok(BlockNesting::Single) => Nesting::Single,
            Ok(BlockNesting::Group) => Nesting::Group,
            Ok(BlockNesting::List) => Nesting::List,
            Ok(BlockNesting::Set) => Nesting::Set,
            Ok(BlockNesting::Map) => Nesting::Map,
            Ok(BlockNesting::Invalid) | Err(_) => {
                return Err(ConvertError::Schema {
                    name: nb.type_name,
                    message: format!("invalid nesting mode {}", nb.nesting),
                });
            }
        };
        Ok(NestedBlock {
            nesting,
            block: nb
                .block
                .map(Block::try_from)
                .transpose()?
                .unwrap_or_default(),
            min_items: nb.min_items,
            max_items: nb.max_items,
        })
    }
}

impl From<&Schema> for ProtoSchema {
    fn from(s: &Schema) -> ProtoSchema {
        ProtoSchema {
            version: s.version,
            block: Some(ProtoBlock::from(&s.block)),
        }
    }
}

impl From<&Block> for ProtoBlock {
    fn from(b: &Block) -> ProtoBlock {
        ProtoBlock {
            version: 0,
            attributes: b
                .attributes
                .iter()
                .map(|(name, a)| attribute_to_proto(name, a))
                .collect(),
            block_types: b
                .block_types
                .iter()
                .map(|(name, nb)| ProtoNestedBlock {
                    type_name: name.clone(),
                    block: Some(ProtoBlock::from(&nb.block)),
                    nesting: match nb.nesting {
                        Nesting::Single => BlockNesting::Single,
                        Nesting::Group => BlockNesting::Group,
                        Nesting::List => BlockNesting::List,
                        Nesting::Set => BlockNesting::Set,
                        Nesting::Map => BlockNesting::Map,
                    }
                    .into(),
                    min_items: nb.min_items,
                    max_items: nb.max_items,
                })
                .collect(),
            description: b.description.clone(),
            description_kind: StringKind::Plain.into(),
            deprecated: b.deprecated,
        }
    }
}

/// A nested attribute goes as `nested_type` (its type implied, `type`
/// empty), as protocol 6 has it; protocol 5 turns it back into its type.
fn attribute_to_proto(name: &str, a: &Attribute) -> ProtoAttribute {
    let nested_type = a.nested.as_ref().map(|n| {
        #[allow(deprecated)]
        ProtoObject {
            attributes: n
                .attributes
                .iter()
                .map(|(name, a)| attribute_to_proto(name, a))
                .collect(),
            nesting: match n.nesting {
                Nesting::Single | Nesting::Group => ObjectNesting::Single,
                Nesting::List => ObjectNesting::List,
                Nesting::Set => ObjectNesting::Set,
                Nesting::Map => ObjectNesting::Map,
            }
            .into(),
            min_items: 0,
            max_items: 0,
        }
    });
    ProtoAttribute {
        name: name.to_string(),
        r#type: match nested_type {
            Some(_) => Vec::new(),
            None => cty::type_to_json(&a.ty),
        },
        description: a.description.clone(),
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        description_kind: StringKind::Plain.into(),
        deprecated: a.deprecated,
        nested_type,
        write_only: a.write_only,
    }
}

impl From<ProtoCapabilities> for ServerCapabilities {
    fn from(c: ProtoCapabilities) -> ServerCapabilities {
        ServerCapabilities {
            plan_destroy: c.plan_destroy,
            get_provider_schema_optional: c.get_provider_schema_optional,
        }
    }
}

impl From<&ServerCapabilities> for ProtoCapabilities {
    fn from(c: &ServerCapabilities) -> ProtoCapabilities {
        ProtoCapabilities {
            plan_destroy: c.plan_destroy,
            get_provider_schema_optional: c.get_provider_schema_optional,
            move_resource_state: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_block() -> Block {
        let mut inner = Block::default();
        inner
            .attributes
            .insert("port".into(), Attribute::new(Type::Number).required());
        let mut b = Block {
            description: "a thing".into(),
            ..Block::default()
        };
        b.attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        b.attributes.insert(
            "password_wo".into(),
            Attribute {
                write_only: true,
                ..Attribute::new(Type::String).optional()
            },
        );
        b.attributes.insert(
            "tags".into(),
            Attribute::new(Type::map(Type::String))
                .optional()
                .sensitive(),
        );
        b.block_types.insert(
            "rule".into(),
            NestedBlock {
                nesting: Nesting::Set,
                block: inner,
                min_items: 1,
                max_items: 3,
            },
        );
        b
    }

    #[test]
    fn schemas_round_trip() {
        let s = Schema {
            version: 2,
            block: sample_block(),
        };
        let wire = ProtoSchema::from(&s);
        assert_eq!(
            wire.block.as_ref().unwrap().block_types[0].nesting,
            BlockNesting::Set as i32
        );
        let wo = &wire.block.as_ref().unwrap().attributes;
        assert!(wo.iter().any(|a| a.name == "password_wo" && a.write_only));
        assert!(wo.iter().any(|a| a.name == "id" && !a.write_only));
        assert_eq!(Schema::try_from(wire).unwrap(), s);
    }

    #[test]
    fn nested_attributes_become_collection_of_object_types() {
        let attr = |name: &str, ty: &Type, optional: bool| ProtoAttribute {
            name: name.into(),
            r#type: cty::type_to_json(ty),
            required: !optional,
            optional,
            ..Default::default()
        };
        let mut obj = ProtoObject {
            attributes: vec![
                attr("host", &Type::String, false),
                attr("port", &Type::Number, true),
            ],
            nesting: ObjectNesting::List.into(),
            ..Default::default()
        };
        obj.attributes[1].sensitive = true;
        let a = ProtoAttribute {
            name: "endpoints".into(),
            nested_type: Some(obj),
            optional: true,
            ..Default::default()
        };
        let got = Attribute::try_from(a).unwrap();
        let nested = got.nested.as_ref().expect("nested attributes kept");
        assert_eq!(nested.nesting, Nesting::List);
        assert!(!nested.attributes["host"].sensitive);
        assert!(nested.attributes["port"].sensitive);
        let want = Type::list(Type::Object {
            attrs: [
                ("host".to_string(), Type::String),
                ("port".to_string(), Type::Number),
            ]
            .into(),
            optional: ["port".to_string()].into(),
        });
        assert_eq!(got.ty, want);
        assert!(got.optional);
        // A provider sends it back as protocol 6 has it, not as its type.
        let sent = attribute_to_proto("endpoints", &got);
        assert!(sent.r#type.is_empty() && sent.nested_type.is_some());
        assert_eq!(Attribute::try_from(sent).unwrap(), got);
    }

    #[test]
    fn invalid_nesting_is_rejected() {
        let nb = ProtoNestedBlock {
            type_name: "x".into(),
            nesting: 0,
            ..Default::default()
        };
        assert!(NestedBlock::try_from(nb).is_err());
    }
}
