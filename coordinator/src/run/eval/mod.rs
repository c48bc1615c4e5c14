//! Evaluation in a run, below both walks: the scope and values known so far
//! ([`scope`]), instance expansion ([`expand`]), named values, custom
//! conditions and `check` blocks, sensitivity marks, `removed` blocks,
//! provider configurations and functions, and the ephemeral instances a
//! walk opens and closes. It uses only the run context and the handle
//! types below it.

pub(super) mod checks;
pub(super) mod conditions;
pub(super) mod ephemeral;
pub(super) mod expand;
pub(super) mod functions;
pub(super) mod instance_refs;
pub(super) mod named_values;
pub(super) mod providers;
pub(super) mod removed;
pub(super) mod scope;
pub(super) mod sensitivity;
