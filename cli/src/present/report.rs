//! A diagnostic the CLI raises itself (a bad flag value, a workspace it
//! cannot read, a refused plan file), printed for people on standard
//! error or as a `-json` event, so every command says it the same way.

use crate::present::json_events::JsonView;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::Operation;
use std::collections::BTreeMap;

/// Prints a diagnostic raised by the CLI itself; returns the exit code 1.
pub fn report(json: bool, d: &Diagnostic) -> u8 {
    if json {
        JsonView::new(BTreeMap::new(), Operation::Plan, true, true).diagnostic(d);
    } else {
        eprint!(
            "{}",
            crate::present::run_text::diagnostic(d, &BTreeMap::new())
        );
    }
    1
}
