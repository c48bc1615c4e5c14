//! Looking without changing: `show` (a saved plan or the state, for people
//! or as Terraform's JSON) and `graph` (the apply graph in DOT).

use crate::args::{GraphArgs, ShowArgs};
use crate::client::{self, Client};
use crate::commands::{instance_text, report};
use crate::present::plan_json::{plan_json, state_json};
use crate::present::plan_text::render_plan;
use crate::render::RunView;
use fleetform_coordinator::store::seal::Sealer;
use fleetform_shared::addr::{ConfigResource, Module};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::graph::apply::{ApplyGraph, ApplyNode};
use fleetform_shared::graph::{Dag, NodeId};
use fleetform_shared::json::Json;
use fleetform_shared::plan::shape::Shapes;
use fleetform_shared::plan::{Plan, SavedPlan};
use fleetform_shared::state::State;
use fleetform_shared::wire::{Operation, PlanOptions, RunEvent, RunRequest, RunStatus};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Reads a plan file, or explains (as a diagnostic) why it is not one.
fn read_plan_file(path: &Path) -> Result<SavedPlan, Diagnostic> {
    let summary = format!("Failed to load \"{}\" as a plan file", path.display());
    let bytes =
        std::fs::read(path).map_err(|e| Diagnostic::error(&summary, format!("Error: {e}.")))?;
    decode_plan_file(path, &bytes).map_err(|e| Diagnostic::error(&summary, format!("Error: {e}.")))
}

/// A plan file's content: decrypted when it was written encrypted (plan
/// files hold resource values, so they are encrypted with the state's
/// settings, `FLEETFORM_ENCRYPTION_*`).
pub fn decode_plan_file(path: &Path, bytes: &[u8]) -> Result<SavedPlan, String> {
    let sealer = Sealer::from_env().map_err(|e| e.to_string())?;
    let plain = sealer
        .open(&format!("the plan file {}", path.display()), bytes)
        .map_err(|e| e.to_string())?;
    SavedPlan::decode(&plain).map_err(|e| e.to_string())
}

/// A plan file's bytes as written: encrypted when a key is set.
pub fn encode_plan_file(path: &Path, saved: &SavedPlan) -> anyhow::Result<Vec<u8>> {
    let sealer = Sealer::from_env()?;
    Ok(sealer.seal(&format!("the plan file {}", path.display()), saved.encode())?)
}

/// `show [-json] FILE`.
pub fn show_plan_file(args: &ShowArgs) -> anyhow::Result<u8> {
    let path = args.file.as_deref().expect("called with a plan file");
    let saved = match read_plan_file(path) {
        Ok(s) => s,
        Err(d) => return Ok(report(false, &d)),
    };
    if args.json {
        let mut doc = plan_json(&saved.plan);
        // The configuration the plan was made from, as policy tools read it.
        let (config, _) = fleetform_lang::config::load_config(&saved.files);
        if let (Some(config), Json::Object(m)) = (config, &mut doc) {
            m.insert(
                "configuration".into(),
                crate::present::config_json::configuration_json(&config, &saved.files, &saved.plan),
            );
        }
        println!("{doc}");
    } else {
        // As the plan command, Terraform starts it with a blank line.
        print!("\n{}", render_plan(&saved.plan));
    }
    Ok(0)
}

/// `show [-json]` without a file: every object in the state, then outputs.
pub async fn show_state(client: &mut Client, ws: &str, json: bool) -> anyhow::Result<u8> {
    let (state, shapes) = crate::client::state_and_shapes(client, ws).await?;
    let state = state.unwrap_or_default();
    if json {
        println!("{}", state_json(&state));
        return Ok(0);
    }
    if state.resources.is_empty() && state.outputs.is_empty() {
        println!("No state.");
        return Ok(0);
    }
    print!("{}", state_text(&state, &shapes));
    Ok(0)
}

/// The state as `show` prints it: each object, then the outputs.
pub fn state_text(state: &State, shapes: &Shapes) -> String {
    let mut blocks = Vec::new();
    for (addr, inst) in &state.resources {
        let r = &addr.resource.resource;
        let shape = shapes.get(&inst.provider, r.mode, &r.type_name);
        if let Some(obj) = &inst.current {
            blocks.push(instance_text(addr, obj, None, shape));
        }
        for (key, obj) in &inst.deposed {
            blocks.push(instance_text(addr, obj, Some(key), shape));
        }
    }
    let mut out = blocks.join("\n");
    if !state.outputs.is_empty() {
        out.push_str("\n\nOutputs:\n\n");
        for (name, o) in &state.outputs {
            let v = if o.sensitive {
                "(sensitive value)".to_string()
            } else {
                crate::present::state_text::show_value(&o.value, 0)
            };
            out.push_str(&format!("{name} = {v}\n"));
        }
    }
    out
}

/// `graph -plan=FILE`.
pub fn graph_plan_file(args: &GraphArgs) -> anyhow::Result<u8> {
    let path = args.plan.as_deref().expect("called with a plan file");
    match read_plan_file(path) {
        Ok(saved) => Ok(print_graph(&saved.plan, &saved.files)),
        Err(d) => Ok(report(false, &d)),
    }
}

/// `graph [DIR]`: plans the configuration (changing nothing) and draws the
/// apply graph of that plan.
pub async fn graph_config(client: &mut Client, ws: &str, args: &GraphArgs) -> anyhow::Result<u8> {
    let dir = args.dir.clone().unwrap_or_else(|| ".".into());
    let files = crate::bundle::pack(&dir)?;
    if files.is_empty() {
        anyhow::bail!("no configuration files in {}", dir.display());
    }
    let mut request = RunRequest {
        operation: Operation::Plan,
        files: files.clone(),
        data_files: crate::bundle::pack_data(&dir, &files)?,
        cwd: String::new(),
        source: String::new(),
        variables: Vec::new(),
        auto_approve: false,
        saved_plan: None,
        plan_only: true,
        // Drawing changes nothing, whoever's the state is.
        options: PlanOptions {
            adopt_state: true,
            ..PlanOptions::default()
        },
        auto_var_files: Vec::new(),
        env_variables: Vec::new(),
    };
    match crate::vars::collect(&dir, &args.vars) {
        Ok(inputs) => inputs.fill(&mut request),
        Err(d) => return Ok(report(false, &d)),
    }
    let mut view = DiagnosticsOnly {
        sources: files.clone(),
    };
    let end = client::run(client, ws, request, &mut view).await?;
    match end.plan {
        Some(plan) if end.status != RunStatus::Failed => Ok(print_graph(&plan, &files)),
        _ => Ok(1),
    }
}

/// Shows a planning run's diagnostics and nothing else.
struct DiagnosticsOnly {
    sources: BTreeMap<String, String>,
}

impl RunView for DiagnosticsOnly {
    fn event(&mut self, event: &RunEvent) {
        let diags = match event {
            RunEvent::Diagnostics(d) => d,
            RunEvent::ApplyErrored { diagnostics, .. } => diagnostics,
            _ => return,
        };
        for d in diags.iter() {
            eprint!("{}", crate::render::diagnostic(d, &self.sources));
        }
    }
}

fn print_graph(plan: &Plan, sources: &BTreeMap<String, String>) -> u8 {
    match ApplyGraph::build(plan) {
        Ok(g) => {
            print!("{}", dot(&g, plan));
            0
        }
        Err(cycles) => {
            for c in cycles {
                let d = Diagnostic::error("Cycle", c.0.join(", "));
                eprint!("{}", crate::render::diagnostic(&d, sources));
            }
            1
        }
    }
}

/// The apply graph in DOT: one node per operation, an edge from each
/// operation to each operation it waits for (seeing through the barrier
/// nodes that join many instances), sorted so the output is stable.
pub fn dot(g: &ApplyGraph, plan: &Plan) -> String {
    let name = |id: NodeId| {
        let node = g.dag.node(id);
        let mut label = g.label(plan, node);
        if let ApplyNode::Op { change, .. } = node
            && let Some(key) = &plan.changes[*change].deposed
        {
            label.push(' ');
            label.push_str(key);
        }
        quote(&label)
    };
    let mut nodes = BTreeSet::new();
    let mut edges = BTreeSet::new();
    for id in g.dag.node_ids() {
        if !matches!(g.dag.node(id), ApplyNode::Op { .. }) {
            continue;
        }
        let from = name(id);
        for dep in op_dependencies(&g.dag, id) {
            edges.insert((from.clone(), name(dep)));
        }
        nodes.insert(from);
    }
    let mut out = String::from(
        "digraph {\n  rankdir = \"RL\";\n  node [shape = rect, fontname = \"sans-serif\"];\n",
    );
    for n in &nodes {
        out.push_str(&format!("  {n} [label={n}];\n"));
    }
    for (from, to) in &edges {
        out.push_str(&format!("  {from} -> {to};\n"));
    }
    out.push_str("}\n");
    out
}

fn op_dependencies(dag: &Dag<ApplyNode>, id: NodeId) -> BTreeSet<NodeId> {
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

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The configuration's resources (of every module) and, for each, the
/// resources it depends on, seen through the variables, locals, outputs
/// and module calls between them. No planning, no state. `Err` is the exit
/// code after the diagnostics are shown.
type ResourceEdges = (
    BTreeSet<ConfigResource>,
    BTreeSet<(ConfigResource, ConfigResource)>,
);

/// The configuration graph of the working directory; `None` after its
/// diagnostics were printed (the configuration does not load or has a
/// cycle).
fn config_graph_here() -> anyhow::Result<Option<fleetform_lang::graph::config::ConfigGraph>> {
    let files = crate::bundle::pack(std::path::Path::new("."))?;
    let (config, mut diags) = fleetform_lang::config::load_config(&files);
    let graph = config
        .as_ref()
        .filter(|_| !diags.has_errors())
        .map(|c| fleetform_lang::graph::config::build(c, &[]));
    match graph {
        Some(Ok(g)) => Ok(Some(g)),
        other => {
            if let Some(Err(d)) = other {
                diags.extend(d);
            }
            for d in diags.iter() {
                eprint!("{}", crate::render::diagnostic(d, &files));
            }
            Ok(None)
        }
    }
}

fn config_resource_graph() -> anyhow::Result<Result<ResourceEdges, u8>> {
    use fleetform_lang::graph::config::ConfigNode;
    let Some(graph) = config_graph_here()? else {
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

/// `graph -type=plan|plan-refresh-only`: the configuration graph in the
/// shape of Terraform's: a `subgraph "root"` of `[root] ... (expand)`
/// nodes, providers as diamonds with a `(close)` node after the resources
/// that use them, a `[root] root` after everything, edges transitively
/// reduced. Names of objects in child modules are fleetform's (Terraform
/// adds module expansion and close nodes fleetform's graph has not).
pub fn graph_plan(args: &GraphArgs) -> anyhow::Result<u8> {
    use fleetform_lang::graph::config::ConfigNode;
    if args.graph_type.as_deref() == Some("plan-destroy") {
        return graph_resources(args);
    }
    let Some(graph) = config_graph_here()? else {
        return Ok(1);
    };
    let prefix = |m: &Module| {
        if m.is_root() {
            String::new()
        } else {
            format!("{m}.")
        }
    };
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let name = |id: NodeId| match graph.dag.node(id) {
        ConfigNode::Resource(r) => format!("[root] {r} (expand)"),
        ConfigNode::Provider(p) => format!("[root] {p}"),
        ConfigNode::Variable(m, n) if m.is_root() => format!("[root] var.{n}"),
        ConfigNode::Variable(m, n) => format!("[root] {}var.{n} (expand)", prefix(m)),
        ConfigNode::Local(m, n) => format!("[root] {}local.{n} (expand)", prefix(m)),
        ConfigNode::Output(m, n) => format!("[root] {}output.{n} (expand)", prefix(m)),
        ConfigNode::ModuleCall(m) => format!("[root] {m} (expand)"),
    };
    for id in graph.dag.node_ids() {
        let n = name(id);
        match graph.dag.node(id) {
            ConfigNode::Resource(r) => {
                labels.insert(
                    n.clone(),
                    format!(
                        "{} [label = {}, shape = \"box\"]",
                        quote(&n),
                        quote(&r.to_string())
                    ),
                );
            }
            ConfigNode::Variable(m, v) if m.is_root() => {
                let label = format!("var.{v}");
                labels.insert(
                    n.clone(),
                    format!(
                        "{} [label = {}, shape = \"note\"]",
                        quote(&n),
                        quote(&label)
                    ),
                );
            }
            ConfigNode::Provider(p) => {
                labels.insert(
                    n.clone(),
                    format!(
                        "{} [label = {}, shape = \"diamond\"]",
                        quote(&n),
                        quote(&p.to_string())
                    ),
                );
                deps.entry(format!("{n} (close)")).or_default();
            }
            _ => {}
        }
        let entry = deps.entry(n.clone()).or_default();
        for d in graph.dag.dependencies(id) {
            entry.insert(name(d));
        }
    }
    // A provider closes after everything that uses it.
    for id in graph.dag.node_ids() {
        for d in graph.dag.dependencies(id) {
            if let ConfigNode::Provider(_) = graph.dag.node(d) {
                let close = format!("{} (close)", name(d));
                deps.get_mut(&close).expect("added above").insert(name(id));
            }
        }
    }
    // A module call closes after everything in the module.
    let module_of = |id: NodeId| match graph.dag.node(id) {
        ConfigNode::Resource(r) => Some(r.module.clone()),
        ConfigNode::Variable(m, _) | ConfigNode::Local(m, _) | ConfigNode::Output(m, _) => {
            Some(m.clone())
        }
        ConfigNode::ModuleCall(m) => m.parent().map(|(p, _)| p),
        ConfigNode::Provider(_) => None,
    };
    for call in graph.dag.node_ids() {
        let ConfigNode::ModuleCall(m) = graph.dag.node(call) else {
            continue;
        };
        let inside: BTreeSet<String> = graph
            .dag
            .node_ids()
            .filter(|&id| module_of(id).is_some_and(|x| m.contains(&x)))
            .map(name)
            .collect();
        deps.insert(format!("[root] {m} (close)"), inside);
    }
    let depended: BTreeSet<String> = deps.values().flatten().cloned().collect();
    let last: BTreeSet<String> = deps
        .keys()
        .filter(|n| !depended.contains(*n))
        .cloned()
        .collect();
    deps.insert("[root] root".to_string(), last);
    let reaches = |from: &str, to: &str| {
        let mut stack: Vec<&str> = vec![from];
        let mut seen = BTreeSet::new();
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if seen.insert(n) {
                stack.extend(deps.get(n).into_iter().flatten().map(String::as_str));
            }
        }
        false
    };
    let mut out = String::from(
        "digraph {\n\tcompound = \"true\"\n\tnewrank = \"true\"\n\tsubgraph \"root\" {\n",
    );
    for l in labels.values() {
        out.push_str(&format!("\t\t{l}\n"));
    }
    for (from, tos) in &deps {
        for to in tos {
            let implied = tos.iter().any(|other| other != to && reaches(other, to));
            if !implied {
                out.push_str(&format!("\t\t{} -> {}\n", quote(from), quote(to)));
            }
        }
    }
    out.push_str("\t}\n}\n");
    print!("{out}");
    Ok(0)
}

/// `graph -type=plan-destroy`: the configuration's resources and what each
/// depends on ([`config_resource_graph`]), edges reversed: the order a
/// destroy takes.
pub fn graph_resources(args: &GraphArgs) -> anyhow::Result<u8> {
    let (nodes, edges) = match config_resource_graph()? {
        Ok(g) => g,
        Err(code) => return Ok(code),
    };
    let destroy = args.graph_type.as_deref() == Some("plan-destroy");
    let mut out = String::from("digraph {\n  rankdir = \"RL\";\n");
    for n in &nodes {
        out.push_str(&format!("  {};\n", quote(&n.to_string())));
    }
    for (a, b) in &edges {
        let (a, b) = if destroy { (b, a) } else { (a, b) };
        out.push_str(&format!(
            "  {} -> {};\n",
            quote(&a.to_string()),
            quote(&b.to_string())
        ));
    }
    out.push_str("}\n");
    print!("{out}");
    Ok(0)
}

/// `graph` without -type or -plan: Terraform 1.11's default graph, the
/// configuration's resources only (no planning, so it is the same whether
/// or not anything would change), a DOT cluster per module.
pub fn graph_default() -> anyhow::Result<u8> {
    let (nodes, edges) = match config_resource_graph()? {
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
    let mut by_module: BTreeMap<&Module, Vec<&ConfigResource>> = BTreeMap::new();
    for n in nodes {
        by_module.entry(&n.module).or_default().push(n);
    }
    for (module, resources) in by_module {
        let indent = if module.is_root() { "  " } else { "    " };
        if !module.is_root() {
            out.push_str(&format!(
                "  subgraph {} {{\n    label = {}\n    fontname = \"sans-serif\"\n",
                quote(&format!("cluster_{module}")),
                quote(&module.to_string())
            ));
        }
        for r in resources {
            out.push_str(&format!(
                "{indent}{} [label={}];\n",
                quote(&r.to_string()),
                quote(&r.resource.to_string())
            ));
        }
        if !module.is_root() {
            out.push_str("  }\n");
        }
    }
    for (a, b) in edges {
        out.push_str(&format!(
            "  {} -> {};\n",
            quote(&a.to_string()),
            quote(&b.to_string())
        ));
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::addr::{AbsResource, ProviderAddr};
    use fleetform_shared::plan::{Action, ResourceChange};

    fn change(addr: &str, action: Action, deps: &[&str]) -> ResourceChange {
        ResourceChange {
            dependencies: deps
                .iter()
                .map(|d| d.parse::<AbsResource>().unwrap())
                .collect(),
            ..ResourceChange::new(addr.parse().unwrap(), ProviderAddr::implied("null"), action)
        }
    }

    #[test]
    fn dot_draws_operations_and_sees_through_barriers() {
        let plan = Plan {
            changes: vec![
                change("null_resource.a[0]", Action::Create, &[]),
                change("null_resource.a[1]", Action::Create, &[]),
                change(
                    "null_resource.b[\"k\"]",
                    Action::Create,
                    &["null_resource.a"],
                ),
            ],
            ..Plan::default()
        };
        let g = ApplyGraph::build(&plan).unwrap();
        let text = dot(&g, &plan);
        assert!(text.starts_with("digraph {\n"), "{text}");
        assert!(
            text.contains(
                "  \"null_resource.b[\\\"k\\\"] create\" -> \"null_resource.a[0] create\";\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  \"null_resource.b[\\\"k\\\"] create\" -> \"null_resource.a[1] create\";\n"
            ),
            "{text}"
        );
        assert_eq!(text.matches(" -> ").count(), 2, "{text}");
        assert!(!text.contains("all Apply"), "no barrier nodes: {text}");
        assert!(text.ends_with("}\n"));
    }
}
