//! `create_before_destroy`: declared on a resource, and inherited by every
//! resource it depends on, because ordering only the dependent
//! create-before-destroy would make a cycle (seeds/destroying.md, "Forced
//! Create Before Destroy").

use super::Builder;
use crate::addr::AbsResource;

pub(super) fn inherit(b: &mut Builder<'_>) {
    for c in &b.plan.changes {
        let r = c.addr.containing_resource();
        b.deps
            .entry(r.clone())
            .or_default()
            .extend(c.dependencies.iter().cloned());
        if c.create_before_destroy || c.action == crate::plan::Action::CreateThenDelete {
            b.cbd.insert(r);
        }
    }
    let mut stack: Vec<AbsResource> = b.cbd.iter().cloned().collect();
    while let Some(r) = stack.pop() {
        for dep in b.deps.get(&r).into_iter().flatten() {
            if b.cbd.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
}
