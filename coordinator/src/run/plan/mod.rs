//! Planning: the plan walk ([`walk`]) and what it decides per resource,
//! import, destroy and ephemeral open, with the drift and shapes a plan
//! carries. It uses the evaluation layer (`run::eval`) and the run context
//! below it, and nothing of the apply walk.

pub(super) mod conditions;
pub(super) mod destroy;
pub(super) mod drift;
pub(super) mod ephemeral;
pub(super) mod import;
pub(super) mod imports;
pub(super) mod pace;
pub(super) mod resource;
pub(super) mod reuse;
pub(super) mod reused;
pub(super) mod shapes;
pub(super) mod state_file;
pub(super) mod walk;
