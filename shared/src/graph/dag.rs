//! A directed acyclic graph whose edges point from a node to what it
//! depends on, as Terraform draws them.

use petgraph::Direction;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::HashSet;

pub type NodeId = NodeIndex<u32>;

/// A cycle found in a graph: the nodes involved, in no particular order.
#[derive(Debug, Clone, PartialEq)]
pub struct Cycle<N>(pub Vec<N>);

#[derive(Debug, Clone)]
pub struct Dag<N> {
    graph: DiGraph<N, ()>,
    edges: HashSet<(NodeId, NodeId)>,
}

impl<N> Default for Dag<N> {
    fn default() -> Self {
        Dag {
            graph: DiGraph::new(),
            edges: HashSet::new(),
        }
    }
}

impl<N: Clone> Dag<N> {
    pub fn new() -> Dag<N> {
        Dag::default()
    }

    pub fn add_node(&mut self, node: N) -> NodeId {
        self.graph.add_node(node)
    }

    /// `from` depends on `to`: `to` must finish before `from` starts.
    /// Duplicate edges are ignored.
    pub fn add_dependency(&mut self, from: NodeId, to: NodeId) -> bool {
        if from == to || !self.edges.insert((from, to)) {
            return false;
        }
        self.graph.add_edge(from, to, ());
        true
    }

    pub fn remove_dependency(&mut self, from: NodeId, to: NodeId) -> bool {
        if !self.edges.remove(&(from, to)) {
            return false;
        }
        if let Some(e) = self.graph.find_edge(from, to) {
            self.graph.remove_edge(e);
        }
        true
    }

    pub fn has_dependency(&self, from: NodeId, to: NodeId) -> bool {
        self.edges.contains(&(from, to))
    }

    pub fn node(&self, id: NodeId) -> &N {
        &self.graph[id]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut N {
        &mut self.graph[id]
    }

    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.graph.node_indices()
    }

    /// What `id` depends on.
    pub fn dependencies(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.graph
            .edges_directed(id, Direction::Outgoing)
            .map(|e| e.target())
    }

    /// What depends on `id`.
    pub fn dependents(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.graph
            .edges_directed(id, Direction::Incoming)
            .map(|e| e.source())
    }

    /// Every cycle (strongly connected component with more than one node).
    pub fn cycles(&self) -> Vec<Cycle<N>> {
        tarjan_scc(&self.graph)
            .into_iter()
            .filter(|scc| scc.len() > 1)
            .map(|scc| Cycle(scc.into_iter().map(|i| self.graph[i].clone()).collect()))
            .collect()
    }

    /// Every node after everything it depends on; `None` when there is a cycle.
    pub fn topological_order(&self) -> Option<Vec<NodeId>> {
        let mut order = petgraph::algo::toposort(&self.graph, None).ok()?;
        // Edges point at dependencies, so petgraph's order is dependents first.
        order.reverse();
        Some(order)
    }

    /// All nodes `id` transitively depends on, including itself.
    pub fn ancestors_of(&self, start: impl IntoIterator<Item = NodeId>) -> HashSet<NodeId> {
        self.closure(start, Direction::Outgoing, |_| true)
    }

    /// The nodes `start` transitively depends on through nodes that
    /// `through` accepts, including `start`: a node it refuses is in the
    /// set, but what that node depends on is not reached through it.
    pub fn ancestors_through(
        &self,
        start: impl IntoIterator<Item = NodeId>,
        through: impl Fn(&N) -> bool,
    ) -> HashSet<NodeId> {
        self.closure(start, Direction::Outgoing, through)
    }

    /// All nodes that transitively depend on `start`, including them.
    pub fn descendants_of(&self, start: impl IntoIterator<Item = NodeId>) -> HashSet<NodeId> {
        self.closure(start, Direction::Incoming, |_| true)
    }

    /// `start` and what is reached from it along `dir`, going on from a
    /// node (other than a start) only where `through` accepts it.
    fn closure(
        &self,
        start: impl IntoIterator<Item = NodeId>,
        dir: Direction,
        through: impl Fn(&N) -> bool,
    ) -> HashSet<NodeId> {
        let mut seen = HashSet::new();
        let mut stack: Vec<NodeId> = Vec::new();
        for s in start {
            if seen.insert(s) {
                stack.extend(self.graph.neighbors_directed(s, dir));
            }
        }
        while let Some(n) = stack.pop() {
            if seen.insert(n) && through(&self.graph[n]) {
                stack.extend(self.graph.neighbors_directed(n, dir));
            }
        }
        seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cycles_and_closures() {
        let mut g = Dag::new();
        let a = g.add_node("a");
        let b = g.add_node("b");
        let c = g.add_node("c");
        g.add_dependency(b, a);
        g.add_dependency(c, b);
        assert!(g.cycles().is_empty());
        assert_eq!(g.topological_order().unwrap(), [a, b, c]);
        assert_eq!(g.descendants_of([a]).len(), 3);
        assert_eq!(g.ancestors_of([b]).len(), 2);
        let through_b: Vec<_> = {
            let mut v: Vec<_> = g
                .ancestors_through([c], |n| *n != "b")
                .into_iter()
                .collect();
            v.sort();
            v
        };
        assert_eq!(through_b, [b, c], "b is reached, a only through b");
        assert_eq!(g.ancestors_through([c], |_| true).len(), 3);
        assert!(!g.add_dependency(c, b), "duplicate edges are ignored");
        g.add_dependency(a, c);
        let cycles = g.cycles();
        assert_eq!(cycles.len(), 1);
        let mut names = cycles[0].0.clone();
        names.sort();
        assert_eq!(names, ["a", "b", "c"]);
    }
}
