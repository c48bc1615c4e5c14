//! `terraform-provider-null`: the null provider as a plugin process.

fn main() -> std::process::ExitCode {
    fleetform_providers::plugin_process::run(fleetform_providers::null::NullProvider)
}
