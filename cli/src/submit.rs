//! A run as `plan`, `apply`, `destroy`, `refresh` and `import` submit it:
//! the request built from the run flags (the packed configuration, the
//! variable values), and the view it is followed with, for people or, with
//! `-json`, for tools.

use crate::args::RunArgs;
use crate::bundle;
use crate::client::Client;
use crate::follow::RunEnd;
use crate::present::json_events::JsonView;
use crate::present::run_text::Renderer;
use crate::vars;
use fleetform_shared::wire::{Operation, PlanOptions, RunRequest, RunStatus};
use std::path::{Path, PathBuf};

pub fn new_request(
    args: &RunArgs,
    operation: Operation,
    auto_approve: bool,
    plan_only: bool,
    options: PlanOptions,
) -> anyhow::Result<RunRequest> {
    let files = bundle::pack(&config_dir(&args.dir))?;
    if files.is_empty() {
        anyhow::bail!(
            "no configuration files in {}: fleetform needs at least one .tf file",
            config_dir(&args.dir).display()
        );
    }
    let dir = config_dir(&args.dir);
    let data_files = bundle::pack_data(&dir, &files)?;
    let mut request = RunRequest {
        operation,
        files,
        data_files,
        cwd: absolute(&dir),
        source: crate::project::source(&dir),
        variables: Vec::new(),
        auto_approve,
        saved_plan: None,
        plan_only,
        options,
        auto_var_files: Vec::new(),
        env_variables: Vec::new(),
    };
    let mut inputs = vars::collect(&config_dir(&args.dir), &args.vars)
        .map_err(|d| anyhow::anyhow!("{}: {}", d.summary, d.detail))?;
    vars::prompt_missing(&request.files, &mut inputs)?;
    inputs.fill(&mut request);
    Ok(request)
}

/// Submits a run and shows it to people or, with `-json`, to tools.
pub async fn submit(
    client: &mut Client,
    ws: &str,
    request: RunRequest,
    json: bool,
    show_plan: bool,
) -> anyhow::Result<RunEnd> {
    let (op, plan_only) = (request.operation, request.plan_only);
    let import_only = request.options.import_only;
    // Variables files are sources too: diagnostics in them show their lines.
    let mut files = request.files.clone();
    files.extend(vars::sources(&request));
    if json {
        let mut view = JsonView::new(files, op, plan_only, show_plan);
        return crate::follow::run(client, ws, request, &mut view).await;
    }
    let mut renderer = Renderer::new(files, op);
    renderer.show_plan = show_plan;
    renderer.refreshed = request.options.refresh;
    renderer.plan_only = op == Operation::Plan || plan_only;
    renderer.say_imports = !import_only;
    let end = crate::follow::run(client, ws, request, &mut renderer).await?;
    let has_changes = end.has_changes;
    let applied = op != Operation::Plan && !plan_only;
    // As Terraform: also when nothing changed, and the outputs after it.
    if end.status == RunStatus::Succeeded && applied && !import_only {
        if let Some(plan) = &end.plan {
            renderer.outputs_from_plan(plan);
        }
        if crate::present::run_text::refresh_view() {
            renderer.refresh_complete();
        } else {
            renderer.apply_complete(&end.summary);
        }
    }
    if end.status == RunStatus::Cancelled && !(applied && has_changes) {
        eprintln!("\nRun cancelled; nothing was changed.");
    }
    if end.status == RunStatus::Failed && applied && has_changes {
        eprintln!(
            "\nApply failed; the state records everything that was created before the failure, unless an error above says the state could not be written."
        );
    }
    Ok(end)
}

pub fn config_dir(dir: &Option<PathBuf>) -> PathBuf {
    dir.clone().unwrap_or_else(|| PathBuf::from("."))
}

/// A directory as an absolute path (`path.cwd`); as given when it cannot be
/// resolved.
pub fn absolute(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}
