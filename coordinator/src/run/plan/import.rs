//! Imports while planning: the task that imports an `import` block's
//! target, and the imported object planned like a prior one; for a target
//! whose block is a stand-in (`plan -generate-config-out`), the block
//! written from the object and planned with.

use crate::run::eval::scope::EvalScope;
use crate::run::plan::walk::{Answer, PlanPrior, Queued, Walker};
use fleetform_lang::rules::lifecycle::apply_ignore_changes;
use fleetform_shared::addr::{AbsResourceInstance, ConfigResource};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::graph::NodeId;
use fleetform_shared::plan::{generated_block, generated_config};
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ImportTask, ProviderSpec, TaskKind, TaskOutcome, TaskResult};
use std::sync::Arc;

impl Walker<'_, '_> {
    /// Whether `r`'s block is a stand-in for configuration this plan
    /// writes (`plan -generate-config-out`).
    pub(in crate::run) fn generating(&self, r: &ConfigResource) -> bool {
        r.module.is_root()
            && self
                .ctx
                .request
                .options
                .generate_config
                .iter()
                .any(|g| *g == r.resource.to_string())
    }

    /// The task importing `addr` (its configuration kept until the object
    /// comes, see `imported`); `None` when its id cannot be had (the
    /// diagnostics say why).
    pub(in crate::run) fn import_task(
        &mut self,
        node: NodeId,
        spec: &Arc<ProviderSpec>,
        type_name: &str,
        addr: AbsResourceInstance,
        config: Value,
        source: &crate::run::plan::imports::ImportSource<'_>,
    ) -> Option<Queued> {
        // Import blocks live in the root module: their ids are evaluated
        // there, whatever module the target is in.
        let root = EvalScope::new(&self.ctx.values, self.ctx.workspace());
        let import_id = match source.id(&root) {
            Ok(i) => i,
            Err(d) => {
                self.diags.extend(d);
                return None;
            }
        };
        self.import_pending
            .insert(addr.clone(), (config, import_id.clone()));
        Some(Queued {
            node,
            answer: Answer::Import,
            id: format!("{}:import:{addr}", self.ctx.planning_prefix()),
            provider: spec.clone(),
            kind: TaskKind::Import(ImportTask {
                addr: addr.clone(),
                type_name: type_name.to_string(),
                id: import_id,
            }),
            prior_from_state: false,
            addr,
        })
    }

    /// An import finished: plan the imported object like a prior one.
    pub(in crate::run) fn imported(
        &mut self,
        node: NodeId,
        addr: AbsResourceInstance,
        result: Option<TaskResult>,
    ) {
        let (config, import_id) = self
            .import_pending
            .remove(&addr)
            .expect("import was pending");
        let object = match self.outcome(&addr, result) {
            Some(TaskOutcome::Import(o)) => {
                if self.diags.extend_at(o.diagnostics, &addr) {
                    None
                } else {
                    o.object
                }
            }
            _ => None,
        };
        let Some(object) = object else {
            // The failure is recorded; the instance counts as planned.
            self.instance_failed(node, &addr);
            return;
        };
        let cr = addr.config_resource();
        let block = &self
            .ctx
            .config
            .module(&cr.module)
            .expect("configured")
            .module
            .resources[&cr.resource];
        let (spec, schema) = self.ctx.providers[&self.ctx.graph.resource_providers[&cr]].clone();
        let config = if self.generating(&cr) {
            // Planned with what the written block decodes to, so the plan
            // is the one applying the file gives.
            let r = &cr.resource;
            let Some(s) = schema.resources.get(r.type_name.as_str()) else {
                self.instance_failed(node, &addr);
                return;
            };
            let text = generated_block(&r.type_name, &r.name, &import_id, &s.block, &object.value);
            // Aligned as `fmt` aligns it (as Terraform writes it).
            let text = fleetform_lang::fmt::format(&text).unwrap_or(text);
            self.generated.insert(addr.clone(), text);
            generated_config(&s.block, &object.value)
        } else {
            apply_ignore_changes(config, Some(&object.value), &block.lifecycle.ignore_changes)
        };
        self.imports
            .insert(addr.clone(), (import_id, object.clone()));
        let mut task = self.plan_task(node, &spec, addr, PlanPrior::Given(object), config, false);
        if let TaskKind::Plan(p) = &mut task.kind {
            // The object was read just now.
            p.refresh = false;
        }
        self.queued.push_back(task);
    }
}

/// An import target with a stand-in block whose object is already in the
/// state: nothing is imported, so nothing can be written for it.
pub(in crate::run) fn nothing_to_generate(addr: &AbsResourceInstance) -> Diagnostic {
    Diagnostic::error(
        "Cannot generate configuration",
        format!(
            "{addr} is already in the state, so its import block imports nothing and no configuration can be generated for it. Write its resource block yourself, or remove it from the state (fleetform state rm {addr}) to import it again."
        ),
    )
}
