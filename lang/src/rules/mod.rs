//! Planning rules that read the configuration: `moved` blocks rebinding
//! state, the `lifecycle` arguments (`ignore_changes`, `prevent_destroy`),
//! and custom conditions (preconditions, postconditions, check assertions).

pub mod conditions;
pub mod described;
pub mod lifecycle;
pub mod moved;
