//! `graph`: Terraform's graphs in DOT, drawn from the configuration or a
//! saved plan ([`crate::present::tfgraph`]).

use crate::args::GraphArgs;
use crate::present::report::report;
use crate::present::tfgraph::{TfGraph, go_quoted};
use fleetform_lang::config::Config;
use fleetform_lang::graph::config::ConfigGraph;
use fleetform_shared::addr::{AbsProviderConfig, ConfigResource, Module, ResourceMode};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::graph::NodeId;
use std::collections::{BTreeMap, BTreeSet};

/// `graph -plan=FILE`: the apply graph of a saved plan (its
/// configuration's nodes and its changes' operations), or with
/// `-type=plan` its configuration's plan graph, in Terraform's shape.
pub fn plan_file(args: &GraphArgs) -> anyhow::Result<u8> {
    let path = args.plan.as_deref().expect("called with a plan file");
    let saved = match crate::plan_file::read(path) {
        Ok(s) => s,
        Err(d) => return Ok(report(false, &d)),
    };
    // Objects only in state are drawn under their provider's root
    // configuration: the plan does not say which one the state records.
    let providers: Vec<(ConfigResource, AbsProviderConfig)> = saved
        .plan
        .changes
        .iter()
        .map(|c| {
            let p = AbsProviderConfig {
                module: fleetform_shared::addr::Module::root(),
                provider: c.provider.clone(),
                alias: None,
            };
            (c.addr.config_resource(), p)
        })
        .collect();
    let Some((config, graph)) = config_graph(&saved.files, &providers) else {
        return Ok(1);
    };
    let mut drawing = TfGraph::from_config(&graph);
    if args.graph_type.as_deref().is_none_or(|t| t == "apply")
        && let Err(cycles) = drawing.add_plan(&saved.plan, &config, &graph)
    {
        for c in cycles {
            let d = Diagnostic::error("Cycle", c.0.join(", "));
            eprint!("{}", crate::present::run_text::diagnostic(&d, &saved.files));
        }
        return Ok(1);
    }
    print!("{}", drawing.dot());
    Ok(0)
}

/// The configuration and its graph; `None` after their diagnostics were
/// printed (the configuration does not load or has a cycle).
fn config_graph(
    files: &BTreeMap<String, String>,
    orphans: &[(ConfigResource, AbsProviderConfig)],
) -> Option<(Config, ConfigGraph)> {
    let (config, mut diags) = fleetform_lang::config::load_config(files);
    let graph = config
        .as_ref()
        .filter(|_| !diags.has_errors())
        .map(|c| fleetform_lang::graph::config::build(c, orphans));
    match (config, graph) {
        (Some(c), Some(Ok(g))) => Some((c, g)),
        (_, other) => {
            if let Some(Err(d)) = other {
                diags.extend(d);
            }
            for d in diags.iter() {
                eprint!("{}", crate::present::run_text::diagnostic(d, files));
            }
            None
        }
    }
}

/// The configuration graph of the directory `graph` draws.
fn config_graph_here(args: &GraphArgs) -> anyhow::Result<Option<ConfigGraph>> {
    let dir = args.dir.clone().unwrap_or_else(|| ".".into());
    let files = crate::bundle::pack(&dir)?;
    Ok(config_graph(&files, &[]).map(|(_, g)| g))
}

/// The configuration's resources (of every module) and, for each, the
/// resources it depends on, seen through the variables, locals, outputs
/// and module calls between them. No planning, no state. `Err` is the exit
/// code after the diagnostics are shown.
type ResourceEdges = (
    BTreeSet<ConfigResource>,
    BTreeSet<(ConfigResource, ConfigResource)>,
);

fn config_resource_graph(args: &GraphArgs) -> anyhow::Result<Result<ResourceEdges, u8>> {
    use fleetform_lang::graph::config::ConfigNode;
    let Some(graph) = config_graph_here(args)? else {
        return Ok(Err(1));
    };
    let mut edges = BTreeSet::new();
    let mut nodes = BTreeSet::new();
    for id in graph.dag.node_ids() {
        let ConfigNode::Resource(r) = graph.dag.node(id) else {
            continue;
        };
        nodes.insert(r.clone());
        let mut stack: Vec<NodeId> = graph.dag.dependencies(id).collect();
        let mut seen: BTreeSet<NodeId> = BTreeSet::new();
        while let Some(d) = stack.pop() {
            if !seen.insert(d) {
                continue;
            }
            match graph.dag.node(d) {
                ConfigNode::Resource(to) => {
                    edges.insert((r.clone(), to.clone()));
                }
                ConfigNode::Provider(_) => {}
                _ => stack.extend(graph.dag.dependencies(d)),
            }
        }
    }
    Ok(Ok((nodes, edges)))
}

/// `graph -type=plan|plan-refresh-only|apply` without a plan file: the
/// configuration's graph in Terraform's shape ([`TfGraph`]). Terraform
/// draws `-type=apply` without a plan as the apply graph of no changes,
/// which is the configuration's; neither plans.
pub fn plan(args: &GraphArgs) -> anyhow::Result<u8> {
    let Some(graph) = config_graph_here(args)? else {
        return Ok(1);
    };
    print!("{}", TfGraph::from_config(&graph).dot());
    Ok(0)
}

/// `graph -type=plan-destroy`: the configuration's resources and what each
/// depends on ([`config_resource_graph`]), edges reversed: the order a
/// destroy takes.
pub fn resources(args: &GraphArgs) -> anyhow::Result<u8> {
    let (nodes, edges) = match config_resource_graph(args)? {
        Ok(g) => g,
        Err(code) => return Ok(code),
    };
    let destroy = args.graph_type.as_deref() == Some("plan-destroy");
    let mut out = String::from("digraph {\n  rankdir = \"RL\";\n");
    for n in &nodes {
        out.push_str(&format!("  {};\n", go_quoted(&n.to_string())));
    }
    for (a, b) in &edges {
        let (a, b) = if destroy { (b, a) } else { (a, b) };
        out.push_str(&format!(
            "  {} -> {};\n",
            go_quoted(&a.to_string()),
            go_quoted(&b.to_string())
        ));
    }
    out.push_str("}\n");
    print!("{out}");
    Ok(0)
}

/// `graph` without -type or -plan: Terraform 1.11's default graph, the
/// configuration's resources only (no planning, so it is the same whether
/// or not anything would change), a DOT cluster per module.
pub fn default(args: &GraphArgs) -> anyhow::Result<u8> {
    let (nodes, edges) = match config_resource_graph(args)? {
        Ok(g) => g,
        Err(code) => return Ok(code),
    };
    print!("{}", resources_only_dot(&nodes, &edges));
    Ok(0)
}

/// Terraform's `resourcesOnlyGraph` text, line for line.
fn resources_only_dot(
    nodes: &BTreeSet<ConfigResource>,
    edges: &BTreeSet<(ConfigResource, ConfigResource)>,
) -> String {
    let mut out = String::from(
        "digraph G {\n  rankdir = \"RL\";\n  node [shape = rect, fontname = \"sans-serif\"];\n",
    );
    if nodes.is_empty() {
        out.push_str(
            "  /* This configuration does not contain any resources.         */\n  \
             /* For a more detailed graph, try: terraform graph -type=plan */\n",
        );
    }
    // Terraform's order: by module, data sources first, then type and name.
    let key = |r: &ConfigResource| {
        (
            r.module.to_string(),
            r.resource.mode != ResourceMode::Data,
            r.resource.type_name.clone(),
            r.resource.name.clone(),
        )
    };
    let mut order: Vec<&ConfigResource> = nodes.iter().collect();
    order.sort_by_key(|r| key(r));
    let mut current = Module::root();
    for r in &order {
        if r.module != current {
            if !current.is_root() {
                out.push_str("  }\n");
            }
            current = r.module.clone();
            out.push_str(&format!(
                "  subgraph {} {{\n    label = {}\n    fontname = \"sans-serif\"\n",
                go_quoted(&format!("cluster_{current}")),
                go_quoted(&current.to_string())
            ));
        }
        let indent = if current.is_root() { "  " } else { "    " };
        out.push_str(&format!(
            "{indent}{} [label={}];\n",
            go_quoted(&r.to_string()),
            go_quoted(&r.resource.to_string())
        ));
    }
    if !current.is_root() {
        out.push_str("  }\n");
    }
    for a in &order {
        for b in &order {
            if edges.contains(&((*a).clone(), (*b).clone())) {
                out.push_str(&format!(
                    "  {} -> {};\n",
                    go_quoted(&a.to_string()),
                    go_quoted(&b.to_string())
                ));
            }
        }
    }
    out.push_str("}\n");
    out
}
