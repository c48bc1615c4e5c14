//! `plan`: submits a plan-only run, shows it, and with `-out` saves it as a
//! plan file (`-generate-config-out` writes the configuration of imported
//! objects: [`generate`]).

mod generate;

use crate::args::PlanArgs;
use crate::client::Client;
use crate::present::report::report;
use crate::submit::{new_request, submit};
use anyhow::Context;
use fleetform_shared::plan::SavedPlan;
use fleetform_shared::wire::{Operation, RunStatus};
use std::collections::BTreeMap;

pub async fn run(client: &mut Client, ws: &str, p: &PlanArgs) -> anyhow::Result<u8> {
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
        std::fs::write(out, crate::plan_file::encode(out, &saved)?)
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
