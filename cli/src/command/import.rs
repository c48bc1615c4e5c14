//! `import ADDR ID`: an import-only run, applied at once.

use crate::args::RunArgs;
use crate::client::Client;
use crate::submit::{new_request, submit};
use fleetform_shared::wire::{Operation, PlanOptions, RunStatus};

/// `fleetform import ADDR ID`: an import-only run, applied at once.
pub async fn run(client: &mut Client, ws: &str, a: &crate::args::ImportArgs) -> anyhow::Result<u8> {
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
