//! The built-in `terraform` provider (`terraform.io/builtin/terraform`),
//! which Terraform compiles in and fleetform ships as the bundled plugin
//! `terraform-provider-terraform`: the `terraform_data` managed resource and
//! the `terraform_remote_state` data source. It has no configuration.
//!
//! # Layout
//! - `data`: `terraform_data` (input/output/triggers_replace, planned as
//!   Terraform's `internal/builtin/providers/terraform` plans it).
//! - `remote_state`: `terraform_remote_state` (schema, validation, backends).
//! - `statefile`: the root outputs of a Terraform state snapshot (format 4).

mod data;
mod remote_state;
mod statefile;

pub use data::{TerraformData, generate_id};
pub use remote_state::RemoteState;
pub use statefile::{StateError, read_outputs};

use crate::framework::{CallResult, DataSource, Provider, Resource};
use async_trait::async_trait;
use fleetform_shared::schema::Schema;
use fleetform_shared::value::Value;
use std::sync::Arc;

pub struct TerraformProvider;

#[async_trait]
impl Provider for TerraformProvider {
    type Client = ();

    fn name(&self) -> &'static str {
        "terraform"
    }

    fn config_schema(&self) -> Schema {
        Schema::default()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource<()>>> {
        vec![Arc::new(TerraformData)]
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource<()>>> {
        vec![Arc::new(RemoteState)]
    }

    async fn configure(&self, _config: &Value) -> CallResult<()> {
        // Nothing to configure, as in Terraform.
        Ok(())
    }
}
