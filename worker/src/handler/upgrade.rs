//! UpgradeResourceState, called for every stored object before it is used,
//! as Terraform does: the provider turns an object written under an older
//! schema version into the current shape.

use super::call_failed;
use crate::plugin::Provider;
use fleetform_shared::cty::{to_json, untyped_json};
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::provider::UpgradeResourceStateRequest;
use fleetform_shared::schema::Schema;
use fleetform_shared::wire::{PriorObject, ProviderSpec};

pub(super) async fn upgrade(
    provider: &dyn Provider,
    spec: &ProviderSpec,
    schema: &Schema,
    type_name: &str,
    prior: PriorObject,
) -> Result<PriorObject, Diagnostics> {
    let resp = provider
        .upgrade_resource_state(&UpgradeResourceStateRequest {
            type_name: type_name.to_string(),
            version: prior.schema_version,
            raw_state_json: raw_state(schema, &prior),
        })
        .await
        .map_err(|e| call_failed(spec, "state upgrade", e))?;
    if resp.diagnostics.has_errors() {
        return Err(resp.diagnostics);
    }
    Ok(PriorObject {
        value: resp.upgraded_state,
        private: prior.private,
        schema_version: schema.version,
    })
}

/// The stored object as Terraform stores it: cty JSON of the schema's type,
/// so `dynamic` attributes travel wrapped (`{"value":…,"type":…}`) as
/// providers expect. That type is only known for an object written under
/// the current schema version; an older one goes as plain JSON, for the
/// provider's upgrade to reshape (and for those, Terraform's own state
/// would hold what the older schema wrote).
fn raw_state(schema: &Schema, prior: &PriorObject) -> Vec<u8> {
    if prior.schema_version == schema.version
        && let Ok(bytes) = to_json(&prior.value, &schema.block.implied_type())
    {
        return bytes;
    }
    untyped_json(&prior.value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::schema::{Attribute, Block};
    use fleetform_shared::types::Type;
    use fleetform_shared::value::Value;

    #[test]
    fn stored_objects_of_the_current_version_keep_dynamic_attributes_typed() {
        let mut block = Block::default();
        block
            .attributes
            .insert("input".into(), Attribute::new(Type::Dynamic).optional());
        block
            .attributes
            .insert("id".into(), Attribute::new(Type::String).computed());
        let schema = Schema { version: 1, block };
        let prior = |version| PriorObject {
            value: Value::object([("id", Value::from("x")), ("input", Value::from("hi"))]),
            private: vec![],
            schema_version: version,
        };
        assert_eq!(
            String::from_utf8(raw_state(&schema, &prior(1))).unwrap(),
            r#"{"id":"x","input":{"type":"string","value":"hi"}}"#
        );
        // An older version's shape is unknown: plain JSON for the upgrade.
        assert_eq!(
            String::from_utf8(raw_state(&schema, &prior(0))).unwrap(),
            r#"{"id":"x","input":"hi"}"#
        );
    }
}
