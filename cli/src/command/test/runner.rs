//! One `run` block: its variables evaluated, its configuration planned
//! (and applied, for `command = apply`) by the embedded coordinator on the
//! file's scratch state, its expected failures sorted out and its asserts
//! checked against the plan or the applied state.

use super::config::{self, RunConfig, VARIABLES_SOURCE};
use super::expect;
use super::scope::TestScope;
use crate::client::Client;
use crate::present::run_view::RunView;
use crate::vars::VarInputs;
use fleetform_lang::config::{TestCommand, TestFile, TestRun};
use fleetform_lang::eval::{EvalEnv, MapFiles, evaluate};
use fleetform_lang::rules::conditions::{RuleKind, RuleStatus, check_rules};
use fleetform_shared::diag::{Diagnostic, Diagnostics, Severity};
use fleetform_shared::plan::Plan;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{
    Operation, PlanOptions, RunEvent, RunRequest, RunStatus, VariableArg,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// How a run ended, as Terraform names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Skip,
    Pass,
    /// An assertion was false: the file goes on.
    Fail,
    /// Anything else went wrong: the file's later runs are skipped.
    Error,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Skip => "skip",
            Status::Pass => "pass",
            Status::Fail | Status::Error => "fail",
        }
    }
}

pub struct Outcome {
    pub status: Status,
    /// What to show after the run's line.
    pub diags: Diagnostics,
    /// The plan or the state, for `-verbose`.
    pub verbose: Option<String>,
    /// The run's outputs as `run.NAME` gives them to later runs.
    pub outputs: Value,
    /// The configuration's files, for quoting lines of its diagnostics.
    pub sources: BTreeMap<String, String>,
}

/// What a run hands the file for its teardown: how to destroy what it
/// applied.
pub struct Applied {
    pub request: RunRequest,
}

/// Follows a run without showing it: its diagnostics, and whether it got
/// as far as applying.
#[derive(Default)]
struct Collect {
    diags: Diagnostics,
    applying: bool,
}

impl RunView for Collect {
    fn event(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Diagnostics(d) => self.diags.extend(d.clone()),
            RunEvent::ApplyErrored { diagnostics, .. } => {
                self.applying = true;
                self.diags.extend(diagnostics.clone());
            }
            RunEvent::ApplyStart { .. } | RunEvent::ApplyComplete { .. } => self.applying = true,
            _ => {}
        }
    }
}

/// Submits `request` on `workspace` and follows it quietly.
pub async fn submit(
    client: &mut Client,
    workspace: &str,
    request: RunRequest,
) -> anyhow::Result<(RunStatus, Option<Arc<Plan>>, Diagnostics, bool)> {
    let mut view = Collect::default();
    let end = crate::follow::run(client, workspace, request, &mut view).await?;
    Ok((end.status, end.plan, view.diags, view.applying))
}

/// Everything a run needs from its file.
pub struct Context<'a> {
    pub client: &'a mut Client,
    pub file: &'a TestFile,
    pub cli_vars: &'a VarInputs,
    /// Earlier runs' outputs by run name.
    pub runs: &'a BTreeMap<String, Value>,
    pub verbose: bool,
}

fn in_run(run: &TestRun, diags: Diagnostics) -> Diagnostics {
    let context = format!("run {:?}", run.name);
    diags
        .into_iter()
        .map(|d| match (&d.context, &d.range) {
            (None, Some(r)) if r.filename == run.decl_range.filename => {
                d.in_context(context.clone())
            }
            _ => d,
        })
        .collect()
}

fn errored(diags: Diagnostics) -> Outcome {
    outcome(Status::Error, diags, None, Value::null())
}

/// The test file's and the run's `variables`, evaluated in order (a
/// run's own replace the file's).
pub fn variable_values(
    file: &TestFile,
    run: &TestRun,
    runs: &BTreeMap<String, Value>,
) -> Result<BTreeMap<String, Value>, Diagnostics> {
    let mut values = BTreeMap::new();
    for attrs in [&file.variables, &run.variables] {
        let mut next = values.clone();
        for a in attrs.iter() {
            let scope = TestScope::inputs(values.clone(), runs);
            next.insert(a.name.clone(), evaluate(&a.expr, &scope)?);
        }
        values = next;
    }
    Ok(values)
}

/// Runs one `run` block on `workspace`; `Applied` when it may have left
/// objects in the state.
pub async fn execute(
    ctx: &mut Context<'_>,
    run: &TestRun,
    workspace: &str,
) -> anyhow::Result<(Outcome, Option<Applied>)> {
    let prepared = match config::prepare(ctx.file, run) {
        Ok(p) => p,
        Err(d) => return Ok((errored(in_run(run, d)), None)),
    };
    let values = match variable_values(ctx.file, run, ctx.runs) {
        Ok(v) => v,
        Err(d) => return Ok((errored(in_run(run, d)), None)),
    };
    let (outcome, applied) = planned(ctx, run, workspace, &prepared, values).await?;
    Ok((placed(outcome, &prepared), applied))
}

/// Runs the prepared configuration and judges the result.
async fn planned(
    ctx: &mut Context<'_>,
    run: &TestRun,
    workspace: &str,
    prepared: &RunConfig,
    values: BTreeMap<String, Value>,
) -> anyhow::Result<(Outcome, Option<Applied>)> {
    let request = request(ctx, run, prepared, &values);
    let (status, plan, diags, applying) = submit(ctx.client, workspace, request.clone()).await?;
    let applied = (run.command == TestCommand::Apply).then(|| Applied {
        request: request.clone(),
    });
    let module = &prepared.config.root.module;
    let sorted = expect::sort(run, module, diags);
    // A check block that fails a test's run fails it, as in Terraform
    // (outside tests it only warns); checked while planning and again
    // after applying, it is said once.
    let mut shown = Diagnostics::new();
    for mut d in sorted.rest {
        if d.summary == "Check block assertion failed" {
            d.severity = Severity::Error;
        }
        if !shown.iter().any(|s| *s == d) {
            shown.push(d);
        }
    }
    let failed = matches!(status, RunStatus::Failed | RunStatus::Cancelled);
    if shown.has_errors() || (failed && sorted.expected.is_empty()) {
        return Ok((errored(shown), applied));
    }
    if failed && run.command == TestCommand::Apply && !applying {
        // The failure was expected, but it stopped the apply the run asked for.
        shown.extend(expect::stopped_apply(run, &sorted.seen));
        shown.extend(sorted.expected);
        return Ok((errored(shown), applied));
    }
    let missing = expect::missing(run, &sorted.seen);
    if missing.has_errors() {
        shown.extend(missing);
        return Ok((errored(shown), applied));
    }
    if failed {
        // Only expected failures: nothing was planned to assert against.
        return Ok((outcome(Status::Pass, shown, None, Value::null()), applied));
    }
    let state = match run.command {
        TestCommand::Apply => crate::client::state(ctx.client, workspace).await?,
        TestCommand::Plan => None,
    };
    let env = EvalEnv {
        files: Arc::new(MapFiles::new(
            prepared
                .files
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
                .chain(
                    prepared
                        .data_files
                        .iter()
                        .map(|(k, b)| (k.clone(), b.0.clone())),
                ),
        )),
        apply: run.command == TestCommand::Apply,
        plan_timestamp: plan.as_ref().and_then(|p| p.timestamp.clone()),
        cwd: config::absolute(&prepared.dir),
    };
    let mut variables = values;
    if let Some(p) = &plan {
        variables.extend(p.variables.clone());
    }
    let scope = TestScope::after_run(module, variables, ctx.runs, env);
    let (scope, verbose) = match (&state, &plan) {
        (Some(s), _) => (
            scope.with_state(s),
            ctx.verbose
                .then(|| crate::present::object_text::state_text(s, &Default::default())),
        ),
        (None, Some(p)) => (
            scope.with_plan(p),
            ctx.verbose
                .then(|| crate::present::plan_text::render_plan(p)),
        ),
        (None, None) => (scope, None),
    };
    if run.command == TestCommand::Apply && !run.plan_options.target.is_empty() {
        shown.push(incomplete_apply());
    }
    let outputs = Value::Map(scope.outputs.clone().into_iter().collect());
    let (status, assert_diags) = asserts(run, &scope);
    shown.extend(assert_diags);
    Ok((outcome(status, shown, verbose, outputs), applied))
}

fn outcome(status: Status, diags: Diagnostics, verbose: Option<String>, outputs: Value) -> Outcome {
    Outcome {
        status,
        diags,
        verbose,
        outputs,
        sources: BTreeMap::new(),
    }
}

/// The outcome with the configuration's files to quote from, named from
/// the working directory as the diagnostics then name them (`setup/main.tf`
/// for a run of `./setup`).
fn placed(mut o: Outcome, prepared: &RunConfig) -> Outcome {
    let prefix = match prepared.dir.to_str() {
        Some(".") | None => String::new(),
        Some(d) => format!("{}/", d.trim_start_matches("./").trim_end_matches('/')),
    };
    for d in &mut o.diags.0 {
        if let Some(r) = &mut d.range
            && prepared.files.contains_key(&r.filename)
        {
            r.filename = format!("{prefix}{}", r.filename);
        }
    }
    o.sources = prepared
        .files
        .iter()
        .map(|(k, v)| (format!("{prefix}{k}"), v.clone()))
        .collect();
    o
}

/// The run's request: plan only for `command = plan`, the run's plan
/// options, the command line's variables and then the test's.
fn request(
    ctx: &Context<'_>,
    run: &TestRun,
    prepared: &RunConfig,
    values: &BTreeMap<String, Value>,
) -> RunRequest {
    let module = &prepared.config.root.module;
    let declared: BTreeMap<String, Value> = values
        .iter()
        .filter(|(k, _)| module.variables.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut inputs = ctx.cli_vars.clone();
    // A test's runs plan different modules: the command line's `-var`s
    // go to those that declare them.
    inputs.variables.retain(|v| match v {
        VariableArg::Var { name, .. } => module.variables.contains_key(name),
        VariableArg::File { .. } => true,
    });
    if !declared.is_empty() {
        inputs.variables.push(VariableArg::File {
            name: VARIABLES_SOURCE.to_string(),
            content: config::variables_file(&declared),
        });
    }
    let o = &run.plan_options;
    let options = PlanOptions {
        refresh: o.refresh.unwrap_or(true),
        refresh_only: o.refresh_only,
        replace: o.replace.clone(),
        targets: o.target.clone(),
        ..PlanOptions::default()
    };
    let mut request = RunRequest {
        operation: Operation::Apply,
        files: prepared.files.clone(),
        data_files: prepared.data_files.clone(),
        cwd: config::absolute(&prepared.dir),
        source: String::new(),
        variables: Vec::new(),
        auto_approve: true,
        saved_plan: None,
        plan_only: run.command == TestCommand::Plan,
        options,
        auto_var_files: Vec::new(),
        env_variables: Vec::new(),
    };
    inputs.fill(&mut request);
    request
}

/// Each assert in turn: a false one fails the run; one that cannot be
/// decided (unknown after a plan) or evaluated errs.
fn asserts(run: &TestRun, scope: &TestScope<'_>) -> (Status, Diagnostics) {
    let mut status = Status::Pass;
    let mut diags = Diagnostics::new();
    for rule in &run.asserts {
        let (s, d) = check_rules(std::slice::from_ref(rule), scope, RuleKind::TestAssertion);
        let false_only = d
            .iter()
            .all(|d| d.summary == "Test assertion failed" || d.severity != Severity::Error);
        match s {
            RuleStatus::Passed => {}
            RuleStatus::Failed if false_only => status = status.max(Status::Fail),
            RuleStatus::Failed => status = Status::Error,
            RuleStatus::Unknown => {
                status = Status::Error;
                let mut d = unknown_condition(rule, run.command);
                // Terraform names the values the condition refers to (an
                // unknown one by its type: "is a string").
                d.values =
                    fleetform_lang::rules::described::referenced_values(&rule.condition, scope);
                diags.push(d);
            }
        }
        diags.extend(d);
    }
    (status, in_run(run, diags))
}

/// Terraform's warning after applying a targeted plan.
fn incomplete_apply() -> Diagnostic {
    Diagnostic::warning(
        "Applied changes may be incomplete",
        "The plan was created with the -target option in effect, so some changes requested in the configuration may have been ignored and the output values may not be fully updated. Run the following command to verify that no other changes are pending:\n    fleetform plan\n\nNote that the -target option is not suitable for routine use, and is provided only for exceptional situations such as recovering from errors or mistakes, or when fleetform specifically suggests to use it as part of an error message.",
    )
}

fn unknown_condition(rule: &fleetform_lang::config::CheckRule, command: TestCommand) -> Diagnostic {
    let detail = match command {
        TestCommand::Plan => {
            "Condition expression could not be evaluated at this time. This means you have executed a `run` block with `command = plan` and one of the values your condition depended on is not known until after the plan has been applied. Either remove this value from your condition, or execute an `apply` command from this `run` block. Alternatively, if there is an override for this value, you can make it available during the plan phase by setting `override_during = plan` in the `override_` block."
        }
        TestCommand::Apply => {
            "Condition expression could not be evaluated at this time. This means the values your condition depended on are not known even after the apply."
        }
    };
    Diagnostic::error("Unknown condition value", detail).at(rule.condition.range.clone())
}
