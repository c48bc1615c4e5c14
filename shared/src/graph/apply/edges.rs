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

use super::{Builder, OpKind};
use crate::addr::AbsResource;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(super) fn add(b: &mut Builder<'_>) {
    let mut pairs: Vec<(AbsResource, AbsResource)> = b
        .deps
        .iter()
        .flat_map(|(r, qs)| {
            qs.iter()
                .filter(move |q| *q != r)
                .map(move |q| (r.clone(), q.clone()))
        })
        .collect();
    pairs.extend(across_create_before_destroy(&b.deps, &b.cbd));
    for (r, q) in pairs {
        order(b, (&r, OpKind::Apply), (&q, OpKind::Apply), Through::Both);
        order(
            b,
            (&q, OpKind::Destroy),
            (&r, OpKind::Destroy),
            Through::Both,
        );
        if b.cbd.contains(&r) {
            order(b, (&r, OpKind::Destroy), (&q, OpKind::Apply), Through::On);
        } else {
            order(b, (&q, OpKind::Apply), (&r, OpKind::Destroy), Through::On);
        }
        if b.cbd.contains(&q) {
            order(
                b,
                (&q, OpKind::Destroy),
                (&r, OpKind::Apply),
                Through::Waiting,
            );
        } else {
            order(
                b,
                (&r, OpKind::Apply),
                (&q, OpKind::Destroy),
                Through::Waiting,
            );
        }
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

/// Every `waiting.1` operation of `waiting.0` waits for all `on.1`
/// operations of `on.0`; a resource without operations of the kind takes
/// part through its empty barrier where `through` allows.
fn order(
    b: &mut Builder<'_>,
    waiting: (&AbsResource, OpKind),
    on: (&AbsResource, OpKind),
    through: Through,
) {
    let on_key = (on.0.clone(), on.1);
    let Some(&join) = b.joins.get(&on_key) else {
        return;
    };
    if through == Through::Waiting && !b.ops.contains_key(&on_key) {
        return;
    }
    let key = (waiting.0.clone(), waiting.1);
    let ops = match b.ops.get(&key) {
        Some(ops) => ops.clone(),
        None if through == Through::On => return,
        None => match b.joins.get(&key) {
            Some(&barrier) => vec![barrier],
            None => return,
        },
    };
    for op in ops {
        b.dag.add_dependency(op, join);
    }
}
