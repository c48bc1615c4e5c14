//! Provider schemas in the JSON format of `terraform providers schema -json`
//! (format version 1.0), field for field and in Terraform's field order, so
//! tools that read Terraform's output read ours.

use fleetform_shared::addr::ProviderAddr;
use fleetform_shared::schema::{Attribute, Block, NestedBlock, Nesting, ProviderSchema, Schema};
use serde::Serialize;
use std::collections::BTreeMap;

pub const FORMAT_VERSION: &str = "1.0";

#[derive(Serialize)]
struct Providers<'a> {
    format_version: &'static str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    provider_schemas: BTreeMap<String, JsonProvider<'a>>,
}

#[derive(Serialize)]
struct JsonProvider<'a> {
    provider: JsonSchema<'a>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    resource_schemas: BTreeMap<&'a str, JsonSchema<'a>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    data_source_schemas: BTreeMap<&'a str, JsonSchema<'a>>,
}

#[derive(Serialize)]
struct JsonSchema<'a> {
    version: i64,
    block: JsonBlock<'a>,
}

#[derive(Serialize)]
struct JsonBlock<'a> {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    attributes: BTreeMap<&'a str, JsonAttribute<'a>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    block_types: BTreeMap<&'a str, JsonBlockType<'a>>,
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'a str,
    description_kind: &'static str,
    #[serde(skip_serializing_if = "is_false")]
    deprecated: bool,
}

#[derive(Serialize)]
struct JsonBlockType<'a> {
    nesting_mode: &'static str,
    block: JsonBlock<'a>,
    #[serde(skip_serializing_if = "is_zero")]
    min_items: i64,
    #[serde(skip_serializing_if = "is_zero")]
    max_items: i64,
}

#[derive(Serialize)]
struct JsonAttribute<'a> {
    /// Absent for a nested attribute, which has `nested_type` instead.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    ty: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nested_type: Option<JsonNestedType<'a>>,
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'a str,
    description_kind: &'static str,
    #[serde(skip_serializing_if = "is_false")]
    deprecated: bool,
    #[serde(skip_serializing_if = "is_false")]
    required: bool,
    #[serde(skip_serializing_if = "is_false")]
    optional: bool,
    #[serde(skip_serializing_if = "is_false")]
    computed: bool,
    #[serde(skip_serializing_if = "is_false")]
    sensitive: bool,
    #[serde(skip_serializing_if = "is_false")]
    write_only: bool,
}

/// A protocol 6 nested attribute's attributes and nesting mode.
#[derive(Serialize)]
struct JsonNestedType<'a> {
    attributes: BTreeMap<&'a str, JsonAttribute<'a>>,
    nesting_mode: &'static str,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// The whole document for the given providers, keyed by source address.
pub fn providers_schema_json(schemas: &BTreeMap<ProviderAddr, ProviderSchema>) -> String {
    let doc = Providers {
        format_version: FORMAT_VERSION,
        provider_schemas: schemas
            .iter()
            .map(|(addr, s)| (addr.to_string(), provider(s)))
            .collect(),
    };
    serde_json::to_string(&doc).expect("schema JSON always serialises")
}

fn named(m: &BTreeMap<String, Schema>) -> BTreeMap<&str, JsonSchema<'_>> {
    m.iter().map(|(k, s)| (k.as_str(), schema(s))).collect()
}

fn provider(s: &ProviderSchema) -> JsonProvider<'_> {
    JsonProvider {
        provider: schema(&s.provider),
        resource_schemas: named(&s.resources),
        data_source_schemas: named(&s.data_sources),
    }
}

fn schema(s: &Schema) -> JsonSchema<'_> {
    JsonSchema {
        version: s.version,
        block: block(&s.block),
    }
}

fn block(b: &Block) -> JsonBlock<'_> {
    JsonBlock {
        attributes: b
            .attributes
            .iter()
            .map(|(k, a)| (k.as_str(), attribute(a)))
            .collect(),
        block_types: b
            .block_types
            .iter()
            .map(|(k, nb)| (k.as_str(), block_type(nb)))
            .collect(),
        description: &b.description,
        // Our schemas carry no description kind; providers' are plain text.
        description_kind: "plain",
        deprecated: b.deprecated,
    }
}

fn block_type(nb: &NestedBlock) -> JsonBlockType<'_> {
    JsonBlockType {
        nesting_mode: nesting_mode(nb.nesting),
        block: block(&nb.block),
        min_items: nb.min_items,
        max_items: nb.max_items,
    }
}

fn nesting_mode(n: Nesting) -> &'static str {
    match n {
        Nesting::Single => "single",
        Nesting::Group => "group",
        Nesting::List => "list",
        Nesting::Set => "set",
        Nesting::Map => "map",
    }
}

fn attribute(a: &Attribute) -> JsonAttribute<'_> {
    let nested_type = a.nested.as_ref().map(|n| JsonNestedType {
        attributes: n
            .attributes
            .iter()
            .map(|(k, a)| (k.as_str(), attribute(a)))
            .collect(),
        nesting_mode: nesting_mode(n.nesting),
    });
    JsonAttribute {
        ty: nested_type.is_none().then(|| {
            serde_json::from_slice(&fleetform_shared::cty::type_to_json(&a.ty))
                .expect("type JSON is valid JSON")
        }),
        nested_type,
        description: &a.description,
        description_kind: "plain",
        deprecated: a.deprecated,
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        write_only: a.write_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::types::Type;

    #[test]
    fn matches_terraforms_layout_and_field_order() {
        let mut resource = Block {
            description: "A resource that does nothing.".into(),
            ..Block::default()
        };
        resource.attributes.insert(
            "triggers".into(),
            Attribute::new(Type::map(Type::String))
                .optional()
                .describe("Arbitrary map."),
        );
        resource
            .attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        let mut rule = Block::default();
        rule.attributes.insert(
            "secret".into(),
            Attribute::new(Type::String).required().sensitive(),
        );
        resource.block_types.insert(
            "rule".into(),
            NestedBlock {
                nesting: Nesting::List,
                block: rule,
                min_items: 1,
                max_items: 0,
            },
        );
        let mut s = ProviderSchema::default();
        s.resources.insert(
            "null_resource".into(),
            Schema {
                version: 1,
                block: resource,
            },
        );
        let text = providers_schema_json(&BTreeMap::from([(ProviderAddr::implied("null"), s)]));
        assert_eq!(
            text,
            concat!(
                r#"{"format_version":"1.0","provider_schemas":{"registry.terraform.io/hashicorp/null":{"#,
                r#""provider":{"version":0,"block":{"description_kind":"plain"}},"#,
                r#""resource_schemas":{"null_resource":{"version":1,"block":{"attributes":{"#,
                r#""id":{"type":"string","description_kind":"plain","computed":true},"#,
                r#""triggers":{"type":["map","string"],"description":"Arbitrary map.","description_kind":"plain","optional":true}},"#,
                r#""block_types":{"rule":{"nesting_mode":"list","block":{"attributes":{"#,
                r#""secret":{"type":"string","description_kind":"plain","required":true,"sensitive":true}},"#,
                r#""description_kind":"plain"},"min_items":1}},"#,
                r#""description":"A resource that does nothing.","description_kind":"plain"}}}}}}"#,
            )
        );
    }

    #[test]
    fn nested_attributes_have_a_nested_type_instead_of_a_type() {
        let mut endpoint = Attribute::new(Type::String).required();
        endpoint.sensitive = true;
        let mut endpoints = Attribute::new(Type::map(Type::object([("url", Type::String)])));
        endpoints.optional = true;
        endpoints.nested = Some(fleetform_shared::schema::NestedAttributes {
            nesting: Nesting::Map,
            attributes: BTreeMap::from([("url".to_string(), endpoint)]),
        });
        let mut block = Block::default();
        block.attributes.insert("endpoints".into(), endpoints);
        let json: serde_json::Value =
            serde_json::to_value(attribute(&block.attributes["endpoints"])).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "nested_type": {
                    "attributes": {"url": {
                        "type": "string", "description_kind": "plain",
                        "required": true, "sensitive": true
                    }},
                    "nesting_mode": "map"
                },
                "description_kind": "plain",
                "optional": true
            })
        );
    }

    #[test]
    fn no_providers_is_just_the_format_version() {
        assert_eq!(
            providers_schema_json(&BTreeMap::new()),
            r#"{"format_version":"1.0"}"#
        );
    }
}
