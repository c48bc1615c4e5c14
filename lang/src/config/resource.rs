//! `resource` and `data` blocks: meta-arguments (count, for_each, provider,
//! depends_on, lifecycle) are taken out; the rest is the schema-less body.

use super::args::{at, check_rules, const_bool, reject_rest};
use super::body::{Attribute, NestedBlockSyntax};
use super::model::{IgnoreChanges, Lifecycle, ResourceBlock};
use super::named_value_blocks::depends_on;
use crate::eval::{ExprKind, TraversalStep};
use fleetform_shared::addr::{Resource, ResourceMode};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::value::{PathStep, Value};

pub(super) fn decode_resource(
    mut b: NestedBlockSyntax,
    diags: &mut Diagnostics,
) -> Option<ResourceBlock> {
    let mode = match b.type_name.as_str() {
        "data" => ResourceMode::Data,
        "ephemeral" => ResourceMode::Ephemeral,
        _ => ResourceMode::Managed,
    };
    let addr = Resource {
        mode,
        type_name: b.labels[0].clone().into(),
        name: b.labels[1].clone().into(),
    };
    let count = b.body.take_attribute("count");
    let for_each = b.body.take_attribute("for_each");
    if let (Some(_), Some(fe)) = (&count, &for_each) {
        diags.push(
            Diagnostic::error(
                "Invalid combination of \"count\" and \"for_each\"",
                "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.",
            )
            .at(fe.name_range.clone()),
        );
    }
    let provider = match b.body.take_attribute("provider") {
        Some(a) => provider_ref(&a, diags)?,
        None => addr.implied_provider().to_string(),
    };
    let depends = b
        .body
        .take_attribute("depends_on")
        .map(|a| depends_on(&a, diags))
        .unwrap_or_default();
    let mut lifecycles = b.body.take_blocks("lifecycle");
    if lifecycles.len() > 1 {
        diags.push(
            Diagnostic::error(
                "Duplicate lifecycle block",
                format!(
                    "This resource already has a lifecycle block at {}.",
                    at(&lifecycles[0].decl_range)
                ),
            )
            .at(lifecycles[1].decl_range.clone()),
        );
    }
    if mode == ResourceMode::Ephemeral
        && let Some(l) = lifecycles.first_mut()
    {
        // Terraform's words: only managed resources have these.
        for name in [
            "create_before_destroy",
            "prevent_destroy",
            "ignore_changes",
            "replace_triggered_by",
        ] {
            if let Some(a) = l.body.take_attribute(name) {
                diags.push(
                    Diagnostic::error(
                        "Invalid ephemeral resource lifecycle argument",
                        format!("The lifecycle argument \"{name}\" is defined only for managed resources (\"resource\" blocks), and is not valid for ephemeral resources."),
                    )
                    .at(a.name_range.clone()),
                );
            }
        }
    }
    let lifecycle = if lifecycles.is_empty() {
        Lifecycle::default()
    } else {
        lifecycle(lifecycles.remove(0), diags)
    };
    if mode == ResourceMode::Ephemeral {
        // Checked after opening in Terraform; not carried out here yet, so
        // refused rather than skipped.
        for rule in &lifecycle.postconditions {
            diags.push(super::args::not_implemented(
                "postconditions of ephemeral resources",
                &rule.decl_range,
            ));
        }
    }
    // A data block has no provisioners: its `provisioner` blocks stay in the
    // body, where the data source's schema rejects them as Terraform does.
    let provisioners = if mode == ResourceMode::Managed {
        super::provisioner::take_provisioners(&mut b.body, diags)
    } else {
        Vec::new()
    };
    Some(ResourceBlock {
        addr,
        provider,
        count: count.map(|a| a.expr),
        for_each: for_each.map(|a| a.expr),
        depends_on: depends,
        lifecycle,
        provisioners,
        body: b.body,
        range: b.range,
        decl_range: b.decl_range,
        check: None,
    })
}

/// `provider = aws` or `provider = aws.west`.
fn provider_ref(a: &Attribute, diags: &mut Diagnostics) -> Option<String> {
    match a.expr.as_static_address() {
        Some((root, steps)) if steps.is_empty() => Some(root),
        Some((root, steps)) if steps.len() == 1 => match &steps[0] {
            TraversalStep::Attr(alias) => Some(format!("{root}.{alias}")),
            TraversalStep::Index(_) => invalid_provider(a, diags),
        },
        _ => invalid_provider(a, diags),
    }
}

fn invalid_provider(a: &Attribute, diags: &mut Diagnostics) -> Option<String> {
    diags.push(
        Diagnostic::error(
            "Invalid provider reference",
            "Provider argument requires a provider name followed by an optional alias, like \"aws.foo\".",
        )
        .at(a.expr.range.clone()),
    );
    None
}

fn lifecycle(mut b: NestedBlockSyntax, diags: &mut Diagnostics) -> Lifecycle {
    let mut l = Lifecycle::default();
    if let Some(a) = b.body.take_attribute("create_before_destroy") {
        l.create_before_destroy = const_bool(&a, diags).unwrap_or(false);
    }
    if let Some(a) = b.body.take_attribute("prevent_destroy") {
        l.prevent_destroy = const_bool(&a, diags).unwrap_or(false);
    }
    if let Some(a) = b.body.take_attribute("ignore_changes") {
        l.ignore_changes = ignore_changes(&a, diags);
    }
    if let Some(a) = b.body.take_attribute("replace_triggered_by") {
        match a.expr.kind {
            ExprKind::Tuple(items) => l.replace_triggered_by = items,
            _ => diags.push(
                Diagnostic::error(
                    "Invalid replace_triggered_by expression",
                    "A static list expression is required.",
                )
                .at(a.expr.range.clone()),
            ),
        }
    }
    l.preconditions = check_rules(b.body.take_blocks("precondition"), diags);
    l.postconditions = check_rules(b.body.take_blocks("postcondition"), diags);
    reject_rest(&b.body, diags);
    l
}

fn ignore_changes(a: &Attribute, diags: &mut Diagnostics) -> IgnoreChanges {
    if a.expr.as_keyword() == Some("all") {
        return IgnoreChanges::All;
    }
    let ExprKind::Tuple(items) = &a.expr.kind else {
        diags.push(
            Diagnostic::error(
                "Invalid ignore_changes",
                "A static list expression or the keyword \"all\" is required.",
            )
            .at(a.expr.range.clone()),
        );
        return IgnoreChanges::None;
    };
    let mut paths = Vec::new();
    for item in items {
        let path = match (&item.kind, item.as_traversal()) {
            // The legacy quoted form: "tags".
            (ExprKind::Literal(Value::String(s)), _) => Some(vec![PathStep::Key(s.clone())]),
            (_, Some((root, steps))) => {
                let mut p = vec![PathStep::Key(root)];
                for s in steps {
                    p.push(match s {
                        TraversalStep::Attr(n) | TraversalStep::Index(Value::String(n)) => {
                            PathStep::Key(n)
                        }
                        TraversalStep::Index(Value::Number(n)) => match n.as_i64() {
                            Some(i) => PathStep::Index(i),
                            None => continue,
                        },
                        TraversalStep::Index(_) => continue,
                    });
                }
                Some(p)
            }
            _ => None,
        };
        match path {
            Some(p) => paths.push((p, item.range.clone())),
            None => diags.push(
                Diagnostic::error(
                    "Invalid ignore_changes",
                    "An attribute reference (like tags or tags[\"name\"]) is required.",
                )
                .at(item.range.clone()),
            ),
        }
    }
    IgnoreChanges::Paths(paths)
}
