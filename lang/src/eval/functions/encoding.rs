//! Encoding functions: jsonencode, jsondecode, sha256.

use super::{Def, FnError, FnResult, Unknowns::Deep, def, str_arg};
use fleetform_shared::json::Json;
use fleetform_shared::value::Value;
use sha2::{Digest, Sha256};

pub(super) const DEFS: &[Def] = &[
    def("jsonencode", Deep, jsonencode),
    def("jsondecode", Deep, jsondecode),
    def("sha256", Deep, sha256),
];

/// A known value as JSON; objects keep their sorted key order as
/// Terraform's do, and numbers all their digits.
pub(crate) fn to_json(v: &Value) -> Json {
    Json::from(v)
}

pub(super) fn jsonencode(a: &[Value]) -> FnResult {
    Ok(Value::String(super::go_fmt::html_safe_json(
        to_json(&a[0]).to_string(),
    )))
}

pub(super) fn jsondecode(a: &[Value]) -> FnResult {
    let text = str_arg(a, 0)?;
    Json::parse(text.as_bytes())
        .map(|j| Value::from(&j))
        .map_err(|e| FnError::call(go_json_error(&text, &e)))
}

/// A JSON syntax error in the words of Go's decoder, which Terraform's
/// `jsondecode` reports as the call's failure (not an argument's).
fn go_json_error(text: &str, e: &fleetform_shared::json::ParseError) -> String {
    if e.message.contains("end of input") {
        return "EOF".to_string();
    }
    if e.message.contains("trailing") {
        return "extraneous data after JSON object".to_string();
    }
    // A word starting like `true`, `false` or `null` is read as that
    // literal up to its first wrong byte.
    let bytes = &text.as_bytes()[e.offset.min(text.len())..];
    for word in ["true", "false", "null"] {
        if bytes.first() == word.as_bytes().first() {
            let wrong = word.bytes().zip(bytes).position(|(w, b)| w != *b);
            if let Some(k) = wrong {
                return format!(
                    "invalid character '{}' in literal {word} (expecting '{}')",
                    char::from(bytes[k]),
                    char::from(word.as_bytes()[k])
                );
            }
        }
    }
    // Go names the offending byte, read as Latin-1 when it is not ASCII,
    // and says where in the grammar it stood.
    let Some(&b) = text.as_bytes().get(e.offset) else {
        // Go's decoder runs out of input: io.EOF.
        return "EOF".to_string();
    };
    let place = match e.message.as_str() {
        "expected value" => "looking for beginning of value",
        "expected `,` or `]`" => "after array element",
        "expected `,` or `}`" => "after object key:value pair",
        "expected `:`" => "after object key",
        // Go's token reader gives no context for the first key (its state
        // right after `{` has none), and this one after a comma.
        "expected an object key" => {
            let before = text.as_bytes()[..e.offset]
                .iter()
                .rev()
                .find(|c| !c.is_ascii_whitespace());
            if before == Some(&b'{') {
                return format!("invalid character '{}'", char::from(b));
            }
            "looking for beginning of object key string"
        }
        _ => return format!("invalid JSON: {e}"),
    };
    format!("invalid character '{}' {place}", char::from(b))
}

pub(super) fn sha256(a: &[Value]) -> FnResult {
    Ok(Value::String(hex::encode(Sha256::digest(
        str_arg(a, 0)?.as_bytes(),
    ))))
}
