//! `random_string` and `random_password`: a random permutation of letters,
//! digits and (optionally) special characters with per-class minimums.
//! `random_password` differs only in that `result` is sensitive and `id` is
//! the constant `"none"`; it has no `bcrypt_hash` (see the provider docs).

use super::base_schema;
use crate::defaults::{int_attr, plan_with_defaults, set_attr};
use crate::framework::{CallResult, Resource, fail};
use async_trait::async_trait;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::provider::{PlanResourceChangeRequest, PlanResourceChangeResponse};
use fleetform_shared::schema::{Attribute, Schema};
use fleetform_shared::types::Type;
use fleetform_shared::value::Value;
use rand::Rng;
use rand::seq::SliceRandom;

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const NUMERIC: &str = "0123456789";
/// The special characters `special = true` draws from.
pub const SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

const BOOLS: [&str; 5] = ["special", "upper", "lower", "numeric", "number"];
const MINS: [&str; 4] = ["min_numeric", "min_upper", "min_lower", "min_special"];
const ARGS: &[&str] = &[
    "keepers",
    "length",
    "special",
    "upper",
    "lower",
    "numeric",
    "number",
    "min_numeric",
    "min_upper",
    "min_lower",
    "min_special",
    "override_special",
];

/// What to generate, read from a planned state.
#[derive(Clone, Debug, PartialEq)]
pub struct StringParams {
    pub length: usize,
    pub upper: bool,
    pub lower: bool,
    pub numeric: bool,
    pub special: bool,
    pub min_upper: usize,
    pub min_lower: usize,
    pub min_numeric: usize,
    pub min_special: usize,
    /// Replaces [`SPECIAL`] when set and not empty.
    pub override_special: Option<String>,
}

impl StringParams {
    pub(super) fn from_value(v: &Value) -> Result<StringParams, String> {
        let count = |name: &str| -> Result<usize, String> {
            int_attr(v, name)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| format!("{name} must be a known non-negative whole number"))
        };
        let flag = |name: &str| match v.get_attr(name) {
            Value::Bool(b) => Ok(*b),
            _ => Err(format!("{name} must be a known bool")),
        };
        Ok(StringParams {
            length: count("length")?,
            upper: flag("upper")?,
            lower: flag("lower")?,
            numeric: flag("numeric")?,
            special: flag("special")?,
            min_upper: count("min_upper")?,
            min_lower: count("min_lower")?,
            min_numeric: count("min_numeric")?,
            min_special: count("min_special")?,
            override_special: v.get_attr("override_special").as_str().map(str::to_string),
        })
    }
}

/// The string `p` asks for: each enabled class contributes at least its
/// minimum, the rest comes from all enabled classes, then it is shuffled.
pub fn generate_string(p: &StringParams, rng: &mut impl Rng) -> Result<String, String> {
    let special: Vec<char> = match p.override_special.as_deref() {
        Some(s) if !s.is_empty() => s.chars().collect(),
        _ => SPECIAL.chars().collect(),
    };
    let classes: [(bool, usize, Vec<char>); 4] = [
        (p.upper, p.min_upper, UPPER.chars().collect()),
        (p.lower, p.min_lower, LOWER.chars().collect()),
        (p.numeric, p.min_numeric, NUMERIC.chars().collect()),
        (p.special, p.min_special, special),
    ];
    let mut out = Vec::with_capacity(p.length);
    let mut pool = Vec::new();
    for (enabled, min, chars) in &classes {
        if !enabled {
            continue;
        }
        out.extend((0..*min).map(|_| chars[rng.random_range(0..chars.len())]));
        pool.extend_from_slice(chars);
    }
    if out.len() > p.length {
        return Err(format!(
            "length ({}) must be >= min_upper + min_lower + min_numeric + min_special ({})",
            p.length,
            out.len()
        ));
    }
    if pool.is_empty() && out.len() < p.length {
        return Err("at least one of upper, lower, numeric or special must be true".into());
    }
    while out.len() < p.length {
        out.push(pool[rng.random_range(0..pool.len())]);
    }
    out.shuffle(rng);
    Ok(out.into_iter().collect())
}

pub struct RandomString {
    sensitive: bool,
}

impl RandomString {
    pub fn string() -> RandomString {
        RandomString { sensitive: false }
    }

    pub fn password() -> RandomString {
        RandomString { sensitive: true }
    }

    /// Defaults; `numeric` and its deprecated alias `number` follow each other.
    fn defaults(config: &Value) -> Vec<(&'static str, Value)> {
        let numeric = [config.get_attr("numeric"), config.get_attr("number")]
            .into_iter()
            .find(|v| !v.is_null())
            .cloned()
            .unwrap_or(Value::Bool(true));
        let mut d: Vec<(&'static str, Value)> = vec![
            ("special", Value::Bool(true)),
            ("upper", Value::Bool(true)),
            ("lower", Value::Bool(true)),
            ("numeric", numeric.clone()),
            ("number", numeric),
        ];
        d.extend(MINS.iter().map(|m| (*m, Value::int(0))));
        d
    }
}

#[async_trait]
impl Resource<()> for RandomString {
    fn type_name(&self) -> &'static str {
        if self.sensitive {
            "random_password"
        } else {
            "random_string"
        }
    }

    fn schema(&self) -> Schema {
        let (description, id) = if self.sensitive {
            (
                "Identical to random_string with the exception that the result is treated as sensitive.",
                "A static value used internally by Terraform, this should not be referenced in configurations.",
            )
        } else {
            (
                "Generates a random permutation of alphanumeric characters and optionally special characters.",
                "The generated random string.",
            )
        };
        let mut s = base_schema(description, id);
        let a = &mut s.block.attributes;
        a.insert(
            "length".into(),
            Attribute::new(Type::Number).required().describe(
                "The length of the string desired, at least 1 and at least the sum of the min_* arguments.",
            ),
        );
        for name in BOOLS {
            let mut attr = Attribute::new(Type::Bool).optional().computed().describe(
                "Include this class of characters in the result. Default value is `true`.",
            );
            attr.deprecated = name == "number";
            a.insert(name.into(), attr);
        }
        for name in MINS {
            a.insert(
                name.into(),
                Attribute::new(Type::Number)
                    .optional()
                    .computed()
                    .describe("Minimum number of characters of this class in the result. Default value is `0`."),
            );
        }
        a.insert(
            "override_special".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("Your own list of special characters, used instead of the default ones when `special` is true."),
        );
        let mut result = Attribute::new(Type::String)
            .computed()
            .describe("The generated random string.");
        result.sensitive = self.sensitive;
        a.insert("result".into(), result);
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        ARGS
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        let mut d = Diagnostics::new();
        let Some(length) = int_attr(config, "length") else {
            return d;
        };
        if length < 1 {
            d.push(Diagnostic::error(
                "Invalid Attribute Value",
                format!("length must be at least 1, got {length}"),
            ));
        }
        let mins: Option<Vec<i64>> = MINS
            .iter()
            .map(|m| match config.get_attr(m) {
                Value::Null(_) => Some(0),
                _ => int_attr(config, m),
            })
            .collect();
        if let Some(mins) = mins
            && mins.iter().sum::<i64>() > length
        {
            d.push(Diagnostic::error(
                "Invalid Attribute Value",
                format!(
                    "length ({length}) must be >= min_upper + min_lower + min_numeric + min_special ({})",
                    mins.iter().sum::<i64>()
                ),
            ));
        }
        d
    }

    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        plan_with_defaults(req, schema, ARGS, &Self::defaults(&req.config))
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        let params = match StringParams::from_value(planned) {
            Ok(p) => p,
            Err(e) => return fail("Invalid random string arguments", e),
        };
        let result = match generate_string(&params, &mut rand::rng()) {
            Ok(r) => r,
            Err(e) => return fail("Random string generation error", e),
        };
        let id = if self.sensitive {
            "none".to_string()
        } else {
            result.clone()
        };
        let v = set_attr(planned, "result", Value::String(result));
        Ok(set_attr(&v, "id", Value::String(id)))
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

    /// The import id is the string itself; arguments take their defaults.
    async fn import(&self, _: &(), id: &str) -> CallResult<Value> {
        let mut v = Value::object([
            ("result", Value::from(id)),
            ("length", Value::int(id.chars().count() as i64)),
            ("keepers", Value::null()),
            ("override_special", Value::null()),
        ]);
        for (name, default) in Self::defaults(&Value::null()) {
            v = set_attr(&v, name, default);
        }
        let state_id = if self.sensitive { "none" } else { id };
        Ok(set_attr(&v, "id", Value::from(state_id)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(length: usize) -> StringParams {
        StringParams {
            length,
            upper: true,
            lower: true,
            numeric: true,
            special: true,
            min_upper: 0,
            min_lower: 0,
            min_numeric: 0,
            min_special: 0,
            override_special: None,
        }
    }

    #[test]
    fn generated_strings_respect_length_classes_and_minimums() {
        let mut rng = rand::rng();
        let p = StringParams {
            upper: false,
            special: true,
            min_numeric: 5,
            min_special: 3,
            override_special: Some("_£".into()),
            ..params(12)
        };
        for _ in 0..200 {
            let s = generate_string(&p, &mut rng).unwrap();
            assert_eq!(s.chars().count(), 12, "{s}");
            assert!(s.chars().filter(char::is_ascii_digit).count() >= 5, "{s}");
            assert!(s.chars().filter(|c| "_£".contains(*c)).count() >= 3, "{s}");
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_£".contains(c)),
                "{s}"
            );
        }
        let digits_only = StringParams {
            upper: false,
            lower: false,
            special: false,
            ..params(40)
        };
        let s = generate_string(&digits_only, &mut rng).unwrap();
        assert!(
            s.chars().all(|c| c.is_ascii_digit()) && s.len() == 40,
            "{s}"
        );
    }

    #[test]
    fn impossible_requests_are_errors() {
        let mut rng = rand::rng();
        let too_many = StringParams {
            min_upper: 3,
            min_lower: 3,
            ..params(5)
        };
        assert!(generate_string(&too_many, &mut rng).is_err());
        let nothing = StringParams {
            upper: false,
            lower: false,
            numeric: false,
            special: false,
            ..params(3)
        };
        assert!(generate_string(&nothing, &mut rng).is_err());
        let r = RandomString::string();
        let cfg = |len: i64, min: i64| {
            Value::object([("length", Value::int(len)), ("min_upper", Value::int(min))])
        };
        assert!(r.validate(&cfg(0, 0)).has_errors());
        assert!(r.validate(&cfg(4, 5)).has_errors());
        assert!(!r.validate(&cfg(5, 5)).has_errors());
    }

    fn plan(r: &RandomString, prior: Value, config: Value) -> PlanResourceChangeResponse {
        let req = PlanResourceChangeRequest {
            type_name: r.type_name().into(),
            prior_state: prior,
            proposed_new_state: config.clone(),
            config,
            prior_private: vec![],
        };
        r.plan(&req, &r.schema())
    }

    #[tokio::test]
    async fn plan_fills_defaults_apply_generates_and_a_changed_keeper_replaces() {
        let r = RandomString::password();
        let config = Value::object([
            ("length", Value::int(16)),
            ("number", Value::Bool(false)),
            ("keepers", Value::object([("k", Value::from("1"))])),
        ]);
        let planned = plan(&r, Value::null(), config.clone()).planned_state;
        assert!(planned.get_attr("result").is_unknown());
        assert_eq!(planned.get_attr("special"), &Value::Bool(true));
        assert_eq!(planned.get_attr("numeric"), &Value::Bool(false));
        assert_eq!(planned.get_attr("min_upper"), &Value::int(0));
        let state = r.create(&(), &planned).await.unwrap();
        let result = state.get_attr("result").as_str().unwrap();
        assert_eq!(result.chars().count(), 16);
        assert!(!result.chars().any(|c| c.is_ascii_digit()), "{result}");
        assert_eq!(state.get_attr("id"), &Value::from("none"));
        assert!(r.schema().block.attributes["result"].sensitive);

        let same = plan(&r, state.clone(), config.clone());
        assert!(same.requires_replace.is_empty());
        assert_eq!(same.planned_state, state);
        let rekeyed = set_attr(&config, "keepers", Value::object([("k", Value::from("2"))]));
        let replaced = plan(&r, state, rekeyed);
        assert_eq!(replaced.requires_replace.len(), 1);
        assert!(replaced.planned_state.get_attr("result").is_unknown());
    }
}
