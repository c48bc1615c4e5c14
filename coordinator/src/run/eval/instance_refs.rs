//! Which instances of other resources one resource instance's
//! configuration reads, where its expressions say so: `sim_object.a[count.index]`
//! in `sim_object.b[3]` reads `sim_object.a[3]`, once the index is
//! evaluated in the instance's scope. The apply walk uses it to isolate
//! failures: when `sim_object.a[7]` fails, `sim_object.b[3]` still
//! applies (see `apply::walk`, docs/planning/failures.md).
//!
//! Narrowing is all or nothing per resource and conservative: a resource
//! the configuration also reads whole (`sim_object.a.id`, a splat, a `for`
//! over it, `depends_on`, `count`/`for_each`, a provisioner or a `dynamic`
//! block), or through an index that is not known, is not narrowed; and an
//! instance whose configuration reads a local value, a module output or
//! (in a child module) an input variable narrows nothing, since those may
//! read any instance. What is not narrowed keeps Terraform's rule: a
//! failed instance holds back every instance that depends on its resource.

use crate::run::eval::scope::EvalScope;
use fleetform_lang::config::ResourceBlock;
use fleetform_lang::eval::{Expr, Reference, evaluate};
use fleetform_shared::addr::{AbsResource, InstanceKey, ModuleInstance};
use fleetform_shared::plan::InstanceRefs;
use fleetform_shared::value::Value;
use std::collections::BTreeSet;

/// The instances `block`'s instance in `module` (its key and `each` in
/// `scope`) reads, by resource: only the resources it reads by instance
/// alone (see the module's documentation).
pub(crate) fn narrowed(
    block: &ResourceBlock,
    module: &ModuleInstance,
    scope: &EvalScope<'_>,
) -> InstanceRefs {
    let mut refs: Vec<(Reference, Option<Expr>)> = block.body.instance_references();
    for rule in block
        .lifecycle
        .preconditions
        .iter()
        .chain(&block.lifecycle.postconditions)
    {
        refs.extend(rule.condition.instance_references());
        refs.extend(rule.error_message.instance_references());
    }
    // Read as a whole: evaluated without the instance's key, or ordering
    // only.
    let whole_refs = block
        .count
        .iter()
        .chain(&block.for_each)
        .chain(&block.lifecycle.replace_triggered_by)
        .flat_map(Expr::references)
        .chain(block.depends_on.iter().cloned())
        .chain(block.provisioners.iter().flat_map(|p| p.references()));
    refs.extend(whole_refs.map(|(r, _)| (r, None)));

    let mut keys = InstanceRefs::new();
    let mut whole: BTreeSet<AbsResource> = BTreeSet::new();
    for (reference, index) in refs {
        let resource = match reference {
            Reference::Resource(r) => r,
            Reference::Local(_) | Reference::ModuleCall(_) | Reference::ModuleOutput(..) => {
                return InstanceRefs::new();
            }
            Reference::Variable(_) if !module.is_root() => return InstanceRefs::new(),
            _ => continue,
        };
        let abs = AbsResource {
            module: module.clone(),
            resource,
        };
        match index.and_then(|i| key_of(&i, scope)) {
            Some(k) => {
                keys.entry(abs).or_default().insert(k);
            }
            None => {
                whole.insert(abs);
            }
        }
    }
    keys.retain(|r, _| !whole.contains(r));
    keys
}

/// The instance key an index expression gives in the instance's scope,
/// when it is known.
fn key_of(index: &Expr, scope: &EvalScope<'_>) -> Option<InstanceKey> {
    match evaluate(index, scope).ok()? {
        Value::Number(n) => n.as_i64().map(InstanceKey::Int),
        Value::String(s) => Some(InstanceKey::Str(s)),
        _ => None,
    }
}
