//! tfplugin6 `Diagnostic` ↔ shared [`Diagnostic`].
//!
//! Only severity, summary and detail cross the wire in either direction; a
//! provider's attribute path is available separately through
//! [`diagnostic_path`] so the caller can map it to a source range.

use super::path::path_from_proto;
use crate::tfplugin6::Diagnostic as ProtoDiagnostic;
use crate::tfplugin6::diagnostic::Severity as ProtoSeverity;
use fleetform_shared::diag::{Diagnostic, Diagnostics, Severity};
use fleetform_shared::value::PathStep;

impl From<ProtoDiagnostic> for Diagnostic {
    fn from(d: ProtoDiagnostic) -> Diagnostic {
        // INVALID (or a severity from the future) is treated as an error:
        // hiding a problem is worse than over-reporting one.
        let severity = match ProtoSeverity::try_from(d.severity) {
            Ok(ProtoSeverity::Warning) => Severity::Warning,
            _ => Severity::Error,
        };
        Diagnostic {
            severity,
            summary: d.summary,
            detail: d.detail,
            range: None,
            context: None,
            address: None,
            values: Vec::new(),
        }
    }
}

impl From<&Diagnostic> for ProtoDiagnostic {
    fn from(d: &Diagnostic) -> ProtoDiagnostic {
        let severity = match d.severity {
            Severity::Error => ProtoSeverity::Error,
            Severity::Warning => ProtoSeverity::Warning,
        };
        ProtoDiagnostic {
            severity: severity.into(),
            summary: d.summary.clone(),
            detail: d.detail.clone(),
            attribute: None,
        }
    }
}

/// The attribute a provider's diagnostic is about, if it names one.
pub fn diagnostic_path(d: &ProtoDiagnostic) -> Option<Vec<PathStep>> {
    d.attribute
        .as_ref()
        .map(path_from_proto)
        .filter(|p| !p.is_empty())
}

pub fn diagnostics_from_proto(ds: Vec<ProtoDiagnostic>) -> Diagnostics {
    Diagnostics(ds.into_iter().map(Diagnostic::from).collect())
}

pub fn diagnostics_to_proto(ds: &Diagnostics) -> Vec<ProtoDiagnostic> {
    ds.0.iter().map(ProtoDiagnostic::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_summary_and_detail_round_trip() {
        let ds = Diagnostics(vec![
            Diagnostic::error("boom", "it broke"),
            Diagnostic::warning("careful", ""),
        ]);
        let wire = diagnostics_to_proto(&ds);
        assert_eq!(wire[0].severity, ProtoSeverity::Error as i32);
        assert_eq!(wire[1].severity, ProtoSeverity::Warning as i32);
        assert_eq!(diagnostics_from_proto(wire), ds);
    }

    #[test]
    fn invalid_severity_is_an_error() {
        let d = ProtoDiagnostic {
            severity: 0,
            summary: "s".into(),
            ..Default::default()
        };
        assert!(Diagnostic::from(d).is_error());
    }
}
