//! Objects a Terraform state file brought in (`state push`, `init
//! -migrate-state`) are kept as the file had them until a run knows their
//! provider's schema; this decodes them then, so the plan compares values
//! and not a `dynamic` attribute's `{"value": …, "type": …}` wrapper.

use fleetform_shared::ProviderAddr;
use fleetform_shared::addr::ResourceMode;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::state::State;
use fleetform_shared::statefile;

/// Decodes `prior`'s undecoded objects of `provider` with its schema. The
/// plan walk calls it when the provider's schema arrives, which is before
/// any of its resources is planned or read (their nodes follow the
/// provider's). What cannot be decoded is an error naming the object.
pub(in crate::run) fn decode_prior(
    prior: &mut State,
    provider: &ProviderAddr,
    schema: &ProviderSchema,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for (addr, inst) in prior.resources.iter_mut() {
        if inst.provider != *provider {
            continue;
        }
        let r = &addr.resource.resource;
        let (found, kind) = match r.mode {
            ResourceMode::Managed => (schema.resources.get(r.type_name.as_str()), "resource type"),
            ResourceMode::Data => (schema.data_sources.get(r.type_name.as_str()), "data source"),
            ResourceMode::Ephemeral => (
                schema.ephemeral_resources.get(r.type_name.as_str()),
                "ephemeral resource type",
            ),
        };
        for obj in inst.current.iter_mut().chain(inst.deposed.values_mut()) {
            if !obj.undecoded {
                continue;
            }
            let result = match found {
                Some(s) => statefile::decode_object(obj, s).map(|_| ()),
                None => Err(format!(
                    "provider {provider} has no {kind} {:?} in its schema",
                    r.type_name
                )),
            };
            if let Err(e) = result {
                diags.push(Diagnostic::error(
                    "Invalid resource state",
                    format!("The state of {addr} cannot be read: {e}."),
                ));
            }
        }
    }
    diags
}
