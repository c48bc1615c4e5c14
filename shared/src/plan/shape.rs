//! What drawing a resource's values needs from its provider's schema: which
//! attributes are nested blocks (and their nesting mode), which are protocol
//! 6 nested attributes, which are sensitive, and each plain attribute's type.
//!
//! # Where the renderer gets it
//!
//! The CLI never asks a provider for a schema to draw a plan. Both modes plan
//! in a coordinator (embedded mode runs one in the CLI's process), and the
//! coordinator has every schema a plan used, so it puts the
//! [`Shapes`] of the resource types in the plan ([`super::Plan::shapes`]):
//! one [`BlockShape`] per provider and resource type, however many
//! instances the plan has. The plan reaches the CLI in a `Planned` event
//! and in plan files (`fleetform-plan/3`, see [`super::PLAN_FILE_FORMAT`]),
//! so `plan`, `apply` and `show FILE` draw from what the plan carries.
//! `show` of a state has no plan: the coordinator answers `GetState` with
//! the shapes of the state's resource types from its schema cache. A value
//! without a shape (a plan file of an older format, a schema not cached) is
//! drawn from its value alone, nested blocks as attributes.

use crate::addr::{ProviderAddr, ResourceMode};
use crate::schema::{Attribute, Block, Nesting};
use crate::types::Type;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A block's attributes and nested block types.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BlockShape {
    #[serde(default)]
    pub attributes: BTreeMap<String, AttrShape>,
    #[serde(default)]
    pub blocks: BTreeMap<String, NestedBlockShape>,
}

/// One attribute: its type, whether the schema marks it sensitive, and for
/// a nested attribute its own attributes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttrShape {
    pub ty: Type,
    #[serde(default)]
    pub sensitive: bool,
    #[serde(default)]
    pub nested: Option<NestedAttrsShape>,
}

/// The attributes of a protocol 6 nested attribute and how its objects nest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NestedAttrsShape {
    pub nesting: Nesting,
    pub attributes: BTreeMap<String, AttrShape>,
}

/// A nested block type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NestedBlockShape {
    pub nesting: Nesting,
    pub block: BlockShape,
}

impl From<&Block> for BlockShape {
    fn from(b: &Block) -> BlockShape {
        BlockShape {
            attributes: attrs(&b.attributes),
            blocks: b
                .block_types
                .iter()
                .map(|(name, nb)| {
                    let shape = NestedBlockShape {
                        nesting: nb.nesting,
                        block: BlockShape::from(&nb.block),
                    };
                    (name.clone(), shape)
                })
                .collect(),
        }
    }
}

impl BlockShape {
    /// The object type values of this block have, as the schema's
    /// [`Block::implied_type`] (without the write-only attributes, which
    /// shapes leave out).
    pub fn implied_type(&self) -> Type {
        crate::schema::implied_object(
            self.attributes.iter().map(|(k, a)| (k, a.ty.clone())),
            self.blocks
                .iter()
                .map(|(k, nb)| (k, nb.nesting, nb.block.implied_type())),
        )
    }
}

/// Write-only attributes are left out: they are never in plans or state.
fn attrs(from: &BTreeMap<String, Attribute>) -> BTreeMap<String, AttrShape> {
    from.iter()
        .filter(|(_, a)| !a.write_only)
        .map(|(name, a)| {
            let shape = AttrShape {
                ty: a.ty.clone(),
                sensitive: a.sensitive,
                nested: a.nested.as_ref().map(|n| NestedAttrsShape {
                    nesting: n.nesting,
                    attributes: attrs(&n.attributes),
                }),
            };
            (name.clone(), shape)
        })
        .collect()
}

/// The shapes of one provider's resource types and data sources.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderShapes {
    #[serde(default)]
    pub resources: BTreeMap<String, BlockShape>,
    #[serde(default)]
    pub data_sources: BTreeMap<String, BlockShape>,
}

/// Shapes by provider source address (`registry.terraform.io/hashicorp/null`)
/// and type: every alias and module of a provider has one schema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Shapes(pub BTreeMap<String, ProviderShapes>);

impl Shapes {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(
        &self,
        provider: &ProviderAddr,
        mode: ResourceMode,
        type_name: &str,
    ) -> Option<&BlockShape> {
        let p = self.0.get(&provider.to_string())?;
        match mode {
            ResourceMode::Managed => p.resources.get(type_name),
            ResourceMode::Data => p.data_sources.get(type_name),
            // Never in plans or state: nothing to draw.
            ResourceMode::Ephemeral => None,
        }
    }

    pub fn contains(&self, provider: &ProviderAddr, mode: ResourceMode, type_name: &str) -> bool {
        self.get(provider, mode, type_name).is_some()
    }

    pub fn insert(
        &mut self,
        provider: &ProviderAddr,
        mode: ResourceMode,
        type_name: &str,
        block: &Block,
    ) {
        let p = self.0.entry(provider.to_string()).or_default();
        let types = match mode {
            ResourceMode::Managed => &mut p.resources,
            ResourceMode::Data => &mut p.data_sources,
            ResourceMode::Ephemeral => return,
        };
        types
            .entry(type_name.to_string())
            .or_insert_with(|| BlockShape::from(block));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{NestedAttributes, NestedBlock};

    #[test]
    fn a_shape_keeps_nesting_sensitivity_and_types_once_per_type() {
        let mut inner = Block::default();
        inner
            .attributes
            .insert("size".into(), Attribute::new(Type::Number));
        let mut b = Block::default();
        b.attributes.insert(
            "secret".into(),
            Attribute::new(Type::String).sensitive().describe("dropped"),
        );
        let mut wo = Attribute::new(Type::String);
        wo.write_only = true;
        b.attributes.insert("password_wo".into(), wo);
        let mut ep = Attribute::new(Type::list(inner.implied_type()));
        ep.nested = Some(NestedAttributes {
            nesting: Nesting::List,
            attributes: inner.attributes.clone(),
        });
        b.attributes.insert("endpoints".into(), ep);
        b.block_types.insert(
            "disk".into(),
            NestedBlock {
                nesting: Nesting::Map,
                block: inner,
                min_items: 0,
                max_items: 0,
            },
        );
        let mut shapes = Shapes::default();
        let sim: ProviderAddr = "fleetform/sim".parse().unwrap();
        shapes.insert(&sim, ResourceMode::Managed, "sim_server", &b);
        shapes.insert(&sim, ResourceMode::Managed, "sim_server", &Block::default());
        let s = shapes
            .get(&sim, ResourceMode::Managed, "sim_server")
            .unwrap();
        assert!(s.attributes["secret"].sensitive);
        assert!(!s.attributes.contains_key("password_wo"));
        assert_eq!(
            s.attributes["endpoints"].nested.as_ref().unwrap().nesting,
            Nesting::List
        );
        assert_eq!(s.blocks["disk"].nesting, Nesting::Map);
        assert!(!shapes.contains(&sim, ResourceMode::Data, "sim_server"));
        let bytes = rmp_serde::to_vec_named(&shapes).unwrap();
        assert_eq!(rmp_serde::from_slice::<Shapes>(&bytes).unwrap(), shapes);
    }
}
