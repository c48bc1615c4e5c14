//! Instance expansion: which instance keys `count` / `for_each` give a
//! resource or a module call, and the `each.value` of each key.
//!
//! Sensitivity follows Terraform: a sensitive `count` is accepted (only the
//! number of instances shows it), a sensitive `for_each` is refused because
//! its keys become instance addresses; the map values given to `for_each`
//! keep their own marks in `each.value`.

use crate::run::eval::scope::EvalScope;
use crate::run::values::Expansion;
use fleetform_lang::config::{ModuleCall, ResourceBlock};
use fleetform_lang::eval::{Expr, Marks, evaluate, evaluate_marked};
use fleetform_shared::addr::InstanceKey;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};
use std::collections::BTreeMap;

/// The instances of a resource: key and `each.value`.
pub struct Instances {
    pub expansion: Expansion,
    pub keys: Vec<(InstanceKey, Option<Value>)>,
    /// The sensitive parts of `each.value`, by key (none when absent).
    pub each_marks: BTreeMap<InstanceKey, Marks>,
}

pub fn expand(block: &ResourceBlock, scope: &EvalScope<'_>) -> Result<Instances, Diagnostics> {
    let ctx = format!(
        "resource \"{}\" \"{}\"",
        block.addr.type_name, block.addr.name
    );
    expand_meta(block.count.as_ref(), block.for_each.as_ref(), ctx, scope)
}

/// The instances of a module call.
pub fn expand_call(call: &ModuleCall, scope: &EvalScope<'_>) -> Result<Instances, Diagnostics> {
    let ctx = format!("module \"{}\"", call.name);
    expand_meta(call.count.as_ref(), call.for_each.as_ref(), ctx, scope)
}

/// The instances `count` / `for_each` give a block (`ctx` names it in
/// diagnostics).
fn expand_meta(
    count: Option<&Expr>,
    for_each: Option<&Expr>,
    ctx: String,
    scope: &EvalScope<'_>,
) -> Result<Instances, Diagnostics> {
    if let Some(count) = count {
        return expand_count(count, &ctx, scope);
    }
    if let Some(fe) = for_each {
        return expand_for_each(fe, &ctx, scope);
    }
    Ok(Instances {
        expansion: Expansion::Single,
        keys: vec![(InstanceKey::None, None)],
        each_marks: BTreeMap::new(),
    })
}

/// The instances of a `count`: keys 0 to n - 1.
fn expand_count(count: &Expr, ctx: &str, scope: &EvalScope<'_>) -> Result<Instances, Diagnostics> {
    // Marks are dropped: Terraform accepts a sensitive count.
    let v = evaluate(count, scope)?;
    // As Terraform, a string that is a number is one ("2" from an
    // untyped variable set with -var).
    let v = match v {
        Value::String(_) => match fleetform_lang::eval::convert(v.clone(), &Type::Number) {
            Ok(n) => n,
            Err(_) => v,
        },
        v => v,
    };
    let err = |detail: &str| {
        Diagnostics::from(
            Diagnostic::error("Invalid count argument", detail)
                .at(count.range.clone())
                .in_context(ctx.to_string()),
        )
    };
    match v {
        Value::Unknown(_) => Err(err(
            "The \"count\" value depends on resource attributes that cannot be determined until apply, so fleetform cannot predict how many instances will be created.",
        )),
        Value::Number(n) => match n.as_i64() {
            Some(n) if n >= 0 => Ok(Instances {
                expansion: Expansion::Count,
                keys: (0..n).map(|i| (InstanceKey::Int(i), None)).collect(),
                each_marks: BTreeMap::new(),
            }),
            _ => Err(err(
                "The given \"count\" argument value is unsuitable: must be a whole number, zero or more.",
            )),
        },
        Value::Null(_) => Err(err(
            "The given \"count\" argument value is null. An integer is required.",
        )),
        other => Err(err(&format!(
            "The given \"count\" argument value is unsuitable: a number is required, not {}.",
            other.kind()
        ))),
    }
}

/// The instances of a `for_each`: a map's keys with their values, or a
/// set of strings, each its own key and value.
fn expand_for_each(fe: &Expr, ctx: &str, scope: &EvalScope<'_>) -> Result<Instances, Diagnostics> {
    let (v, marks) = evaluate_marked(fe, scope)?;
    let err = |detail: &str| {
        Diagnostics::from(
            Diagnostic::error("Invalid for_each argument", detail)
                .at(fe.range.clone())
                .in_context(ctx.to_string()),
        )
    };
    // A set's elements are its keys: any sensitive element counts.
    let sensitive = marks.is_whole() || (matches!(v, Value::List(_)) && !marks.is_empty());
    if sensitive {
        return Err(err(
            "The for_each value is sensitive, or derived from a sensitive value, and its keys would become resource instance addresses that plans and state show in clear text. Use a value that is not sensitive here, or wrap it in nonsensitive() if revealing its keys is acceptable.",
        ));
    }
    match v {
        Value::Unknown(_) => Err(err(
            "The \"for_each\" value depends on resource attributes that cannot be determined until apply, so fleetform cannot predict how many instances will be created.",
        )),
        Value::Map(m) => Ok(Instances {
            expansion: Expansion::ForEach,
            each_marks: m
                .keys()
                .map(|k| {
                    let key = InstanceKey::Str(k.to_string());
                    (key, marks.child(&PathStep::Key(k.to_string())))
                })
                .filter(|(_, m)| !m.is_empty())
                .collect(),
            keys: m
                .into_iter()
                .map(|(k, v)| (InstanceKey::Str(k.to_string()), Some(v)))
                .collect(),
        }),
        Value::List(items) => {
            let mut keys = Vec::new();
            for item in items {
                match item {
                    Value::String(s) => {
                        keys.push((InstanceKey::Str(s.clone()), Some(Value::String(s))))
                    }
                    Value::Unknown(_) => {
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
                each_marks: BTreeMap::new(),
            })
        }
        Value::Null(_) => Err(err(
            "The given \"for_each\" argument value is null. A map, or set of strings is allowed.",
        )),
        other => Err(err(&format!(
            "The given \"for_each\" argument value is unsuitable: the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.",
            other.kind()
        ))),
    }
}
