//! Which operations go to a worker process directly: the next link of a
//! chain, to the process that ran the link before it
//! ([`crate::dispatch::TaskQueue::send_direct`]). A link sent through the
//! queue costs five round trips between hosts (the task, the claim's three,
//! the result); sent directly with its claim written first, three.
//!
//! Only creates and updates without provisioners go directly: they are the
//! operations that claim, and whose claim can be written before they are
//! sent. Deletes and reads claim nothing and gain nothing. A process is
//! sent at most [`PER_PROCESS`] operations at once this way, so a result
//! that releases a wide layer does not pile it onto one worker: the rest
//! go through the queue, to whichever worker has a free slot.

use crate::dispatch::Near;
use fleetform_shared::graph::NodeId;
use fleetform_shared::wire::{ApplyOp, Task, TaskKind, TaskResult};
use std::collections::HashMap;

/// The process that produced `result`, taken out of it (a run journals
/// results, and has no use for the process there); None for in-process
/// workers and older ones, which say no incarnation.
pub(super) fn process_of(result: &mut TaskResult) -> Option<Near> {
    let incarnation = std::mem::take(&mut result.incarnation);
    (!incarnation.is_empty() && !result.worker.is_empty()).then(|| Near {
        worker: result.worker.clone(),
        incarnation,
    })
}

/// Operations sent directly to one process at once, at most.
const PER_PROCESS: usize = 8;

/// The walk's record of which process ran what each ready operation
/// waited for, and of the operations sent directly and not answered yet.
#[derive(Default)]
pub(super) struct Nearness {
    /// Off where the queue sends nothing directly (in-process workers).
    on: bool,
    /// Ready (or about to be) nodes, with the process whose result
    /// released them.
    near: HashMap<NodeId, Near>,
    /// Tasks sent directly, by id, with their process's worker id.
    sent: HashMap<String, String>,
    /// Per worker id: tasks sent directly and not answered.
    out: HashMap<String, usize>,
}

impl Nearness {
    pub fn new(on: bool) -> Nearness {
        Nearness {
            on,
            ..Nearness::default()
        }
    }

    /// `node` finished, carried out by `near` ([`process_of`] its result):
    /// what it releases may go to the same process.
    pub fn finished(&mut self, node: NodeId, near: Option<Near>) {
        match near.filter(|_| self.on) {
            Some(near) => {
                self.near.insert(node, near);
            }
            None => {
                self.near.remove(&node);
            }
        }
    }

    /// `node` is done and released `released`: they inherit its process
    /// (a barrier passes on the process of what completed it).
    pub fn released(&mut self, node: NodeId, released: &[NodeId]) {
        let Some(near) = self.near.remove(&node) else {
            return;
        };
        for r in released {
            self.near.insert(*r, near.clone());
        }
    }

    /// The process to send `task` (of `node`) to directly, if any: it is
    /// counted as sent from now on.
    pub fn take(&mut self, node: NodeId, task: &Task) -> Option<Near> {
        let near = self.near.remove(&node)?;
        let eligible = matches!(&task.kind, TaskKind::Apply(a) if a.provisioners.is_empty() && matches!(a.op, ApplyOp::Create | ApplyOp::Update));
        let out = self.out.entry(near.worker.clone()).or_default();
        if !eligible || *out >= PER_PROCESS {
            return None;
        }
        *out += 1;
        self.sent.insert(task.id.clone(), near.worker.clone());
        Some(near)
    }

    /// `task_id`'s answer came (or it was not sent after all).
    pub fn answered(&mut self, task_id: &str) {
        let Some(worker) = self.sent.remove(task_id) else {
            return;
        };
        if let Some(n) = self.out.get_mut(&worker) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.out.remove(&worker);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::wire::{ApplyTask, ProviderSpec, TaskOutcome};
    use std::sync::Arc;

    fn result(worker: &str, incarnation: &str) -> TaskResult {
        TaskResult {
            task_id: "t".into(),
            run_id: "r".into(),
            worker: worker.into(),
            outcome: TaskOutcome::Cancelled,
            incarnation: incarnation.into(),
        }
    }

    fn task(id: &str, op: ApplyOp) -> Task {
        Task {
            id: id.into(),
            run_id: "r".into(),
            provider: Arc::new(ProviderSpec {
                addr: fleetform_shared::ProviderAddr::implied("sim"),
                version_constraint: None,
                config: fleetform_shared::value::Value::null(),
                lock: Default::default(),
            }),
            kind: TaskKind::Apply(ApplyTask {
                addr: "sim_object.a".parse().unwrap(),
                type_name: "sim_object".into(),
                op,
                prior: None,
                config: fleetform_shared::value::Value::null(),
                planned: fleetform_shared::value::Value::null(),
                planned_private: vec![],
                provisioners: vec![],
            }),
        }
    }

    #[test]
    fn the_next_link_goes_to_the_process_that_ran_the_one_before() {
        let mut n = Nearness::new(true);
        let (a, b, c) = (NodeId::new(0), NodeId::new(1), NodeId::new(2));
        n.finished(a, process_of(&mut result("w1", "i1")));
        // Through a barrier (b) to c.
        n.released(a, &[b]);
        n.released(b, &[c]);
        let near = n.take(c, &task("c", ApplyOp::Create)).unwrap();
        assert_eq!(
            (near.worker.as_str(), near.incarnation.as_str()),
            ("w1", "i1")
        );
        // Taken once.
        assert_eq!(n.take(c, &task("c", ApplyOp::Create)), None);
    }

    #[test]
    fn only_creates_and_updates_go_directly_and_only_so_many_to_one_process() {
        let mut n = Nearness::new(true);
        let released: Vec<NodeId> = (1..=20).map(NodeId::new).collect();
        n.finished(NodeId::new(0), process_of(&mut result("w1", "i1")));
        n.released(NodeId::new(0), &released);
        assert_eq!(n.take(NodeId::new(1), &task("del", ApplyOp::Delete)), None);
        let sent: Vec<_> = (2..=20)
            .filter_map(|i| n.take(NodeId::new(i), &task(&format!("t{i}"), ApplyOp::Update)))
            .collect();
        assert_eq!(sent.len(), PER_PROCESS);
        // An answer frees a place.
        n.answered("t2");
        n.finished(NodeId::new(30), process_of(&mut result("w1", "i1")));
        n.released(NodeId::new(30), &[NodeId::new(31)]);
        assert!(
            n.take(NodeId::new(31), &task("t31", ApplyOp::Create))
                .is_some()
        );
    }

    #[test]
    fn nothing_goes_directly_when_off_or_without_a_process() {
        let mut off = Nearness::new(false);
        off.finished(NodeId::new(0), process_of(&mut result("w1", "i1")));
        off.released(NodeId::new(0), &[NodeId::new(1)]);
        assert_eq!(off.take(NodeId::new(1), &task("t", ApplyOp::Create)), None);
        let mut n = Nearness::new(true);
        // In-process workers have no incarnation; lost results none at all.
        n.finished(NodeId::new(0), process_of(&mut result("w1", "")));
        n.finished(NodeId::new(1), None);
        n.released(NodeId::new(0), &[NodeId::new(2)]);
        n.released(NodeId::new(1), &[NodeId::new(3)]);
        assert_eq!(n.take(NodeId::new(2), &task("a", ApplyOp::Create)), None);
        assert_eq!(n.take(NodeId::new(3), &task("b", ApplyOp::Create)), None);
    }
}
