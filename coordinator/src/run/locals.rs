//! Local values during apply: re-evaluated from the applied objects before
//! the first instance of a resource that uses them is configured, and before
//! outputs are recorded (planning saw them with unknowns). They keep their
//! sensitivity marks, as while planning.

use super::driver::RunCtx;
use super::scope::EvalScope;
use fleetform_lang::eval::{Marks, evaluate_marked};
use fleetform_lang::graph::config::{ConfigGraph, ConfigNode};
use fleetform_shared::addr::Resource;
use fleetform_shared::graph::NodeId;
use fleetform_shared::value::Value;
use std::collections::{HashMap, HashSet};

pub(crate) struct Locals<'g> {
    graph: &'g ConfigGraph,
    position: HashMap<NodeId, usize>,
    /// Resources whose locals are current: everything they depend on is
    /// applied before their first instance starts, so once is enough.
    refreshed: HashSet<Resource>,
}

impl<'g> Locals<'g> {
    pub fn new(graph: &'g ConfigGraph) -> Locals<'g> {
        let order = graph.dag.topological_order().unwrap_or_default();
        let position = order.into_iter().enumerate().map(|(i, n)| (n, i)).collect();
        Locals {
            graph,
            position,
            refreshed: HashSet::new(),
        }
    }

    /// Re-evaluates the locals `r` depends on, once per resource.
    pub fn refresh_for(&mut self, ctx: &mut RunCtx<'_>, r: &Resource) {
        if !self.refreshed.insert(r.clone()) {
            return;
        }
        let Some(id) = self.graph.id(&ConfigNode::Resource(r.clone())) else {
            return;
        };
        let nodes = self.graph.dag.ancestors_of([id]);
        self.evaluate(ctx, nodes);
    }

    /// Re-evaluates every local.
    pub fn refresh_all(&mut self, ctx: &mut RunCtx<'_>) {
        let nodes = self.graph.dag.node_ids().collect();
        self.evaluate(ctx, nodes);
    }

    fn evaluate(&self, ctx: &mut RunCtx<'_>, nodes: HashSet<NodeId>) {
        let mut locals: Vec<(usize, String)> = nodes
            .into_iter()
            .filter_map(|n| match self.graph.dag.node(n) {
                ConfigNode::Local(name) => Some((
                    self.position.get(&n).copied().unwrap_or(usize::MAX),
                    name.clone(),
                )),
                _ => None,
            })
            .collect();
        locals.sort();
        for (_, name) in locals {
            let Some(local) = ctx.module.locals.get(&name) else {
                continue;
            };
            // An error here was already reported while planning; the value
            // stays unknown and the configuration using it is refused.
            let (v, marks) =
                evaluate_marked(&local.expr, &EvalScope::new(&ctx.values, ctx.workspace()))
                    .unwrap_or((Value::Unknown, Marks::none()));
            ctx.values.set_local(name, v, marks);
        }
    }
}
