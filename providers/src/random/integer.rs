//! `random_integer`: a random whole number in `min..=max`; with `seed`, the
//! same seed and range always give the same number.

use super::base_schema;
use crate::defaults::{int_attr, set_attr};
use crate::framework::{CallResult, Resource, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use rand::Rng;

pub struct RandomInteger;

/// A number in `min..=max` determined by `seed` alone: FNV-1a of the seed
/// feeds splitmix64. (Upstream uses Go's math/rand, whose sequence we do
/// not reproduce: the same seed gives a different, but stable, number.)
pub fn seeded_in_range(seed: &str, min: i64, max: i64) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = h.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let span = (i128::from(max) - i128::from(min) + 1) as u128;
    (i128::from(min) + (u128::from(z) % span) as i128) as i64
}

fn state(planned: &Value, result: i64) -> Value {
    let v = set_attr(planned, "result", Value::int(result));
    set_attr(&v, "id", Value::String(result.to_string()))
}

#[async_trait]
impl Resource<()> for RandomInteger {
    fn type_name(&self) -> &'static str {
        "random_integer"
    }

    fn schema(&self) -> Schema {
        let mut s = base_schema(
            "Generates a random number within the range [min, max].",
            "The string representation of the integer result.",
        );
        let a = &mut s.block.attributes;
        a.insert(
            "min".into(),
            Attribute::new(Type::Number)
                .required()
                .describe("The minimum inclusive value of the range."),
        );
        a.insert(
            "max".into(),
            Attribute::new(Type::Number)
                .required()
                .describe("The maximum inclusive value of the range."),
        );
        a.insert(
            "seed".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("A custom seed to always produce the same value."),
        );
        a.insert(
            "result".into(),
            Attribute::new(Type::Number)
                .computed()
                .describe("The random integer result."),
        );
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["keepers", "min", "max", "seed"]
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        match (int_attr(config, "min"), int_attr(config, "max")) {
            (Some(min), Some(max)) if min > max => Diagnostic::error(
                "Invalid Attribute Value",
                format!("minimum value ({min}) needs to be smaller than or equal to maximum value ({max})"),
            )
            .into(),
            _ => Diagnostics::new(),
        }
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        let (Some(min), Some(max)) = (int_attr(planned, "min"), int_attr(planned, "max")) else {
            return fail(
                "Invalid random_integer",
                "min and max must be known whole numbers",
            );
        };
        if min > max {
            return fail(
                "Invalid random_integer",
                format!(
                    "minimum value ({min}) needs to be smaller than or equal to maximum value ({max})"
                ),
            );
        }
        let result = match planned.get_attr("seed").as_str() {
            Some(seed) => seeded_in_range(seed, min, max),
            None => rand::rng().random_range(min..=max),
        };
        Ok(state(planned, result))
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

    /// `result,min,max` or `result,min,max,seed`.
    async fn import(&self, _: &(), id: &str) -> CallResult<Value> {
        let parts: Vec<&str> = id.splitn(4, ',').collect();
        let nums: Option<Vec<i64>> = parts.iter().take(3).map(|p| p.parse().ok()).collect();
        match (nums.as_deref(), parts.len()) {
            (Some(&[result, min, max]), 3 | 4) => {
                let v = Value::object([
                    ("min", Value::int(min)),
                    ("max", Value::int(max)),
                    (
                        "seed",
                        parts.get(3).map_or(Value::null(), |s| Value::from(*s)),
                    ),
                    ("keepers", Value::null()),
                ]);
                Ok(state(&v, result))
            }
            _ => fail(
                "Invalid import id",
                format!("expected result,min,max[,seed] with whole numbers, got {id:?}"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_results_are_stable_and_in_range() {
        for (min, max) in [(1, 6), (-5, 5), (7, 7), (i64::MIN, i64::MAX)] {
            for seed in ["a", "b", "fleet"] {
                let n = seeded_in_range(seed, min, max);
                assert!((min..=max).contains(&n));
                assert_eq!(n, seeded_in_range(seed, min, max));
            }
        }
        let spread: std::collections::BTreeSet<i64> = (0..50)
            .map(|i| seeded_in_range(&i.to_string(), 1, 1000))
            .collect();
        assert!(spread.len() > 40, "seeds should spread: {spread:?}");
    }

    #[tokio::test]
    async fn create_stays_in_range_and_import_round_trips() {
        let cfg = Value::object([("min", Value::int(3)), ("max", Value::int(5))]);
        for _ in 0..50 {
            let s = RandomInteger.create(&(), &cfg).await.unwrap();
            let n = int_attr(&s, "result").unwrap();
            assert!((3..=5).contains(&n));
            assert_eq!(s.get_attr("id"), &Value::String(n.to_string()));
        }
        assert!(
            RandomInteger
                .validate(&Value::object([
                    ("min", Value::int(9)),
                    ("max", Value::int(1))
                ]))
                .has_errors()
        );
        let imported = RandomInteger.import(&(), "4,1,9,s").await.unwrap();
        assert_eq!(imported.get_attr("result"), &Value::int(4));
        assert_eq!(imported.get_attr("seed"), &Value::from("s"));
        assert!(RandomInteger.import(&(), "4,1").await.is_err());
    }
}
