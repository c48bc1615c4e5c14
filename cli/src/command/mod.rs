//! What each command does: one file, or one folder, per command or family
//! of commands. `commands` (beside this folder) parses and dispatches; a
//! command takes its arguments from `args`, talks to a coordinator through
//! `client`, and shows what happened through `present`. No command
//! imports another.

pub mod console;
pub mod fmt;
pub mod init;
pub mod inspect;
pub mod login;
pub mod metadata;
pub mod modules;
pub mod providers;
pub mod runs;
pub mod state;
pub mod test;
pub mod workspace;
