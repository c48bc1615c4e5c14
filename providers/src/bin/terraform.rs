//! `terraform-provider-terraform`: the built-in `terraform.io/builtin/terraform`
//! provider as a plugin process, bundled next to the `fleetform` executable.

fn main() -> std::process::ExitCode {
    fleetform_providers::plugin_process::run(fleetform_providers::terraform::TerraformProvider)
}
