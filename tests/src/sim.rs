//! The `sim` provider in tests: a configuration that uses it, and what
//! its store directory says exists.

use std::path::{Path, PathBuf};

/// The sim provider, configured from variables: `store` (its directory),
/// `latency_ms` (default 0) and `failure_rate` (default 0). Tests append
/// their resources.
pub const SIM_PROVIDER: &str = r#"
terraform {
  required_providers {
    sim = { source = "fleetform/sim" }
  }
}

variable "store" {
  type = string
}

variable "latency_ms" {
  type    = number
  default = 0
}

variable "failure_rate" {
  type    = number
  default = 0
}

provider "sim" {
  store_dir    = var.store
  latency_ms   = var.latency_ms
  failure_rate = var.failure_rate
}
"#;

/// Writes `SIM_PROVIDER` + `resources` as `dir/NAME/main.tf`; returns the directory.
pub fn sim_config(dir: &Path, name: &str, resources: &str) -> PathBuf {
    let config = dir.join(name);
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("main.tf"), format!("{SIM_PROVIDER}{resources}")).expect("main.tf");
    config
}

/// Writes, as `dir/NAME/main.tf`, the sim provider configured with
/// `store_dir = var.store` and `provider_args`, then `resources`; returns
/// the directory.
pub fn sim_config_with(dir: &Path, name: &str, provider_args: &str, resources: &str) -> PathBuf {
    let config = dir.join(name);
    std::fs::create_dir_all(&config).expect("config dir");
    let text = format!(
        r#"
terraform {{
  required_providers {{
    sim = {{ source = "fleetform/sim" }}
  }}
}}

variable "store" {{
  type = string
}}

provider "sim" {{
  store_dir = var.store
  {provider_args}
}}
{resources}"#
    );
    std::fs::write(config.join("main.tf"), text).expect("main.tf");
    config
}

/// Files (objects) in a sim provider store directory.
pub fn sim_objects(store: &Path) -> usize {
    std::fs::read_dir(store)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .count()
        })
        .unwrap_or(0)
}

/// The objects of a sim store: id → name. Objects are `<id>.json`; a
/// `.<id>.<n>.tmp` is a write a killed provider never finished (the sim
/// never lists it either).
/// Instance name → how many objects in the sim store bear it: an entry
/// above 1 is an object created twice.
pub fn objects_per_name(store: &Path) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for name in sim_store_objects(store).into_values() {
        *out.entry(name).or_default() += 1;
    }
    out
}

pub fn sim_store_objects(store: &Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(store) else {
        return out;
    };
    for e in entries.flatten() {
        if e.path().extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
            && let (Some(id), Some(name)) = (v["id"].as_str(), v["name"].as_str())
        {
            out.insert(id.to_string(), name.to_string());
        }
    }
    out
}

/// The stored sim object named `name`: its file and its content, to be
/// read or changed behind the provider's back (drift). Panics when there
/// is none.
pub fn sim_stored(store: &Path, name: &str) -> (PathBuf, serde_json::Value) {
    for entry in std::fs::read_dir(store).expect("the sim store") {
        let path = entry.expect("a sim store entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a sim object");
        let doc: serde_json::Value = serde_json::from_str(&text).expect("a sim object's JSON");
        if doc["name"] == name {
            return (path, doc);
        }
    }
    panic!("no sim object named {name} in {}", store.display());
}
