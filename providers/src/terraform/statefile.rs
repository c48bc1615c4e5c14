//! The root module outputs of a Terraform state snapshot, as
//! `terraform_remote_state` needs them: format version 4 (Terraform 0.12 and
//! later), each output's `value` decoded with its recorded `type`.
//! Diagnostics use Terraform's `statefile` wording where it has one.

use fleetform_shared::cty;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

/// Why a snapshot gave no outputs.
#[derive(Debug, PartialEq)]
pub enum StateError {
    /// An empty file: no state has been written (Terraform's `ErrNoState`).
    NoState,
    /// A file that is not a readable format 4 snapshot.
    Invalid(Diagnostic),
}

const UNSUPPORTED: &str = "Unsupported state file format";

fn invalid(summary: &str, detail: String) -> StateError {
    StateError::Invalid(Diagnostic::error(summary, detail))
}

/// The root outputs of the snapshot `src` (the bytes of a state file).
/// Sensitivity is not carried: Terraform's data source returns the plain
/// values.
pub fn read_outputs(src: &[u8]) -> Result<BTreeMap<String, Value>, StateError> {
    if src.iter().all(u8::is_ascii_whitespace) {
        return Err(StateError::NoState);
    }
    let doc: serde_json::Value = serde_json::from_slice(src).map_err(|e| {
        invalid(
            UNSUPPORTED,
            format!("The state file could not be parsed as JSON: {e}."),
        )
    })?;
    let version = match doc.get("version") {
        Some(v) => v.as_u64().ok_or_else(|| {
            invalid(
                UNSUPPORTED,
                "The state file has an invalid \"version\" attribute, which must be a whole number.".into(),
            )
        })?,
        None => {
            return Err(invalid(
                UNSUPPORTED,
                "The state file does not have a \"version\" attribute, which is required to identify the format version.".into(),
            ));
        }
    };
    if version != 4 {
        return Err(invalid(
            UNSUPPORTED,
            format!(
                "The state file uses format version {version}; fleetform reads format version 4, which Terraform 0.12 and later write. Run any Terraform command that writes this state (for example \"terraform apply -refresh-only\") to upgrade it."
            ),
        ));
    }
    let mut out = BTreeMap::new();
    let outputs = match doc.get("outputs") {
        None | Some(serde_json::Value::Null) => return Ok(out),
        Some(serde_json::Value::Object(o)) => o,
        Some(_) => {
            return Err(invalid(
                "Invalid state file format",
                "The state file field \"outputs\" must be an object.".into(),
            ));
        }
    };
    for (name, o) in outputs {
        let ty_json = o.get("type").cloned().unwrap_or(serde_json::Value::Null);
        let ty = cty::type_from_json(ty_json.to_string().as_bytes()).map_err(|e| {
            invalid(
                "Invalid output value type in state",
                format!(
                    "The state file has an invalid type specification for output {name:?}: {e}."
                ),
            )
        })?;
        let raw = o.get("value").cloned().unwrap_or(serde_json::Value::Null);
        let value = cty::from_json(raw.to_string().as_bytes(), &ty).map_err(|e| {
            invalid(
                "Invalid output value saved in state",
                format!("The state file has an invalid value for output {name:?}: {e}."),
            )
        })?;
        out.insert(name.clone(), value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(src: &str) -> (String, String) {
        match read_outputs(src.as_bytes()) {
            Err(StateError::Invalid(d)) => (d.summary, d.detail),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn outputs_are_decoded_with_their_recorded_types() {
        let src = r#"{
            "version": 4, "terraform_version": "1.9.0", "serial": 3, "lineage": "l",
            "outputs": {
                "s": {"value": "bar", "type": "string"},
                "n": {"value": 1.5, "type": "number", "sensitive": true},
                "m": {"value": {"k": "v"}, "type": ["map", "string"]},
                "set": {"value": ["a", "b"], "type": ["set", "string"]},
                "o": {"value": {"x": [true, null]}, "type": ["object", {"x": ["tuple", ["bool", "string"]]}]},
                "nul": {"value": null, "type": ["list", "string"]}
            },
            "resources": []
        }"#;
        let out = read_outputs(src.as_bytes()).unwrap();
        assert_eq!(out["s"], Value::from("bar"));
        assert_eq!(out["n"], Value::Number(Number::from_f64(1.5)));
        assert_eq!(out["m"], Value::object([("k", Value::from("v"))]));
        assert_eq!(
            out["set"],
            Value::tuple(vec![Value::from("a"), Value::from("b")])
        );
        assert_eq!(
            out["o"],
            Value::object([("x", Value::tuple(vec![Value::Bool(true), Value::null()]))])
        );
        assert_eq!(out["nul"], Value::null());
        assert_eq!(out.len(), 6);
    }

    use fleetform_shared::value::Number;

    #[test]
    fn a_snapshot_without_outputs_has_none_and_an_empty_file_has_no_state() {
        assert!(
            read_outputs(br#"{"version": 4, "serial": 0, "lineage": ""}"#)
                .unwrap()
                .is_empty()
        );
        assert_eq!(read_outputs(b""), Err(StateError::NoState));
        assert_eq!(read_outputs(b" \n"), Err(StateError::NoState));
    }

    #[test]
    fn unreadable_snapshots_are_explained() {
        let (s, d) = err("{ not json");
        assert_eq!(s, "Unsupported state file format");
        assert!(
            d.starts_with("The state file could not be parsed as JSON: "),
            "{d}"
        );
        let (_, d) = err(r#"{"serial": 1}"#);
        assert_eq!(
            d,
            "The state file does not have a \"version\" attribute, which is required to identify the format version."
        );
        let (_, d) = err(r#"{"version": 3, "modules": []}"#);
        assert!(
            d.starts_with("The state file uses format version 3;"),
            "{d}"
        );
        let (s, d) = err(r#"{"version": 4, "outputs": {"a": {"value": 1, "type": "nope"}}}"#);
        assert_eq!(s, "Invalid output value type in state");
        assert!(
            d.starts_with("The state file has an invalid type specification for output \"a\": "),
            "{d}"
        );
        let (s, d) = err(r#"{"version": 4, "outputs": {"a": {"value": [1], "type": "string"}}}"#);
        assert_eq!(s, "Invalid output value saved in state");
        assert!(
            d.starts_with("The state file has an invalid value for output \"a\": "),
            "{d}"
        );
    }
}
