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

use super::{Builder, OpKind};
use crate::addr::AbsResource;

pub(super) fn add(b: &mut Builder<'_>) {
    let pairs: Vec<(AbsResource, AbsResource)> = b
        .deps
        .iter()
        .flat_map(|(r, qs)| {
            qs.iter()
                .filter(move |q| *q != r)
                .map(move |q| (r.clone(), q.clone()))
        })
        .collect();
    for (r, q) in pairs {
        order(b, (&r, OpKind::Apply), (&q, OpKind::Apply));
        order(b, (&q, OpKind::Destroy), (&r, OpKind::Destroy));
        if b.cbd.contains(&r) {
            order(b, (&r, OpKind::Destroy), (&q, OpKind::Apply));
        } else {
            order(b, (&q, OpKind::Apply), (&r, OpKind::Destroy));
        }
        if b.cbd.contains(&q) {
            order(b, (&q, OpKind::Destroy), (&r, OpKind::Apply));
        } else {
            order(b, (&r, OpKind::Apply), (&q, OpKind::Destroy));
        }
    }
}

/// Every `first.1` operation of `first.0` waits for all `then.1` operations of `then.0`.
fn order(b: &mut Builder<'_>, waiting: (&AbsResource, OpKind), on: (&AbsResource, OpKind)) {
    let Some(&join) = b.joins.get(&(on.0.clone(), on.1)) else {
        return;
    };
    let Some(ops) = b.ops.get(&(waiting.0.clone(), waiting.1)) else {
        return;
    };
    for op in ops.clone() {
        b.dag.add_dependency(op, join);
    }
}
