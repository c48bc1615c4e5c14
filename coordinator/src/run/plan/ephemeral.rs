//! Ephemeral resources as the plan walk meets them: their instances' opens
//! queued as the walk reaches them (like data sources), and what an open
//! answered released to their dependents (see [`crate::run::eval::ephemeral`]).

use crate::run::eval::ephemeral::{open_started, prepare, record_open};
use crate::run::plan::walk::{Answer, Queued, ResourceInfo, Walker};
use fleetform_shared::addr::{AbsResourceInstance, ConfigResource};
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::graph::NodeId;
use fleetform_shared::wire::{TaskKind, TaskResult};
use std::time::Instant;

impl Walker<'_, '_> {
    /// Queues the opens of ephemeral resource `r`'s instances.
    pub(in crate::run) fn start_ephemeral(&mut self, id: NodeId, r: ConfigResource) {
        let Some(provider) = self.ctx.graph.resource_providers.get(&r).cloned() else {
            self.unknown_resource(id, &r);
            return;
        };
        let mut diags = Diagnostics::new();
        let prepared = prepare(self.ctx, &r, &mut diags);
        self.diags.extend(diags);
        let Some((spec, prepared)) = prepared else {
            self.unknown_resource(id, &r);
            return;
        };
        let prefix = self.ctx.planning_prefix();
        let queued: Vec<Queued> = prepared
            .into_iter()
            .filter_map(|p| {
                let task = p.task?;
                Some(Queued {
                    node: id,
                    answer: Answer::Open,
                    id: format!("{prefix}:open:{}", p.addr),
                    provider: spec.clone(),
                    kind: TaskKind::Open(task),
                    prior_from_state: false,
                    addr: p.addr,
                })
            })
            .collect();
        let dependencies = self.direct_dependencies(id);
        self.resources.insert(
            id,
            ResourceInfo {
                dependencies,
                create_before_destroy: false,
                provider,
                remaining: queued.len(),
                triggered: Default::default(),
            },
        );
        if queued.is_empty() {
            self.complete(id);
            return;
        }
        self.queued.extend(queued);
    }

    pub(in crate::run) fn open_started(&mut self, addr: &AbsResourceInstance) {
        self.reads_started.insert(addr.clone(), Instant::now());
        open_started(self.ctx, addr);
    }

    pub(in crate::run) fn ephemeral_opened(
        &mut self,
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    ) {
        let info = self.resources.get_mut(&node).expect("resource info");
        info.remaining -= 1;
        let finished = info.remaining == 0;
        let spec = self.ctx.providers[&info.provider].0.clone();
        let started = self
            .reads_started
            .remove(&addr)
            .unwrap_or_else(Instant::now);
        let mut diags = Diagnostics::new();
        if let Some(o) = record_open(self.ctx, &addr, &spec, result, started, &mut diags) {
            self.ctx.opened.push(o);
        }
        self.diags.extend(diags);
        if finished {
            self.complete(node);
        }
    }
}
