//! Presentation, shared by the commands: a run's events for people
//! ([`run_text`], with the live summary of a large apply in [`live`]) and
//! for tools ([`json_events`]), both fed through [`run_view`]; a diagnostic
//! the CLI raises itself ([`report`]); plans as `terraform plan` prints
//! them ([`plan_text`], each change by `change_text`), objects of the state
//! ([`object_text`]), Terraform's JSON plan and state representations
//! ([`plan_json`]), provider schemas as `providers schema -json` prints
//! them ([`schema_json`]) and Terraform's graphs in DOT ([`tfgraph`]).
//! Nothing here imports a command.

pub mod block_text;
mod change_text;
pub mod config_json;
pub mod diagnostic_text;
mod drift_text;
mod heredoc;
pub mod json_events;
pub mod live;
pub mod object_text;
mod output_text;
pub mod plan_json;
pub mod plan_text;
pub mod report;
pub mod run_text;
pub mod run_view;
pub mod schema_json;
pub mod state_text;
pub mod tfgraph;
mod value_text;
