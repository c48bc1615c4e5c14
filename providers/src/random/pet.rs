//! `random_pet`: a random pet name such as `neatly-eager-otter`: with
//! `length` words, the last is an animal, the one before it an adjective,
//! and any further ones adverbs, joined by `separator` after `prefix`.

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
use rand::seq::IndexedRandom;

const ADVERBS: &[&str] = &[
    "amazingly",
    "boldly",
    "briefly",
    "calmly",
    "carefully",
    "cheerfully",
    "closely",
    "deeply",
    "eagerly",
    "easily",
    "fairly",
    "firmly",
    "freely",
    "gently",
    "gladly",
    "greatly",
    "happily",
    "highly",
    "honestly",
    "kindly",
    "largely",
    "lightly",
    "loudly",
    "luckily",
    "merely",
    "mildly",
    "neatly",
    "nicely",
    "openly",
    "partly",
    "politely",
    "quickly",
    "quietly",
    "rapidly",
    "rarely",
    "really",
    "smoothly",
    "softly",
    "solely",
    "steadily",
    "strongly",
    "surely",
    "swiftly",
    "truly",
    "warmly",
    "wildly",
    "wisely",
];

const ADJECTIVES: &[&str] = &[
    "able", "active", "amused", "apt", "brave", "bright", "busy", "calm", "careful", "charming",
    "clever", "cool", "cosmic", "crisp", "curious", "daring", "eager", "elegant", "fair", "fancy",
    "fast", "fine", "fit", "fresh", "friendly", "funny", "gentle", "glad", "golden", "grand",
    "happy", "helpful", "honest", "humble", "jolly", "keen", "kind", "lively", "loyal", "lucky",
    "merry", "modest", "neat", "nice", "noble", "patient", "polite", "proud", "quick", "quiet",
    "rapid", "ready", "sharp", "shy", "smart", "steady", "sunny", "super", "swift", "tidy",
    "upbeat", "vital", "warm", "wise", "witty", "young", "zesty",
];

const NAMES: &[&str] = &[
    "alpaca", "badger", "beagle", "bear", "beaver", "bison", "bobcat", "camel", "cat", "cheetah",
    "chipmunk", "cobra", "condor", "cougar", "coyote", "crane", "crow", "deer", "dingo", "dodo",
    "dolphin", "donkey", "dove", "eagle", "eel", "elk", "emu", "falcon", "ferret", "finch", "fox",
    "frog", "gazelle", "gecko", "gibbon", "goose", "gopher", "hare", "hawk", "heron", "horse",
    "hound", "ibex", "iguana", "jackal", "jaguar", "kiwi", "koala", "lemur", "lion", "llama",
    "lynx", "macaw", "marmot", "mole", "moose", "mouse", "newt", "ocelot", "orca", "osprey",
    "otter", "owl", "panda", "panther", "parrot", "pelican", "penguin", "pony", "puma", "quail",
    "rabbit", "raven", "robin", "salmon", "seal", "shark", "sloth", "snake", "sparrow", "squid",
    "stork", "swan", "tapir", "tiger", "toad", "trout", "turtle", "viper", "walrus", "weasel",
    "whale", "wolf", "wombat", "yak", "zebra",
];

/// `length` words: adverbs, then an adjective, then an animal.
pub fn pet_name(length: usize, separator: &str, rng: &mut impl Rng) -> String {
    let pick = |list: &[&'static str], rng: &mut _| *list.choose(rng).expect("non-empty list");
    let mut words: Vec<&str> = (0..length.saturating_sub(2))
        .map(|_| pick(ADVERBS, rng))
        .collect();
    if length >= 2 {
        words.push(pick(ADJECTIVES, rng));
    }
    if length >= 1 {
        words.push(pick(NAMES, rng));
    }
    words.join(separator)
}

pub struct RandomPet;

fn defaults() -> [(&'static str, Value); 2] {
    [("length", Value::int(2)), ("separator", Value::from("-"))]
}

#[async_trait]
impl Resource<()> for RandomPet {
    fn type_name(&self) -> &'static str {
        "random_pet"
    }

    fn schema(&self) -> Schema {
        let mut s = base_schema(
            "Generates random pet names, for unique names of servers and other objects.",
            "The random pet name.",
        );
        let a = &mut s.block.attributes;
        a.insert(
            "length".into(),
            Attribute::new(Type::Number)
                .optional()
                .computed()
                .describe("The length (in words) of the pet name. Defaults to 2."),
        );
        a.insert(
            "prefix".into(),
            Attribute::new(Type::String)
                .optional()
                .describe("A string to prefix the name with."),
        );
        a.insert(
            "separator".into(),
            Attribute::new(Type::String)
                .optional()
                .computed()
                .describe("The character to separate words in the pet name. Defaults to \"-\"."),
        );
        s
    }

    fn replace_on_change(&self) -> &'static [&'static str] {
        &["keepers", "length", "prefix", "separator"]
    }

    fn validate(&self, config: &Value) -> Diagnostics {
        match int_attr(config, "length") {
            Some(n) if n < 1 => Diagnostic::error(
                "Invalid Attribute Value",
                format!("length must be at least 1, got {n}"),
            )
            .into(),
            _ => Diagnostics::new(),
        }
    }

    fn plan(&self, req: &PlanResourceChangeRequest, schema: &Schema) -> PlanResourceChangeResponse {
        plan_with_defaults(req, schema, self.replace_on_change(), &defaults())
    }

    async fn create(&self, _: &(), planned: &Value) -> CallResult<Value> {
        let (Some(length), Some(sep)) = (
            int_attr(planned, "length").and_then(|n| usize::try_from(n).ok()),
            planned.get_attr("separator").as_str(),
        ) else {
            return fail("Invalid random_pet", "length and separator must be known");
        };
        let name = pet_name(length, sep, &mut rand::rng());
        let id = match planned.get_attr("prefix").as_str() {
            Some(prefix) => format!("{prefix}{sep}{name}"),
            None => name,
        };
        Ok(set_attr(planned, "id", Value::String(id)))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_the_requested_shape() {
        let mut rng = rand::rng();
        let name = pet_name(3, "_", &mut rng);
        let words: Vec<&str> = name.split('_').collect();
        assert_eq!(words.len(), 3, "{name}");
        assert!(ADVERBS.contains(&words[0]) && ADJECTIVES.contains(&words[1]));
        assert!(NAMES.contains(&words[2]));
        assert!(NAMES.contains(&pet_name(1, "-", &mut rng).as_str()));
    }

    #[tokio::test]
    async fn plan_defaults_then_create_with_prefix() {
        let config = Value::object([("prefix", Value::from("web"))]);
        let req = PlanResourceChangeRequest {
            type_name: "random_pet".into(),
            prior_state: Value::null(),
            proposed_new_state: config.clone(),
            config,
            prior_private: vec![],
        };
        let planned = RandomPet.plan(&req, &RandomPet.schema()).planned_state;
        assert!(planned.get_attr("id").is_unknown());
        assert_eq!(planned.get_attr("length"), &Value::int(2));
        let state = RandomPet.create(&(), &planned).await.unwrap();
        let id = state.get_attr("id").as_str().unwrap();
        let words: Vec<&str> = id.split('-').collect();
        assert_eq!(words.len(), 3, "{id}");
        assert_eq!(words[0], "web");
        assert!(
            RandomPet
                .validate(&Value::object([("length", Value::int(0))]))
                .has_errors()
        );
    }
}
