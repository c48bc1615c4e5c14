//! The ordering examples of seeds/destroying.md as graph tests: each checks
//! that the graph admits exactly the documented order.

use super::*;
use crate::addr::ProviderAddr;
use crate::graph::Walk;
use crate::plan::ResourceChange;

fn change(name: &str, action: Action, deps: &[&str], cbd: bool) -> ResourceChange {
    ResourceChange {
        dependencies: deps
            .iter()
            .map(|d| format!("null_resource.{d}").parse().unwrap())
            .collect(),
        create_before_destroy: cbd,
        ..ResourceChange::new(
            format!("null_resource.{name}").parse().unwrap(),
            ProviderAddr::implied("null"),
            action,
        )
    }
}

/// The only order the graph allows, as labels; panics if more than one
/// operation is ever ready at once (the examples are chains).
fn order(plan: &Plan) -> Vec<String> {
    let g = ApplyGraph::build(plan).expect("no cycle");
    let (mut walk, mut ready) = Walk::new(&g.dag);
    let mut out = Vec::new();
    while let Some(n) = ready.pop() {
        let ops_ready = ready
            .iter()
            .filter(|r| matches!(g.dag.node(**r), ApplyNode::Op { .. }))
            .count();
        if let ApplyNode::Op { .. } = g.dag.node(n) {
            assert_eq!(
                ops_ready,
                0,
                "ambiguous order at {}",
                g.label(plan, g.dag.node(n))
            );
            out.push(g.label(plan, g.dag.node(n)).replace("null_resource.", ""));
        }
        ready.extend(walk.complete(n));
        // Barriers first, so only operations compete.
        ready.sort_by_key(|r| matches!(g.dag.node(*r), ApplyNode::Op { .. }));
    }
    assert!(walk.is_done());
    out
}

fn plan(changes: Vec<ResourceChange>) -> Plan {
    Plan {
        changes,
        ..Plan::default()
    }
}

#[test]
fn simple_create_follows_dependencies() {
    let p = plan(vec![
        change("a", Action::Create, &[], false),
        change("b", Action::Create, &["a"], false),
        change("c", Action::Create, &["b"], false),
    ]);
    assert_eq!(order(&p), ["a create", "b create", "c create"]);
}

#[test]
fn simple_destroy_is_reversed() {
    let p = plan(vec![
        change("a", Action::Delete, &[], false),
        change("b", Action::Delete, &["a"], false),
        change("c", Action::Delete, &["b"], false),
    ]);
    assert_eq!(order(&p), ["c destroy", "b destroy", "a destroy"]);
}

#[test]
fn replace_all() {
    let p = plan(vec![
        change("a", Action::DeleteThenCreate, &[], false),
        change("b", Action::DeleteThenCreate, &["a"], false),
    ]);
    assert_eq!(
        order(&p),
        ["b destroy", "a destroy", "a create", "b create"]
    );
}

#[test]
fn replace_dependency_updates_dependent_after() {
    let p = plan(vec![
        change("a", Action::DeleteThenCreate, &[], false),
        change("b", Action::Update, &["a"], false),
    ]);
    assert_eq!(order(&p), ["a destroy", "a create", "b update"]);
}

#[test]
fn destroy_then_update() {
    let p = plan(vec![
        change("a", Action::Update, &[], false),
        change("b", Action::Delete, &["a"], false),
    ]);
    assert_eq!(order(&p), ["b destroy", "a update"]);
}

#[test]
fn replace_all_with_create_before_destroy_dependency() {
    let p = plan(vec![
        change("a", Action::CreateThenDelete, &[], true),
        change("b", Action::DeleteThenCreate, &["a"], false),
    ]);
    assert_eq!(
        order(&p),
        ["b destroy", "a create", "b create", "a destroy"]
    );
}

#[test]
fn replace_create_before_destroy_dependency_updates_dependent_between() {
    let p = plan(vec![
        change("a", Action::CreateThenDelete, &[], true),
        change("b", Action::Update, &["a"], false),
    ]);
    assert_eq!(order(&p), ["a create", "b update", "a destroy"]);
}

#[test]
fn update_before_destroying_create_before_destroy_dependency() {
    let p = plan(vec![
        change("a", Action::Delete, &[], true),
        change("b", Action::Update, &["a"], false),
    ]);
    assert_eq!(order(&p), ["b update", "a destroy"]);
}

#[test]
fn create_before_destroy_is_inherited_by_dependencies() {
    let p = plan(vec![
        change("a", Action::DeleteThenCreate, &[], false),
        change("b", Action::CreateThenDelete, &["a"], true),
    ]);
    let g = ApplyGraph::build(&p).unwrap();
    assert!(
        g.create_before_destroy
            .contains(&"null_resource.a".parse().unwrap())
    );
    assert_eq!(
        order(&p),
        ["a create", "b create", "b destroy", "a destroy"]
    );
}

#[test]
fn many_instances_join_through_barriers() {
    let mut changes = Vec::new();
    for i in 0..100 {
        let mut a = change("a", Action::Create, &[], false);
        a.addr = format!("null_resource.a[{i}]").parse().unwrap();
        let mut b = change("b", Action::Create, &["a"], false);
        b.addr = format!("null_resource.b[{i}]").parse().unwrap();
        changes.push(a);
        changes.push(b);
    }
    let g = ApplyGraph::build(&plan(changes)).unwrap();
    // One edge per operation into its own barrier and one per dependent
    // operation: 300 here, where instance-to-instance edges would be 10,000.
    assert!(
        g.dag.edge_count() <= 300,
        "edges grow as n + m, got {}",
        g.dag.edge_count()
    );
}

#[test]
fn debug_repr_lists_waits() {
    let p = plan(vec![
        change("a", Action::Create, &[], false),
        change("b", Action::Create, &["a"], false),
    ]);
    let g = ApplyGraph::build(&p).unwrap();
    assert_eq!(
        g.debug_repr(&p),
        "null_resource.a create\nnull_resource.b create <- null_resource.a create\n"
    );
}

#[test]
fn forced_create_before_destroy_shows_in_the_plan() {
    let mut p = plan(vec![
        change("a", Action::DeleteThenCreate, &[], false),
        change("b", Action::DeleteThenCreate, &["a"], true),
    ]);
    cbd::force_create_before_destroy(&mut p);
    assert_eq!(
        p.changes[0].action,
        Action::CreateThenDelete,
        "inherited by the dependency"
    );
    assert_eq!(p.changes[1].action, Action::CreateThenDelete);
}
