//! The ordering examples of docs/planning/destroying.md as graph tests: each checks
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

/// A small deterministic generator for the random plans below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Which operation (change index, kind) each operation of a graph waits
/// for, directly or not; `None` when the graph has a cycle.
/// (change index, kind) of an operation.
type Op = (usize, OpKind);

fn reachability(dag: &Dag<ApplyNode>) -> Option<BTreeSet<(Op, Op)>> {
    if !dag.cycles().is_empty() {
        return None;
    }
    let mut out = BTreeSet::new();
    for id in dag.node_ids() {
        let ApplyNode::Op { change, kind } = dag.node(id) else {
            continue;
        };
        for n in dag.ancestors_of([id]) {
            if let ApplyNode::Op {
                change: c2,
                kind: k2,
            } = dag.node(n)
                && n != id
            {
                out.insert(((*change, *kind), (*c2, *k2)));
            }
        }
    }
    Some(out)
}

/// Terraform's construction, as the graph had it before plans carried only
/// the nearest dependencies: every rule for every transitive pair, between
/// operations directly.
fn all_pairs_reference(
    plan: &Plan,
    transitive: &BTreeMap<AbsResource, BTreeSet<AbsResource>>,
) -> Dag<ApplyNode> {
    let (_, cbd) = cbd::effective(plan);
    let mut dag = Dag::new();
    let mut ops: BTreeMap<(AbsResource, OpKind), Vec<NodeId>> = BTreeMap::new();
    for (i, c) in plan.changes.iter().enumerate() {
        let r = c.addr.containing_resource();
        let mut op = |dag: &mut Dag<ApplyNode>, kind| {
            let id = dag.add_node(ApplyNode::Op { change: i, kind });
            ops.entry((r.clone(), kind)).or_default().push(id);
            id
        };
        match c.action {
            Action::Create | Action::Update | Action::Read => {
                op(&mut dag, OpKind::Apply);
            }
            Action::Delete => {
                op(&mut dag, OpKind::Destroy);
            }
            Action::DeleteThenCreate | Action::CreateThenDelete => {
                let create = op(&mut dag, OpKind::Apply);
                let destroy = op(&mut dag, OpKind::Destroy);
                if cbd.contains(&r) {
                    dag.add_dependency(destroy, create);
                } else {
                    dag.add_dependency(create, destroy);
                }
            }
            Action::NoOp | Action::Forget => {}
        }
    }
    let order =
        |dag: &mut Dag<ApplyNode>, w: (&AbsResource, OpKind), on: (&AbsResource, OpKind)| {
            let empty = Vec::new();
            let ws = ops.get(&(w.0.clone(), w.1)).unwrap_or(&empty).clone();
            let ons = ops.get(&(on.0.clone(), on.1)).unwrap_or(&empty).clone();
            for a in &ws {
                for b in &ons {
                    dag.add_dependency(*a, *b);
                }
            }
        };
    for (r, qs) in transitive {
        for q in qs.iter().filter(|q| *q != r) {
            order(&mut dag, (r, OpKind::Apply), (q, OpKind::Apply));
            order(&mut dag, (q, OpKind::Destroy), (r, OpKind::Destroy));
            if cbd.contains(r) {
                order(&mut dag, (r, OpKind::Destroy), (q, OpKind::Apply));
            } else {
                order(&mut dag, (q, OpKind::Apply), (r, OpKind::Destroy));
            }
            if cbd.contains(q) {
                order(&mut dag, (q, OpKind::Destroy), (r, OpKind::Apply));
            } else {
                order(&mut dag, (r, OpKind::Apply), (q, OpKind::Destroy));
            }
        }
    }
    dag
}

/// Plans that record only each resource's nearest dependencies order
/// operations exactly as Terraform's all-pairs construction does with the
/// transitive ones: same waits between operations, same cycles.
#[test]
fn nearest_dependencies_order_like_all_transitive_pairs() {
    let actions = [
        Action::Create,
        Action::Update,
        Action::Delete,
        Action::DeleteThenCreate,
        Action::CreateThenDelete,
        Action::NoOp,
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut compared = 0;
    for _ in 0..4000 {
        let n = 2 + rng.below(6) as usize;
        let name = |i: usize| format!("r{i}");
        // Resource i depends on some j < i.
        let mut direct: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, d) in direct.iter_mut().enumerate() {
            for j in 0..i {
                if rng.below(3) == 0 {
                    d.push(j);
                }
            }
        }
        let mut transitive: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        for i in 0..n {
            for &j in &direct[i] {
                let below = transitive[j].clone();
                transitive[i].insert(j);
                transitive[i].extend(below);
            }
        }
        let cbd: Vec<bool> = (0..n).map(|_| rng.below(4) == 0).collect();
        let mut near = Vec::new();
        let mut all = Vec::new();
        for i in 0..n {
            for k in 0..1 + rng.below(2) {
                let action = actions[rng.below(actions.len() as u64) as usize];
                let names =
                    |s: &mut dyn Iterator<Item = usize>| -> Vec<String> { s.map(name).collect() };
                let d: Vec<String> = names(&mut direct[i].iter().copied());
                let t: Vec<String> = names(&mut transitive[i].iter().copied());
                let d: Vec<&str> = d.iter().map(String::as_str).collect();
                let t: Vec<&str> = t.iter().map(String::as_str).collect();
                let mut a = change(&name(i), action, &d, cbd[i]);
                let mut b = change(&name(i), action, &t, cbd[i]);
                a.addr = format!("null_resource.r{i}[{k}]").parse().unwrap();
                b.addr = a.addr.clone();
                near.push(a);
                all.push(b);
            }
        }
        let near = plan(near);
        let all = plan(all);
        let (transitive_map, _) = cbd::effective(&all);
        let reference = reachability(&all_pairs_reference(&all, &transitive_map));
        let built = ApplyGraph::build(&near)
            .ok()
            .map(|g| reachability(&g.dag).unwrap());
        assert_eq!(
            built.is_some(),
            reference.is_some(),
            "cycles differ for {:?}",
            near.changes
                .iter()
                .map(|c| (
                    c.addr.to_string(),
                    c.action,
                    c.dependencies.len(),
                    c.create_before_destroy
                ))
                .collect::<Vec<_>>()
        );
        if let (Some(b), Some(r)) = (built, reference) {
            assert_eq!(
                b,
                r,
                "waits differ for {:?}",
                near.changes
                    .iter()
                    .map(|c| (
                        c.addr.to_string(),
                        c.action,
                        c.dependencies
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>(),
                        c.create_before_destroy
                    ))
                    .collect::<Vec<_>>()
            );
            compared += 1;
        }
    }
    assert!(compared > 2000, "only {compared} acyclic plans compared");
}
