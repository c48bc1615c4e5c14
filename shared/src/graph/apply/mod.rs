//! The apply graph: which operation of a plan waits for which, built from the
//! plan by small named passes (docs/planning/destroying.md).
//!
//! Passes, in order:
//! 1. [`nodes`]: one operation node per create/update and per destroy, with
//!    the replace ordering between the two halves of a replacement;
//! 2. [`cbd`]: `create_before_destroy`, inherited by everything a
//!    create-before-destroy resource depends on;
//! 3. [`edges`]: resource dependencies turned into operation order (create
//!    before dependents, destroy in reverse, the replace orderings), with
//!    edges into a create-before-destroy destroy node inverted.
//!
//! Resources with many instances are joined through one barrier node per
//! (resource, kind), so a dependency between two resources of n and m
//! instances costs n + m edges instead of n × m.

pub mod cbd;
mod edges;
mod nodes;

use super::dag::{Cycle, Dag, NodeId};
use crate::addr::AbsResource;
use crate::plan::{Action, Plan};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum OpKind {
    /// A create or an update.
    Apply,
    Destroy,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyNode {
    /// The `kind` half of `plan.changes[change]`.
    Op { change: usize, kind: OpKind },
    /// Done when every `kind` operation of `resource` is done. Boxed: a
    /// graph holds one node per operation, all the size of the largest
    /// variant (80 bytes with the address inline, 24 so).
    Barrier {
        resource: Box<AbsResource>,
        kind: OpKind,
    },
}

// One per operation of a run: it must stay small.
const _: () = assert!(std::mem::size_of::<ApplyNode>() <= 24);

#[derive(Debug)]
pub struct ApplyGraph {
    pub dag: Dag<ApplyNode>,
    /// Resources that replace create-before-destroy, declared or inherited.
    pub create_before_destroy: BTreeSet<AbsResource>,
}

/// What a build pass works on.
pub(crate) struct Builder<'p> {
    plan: &'p Plan,
    dag: Dag<ApplyNode>,
    /// Operation nodes per resource and kind.
    ops: BTreeMap<(AbsResource, OpKind), Vec<NodeId>>,
    /// The node others wait on for (resource, kind): the barrier or the only op.
    joins: BTreeMap<(AbsResource, OpKind), NodeId>,
    /// Resource-level dependencies: resource → what it depends on.
    deps: BTreeMap<AbsResource, BTreeSet<AbsResource>>,
    cbd: BTreeSet<AbsResource>,
}

impl ApplyGraph {
    /// Builds the apply graph of a plan; a cycle is returned as an error
    /// naming the operations involved.
    pub fn build(plan: &Plan) -> Result<ApplyGraph, Vec<Cycle<String>>> {
        let mut b = Builder {
            plan,
            dag: Dag::new(),
            ops: BTreeMap::new(),
            joins: BTreeMap::new(),
            deps: BTreeMap::new(),
            cbd: BTreeSet::new(),
        };
        cbd::inherit(&mut b);
        nodes::add(&mut b);
        edges::add(&mut b);
        let g = ApplyGraph {
            dag: b.dag,
            create_before_destroy: b.cbd,
        };
        let cycles = g.dag.cycles();
        if cycles.is_empty() {
            Ok(g)
        } else {
            Err(cycles
                .into_iter()
                .map(|c| Cycle(c.0.iter().map(|n| g.label(plan, n)).collect()))
                .collect())
        }
    }

    /// `null_resource.a create` / `null_resource.a destroy` (Terraform's labels).
    pub fn label(&self, plan: &Plan, node: &ApplyNode) -> String {
        match node {
            ApplyNode::Op { change, kind } => {
                let c = &plan.changes[*change];
                let verb = match (kind, c.action) {
                    (OpKind::Apply, Action::Update) => "update",
                    (OpKind::Apply, _) => "create",
                    (OpKind::Destroy, _) if c.deposed.is_some() => "destroy (deposed)",
                    (OpKind::Destroy, _) => "destroy",
                };
                format!("{} {verb}", c.addr)
            }
            ApplyNode::Barrier { resource, kind } => format!("{resource} (all {kind:?})"),
        }
    }

    /// Operation nodes with what they wait for (through barriers), one line
    /// each, sorted: the compact form golden tests compare.
    pub fn debug_repr(&self, plan: &Plan) -> String {
        let mut lines = Vec::new();
        for id in self.dag.node_ids() {
            let node = self.dag.node(id);
            if !matches!(node, ApplyNode::Op { .. }) {
                continue;
            }
            let mut deps: Vec<String> = self
                .op_dependencies(id)
                .into_iter()
                .map(|d| self.label(plan, self.dag.node(d)))
                .collect();
            deps.sort();
            if deps.is_empty() {
                lines.push(self.label(plan, node));
            } else {
                lines.push(format!("{} <- {}", self.label(plan, node), deps.join(", ")));
            }
        }
        lines.sort();
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }

    /// The operation nodes `id` waits for directly, seeing through barriers.
    fn op_dependencies(&self, id: NodeId) -> BTreeSet<NodeId> {
        let mut out = BTreeSet::new();
        let mut stack: Vec<NodeId> = self.dag.dependencies(id).collect();
        while let Some(n) = stack.pop() {
            match self.dag.node(n) {
                ApplyNode::Op { .. } => {
                    out.insert(n);
                }
                ApplyNode::Barrier { .. } => stack.extend(self.dag.dependencies(n)),
            }
        }
        out
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpKind::Apply => "apply",
            OpKind::Destroy => "destroy",
        })
    }
}

#[cfg(test)]
mod tests;
