//! One-line rendering of values, for messages that quote a value (contract
//! errors, diagnostics). Presentation of whole plans lives in the CLI.

use crate::value::Value;

const KNOWN_AFTER_APPLY: &str = "(known after apply)";

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| s.to_string())
}

/// One-line rendering of a value in HCL-like syntax.
pub fn inline(v: &Value) -> String {
    match v {
        Value::Null(_) => "null".into(),
        Value::Unknown(_) => KNOWN_AFTER_APPLY.into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => quote(s),
        Value::List(items) => format!(
            "[{}]",
            items.iter().map(inline).collect::<Vec<_>>().join(", ")
        ),
        Value::Map(m) => format!(
            "{{ {} }}",
            m.iter()
                .map(|(k, x)| format!("{} = {}", quote(k), inline(x)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
