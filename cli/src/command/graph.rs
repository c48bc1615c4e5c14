//! `graph`: Terraform's graphs in DOT, drawn from the configuration or a
//! saved plan ([`crate::present::tfgraph`]).

use crate::args::GraphArgs;
use crate::client::Client;
use crate::present::report::report;
use crate::present::tfgraph::{TfGraph, go_quoted};
use fleetform_lang::config::Config;
use fleetform_lang::graph::config::ConfigGraph;
use fleetform_shared::addr::{
    AbsProviderConfig, AbsResourceInstance, ConfigResource, Module, ResourceMode,
};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::graph::NodeId;
use fleetform_shared::state::{RecordedProvider, State};
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

/// Instances only in state, each with its provider configuration.
type Orphans = Vec<(AbsResourceInstance, AbsProviderConfig)>;

/// Each instance in `state` whose resource is gone from `config`, with the
/// provider configuration its state records (its provider's root one
/// where the state does not say).
fn orphans(config: &Config, state: &State) -> Orphans {
    state
        .resources
        .iter()
        .filter(|(addr, inst)| {
            inst.current.is_some()
                && config
                    .module(&addr.module.module())
                    .is_none_or(|m| !m.module.resources.contains_key(&addr.resource.resource))
        })
        .map(|(addr, inst)| {
            let p = match state.provider_config(addr) {
                Some(RecordedProvider::Recorded(p)) => p,
                _ => AbsProviderConfig {
                    module: Module::root(),
                    provider: inst.provider.clone(),
                    alias: None,
                },
            };
            (addr.clone(), p)
        })
        .collect()
}

/// The configuration graph of the directory `graph` draws, with the
/// resources only `state` has; `None` after the diagnostics were shown.
fn config_graph_here(
    args: &GraphArgs,
    state: &State,
) -> anyhow::Result<Option<(ConfigGraph, Orphans)>> {
    let dir = args.dir.clone().unwrap_or_else(|| ".".into());
    let files = crate::bundle::pack(&dir)?;
    let (config, _) = fleetform_lang::config::load_config(&files);
    let gone = config
        .as_ref()
        .map(|c| orphans(c, state))
        .unwrap_or_default();
    let mut per_resource: Vec<(ConfigResource, AbsProviderConfig)> = gone
        .iter()
        .map(|(a, p)| (a.config_resource(), p.clone()))
        .collect();
    per_resource.dedup_by(|a, b| a.0 == b.0);
    Ok(config_graph(&files, &per_resource).map(|(_, g)| (g, gone)))
}

/// The configuration's resources (of every module) and, for each, the
/// resources it depends on, seen through the variables, locals, outputs
/// and module calls between them. No planning, no state. `Err` is the exit
/// code after the diagnostics are shown.
type ResourceEdges = (
    BTreeSet<ConfigResource>,
    BTreeSet<(ConfigResource, ConfigResource)>,
);

fn config_resource_graph(
    args: &GraphArgs,
    state: &State,
) -> anyhow::Result<Result<ResourceEdges, u8>> {
    use fleetform_lang::graph::config::ConfigNode;
    let Some((graph, gone)) = config_graph_here(args, state)? else {
        return Ok(Err(1));
    };
    let mut edges = BTreeSet::new();
    // What only the state has is drawn too, with no edges (Terraform's
    // default graph does).
    let mut nodes: BTreeSet<ConfigResource> =
        gone.iter().map(|(a, _)| a.config_resource()).collect();
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
pub fn plan(args: &GraphArgs, state: &State) -> anyhow::Result<u8> {
    let Some((graph, gone)) = config_graph_here(args, state)? else {
        return Ok(1);
    };
    let mut drawing = TfGraph::from_config(&graph);
    // Terraform's apply graph of no plan has no orphans to destroy, only
    // the closes of the module calls that are gone.
    if args.graph_type.as_deref() == Some("apply") {
        drawing.add_gone_modules(&gone);
    } else {
        drawing.add_orphans(&gone);
    }
    print!("{}", drawing.dot());
    Ok(0)
}

/// `graph` without a plan file: the workspace's state is read first
/// (objects only in state are drawn, as Terraform draws them), then the
/// graph `args` asks for.
pub async fn with_state(client: &mut Client, ws: &str, args: &GraphArgs) -> anyhow::Result<u8> {
    let state = crate::client::state_and_shapes(client, ws)
        .await?
        .0
        .unwrap_or_default();
    match args.graph_type.as_deref() {
        Some("plan-destroy") => resources(args, &state),
        Some(_) => plan(args, &state),
        None => default(args, &state),
    }
}

/// `graph -type=plan-destroy`: the configuration's resources and what each
/// depends on ([`config_resource_graph`]), edges reversed: the order a
/// destroy takes.
pub fn resources(args: &GraphArgs, state: &State) -> anyhow::Result<u8> {
    let (nodes, edges) = match config_resource_graph(args, state)? {
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
pub fn default(args: &GraphArgs, state: &State) -> anyhow::Result<u8> {
    let (nodes, edges) = match config_resource_graph(args, state)? {
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
