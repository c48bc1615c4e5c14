//! `create_before_destroy`: declared on a resource, and inherited by every
//! resource it depends on, because ordering only the dependent
//! create-before-destroy would make a cycle (docs/planning/destroying.md,
//! "Forced create_before_destroy (inheritance)").

use super::Builder;
use crate::addr::AbsResource;
use crate::plan::{Action, Plan};
use std::collections::{BTreeMap, BTreeSet};

type Deps = BTreeMap<AbsResource, BTreeSet<AbsResource>>;

/// Resource dependencies of the plan and the resources that replace
/// create-before-destroy, declared or inherited.
pub fn effective(plan: &Plan) -> (Deps, BTreeSet<AbsResource>) {
    let mut deps: Deps = BTreeMap::new();
    let mut cbd = BTreeSet::new();
    for c in &plan.changes {
        let r = c.addr.containing_resource();
        deps.entry(r.clone())
            .or_default()
            .extend(c.dependencies.iter().cloned());
        if c.create_before_destroy || c.action == Action::CreateThenDelete {
            cbd.insert(r);
        }
    }
    let mut stack: Vec<AbsResource> = cbd.iter().cloned().collect();
    while let Some(r) = stack.pop() {
        for dep in deps.get(&r).into_iter().flatten() {
            if cbd.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    (deps, cbd)
}

/// Lowers replacements of create-before-destroy resources (declared or
/// inherited) to create-then-delete, so the plan shows what will happen.
pub fn force_create_before_destroy(plan: &mut Plan) {
    let (_, cbd) = effective(plan);
    for c in &mut plan.changes {
        if cbd.contains(&c.addr.containing_resource()) {
            c.create_before_destroy = true;
            if c.action == Action::DeleteThenCreate {
                c.action = Action::CreateThenDelete;
            }
        }
    }
}

pub(super) fn inherit(b: &mut Builder<'_>) {
    let (deps, cbd) = effective(b.plan);
    b.deps = deps;
    b.cbd = cbd;
}
