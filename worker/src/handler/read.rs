//! Reading one data source instance: ValidateDataResourceConfig, then
//! ReadDataSource, and the checks on the object it returns.

use super::contracts::{Subject, read_valid};
use super::{ProviderSource, call_failed, data_source_schema};
use crate::plugin::Provider;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::provider::{ReadDataSourceRequest, ValidateResourceConfigRequest};
use fleetform_shared::schema::Schema;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ProviderSpec, ReadOutcome, ReadTask};

pub(super) async fn read(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &ReadTask,
) -> Result<ReadOutcome, Diagnostics> {
    let (provider, schema) = source.configured(spec, run_id).await?;
    let dschema = data_source_schema(&schema, spec, &t.type_name)?;
    let subject = Subject {
        provider: &spec.addr,
        addr: t.addr.to_string(),
    };
    read_data(
        provider.as_ref(),
        spec,
        dschema,
        subject,
        &t.type_name,
        &t.config,
    )
    .await
}

/// Validates and reads. The state is `Null` whenever there are errors, so
/// a broken read never reaches the state.
pub(super) async fn read_data(
    provider: &dyn Provider,
    spec: &ProviderSpec,
    schema: &Schema,
    subject: Subject<'_>,
    type_name: &str,
    config: &Value,
) -> Result<ReadOutcome, Diagnostics> {
    let mut diagnostics = provider
        .validate_data_resource_config(&ValidateResourceConfigRequest {
            type_name: type_name.to_string(),
            config: config.clone(),
        })
        .await
        .map_err(|e| call_failed(spec, "validate", e))?;
    if diagnostics.has_errors() {
        return Ok(ReadOutcome {
            state: Value::null(),
            diagnostics,
        });
    }
    let resp = provider
        .read_data_source(&ReadDataSourceRequest {
            type_name: type_name.to_string(),
            config: config.clone(),
        })
        .await
        .map_err(|e| call_failed(spec, "read", e))?;
    diagnostics.extend(resp.diagnostics);
    if !diagnostics.has_errors() {
        diagnostics.extend(read_valid(&subject, &schema.block, config, &resp.state));
    }
    let state = if diagnostics.has_errors() {
        Value::null()
    } else {
        resp.state
    };
    Ok(ReadOutcome { state, diagnostics })
}
