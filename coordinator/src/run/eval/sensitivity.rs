//! Where sensitivity marks surface in a plan: the sensitive paths of each
//! change (schema, configuration and prior state), and root outputs that
//! would expose a sensitive value.
//!
//! Marks never reach a provider: configurations are decoded to plain values
//! and the marks travel beside them ([`fleetform_shared::Marks`]).

use crate::run::ctx::RunCtx;
use fleetform_lang::config::Output;
use fleetform_shared::Marks;
use fleetform_shared::addr::{AbsResourceInstance, ProviderAddr, ResourceMode};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::plan::ResourceChange;
use fleetform_shared::schema::Block;
use fleetform_shared::state::ObjectState;
use fleetform_shared::value::Value;

/// The schema of the resource type or data source at `addr`.
pub(in crate::run) fn schema_of<'c>(
    ctx: &'c RunCtx<'_>,
    provider: &ProviderAddr,
    addr: &AbsResourceInstance,
) -> Option<&'c Block> {
    let r = &addr.resource.resource;
    let (_, (_, schema)) = ctx.provider_by_addr(provider)?;
    let types = match r.mode {
        ResourceMode::Data => &schema.data_sources,
        ResourceMode::Managed => &schema.resources,
        ResourceMode::Ephemeral => &schema.ephemeral_resources,
    };
    types.get(r.type_name.as_str()).map(|s| &s.block)
}

/// The marks of an object: what its configuration marked, and the
/// attributes its schema declares sensitive.
pub(in crate::run) fn object_marks(config: Marks, schema: Option<&Block>, value: &Value) -> Marks {
    let from_schema = schema.map(|b| b.sensitive_paths(value)).unwrap_or_default();
    config.with(Marks::from_paths(from_schema))
}

/// Whether an object's new marks differ from what its state records (both
/// completed with the schema's, so a state written before a schema path
/// was recorded is no difference). Terraform plans an update for it, so
/// that state records the new sensitivity.
pub(in crate::run) fn sensitivity_changes(
    prior: &ObjectState,
    schema: Option<&Block>,
    after_marks: &Marks,
) -> bool {
    let recorded = Marks::from_paths(prior.sensitive_paths.iter().cloned());
    object_marks(recorded, schema, &prior.value) != *after_marks
}

/// Completes every change's sensitive paths once the plan is made: the
/// schema's for both values, and the prior object's recorded ones for the
/// value before (a value once sensitive is never shown in a diff).
pub(in crate::run) fn mark_changes(ctx: &RunCtx<'_>, changes: &mut [ResourceChange]) {
    for c in changes {
        let schema = schema_of(ctx, &c.provider, &c.addr);
        c.write_only_paths = schema
            .into_iter()
            .flat_map(|b| &b.attributes)
            .filter(|(_, a)| a.write_only)
            .map(|(n, _)| vec![fleetform_shared::value::PathStep::Key(n.clone())])
            .collect();
        let prior = ctx
            .prior
            .resources
            .get(&c.addr)
            .and_then(|i| match &c.deposed {
                Some(k) => i.deposed.get(k),
                None => i.current.as_ref(),
            });
        let recorded = Marks::from_paths(prior.iter().flat_map(|o| o.sensitive_paths.clone()));
        c.before_sensitive_paths = object_marks(recorded, schema, &c.before)
            .into_paths()
            .into();
        if !c.after.is_null() {
            let config = Marks::from_paths(std::mem::take(&mut c.sensitive_paths));
            c.sensitive_paths = object_marks(config, schema, &c.after).into_paths().into();
        }
    }
}

/// Terraform's error for a root output whose value is (or contains)
/// sensitive data but which is not declared `sensitive = true`; reported at
/// the output block, as Terraform does. Only root outputs: a child module's
/// output passes its marks on to the caller instead.
pub(in crate::run) fn undeclared_sensitive_output(output: &Output) -> Diagnostic {
    Diagnostic::error(
        "Output refers to sensitive values",
        "To reduce the risk of accidentally exporting sensitive data that was intended to be only internal, fleetform requires that any root module output containing sensitive data be explicitly marked as sensitive, to confirm your intent.\n\nIf you do intend to export this data, annotate the output value as sensitive by adding the following argument:\n    sensitive = true",
    )
    .at(output.decl_range.clone())
}
