//! Planning rules that read the configuration: `moved` blocks rebinding
//! state, and the `lifecycle` arguments (`ignore_changes`, `prevent_destroy`).

pub mod lifecycle;
pub mod moved;
