//! `terraform-provider-local`: the `hashicorp/local`-like provider as a plugin process.

fn main() -> std::process::ExitCode {
    fleetform_providers::plugin_process::run(fleetform_providers::local::LocalProvider)
}
