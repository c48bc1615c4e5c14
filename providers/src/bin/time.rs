//! `terraform-provider-time`: the `hashicorp/time`-like provider as a plugin process.

fn main() -> std::process::ExitCode {
    fleetform_providers::plugin_process::run(fleetform_providers::time::TimeProvider)
}
