//! The schema shapes a plan carries for drawing its values
//! ([`fleetform_shared::plan::shape`]): one per resource type in its
//! changes and drift, from the schemas of the run's configured providers.

use crate::run::ctx::RunCtx;
use fleetform_shared::addr::ProviderAddr;
use fleetform_shared::plan::Plan;
use fleetform_shared::plan::shape::Shapes;
use fleetform_shared::schema::ProviderSchema;
use std::collections::HashMap;

/// The shapes of `plan`'s resource types. A type whose provider the run did
/// not configure (nothing needed it) has none, and is drawn without.
pub(in crate::run) fn of_plan(ctx: &RunCtx<'_>, plan: &Plan) -> Shapes {
    let schemas: HashMap<&ProviderAddr, &ProviderSchema> = ctx
        .providers
        .iter()
        .map(|(config, (_, schema))| (&config.provider, schema.as_ref()))
        .collect();
    let mut shapes = Shapes::default();
    for c in plan.changes.iter().chain(&plan.drift) {
        let r = &c.addr.resource.resource;
        if shapes.contains(&c.provider, r.mode, &r.type_name) {
            continue;
        }
        let Some(schema) = schemas.get(&c.provider) else {
            continue;
        };
        let types = match r.mode {
            fleetform_shared::addr::ResourceMode::Managed => &schema.resources,
            fleetform_shared::addr::ResourceMode::Data => &schema.data_sources,
            // Never planned as changes.
            fleetform_shared::addr::ResourceMode::Ephemeral => continue,
        };
        if let Some(s) = types.get(r.type_name.as_str()) {
            shapes.insert(&c.provider, r.mode, &r.type_name, &s.block);
        }
    }
    shapes
}
