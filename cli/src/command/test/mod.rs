//! `fleetform test`: the runs of `.tftest.hcl` files, as `terraform test`
//! runs them and with its output. An embedded coordinator in a scratch
//! directory holds the tests' states, so the directory's own workspaces
//! are never touched; each file's runs share a state per module they plan
//! (in order), and what they applied is destroyed when the file is done.
//!
//! - `discover`: which files, in which order.
//! - `config`: the configuration a run plans, with the file's providers.
//! - `runner`: one run: plan/apply, expected failures, asserts.
//! - `expect`: which diagnostics are the failures a run expected.
//! - `scope`: what a test file's expressions see.
//! - `teardown`: destroying a file's states.

mod config;
mod discover;
mod expect;
mod runner;
mod scope;
mod teardown;

use crate::args::TestArgs;
use crate::client;
use crate::embedded::Embedded;
use fleetform_lang::config::{TestFile, load_test_file};
use fleetform_shared::diag::{Diagnostic, Diagnostics, Severity};
use fleetform_shared::value::Value;
use runner::{Context, Outcome, Status};
use std::collections::BTreeMap;

/// Runs every test file; exit status 1 when any run did not pass.
pub async fn run(args: &TestArgs) -> anyhow::Result<u8> {
    if args.json {
        return Ok(crate::present::report::report(
            false,
            &Diagnostic::error(
                "Unsupported option",
                "fleetform test does not support -json yet: run it without -json for the human-readable report.",
            ),
        ));
    }
    let cli_vars = match crate::vars::collect(std::path::Path::new("."), &args.vars) {
        Ok(v) => v,
        Err(d) => return Ok(crate::present::report::report(false, &d)),
    };
    let paths = discover::test_files(&args.test_directory, &args.filter)?;
    let mut files = Vec::new();
    let mut sources = BTreeMap::new();
    let mut load_diags = Diagnostics::new();
    for path in paths {
        if path.ends_with(".tftest.json") {
            load_diags.push(Diagnostic::error(
                "Unsupported test feature: JSON test files",
                format!(
                    "fleetform test does not read JSON test files yet, and will not run the tests without {path}: write it as {}.tftest.hcl.",
                    path.trim_end_matches(".tftest.json")
                ),
            ));
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        let (file, diags) = load_test_file(&path, &text);
        sources.insert(path.clone(), text);
        load_diags.extend(diags);
        files.extend(file);
    }
    if load_diags.has_errors() {
        show(&load_diags, &sources);
        return Ok(1);
    }
    let scratch = tempfile::tempdir()?;
    let embedded = Embedded::start(scratch.path()).await?;
    let mut client = client::connect_as(&embedded.url, Some(&embedded.token)).await?;
    let mut counts: BTreeMap<Status, usize> = BTreeMap::new();
    let mut failed = false;
    let mut result = Ok(());
    for (i, file) in files.iter().enumerate() {
        match run_file(&mut client, file, i, &cli_vars, args.verbose, &sources).await {
            Ok((statuses, file_ok)) => {
                for s in statuses {
                    *counts.entry(s).or_default() += 1;
                }
                failed |= !file_ok;
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    embedded.stop().await;
    result?;
    let count = |s: Status| counts.get(&s).copied().unwrap_or(0);
    let skipped = match count(Status::Skip) {
        0 => ".".to_string(),
        n => format!(", {n} skipped."),
    };
    println!(
        "\n{} {} passed, {} failed{skipped}",
        if failed { "Failure!" } else { "Success!" },
        count(Status::Pass),
        count(Status::Fail) + count(Status::Error),
    );
    Ok(u8::from(failed))
}

/// Runs one file's runs in order, then tears its states down; the status
/// of each run and whether the file passed.
async fn run_file(
    client: &mut client::Client,
    file: &TestFile,
    index: usize,
    cli_vars: &crate::vars::VarInputs,
    verbose: bool,
    sources: &BTreeMap<String, String>,
) -> anyhow::Result<(Vec<Status>, bool)> {
    println!("{}... in progress", file.filename);
    let mut statuses = Vec::new();
    let mut outputs: BTreeMap<String, Value> = BTreeMap::new();
    let mut states = teardown::States::new(index);
    let mut worst = Status::Pass;
    for run in &file.runs {
        if worst == Status::Error {
            println!("  run {:?}... skip", run.name);
            statuses.push(Status::Skip);
            continue;
        }
        let workspace = states.workspace_for(run);
        let mut ctx = Context {
            client,
            file,
            cli_vars,
            runs: &outputs,
            verbose,
        };
        let (outcome, applied) = runner::execute(&mut ctx, run, &workspace).await?;
        if let Some(a) = applied {
            states.used(&workspace, &run.name, a);
        }
        report_run(&run.name, &outcome, sources);
        worst = worst.max(outcome.status);
        statuses.push(outcome.status);
        outputs.insert(run.name.clone(), outcome.outputs);
    }
    println!("{}... tearing down", file.filename);
    let cleaned = states.destroy_all(client, &file.filename, sources).await?;
    let passed = worst == Status::Pass && cleaned;
    println!(
        "{}... {}",
        file.filename,
        if passed { "pass" } else { "fail" }
    );
    Ok((statuses, passed))
}

fn report_run(name: &str, outcome: &Outcome, sources: &BTreeMap<String, String>) {
    println!("  run {name:?}... {}", outcome.status.word());
    if let Some(text) = &outcome.verbose {
        println!("\n{text}");
    }
    let mut sources = sources.clone();
    sources.extend(outcome.sources.clone());
    show(&outcome.diags, &sources);
}

/// Diagnostics as Terraform's test command shows them: warnings on
/// standard output, errors on standard error.
fn show(diags: &Diagnostics, sources: &BTreeMap<String, String>) {
    let mut warned = false;
    for d in diags.iter() {
        let text = crate::present::run_text::diagnostic_wrapped(d, sources);
        match d.severity {
            Severity::Warning => {
                warned = true;
                print!("{text}");
            }
            Severity::Error => eprint!("{text}"),
        }
    }
    // Terraform leaves a line after a run's warnings.
    if warned {
        println!();
    }
}
