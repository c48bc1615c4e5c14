//! The `local` provider, like `hashicorp/local`: files on the disk of the
//! machine that runs the provider.
//!
//! # Layout
//! - `file`: the `local_file` and `local_sensitive_file` resources.
//! - `data`: the `local_file` and `local_sensitive_file` data sources.
//! - `digest`: the content hashes every one of them reports.

mod data;
mod digest;
mod file;

pub use data::LocalFileData;
pub use digest::{Digests, sha1_hex};
pub use file::LocalFile;

use crate::framework::{CallResult, DataSource, Provider, Resource};
use async_trait::async_trait;
use fleetform_shared::schema::Schema;
use fleetform_shared::value::Value;
use std::sync::Arc;

pub struct LocalProvider;

#[async_trait]
impl Provider for LocalProvider {
    type Client = ();

    fn name(&self) -> &'static str {
        "local"
    }

    fn config_schema(&self) -> Schema {
        Schema::default()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource<()>>> {
        vec![
            Arc::new(LocalFile::plain()),
            Arc::new(LocalFile::sensitive()),
        ]
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource<()>>> {
        vec![
            Arc::new(LocalFileData::plain()),
            Arc::new(LocalFileData::sensitive()),
        ]
    }

    async fn configure(&self, _config: &Value) -> CallResult<()> {
        Ok(())
    }
}
