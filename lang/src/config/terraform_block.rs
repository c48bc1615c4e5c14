//! The `terraform` block: `required_version`, `required_providers` (source
//! addresses and version constraints under local names), and what else it
//! may hold. Override files merge into it (`merge.rs`) before it is read.

use super::args::{const_string, constant, reject_blocks, reject_rest};
use super::body::{Attribute, NestedBlockSyntax};
use super::model::*;
use fleetform_shared::addr::ProviderAddr;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::value::Value;

/// Reads a `terraform` block into the module's settings.
pub(super) fn terraform(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    if let Some(v) = b
        .body
        .take_attribute("required_version")
        .and_then(|a| const_string(&a, diags))
    {
        m.required_version.push(v);
    }
    for rp in b.body.take_blocks("required_providers") {
        reject_blocks(&rp.body, diags);
        for (name, a) in &rp.body.attributes {
            if let Some(req) = provider_requirement(name, a, diags) {
                m.required_providers.insert(name.clone(), req);
            }
        }
    }
    // Settings that do not change planning.
    for name in ["experiments", "language"] {
        b.body.take_attribute(name);
    }
    // Module metadata for providers: nothing to plan.
    b.body.take_blocks("provider_meta");
    // fleetform keeps state in its own store; a state configuration the
    // user wrote must not look as if it were used.
    for name in ["backend", "cloud"] {
        for block in b.body.take_blocks(name) {
            diags.push(
                Diagnostic::warning(
                    format!("The {name} block is not used"),
                    format!("fleetform keeps the state of this configuration in its own state store (embedded: .fleetform/ here; with a coordinator: under its --state URL, in the project this directory is bound to with `fleetform init -project=NAME`), not in the {} this block configures. To take over the Terraform state a local or an s3 backend holds, run `fleetform init -migrate-state` (an s3 backend is read with the AWS_* credentials of the environment); for another backend, `terraform state pull > old.tfstate`, then `fleetform state push old.tfstate`.", if name == "cloud" { "HCP Terraform workspace" } else { "backend" }),
                )
                .at(block.decl_range.clone()),
            );
        }
    }
    reject_rest(&b.body, diags);
}

fn provider_requirement(
    name: &str,
    a: &Attribute,
    diags: &mut Diagnostics,
) -> Option<ProviderRequirement> {
    let (source, version) = match constant(a, diags)? {
        // The legacy form: `null = "~> 3.0"`.
        Value::String(v) => (None, Some(v)),
        Value::Map(fields) => {
            let get = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_string);
            (get("source"), get("version"))
        }
        _ => {
            diags.push(
                Diagnostic::error(
                    "Invalid required_providers object",
                    "required_providers entries must be strings or objects.",
                )
                .at(a.expr.range.clone()),
            );
            return None;
        }
    };
    let source = match source {
        None => ProviderAddr::implied(name),
        Some(s) => match s.parse::<ProviderAddr>() {
            Ok(p) => p,
            Err(e) => {
                diags.push(
                    Diagnostic::error("Invalid provider source string", format!("{e}"))
                        .at(a.expr.range.clone()),
                );
                return None;
            }
        },
    };
    Some(ProviderRequirement {
        source,
        version,
        range: a.range.clone(),
    })
}
