//! `terraform-provider-sim`: the simulated cloud as a plugin process.

fn main() -> std::process::ExitCode {
    fleetform_providers::plugin_process::run(fleetform_providers::sim::SimProvider)
}
