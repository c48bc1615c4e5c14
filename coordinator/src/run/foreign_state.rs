//! The guard against planning one configuration against another's state.
//!
//! A state whose objects all belong to resources the configuration does not
//! declare is the signature of the wrong state: a directory bound to the
//! project of another configuration, or a `destroy` run from the wrong
//! directory. Planning would destroy every one of those objects, so the run
//! stops before planning and says which configuration last wrote the state
//! and how to proceed. Terraform has no such guard; it ties a configuration
//! to its state through the backend block alone, and a fleet that serves
//! many configurations needs the second line of defence.
//!
//! A state last written from the same host and directory as the run's
//! configuration is that configuration's, whatever it declares now (its
//! author removed every resource block, and the plan destroys their
//! objects, as Terraform's would): only another configuration is refused.
//!
//! Declared means: a resource block at the object's module path, or any
//! `removed` block in the configuration (which says the author knows about
//! objects that are no longer declared). `moved` blocks have already been
//! applied to the state when the guard runs, so a moved object counts under
//! its new address.

use crate::store::{HistoryEntry, project_of, workspace_of};
use fleetform_lang::config::Config;
use fleetform_shared::addr::{AbsResourceInstance, ResourceMode};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::state::State;

/// How many of the undeclared resources the refusal names.
const NAMED: usize = 5;

/// The managed objects of `prior` when the configuration declares none of
/// their resources; empty when the state and the configuration overlap (or
/// the state holds nothing, or the configuration has `removed` blocks).
pub(crate) fn unrelated_objects<'a>(
    config: &Config,
    prior: &'a State,
) -> Vec<&'a AbsResourceInstance> {
    if config
        .modules()
        .iter()
        .any(|m| !m.module.removed.is_empty())
    {
        return Vec::new();
    }
    let managed: Vec<&AbsResourceInstance> = prior
        .resources
        .keys()
        .chain(prior.interrupted.keys())
        .filter(|a| a.resource.resource.mode == ResourceMode::Managed)
        .collect();
    let declared = |a: &&AbsResourceInstance| {
        config
            .module(&a.module.module())
            .is_some_and(|m| m.module.resources.contains_key(&a.resource.resource))
    };
    if managed.iter().any(declared) {
        return Vec::new();
    }
    managed
}

/// Whether the state's last writer was the run's own configuration: the
/// same `HOST:DIRECTORY` (an unknown source is never the same).
pub(crate) fn same_source(last: Option<&HistoryEntry>, source: &str) -> bool {
    !source.is_empty() && last.is_some_and(|h| h.source == source)
}

/// The refusal for a run whose configuration declares none of `objects`,
/// the managed objects of the state under `key`; `last` is the state's
/// newest history record, when it has one.
pub(crate) fn refusal(
    key: &str,
    objects: &[&AbsResourceInstance],
    last: Option<&HistoryEntry>,
) -> Diagnostic {
    let mut resources: Vec<String> = objects
        .iter()
        .map(|a| {
            let mut r = a.module.module().to_string();
            if !r.is_empty() {
                r.push('.');
            }
            r.push_str(&a.resource.resource.to_string());
            r
        })
        .collect();
    resources.dedup();
    let shown = if resources.len() > NAMED {
        format!(
            "{} and {} more",
            resources[..NAMED].join(", "),
            resources.len() - NAMED
        )
    } else {
        resources.join(", ")
    };
    let whose = match project_of(key) {
        Some(p) => format!("Workspace {:?} of project {p:?}", workspace_of(key)),
        None => format!("Workspace {key:?}"),
    };
    let writer = match last {
        Some(h) => {
            let from = if h.source.is_empty() {
                String::new()
            } else {
                format!(" from {}", h.source)
            };
            let run = if h.run_id.is_empty() {
                String::new()
            } else {
                format!(" by run {}", h.run_id)
            };
            format!(
                " It was last written{run} ({}){from} at {}.",
                if h.operation.is_empty() {
                    "unknown operation"
                } else {
                    &h.operation
                },
                h.written_at
            )
        }
        None => String::new(),
    };
    Diagnostic::error(
        "The state belongs to another configuration",
        format!(
            "{whose} holds {} object(s) of resources this configuration does not declare ({shown}), and none that it declares.{writer} A plan now would destroy every one of them.\n\nIf this directory should have a state of its own, bind it to its own project:\n  fleetform init -project=NAME -reconfigure\nIf this configuration is meant to take over this state and destroy those objects, run the command again with -adopt-state.",
            objects.len(),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_lang::config::load_config;
    use fleetform_shared::state::InstanceState;
    use std::collections::BTreeMap;

    fn config(text: &str) -> Config {
        let files = BTreeMap::from([("main.tf".to_string(), text.to_string())]);
        let (config, diags) = load_config(&files);
        assert!(!diags.has_errors(), "{diags:?}");
        config.expect("loads")
    }

    fn state(addrs: &[&str]) -> State {
        let mut s = State::new("l");
        for a in addrs {
            let empty = InstanceState {
                provider: "hashicorp/null".parse().expect("provider"),
                current: None,
                deposed: BTreeMap::new(),
            };
            s.resources.insert(a.parse().expect("address"), empty);
        }
        s
    }

    #[test]
    fn a_state_of_only_undeclared_resources_is_unrelated() {
        let other = config("resource \"null_resource\" \"big\" {}\n");
        let prior = state(&["null_resource.a", "null_resource.b[1]"]);
        assert_eq!(unrelated_objects(&other, &prior).len(), 2);
        // One shared resource is enough: that is an ordinary plan that
        // drops some resources.
        let overlapping = config("resource \"null_resource\" \"a\" {}\n");
        assert!(unrelated_objects(&overlapping, &prior).is_empty());
        // Nothing to lose: an empty state.
        assert!(unrelated_objects(&other, &State::new("l")).is_empty());
        // A removed block says the author knows about dropped objects.
        let removing = config(
            "removed {\n  from = null_resource.a\n  lifecycle {\n    destroy = true\n  }\n}\n",
        );
        assert!(unrelated_objects(&removing, &prior).is_empty());
    }

    #[test]
    fn only_the_same_known_directory_is_the_same_configuration() {
        let written = |source: &str| HistoryEntry {
            source: source.into(),
            ..HistoryEntry::default()
        };
        assert!(same_source(Some(&written("h:/a")), "h:/a"));
        assert!(!same_source(Some(&written("h:/a")), "h:/b"));
        assert!(!same_source(Some(&written("h2:/a")), "h:/a"));
        assert!(!same_source(Some(&written("")), ""));
        assert!(!same_source(None, "h:/a"));
    }

    #[test]
    fn data_sources_and_module_paths_are_told_apart() {
        let prior = state(&["data.null_data_source.d", "module.m.null_resource.a"]);
        // The root's null_resource.a is not module.m's.
        let root_only = config("resource \"null_resource\" \"a\" {}\n");
        let unrelated = unrelated_objects(&root_only, &prior);
        assert_eq!(unrelated.len(), 1, "the data source is not counted");
        let d = refusal(
            "team/prod",
            &unrelated,
            Some(&HistoryEntry {
                serial: 3,
                run_id: "r-1".into(),
                operation: "apply".into(),
                source: "host-a:/src/app".into(),
                written_at: "2026-11-28T01:00:00Z".into(),
                ..HistoryEntry::default()
            }),
        );
        assert_eq!(d.summary, "The state belongs to another configuration");
        for part in [
            "Workspace \"prod\" of project \"team\"",
            "module.m.null_resource.a",
            "by run r-1 (apply) from host-a:/src/app at 2026-11-28T01:00:00Z",
            "fleetform init -project=NAME -reconfigure",
            "-adopt-state",
        ] {
            assert!(d.detail.contains(part), "{part:?} in {}", d.detail);
        }
    }
}
