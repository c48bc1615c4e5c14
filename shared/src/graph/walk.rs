//! The ready-set walk: which nodes may start, given which have finished.
//! Each completion costs O(dependents of the node), never a graph rescan.

use super::dag::{Dag, NodeId};
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct Walk {
    remaining: HashMap<NodeId, usize>,
    dependents: HashMap<NodeId, Vec<NodeId>>,
    pending: usize,
}

impl Walk {
    /// Starts a walk; returns it with the nodes that are ready at once.
    pub fn new<N: Clone>(dag: &Dag<N>) -> (Walk, Vec<NodeId>) {
        let mut remaining = HashMap::with_capacity(dag.len());
        let mut dependents: HashMap<NodeId, Vec<NodeId>> = HashMap::with_capacity(dag.len());
        let mut ready = Vec::new();
        for id in dag.node_ids() {
            let n = dag.dependencies(id).count();
            if n == 0 {
                ready.push(id);
            }
            remaining.insert(id, n);
            dependents.insert(id, dag.dependents(id).collect());
        }
        let pending = dag.len();
        (
            Walk {
                remaining,
                dependents,
                pending,
            },
            ready,
        )
    }

    /// Records that `id` finished; returns the nodes that became ready.
    pub fn complete(&mut self, id: NodeId) -> Vec<NodeId> {
        if self.remaining.remove(&id).is_none() {
            return Vec::new(); // already completed: results may be delivered twice
        }
        self.pending -= 1;
        let mut ready = Vec::new();
        for d in self.dependents.remove(&id).unwrap_or_default() {
            if let Some(n) = self.remaining.get_mut(&d) {
                *n -= 1;
                if *n == 0 {
                    ready.push(d);
                }
            }
        }
        ready
    }

    /// Nodes not completed yet.
    pub fn pending(&self) -> usize {
        self.pending
    }

    pub fn is_done(&self) -> bool {
        self.pending == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any completion order of ready nodes respects every dependency.
        #[test]
        fn any_completion_order_respects_the_graph(edges in proptest::collection::vec((0usize..30, 0usize..30), 0..80), picks in proptest::collection::vec(any::<prop::sample::Index>(), 30)) {
            let mut g = Dag::new();
            let ids: Vec<_> = (0..30).map(|i| g.add_node(i)).collect();
            for (a, b) in edges {
                if a > b { g.add_dependency(ids[a], ids[b]); } // a > b keeps it acyclic
            }
            let (mut walk, mut ready) = Walk::new(&g);
            let mut done = std::collections::HashSet::new();
            let mut i = 0;
            while !ready.is_empty() {
                let k = picks[i % picks.len()].index(ready.len());
                i += 1;
                let n = ready.swap_remove(k);
                for d in g.dependencies(n) {
                    prop_assert!(done.contains(&d), "node ran before its dependency");
                }
                done.insert(n);
                ready.extend(walk.complete(n));
            }
            prop_assert!(walk.is_done());
            prop_assert_eq!(done.len(), 30);
        }
    }
}
