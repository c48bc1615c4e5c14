//! What each command does; returns the process exit code.

mod generate;

use crate::args::{ApplyArgs, Cli, Command, PlanArgs, ProvidersCommand, RunArgs, StateCommand};
use crate::bundle;
use crate::client::{self, Client};
use crate::command::inspect;
use crate::command::providers;
use crate::embedded::Embedded;
use crate::follow::RunEnd;
use crate::present::json_events::JsonView;
use crate::present::report::report;
use crate::present::run_text::{Renderer, hcl_value, json_value};
use crate::vars;
use anyhow::Context;
use fleetform_lang::config::load_config;
use fleetform_shared::Value;
use fleetform_shared::diag::{Diagnostic, Diagnostics, Severity};
use fleetform_shared::json::Json;
use fleetform_shared::plan::SavedPlan;
use fleetform_shared::wire::{Operation, PlanOptions, RunRequest, RunStatus};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub async fn run(mut cli: Cli) -> anyhow::Result<u8> {
    if let Some(dir) = &cli.chdir {
        std::env::set_current_dir(dir)
            .with_context(|| format!("changing to directory {}", dir.display()))?;
    }
    // A positional DIR is -chdir=DIR (see `Command::take_dir`).
    if let Some(dir) = cli.command.take_dir() {
        std::env::set_current_dir(&dir)
            .with_context(|| format!("changing to directory {}", dir.display()))?;
    }
    crate::present::run_text::set_compact_warnings(cli.compact_warnings);
    crate::present::run_text::set_plain(cli.no_color);
    // TF_INPUT=0 (or false) is Terraform's -input=false.
    let tf_input = std::env::var("TF_INPUT")
        .map(|v| !matches!(v.to_ascii_lowercase().as_str(), "0" | "false"))
        .unwrap_or(true);
    cli.input = cli.input && tf_input;
    crate::vars::set_input(cli.input);
    if let Command::Refresh(run) = &cli.command {
        // Terraform's `refresh` is `apply -refresh-only -auto-approve`,
        // shown as the objects read and the outputs.
        crate::present::run_text::set_refresh_view(!run.json);
        let run = RunArgs {
            refresh_only: true,
            ..run.clone()
        };
        cli.command = Command::Apply(ApplyArgs {
            run,
            auto_approve: true,
        });
    }
    if let Command::Fmt(f) = &cli.command {
        return crate::command::fmt::run(f);
    }
    if let Command::Validate(v) = &cli.command {
        return validate(&config_dir(&v.dir), v.json).await;
    }
    if let Command::Modules(m) = &cli.command {
        return crate::command::modules::run(m.json);
    }
    if let Command::Metadata(crate::args::MetadataCommand::Functions(m)) = &cli.command {
        return Ok(crate::command::metadata::functions(m.json));
    }
    if let Command::Login(l) = &cli.command {
        return crate::command::login::login(
            l.host.as_deref(),
            cli.coordinator.as_deref(),
            cli.input,
        )
        .await;
    }
    if let Command::Logout(l) = &cli.command {
        return crate::command::login::logout(l.host.as_deref(), cli.coordinator.as_deref());
    }
    if let Command::Version(v) = &cli.command {
        return Ok(crate::command::providers::version(v.json));
    }
    if let Command::Test(t) = &cli.command {
        // Tests apply real objects: run where the user did not point them
        // (here, with this machine's credentials, instead of the fleet),
        // they could touch another account. Refused until a fleet runs them.
        if let Some(url) = &cli.coordinator {
            eprint!(
                "{}",
                crate::present::run_text::diagnostic(
                    &fleetform_shared::diag::Diagnostic::error(
                        "fleetform test runs in embedded mode only",
                        format!(
                            "A coordinator is given ({url}, from --coordinator or FLEETFORM_COORDINATOR), but a fleet does not run test files yet, and running them here instead would apply their objects with this machine's credentials. Unset it to run the tests here: FLEETFORM_COORDINATOR= fleetform test"
                        ),
                    ),
                    &BTreeMap::new()
                )
            );
            return Ok(1);
        }
        return crate::command::test::run(t).await;
    }
    if let Command::Init(a) = &cli.command {
        let code = crate::command::init::run(a)?;
        if code != 0 || (!a.migrate_state && a.project.is_none()) {
            if code == 0 {
                init_hint(cli.workspace.as_deref());
                if cli.coordinator.is_some() && matches!(crate::project::current(), Ok(None)) {
                    println!(
                        "\nThis directory is bound to no project; runs through the coordinator need one: fleetform init -project=NAME"
                    );
                }
            }
            return Ok(code);
        }
        // -migrate-state and -project go on below, with a coordinator.
    }
    if let Command::Providers(crate::args::ProvidersArgs {
        command: Some(ProvidersCommand::Schema(a)),
        ..
    }) = &cli.command
    {
        return providers::schema(a).await;
    }
    if let Command::Providers(crate::args::ProvidersArgs {
        command: Some(ProvidersCommand::Lock),
        ..
    }) = &cli.command
    {
        return providers::lock();
    }
    if let Command::Providers(crate::args::ProvidersArgs {
        command: Some(ProvidersCommand::Mirror(m)),
        ..
    }) = &cli.command
    {
        return providers::mirror(&m.target);
    }
    if let Command::Get(g) = &cli.command {
        let init = crate::args::InitArgs {
            upgrade: g.update,
            get: true,
            migrate_state: false,
            force_copy: false,
            project: None,
            reconfigure: false,
            dir: None,
        };
        return crate::command::init::run(&init);
    }
    if !cli.lock {
        eprintln!(
            "Warning: -lock=false is ignored: fleetform always locks a workspace while a run changes it, so that two runs never write one state. Read-only commands (state list, output, show) need no lock."
        );
    }
    if let Some(text) = &cli.lock_timeout {
        match fleetform_lang::eval::parse_go_duration(text) {
            Ok(wait) => client::set_lock_timeout(wait),
            Err(e) => {
                let d = Diagnostic::error(
                    "Invalid value for -lock-timeout",
                    format!("{e}. Give a duration such as 30s or 5m."),
                );
                return Ok(report(false, &d));
            }
        }
    }
    let ws = match crate::workspace::current(cli.workspace.as_deref()) {
        Ok(ws) => ws,
        Err(d) => return Ok(report(false, &d)),
    };
    if let Command::Workspace(crate::args::WorkspaceCommand::Show) = &cli.command {
        return Ok(crate::command::workspace::show(&ws));
    }
    // The state key: the workspace within the directory's project.
    let project = match crate::project::current() {
        Ok(p) => p,
        Err(d) => return Ok(report(json_output(&cli.command), &d)),
    };
    if cli.coordinator.is_some() && project.is_none() && needs_project(&cli.command) {
        return Ok(report(
            json_output(&cli.command),
            &crate::project::missing(),
        ));
    }
    let ws = fleetform_coordinator::store::state_key(project.as_deref(), &ws);
    if let Some(code) = without_coordinator(&cli)? {
        return Ok(code);
    }
    let (mut client, embedded) = match &cli.coordinator {
        Some(url) => (client::connect(url).await?, None),
        None => {
            let dir = std::env::current_dir()?;
            let e = match Embedded::start(&dir).await {
                Ok(e) => e,
                // Another fleetform process runs in this directory: reading
                // the state needs no coordinator of one's own.
                Err(e) if crate::embedded::busy(&e) && read_only(&cli.command) => {
                    Embedded::start_reader(&dir).await?
                }
                Err(e) if crate::embedded::busy(&e) => {
                    return Ok(report(false, &crate::embedded::busy_error(&dir, &ws).await));
                }
                Err(e) => return Err(e),
            };
            (client::connect_as(&e.url, Some(&e.token)).await?, Some(e))
        }
    };
    // A project must not leave an embedded directory's own (unbound)
    // states behind unnoticed.
    let result = match (&embedded, &project) {
        (Some(_), Some(p)) if needs_project(&cli.command) => {
            match crate::project::check_embedded_switch(&mut client, p).await {
                Ok(Some(d)) => Ok(report(json_output(&cli.command), &d)),
                Ok(None) => dispatch(&cli, &ws, &mut client).await,
                Err(e) => Err(e),
            }
        }
        _ => dispatch(&cli, &ws, &mut client).await,
    };
    if let Some(e) = embedded {
        e.stop().await;
    }
    result
}

/// After `init`: a Terraform state here is worth a word (whether fleetform
/// manages it already, `init` does not ask any coordinator).
fn init_hint(workspace: Option<&str>) {
    let ws = crate::workspace::current(workspace).unwrap_or_else(|_| "default".into());
    if let Some(found) = crate::migrate::find(&ws).filter(|f| f.instances > 0) {
        println!(
            "\nA Terraform state is here: {} ({} resource instance(s)). If fleetform does not manage it yet, take it over with: fleetform init -migrate-state",
            found.path.display(),
            found.instances
        );
    }
}

/// Whether a command uses a state, and so needs to know the project when it
/// goes through a coordinator.
fn needs_project(command: &Command) -> bool {
    match command {
        // Binding is what `init -project` does.
        Command::Init(a) => a.project.is_none(),
        Command::Runs(_) | Command::Workers | Command::ForceUnlock(_) => false,
        _ => true,
    }
}

/// Whether a command's diagnostics go out as `-json` messages.
fn json_output(command: &Command) -> bool {
    match command {
        Command::Plan(p) => p.run.json,
        Command::Apply(a) | Command::Destroy(a) => a.run.json,
        _ => false,
    }
}

/// Commands that only read the state: they work while another process
/// runs in the same directory.
fn read_only(command: &Command) -> bool {
    matches!(
        command,
        Command::Output(_)
            | Command::State(
                StateCommand::List
                    | StateCommand::Show(_)
                    | StateCommand::Pull(_)
                    | StateCommand::History
            )
            | Command::Runs(crate::args::RunsCommand::List)
            | Command::Workers
            | Command::Console(_)
            | Command::Workspace(crate::args::WorkspaceCommand::List)
    ) || matches!(command, Command::Show(s) if s.file.is_none())
}

/// Commands that need no coordinator, and argument errors found before
/// anything is started or submitted.
fn without_coordinator(cli: &Cli) -> anyhow::Result<Option<u8>> {
    let checked = |run: &RunArgs, destroy: bool| {
        let problem = run
            .plan_options(destroy)
            .and_then(|_| vars::collect(&config_dir(&run.dir), &run.vars))
            .err();
        problem.map(|d| report(run.json, &d))
    };
    Ok(match &cli.command {
        Command::Show(s) if s.file.is_some() => Some(inspect::show_plan_file(s)?),
        Command::Graph(g)
            if g.plan.is_some() && g.graph_type.as_deref() == Some("plan-destroy") =>
        {
            Some(report(
                false,
                &Diagnostic::error(
                    "Invalid combination of arguments",
                    "-type=plan-destroy draws the destroy order of the configuration; a saved plan (-plan=FILE) is drawn with -type=apply (its changes) or -type=plan (its configuration).",
                ),
            ))
        }
        Command::Graph(g) if g.plan.is_some() => Some(inspect::graph_plan_file(g)?),
        Command::Graph(g) if g.graph_type.as_deref() == Some("plan-destroy") => {
            Some(inspect::graph_resources(g)?)
        }
        Command::Graph(g) if g.graph_type.is_some() => Some(inspect::graph_plan(g)?),
        Command::Graph(g) => Some(inspect::graph_default(g)?),
        Command::Plan(p) => checked(&p.run, p.destroy),
        Command::Apply(a) | Command::Destroy(a)
            if !cli.input && !a.auto_approve && saved_plan_path(a).is_none() =>
        {
            Some(report(
                a.run.json,
                &Diagnostic::error(
                    "Approval required",
                    "-input=false means fleetform cannot ask for approval: add -auto-approve, or apply a saved plan file.",
                ),
            ))
        }
        Command::Apply(a) if saved_plan_path(a).is_none() => checked(&a.run, false),
        Command::Destroy(a) => checked(&a.run, true),
        _ => None,
    })
}

fn config_dir(dir: &Option<PathBuf>) -> PathBuf {
    dir.clone().unwrap_or_else(|| PathBuf::from("."))
}

/// `apply FILE`: the positional argument names a plan file, not a directory.
fn saved_plan_path(a: &ApplyArgs) -> Option<&Path> {
    a.run.dir.as_deref().filter(|p| p.is_file())
}

async fn dispatch(cli: &Cli, ws: &str, client: &mut Client) -> anyhow::Result<u8> {
    // Never plan against an empty state while a Terraform state with
    // objects is here (a saved plan was checked when it was made).
    let plans = match &cli.command {
        Command::Plan(p) => Some(p.run.json),
        Command::Apply(a) | Command::Destroy(a) if saved_plan_path(a).is_none() => Some(a.run.json),
        Command::Import(_) => Some(false),
        _ => None,
    };
    if let Some(json) = plans
        && let Some(d) = crate::migrate::check(client, ws).await?
    {
        return Ok(report(json, &d));
    }
    match &cli.command {
        Command::Init(a) => {
            let mut key = ws.to_string();
            if let Some(name) = &a.project {
                let code =
                    crate::project::init(client, name, a.reconfigure, a.migrate_state).await?;
                if code != 0 {
                    return Ok(code);
                }
                // A Terraform state here goes into the new binding.
                let ws = fleetform_coordinator::store::workspace_of(ws);
                key = fleetform_coordinator::store::state_key(Some(name), ws);
            }
            let code = if a.migrate_state {
                crate::migrate::migrate(client, &key).await?
            } else {
                0
            };
            if code == 0 {
                crate::command::init::say_initialized();
            }
            Ok(code)
        }
        Command::Plan(p) => plan(client, ws, p).await,
        Command::Apply(a) => apply(client, ws, a, Operation::Apply).await,
        Command::Destroy(a) => apply(client, ws, a, Operation::Destroy).await,
        Command::Providers(_) => providers::tree(client, ws).await,
        Command::Console(c) => crate::command::console::run(client, ws, &c.vars).await,
        Command::Validate(_)
        | Command::Get(_)
        | Command::Fmt(_)
        | Command::Refresh(_)
        | Command::Modules(_)
        | Command::Metadata(_)
        | Command::Login(_)
        | Command::Logout(_)
        | Command::Test(_)
        | Command::Version(_) => {
            unreachable!("handled before connecting")
        }
        Command::Output(o) => output(client, ws, o.name.as_deref(), o.json, o.raw).await,
        Command::State(c) => crate::command::state::run(client, ws, c, cli.input).await,
        Command::Workspace(w) => crate::command::workspace::run(client, ws, w).await,
        Command::Import(a) => import(client, ws, a).await,
        Command::Taint(a) => {
            client::set_tainted(client, ws, &a.address, true).await?;
            println!(
                "Resource instance {} has been marked as tainted.",
                a.address
            );
            Ok(0)
        }
        Command::Untaint(a) => {
            client::set_tainted(client, ws, &a.address, false).await?;
            println!(
                "Resource instance {} has been successfully untainted.",
                a.address
            );
            Ok(0)
        }
        Command::Show(s) => inspect::show_state(client, ws, s.json).await,
        Command::Graph(_) => unreachable!("graph is drawn without a coordinator"),
        Command::Runs(r) => crate::command::runs::run(client, ws, r).await,
        Command::Workers => crate::command::runs::workers(client).await,
        Command::ForceUnlock(a) => {
            crate::command::runs::force_unlock(client, ws, a, cli.input).await
        }
    }
}

async fn plan(client: &mut Client, ws: &str, p: &PlanArgs) -> anyhow::Result<u8> {
    let options = match p.run.plan_options(p.destroy) {
        Ok(o) => o,
        Err(d) => return Ok(report(p.run.json, &d)),
    };
    if p.run.parallelism.is_some() && !p.run.json {
        // Said, not silently ignored: the flag limits what applying runs.
        eprintln!(
            "Warning: -parallelism limits the operations an apply runs at once; a plan is not limited by it (apply this plan with -parallelism to limit its operations)."
        );
    }
    // `plan -destroy` only plans: the operation is a destroy, stopped after planning.
    let op = if p.destroy {
        Operation::Destroy
    } else {
        Operation::Plan
    };
    let mut request = new_request(&p.run, op, false, true, options)?;
    let generation = match &p.generate_config_out {
        Some(out) => match generate::prepare(out, &mut request) {
            Ok(g) => g,
            Err(d) => return Ok(report(p.run.json, &d)),
        },
        None => None,
    };
    let mut files = request.files.clone();
    let data_files = request.data_files.clone();
    let end = submit(client, ws, request, p.run.json, true).await?;
    if matches!(end.status, RunStatus::Failed | RunStatus::Cancelled) {
        return Ok(1);
    }
    let generated = match (&generation, &end.plan) {
        (Some(g), Some(plan)) => generate::write(g, plan, &mut files)?,
        _ => false,
    };
    if generated && !p.run.json {
        eprint!(
            "{}",
            crate::present::run_text::diagnostic(&generate::warning(), &BTreeMap::new())
        );
    }
    let has_changes = end.has_changes;
    if has_changes && !p.run.json {
        println!("\n{}", "─".repeat(77));
        if let Some(g) = generation.as_ref().filter(|_| generated) {
            println!("\n{}", generate::written_note(g));
        }
        if p.out.is_none() {
            println!(
                "\nNote: You didn't use the -out option to save this plan, so fleetform can't\nguarantee to take exactly these actions if you run \"fleetform apply\" now."
            );
        }
    }
    if let (Some(out), Some(plan)) = (&p.out, &end.plan) {
        let mut saved = SavedPlan::new(ws, (**plan).clone(), files);
        saved.data_files = data_files;
        std::fs::write(out, crate::command::inspect::encode_plan_file(out, &saved)?)
            .with_context(|| format!("writing the plan file {}", out.display()))?;
        if !p.run.json {
            println!(
                "\nSaved the plan to: {0}\n\nTo perform exactly these actions, run the following command to apply:\n    fleetform apply \"{0}\"",
                out.display()
            );
        }
    }
    Ok(if p.detailed_exitcode && has_changes {
        2
    } else {
        0
    })
}

async fn apply(client: &mut Client, ws: &str, a: &ApplyArgs, op: Operation) -> anyhow::Result<u8> {
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
    let saved = match crate::command::inspect::decode_plan_file(path, &bytes) {
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

fn new_request(
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

/// `fleetform import ADDR ID`: an import-only run, applied at once.
async fn import(client: &mut Client, ws: &str, a: &crate::args::ImportArgs) -> anyhow::Result<u8> {
    a.address.parse::<fleetform_shared::AbsResourceInstance>()?;
    let args = RunArgs {
        vars: a.vars.clone(),
        ..RunArgs::default()
    };
    let options = PlanOptions {
        imports: vec![(a.address.clone(), a.id.clone())],
        import_only: true,
        ..PlanOptions::default()
    };
    let request = new_request(&args, Operation::Apply, true, false, options)?;
    let end = submit(client, ws, request, false, true).await?;
    if end.status != RunStatus::Succeeded {
        return Ok(1);
    }
    println!(
        "\nImport successful!\n\nThe resources that were imported are shown above. These resources are now in\nyour fleetform state and will henceforth be managed by fleetform."
    );
    Ok(0)
}

/// Submits a run and shows it to people or, with `-json`, to tools.
async fn submit(
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

async fn validate(dir: &Path, json: bool) -> anyhow::Result<u8> {
    let files = bundle::pack(dir)?;
    let (config, mut diags) = load_config(&files);
    if let Some(c) = &config
        && !diags.has_errors()
        && let Err(d) = fleetform_lang::graph::config::build(c, &[])
    {
        diags.extend(d);
    }
    if let Some(c) = &config {
        let clean = !diags.has_errors();
        match providers::schemas_of(c).await {
            Ok(schemas) => {
                // Reported with the other ephemeral errors (found without
                // schemas), in source order, as Terraform's validation does.
                let found = fleetform_lang::config::check_ephemeral_arguments(c, &schemas);
                if !found.is_empty() {
                    diags.extend(found);
                    diags.0.sort_by_key(|d| {
                        d.range.as_ref().map(|r| (r.filename.clone(), r.start.byte))
                    });
                }
                if clean {
                    diags.extend(fleetform_lang::config::check_against_schemas(c, &schemas));
                }
            }
            Err(d) if clean => diags.push(d),
            Err(_) => {}
        }
    }
    let valid = !diags.has_errors();
    if json {
        let list: Vec<serde_json::Value> = diags
            .iter()
            .map(|d| {
                crate::present::json_events::diagnostic(d, &files).to_serde()["diagnostic"].clone()
            })
            .collect();
        let errors = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let doc = serde_json::json!({
            "format_version": "1.0",
            "valid": valid,
            "error_count": errors,
            "warning_count": list.len() - errors,
            "diagnostics": list,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print_diags(&diags, &files);
        if valid {
            println!("Success! The configuration is valid.");
        }
    }
    Ok(if valid { 0 } else { 1 })
}

fn print_diags(diags: &Diagnostics, files: &BTreeMap<String, String>) {
    for d in diags.iter() {
        eprint!("{}", crate::present::run_text::diagnostic(d, files));
    }
}

async fn output(
    client: &mut Client,
    ws: &str,
    name: Option<&str>,
    json: bool,
    raw: bool,
) -> anyhow::Result<u8> {
    let outputs = client::state(client, ws)
        .await?
        .map(|s| s.outputs)
        .unwrap_or_default();
    match name {
        Some(n) => {
            let Some(o) = outputs.get(n) else {
                eprintln!(
                    "Error: Output \"{n}\" not found\n\nThe output variable requested could not be found in the state file."
                );
                return Ok(1);
            };
            if json {
                println!("{}", json_value(&o.value));
            } else if raw {
                match &o.value {
                    // Like terraform output -raw: the bare value, no newline.
                    Value::String(s) => print!("{s}"),
                    Value::Number(n) => print!("{n}"),
                    Value::Bool(b) => print!("{b}"),
                    _ => {
                        eprintln!(
                            "Error: Unsupported value for raw output\n\nThe -raw option only supports strings, numbers, and boolean values."
                        );
                        return Ok(1);
                    }
                }
            } else {
                println!("{}", hcl_value(&o.value, 0));
            }
        }
        None if json => {
            let obj: Json = outputs
                .iter()
                .map(|(k, o)| {
                    // The value's type in cty's JSON form, as Terraform
                    // prints it (a map reads as an object: fleetform's
                    // values do not tell the two apart).
                    let ty = fleetform_shared::cty::infer_type(&o.value);
                    let ty = Json::parse(&fleetform_shared::cty::type_to_json(&ty))
                        .unwrap_or(Json::Null);
                    let fields = [
                        ("sensitive", o.sensitive.into()),
                        ("type", ty),
                        ("value", json_value(&o.value)),
                    ];
                    (k.clone(), Json::object(fields))
                })
                .collect();
            println!("{}", obj.to_string_pretty());
        }
        None => {
            for (k, o) in &outputs {
                let v = if o.sensitive {
                    "<sensitive>".to_string()
                } else {
                    hcl_value(&o.value, 0)
                };
                println!("{k} = {v}");
            }
        }
    }
    Ok(0)
}

/// A directory as an absolute path (`path.cwd`); as given when it cannot be
/// resolved.
fn absolute(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}
