//! Importing an existing object: ImportResourceState, then ReadResource so
//! the imported object is what really exists (Terraform does the same).

use super::{ProviderSource, call_failed, resource_schema};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::provider::{ImportResourceStateRequest, ReadResourceRequest};
use fleetform_shared::wire::{ImportOutcome, ImportTask, PriorObject, ProviderSpec};

pub(super) async fn import(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &ImportTask,
) -> Result<ImportOutcome, Diagnostics> {
    let (provider, schema) = source.configured(spec, run_id).await?;
    let rschema = resource_schema(&schema, spec, &t.type_name)?;
    let resp = provider
        .import_resource_state(&ImportResourceStateRequest {
            type_name: t.type_name.clone(),
            id: t.id.clone(),
        })
        .await
        .map_err(|e| call_failed(spec, "import", e))?;
    let mut diagnostics = resp.diagnostics;
    if diagnostics.has_errors() {
        return Ok(ImportOutcome {
            object: None,
            diagnostics,
        });
    }
    let mut imported = resp.imported;
    let object = match imported.len() {
        1 => imported.remove(0),
        0 => {
            return Ok(ImportOutcome {
                object: None,
                diagnostics: missing(t, spec, diagnostics),
            });
        }
        n => {
            diagnostics.push(
                Diagnostic::error(
                    "Multiple import objects",
                    format!("Importing {} with id {:?} returned {n} objects; fleetform imports one object per instance.", t.addr, t.id),
                )
                .for_address(&t.addr),
            );
            return Ok(ImportOutcome {
                object: None,
                diagnostics,
            });
        }
    };
    let read = provider
        .read_resource(&ReadResourceRequest {
            type_name: t.type_name.clone(),
            current_state: object.state,
            private: object.private,
        })
        .await
        .map_err(|e| call_failed(spec, "import refresh", e))?;
    let failed = read.diagnostics.has_errors();
    diagnostics.extend(read.diagnostics);
    if failed {
        return Ok(ImportOutcome {
            object: None,
            diagnostics,
        });
    }
    if read.new_state.is_null() {
        return Ok(ImportOutcome {
            object: None,
            diagnostics: missing(t, spec, diagnostics),
        });
    }
    Ok(ImportOutcome {
        object: Some(PriorObject {
            value: read.new_state,
            private: read.private,
            schema_version: rschema.version,
        }),
        diagnostics,
    })
}

fn missing(t: &ImportTask, spec: &ProviderSpec, mut diags: Diagnostics) -> Diagnostics {
    diags.push(
        Diagnostic::error(
            "Cannot import non-existent remote object",
            format!(
                "While attempting to import an existing object to \"{}\", the provider {} detected that no object exists with the given id {:?}. Only pre-existing objects can be imported; check that the id is correct, or use fleetform apply to create a new remote object for this resource.",
                t.addr, spec.addr, t.id
            ),
        )
        .for_address(&t.addr),
    );
    diags
}
