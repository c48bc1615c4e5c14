//! Operation nodes: a create/update node and a destroy node per change as
//! its action needs, ordered against each other for a replacement.

use super::{ApplyNode, Builder, OpKind};
use crate::addr::AbsResource;
use crate::plan::Action;
use std::collections::BTreeSet;

pub(super) fn add(b: &mut Builder<'_>) {
    for (i, c) in b.plan.changes.iter().enumerate() {
        let r = c.addr.containing_resource();
        let op = |b: &mut Builder<'_>, kind| {
            let id = b.dag.add_node(ApplyNode::Op { change: i, kind });
            b.ops.entry((r.clone(), kind)).or_default().push(id);
            id
        };
        match c.action {
            Action::Create | Action::Update | Action::Read => {
                op(b, OpKind::Apply);
            }
            Action::Delete => {
                op(b, OpKind::Destroy);
            }
            Action::DeleteThenCreate | Action::CreateThenDelete => {
                let create = op(b, OpKind::Apply);
                let destroy = op(b, OpKind::Destroy);
                if b.cbd.contains(&r) {
                    b.dag.add_dependency(destroy, create);
                } else {
                    b.dag.add_dependency(create, destroy);
                }
            }
            // Forgetting calls no provider: the apply walk drops the
            // object from state before any operation starts.
            Action::NoOp | Action::Forget => {}
        }
    }
    let groups: Vec<_> = b.ops.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for ((resource, kind), ops) in groups {
        let join = if ops.len() == 1 {
            ops[0]
        } else {
            let barrier = b.dag.add_node(ApplyNode::Barrier {
                resource: Box::new(resource.clone()),
                kind,
            });
            for op in ops {
                b.dag.add_dependency(barrier, op);
            }
            barrier
        };
        b.joins.insert((resource, kind), join);
    }
    // A resource that takes part in dependencies without an operation of a
    // kind (unchanged, or only destroyed) still passes the order on: plans
    // record only the nearest dependencies, so "R after Q after P" must hold
    // through Q whatever Q does. An empty barrier stands in for its missing
    // operations; it waits like them and is waited on like them.
    // Only a resource in the middle (depended on, and depending) can pass
    // order on.
    let depended_on: BTreeSet<&AbsResource> = b.deps.values().flatten().collect();
    let middle: Vec<AbsResource> = b
        .deps
        .iter()
        .filter(|(r, qs)| !qs.is_empty() && depended_on.contains(r))
        .map(|(r, _)| r.clone())
        .collect();
    for resource in middle {
        for kind in [OpKind::Apply, OpKind::Destroy] {
            if !b.joins.contains_key(&(resource.clone(), kind)) {
                let barrier = b.dag.add_node(ApplyNode::Barrier {
                    resource: Box::new(resource.clone()),
                    kind,
                });
                b.joins.insert((resource.clone(), kind), barrier);
            }
        }
    }
}
