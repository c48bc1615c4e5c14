//! `terraform-provider-random`: the `hashicorp/random`-like provider as a plugin process.

fn main() -> std::process::ExitCode {
    fleetform_providers::plugin_process::run(fleetform_providers::random::RandomProvider)
}
