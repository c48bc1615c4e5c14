//! `terraform-provider-random`: the `hashicorp/random`-like provider as a plugin process.

fn main() -> std::process::ExitCode {
    fleetform_providers::serve::run(fleetform_providers::random::RandomProvider)
}
