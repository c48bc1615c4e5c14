//! Terraform 1.11's plan and apply graphs in DOT, as `graph -type=plan`,
//! `graph -type=apply` and `graph -plan=FILE` print them: one
//! `subgraph "root"` of nodes named `[root] …`; resources as boxes (`X
//! (expand)` for the whole resource, the instance address for its create,
//! update or read, `X (destroy)` and `X (destroy deposed KEY)` for
//! destroying); root variables as notes; providers as diamonds, with a
//! `(close)` node after everything that uses them; a `(close)` node per
//! module call after everything in the module; `[root] root` after
//! everything; edges transitively reduced; lines sorted as Terraform sorts
//! them.
//!
//! The configuration's part comes from fleetform's configuration graph,
//! the operations from a plan and the order its apply graph gives them,
//! and what only the state has (`X (orphan)`) from the workspace's state.
//! Terraform's graphs have internal nodes fleetform has no counterpart for
//! (variable validation, check blocks, ephemeral resource closes, orphaned
//! outputs); those are not drawn.

use fleetform_lang::config::Config;
use fleetform_lang::graph::config::{ConfigGraph, ConfigNode};
use fleetform_shared::addr::{AbsProviderConfig, AbsResourceInstance, Module};
use fleetform_shared::graph::apply::{ApplyGraph, ApplyNode, OpKind};
use fleetform_shared::graph::{Cycle, Dag, NodeId};
use fleetform_shared::plan::{Action, Plan, PlanMode, ResourceChange};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A graph on its way to DOT: nodes by name (without the `[root] `
/// prefix), what each waits for, what is drawn with a label.
#[derive(Default)]
pub struct TfGraph {
    /// Nodes drawn with a line of their own: name → (label, shape).
    drawn: BTreeMap<String, (String, &'static str)>,
    /// Every node → the nodes it waits for.
    deps: BTreeMap<String, BTreeSet<String>>,
    /// The module (configuration path) of each node that belongs to one,
    /// for the modules' close nodes.
    module_of: BTreeMap<String, Module>,
    /// Destroy nodes: no module's close waits for them.
    destroyers: BTreeSet<String>,
    /// Nodes of the configuration graph (not operations).
    config_nodes: BTreeSet<String>,
    providers: BTreeSet<String>,
    module_calls: BTreeSet<Module>,
}

fn in_module(m: &Module, name: &str) -> String {
    if m.is_root() {
        name.to_string()
    } else {
        format!("{m}.{name}")
    }
}

/// Terraform's name for a node of the configuration graph.
fn config_name(node: &ConfigNode) -> String {
    match node {
        ConfigNode::Resource(r) => format!("{r} (expand)"),
        ConfigNode::Provider(p) => p.to_string(),
        ConfigNode::Variable(m, n) if m.is_root() => format!("var.{n}"),
        ConfigNode::Variable(m, n) => format!("{} (expand)", in_module(m, &format!("var.{n}"))),
        ConfigNode::Local(m, n) => format!("{} (expand)", in_module(m, &format!("local.{n}"))),
        ConfigNode::Output(m, n) => format!("{} (expand)", in_module(m, &format!("output.{n}"))),
        ConfigNode::ModuleCall(m) => format!("{m} (expand)"),
    }
}

impl TfGraph {
    fn node(&mut self, name: &str, module: Option<&Module>) -> &mut BTreeSet<String> {
        if let Some(m) = module {
            self.module_of.insert(name.to_string(), m.clone());
        }
        self.deps.entry(name.to_string()).or_default()
    }

    /// The configuration's nodes and edges: what `graph -type=plan` draws,
    /// and `-type=apply` when there are no changes.
    pub fn from_config(graph: &ConfigGraph) -> TfGraph {
        let mut g = TfGraph::default();
        for id in graph.dag.node_ids() {
            let node = graph.dag.node(id);
            let name = config_name(node);
            match node {
                ConfigNode::Resource(r) => {
                    g.drawn.insert(name.clone(), (r.to_string(), "box"));
                }
                ConfigNode::Variable(m, v) if m.is_root() => {
                    g.drawn.insert(name.clone(), (format!("var.{v}"), "note"));
                }
                ConfigNode::Provider(p) => {
                    g.drawn.insert(name.clone(), (p.to_string(), "diamond"));
                    g.providers.insert(name.clone());
                }
                ConfigNode::ModuleCall(m) => {
                    g.module_calls.insert(m.clone());
                }
                _ => {}
            }
            let module = match node {
                ConfigNode::Provider(_) => None,
                other => Some(other.module()),
            };
            let targets: Vec<String> = graph
                .dag
                .dependencies(id)
                .map(|d| config_name(graph.dag.node(d)))
                .collect();
            g.node(&name, module.as_ref()).extend(targets);
            g.config_nodes.insert(name);
        }
        // A reference to a whole module object waits for all of the module.
        for (from, m) in &graph.whole_module_refs {
            g.node(&config_name(from), None)
                .insert(format!("{m} (close)"));
        }
        g
    }

    /// A module call gone from the configuration, whose objects are
    /// destroyed, keeps its close node (Terraform draws it, waiting for
    /// nothing).
    fn gone_module(&mut self, module: &Module, config: &Config) {
        if !module.is_root() && config.module(module).is_none() {
            self.node(&format!("{module} (close)"), None);
        }
    }

    /// Objects only in state, their resource gone from the configuration,
    /// as `graph -type=plan` draws them: a node `ADDR (orphan)` per
    /// instance after the provider configuration its state records (whose
    /// close waits for it), and the close of a module call gone with them.
    pub fn add_orphans(&mut self, orphans: &[(AbsResourceInstance, AbsProviderConfig)]) {
        self.add_gone_modules(orphans);
        for (addr, provider) in orphans {
            let name = format!("{addr} (orphan)");
            self.drawn
                .insert(name.clone(), (addr.config_resource().to_string(), "box"));
            let provider = config_name(&ConfigNode::Provider(provider.clone()));
            if self.providers.insert(provider.clone()) {
                self.drawn
                    .insert(provider.clone(), (provider.clone(), "diamond"));
            }
            self.node(&provider, None);
            self.node(&name, None).insert(provider);
            self.destroyers.insert(name);
        }
    }

    /// The close nodes of module calls gone from the configuration with
    /// `orphans` (`-type=apply` without a plan draws only those).
    pub fn add_gone_modules(&mut self, orphans: &[(AbsResourceInstance, AbsProviderConfig)]) {
        for (addr, _) in orphans {
            let module = addr.module.module();
            if !module.is_root() && !self.module_calls.contains(&module) {
                self.node(&format!("{module} (close)"), None);
            }
        }
    }

    /// The plan's operations: a node per create, update, read and
    /// destroy (and per unchanged instance with conditions to check), after
    /// their resource's expansion and their provider, ordered as the apply
    /// graph orders them.
    pub fn add_plan(
        &mut self,
        plan: &Plan,
        config: &Config,
        graph: &ConfigGraph,
    ) -> Result<(), Vec<Cycle<String>>> {
        let apply = ApplyGraph::build(plan)?;
        let name = |id: NodeId| match apply.dag.node(id) {
            ApplyNode::Op { change, kind } => op_name(&plan.changes[*change], *kind, &apply),
            ApplyNode::Barrier { .. } => unreachable!("barriers are seen through"),
        };
        for id in apply.dag.node_ids() {
            let ApplyNode::Op { change, kind } = apply.dag.node(id) else {
                continue;
            };
            let c = &plan.changes[*change];
            let waits: Vec<String> = op_dependencies(&apply.dag, id)
                .into_iter()
                .map(name)
                .collect();
            let n = name(id);
            self.instance(c, &n, *kind == OpKind::Apply, graph);
            self.node(&n, None).extend(waits);
            if *kind == OpKind::Destroy {
                self.destroyers.insert(n);
                self.gone_module(&c.addr.module.module(), config);
            }
        }
        // Terraform checks the conditions of an unchanged instance at apply
        // time, in a node of its own.
        for c in &plan.changes {
            if c.action == Action::NoOp && c.deposed.is_none() && has_conditions(config, c) {
                self.instance(c, &c.addr.to_string(), true, graph);
            }
        }
        // What refers to a resource waits for its instances' operations
        // as well as for its expansion.
        let mut instances: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (n, deps) in &self.deps {
            if self.config_nodes.contains(n) || self.destroyers.contains(n) {
                continue;
            }
            for d in deps.iter().filter(|d| d.ends_with(" (expand)")) {
                instances.entry(d.clone()).or_default().insert(n.clone());
            }
        }
        for n in &self.config_nodes {
            let deps = &self.deps[n];
            let more: BTreeSet<String> = deps
                .iter()
                .filter_map(|d| instances.get(d))
                .flatten()
                .cloned()
                .collect();
            self.deps.get_mut(n).expect("a node").extend(more);
        }
        if plan.mode == PlanMode::Destroy {
            self.prune_for_destroy();
        }
        Ok(())
    }

    /// A destroy keeps only what destroying needs: the destroy nodes,
    /// what they wait for, and the root module's outputs (Terraform drops
    /// the rest, which may not evaluate any more).
    fn prune_for_destroy(&mut self) {
        let mut keep: BTreeSet<String> = BTreeSet::new();
        let mut stack: Vec<String> = self.destroyers.iter().cloned().collect();
        while let Some(n) = stack.pop() {
            if keep.insert(n.clone()) {
                stack.extend(self.deps.get(&n).into_iter().flatten().cloned());
            }
        }
        // Root outputs only: a module's are named `module.M.output.N`.
        keep.extend(
            self.deps
                .keys()
                .filter(|n| n.starts_with("output."))
                .cloned(),
        );
        self.deps.retain(|n, _| keep.contains(n));
        for deps in self.deps.values_mut() {
            deps.retain(|d| keep.contains(d));
        }
        self.drawn.retain(|n, _| keep.contains(n));
        self.module_of.retain(|n, _| keep.contains(n));
        self.providers.retain(|n| keep.contains(n));
        self.module_calls.clear();
    }

    /// An instance's node `name`, after its provider and (unless it
    /// destroys) its resource's expansion.
    fn instance(&mut self, c: &ResourceChange, name: &str, applies: bool, graph: &ConfigGraph) {
        let resource = c.addr.config_resource();
        let provider = graph
            .resource_providers
            .get(&resource)
            .cloned()
            .unwrap_or_else(|| AbsProviderConfig {
                module: Module::root(),
                provider: c.provider.clone(),
                alias: None,
            })
            .to_string();
        if self.providers.insert(provider.clone()) {
            self.drawn
                .insert(provider.clone(), (provider.clone(), "diamond"));
            self.node(&provider, None);
        }
        let expand = format!("{resource} (expand)");
        let has_expand = self.deps.contains_key(&expand);
        self.drawn
            .insert(name.to_string(), (resource.to_string(), "box"));
        let deps = self.node(name, Some(&resource.module));
        deps.insert(provider);
        if applies && has_expand {
            deps.insert(expand);
        }
    }

    /// The graph in DOT, with the close nodes and the root added and the
    /// edges transitively reduced.
    pub fn dot(mut self) -> String {
        for p in std::mem::take(&mut self.providers) {
            let users: BTreeSet<String> = self
                .deps
                .iter()
                .filter(|(_, d)| d.contains(&p))
                .map(|(n, _)| n.clone())
                .collect();
            self.node(&format!("{p} (close)"), None).extend(users);
        }
        // A module's close waits for what is in it (destroying aside), for
        // its expansion and for the closes of the modules inside it.
        let calls = std::mem::take(&mut self.module_calls);
        for m in &calls {
            let mut inside: BTreeSet<String> = self
                .module_of
                .iter()
                .filter(|(n, x)| *x == m && !self.destroyers.contains(*n))
                .map(|(n, _)| n.clone())
                .collect();
            inside.insert(format!("{m} (expand)"));
            inside.extend(
                calls
                    .iter()
                    .filter(|d| *d != m && m.contains(d))
                    .map(|d| format!("{d} (close)")),
            );
            self.node(&format!("{m} (close)"), None).extend(inside);
        }
        let depended: BTreeSet<String> = self.deps.values().flatten().cloned().collect();
        let last: BTreeSet<String> = self
            .deps
            .keys()
            .filter(|n| !depended.contains(*n))
            .cloned()
            .collect();
        self.node("root", None).extend(last);
        render(&self.drawn, &reduce(&self.deps))
    }
}

/// Terraform's name for an operation node.
fn op_name(c: &ResourceChange, kind: OpKind, apply: &ApplyGraph) -> String {
    match kind {
        OpKind::Apply => c.addr.to_string(),
        OpKind::Destroy => match &c.deposed {
            Some(key) => format!("{} (destroy deposed {key})", c.addr),
            None if c.action == Action::CreateThenDelete
                || apply
                    .create_before_destroy
                    .contains(&c.addr.containing_resource()) =>
            {
                format!("{} (destroy deposed {})", c.addr, deposed_key(&c.addr))
            }
            None => format!("{} (destroy)", c.addr),
        },
    }
}

/// The key a create-before-destroy replacement would depose the current
/// object under. Terraform draws a random one, chosen when the graph is
/// built and not the one the apply will use; this one is derived from the
/// address (FNV-1a), so the drawing is the same every time.
fn deposed_key(addr: &AbsResourceInstance) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in addr.to_string().bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

fn has_conditions(config: &Config, c: &ResourceChange) -> bool {
    let r = c.addr.config_resource();
    config
        .module(&r.module)
        .and_then(|m| m.module.resources.get(&r.resource))
        .is_some_and(|b| {
            !b.lifecycle.preconditions.is_empty() || !b.lifecycle.postconditions.is_empty()
        })
}

/// The operations `id` waits for, seen through the barrier nodes that join
/// a resource's instances.
pub fn op_dependencies(dag: &Dag<ApplyNode>, id: NodeId) -> BTreeSet<NodeId> {
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<NodeId> = dag.dependencies(id).collect();
    while let Some(n) = stack.pop() {
        if !seen.insert(n) {
            continue;
        }
        match dag.node(n) {
            ApplyNode::Op { .. } => {
                out.insert(n);
            }
            ApplyNode::Barrier { .. } => stack.extend(dag.dependencies(n)),
        }
    }
    out
}

/// The edges no longer path implies: `a → c` goes when `a → b → … → c`.
fn reduce(deps: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<(String, String)> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = Vec::new();
    for n in deps.keys().chain(deps.values().flatten()) {
        index.entry(n).or_insert_with(|| {
            names.push(n);
            names.len() - 1
        });
    }
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    for (from, tos) in deps {
        adj[index[from.as_str()]] = tos.iter().map(|t| index[t.as_str()]).collect();
    }
    let mut edges = BTreeSet::new();
    let mut mark = vec![usize::MAX; names.len()];
    for (u, direct) in adj.iter().enumerate() {
        // Everything reachable from u in two steps or more.
        let mut stack: Vec<usize> = direct.iter().flat_map(|&v| adj[v].clone()).collect();
        while let Some(n) = stack.pop() {
            if mark[n] != u {
                mark[n] = u;
                stack.extend(&adj[n]);
            }
        }
        for &v in direct {
            if mark[v] != u {
                edges.insert((names[u].to_string(), names[v].to_string()));
            }
        }
    }
    edges
}

/// A name or label as Go's `%q` writes it (ASCII names: quotes and
/// backslashes escaped).
pub fn go_quoted(s: &str) -> String {
    format!("\"{}\"", escaped(s))
}

fn escaped(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Terraform's DOT text: drawn nodes sorted by their escaped names, then
/// edges sorted as lines.
fn render(
    drawn: &BTreeMap<String, (String, &'static str)>,
    edges: &BTreeSet<(String, String)>,
) -> String {
    let node = |n: &str| go_quoted(&format!("[root] {n}"));
    // Terraform sorts nodes by their escaped names, edges as lines.
    let mut nodes: Vec<(String, String)> = drawn
        .iter()
        .map(|(n, (label, shape))| {
            let line = format!(
                "{} [label = {}, shape = \"{shape}\"]",
                node(n),
                go_quoted(label)
            );
            (escaped(n), line)
        })
        .collect();
    nodes.sort();
    let mut lines: Vec<String> = edges
        .iter()
        .map(|(a, b)| format!("{} -> {}", node(a), node(b)))
        .collect();
    lines.sort();
    let mut out = String::from(
        "digraph {\n\tcompound = \"true\"\n\tnewrank = \"true\"\n\tsubgraph \"root\" {\n",
    );
    for l in nodes.iter().map(|(_, l)| l).chain(&lines) {
        out.push_str(&format!("\t\t{l}\n"));
    }
    out.push_str("\t}\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(edges: &[(&str, &str)]) -> BTreeMap<String, BTreeSet<String>> {
        let mut d: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            d.entry(a.to_string()).or_default().insert(b.to_string());
            d.entry(b.to_string()).or_default();
        }
        d
    }

    #[test]
    fn reduction_drops_only_edges_a_longer_path_implies() {
        let e = reduce(&deps(&[("a", "b"), ("b", "c"), ("a", "c"), ("a", "d")]));
        let got: Vec<(&str, &str)> = e.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(got, [("a", "b"), ("a", "d"), ("b", "c")]);
    }

    /// Nodes sort by escaped name (`x` before `x (destroy)`, `\"` after
    /// digits), edges as whole lines (`x (expand)" ->` before `x" ->`).
    #[test]
    fn lines_sort_as_terraform_sorts_them() {
        let drawn: BTreeMap<String, (String, &'static str)> =
            ["r.x (destroy)", "r.x", "r.x[\"k\"]", "r.x[0]"]
                .iter()
                .map(|n| (n.to_string(), ("r.x".to_string(), "box")))
                .collect();
        let edges: BTreeSet<(String, String)> = [("r.x", "p"), ("r.x (expand)", "p")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let text = render(&drawn, &edges);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        assert_eq!(
            lines[4..10],
            [
                r#""[root] r.x" [label = "r.x", shape = "box"]"#,
                r#""[root] r.x (destroy)" [label = "r.x", shape = "box"]"#,
                r#""[root] r.x[0]" [label = "r.x", shape = "box"]"#,
                r#""[root] r.x[\"k\"]" [label = "r.x", shape = "box"]"#,
                r#""[root] r.x (expand)" -> "[root] p""#,
                r#""[root] r.x" -> "[root] p""#,
            ],
            "{text}"
        );
    }
}
