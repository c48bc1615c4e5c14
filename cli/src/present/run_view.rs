//! Where a run's events go: the [`RunView`] that [`crate::follow`] feeds,
//! implemented for people ([`super::run_text::Renderer`]) and for tools
//! ([`super::json_events::JsonView`]), and what both keep of a plan to
//! say an object's id as it is applied ([`prior_ids`]).

use fleetform_shared::AbsResourceInstance;
use fleetform_shared::wire::RunEvent;
use std::collections::HashMap;

/// Where a run's events go.
pub trait RunView {
    fn event(&mut self, event: &RunEvent);
    /// Called twice a second while the run goes, events or not.
    fn tick(&mut self) {}
}

/// The ids the objects a plan changes had before, by address and deposed
/// key.
pub(crate) fn prior_ids(
    plan: &fleetform_shared::plan::Plan,
) -> HashMap<(AbsResourceInstance, Option<String>), String> {
    plan.changes
        .iter()
        .filter_map(|c| {
            let id = c.before.get_attr("id").as_str()?;
            Some(((c.addr.clone(), c.deposed.clone()), id.to_string()))
        })
        .collect()
}
