//! `check` blocks (assertions and an optional scoped data source) and
//! `removed` blocks.

use super::args::{
    address_text, at, check_rules, const_bool, labels, missing_argument, not_implemented,
    reject_rest,
};
use super::body::NestedBlockSyntax;
use super::model::{Check, Module, Removed, RemovedTarget};
use super::resource::decode_resource;
use fleetform_shared::addr::{ConfigResource, InstanceKey, ResourceMode, Target};
use fleetform_shared::diag::{Diagnostic, Diagnostics};

pub(super) fn check(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    let name = b.labels[0].clone();
    let asserts = check_rules(b.body.take_blocks("assert"), diags);
    let mut data = None;
    for d in b.body.take_blocks("data") {
        if !labels(&d, &["type", "name"], diags) {
            continue;
        }
        if let Some(prev) = &data {
            let prev: &super::model::ResourceBlock = &m.resources[prev];
            diags.push(
                Diagnostic::error(
                    "Multiple data resource blocks",
                    format!(
                        "This check block already has a data resource defined at {}.",
                        at(&prev.decl_range)
                    ),
                )
                .at(d.decl_range.clone()),
            );
            continue;
        }
        let Some(mut r) = decode_resource(d, diags) else {
            continue;
        };
        for (what, present) in [
            ("count", r.count.is_some()),
            ("for_each", r.for_each.is_some()),
        ] {
            if present {
                diags.push(
                    Diagnostic::error(
                        "Invalid meta-argument",
                        format!("A data source scoped in a check block cannot use the \"{what}\" meta-argument."),
                    )
                    .at(r.decl_range.clone()),
                );
            }
        }
        r.count = None;
        r.for_each = None;
        r.check = Some(name.clone());
        let addr = r.addr.clone();
        let before = m.resources.len();
        m.add_resource(r, diags);
        if m.resources.len() > before {
            data = Some(addr);
        }
    }
    reject_rest(&b.body, diags);
    if asserts.is_empty() && !diags.has_errors() {
        diags.push(
            Diagnostic::error(
                "Zero assert blocks",
                "Check blocks must have at least one assert block.",
            )
            .at(b.decl_range.clone()),
        );
    }
    if let Some(prev) = m.checks.get(&name) {
        diags.push(
            Diagnostic::error(
                "Duplicate check block",
                format!(
                    "A check block named {name:?} was already defined at {}. Check blocks must have unique names within a module.",
                    at(&prev.decl_range)
                ),
            )
            .at(b.decl_range.clone()),
        );
        return;
    }
    m.checks.insert(
        name.clone(),
        Check {
            name,
            asserts,
            data,
            range: b.range,
            decl_range: b.decl_range,
        },
    );
}

pub(super) fn removed(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    let from = b.body.take_attribute("from");
    let mut destroy = true;
    let mut lifecycles = b.body.take_blocks("lifecycle");
    if let Some(mut l) = (!lifecycles.is_empty()).then(|| lifecycles.remove(0)) {
        if let Some(a) = l.body.take_attribute("destroy") {
            destroy = const_bool(&a, diags).unwrap_or(true);
        }
        reject_rest(&l.body, diags);
    }
    for extra in &lifecycles {
        diags.push(
            Diagnostic::error(
                "Duplicate lifecycle block",
                "A removed block may have only one lifecycle block.",
            )
            .at(extra.decl_range.clone()),
        );
    }
    for p in b
        .body
        .take_blocks("provisioner")
        .into_iter()
        .chain(b.body.take_blocks("connection"))
    {
        diags.push(not_implemented(
            &format!("{} blocks in removed blocks", p.type_name),
            &p.decl_range,
        ));
    }
    reject_rest(&b.body, diags);
    let Some(from) = from else {
        diags.push(missing_argument("from", &b.body.missing_item_range));
        return;
    };
    let Some(text) = address_text(&from.expr, diags) else {
        return;
    };
    let invalid = |detail: String| {
        Diagnostic::error("Invalid \"removed\" address", detail).at(from.expr.range.clone())
    };
    let target = match text.parse::<Target>() {
        Ok(Target::Module(mi)) if mi.0.iter().all(|(_, k)| *k == InstanceKey::None) => {
            RemovedTarget::Module(mi.module())
        }
        Ok(Target::Resource(r)) if r.module.0.iter().all(|(_, k)| *k == InstanceKey::None) => {
            if r.resource.mode == ResourceMode::Data {
                diags.push(
                    Diagnostic::error(
                        "Data source address is not allowed",
                        "Data sources cannot be destroyed, and therefore, 'removed' blocks are not allowed to target them. To remove data sources from the state, you should remove the data source block from the configuration.",
                    )
                    .at(from.expr.range.clone()),
                );
                return;
            }
            RemovedTarget::Resource(ConfigResource {
                module: r.module.module(),
                resource: r.resource,
            })
        }
        Ok(_) => {
            diags.push(invalid(
                "Resource instance keys not allowed: resource address must be a resource (e.g. \"test_instance.foo\"), not a resource instance (e.g. \"test_instance.foo[1]\"), and module addresses must not have instance keys.".into(),
            ));
            return;
        }
        Err(e) => {
            diags.push(invalid(format!("{e}")));
            return;
        }
    };
    m.removed.push(Removed {
        from: target,
        destroy,
        from_range: from.expr.range,
        range: b.range,
        decl_range: b.decl_range,
    });
}
