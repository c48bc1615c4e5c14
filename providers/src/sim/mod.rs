//! The `sim` provider (`fleetform/sim`): a simulated cloud for load and chaos
//! tests, with configurable latency and failure rate, whose objects live as
//! JSON files in a directory.
//!
//! # Layout
//! - `object`: the `sim_object` resource.
//! - `lookup`: the `sim_object` data source.
//! - `misbehaving`: `sim_misbehaving`, which breaks provider contracts on purpose.
//! - `store`: the directory of JSON files.

mod lookup;
mod misbehaving;
mod object;
mod store;

pub use lookup::SimObjectDataSource;
pub use misbehaving::{Mode as MisbehavingMode, SimMisbehavingResource};
pub use object::SimObjectResource;
pub use store::{SimObject, Store};

use crate::framework::{CallResult, DataSource, Provider, Resource, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub struct SimProvider;

/// The configured simulated cloud.
pub struct SimClient {
    pub store: Store,
    pub latency: Duration,
    pub failure_rate: f64,
}

impl SimClient {
    /// Every call costs the configured latency.
    pub async fn call_latency(&self) {
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
    }

    /// A mutating call fails before doing anything with probability `failure_rate`.
    pub fn injected_failure(&self, op: &str) -> CallResult<()> {
        if self.failure_rate > 0.0 && rand::random::<f64>() < self.failure_rate {
            return fail(
                "Simulated failure",
                format!("sim: {op} failed (failure_rate {})", self.failure_rate),
            );
        }
        Ok(())
    }
}

/// The store directory when the configuration names none: `SIM_STORE`, else
/// `${XDG_DATA_HOME:-$HOME/.local/share}/fleetform/sim`.
pub fn default_store_dir() -> PathBuf {
    let env = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = env("SIM_STORE") {
        return dir;
    }
    let data = env("XDG_DATA_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".local/share")))
        .unwrap_or_else(std::env::temp_dir);
    data.join("fleetform/sim")
}

fn number(config: &Value, name: &str) -> Result<Option<f64>, Diagnostic> {
    match config.get_attr(name) {
        Value::Null => Ok(None),
        Value::Number(n) => Ok(Some(n.as_f64())),
        other => Err(Diagnostic::error(
            "Invalid provider configuration",
            format!("{name} must be a known number, got {}", other.kind()),
        )),
    }
}

fn check_config(config: &Value) -> Diagnostics {
    let mut d = Diagnostics::new();
    match number(config, "latency_ms") {
        Ok(Some(ms)) if ms < 0.0 => d.push(Diagnostic::error(
            "Invalid latency_ms",
            "latency_ms must not be negative",
        )),
        Err(e) => d.push(e),
        _ => {}
    }
    match number(config, "failure_rate") {
        Ok(Some(r)) if !(0.0..=1.0).contains(&r) => d.push(Diagnostic::error(
            "Invalid failure_rate",
            "failure_rate must be between 0 and 1",
        )),
        Err(e) => d.push(e),
        _ => {}
    }
    d
}

#[async_trait]
impl Provider for SimProvider {
    type Client = SimClient;

    fn name(&self) -> &'static str {
        "sim"
    }

    fn config_schema(&self) -> Schema {
        let mut s = Schema::default();
        let attrs = &mut s.block.attributes;
        attrs.insert(
            "store_dir".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("Directory holding the objects."),
        );
        attrs.insert(
            "latency_ms".into(),
            Attribute::new(Type::Number)
                .optional()
                .describe("Latency added to every call."),
        );
        attrs.insert(
            "failure_rate".into(),
            Attribute::new(Type::Number)
                .optional()
                .describe("Probability (0..1) that an apply fails."),
        );
        s
    }

    fn resources(&self) -> Vec<Arc<dyn Resource<SimClient>>> {
        vec![
            Arc::new(SimObjectResource),
            Arc::new(SimMisbehavingResource),
        ]
    }

    fn data_sources(&self) -> Vec<Arc<dyn DataSource<SimClient>>> {
        vec![Arc::new(SimObjectDataSource)]
    }

    fn validate_config(&self, config: &Value) -> Diagnostics {
        // Unknown values are fine at validation time; configure needs them known.
        let known = |name: &str| !config.get_attr(name).is_unknown();
        if ["latency_ms", "failure_rate"].iter().all(|n| known(n)) {
            check_config(config)
        } else {
            Diagnostics::new()
        }
    }

    async fn configure(&self, config: &Value) -> CallResult<SimClient> {
        let d = check_config(config);
        if d.has_errors() {
            return Err(d);
        }
        let dir = match config.get_attr("store_dir") {
            Value::String(s) if !s.is_empty() => PathBuf::from(s),
            Value::Null | Value::String(_) => default_store_dir(),
            other => {
                return fail(
                    "Invalid store_dir",
                    format!("store_dir must be a known string, got {}", other.kind()),
                );
            }
        };
        let store = match Store::open(&dir).await {
            Ok(s) => s,
            Err(e) => {
                return fail(
                    "Cannot open the sim store",
                    format!("{}: {e}", dir.display()),
                );
            }
        };
        let latency_ms = number(config, "latency_ms").ok().flatten().unwrap_or(0.0);
        Ok(SimClient {
            store,
            latency: Duration::from_secs_f64(latency_ms / 1000.0),
            failure_rate: number(config, "failure_rate").ok().flatten().unwrap_or(0.0),
        })
    }
}
