//! Resolving an interrupted create by looking the object up.
//!
//! A create delivered again after its first worker stopped answering may
//! have reached the provider already: running it again could make a
//! second object, so by default it is reported interrupted. For a resource
//! type whose objects can be found by what the configuration says about
//! them (a name, a bucket), a [`LookupRule`] names a data source of the
//! same provider and the attributes to look up by: the worker reads it
//! with the planned values of those attributes, and
//! - one object found: the create happened; its result is that object
//!   (the planned values, with what the plan left unknown taken from it);
//! - an error saying "not found": the create did not happen, and it runs;
//! - anything else (several objects, an error, an unknown key): the create
//!   stays interrupted, as without a rule.
//!
//! "Not found" is recognised by the error's summary containing `not found`
//! (in any case), which the sim data source and most providers' lookups
//! say when nothing matches. A rule for a data source that reports an
//! empty match otherwise only ever resolves found objects.

use super::contracts::Subject;
use super::read::read_data;
use super::{ProviderSource, data_source_schema, resource_schema};
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ApplyOp, ApplyOutcome, ApplyTask, ProviderSpec};
use std::collections::BTreeMap;

/// `TYPE=DATA_SOURCE(ATTR[,ATTR...])`: objects of resource type TYPE are
/// found with data source DATA_SOURCE by the planned values of ATTRs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookupRule {
    pub resource_type: String,
    pub data_source: String,
    pub keys: Vec<String>,
}

impl std::str::FromStr for LookupRule {
    type Err = String;

    fn from_str(s: &str) -> Result<LookupRule, String> {
        let bad = || {
            format!(
                "{s:?}: expected TYPE=DATA_SOURCE(ATTR[,ATTR...]), e.g. sim_object=sim_object(name)"
            )
        };
        let (ty, rest) = s.split_once('=').ok_or_else(bad)?;
        let (ds, keys) = rest.split_once('(').ok_or_else(bad)?;
        let keys = keys.strip_suffix(')').ok_or_else(bad)?;
        let keys: Vec<String> = keys
            .split(',')
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect();
        let name_ok =
            |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok(ty.trim())
            || !name_ok(ds.trim())
            || keys.is_empty()
            || !keys.iter().all(|k| name_ok(k))
        {
            return Err(bad());
        }
        Ok(LookupRule {
            resource_type: ty.trim().to_string(),
            data_source: ds.trim().to_string(),
            keys,
        })
    }
}

/// The rules of a worker, by resource type.
#[derive(Clone, Debug, Default)]
pub struct LookupRules(BTreeMap<String, LookupRule>);

impl LookupRules {
    pub fn new(rules: impl IntoIterator<Item = LookupRule>) -> LookupRules {
        LookupRules(
            rules
                .into_iter()
                .map(|r| (r.resource_type.clone(), r))
                .collect(),
        )
    }

    /// The rule for an apply task, if it is a create with one.
    pub fn for_create(&self, t: &ApplyTask) -> Option<&LookupRule> {
        (t.op == ApplyOp::Create && t.provisioners.is_empty())
            .then(|| self.0.get(&t.type_name))
            .flatten()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What a lookup says about an interrupted create.
#[derive(Debug)]
pub enum Resolved {
    /// The object exists: the create's outcome.
    Found(ApplyOutcome),
    /// Nothing matches: the create did not happen.
    Absent,
    /// Cannot tell (why).
    Unknown(String),
}

pub async fn resolve(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &ApplyTask,
    rule: &LookupRule,
) -> Resolved {
    match lookup(source, spec, run_id, t, rule).await {
        Ok(r) => r,
        Err(d) => Resolved::Unknown(summary(&d)),
    }
}

fn summary(d: &Diagnostics) -> String {
    d.iter()
        .map(|d| format!("{}: {}", d.summary, d.detail))
        .collect::<Vec<_>>()
        .join("; ")
}

async fn lookup(
    source: &dyn ProviderSource,
    spec: &ProviderSpec,
    run_id: &str,
    t: &ApplyTask,
    rule: &LookupRule,
) -> Result<Resolved, Diagnostics> {
    let (provider, schema) = source.configured(spec, run_id).await?;
    let dschema = data_source_schema(&schema, spec, &rule.data_source)?;
    resource_schema(&schema, spec, &t.type_name)?;
    let mut config = dschema.block.empty_value();
    for key in &rule.keys {
        // The final configuration first: what the plan left unknown (a name
        // made from another object's id) is known by apply time.
        let v = match t.config.get_attr(key) {
            v if !v.is_null() && v.is_wholly_known() => v,
            _ => t.planned.get_attr(key),
        };
        if v.is_null() || !v.is_wholly_known() || !dschema.block.attributes.contains_key(key) {
            return Ok(Resolved::Unknown(format!(
                "{key} is not a known planned value the data source {} takes",
                rule.data_source
            )));
        }
        if let Value::Map(m) = &mut config {
            m.insert(key.clone(), v.clone());
        }
    }
    let subject = Subject {
        provider: &spec.addr,
        addr: format!("{} (lookup for an interrupted create)", t.addr),
    };
    let read = read_data(
        provider.as_ref(),
        spec,
        dschema,
        subject,
        &rule.data_source,
        &config,
    )
    .await?;
    if read.diagnostics.has_errors() {
        let absent = read.diagnostics.iter().any(|d| {
            d.severity == fleetform_shared::diag::Severity::Error
                && d.summary.to_lowercase().contains("not found")
        });
        return Ok(if absent {
            Resolved::Absent
        } else {
            Resolved::Unknown(summary(&read.diagnostics))
        });
    }
    // The planned object, with what the plan left unknown from the object
    // found: known planned values are what the create would have made.
    // (Attributes taken from the final configuration were unknown when
    // planned, so they come from the object found, which matched them.)
    let new_state = fill_unknowns(&t.planned, &read.state);
    Ok(Resolved::Found(ApplyOutcome {
        new_state,
        private: Vec::new(),
        diagnostics: Diagnostics::new(),
        provisioned: Vec::new(),
    }))
}

fn fill_unknowns(planned: &Value, found: &Value) -> Value {
    match planned {
        Value::Unknown(_) => {
            if found.is_wholly_known() {
                found.clone()
            } else {
                Value::null()
            }
        }
        Value::Map(m) => Value::Map(
            m.iter()
                .map(|(k, v)| (k.clone(), fill_unknowns(v, found.get_attr(k))))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_bad_ones_say_the_form() {
        let r: LookupRule = "sim_object=sim_object(name)".parse().unwrap();
        assert_eq!(r.resource_type, "sim_object");
        assert_eq!(r.data_source, "sim_object");
        assert_eq!(r.keys, ["name"]);
        let r: LookupRule = "aws_s3_bucket=aws_s3_bucket(bucket, region)"
            .parse()
            .unwrap();
        assert_eq!(r.keys, ["bucket", "region"]);
        for bad in ["sim_object", "a=b", "a=b()", "a=b(name", "a b=c(d)"] {
            let e = bad.parse::<LookupRule>().unwrap_err();
            assert!(e.contains("TYPE=DATA_SOURCE(ATTR"), "{e}");
        }
    }

    #[test]
    fn unknowns_are_filled_from_the_object_found() {
        let planned = Value::object([
            ("id", Value::unknown()),
            ("name", Value::from("a")),
            ("size", Value::unknown()),
        ]);
        let found = Value::object([
            ("id", Value::from("i-1")),
            ("name", Value::from("a")),
            ("size", Value::int(3)),
            ("tags", Value::null()),
        ]);
        assert_eq!(
            fill_unknowns(&planned, &found),
            Value::object([
                ("id", Value::from("i-1")),
                ("name", Value::from("a")),
                ("size", Value::int(3)),
            ])
        );
    }
}
