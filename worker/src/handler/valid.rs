//! Configurations a provider has found valid during a run, so that the
//! final plan of an instance whose configuration has not changed since it
//! was planned does not ask the provider again.
//!
//! Terraform calls ValidateResourceConfig before every PlanResourceChange:
//! in the plan walk, and again in the apply walk, because values unknown
//! when the instance was planned may be known by then. When nothing was
//! unknown, the apply walk sends the very request the plan walk sent.
//! Validation checks the configuration and changes nothing, so the
//! provider's answer to the same request is the same, and asking again
//! only costs a round trip to the provider process: one call in five of an
//! instance that is planned and applied. Decided: the second call is
//! skipped when the first answered without any diagnostic. A configuration
//! that drew a warning or an error is validated every time, so whatever a
//! provider says is said as often as under Terraform.
//!
//! Remembered per run and per provider configuration (a provider's checks
//! may depend on how it is configured), as digests of the resource type and
//! the configuration: SHA-256 cut to 16 bytes, 16 bytes an instance, let go
//! when the run ends. A plan task and the apply task of the same instance
//! that go to different workers of a fleet each validate, as before.

use fleetform_shared::value::Value;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::Mutex;

/// Digests remembered at most per run and provider configuration (16 MB);
/// beyond, configurations are validated every time.
const MAX_REMEMBERED: usize = 1 << 20;

/// What one run's provider configuration found valid.
#[derive(Default)]
pub struct ValidConfigs {
    digests: Mutex<HashSet<[u8; 16]>>,
}

impl ValidConfigs {
    /// The digest of a request: the type and the configuration's encoding
    /// (maps are ordered, so equal values encode the same).
    pub fn digest(type_name: &str, config: &Value) -> Option<[u8; 16]> {
        let encoded = rmp_serde::to_vec(config).ok()?;
        let mut h = Sha256::new();
        h.update(type_name.as_bytes());
        h.update([0]);
        h.update(&encoded);
        h.finalize()[..16].try_into().ok()
    }

    pub fn contains(&self, digest: &[u8; 16]) -> bool {
        self.digests.lock().expect("valid lock").contains(digest)
    }

    pub fn insert(&self, digest: [u8; 16]) {
        let mut digests = self.digests.lock().expect("valid lock");
        if digests.len() < MAX_REMEMBERED {
            digests.insert(digest);
        }
    }

    pub fn len(&self) -> usize {
        self.digests.lock().expect("valid lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
