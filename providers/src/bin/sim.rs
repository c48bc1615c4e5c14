//! `terraform-provider-sim`: the simulated cloud as a plugin process.

fn main() -> std::process::ExitCode {
    fleetform_providers::serve::run(fleetform_providers::sim::SimProvider)
}
