//! What each command does: one file, or one folder, per command or family
//! of commands, each with a `run` (or one function per subcommand) that
//! returns the exit code. `commands` (beside this folder) parses and
//! dispatches; a command takes its arguments from `args`, talks to a
//! coordinator through `client` (and `submit`/`follow` for a run), and
//! shows what happened through `present`. Commands do not import each
//! other: what two share lives below them (`init -migrate-state` and
//! `state push` both push a state file with `migrate::push_text`).
//!
//! To add a command: its flags in `args` (a `Command` variant), a file
//! here with its `run`, a `pub mod` line below, and an arm in
//! `commands::dispatch` (or, for a command that needs no coordinator,
//! in `commands::run` before one is started).

pub mod apply;
pub mod console;
pub mod drift;
pub mod fmt;
pub mod force_unlock;
pub mod graph;
pub mod import;
pub mod init;
pub mod login;
pub mod metadata;
pub mod modules;
pub mod output;
pub mod plan;
pub mod providers;
pub mod runs;
pub mod show;
pub mod state;
pub mod taint;
pub mod test;
pub mod validate;
pub mod workers;
pub mod workspace;
