//! Instance expansion: which instance keys `count` / `for_each` give a
//! resource, and the `each.value` of each key.

use super::scope::{EvalScope, Expansion};
use fleetform_shared::addr::InstanceKey;
use fleetform_shared::config::ResourceBlock;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::eval::evaluate;
use fleetform_shared::value::Value;

/// The instances of a resource: key and `each.value`.
pub struct Instances {
    pub expansion: Expansion,
    pub keys: Vec<(InstanceKey, Option<Value>)>,
}

pub fn expand(block: &ResourceBlock, scope: &EvalScope<'_>) -> Result<Instances, Diagnostics> {
    let ctx = format!(
        "resource \"{}\" \"{}\"",
        block.addr.type_name, block.addr.name
    );
    if let Some(count) = &block.count {
        let v = evaluate(count, scope)?;
        let err = |detail: &str| {
            Diagnostics::from(
                Diagnostic::error("Invalid count argument", detail)
                    .at(count.range.clone())
                    .in_context(ctx.clone()),
            )
        };
        return match v {
            Value::Unknown => Err(err(
                "The \"count\" value depends on resource attributes that cannot be determined until apply, so fleetform cannot predict how many instances will be created.",
            )),
            Value::Number(n) => match n.as_i64() {
                Some(n) if n >= 0 => Ok(Instances {
                    expansion: Expansion::Count,
                    keys: (0..n).map(|i| (InstanceKey::Int(i), None)).collect(),
                }),
                _ => Err(err(
                    "The given \"count\" argument value is unsuitable: must be a whole number, zero or more.",
                )),
            },
            Value::Null => Err(err(
                "The given \"count\" argument value is null. An integer is required.",
            )),
            other => Err(err(&format!(
                "The given \"count\" argument value is unsuitable: a number is required, not {}.",
                other.kind()
            ))),
        };
    }
    if let Some(fe) = &block.for_each {
        let v = evaluate(fe, scope)?;
        let err = |detail: &str| {
            Diagnostics::from(
                Diagnostic::error("Invalid for_each argument", detail)
                    .at(fe.range.clone())
                    .in_context(ctx.clone()),
            )
        };
        return match v {
            Value::Unknown => Err(err(
                "The \"for_each\" value depends on resource attributes that cannot be determined until apply, so fleetform cannot predict how many instances will be created.",
            )),
            Value::Map(m) => Ok(Instances {
                expansion: Expansion::ForEach,
                keys: m
                    .into_iter()
                    .map(|(k, v)| (InstanceKey::Str(k), Some(v)))
                    .collect(),
            }),
            Value::List(items) => {
                let mut keys = Vec::new();
                for item in items {
                    match item {
                        Value::String(s) => {
                            keys.push((InstanceKey::Str(s.clone()), Some(Value::String(s))))
                        }
                        Value::Unknown => {
                            return Err(err(
                                "The \"for_each\" set includes values that cannot be determined until apply.",
                            ));
                        }
                        other => {
                            return Err(err(&format!(
                                "The given \"for_each\" argument value is unsuitable: \"for_each\" supports maps and sets of strings, but you have provided a set containing type {}.",
                                other.kind()
                            )));
                        }
                    }
                }
                keys.sort_by(|a, b| a.0.cmp(&b.0));
                keys.dedup_by(|a, b| a.0 == b.0);
                Ok(Instances {
                    expansion: Expansion::ForEach,
                    keys,
                })
            }
            Value::Null => Err(err(
                "The given \"for_each\" argument value is null. A map, or set of strings is allowed.",
            )),
            other => Err(err(&format!(
                "The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.",
                other.kind()
            ))),
        };
    }
    Ok(Instances {
        expansion: Expansion::Single,
        keys: vec![(InstanceKey::None, None)],
    })
}
