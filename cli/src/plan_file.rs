//! Plan files as the CLI reads and writes them (`plan -out`, `apply FILE`,
//! `show FILE`, `graph -plan=FILE`): sealed with the encryption settings of
//! the environment (`FLEETFORM_ENCRYPTION_*`) when a key is set. The format
//! itself is [`fleetform_shared::plan::sealed`] and its counterpart.

use fleetform_shared::diag::Diagnostic;
use fleetform_shared::plan::{self, SavedPlan};
use std::path::Path;

/// Reads a plan file, or explains (as a diagnostic) why it is not one.
pub fn read(path: &Path) -> Result<SavedPlan, Diagnostic> {
    let summary = format!("Failed to load \"{}\" as a plan file", path.display());
    let bytes =
        std::fs::read(path).map_err(|e| Diagnostic::error(&summary, format!("Error: {e}.")))?;
    decode(path, &bytes).map_err(|e| Diagnostic::error(&summary, format!("Error: {e}.")))
}

/// A plan file's content: decrypted when it was written encrypted (plan
/// files hold resource values, so they are encrypted with the state's
/// settings, `FLEETFORM_ENCRYPTION_*`).
pub fn decode(path: &Path, bytes: &[u8]) -> Result<SavedPlan, String> {
    let sealer = fleetform_coordinator::store::sealer_from_env().map_err(|e| e.to_string())?;
    plan::open_sealed(&sealer, &what(path), bytes)
}

/// A plan file's bytes as written: encrypted when a key is set.
pub fn encode(path: &Path, saved: &SavedPlan) -> anyhow::Result<Vec<u8>> {
    let sealer = fleetform_coordinator::store::sealer_from_env()?;
    Ok(plan::sealed(&sealer, &what(path), saved)?)
}

/// How errors name a plan file.
fn what(path: &Path) -> String {
    format!("the plan file {}", path.display())
}
