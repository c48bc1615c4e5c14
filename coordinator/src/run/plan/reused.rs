//! The plan walk's steps on recent reads (`-refresh-max-age`, see
//! `reuse.rs`): whether an instance may plan on a recorded read, noting
//! that it does, reading again one whose plan changes it, and recording
//! each read planning made.

use crate::run::plan::reuse::Reused;
use crate::run::plan::walk::{PlanPrior, Walker};
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{PriorObject, ProviderSpec, TaskKind};
use std::sync::Arc;

impl Walker<'_, '_> {
    /// The recorded read of `addr` young enough to plan on, if any.
    pub(in crate::run) fn reusable(&self, addr: &AbsResourceInstance) -> Option<PriorObject> {
        let max_age = self.reuse.max_age_ms?;
        let record = self.reuse.record.as_ref()?;
        let r = record.fresh(addr, &self.ctx.prior, self.reuse.now_ms, max_age)?;
        r.object.clone()
    }

    /// Notes that `addr`'s plan task takes a reused read, with what
    /// planning it again takes.
    pub(in crate::run) fn plan_on_reused(
        &mut self,
        addr: &AbsResourceInstance,
        spec: &Arc<ProviderSpec>,
        config: &Value,
        force_replace: bool,
    ) {
        let Some(record) = self.reuse.record.as_ref() else {
            return;
        };
        let read_at_ms = record.entries.get(addr).map_or(0, |r| r.read_at_ms);
        self.reuse.reused.insert(
            addr.clone(),
            Reused {
                read_at_ms,
                spec: spec.clone(),
                config: config.clone(),
                force_replace,
            },
        );
    }

    /// For `addr`, planned on a reused read to a change: plans it again on
    /// a new read and says so (true), unless the user chose to plan
    /// changes on earlier reads.
    pub(in crate::run) fn reread_changed(
        &mut self,
        node: fleetform_shared::graph::NodeId,
        addr: &AbsResourceInstance,
    ) -> bool {
        if !self.reuse.reread_changed {
            return false;
        }
        let Some(r) = self.reuse.reused.remove(addr) else {
            return false;
        };
        self.reuse.reread += 1;
        if let Some(info) = self.resources.get_mut(&node) {
            info.remaining += 1;
        }
        let mut q = self.plan_task(
            node,
            &r.spec,
            addr.clone(),
            PlanPrior::State,
            r.config,
            r.force_replace,
        );
        // Its own task id: the first plan's answer is in the journal.
        q.id.push_str(":reread");
        if let TaskKind::Plan(p) = &mut q.kind {
            p.refresh = true;
        }
        self.queued.push_back(q);
        true
    }

    /// Records what planning `addr` read (or that its read was reused).
    pub(in crate::run) fn plan_read(
        &mut self,
        addr: &AbsResourceInstance,
        object: Option<&PriorObject>,
    ) {
        if let Some(r) = self.reuse.reused.remove(addr) {
            self.reuse.kept += 1;
            let oldest = self.reuse.oldest_ms.get_or_insert(r.read_at_ms);
            *oldest = (*oldest).min(r.read_at_ms);
            return;
        }
        let Some(record) = self.reuse.record.as_mut() else {
            return;
        };
        self.reuse.read += 1;
        let now = crate::run::events::now_ms();
        record.record(addr.clone(), &self.ctx.prior, object.cloned(), now);
    }
}
