//! The configuration graph: every input variable, local value, output,
//! provider configuration, resource and module call of every module of the
//! tree, with an edge for every reference and `depends_on`. The plan walk
//! visits it in dependency order; a node stands for all the instances of
//! its module (the walk expands them), so the graph's size is the
//! configuration's, not the state's.
//!
//! Built as named passes, each in its own file:
//! 1. [`nodes`]: a node per declared object of every module;
//! 2. [`provider_configs`]: which provider configuration each resource uses
//!    (inheritance and `providers = {...}` passing), with their nodes;
//! 3. [`modules`]: module calls — a call's expansion before everything in the
//!    child, the child's input variables after their arguments;
//! 4. [`references`]: an edge per reference and `depends_on`, resolved in
//!    the module that makes it;
//!
//! then the result is checked for cycles.

mod modules;
mod nodes;
mod provider_configs;
mod references;

use crate::config::Config;
use fleetform_shared::addr::{AbsProviderConfig, ConfigResource, Module};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::{Dag, NodeId};
use std::collections::{BTreeSet, HashMap};
use std::fmt;

pub use provider_configs::resolve_provider;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigNode {
    Variable(Module, String),
    Local(Module, String),
    /// A provider configuration, where it is declared (or implied: in the
    /// root, for a provider no module configures).
    Provider(AbsProviderConfig),
    Resource(ConfigResource),
    Output(Module, String),
    /// A module call, by the path of the module it brings in: evaluating
    /// its `count`/`for_each` in every instance of the calling module.
    ModuleCall(Module),
}

impl ConfigNode {
    /// The module the node belongs to (for a call: the calling module).
    pub fn module(&self) -> Module {
        match self {
            ConfigNode::Variable(m, _) | ConfigNode::Local(m, _) | ConfigNode::Output(m, _) => {
                m.clone()
            }
            ConfigNode::Provider(p) => p.module.clone(),
            ConfigNode::Resource(r) => r.module.clone(),
            ConfigNode::ModuleCall(m) => m.parent().map(|(p, _)| p).unwrap_or_default(),
        }
    }
}

fn prefixed(f: &mut fmt::Formatter<'_>, m: &Module) -> fmt::Result {
    if !m.is_root() {
        write!(f, "{m}.")?;
    }
    Ok(())
}

impl fmt::Display for ConfigNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigNode::Variable(m, n) => {
                prefixed(f, m)?;
                write!(f, "var.{n}")
            }
            ConfigNode::Local(m, n) => {
                prefixed(f, m)?;
                write!(f, "local.{n}")
            }
            ConfigNode::Provider(p) => write!(f, "{p}"),
            ConfigNode::Resource(r) => write!(f, "{r}"),
            ConfigNode::Output(m, n) => {
                prefixed(f, m)?;
                write!(f, "output.{n}")
            }
            ConfigNode::ModuleCall(m) => write!(f, "{m} (expand)"),
        }
    }
}

pub struct ConfigGraph {
    pub dag: Dag<ConfigNode>,
    pub ids: HashMap<ConfigNode, NodeId>,
    /// The provider configuration each resource of the configuration uses.
    pub resource_providers: HashMap<ConfigResource, AbsProviderConfig>,
    /// Nodes that refer to a module call's whole object (`module.m`,
    /// `module.m[*]`) rather than to one of its outputs, with the module
    /// they refer to. They depend on every output and on the call; drawn
    /// as Terraform draws them, they wait for the module's close.
    pub whole_module_refs: BTreeSet<(ConfigNode, Module)>,
}

impl ConfigGraph {
    pub fn id(&self, node: &ConfigNode) -> Option<NodeId> {
        self.ids.get(node).copied()
    }

    fn add(&mut self, node: ConfigNode) -> NodeId {
        if let Some(id) = self.ids.get(&node) {
            return *id;
        }
        let id = self.dag.add_node(node.clone());
        self.ids.insert(node, id);
        id
    }

    fn depend(&mut self, from: &ConfigNode, to: &ConfigNode) {
        if let (Some(&a), Some(&b)) = (self.ids.get(from), self.ids.get(to))
            && a != b
        {
            self.dag.add_dependency(a, b);
        }
    }
}

/// Builds the graph; unknown references and cycles are diagnostics.
/// `orphans` are resources with objects only in state (no longer
/// configured), each with the provider configuration its state records:
/// they are planned (destroyed) with it, so it must still be configured.
pub fn build(
    config: &Config,
    orphans: &[(ConfigResource, AbsProviderConfig)],
) -> Result<ConfigGraph, Diagnostics> {
    let mut g = ConfigGraph {
        dag: Dag::new(),
        ids: HashMap::new(),
        resource_providers: HashMap::new(),
        whole_module_refs: BTreeSet::new(),
    };
    let mut diags = Diagnostics::new();
    nodes::add(&mut g, config);
    tracing_pass("nodes", &g);
    provider_configs::add(&mut g, config, orphans, &mut diags);
    tracing_pass("provider_configs", &g);
    modules::add(&mut g, config, &mut diags);
    tracing_pass("modules", &g);
    references::add(&mut g, config, &mut diags);
    tracing_pass("references", &g);
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

fn tracing_pass(name: &str, g: &ConfigGraph) {
    tracing::trace!(
        pass = name,
        nodes = g.dag.len(),
        edges = g.dag.edge_count(),
        "configuration graph pass"
    );
}
