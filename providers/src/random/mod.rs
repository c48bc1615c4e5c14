//! The `random` provider, like `hashicorp/random`: values chosen once at
//! apply time and kept in the state until a configured argument (or an
//! entry of `keepers`) changes, which replaces the resource.
//!
//! # Layout
//! - `id`: `random_id` (random bytes in several encodings).
//! - `string`: `random_string` and `random_password`.
//! - `ephemeral_password`: the ephemeral `random_password`.
//! - `integer`: `random_integer`.
//! - `pet`: `random_pet` and its word lists.
//! - `uuid`: `random_uuid`.

mod ephemeral_password;
mod id;
mod integer;
mod pet;
mod string;
mod uuid;

pub use ephemeral_password::EphemeralPassword;
pub use id::{RandomId, decimal};
pub use integer::{RandomInteger, seeded_in_range};
pub use pet::RandomPet;
pub use string::{RandomString, StringParams, generate_string};
pub use uuid::RandomUuid;

use crate::framework::{CallResult, EphemeralResource, Provider, Resource};
use async_trait::async_trait;
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::sync::Arc;

pub struct RandomProvider;

#[async_trait]
impl Provider for RandomProvider {
    type Client = ();

    fn name(&self) -> &'static str {
        "random"
    }

    fn config_schema(&self) -> Schema {
        Schema::default()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource<()>>> {
        vec![
            Arc::new(RandomId),
            Arc::new(RandomInteger),
            Arc::new(RandomString::string()),
            Arc::new(RandomString::password()),
            Arc::new(RandomPet),
            Arc::new(RandomUuid),
        ]
    }

    fn ephemeral_resources(&self) -> Vec<Arc<dyn EphemeralResource<()>>> {
        vec![Arc::new(EphemeralPassword)]
    }

    async fn configure(&self, _config: &Value) -> CallResult<()> {
        Ok(())
    }
}

/// `keepers`, which every random resource has.
fn keepers() -> Attribute {
    Attribute::new(Type::map(Type::String)).optional().describe(
        "Arbitrary map of values that, when changed, will trigger recreation of resource.",
    )
}

/// A schema with `keepers` and a computed `id`, to which each type adds its own.
fn base_schema(description: &str, id: &str) -> Schema {
    let mut s = Schema::default();
    s.block.description = description.into();
    s.block.attributes.insert("keepers".into(), keepers());
    s.block.attributes.insert(
        "id".into(),
        Attribute::new(Type::String).computed().describe(id),
    );
    s
}
