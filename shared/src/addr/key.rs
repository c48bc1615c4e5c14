//! The key of one instance of a resource or a module call, as `count` and
//! `for_each` give it. Below the module and resource addresses that carry
//! it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The key of one instance of a resource: none (no `count`/`for_each`), an
/// integer (`count`) or a string (`for_each`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum InstanceKey {
    None,
    Int(i64),
    Str(String),
}

impl fmt::Display for InstanceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::None => Ok(()),
            InstanceKey::Int(i) => write!(f, "[{i}]"),
            InstanceKey::Str(s) => write!(f, "[{}]", quote(s)),
        }
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}
