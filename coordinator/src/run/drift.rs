//! Drift: objects that changed outside fleetform, told by comparing what
//! the state records with what refreshing found, and which of it matters
//! to a plan's changes (Terraform's `resource_drift` and
//! `relevant_attributes`).

use fleetform_lang::graph::config::{ConfigGraph, ConfigNode};
use fleetform_shared::addr::{AbsResourceInstance, ProviderAddr};
use fleetform_shared::plan::{Action, OutputChange, PlanMode, RelevantAttribute, ResourceChange};
use fleetform_shared::state::{ObjectState, State};
use fleetform_shared::value::Value;
use std::collections::{BTreeMap, HashSet};

/// The drift of one object: `before` is what the state records (as its
/// schema upgrade left it, when that changed it), `refreshed` what reading
/// it found (`None`: it is gone). `None` when nothing changed.
pub(super) fn drift_of(
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
        sensitive_paths: state.sensitive_paths.clone(),
        ..ResourceChange::new(addr.clone(), provider.clone(), action)
    })
}

/// In a refresh-only plan, objects a `moved` block rebound and that did
/// not otherwise change are drift too (Terraform shows them there, as
/// nothing else in such a plan would).
pub(super) fn moved_only(
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
                .unwrap_or_default(),
            ..ResourceChange::new(c.addr.clone(), c.provider.clone(), Action::NoOp)
        })
        .collect()
}

/// The drifted objects the plan's changes may depend on: those upstream,
/// in the configuration graph, of a resource that plans a change or of a
/// root output that changes. Not the changing resource itself (its own
/// drift is what its change undoes, and the change shows it), as
/// Terraform. Terraform follows references down to attributes; this
/// follows the graph's edges, which join whole resources (and also come
/// from `depends_on` and module calls), so an object is relevant whole, a
/// little more often than in Terraform.
pub(super) fn relevant(
    graph: &ConfigGraph,
    changes: &[ResourceChange],
    outputs: &BTreeMap<String, OutputChange>,
    drift: &[ResourceChange],
) -> Vec<RelevantAttribute> {
    if drift.iter().all(|d| d.action == Action::NoOp) {
        return vec![];
    }
    let changed = changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .filter_map(|c| graph.id(&ConfigNode::Resource(c.addr.config_resource())));
    let root = fleetform_shared::addr::Module::root();
    let outputs = outputs
        .iter()
        .filter(|(_, o)| o.action != Action::NoOp)
        .filter_map(|(name, _)| graph.id(&ConfigNode::Output(root.clone(), name.clone())));
    let not_provider = |n: &ConfigNode| !matches!(n, ConfigNode::Provider(_));
    let starts: HashSet<_> = changed
        .chain(outputs)
        .flat_map(|id| graph.dag.dependencies(id).collect::<Vec<_>>())
        .filter(|id| not_provider(graph.dag.node(*id)))
        .collect();
    let upstream: HashSet<_> = graph
        .dag
        .ancestors_through(starts, not_provider)
        .into_iter()
        .filter_map(|id| match graph.dag.node(id) {
            ConfigNode::Resource(r) => Some(r.clone()),
            _ => None,
        })
        .collect();
    let mut out: Vec<RelevantAttribute> = drift
        .iter()
        .filter(|d| d.action != Action::NoOp && upstream.contains(&d.addr.config_resource()))
        .map(|d| RelevantAttribute {
            resource: d.addr.clone(),
            attribute: vec![],
        })
        .collect();
    out.sort();
    out.dedup();
    out
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

    /// Drift is relevant when something that changes depends on it (here
    /// `b` on `a` through a local), not when only the drifted object itself
    /// changes, nor when what depends on it does not change.
    #[test]
    fn drift_is_relevant_upstream_of_what_changes() {
        let files = std::collections::BTreeMap::from([(
            "main.tf".to_string(),
            r#"
resource "sim_object" "a" {
  name = "a"
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
  value = sim_object.c.id
}
"#
            .to_string(),
        )]);
        let (config, diags) = fleetform_lang::config::load_config(&files);
        assert!(!diags.has_errors(), "{diags:?}");
        let graph = fleetform_lang::graph::config::build(&config.unwrap(), &[]).unwrap();
        let p = ProviderAddr::implied("sim");
        let change =
            |addr: &str, action| ResourceChange::new(addr.parse().unwrap(), p.clone(), action);
        let drift = vec![
            change("sim_object.a", Action::Update),
            change("sim_object.c", Action::Delete),
        ];
        let relevant = |changes: &[ResourceChange], outputs: &BTreeMap<String, OutputChange>| {
            relevant(&graph, changes, outputs, &drift)
                .into_iter()
                .map(|r| r.resource.to_string())
                .collect::<Vec<_>>()
        };
        let none = BTreeMap::new();
        assert!(relevant(&[change("sim_object.a", Action::Update)], &none).is_empty());
        assert!(relevant(&[change("sim_object.b", Action::NoOp)], &none).is_empty());
        assert_eq!(
            relevant(&[change("sim_object.b", Action::Update)], &none),
            ["sim_object.a"]
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
        assert_eq!(relevant(&[], &output), ["sim_object.c"]);
    }
}
