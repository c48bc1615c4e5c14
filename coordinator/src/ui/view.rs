//! What the live view shows of one run, folded from its event log.
//!
//! A run of 10,000 instances is drawn as its resource blocks, not its
//! instances: every instance is counted into the group of its resource as
//! the configuration names it (module instance keys dropped, so 100
//! instances of a module are one group per resource in it), and the edges
//! are the plan's dependencies between those groups. The page asks for the
//! instances of the groups it expands; only those travel.

use fleetform_shared::addr::{AbsResource, AbsResourceInstance};
use fleetform_shared::diag::{Diagnostics, Severity};
use fleetform_shared::plan::Action;
use fleetform_shared::wire::{ApplyOp, RunEvent};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// At most this many instances of one expanded group are sent.
pub const EXPANDED_LIMIT: usize = 500;
/// Entries in the slowest-operations and errors lists.
const TOP: usize = 10;
const ERRORS_KEPT: usize = 50;
/// The window the current rate is measured over.
const RATE_WINDOW_MS: u64 = 10_000;

/// Where one instance is: each of its operations (a replacement has two)
/// counted by outcome.
#[derive(Default)]
struct Instance {
    group: usize,
    action: Option<Action>,
    expected: u32,
    running: u32,
    done: u32,
    failed: u32,
    /// When its running operation started (event time, ms since the epoch).
    started_ms: Option<u64>,
    elapsed_ms: u64,
    worker: String,
    error: Option<String>,
}

impl Instance {
    fn status(&self) -> &'static str {
        if self.failed > 0 {
            "failed"
        } else if self.running > 0 {
            "running"
        } else if self.expected > 0 && self.done >= self.expected {
            "done"
        } else if self.expected == 0 && self.done == 0 {
            "unchanged"
        } else {
            "pending"
        }
    }
}

struct Group {
    id: String,
    deps: BTreeSet<usize>,
    instances: Vec<String>,
    actions: BTreeMap<&'static str, usize>,
}

/// One operation's timing, for the slowest list.
#[derive(Clone, Serialize)]
pub struct Timed {
    pub addr: String,
    pub op: &'static str,
    pub ms: u64,
    pub worker: String,
}

#[derive(Clone, Serialize)]
pub struct ErrorView {
    pub addr: Option<String>,
    pub summary: String,
    pub detail: String,
    /// `main.tf:12:3` when the diagnostic points into the configuration.
    pub location: Option<String>,
}

/// The run folded so far.
pub struct RunView {
    pub run_id: String,
    pub workspace: String,
    pub operation: String,
    phase: &'static str,
    status: Option<String>,
    started_ms: Option<u64>,
    last_ms: u64,
    planning: Option<(usize, usize)>,
    groups: Vec<Group>,
    group_index: HashMap<String, usize>,
    instances: HashMap<String, Instance>,
    slowest: Vec<Timed>,
    errors: Vec<ErrorView>,
    /// Completion times within the rate window.
    recent: VecDeque<u64>,
    summary: Option<fleetform_shared::plan::ChangeSummary>,
    outputs: Vec<String>,
}

/// The JSON the page draws.
#[derive(Serialize)]
pub struct Snapshot {
    pub run_id: String,
    pub workspace: String,
    pub operation: String,
    /// starting, planning, awaiting approval, applying, cancelling, finished
    pub phase: &'static str,
    /// How it ended (succeeded, failed, ...), once it has.
    pub status: Option<String>,
    pub elapsed_s: f64,
    pub planning: Option<PlanningView>,
    pub counts: Counts,
    /// Operations finished per second over the last 10 seconds.
    pub rate: f64,
    /// Seconds left at the current rate, while operations are left.
    pub eta_s: Option<f64>,
    pub groups: Vec<GroupView>,
    /// Instances of the groups asked for, by group id.
    pub expanded: BTreeMap<String, Vec<InstanceView>>,
    pub slowest: Vec<Timed>,
    /// Operations in progress, longest first.
    pub running_longest: Vec<Timed>,
    pub errors: Vec<ErrorView>,
    pub summary: Option<fleetform_shared::plan::ChangeSummary>,
    pub outputs: Vec<String>,
}

#[derive(Serialize)]
pub struct PlanningView {
    pub done: usize,
    pub total: usize,
}

#[derive(Default, Serialize, PartialEq, Debug)]
pub struct Counts {
    pub total: usize,
    pub pending: usize,
    pub running: usize,
    pub done: usize,
    pub failed: usize,
}

#[derive(Serialize)]
pub struct GroupView {
    pub id: String,
    pub instances: usize,
    pub counts: Counts,
    /// Planned actions by kind (create, update, replace, delete, ...).
    pub actions: BTreeMap<&'static str, usize>,
    pub deps: Vec<usize>,
    /// Column in the drawing: the longest dependency chain before it.
    pub depth: usize,
}

#[derive(Serialize)]
pub struct InstanceView {
    pub addr: String,
    pub action: &'static str,
    pub status: &'static str,
    pub elapsed_ms: u64,
    pub worker: String,
    pub error: Option<String>,
}

fn action_name(a: Action) -> &'static str {
    match a {
        Action::NoOp => "no-op",
        Action::Create => "create",
        Action::Read => "read",
        Action::Update => "update",
        Action::DeleteThenCreate | Action::CreateThenDelete => "replace",
        Action::Delete => "delete",
        Action::Forget => "forget",
    }
}

fn op_name(op: ApplyOp) -> &'static str {
    match op {
        ApplyOp::Create => "create",
        ApplyOp::Update => "update",
        ApplyOp::Delete => "delete",
        ApplyOp::Read => "read",
        ApplyOp::Open => "open",
        ApplyOp::Renew => "renew",
        ApplyOp::Close => "close",
    }
}

/// Operations a planned action takes on workers.
fn ops_of(a: Action) -> u32 {
    match a {
        Action::NoOp | Action::Forget => 0,
        Action::DeleteThenCreate | Action::CreateThenDelete => 2,
        _ => 1,
    }
}

/// The resource as the configuration names it: module keys dropped.
fn group_id(r: &AbsResource) -> String {
    let module = r.module.module();
    if module.is_root() {
        r.resource.to_string()
    } else {
        format!("{module}.{}", r.resource)
    }
}

fn location(d: &fleetform_shared::diag::Diagnostic) -> Option<String> {
    d.range
        .as_ref()
        .map(|r| format!("{}:{}:{}", r.filename, r.start.line, r.start.column))
}

impl RunView {
    pub fn new(run_id: &str, workspace: &str, operation: &str) -> RunView {
        RunView {
            run_id: run_id.to_string(),
            workspace: workspace.to_string(),
            operation: operation.to_string(),
            phase: "starting",
            status: None,
            started_ms: None,
            last_ms: 0,
            planning: None,
            groups: Vec::new(),
            group_index: HashMap::new(),
            instances: HashMap::new(),
            slowest: Vec::new(),
            errors: Vec::new(),
            recent: VecDeque::new(),
            summary: None,
            outputs: Vec::new(),
        }
    }

    fn group(&mut self, r: &AbsResource) -> usize {
        let id = group_id(r);
        if let Some(&i) = self.group_index.get(&id) {
            return i;
        }
        let i = self.groups.len();
        self.groups.push(Group {
            id: id.clone(),
            deps: BTreeSet::new(),
            instances: Vec::new(),
            actions: BTreeMap::new(),
        });
        self.group_index.insert(id, i);
        i
    }

    /// The instance at `addr`, counted into its group when first seen.
    fn instance(&mut self, addr: &AbsResourceInstance) -> &mut Instance {
        let key = addr.to_string();
        if !self.instances.contains_key(&key) {
            let g = self.group(&addr.containing_resource());
            self.groups[g].instances.push(key.clone());
            self.instances.insert(
                key.clone(),
                Instance {
                    group: g,
                    ..Instance::default()
                },
            );
        }
        self.instances.get_mut(&key).expect("just inserted")
    }

    fn error(&mut self, addr: Option<String>, diags: &Diagnostics) {
        for d in diags.iter().filter(|d| d.severity == Severity::Error) {
            if self.errors.len() >= ERRORS_KEPT {
                return;
            }
            // An operation's error may be reported again with the run's.
            if self
                .errors
                .iter()
                .any(|e| e.summary == d.summary && e.detail == d.detail)
            {
                continue;
            }
            self.errors.push(ErrorView {
                addr: addr.clone().or_else(|| d.address.clone()),
                summary: d.summary.clone(),
                detail: d.detail.clone(),
                location: location(d),
            });
        }
    }

    /// Folds one event that happened at `at_ms` (ms since the epoch).
    pub fn apply(&mut self, at_ms: u64, event: &RunEvent) {
        self.started_ms.get_or_insert(at_ms);
        self.last_ms = self.last_ms.max(at_ms);
        match event {
            RunEvent::Started { .. } => {}
            RunEvent::Diagnostics(d) => self.error(None, d),
            RunEvent::Planning { done, total } => {
                self.phase = "planning";
                self.planning = Some((*done, *total));
            }
            RunEvent::Planned(plan) => {
                for c in &plan.changes {
                    let g = self.group(&c.addr.containing_resource());
                    let deps: Vec<usize> = c.dependencies.iter().map(|d| self.group(d)).collect();
                    self.groups[g]
                        .deps
                        .extend(deps.into_iter().filter(|&d| d != g));
                    let name = action_name(c.action);
                    if c.action != Action::NoOp {
                        *self.groups[g].actions.entry(name).or_default() += 1;
                    }
                    let i = self.instance(&c.addr);
                    i.expected += ops_of(c.action);
                    // The current object's action wins over a deposed one's.
                    if c.deposed.is_none() || i.action.is_none() {
                        i.action = Some(c.action);
                    }
                }
                if self.phase == "planning" || self.phase == "starting" {
                    self.phase = "planned";
                }
            }
            RunEvent::AwaitingApproval => self.phase = "awaiting approval",
            RunEvent::Cancelling => self.phase = "cancelling",
            RunEvent::ApplyStart { addr, op, .. } => {
                // Data sources read while planning do not start the apply.
                let planning_read = *op == fleetform_shared::wire::ApplyOp::Read
                    && matches!(self.phase, "planning" | "starting");
                if self.phase != "cancelling" && !planning_read {
                    self.phase = "applying";
                }
                let i = self.instance(addr);
                i.running += 1;
                i.started_ms = Some(at_ms);
                // An operation the plan did not announce still counts.
                if i.running + i.done + i.failed > i.expected {
                    i.expected = i.running + i.done + i.failed;
                }
            }
            RunEvent::ApplyComplete {
                addr,
                elapsed_ms,
                worker,
                op,
                ..
            } => {
                let key = addr.to_string();
                let i = self.instance(addr);
                i.running = i.running.saturating_sub(1);
                i.done += 1;
                i.started_ms = None;
                i.elapsed_ms += elapsed_ms;
                i.worker = worker.clone();
                self.recent.push_back(at_ms);
                self.slowest.push(Timed {
                    addr: key,
                    op: op_name(*op),
                    ms: *elapsed_ms,
                    worker: worker.clone(),
                });
                self.slowest.sort_by_key(|t| std::cmp::Reverse(t.ms));
                self.slowest.truncate(TOP);
            }
            RunEvent::ApplyErrored {
                addr, diagnostics, ..
            } => {
                let key = addr.to_string();
                let first = diagnostics
                    .iter()
                    .find(|d| d.severity == Severity::Error)
                    .map(|d| format!("{}: {}", d.summary, d.detail));
                let i = self.instance(addr);
                i.running = i.running.saturating_sub(1);
                i.failed += 1;
                i.started_ms = None;
                i.error = first;
                self.recent.push_back(at_ms);
                self.error(Some(key), diagnostics);
            }
            RunEvent::Progress { .. }
            | RunEvent::ProvisionStart { .. }
            | RunEvent::ProvisionOutput { .. }
            | RunEvent::ProvisionDone { .. } => {}
            RunEvent::Outputs(outputs) => {
                // Names only: values may be sensitive, and `output` shows them.
                self.outputs = outputs.keys().cloned().collect();
            }
            RunEvent::Finished { status, summary } => {
                self.phase = "finished";
                self.status = Some(format!("{status:?}").to_lowercase());
                self.summary = Some(*summary);
                for i in self.instances.values_mut() {
                    i.running = 0;
                    i.started_ms = None;
                }
            }
        }
    }

    /// The longest chain of dependencies before each group (cycles, which
    /// a valid plan has none of, are cut).
    fn depths(&self) -> Vec<usize> {
        let n = self.groups.len();
        let mut depth = vec![0usize; n];
        // Relax at most n times: enough for any acyclic graph.
        for _ in 0..n {
            let mut changed = false;
            for (g, group) in self.groups.iter().enumerate() {
                let d = group
                    .deps
                    .iter()
                    .map(|&p| depth[p] + 1)
                    .max()
                    .unwrap_or(0)
                    .min(n);
                if d > depth[g] {
                    depth[g] = d;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        depth
    }

    /// Each group's dependencies without those implied by another (a plan
    /// lists transitive dependencies; drawn, they would only clutter).
    fn direct_deps(&self) -> Vec<Vec<usize>> {
        let n = self.groups.len();
        // Everything each group depends on, directly or not.
        let mut reach: Vec<Option<BTreeSet<usize>>> = vec![None; n];
        fn ancestors(
            g: usize,
            groups: &[Group],
            reach: &mut Vec<Option<BTreeSet<usize>>>,
            guard: &mut BTreeSet<usize>,
        ) -> BTreeSet<usize> {
            if let Some(r) = &reach[g] {
                return r.clone();
            }
            let mut out = BTreeSet::new();
            // A cycle (never in a valid plan) stops here.
            if guard.insert(g) {
                for &d in &groups[g].deps {
                    out.insert(d);
                    out.extend(ancestors(d, groups, reach, guard));
                }
                guard.remove(&g);
            }
            reach[g] = Some(out.clone());
            out
        }
        let mut guard = BTreeSet::new();
        (0..n)
            .map(|g| {
                let deps = &self.groups[g].deps;
                let implied: BTreeSet<usize> = deps
                    .iter()
                    .flat_map(|&d| ancestors(d, &self.groups, &mut reach, &mut guard))
                    .collect();
                deps.iter()
                    .copied()
                    .filter(|d| !implied.contains(d))
                    .collect()
            })
            .collect()
    }

    /// What the page shows now (`now_ms`: the time of the snapshot),
    /// with the instances of the groups in `expand`.
    pub fn snapshot(&mut self, now_ms: u64, expand: &BTreeSet<String>) -> Snapshot {
        let end = if self.phase == "finished" {
            self.last_ms
        } else {
            now_ms.max(self.last_ms)
        };
        while self
            .recent
            .front()
            .is_some_and(|&t| t + RATE_WINDOW_MS < end)
        {
            self.recent.pop_front();
        }
        let elapsed_ms = end.saturating_sub(self.started_ms.unwrap_or(end));
        let window = RATE_WINDOW_MS.min(elapsed_ms.max(1));
        let rate = self.recent.len() as f64 * 1000.0 / window as f64;

        let mut per_group: Vec<Counts> =
            (0..self.groups.len()).map(|_| Counts::default()).collect();
        let mut counts = Counts::default();
        let mut running = Vec::new();
        for (addr, i) in &self.instances {
            let c = &mut per_group[i.group];
            for c in [&mut *c, &mut counts] {
                c.total += i.expected as usize;
                c.running += i.running as usize;
                c.done += i.done as usize;
                c.failed += i.failed as usize;
            }
            if let Some(s) = i.started_ms {
                running.push(Timed {
                    addr: addr.clone(),
                    op: i.action.map_or("?", action_name),
                    ms: end.saturating_sub(s),
                    worker: String::new(),
                });
            }
        }
        let finished = self.phase == "finished";
        for c in per_group.iter_mut().chain(std::iter::once(&mut counts)) {
            c.total = c.total.max(c.running + c.done + c.failed);
            // Left over at the end: never started (after a failure or a
            // cancel), so not pending any more.
            c.pending = if finished {
                0
            } else {
                c.total - c.running - c.done - c.failed
            };
        }
        running.sort_by(|a, b| b.ms.cmp(&a.ms).then_with(|| a.addr.cmp(&b.addr)));
        running.truncate(TOP);
        let left = counts.pending + counts.running;
        let eta_s = (!finished && left > 0 && rate > 0.0).then(|| left as f64 / rate);

        let depths = self.depths();
        let direct = self.direct_deps();
        let groups = self
            .groups
            .iter()
            .zip(per_group)
            .enumerate()
            .map(|(g, (group, counts))| GroupView {
                id: group.id.clone(),
                instances: group.instances.len(),
                counts,
                actions: group.actions.clone(),
                deps: direct[g].clone(),
                depth: depths[g],
            })
            .collect();
        let mut expanded = BTreeMap::new();
        for id in expand {
            let Some(&g) = self.group_index.get(id) else {
                continue;
            };
            let list = self.groups[g]
                .instances
                .iter()
                .take(EXPANDED_LIMIT)
                .map(|addr| {
                    let i = &self.instances[addr];
                    InstanceView {
                        addr: addr.clone(),
                        action: i.action.map_or("?", action_name),
                        status: if finished && i.status() == "pending" {
                            "not run"
                        } else {
                            i.status()
                        },
                        elapsed_ms: i.elapsed_ms,
                        worker: i.worker.clone(),
                        error: i.error.clone(),
                    }
                })
                .collect();
            expanded.insert(id.clone(), list);
        }
        Snapshot {
            run_id: self.run_id.clone(),
            workspace: self.workspace.clone(),
            operation: self.operation.clone(),
            phase: self.phase,
            status: self.status.clone(),
            elapsed_s: elapsed_ms as f64 / 1000.0,
            planning: self
                .planning
                .map(|(done, total)| PlanningView { done, total }),
            counts,
            rate,
            eta_s,
            groups,
            expanded,
            slowest: self.slowest.clone(),
            running_longest: running,
            errors: self.errors.clone(),
            summary: self.summary,
            outputs: self.outputs.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::plan::ResourceChange;

    fn addr(s: &str) -> AbsResourceInstance {
        s.parse().unwrap()
    }

    fn change(a: &str, action: Action, deps: &[&str]) -> ResourceChange {
        let provider = "registry.terraform.io/fleetform/sim".parse().unwrap();
        let mut c = ResourceChange::new(addr(a), provider, action);
        c.dependencies = deps.iter().map(|d| addr(d).containing_resource()).collect();
        c
    }

    #[test]
    fn instances_fold_into_their_resource_and_count_by_outcome() {
        let mut v = RunView::new("r1", "default", "apply");
        let plan = fleetform_shared::plan::Plan {
            changes: vec![
                change("sim_object.net", Action::Create, &[]),
                change(
                    "module.m[\"a\"].sim_object.s[0]",
                    Action::Create,
                    &["sim_object.net"],
                ),
                change(
                    "module.m[\"b\"].sim_object.s[0]",
                    Action::DeleteThenCreate,
                    &["sim_object.net"],
                ),
                change("sim_object.same", Action::NoOp, &[]),
                change(
                    "sim_object.dns",
                    Action::Create,
                    &["sim_object.net", "module.m[\"a\"].sim_object.s[0]"],
                ),
            ],
            ..Default::default()
        };
        v.apply(1_000, &RunEvent::Planned(std::sync::Arc::new(plan)));
        let start = |a: &str, op| RunEvent::ApplyStart {
            addr: addr(a),
            deposed: None,
            action: Action::Create,
            op,
        };
        v.apply(1_100, &start("sim_object.net", ApplyOp::Create));
        v.apply(
            1_400,
            &RunEvent::ApplyComplete {
                addr: addr("sim_object.net"),
                deposed: None,
                action: Action::Create,
                op: ApplyOp::Create,
                id: Some("n".into()),
                elapsed_ms: 300,
                worker: "w1".into(),
            },
        );
        v.apply(
            1_500,
            &start("module.m[\"a\"].sim_object.s[0]", ApplyOp::Create),
        );
        v.apply(
            1_500,
            &start("module.m[\"b\"].sim_object.s[0]", ApplyOp::Delete),
        );
        v.apply(
            1_700,
            &RunEvent::ApplyErrored {
                addr: addr("module.m[\"b\"].sim_object.s[0]"),
                deposed: None,
                action: Action::DeleteThenCreate,
                op: ApplyOp::Delete,
                diagnostics: Diagnostics(vec![fleetform_shared::diag::Diagnostic::error(
                    "Simulated failure",
                    "sim: delete failed",
                )]),
            },
        );
        let expand: BTreeSet<String> = ["module.m.sim_object.s".to_string()].into();
        let s = v.snapshot(2_000, &expand);
        assert_eq!(s.phase, "applying");
        assert_eq!(
            s.counts,
            Counts {
                total: 5,
                pending: 2,
                running: 1,
                done: 1,
                failed: 1
            }
        );
        let ids: Vec<_> = s.groups.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "sim_object.net",
                "module.m.sim_object.s",
                "sim_object.same",
                "sim_object.dns"
            ]
        );
        assert_eq!(
            (s.groups[3].deps.clone(), s.groups[3].depth),
            (vec![1], 2),
            "net is implied by module.m.sim_object.s"
        );
        let m = &s.groups[1];
        assert_eq!((m.instances, m.depth, m.deps.clone()), (2, 1, vec![0]));
        assert_eq!(m.actions.get("replace"), Some(&1));
        assert_eq!(s.groups[2].counts.total, 0, "a no-op is no operation");
        let insts = &s.expanded["module.m.sim_object.s"];
        let st: Vec<_> = insts.iter().map(|i| (i.addr.as_str(), i.status)).collect();
        assert_eq!(
            st,
            [
                ("module.m[\"a\"].sim_object.s[0]", "running"),
                ("module.m[\"b\"].sim_object.s[0]", "failed")
            ]
        );
        assert_eq!(s.errors.len(), 1);
        assert_eq!(
            s.errors[0].addr.as_deref(),
            Some("module.m[\"b\"].sim_object.s[0]")
        );
        assert_eq!(s.slowest[0].ms, 300);
        assert_eq!(
            s.running_longest[0].ms, 500,
            "started at 1.5 s, seen at 2 s"
        );
        // 2 operations ended within the window of 1 s so far.
        assert!((s.rate - 2.0).abs() < 1e-9, "{}", s.rate);

        v.apply(
            2_500,
            &RunEvent::Finished {
                status: fleetform_shared::wire::RunStatus::Failed,
                summary: Default::default(),
            },
        );
        let s = v.snapshot(9_000, &BTreeSet::new());
        assert_eq!((s.phase, s.status.as_deref()), ("finished", Some("failed")));
        assert_eq!((s.counts.pending, s.counts.running), (0, 0));
        assert!((s.elapsed_s - 1.5).abs() < 1e-9, "ends at its last event");
        assert!(s.expanded.is_empty());
    }

    #[test]
    fn ten_thousand_instances_travel_as_a_few_groups() {
        let mut v = RunView::new("r", "default", "apply");
        let mut plan = fleetform_shared::plan::Plan::default();
        plan.changes
            .push(change("sim_object.net", Action::Create, &[]));
        for i in 0..10_000 {
            plan.changes.push(change(
                &format!("module.m[\"{}\"].sim_object.s[{}]", i % 50, i / 50),
                Action::Create,
                &["sim_object.net"],
            ));
        }
        v.apply(0, &RunEvent::Planned(std::sync::Arc::new(plan)));
        let snap = v.snapshot(1, &BTreeSet::new());
        assert_eq!(snap.groups.len(), 2);
        assert_eq!(snap.counts.total, 10_001);
        let json = serde_json::to_string(&snap).unwrap();
        assert!(json.len() < 4_000, "{} bytes", json.len());
        let expand: BTreeSet<String> = ["module.m.sim_object.s".to_string()].into();
        let snap = v.snapshot(1, &expand);
        assert_eq!(snap.expanded["module.m.sim_object.s"].len(), EXPANDED_LIMIT);
    }
}
