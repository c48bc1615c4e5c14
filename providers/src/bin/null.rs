//! `terraform-provider-null`: the null provider as a plugin process.

fn main() -> std::process::ExitCode {
    fleetform_providers::serve::run(fleetform_providers::null::NullProvider)
}
