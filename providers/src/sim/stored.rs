//! One simulated object as the store keeps it on disk (`<id>.json`), and
//! the clock the store and its operation log stamp things with. Below both
//! the store and the log.

use fleetform_shared::value::Number;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One simulated object as stored on disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimObject {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
    #[serde(default, with = "exact_size")]
    pub size: Option<Number>,
    /// The resource type when it is not `sim_object` (`sim_misbehaving`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// When `Store::create` wrote it (Unix milliseconds), for eventual
    /// consistency; absent on objects written before that existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_ms: Option<u64>,
}

/// A size is stored as a JSON number when an `f64` holds it exactly (as
/// every size was before numbers had arbitrary precision) and as its
/// decimal text otherwise, so no digit is lost in the store.
mod exact_size {
    use fleetform_shared::value::Number;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Float(f64),
        Text(String),
    }

    pub fn serialize<S: Serializer>(size: &Option<Number>, s: S) -> Result<S::Ok, S::Error> {
        let stored = size.as_ref().map(|n| {
            let f = n.as_f64();
            if Number::from_f64(f) == *n {
                Stored::Float(f)
            } else {
                Stored::Text(n.to_string())
            }
        });
        stored.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Number>, D::Error> {
        match Option::<Stored>::deserialize(d)? {
            None => Ok(None),
            Some(Stored::Float(f)) => Ok(Some(Number::from_f64(f))),
            Some(Stored::Text(t)) => Number::parse(&t)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom(format!("invalid size {t:?}"))),
        }
    }
}

impl SimObject {
    /// The resource type the object belongs to.
    pub fn type_name(&self) -> &str {
        self.kind.as_deref().unwrap_or("sim_object")
    }
}

/// Now, in Unix milliseconds.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
