//! Configuration-driven planning behaviours of the `lifecycle` block:
//! `ignore_changes` (the prior value stands in for the configured one) and
//! `prevent_destroy` (a plan that destroys the object fails).

use crate::config::{IgnoreChanges, ResourceBlock};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::plan::{Action, ResourceChange};
use fleetform_shared::value::{PathStep, Value};

/// The configuration with every ignored attribute replaced by its prior
/// value. Nothing is ignored when there is no prior object (a create).
pub fn apply_ignore_changes(config: Value, prior: Option<&Value>, ignore: &IgnoreChanges) -> Value {
    let Some(prior) = prior.filter(|p| !p.is_null()) else {
        return config;
    };
    match ignore {
        IgnoreChanges::None => config,
        // `all`: keep every prior argument; computed-only attributes are
        // null in config either way.
        IgnoreChanges::All => match (config, prior) {
            (Value::Map(c), Value::Map(p)) => Value::Map(
                c.into_iter()
                    .map(|(k, v)| {
                        let v = if v.is_null() {
                            v
                        } else {
                            p.get(&k).cloned().unwrap_or(Value::null())
                        };
                        (k, v)
                    })
                    .collect(),
            ),
            (config, _) => config,
        },
        IgnoreChanges::Paths(paths) => {
            let mut out = config;
            for (path, _) in paths {
                let prior_value = prior.at_path(path).cloned().unwrap_or(Value::null());
                set_path(&mut out, path, prior_value);
            }
            out
        }
    }
}

/// Sets the value at `path`, creating map entries as needed; a path through
/// a missing list element or a non-collection changes nothing.
fn set_path(target: &mut Value, path: &[PathStep], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        *target = value;
        return;
    };
    match (first, target) {
        (PathStep::Key(k), Value::Map(m)) => {
            if rest.is_empty() {
                m.insert(k.clone(), value);
            } else if let Some(inner) = m.get_mut(k) {
                set_path(inner, rest, value);
            }
        }
        (PathStep::Index(i), Value::List(items)) => {
            if let Some(inner) = usize::try_from(*i).ok().and_then(|i| items.get_mut(i)) {
                set_path(inner, rest, value);
            }
        }
        _ => {}
    }
}

/// `prevent_destroy`: an error for a change that would destroy the current
/// object of a resource declaring it.
pub fn check_prevent_destroy(change: &ResourceChange, block: &ResourceBlock) -> Option<Diagnostic> {
    let destroys = matches!(
        change.action,
        Action::Delete | Action::DeleteThenCreate | Action::CreateThenDelete
    );
    if !block.lifecycle.prevent_destroy || !destroys || change.deposed.is_some() {
        return None;
    }
    Some(
        Diagnostic::error(
            "Instance cannot be destroyed",
            format!(
                "Resource {} has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed. To avoid this error and continue with the plan, either disable lifecycle.prevent_destroy or reduce the scope of the plan using the -target option.",
                change.addr
            ),
        )
        .at(block.decl_range.clone())
        .in_context(block.header())
        .for_address(&change.addr),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(tags: &[(&str, &str)], size: i64) -> Value {
        Value::object([
            (
                "tags",
                Value::object(tags.iter().map(|(k, v)| (*k, Value::from(*v)))),
            ),
            ("size", Value::int(size)),
        ])
    }

    #[test]
    fn ignored_attributes_take_the_prior_value() {
        let prior = obj(&[("a", "1")], 1);
        let config = obj(&[("a", "2")], 5);
        let ignore = IgnoreChanges::Paths(vec![(
            vec![PathStep::Key("tags".into())],
            Default::default(),
        )]);
        assert_eq!(
            apply_ignore_changes(config.clone(), Some(&prior), &ignore),
            obj(&[("a", "1")], 5)
        );
        let nested = IgnoreChanges::Paths(vec![(
            vec![PathStep::Key("tags".into()), PathStep::Key("a".into())],
            Default::default(),
        )]);
        assert_eq!(
            apply_ignore_changes(config.clone(), Some(&prior), &nested),
            obj(&[("a", "1")], 5)
        );
        assert_eq!(
            apply_ignore_changes(config.clone(), Some(&prior), &IgnoreChanges::All),
            prior
        );
        assert_eq!(
            apply_ignore_changes(config.clone(), None, &IgnoreChanges::All),
            config,
            "creates use the configuration"
        );
    }
}
