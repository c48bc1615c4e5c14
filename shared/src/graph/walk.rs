//! The ready-set walk: which nodes may start, given which have finished.
//! Each completion costs O(dependents of the node), never a graph rescan.

use super::dag::{Dag, NodeId};

/// Each node's count of unfinished dependencies, by index; `DONE` once the
/// node finished. Nodes are indexed densely (a `Dag` never removes any),
/// so vectors stand where hash maps stood: by their sizes, a million-node
/// walk held about 140 MB in maps of node to count and node to
/// dependents, and about 12 MB so.
const DONE: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct Walk {
    remaining: Vec<u32>,
    /// The dependents of node `i` are `dependents[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    dependents: Vec<NodeId>,
    pending: usize,
}

impl Walk {
    /// Starts a walk; returns it with the nodes that are ready at once.
    pub fn new<N: Clone>(dag: &Dag<N>) -> (Walk, Vec<NodeId>) {
        let n = dag.len();
        let mut remaining = Vec::with_capacity(n);
        let mut starts = Vec::with_capacity(n + 1);
        let mut dependents = Vec::new();
        let mut ready = Vec::new();
        for (i, id) in dag.node_ids().enumerate() {
            debug_assert_eq!(id.index(), i, "a dag's nodes are indexed densely");
            let count = dag.dependencies(id).count();
            if count == 0 {
                ready.push(id);
            }
            remaining.push(u32::try_from(count).expect("fewer than 2^32 - 1 dependencies"));
            starts.push(index(dependents.len()));
            dependents.extend(dag.dependents(id));
        }
        starts.push(index(dependents.len()));
        dependents.shrink_to_fit();
        (
            Walk {
                remaining,
                starts,
                dependents,
                pending: n,
            },
            ready,
        )
    }

    /// Records that `id` finished; returns the nodes that became ready.
    pub fn complete(&mut self, id: NodeId) -> Vec<NodeId> {
        let i = id.index();
        match self.remaining.get_mut(i) {
            // Not this walk's, or already completed: results may be
            // delivered twice.
            None | Some(&mut DONE) => return Vec::new(),
            Some(left) => *left = DONE,
        }
        self.pending -= 1;
        let mut ready = Vec::new();
        let (from, to) = (self.starts[i] as usize, self.starts[i + 1] as usize);
        for &d in &self.dependents[from..to] {
            let left = &mut self.remaining[d.index()];
            if *left != DONE && *left > 0 {
                *left -= 1;
                if *left == 0 {
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

fn index(i: usize) -> u32 {
    u32::try_from(i).expect("fewer than 2^32 edges")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_completion_delivered_twice_or_from_elsewhere_changes_nothing() {
        let mut g = Dag::new();
        let (a, b, c) = (g.add_node('a'), g.add_node('b'), g.add_node('c'));
        g.add_dependency(c, a);
        g.add_dependency(c, b);
        let (mut walk, ready) = Walk::new(&g);
        assert_eq!(ready, vec![a, b]);
        assert_eq!(walk.complete(a), vec![]);
        assert_eq!(walk.complete(a), vec![], "twice: c still waits on b");
        assert_eq!(walk.pending(), 2);
        let mut other = Dag::new();
        let far = (0..10).map(|i| other.add_node(i)).last().unwrap();
        assert_eq!(walk.complete(far), vec![]);
        assert_eq!(walk.complete(b), vec![c]);
        assert_eq!(walk.complete(c), vec![]);
        assert!(walk.is_done());
    }

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
