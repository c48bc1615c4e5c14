//! `-target` and `-exclude` (seeds/rfc-exclude-flag.md): which resources a
//! plan considers. A target brings what it depends on (in a destroy, what
//! depends on it); an exclusion takes away what depends on it (in a destroy,
//! what it depends on), also through locals and outputs.

use super::config::{ConfigGraph, ConfigNode};
use fleetform_shared::addr::{AbsResource, AbsResourceInstance, InstanceKey, Resource, Target};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::NodeId;
use std::collections::HashSet;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    All,
    Target,
    Exclude,
}

/// The result of `-target` / `-exclude`.
#[derive(Clone, Debug)]
pub struct Selection {
    pub mode: Mode,
    /// Resources the plan considers (Target) or leaves out (Exclude).
    resources: HashSet<Resource>,
    /// Instances named with a key: in Target mode only these instances of
    /// their resource; in Exclude mode these instances are left out.
    instances: HashSet<AbsResourceInstance>,
    /// Resources named whole (not through one of their instances).
    named_whole: HashSet<Resource>,
    destroy: bool,
}

/// Parses `-target`/`-exclude`/`-replace` addresses into [`Target`]s and
/// then into (instance, named whole) pairs.
///
/// Until modules are planned, an address inside a module is refused: taking
/// `module.x.null_resource.a` as the root's `null_resource.a` would act on
/// the wrong object.
pub fn parse_addresses(
    raw: &[String],
    flag: &str,
) -> Result<Vec<(AbsResourceInstance, bool)>, Diagnostics> {
    let mut out = Vec::new();
    let mut diags = Diagnostics::new();
    for r in raw {
        match r.parse::<Target>() {
            Ok(t) if !t.module().is_root() => diags.push(Diagnostic::error(
                format!("Invalid {flag} address"),
                format!("The address {r:?} is inside a module. fleetform does not plan module calls yet, so {flag} accepts only resources of the root module, such as null_resource.a or null_resource.a[0]."),
            )),
            Ok(Target::Module(_)) => unreachable!("a module target is never in the root"),
            Ok(Target::Resource(a)) => out.push((a.instance(InstanceKey::None), true)),
            Ok(Target::Instance(a)) => out.push((a, false)),
            Err(e) => diags.push(Diagnostic::error(
                format!("Invalid {flag} address"),
                format!("{e}. A {flag} address must be a resource or resource instance address, such as null_resource.a or null_resource.a[0]."),
            )),
        }
    }
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(out)
    }
}

impl Selection {
    pub fn all() -> Selection {
        Selection {
            mode: Mode::All,
            resources: HashSet::new(),
            instances: HashSet::new(),
            named_whole: HashSet::new(),
            destroy: false,
        }
    }

    /// Computes the selection; `destroy` inverts the direction dependencies
    /// are followed in.
    pub fn new(
        graph: &ConfigGraph,
        targets: &[String],
        excludes: &[String],
        destroy: bool,
    ) -> Result<Selection, Diagnostics> {
        if !targets.is_empty() && !excludes.is_empty() {
            return Err(Diagnostic::error(
                "Invalid combination of arguments",
                "-target and -exclude flags cannot be used together. Please remove one of the flags.",
            )
            .into());
        }
        let (mode, raw, flag) = match (targets.is_empty(), excludes.is_empty()) {
            (false, _) => (Mode::Target, targets, "-target"),
            (_, false) => (Mode::Exclude, excludes, "-exclude"),
            _ => return Ok(Selection::all()),
        };
        let addrs = parse_addresses(raw, flag)?;
        let mut sel = Selection {
            mode: mode.clone(),
            resources: HashSet::new(),
            instances: HashSet::new(),
            named_whole: HashSet::new(),
            destroy,
        };
        let mut seeds: Vec<NodeId> = Vec::new();
        for (a, whole) in &addrs {
            let r = a.resource.resource.clone();
            if *whole {
                sel.named_whole.insert(r.clone());
            } else {
                sel.instances.insert(a.clone());
            }
            if let Some(id) = graph.id(&ConfigNode::Resource(r.clone())) {
                // An instance exclusion leaves its resource's other instances
                // in, but everything depending on the resource out.
                seeds.push(id);
            }
            sel.resources.insert(r);
        }
        let follow_dependencies = matches!(
            (&mode, destroy),
            (Mode::Target, false) | (Mode::Exclude, true)
        );
        let closure = if follow_dependencies {
            graph.dag.ancestors_of(seeds.clone())
        } else {
            graph.dag.descendants_of(seeds.clone())
        };
        for id in closure {
            if let ConfigNode::Resource(r) = graph.dag.node(id) {
                // Instance-level seeds keep their resource partial; anything
                // reached through the graph is whole.
                if !seeds.contains(&id) {
                    sel.named_whole.insert(r.clone());
                }
                sel.resources.insert(r.clone());
            }
        }
        if mode == Mode::Exclude {
            // An instance named alone does not exclude its whole resource.
            sel.resources.retain(|r| sel.named_whole.contains(r));
        }
        Ok(sel)
    }

    /// Whether the plan visits this resource at all.
    pub fn visits_resource(&self, r: &Resource) -> bool {
        match self.mode {
            Mode::All => true,
            Mode::Target => self.resources.contains(r),
            Mode::Exclude => !self.resources.contains(r),
        }
    }

    /// Whether the plan considers this instance, given the resources it
    /// depends on (from state, for instances no longer configured).
    pub fn includes(&self, addr: &AbsResourceInstance, state_dependencies: &[AbsResource]) -> bool {
        let r = &addr.resource.resource;
        match self.mode {
            Mode::All => true,
            Mode::Target => {
                self.named_whole.contains(r)
                    || self.instances.contains(addr)
                    || (self.resources.contains(r)
                        && !self.instances.iter().any(|i| &i.resource.resource == r))
            }
            Mode::Exclude => {
                !self.resources.contains(r)
                    && !self.instances.contains(addr)
                    // Outside a destroy, what depends on an excluded resource
                    // is excluded too (in a destroy the graph went the other
                    // way already).
                    && (self.destroy
                        || !state_dependencies
                            .iter()
                            .any(|d| self.resources.contains(&d.resource)))
            }
        }
    }

    pub fn is_partial(&self) -> bool {
        self.mode != Mode::All
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_module;
    use crate::graph::config::build;
    use std::collections::BTreeMap;

    /// The RFC's example: A <- [B, C] <- D.
    const RFC: &str = r#"
resource "null_resource" "a" {}
resource "null_resource" "b" {
  triggers = { a = null_resource.a.id }
}
resource "null_resource" "c" {
  triggers = { a = null_resource.a.id }
}
resource "null_resource" "d" {
  triggers = { b = null_resource.b.id, c = null_resource.c.id }
}
"#;

    fn planned(
        src: &str,
        targets: &[&str],
        excludes: &[&str],
        destroy: bool,
    ) -> Result<Vec<String>, Diagnostics> {
        let (m, d) = load_module(&BTreeMap::from([("main.tf".to_string(), src.to_string())]));
        assert!(!d.has_errors(), "{d}");
        let m = m.unwrap();
        let g = build(&m, &[]).unwrap();
        let t: Vec<String> = targets.iter().map(|s| s.to_string()).collect();
        let e: Vec<String> = excludes.iter().map(|s| s.to_string()).collect();
        let sel = Selection::new(&g, &t, &e, destroy)?;
        Ok(m.resources
            .keys()
            .filter(|r| {
                sel.visits_resource(r)
                    && sel.includes(
                        &AbsResourceInstance::root(r.instance(InstanceKey::None)),
                        &[],
                    )
            })
            .map(|r| r.name.clone())
            .collect())
    }

    #[test]
    fn exclude_follows_the_rfc_examples() {
        assert_eq!(
            planned(RFC, &[], &["null_resource.d"], false).unwrap(),
            ["a", "b", "c"]
        );
        assert!(
            planned(RFC, &[], &["null_resource.a"], false)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            planned(RFC, &[], &["null_resource.b"], false).unwrap(),
            ["a", "c"]
        );
        assert_eq!(
            planned(RFC, &[], &["null_resource.b", "null_resource.c"], false).unwrap(),
            ["a"]
        );
        assert!(
            planned(RFC, &[], &["null_resource.a", "null_resource.b"], false)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            planned(RFC, &[], &["null_resource.e"], false).unwrap(),
            ["a", "b", "c", "d"]
        );
        assert_eq!(
            planned(RFC, &[], &["null_resource.b"], true).unwrap(),
            ["c", "d"]
        );
    }

    #[test]
    fn exclude_follows_dependencies_through_locals() {
        let src = "locals {\n  b = null_resource.a.id\n}\nresource \"null_resource\" \"a\" {}\nresource \"null_resource\" \"c\" {\n  triggers = { b = local.b }\n}\n";
        assert!(
            planned(src, &[], &["null_resource.a"], false)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn addresses_inside_modules_are_refused_not_taken_as_root_ones() {
        for addr in [
            "module.x.null_resource.a",
            "module.x",
            "module.x[0].null_resource.a[1]",
        ] {
            let err = planned(RFC, &[addr], &[], false).unwrap_err();
            assert!(
                err.iter().any(|d| d.detail.contains("inside a module")),
                "{addr}: {err}"
            );
            let err = planned(RFC, &[], &[addr], false).unwrap_err();
            assert!(
                err.iter().any(|d| d.summary == "Invalid -exclude address"),
                "{addr}"
            );
        }
        let err =
            parse_addresses(&["module.m.null_resource.a".to_string()], "-replace").unwrap_err();
        assert!(err.iter().any(|d| d.summary == "Invalid -replace address"));
        // `null_resource.a` is the whole resource, `null_resource.a[0]` one instance.
        let ok = parse_addresses(
            &["null_resource.a".into(), "null_resource.a[0]".into()],
            "-target",
        )
        .unwrap();
        assert_eq!(
            ok.iter().map(|(_, w)| *w).collect::<Vec<_>>(),
            [true, false]
        );
    }

    #[test]
    fn target_brings_dependencies_and_refuses_exclude() {
        assert_eq!(
            planned(RFC, &["null_resource.b"], &[], false).unwrap(),
            ["a", "b"]
        );
        assert_eq!(
            planned(RFC, &["null_resource.b"], &[], true).unwrap(),
            ["b", "d"]
        );
        assert!(
            planned(RFC, &["null_resource.e"], &[], false)
                .unwrap()
                .is_empty()
        );
        let err = planned(RFC, &["null_resource.a"], &["null_resource.b"], false).unwrap_err();
        assert!(
            err.iter()
                .any(|d| d.summary == "Invalid combination of arguments")
        );
    }
}
