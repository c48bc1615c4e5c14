//! The configuration graph: variables, locals, providers, resources and
//! outputs, with an edge for every reference and `depends_on`. The plan walk
//! visits it in dependency order.

use crate::config::Module;
use crate::eval::Reference;
use fleetform_shared::addr::Resource;
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::graph::{Dag, NodeId};
use std::collections::HashMap;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigNode {
    Variable(String),
    Local(String),
    /// A provider configuration by local name (`null`, `aws.west`).
    Provider(String),
    Resource(Resource),
    Output(String),
}

impl fmt::Display for ConfigNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigNode::Variable(n) => write!(f, "var.{n}"),
            ConfigNode::Local(n) => write!(f, "local.{n}"),
            ConfigNode::Provider(n) => write!(f, "provider[\"{n}\"]"),
            ConfigNode::Resource(r) => write!(f, "{r}"),
            ConfigNode::Output(n) => write!(f, "output.{n}"),
        }
    }
}

pub struct ConfigGraph {
    pub dag: Dag<ConfigNode>,
    pub ids: HashMap<ConfigNode, NodeId>,
}

impl ConfigGraph {
    pub fn id(&self, node: &ConfigNode) -> Option<NodeId> {
        self.ids.get(node).copied()
    }
}

/// Builds the graph; unknown references and cycles are diagnostics.
/// `extra_providers` are provider local names needed by resources that are
/// only in state.
pub fn build(module: &Module, extra_providers: &[String]) -> Result<ConfigGraph, Diagnostics> {
    let mut g = ConfigGraph {
        dag: Dag::new(),
        ids: HashMap::new(),
    };
    let add = |g: &mut ConfigGraph, n: ConfigNode| {
        let id = g.dag.add_node(n.clone());
        g.ids.insert(n, id);
    };
    for name in module.variables.keys() {
        add(&mut g, ConfigNode::Variable(name.clone()));
    }
    for name in module.locals.keys() {
        add(&mut g, ConfigNode::Local(name.clone()));
    }
    let mut providers: Vec<String> = module.providers.keys().cloned().collect();
    providers.extend(module.resources.values().map(|r| r.provider.clone()));
    providers.extend(extra_providers.iter().cloned());
    providers.sort();
    providers.dedup();
    for p in &providers {
        add(&mut g, ConfigNode::Provider(p.clone()));
    }
    for r in module.resources.keys() {
        add(&mut g, ConfigNode::Resource(r.clone()));
    }
    for name in module.outputs.keys() {
        add(&mut g, ConfigNode::Output(name.clone()));
    }

    let mut diags = Diagnostics::new();
    let link = |g: &mut ConfigGraph,
                from: &ConfigNode,
                refs: Vec<(Reference, SourceRange)>,
                diags: &mut Diagnostics| {
        let from_id = g.ids[from];
        for (r, range) in refs {
            let target = match &r {
                Reference::Variable(n) => ConfigNode::Variable(n.clone()),
                Reference::Local(n) => ConfigNode::Local(n.clone()),
                Reference::Resource(res) => ConfigNode::Resource(res.clone()),
                _ => continue,
            };
            match g.ids.get(&target) {
                Some(&to) => {
                    g.dag.add_dependency(from_id, to);
                }
                None => diags.push(undeclared(&target, range)),
            }
        }
    };
    for (name, local) in &module.locals {
        link(
            &mut g,
            &ConfigNode::Local(name.clone()),
            local.expr.references(),
            &mut diags,
        );
    }
    for (name, p) in &module.providers {
        link(
            &mut g,
            &ConfigNode::Provider(name.clone()),
            p.body.references(),
            &mut diags,
        );
    }
    for (addr, r) in &module.resources {
        let node = ConfigNode::Resource(addr.clone());
        let mut refs = r.body.references();
        if let Some(c) = &r.count {
            refs.extend(c.references());
        }
        if let Some(fe) = &r.for_each {
            refs.extend(fe.references());
        }
        refs.extend(r.depends_on.iter().cloned());
        for trigger in &r.lifecycle.replace_triggered_by {
            refs.extend(trigger.references());
        }
        link(&mut g, &node, refs, &mut diags);
        let from = g.ids[&node];
        let to = g.ids[&ConfigNode::Provider(r.provider.clone())];
        g.dag.add_dependency(from, to);
    }
    for (name, o) in &module.outputs {
        let mut refs = o.expr.references();
        refs.extend(o.depends_on.iter().cloned());
        link(&mut g, &ConfigNode::Output(name.clone()), refs, &mut diags);
    }
    for cycle in g.dag.cycles() {
        let mut names: Vec<String> = cycle.0.iter().map(ToString::to_string).collect();
        names.sort();
        diags.push(Diagnostic::error(
            "Cycle",
            format!("Cycle: {}", names.join(", ")),
        ));
    }
    if diags.has_errors() {
        Err(diags)
    } else {
        Ok(g)
    }
}

fn undeclared(target: &ConfigNode, range: SourceRange) -> Diagnostic {
    let (summary, detail) = match target {
        ConfigNode::Variable(n) => (
            "Reference to undeclared input variable",
            format!(
                "An input variable with the name \"{n}\" has not been declared. This variable can be declared with a variable \"{n}\" {{}} block."
            ),
        ),
        ConfigNode::Local(n) => (
            "Reference to undeclared local value",
            format!("A local value with the name \"{n}\" has not been declared."),
        ),
        ConfigNode::Resource(r) => (
            "Reference to undeclared resource",
            format!(
                "A managed resource \"{}\" \"{}\" has not been declared in the root module.",
                r.type_name, r.name
            ),
        ),
        other => (
            "Reference to undeclared object",
            format!("{other} has not been declared."),
        ),
    };
    Diagnostic::error(summary, detail).at(range)
}
