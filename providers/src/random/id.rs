//! `random_id`: `byte_length` random bytes, presented as unpadded base64url
//! (`id`, and `b64_url` with the prefix), padded standard base64, hex and
//! decimal, each of the latter with `prefix` in front.

use super::base_schema;
use crate::defaults::{int_attr, set_attr};
use crate::framework::{CallResult, Resource, fail};
use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use rand::Rng;

pub struct RandomId;

/// The big-endian unsigned integer in `bytes`, in decimal ("0" when empty).
pub fn decimal(bytes: &[u8]) -> String {
    let mut n: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
    let mut digits = Vec::new();
    while !n.is_empty() {
        let mut rem = 0u32;
        for b in &mut n {
            let cur = (rem << 8) | u32::from(*b);
            *b = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(b'0' + rem as u8);
        let zeros = n.iter().take_while(|b| **b == 0).count();
        n.drain(..zeros);
    }
    if digits.is_empty() {
        return "0".into();
    }
    digits.reverse();
    String::from_utf8(digits).expect("ascii digits")
}

/// The state for `bytes`: `base` with every encoding set.
fn encoded(base: &Value, bytes: &[u8], prefix: &str) -> Value {
    let id = URL_SAFE_NO_PAD.encode(bytes);
    let v = set_attr(base, "b64_url", Value::String(format!("{prefix}{id}")));
    let v = set_attr(
        &v,
        "b64_std",
        Value::String(format!("{prefix}{}", STANDARD.encode(bytes))),
    );
    let v = set_attr(
        &v,
        "hex",
        Value::String(format!("{prefix}{}", hex::encode(bytes))),
    );
    let v = set_attr(
        &v,
        "dec",
        Value::String(format!("{prefix}{}", decimal(bytes))),
    );
    set_attr(&v, "id", Value::String(id))
}

#[async_trait]
impl Resource<()> for RandomId {
    fn type_name(&self) -> &'static str {
        "random_id"
    }

    fn schema(&self) -> Schema {
        let mut s = base_schema(
            "Generates random bytes presented in several encodings, for unique identifiers.",
            "The generated id presented in base64 without additional transformations or prefix.",
        );
        let a = &mut s.block.attributes;
        a.insert(
            "byte_length".into(),
            Attribute::new(Type::Number)
                .required()
                .describe("The number of random bytes to produce. The minimum value is 1."),
        );
        a.insert(
            "prefix".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("Arbitrary string to prefix the output value with."),
        );
        for (name, text) in [
            (
                "b64_url",
                "The generated id in URL-safe base64 without padding.",
            ),
            ("b64_std", "The generated id in standard base64."),
            ("hex", "The generated id in padded hexadecimal digits."),
            ("dec", "The generated id in non-padded decimal digits."),
        ] {
            a.insert(
                name.into(),
                Attribute::new(Type::String).computed().describe(text),
            );
        }
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["keepers", "byte_length", "prefix"]
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        match int_attr(config, "byte_length") {
            Some(n) if n < 1 => Diagnostic::error(
                "Invalid Attribute Value",
                format!("byte_length must be at least 1, got {n}"),
            )
            .into(),
            _ => Diagnostics::new(),
        }
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        let Some(len) = int_attr(planned, "byte_length").and_then(|n| usize::try_from(n).ok())
        else {
            return fail(
                "Invalid random_id",
                "byte_length must be a known positive whole number",
            );
        };
        let mut bytes = vec![0u8; len];
        rand::rng().fill(&mut bytes[..]);
        let prefix = planned.get_attr("prefix").as_str().unwrap_or_default();
        Ok(encoded(planned, &bytes, prefix))
    }

    async fn read(&self, _: &(), state: &Value) -> CallResult<Value> {
        Ok(state.clone())
    }

    async fn update(&self, _: &(), _prior: &Value, planned: &Value) -> CallResult<Value> {
        Ok(planned.clone())
    }

    async fn delete(&self, _: &(), _prior: &Value) -> CallResult<()> {
        Ok(())
    }

    /// `B64URL` or `PREFIX,B64URL` (the prefix ends at the last comma).
    async fn import(&self, _: &(), id: &str) -> CallResult<Value> {
        let (prefix, b64) = id.rsplit_once(',').unwrap_or(("", id));
        let bytes = match URL_SAFE_NO_PAD.decode(b64) {
            Ok(b) => b,
            Err(e) => return fail("Import Random ID Error", format!("decoding {b64:?}: {e}")),
        };
        let base = Value::object([
            ("byte_length", Value::int(bytes.len() as i64)),
            ("keepers", Value::null()),
            (
                "prefix",
                if prefix.is_empty() {
                    Value::null()
                } else {
                    Value::from(prefix)
                },
            ),
        ]);
        Ok(encoded(&base, &bytes, prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_of_big_endian_bytes() {
        assert_eq!(decimal(&[]), "0");
        assert_eq!(decimal(&[0, 0]), "0");
        assert_eq!(decimal(&[1, 0]), "256");
        assert_eq!(decimal(&[0xff; 8]), u64::MAX.to_string());
        assert_eq!(decimal(&[0xff; 16]), u128::MAX.to_string());
    }

    #[tokio::test]
    async fn encodings_agree_with_each_other_and_carry_the_prefix() {
        let v = encoded(
            &Value::object([("prefix", Value::from("p-"))]),
            &[0xfb, 0xff, 0x01],
            "p-",
        );
        assert_eq!(v.get_attr("id"), &Value::from("-_8B"));
        assert_eq!(v.get_attr("b64_url"), &Value::from("p--_8B"));
        assert_eq!(v.get_attr("b64_std"), &Value::from("p-+/8B"));
        assert_eq!(v.get_attr("hex"), &Value::from("p-fbff01"));
        assert_eq!(v.get_attr("dec"), &Value::from("p-16514817"));

        let created = RandomId
            .create(&(), &Value::object([("byte_length", Value::int(8))]))
            .await
            .unwrap();
        let hex = created.get_attr("hex").as_str().unwrap();
        assert_eq!(hex.len(), 16);
        let n = u64::from_str_radix(hex, 16).unwrap();
        assert_eq!(created.get_attr("dec"), &Value::String(n.to_string()));

        let imported = RandomId.import(&(), "p-,-_8B").await.unwrap();
        assert_eq!(imported.get_attr("hex"), &Value::from("p-fbff01"));
        assert_eq!(imported.get_attr("byte_length"), &Value::int(3));
        assert!(
            RandomId
                .validate(&Value::object([("byte_length", Value::int(0))]))
                .has_errors()
        );
    }
}
