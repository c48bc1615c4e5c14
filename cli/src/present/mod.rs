//! Presentation: plans as `terraform plan` prints them ([`plan_text`]),
//! Terraform's JSON plan and state representations ([`plan_json`]) and
//! provider schemas as `providers schema -json` prints them ([`schema_json`]).

pub mod block_text;
pub mod config_json;
pub mod diagnostic_text;
mod drift_text;
mod heredoc;
mod output_text;
pub mod plan_json;
pub mod plan_text;
pub mod schema_json;
pub mod state_text;
mod value_text;
