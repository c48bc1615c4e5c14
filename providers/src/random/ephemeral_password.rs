//! The ephemeral `random_password` (hashicorp/random 3.7): a password
//! generated each time a walk opens it, with the `random_password`
//! resource's arguments (no `keepers`, `number` or `id`) and a
//! `bcrypt_hash`; nothing to renew or close.

use super::string::{SPECIAL, StringParams, generate_string};
use crate::defaults::{int_attr, set_attr};
use crate::framework::{CallResult, EphemeralResource, Opened, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;

const BOOLS: [&str; 4] = ["special", "upper", "lower", "numeric"];
const MINS: [&str; 4] = ["min_numeric", "min_upper", "min_lower", "min_special"];

pub struct EphemeralPassword;

#[async_trait]
impl EphemeralResource<()> for EphemeralPassword {
    fn type_name(&self) -> &'static str {
        "random_password"
    }

    fn schema(&self) -> Schema {
        let mut s = Schema::default();
        s.block.description =
            "Generates an ephemeral password string using a cryptographic random number generator."
                .into();
        let a = &mut s.block.attributes;
        a.insert(
            "length".into(),
            Attribute::new(Type::Number).required().describe(
                "The length of the string desired, at least 1 and at least the sum of the min_* arguments.",
            ),
        );
        for name in BOOLS {
            a.insert(
                name.into(),
                Attribute::new(Type::Bool).optional().computed().describe(
                    "Include this class of characters in the result. Default value is `true`.",
                ),
            );
        }
        for name in MINS {
            a.insert(
                name.into(),
                Attribute::new(Type::Number).optional().computed().describe(
                    "Minimum number of characters of this class in the result. Default value is `0`.",
                ),
            );
        }
        a.insert(
            "override_special".into(),
            Attribute::new(Type::String).optional().describe(&format!(
                "Your own list of special characters, used instead of `{SPECIAL}` when `special` is true."
            )),
        );
        a.insert(
            "result".into(),
            Attribute::new(Type::String)
                .computed()
                .sensitive()
                .describe("The generated random string."),
        );
        a.insert(
            "bcrypt_hash".into(),
            Attribute::new(Type::String)
                .computed()
                .sensitive()
                .describe("A bcrypt hash of the generated random string (of its first 72 bytes)."),
        );
        s
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        let Some(length) = int_attr(config, "length") else {
            return d;
        };
        if length < 1 {
            d.push(Diagnostic::error(
                "Invalid Attribute Value",
                format!("Attribute length value must be at least 1, got: {length}"),
            ));
        }
        d
    }

    async fn open(&self, _: &(), config: &Value) -> CallResult<Opened> {
        let mut v = config.clone();
        for name in BOOLS {
            if v.get_attr(name).is_null() {
                v = set_attr(&v, name, Value::Bool(true));
            }
        }
        for name in MINS {
            if v.get_attr(name).is_null() {
                v = set_attr(&v, name, Value::int(0));
            }
        }
        let params = match StringParams::from_value(&v) {
            Ok(p) => p,
            Err(e) => return fail("Invalid random password arguments", e),
        };
        let result = match generate_string(&params, &mut rand::rng()) {
            Ok(r) => r,
            Err(e) => return fail("Random Read Error", e),
        };
        let hash = match bcrypt::hash(&result, bcrypt::DEFAULT_COST) {
            Ok(h) => h,
            Err(e) => return fail("Hash Generation Error", e.to_string()),
        };
        let v = set_attr(&v, "result", Value::String(result));
        Ok(Opened {
            result: set_attr(&v, "bcrypt_hash", Value::String(hash)),
            private: None,
            renew_at: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn open_fills_defaults_and_generates_a_password_with_its_hash() {
        let schema = EphemeralPassword.schema();
        let mut config = schema.block.empty_value();
        config = set_attr(&config, "length", Value::int(20));
        config = set_attr(&config, "special", Value::Bool(false));
        let o = EphemeralPassword.open(&(), &config).await.expect("opened");
        let result = o
            .result
            .get_attr("result")
            .as_str()
            .expect("result")
            .to_string();
        assert_eq!(result.chars().count(), 20);
        assert!(result.chars().all(char::is_alphanumeric), "{result}");
        let hash = o.result.get_attr("bcrypt_hash").as_str().expect("hash");
        assert!(bcrypt::verify(&result, hash).expect("verify"));
        assert_eq!(o.result.get_attr("upper"), &Value::Bool(true));
        assert_eq!(o.result.get_attr("min_lower"), &Value::int(0));
    }
}
