//! Applying: the apply walk ([`walk`]) over the apply graph, each
//! operation's result checked ([`result`]), what it records kept durable
//! ([`record`]: journal, held events, archive, a resumed run's answers),
//! provisioners ([`provision`]), ephemeral resources opened, renewed
//! and closed ([`ephemeral`]), and which operations go to a worker process
//! directly ([`near`]). It
//! uses the evaluation layer (`run::eval`) and the run context below it,
//! and nothing of the plan walk.

pub(super) mod ephemeral;
mod near;
pub(super) mod provision;
pub(crate) mod record;
pub(super) mod result;
pub(super) mod walk;
