//! The states a test file's runs used, and destroying them when the
//! file is done: the one used last first, each with the configuration and
//! variables of the last run that applied to it, as Terraform does.

use super::runner::{self, Applied};
use crate::client::Client;
use crate::present::run_text::fill;
use fleetform_lang::config::TestRun;
use fleetform_shared::wire::{Operation, PlanOptions, RunStatus};
use std::collections::BTreeMap;

/// One scratch workspace per module a file's runs plan.
pub struct States {
    file_index: usize,
    /// Module source ("" for the configuration under test) → workspace.
    by_module: BTreeMap<String, String>,
    /// Workspaces with applied runs: the last run's name and request, in
    /// the order of their last use.
    applied: Vec<(String, String, Applied)>,
}

impl States {
    pub fn new(file_index: usize) -> States {
        States {
            file_index,
            by_module: BTreeMap::new(),
            applied: Vec::new(),
        }
    }

    /// The workspace of the run's module.
    pub fn workspace_for(&mut self, run: &TestRun) -> String {
        let key = run
            .module
            .as_ref()
            .map(|m| m.source.clone())
            .unwrap_or_default();
        let n = self.by_module.len();
        let file = self.file_index;
        self.by_module
            .entry(key)
            .or_insert_with(|| format!("test-{file}-{n}"))
            .clone()
    }

    /// A run applied to `workspace`: it is the one to destroy with.
    pub fn used(&mut self, workspace: &str, run: &str, applied: Applied) {
        self.applied.retain(|(w, _, _)| w != workspace);
        self.applied
            .push((workspace.to_string(), run.to_string(), applied));
    }

    /// Destroys every state, the last used first; false if any was left
    /// with objects (said on standard error).
    pub async fn destroy_all(
        self,
        client: &mut Client,
        filename: &str,
        sources: &BTreeMap<String, String>,
    ) -> anyhow::Result<bool> {
        let mut clean = true;
        for (workspace, run, applied) in self.applied.into_iter().rev() {
            let empty = crate::client::state(client, &workspace)
                .await?
                .is_none_or(|s| s.resources.is_empty());
            if empty {
                continue;
            }
            let mut request = applied.request;
            let files = request.files.clone();
            request.operation = Operation::Destroy;
            request.plan_only = false;
            // The run's plan options were for its plan, not for this one.
            request.options = PlanOptions::default();
            let (status, _, diags, _) = runner::submit(client, &workspace, request).await?;
            if status == RunStatus::Succeeded {
                continue;
            }
            clean = false;
            let left: Vec<String> = crate::client::state(client, &workspace)
                .await?
                .map(|s| s.resources.keys().map(|a| format!("  - {a}")).collect())
                .unwrap_or_default();
            let mut sources = sources.clone();
            sources.extend(files);
            let at = format!("{filename}/{run}");
            eprintln!(
                "{}",
                fill(
                    &format!(
                        "fleetform encountered an error destroying resources created while executing {at}."
                    ),
                    78
                )
            );
            super::show(&diags, &sources);
            eprintln!(
                "\n{}\n{}",
                fill(
                    &format!(
                        "fleetform left the following resources in state after executing {at}, and they need to be cleaned up manually:"
                    ),
                    78
                ),
                left.join("\n")
            );
        }
        Ok(clean)
    }
}
