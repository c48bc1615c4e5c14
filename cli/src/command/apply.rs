//! `apply` and `destroy` (and `refresh`, which is `apply -refresh-only
//! -auto-approve`): a run that applies, or a saved plan applied exactly.

use crate::args::ApplyArgs;
use crate::client::Client;
use crate::present::report::report;
use crate::submit::{absolute, new_request, submit};
use crate::vars;
use anyhow::Context;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::{Operation, PlanOptions, RunRequest, RunStatus};
use std::path::Path;
use std::sync::Arc;

pub async fn run(
    client: &mut Client,
    ws: &str,
    a: &ApplyArgs,
    op: Operation,
) -> anyhow::Result<u8> {
    let json = a.run.json;
    if let Some(path) = saved_plan_path(a) {
        return apply_saved(client, ws, a, op, path).await;
    }
    if json && !a.auto_approve {
        return Ok(report(
            json,
            &Diagnostic::error(
                "Plan file or auto-approve required",
                "fleetform cannot ask for interactive approval when -json is set. You can either apply a saved plan file, or enable the -auto-approve option.",
            ),
        ));
    }
    let options = match a.run.plan_options(op == Operation::Destroy) {
        Ok(o) => o,
        Err(d) => return Ok(report(json, &d)),
    };
    let request = new_request(&a.run, op, a.auto_approve, false, options)?;
    let end = submit(client, ws, request, json, true).await?;
    Ok(if end.status == RunStatus::Succeeded {
        0
    } else {
        1
    })
}

/// `apply FILE`: applies exactly the saved plan, without asking (Terraform
/// takes creating the plan file as the approval).
async fn apply_saved(
    client: &mut Client,
    ws: &str,
    a: &ApplyArgs,
    op: Operation,
    path: &Path,
) -> anyhow::Result<u8> {
    let json = a.run.json;
    let refuse =
        |summary: &str, detail: String| Ok(report(json, &Diagnostic::error(summary, detail)));
    if op == Operation::Destroy {
        return refuse(
            "Invalid arguments",
            format!(
                "destroy does not take a plan file; to apply a destroy plan, run: fleetform apply \"{}\"",
                path.display()
            ),
        );
    }
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let saved = match crate::plan_file::decode(path, &bytes) {
        Ok(s) => s,
        Err(e) => {
            return refuse(
                &format!("Failed to load \"{}\" as a plan file", path.display()),
                format!("Error: {e}."),
            );
        }
    };
    if saved.workspace != ws {
        return refuse(
            "Saved plan is for a different workspace",
            format!(
                "The plan was made for workspace {:?}; the current workspace is {ws:?}.",
                saved.workspace
            ),
        );
    }
    // Planning options (-target, -replace...) were applied when the plan was
    // made; like Terraform, they are ignored here. The plan carries its
    // final variable values but for the ephemeral ones, which the variable
    // sources give again (the coordinator refuses a -var for any other).
    let inputs = vars::collect(Path::new("."), &a.run.vars)
        .map_err(|d| anyhow::anyhow!("{}: {}", d.summary, d.detail))?;
    let mut request = RunRequest {
        operation: Operation::Apply,
        files: saved.files,
        data_files: saved.data_files,
        cwd: absolute(Path::new(".")),
        source: crate::project::source(Path::new(".")),
        variables: Vec::new(),
        auto_approve: true,
        saved_plan: Some(Arc::new(saved.plan)),
        plan_only: false,
        options: PlanOptions::default(),
        auto_var_files: Vec::new(),
        env_variables: Vec::new(),
    };
    inputs.fill(&mut request);
    let end = submit(client, ws, request, json, false).await?;
    Ok(if end.status == RunStatus::Succeeded {
        0
    } else {
        1
    })
}

/// `apply FILE`: the positional argument names a plan file, not a directory.
pub fn saved_plan_path(a: &ApplyArgs) -> Option<&Path> {
    a.run.dir.as_deref().filter(|p| p.is_file())
}
