//! Objects of the state in HCL syntax: one as `state show` prints it
//! ([`instance_text`]), the whole state as `show` prints it
//! ([`state_text`]). With the provider's schema an object reads as a
//! resource block ([`super::block_text`]); without it, as its value with
//! the sensitive parts hidden.

use fleetform_shared::AbsResourceInstance;
use fleetform_shared::Value;
use fleetform_shared::plan::shape::Shapes;
use fleetform_shared::state::{ObjectState, ObjectStatus, State};

/// The state as `show` prints it: each object, then the outputs.
pub fn state_text(state: &State, shapes: &Shapes) -> String {
    let mut blocks = Vec::new();
    for (addr, inst) in &state.resources {
        let r = &addr.resource.resource;
        let shape = shapes.get(&inst.provider, r.mode, &r.type_name);
        if let Some(obj) = &inst.current {
            blocks.push(instance_text(addr, obj, None, shape));
        }
        for (key, obj) in &inst.deposed {
            blocks.push(instance_text(addr, obj, Some(key), shape));
        }
    }
    let mut out = blocks.join("\n");
    if !state.outputs.is_empty() {
        out.push_str("\n\nOutputs:\n\n");
        for (name, o) in &state.outputs {
            let v = if o.sensitive {
                "(sensitive value)".to_string()
            } else {
                super::state_text::show_value(&o.value, 0)
            };
            out.push_str(&format!("{name} = {v}\n"));
        }
    }
    out
}

/// One object the way `state show` prints it: a comment naming it, then
/// its attributes as a resource block.
pub fn instance_text(
    addr: &AbsResourceInstance,
    obj: &ObjectState,
    deposed: Option<&str>,
    shape: Option<&fleetform_shared::plan::shape::BlockShape>,
) -> String {
    let r = &addr.resource.resource;
    let mut note = String::new();
    if let Some(key) = deposed {
        note.push_str(&format!(" (deposed object {key})"));
    }
    if obj.status == ObjectStatus::Tainted {
        note.push_str(" (tainted)");
    }
    let kind = match r.mode {
        fleetform_shared::addr::ResourceMode::Managed => "resource",
        fleetform_shared::addr::ResourceMode::Data => "data",
        fleetform_shared::addr::ResourceMode::Ephemeral => "ephemeral",
    };
    format!(
        "# {addr}:{note}\n{kind} \"{}\" \"{}\" {}\n",
        r.type_name,
        r.name,
        match shape {
            Some(shape) => super::block_text::object_body(
                &obj.value,
                shape,
                &fleetform_shared::marks::Marks::from_paths(obj.sensitive_paths.iter().cloned()),
            ),
            None => masked_hcl(obj),
        }
    )
}

const HIDDEN: &str = "(sensitive value)";

/// The object in HCL syntax with its sensitive parts hidden.
fn masked_hcl(obj: &fleetform_shared::state::ObjectState) -> String {
    let mut value = obj.value.clone();
    for p in &obj.sensitive_paths {
        mask(&mut value, p);
    }
    super::state_text::object_body(&value).replace(&format!("\"{HIDDEN}\""), HIDDEN)
}

/// Replaces the (non-null) value at `path` with the sensitive placeholder.
fn mask(v: &mut Value, path: &[fleetform_shared::value::PathStep]) {
    use fleetform_shared::value::PathStep;
    match (path.split_first(), v) {
        (None, v) if !v.is_null() => *v = Value::from(HIDDEN),
        (Some((PathStep::Key(k), rest)), Value::Map(m)) => {
            if let Some(x) = m.get_mut(k) {
                mask(x, rest);
            }
        }
        (Some((PathStep::Index(i), rest)), Value::List(items)) => {
            if let Some(x) = usize::try_from(*i).ok().and_then(|i| items.get_mut(i)) {
                mask(x, rest);
            }
        }
        _ => {}
    }
}
