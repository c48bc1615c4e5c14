//! UpgradeResourceState, called for every stored object before it is used,
//! as Terraform does: the provider turns an object written under an older
//! schema version into the current shape.

use super::call_failed;
use crate::plugin::Provider;
use fleetform_shared::cty::untyped_json;
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
            raw_state_json: untyped_json(&prior.value),
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
