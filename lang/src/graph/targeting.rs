//! `-target` and `-exclude` (docs/planning/exclude.md): which resources a
//! plan considers. A target brings what it depends on (in a destroy, what
//! depends on it); an exclusion takes away what depends on it (in a destroy,
//! what it depends on), also through locals and outputs.

use super::config::{ConfigGraph, ConfigNode};
use fleetform_shared::addr::{
    AbsResource, AbsResourceInstance, ConfigResource, InstanceKey, ResourceMode, Target,
};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::NodeId;
use std::collections::{HashMap, HashSet};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    All,
    Target,
    Exclude,
}

/// The result of `-target` / `-exclude`.
///
/// Selection works at two levels. The graph is followed between
/// configuration resources (a dependency of a targeted resource is taken
/// whole); the resources the flags name ("seeds") are filtered instance by
/// instance, so `module.a[0].x.y` or `x.y[1]` leave the other instances of
/// their resource as they are.
#[derive(Clone, Debug)]
pub struct Selection {
    pub mode: Mode,
    /// Seeds: the resources the flags name, with the flags that name them.
    seeds: HashMap<ConfigResource, Vec<Target>>,
    /// Resources reached from the seeds through the graph (seeds not
    /// included unless also named whole).
    reached: HashSet<ConfigResource>,
    destroy: bool,
}

/// Parses `-target`/`-exclude`/`-replace` addresses.
pub fn parse_targets(raw: &[String], flag: &str) -> Result<Vec<Target>, Diagnostics> {
    let mut out = Vec::new();
    let mut diags = Diagnostics::new();
    for r in raw {
        match r.parse::<Target>() {
            Ok(t) => out.push(t),
            Err(e) => diags.push(Diagnostic::error(
                format!("Invalid {flag} address"),
                format!("{e}. A {flag} address must be a module, resource or resource instance address, such as module.a, null_resource.b or module.a[\"k\"].null_resource.b[0]."),
            )),
        }
    }
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(out)
    }
}

/// Parses `-replace` addresses: resource instances (`x.y` is the instance
/// without a key, as in Terraform).
pub fn parse_instances(
    raw: &[String],
    flag: &str,
) -> Result<Vec<AbsResourceInstance>, Diagnostics> {
    let mut out = Vec::new();
    let mut diags = Diagnostics::new();
    for t in parse_targets(raw, flag)? {
        match t {
            Target::Instance(i) => out.push(i),
            Target::Resource(r) => out.push(r.instance(InstanceKey::None)),
            Target::Module(m) => diags.push(Diagnostic::error(
                format!("Invalid {flag} address"),
                format!("{m} is a module; {flag} needs a resource instance address, such as null_resource.a[0]."),
            )),
        }
    }
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(out)
    }
}

/// Whether a target, with every module step keyless, covers all instances
/// of the resources it names.
fn covers_every_instance(t: &Target) -> bool {
    t.is_whole_resource() && t.module().0.iter().all(|(_, k)| *k == InstanceKey::None)
}

impl Selection {
    pub fn all() -> Selection {
        Selection {
            mode: Mode::All,
            seeds: HashMap::new(),
            reached: HashSet::new(),
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
        let parsed = parse_targets(raw, flag)?;
        let mut sel = Selection {
            mode: mode.clone(),
            seeds: HashMap::new(),
            reached: HashSet::new(),
            destroy,
        };
        let mut seed_ids: Vec<NodeId> = Vec::new();
        for id in graph.dag.node_ids() {
            let ConfigNode::Resource(cr) = graph.dag.node(id) else {
                continue;
            };
            let naming: Vec<Target> = parsed
                .iter()
                .filter(|t| t.touches_config_resource(cr))
                .cloned()
                .collect();
            if naming.is_empty() {
                continue;
            }
            if naming.iter().any(covers_every_instance) {
                sel.reached.insert(cr.clone());
            }
            sel.seeds.insert(cr.clone(), naming);
            seed_ids.push(id);
        }
        let follow_dependencies = matches!(
            (&mode, destroy),
            (Mode::Target, false) | (Mode::Exclude, true)
        );
        let closure = if follow_dependencies {
            graph.dag.ancestors_of(seed_ids.clone())
        } else {
            graph.dag.descendants_of(seed_ids.clone())
        };
        for id in closure {
            if let ConfigNode::Resource(r) = graph.dag.node(id) {
                // Seeds keep their own filtering; anything reached through
                // the graph is whole.
                if !seed_ids.contains(&id) {
                    sel.reached.insert(r.clone());
                }
            }
        }
        Ok(sel)
    }

    /// Whether the plan visits this resource at all.
    pub fn visits_resource(&self, r: &ConfigResource) -> bool {
        match self.mode {
            Mode::All => true,
            Mode::Target => self.reached.contains(r) || self.seeds.contains_key(r),
            Mode::Exclude => !self.reached.contains(r),
        }
    }

    /// Whether the plan considers this instance, given the resources it
    /// depends on (from state, for instances no longer configured).
    pub fn includes(&self, addr: &AbsResourceInstance, state_dependencies: &[AbsResource]) -> bool {
        let cr = addr.config_resource();
        let named = || {
            self.seeds
                .get(&cr)
                .is_some_and(|ts| ts.iter().any(|t| t.contains_instance(addr)))
        };
        match self.mode {
            Mode::All => true,
            Mode::Target => self.reached.contains(&cr) || named(),
            Mode::Exclude => {
                !self.reached.contains(&cr)
                    && !named()
                    // Outside a destroy, what depends on an excluded resource
                    // is excluded too (in a destroy the graph went the other
                    // way already).
                    && (self.destroy
                        || !state_dependencies
                            .iter()
                            .any(|d| self.reached.contains(&d.config())))
            }
        }
    }

    /// Whether a managed resource an output or local relies on is planned
    /// (for deciding whether to recalculate outputs).
    pub fn is_partial(&self) -> bool {
        self.mode != Mode::All
    }
}

/// Managed-resource filter for callers that walk dependencies.
pub fn is_managed(r: &ConfigResource) -> bool {
    r.resource.mode == ResourceMode::Managed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_config;
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
        let (c, d) = load_config(&BTreeMap::from([("main.tf".to_string(), src.to_string())]));
        assert!(!d.has_errors(), "{d}");
        let c = c.unwrap();
        let m = &c.root.module;
        let g = build(&c, &[]).unwrap();
        let t: Vec<String> = targets.iter().map(|s| s.to_string()).collect();
        let e: Vec<String> = excludes.iter().map(|s| s.to_string()).collect();
        let sel = Selection::new(&g, &t, &e, destroy)?;
        Ok(m.resources
            .keys()
            .filter(|r| {
                sel.visits_resource(&ConfigResource::root((*r).clone()))
                    && sel.includes(
                        &AbsResourceInstance::root(r.instance(InstanceKey::None)),
                        &[],
                    )
            })
            .map(|r| r.name.to_string())
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

    fn planned_modules(files: &[(&str, &str)], targets: &[&str], excludes: &[&str]) -> Vec<String> {
        let files = files
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let (c, d) = load_config(&files);
        assert!(!d.has_errors(), "{d}");
        let c = c.unwrap();
        let g = build(&c, &[]).unwrap();
        let t: Vec<String> = targets.iter().map(|s| s.to_string()).collect();
        let e: Vec<String> = excludes.iter().map(|s| s.to_string()).collect();
        let sel = Selection::new(&g, &t, &e, false).unwrap();
        // Two instances of module a, each with x[0] and x[1]; the root's y.
        let mut out = Vec::new();
        for addr in [
            "module.a[0].null_resource.x[0]",
            "module.a[0].null_resource.x[1]",
            "module.a[1].null_resource.x[0]",
            "module.a[1].null_resource.x[1]",
            "null_resource.y",
        ] {
            let a: AbsResourceInstance = addr.parse().unwrap();
            if sel.visits_resource(&a.config_resource()) && sel.includes(&a, &[]) {
                out.push(addr.to_string());
            }
        }
        out
    }

    #[test]
    fn module_addresses_select_instances_of_module_instances() {
        let files = [
            (
                "main.tf",
                "module \"a\" {\n  source = \"./a\"\n  count  = 2\n}\nresource \"null_resource\" \"y\" {\n  triggers = { a = module.a[0].id }\n}\n",
            ),
            (
                "a/main.tf",
                "resource \"null_resource\" \"x\" {\n  count = 2\n}\noutput \"id\" {\n  value = null_resource.x[0].id\n}\n",
            ),
        ];
        let all_a = [
            "module.a[0].null_resource.x[0]",
            "module.a[0].null_resource.x[1]",
            "module.a[1].null_resource.x[0]",
            "module.a[1].null_resource.x[1]",
        ];
        assert_eq!(planned_modules(&files, &["module.a"], &[]), all_a);
        assert_eq!(
            planned_modules(&files, &["module.a.null_resource.x"], &[]),
            all_a
        );
        assert_eq!(
            planned_modules(&files, &["module.a[1]"], &[]),
            [
                "module.a[1].null_resource.x[0]",
                "module.a[1].null_resource.x[1]"
            ]
        );
        assert_eq!(
            planned_modules(&files, &["module.a[0].null_resource.x[1]"], &[]),
            ["module.a[0].null_resource.x[1]"]
        );
        // y depends on the module's output, hence on its resources: whole.
        let mut with_y = all_a.to_vec();
        with_y.push("null_resource.y");
        assert_eq!(planned_modules(&files, &["null_resource.y"], &[]), with_y);
        // Excluding one module instance's resource leaves the other's in,
        // and takes y (which depends on the resource) out.
        assert_eq!(
            planned_modules(&files, &[], &["module.a[0].null_resource.x"]),
            [
                "module.a[1].null_resource.x[0]",
                "module.a[1].null_resource.x[1]"
            ]
        );
        assert!(planned_modules(&files, &[], &["module.a"]).is_empty());
    }

    #[test]
    fn replace_takes_instances_and_refuses_modules() {
        let ok = parse_instances(
            &["null_resource.a".into(), "module.m[\"k\"].x.y[0]".into()],
            "-replace",
        )
        .unwrap();
        assert_eq!(
            ok.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["null_resource.a", "module.m[\"k\"].x.y[0]"]
        );
        let err = parse_instances(&["module.m".into()], "-replace").unwrap_err();
        assert!(err.iter().any(|d| d.summary == "Invalid -replace address"));
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
