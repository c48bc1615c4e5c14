//! Resource dependencies as operation order. For R depending on Q:
//! - R's creates/updates wait for Q's creates/updates;
//! - Q's destroys wait for R's destroys (reverse order);
//! - Q's creates/updates wait for R's destroys (R's old object may still
//!   use Q's old one);
//! - R's creates/updates wait for Q's destroys.
//!
//! An edge from a create/update into the destroy of a create-before-destroy
//! resource is inverted, which orders dependents' updates between the new
//! object's creation and the old one's destruction.

//!
//! Plans record each resource's nearest dependencies; Terraform's rules
//! apply to the transitive ones. Ordering composes along a chain (every
//! resource has a node of each kind, see `nodes`), so the direct pairs give
//! the same order as all pairs would, with one exception: a resource that
//! is not create-before-destroy over a create-before-destroy one further
//! down (rules 3 and 4 do not compose across that boundary). Those pairs
//! get their edges explicitly. Checked against the all-pairs construction
//! on random plans in the tests.

use super::{ApplyNode, Builder, OpKind};
use crate::addr::AbsResource;
use crate::graph::{Dag, NodeId};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A resource's nodes, by kind (see [`slot`]): what others wait on, and
/// its operations if it has any; and whether it replaces
/// create-before-destroy.
#[derive(Default)]
struct Part<'b> {
    join: [Option<NodeId>; 2],
    ops: [Option<&'b [NodeId]>; 2],
    cbd: bool,
}

fn slot(kind: OpKind) -> usize {
    match kind {
        OpKind::Apply => 0,
        OpKind::Destroy => 1,
    }
}

pub(super) fn add(b: &mut Builder<'_>) {
    let Builder {
        dag,
        ops,
        joins,
        deps,
        cbd,
        ..
    } = b;
    let across = across_create_before_destroy(deps, cbd);
    // Each resource's nodes are looked up once, not in the ordered maps at
    // every pair: 10 module instances of a chain of 1,000 make 100,000
    // pairs (a resource's recorded dependencies name every instance of the
    // resource before it), and those lookups with their key copies were
    // 5% of the apply's CPU.
    let mut parts: HashMap<&AbsResource, Part<'_>> = HashMap::new();
    for ((r, kind), &join) in joins.iter() {
        parts.entry(r).or_default().join[slot(*kind)] = Some(join);
    }
    for ((r, kind), nodes) in ops.iter() {
        parts.entry(r).or_default().ops[slot(*kind)] = Some(nodes.as_slice());
    }
    for r in cbd.iter() {
        parts.entry(r).or_default().cbd = true;
    }
    let direct = deps
        .iter()
        .flat_map(|(r, qs)| qs.iter().filter(move |q| *q != r).map(move |q| (r, q)));
    let none = Part::default();
    let part = |r: &AbsResource| parts.get(r).unwrap_or(&none);
    for (r, q) in direct.chain(across.iter().map(|(r, q)| (r, q))) {
        let (pr, pq) = (part(r), part(q));
        let r_apply = (pr, OpKind::Apply);
        let r_destroy = (pr, OpKind::Destroy);
        let q_apply = (pq, OpKind::Apply);
        let q_destroy = (pq, OpKind::Destroy);
        order(dag, r_apply, q_apply, Through::Both);
        order(dag, q_destroy, r_destroy, Through::Both);
        if pr.cbd {
            order(dag, r_destroy, q_apply, Through::On);
        } else {
            order(dag, q_apply, r_destroy, Through::On);
        }
        if pq.cbd {
            order(dag, q_destroy, r_apply, Through::Waiting);
        } else {
            order(dag, r_apply, q_destroy, Through::Waiting);
        }
    }
}

/// Every `waiting.1` operation of `waiting.0` waits for all `on.1`
/// operations of `on.0`; a resource without operations of the kind takes
/// part through its empty barrier where `through` allows.
fn order(
    dag: &mut Dag<ApplyNode>,
    waiting: (&Part<'_>, OpKind),
    on: (&Part<'_>, OpKind),
    through: Through,
) {
    let Some(join) = on.0.join[slot(on.1)] else {
        return;
    };
    if through == Through::Waiting && on.0.ops[slot(on.1)].is_none() {
        return;
    }
    let barrier;
    let ops: &[NodeId] = match waiting.0.ops[slot(waiting.1)] {
        Some(ops) => ops,
        None if through == Through::On => return,
        None => match waiting.0.join[slot(waiting.1)] {
            Some(j) => {
                barrier = [j];
                &barrier
            }
            None => return,
        },
    };
    for &op in ops {
        dag.add_dependency(op, join);
    }
}

/// Which side of an edge may be an empty barrier. Chains need rules 1 and 2
/// through either side, rule 3 only into one that is waited on and rule 4
/// only out of one that waits; the other edges at an empty barrier would
/// order a resource's dependents (or its dependencies) against each other,
/// which Terraform does only when that resource has operations itself.
#[derive(Clone, Copy, PartialEq)]
enum Through {
    Both,
    Waiting,
    On,
}

/// Pairs (R, Q) with R not create-before-destroy, Q create-before-destroy,
/// and Q among R's transitive but not direct dependencies.
fn across_create_before_destroy(
    deps: &BTreeMap<AbsResource, BTreeSet<AbsResource>>,
    cbd: &BTreeSet<AbsResource>,
) -> Vec<(AbsResource, AbsResource)> {
    if cbd.is_empty() {
        return Vec::new();
    }
    // Whether a create-before-destroy resource is below, memoized; a cycle
    // (possible through dependencies recorded in state) counts as none
    // while it is being explored.
    fn below(
        r: &AbsResource,
        deps: &BTreeMap<AbsResource, BTreeSet<AbsResource>>,
        cbd: &BTreeSet<AbsResource>,
        memo: &mut HashMap<AbsResource, bool>,
    ) -> bool {
        if let Some(&v) = memo.get(r) {
            return v;
        }
        memo.insert(r.clone(), false);
        let mut found = false;
        for q in deps.get(r).into_iter().flatten() {
            if cbd.contains(q) || below(q, deps, cbd, memo) {
                found = true;
            }
        }
        memo.insert(r.clone(), found);
        found
    }
    let mut memo = HashMap::new();
    let mut out = Vec::new();
    for r in deps.keys() {
        if cbd.contains(r) || !below(r, deps, cbd, &mut memo) {
            continue;
        }
        let direct = &deps[r];
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&AbsResource> = direct.iter().collect();
        while let Some(q) = stack.pop() {
            if !seen.insert(q) {
                continue;
            }
            if q != r && cbd.contains(q) && !direct.contains(q) {
                out.push((r.clone(), q.clone()));
            }
            stack.extend(deps.get(q).into_iter().flatten());
        }
    }
    out
}
