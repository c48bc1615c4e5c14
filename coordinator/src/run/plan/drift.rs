//! Drift: objects that changed outside fleetform, told by comparing what
//! the state records with what refreshing found, and which of it matters
//! to a plan's changes (Terraform's `resource_drift` and
//! `relevant_attributes`).

use fleetform_lang::config::{Changed, Config, contributing_attributes};
use fleetform_shared::addr::{AbsResourceInstance, ModuleInstance, ProviderAddr};
use fleetform_shared::plan::{Action, OutputChange, PlanMode, RelevantAttribute, ResourceChange};
use fleetform_shared::state::{ObjectState, State};
use fleetform_shared::value::Value;
use std::collections::{BTreeMap, HashSet};

/// The drift of one object: `before` is what the state records (as its
/// schema upgrade left it, when that changed it), `refreshed` what reading
/// it found (`None`: it is gone). `None` when nothing changed.
pub(in crate::run) fn drift_of(
    addr: &AbsResourceInstance,
    provider: &ProviderAddr,
    state: &ObjectState,
    before: &Value,
    refreshed: Option<&Value>,
) -> Option<ResourceChange> {
    let (action, after) = match refreshed {
        None => (Action::Delete, Value::null()),
        Some(v) if v == before => return None,
        Some(v) => (Action::Update, v.clone()),
    };
    Some(ResourceChange {
        before: before.clone(),
        after,
        schema_version: state.schema_version,
        // The state's marks hold for the refreshed object too; the schema's
        // are added with the plan's (`sensitivity::mark_changes`).
        sensitive_paths: state.sensitive_paths.clone().into(),
        ..ResourceChange::new(addr.clone(), provider.clone(), action)
    })
}

/// In a refresh-only plan, objects a `moved` block rebound and that did
/// not otherwise change are drift too (Terraform shows them there, as
/// nothing else in such a plan would).
pub(in crate::run) fn moved_only(
    mode: PlanMode,
    prior: &State,
    moved: &[(AbsResourceInstance, AbsResourceInstance)],
    changes: &[ResourceChange],
    drift: &[ResourceChange],
) -> Vec<ResourceChange> {
    if mode != PlanMode::RefreshOnly {
        return vec![];
    }
    let drifted: HashSet<&AbsResourceInstance> = drift.iter().map(|d| &d.addr).collect();
    let targets: HashSet<&AbsResourceInstance> = moved.iter().map(|(_, to)| to).collect();
    changes
        .iter()
        .filter(|c| c.deposed.is_none() && targets.contains(&c.addr))
        .filter(|c| !drifted.contains(&c.addr) && !c.before.is_null())
        .map(|c| ResourceChange {
            before: c.before.clone(),
            after: c.before.clone(),
            schema_version: c.schema_version,
            sensitive_paths: prior
                .current(&c.addr)
                .map(|o| o.sensitive_paths.clone())
                .unwrap_or_default()
                .into(),
            ..ResourceChange::new(c.addr.clone(), c.provider.clone(), Action::NoOp)
        })
        .collect()
}

/// The resource attributes the plan's changes may depend on (Terraform's
/// `relevant_attributes`): those that a resource planning a change or a
/// root output that changes reads, directly or through locals, module
/// boundaries and other resources' arguments, drifted or not. Not what
/// only the changing resource itself holds: its own drift is what its
/// change undoes, and the change shows it.
pub(in crate::run) fn relevant(
    config: &Config,
    changes: &[ResourceChange],
    outputs: &BTreeMap<String, OutputChange>,
) -> Vec<RelevantAttribute> {
    let resources = changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .map(|c| Changed::Resource(c.addr.clone()));
    let outputs = outputs
        .iter()
        .filter(|(_, o)| o.action != Action::NoOp)
        .map(|(name, _)| Changed::Output(ModuleInstance::root(), name.clone()));
    let changed: Vec<Changed> = resources.chain(outputs).collect();
    contributing_attributes(config, &changed)
        .into_iter()
        .map(|a| RelevantAttribute {
            resource: a.resource,
            attribute: a.path,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(v: Value) -> ObjectState {
        ObjectState {
            value: v,
            private: vec![],
            schema_version: 0,
            status: Default::default(),
            dependencies: vec![],
            create_before_destroy: false,
            sensitive_paths: vec![],
            value_sensitive_paths: None,
            undecoded: false,
        }
    }

    #[test]
    fn drift_is_a_deletion_or_an_update_of_what_state_records() {
        let addr: AbsResourceInstance = "local_file.f".parse().unwrap();
        let p = ProviderAddr::implied("local");
        let old = Value::object([("id", Value::from("1")), ("content", Value::from("a"))]);
        let new = Value::object([("id", Value::from("1")), ("content", Value::from("b"))]);
        let s = state(old.clone());
        assert_eq!(drift_of(&addr, &p, &s, &old, Some(&old)), None);
        let gone = drift_of(&addr, &p, &s, &old, None).unwrap();
        assert_eq!(
            (gone.action, &gone.before, &gone.after),
            (Action::Delete, &old, &Value::null())
        );
        let changed = drift_of(&addr, &p, &s, &old, Some(&new)).unwrap();
        assert_eq!((changed.action, &changed.after), (Action::Update, &new));
    }

    /// The attributes a change reads are relevant (here `b` reads `a.size`
    /// through a local, and not `a.tags`), not when only the object itself
    /// changes, nor when what reads them does not change; a changing output
    /// makes what it reads relevant.
    #[test]
    fn attributes_read_by_what_changes_are_relevant() {
        let files = std::collections::BTreeMap::from([(
            "main.tf".to_string(),
            r#"
resource "sim_object" "a" {
  name = "a"
  tags = { k = "v" }
}
locals {
  size = sim_object.a.size
}
resource "sim_object" "b" {
  name = "b"
  size = local.size
}
resource "sim_object" "c" {
  name = "c"
}
output "c" {
  value = sim_object.c.tags["k"]
}
"#
            .to_string(),
        )]);
        let (config, diags) = fleetform_lang::config::load_config(&files);
        assert!(!diags.has_errors(), "{diags:?}");
        let config = config.unwrap();
        let p = ProviderAddr::implied("sim");
        let change =
            |addr: &str, action| ResourceChange::new(addr.parse().unwrap(), p.clone(), action);
        let relevant = |changes: &[ResourceChange], outputs: &BTreeMap<String, OutputChange>| {
            relevant(&config, changes, outputs)
                .into_iter()
                .map(|r| {
                    let path = fleetform_shared::value::path_string(&r.attribute);
                    format!("{} {path}", r.resource)
                })
                .collect::<Vec<_>>()
        };
        let none = BTreeMap::new();
        assert!(relevant(&[change("sim_object.a", Action::Update)], &none).is_empty());
        assert!(relevant(&[change("sim_object.b", Action::NoOp)], &none).is_empty());
        assert_eq!(
            relevant(&[change("sim_object.b", Action::Update)], &none),
            ["sim_object.a size"]
        );
        let output = BTreeMap::from([(
            "c".to_string(),
            OutputChange {
                action: Action::Update,
                before: None,
                after: Value::null(),
                sensitive: false,
            },
        )]);
        assert_eq!(relevant(&[], &output), ["sim_object.c tags.k"]);
    }
}
