//! From the parsed command line to the command: the global flags
//! (`-chdir`, `-no-color`, `-input`, `-lock-timeout`, the workspace and the
//! project), the commands that need no coordinator, arguments refused
//! before anything starts, then a coordinator (given, or embedded) and the
//! command that uses it. What each command does is in [`crate::command`];
//! this returns its exit code.

use crate::args::{ApplyArgs, Cli, Command, ProvidersCommand, RunArgs, StateCommand};
use crate::client::{self, Client};
use crate::command::providers;
use crate::embedded::Embedded;
use crate::present::report::report;
use crate::submit::config_dir;
use crate::vars;
use anyhow::Context;
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::Operation;
use std::collections::BTreeMap;

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
        return crate::command::validate::run(&config_dir(&v.dir), v.json).await;
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
            | Command::Drift
            | Command::Console(_)
            | Command::Graph(_)
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
        Command::Show(s) if s.file.is_some() => Some(crate::command::show::plan_file(s)?),
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
        Command::Graph(g) if g.plan.is_some() => Some(crate::command::graph::plan_file(g)?),
        Command::Plan(p) => checked(&p.run, p.destroy),
        Command::Apply(a) | Command::Destroy(a)
            if !cli.input
                && !a.auto_approve
                && crate::command::apply::saved_plan_path(a).is_none() =>
        {
            Some(report(
                a.run.json,
                &Diagnostic::error(
                    "Approval required",
                    "-input=false means fleetform cannot ask for approval: add -auto-approve, or apply a saved plan file.",
                ),
            ))
        }
        Command::Apply(a) if crate::command::apply::saved_plan_path(a).is_none() => {
            checked(&a.run, false)
        }
        Command::Destroy(a) => checked(&a.run, true),
        _ => None,
    })
}

async fn dispatch(cli: &Cli, ws: &str, client: &mut Client) -> anyhow::Result<u8> {
    // Never plan against an empty state while a Terraform state with
    // objects is here (a saved plan was checked when it was made).
    let plans = match &cli.command {
        Command::Plan(p) => Some(p.run.json),
        Command::Apply(a) | Command::Destroy(a)
            if crate::command::apply::saved_plan_path(a).is_none() =>
        {
            Some(a.run.json)
        }
        Command::Import(_) => Some(false),
        _ => None,
    };
    if let Some(json) = plans
        && let Some(d) = crate::migrate::check(client, ws).await?
    {
        return Ok(report(json, &d));
    }
    match &cli.command {
        Command::Init(a) => crate::command::init::with_coordinator::run(client, ws, a).await,
        Command::Plan(p) => crate::command::plan::run(client, ws, p).await,
        Command::Apply(a) => crate::command::apply::run(client, ws, a, Operation::Apply).await,
        Command::Destroy(a) => crate::command::apply::run(client, ws, a, Operation::Destroy).await,
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
        Command::Output(o) => {
            crate::command::output::run(client, ws, o.name.as_deref(), o.json, o.raw).await
        }
        Command::State(c) => crate::command::state::run(client, ws, c, cli.input).await,
        Command::Workspace(w) => crate::command::workspace::run(client, ws, w).await,
        Command::Import(a) => crate::command::import::run(client, ws, a).await,
        Command::Taint(a) => crate::command::taint::taint(client, ws, &a.address).await,
        Command::Untaint(a) => crate::command::taint::untaint(client, ws, &a.address).await,
        Command::Show(s) => crate::command::show::state(client, ws, s.json).await,
        Command::Graph(g) => crate::command::graph::with_state(client, ws, g).await,
        Command::Runs(r) => crate::command::runs::run(client, ws, r).await,
        Command::Workers => crate::command::workers::run(client).await,
        Command::Drift => crate::command::drift::run(client, ws).await,
        Command::ForceUnlock(a) => {
            crate::command::force_unlock::run(client, ws, a, cli.input).await
        }
    }
}
