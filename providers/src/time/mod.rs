//! The `time` provider, like `hashicorp/time`: timestamps kept in the
//! state (fixed, or offset from a base), and sleeps between the creation
//! (or destruction) of resources.
//!
//! # Layout
//! - `clock`: RFC 3339 timestamps with their UTC offset, Go's calendar
//!   arithmetic and Go-style durations, without a date-time dependency.
//! - `offset`: `time_offset`.
//! - `sleep`: `time_sleep`.
//! - `static_time`: `time_static`.

pub(crate) mod clock;
mod offset;
mod sleep;
mod static_time;

pub use clock::{Timestamp, format_rfc3339, parse_duration, parse_rfc3339};
pub use offset::TimeOffset;
pub use sleep::TimeSleep;
pub use static_time::TimeStatic;

use crate::framework::{CallResult, Provider, Resource};
use async_trait::async_trait;
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::sync::Arc;

pub struct TimeProvider;

#[async_trait]
impl Provider for TimeProvider {
    type Client = ();

    fn name(&self) -> &'static str {
        "time"
    }

    fn config_schema(&self) -> Schema {
        Schema::default()
    }

    fn resources(&self) -> Vec<Arc<dyn Resource<()>>> {
        vec![
            Arc::new(TimeOffset),
            Arc::new(TimeSleep),
            Arc::new(TimeStatic),
        ]
    }

    async fn configure(&self, _config: &Value) -> CallResult<()> {
        Ok(())
    }
}

fn triggers(what: &str) -> Attribute {
    Attribute::new(Type::map(Type::String))
        .optional()
        .describe(&format!(
            "Arbitrary map of values that, when changed, will {what}."
        ))
}
