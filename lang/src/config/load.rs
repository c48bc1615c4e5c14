//! Loading a module: parse every `.tf` and `.tf.json` file, merge the
//! override files into the others, then validate each top-level block into
//! the [`Module`] model.

use super::args::{address_text, at, const_string, labels, missing_argument, reject_rest};
use super::body::{Attribute, NestedBlockSyntax};
use super::files::{is_config_file, is_override_file, parse_config_file};
use super::merge::{apply_override_file, terraform_settings};
use super::model::*;
use super::named_value_blocks::{locals, output, variable};
use super::resource::decode_resource;
use super::terraform_block::terraform;
use crate::eval::Expr;
use fleetform_shared::addr::{AbsResourceInstance, Target};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};
use fleetform_shared::value::Value;
use std::collections::BTreeMap;

/// Loads a module from its files (name → contents). Files other than
/// `.tf` and `.tf.json` are ignored. Override files are merged into the
/// blocks of the others, in name order, before anything is validated. The
/// module is None only when a file has a syntax error; other problems are
/// diagnostics next to a partial module.
pub fn load_module(files: &BTreeMap<String, String>) -> (Option<Module>, Diagnostics) {
    let mut diags = Diagnostics::new();
    let mut primary = Vec::new();
    let mut overrides = Vec::new();
    let mut failed = false;
    for (name, src) in files.iter().filter(|(n, _)| is_config_file(n)) {
        let (body, d) = parse_config_file(name, src);
        diags.extend(d);
        match body {
            None => failed = true,
            Some(b) if is_override_file(name) => overrides.push(b),
            Some(b) => primary.push(b),
        }
    }
    if failed {
        return (None, diags);
    }
    for body in primary.iter().chain(&overrides) {
        for (name, attr) in &body.attributes {
            diags.push(
                Diagnostic::error(
                    "Unsupported argument",
                    format!("An argument named \"{name}\" is not expected here."),
                )
                .at(attr.name_range.clone()),
            );
        }
    }
    let mut blocks: Vec<NestedBlockSyntax> = primary.into_iter().flat_map(|b| b.blocks).collect();
    let mut override_settings = Vec::new();
    for body in overrides {
        override_settings.push(apply_override_file(&mut blocks, body, &mut diags));
    }
    let mut module = Module::default();
    for block in blocks {
        add_block(&mut module, block, &mut diags);
    }
    for settings in override_settings {
        terraform_settings(&mut module, settings, &mut diags);
    }
    (Some(module), diags)
}

fn add_block(m: &mut Module, block: NestedBlockSyntax, diags: &mut Diagnostics) {
    match block.type_name.as_str() {
        "terraform" if labels(&block, &[], diags) => terraform(m, block, diags),
        "provider" if labels(&block, &["name"], diags) => provider(m, block, diags),
        "variable" if labels(&block, &["name"], diags) => variable(m, block, diags),
        "locals" if labels(&block, &[], diags) => locals(m, block, diags),
        "output" if labels(&block, &["name"], diags) => output(m, block, diags),
        "moved" if labels(&block, &[], diags) => moved(m, block, diags),
        "module" if labels(&block, &["name"], diags) => module_call(m, block, diags),
        "resource" | "data" | "ephemeral" if labels(&block, &["type", "name"], diags) => {
            if let Some(r) = decode_resource(block, diags) {
                m.add_resource(r, diags);
            }
        }
        "import" if labels(&block, &[], diags) => import(m, block, diags),
        "check" if labels(&block, &["name"], diags) => super::check_blocks::check(m, block, diags),
        "removed" if labels(&block, &[], diags) => super::check_blocks::removed(m, block, diags),
        "terraform" | "provider" | "variable" | "locals" | "output" | "moved" | "module"
        | "resource" | "data" | "import" | "check" | "removed" | "ephemeral" => {}
        other => diags.push(
            Diagnostic::error(
                "Unsupported block type",
                format!("Blocks of type \"{other}\" are not expected here."),
            )
            .at(block.decl_range.clone()),
        ),
    }
}

fn provider(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    let alias = b
        .body
        .take_attribute("alias")
        .and_then(|a| const_string(&a, diags));
    if let Some(v) = b.body.take_attribute("version") {
        diags.push(
            Diagnostic::warning(
                "Version constraints inside provider configuration blocks are deprecated",
                "Terraform 0.13 and earlier allowed provider version constraints inside the provider configuration block, but that is now deprecated. Use a required_providers block instead.",
            )
            .at(v.range),
        );
    }
    let p = ProviderBlock {
        name: b.labels[0].clone(),
        alias,
        body: b.body,
        range: b.range,
        decl_range: b.decl_range,
    };
    let key = p.key();
    if let Some(prev) = m.providers.get(&key) {
        diags.push(
            Diagnostic::error(
                "Duplicate provider configuration",
                format!("A default (non-aliased) provider configuration for {key:?} was already given at {}. If multiple configurations are required, set the \"alias\" argument for alternative configurations.", at(&prev.decl_range)),
            )
            .at(p.decl_range.clone()),
        );
        return;
    }
    m.providers.insert(key, p);
}

fn moved(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    let from = b.body.take_attribute("from");
    let to = b.body.take_attribute("to");
    reject_rest(&b.body, diags);
    let (Some(from), Some(to)) = (from, to) else {
        diags.push(missing_argument(
            "from\" and \"to",
            &b.body.missing_item_range,
        ));
        return;
    };
    let (Some(f), Some(t)) = (
        address_text(&from.expr, diags),
        address_text(&to.expr, diags),
    ) else {
        return;
    };
    let parse = |text: &str, expr: &Expr, diags: &mut Diagnostics| match text.parse::<Target>() {
        Ok(t) => Some(t),
        Err(e) => {
            diags
                .push(Diagnostic::error("Invalid address", format!("{e}.")).at(expr.range.clone()));
            None
        }
    };
    let (Some(f), Some(t)) = (parse(&f, &from.expr, diags), parse(&t, &to.expr, diags)) else {
        return;
    };
    m.moved.push(Moved {
        from: f,
        to: t,
        from_range: from.expr.range,
        to_range: to.expr.range,
        range: b.range,
    });
}

fn import(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    let to = b.body.take_attribute("to");
    let id = b.body.take_attribute("id");
    // `provider` and `for_each` are accepted by newer Terraform; not yet here.
    reject_rest(&b.body, diags);
    let (Some(to), Some(id)) = (to, id) else {
        diags.push(missing_argument(
            "to\" and \"id",
            &b.body.missing_item_range,
        ));
        return;
    };
    let Some(t) = address_text(&to.expr, diags) else {
        return;
    };
    let t = match t.parse::<AbsResourceInstance>() {
        Ok(t) => t,
        Err(e) => {
            diags.push(
                Diagnostic::error("Invalid import address", format!("{e}."))
                    .at(to.expr.range.clone()),
            );
            return;
        }
    };
    m.imports.push(Import {
        to: t,
        id: id.expr,
        to_range: to.expr.range,
        range: b.range,
    });
}

fn module_call(m: &mut Module, mut b: NestedBlockSyntax, diags: &mut Diagnostics) {
    let name = b.labels[0].clone();
    let Some(source_attr) = b.body.take_attribute("source") else {
        diags.push(missing_argument("source", &b.body.missing_item_range));
        return;
    };
    let Some(source) = const_string(&source_attr, diags) else {
        return;
    };
    let version = b
        .body
        .take_attribute("version")
        .and_then(|a| const_string(&a, diags));
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
    let depends_on = b
        .body
        .take_attribute("depends_on")
        .map(|a| super::named_value_blocks::depends_on(&a, diags))
        .unwrap_or_default();
    let providers = b
        .body
        .take_attribute("providers")
        .map(|a| provider_map(&a, diags))
        .unwrap_or_default();
    for block in &b.body.blocks {
        diags.push(
            Diagnostic::error(
                "Unsupported block type",
                format!(
                    "Blocks of type \"{}\" are not expected here.",
                    block.type_name
                ),
            )
            .at(block.decl_range.clone()),
        );
    }
    if let Some(prev) = m.module_calls.get(&name) {
        diags.push(
            Diagnostic::error(
                "Duplicate module call",
                format!(
                    "A module call named {name:?} was already defined at {}. Module calls must have unique names within a module.",
                    at(&prev.decl_range)
                ),
            )
            .at(b.decl_range.clone()),
        );
        return;
    }
    m.module_calls.insert(
        name.clone(),
        ModuleCall {
            name,
            source,
            source_range: source_attr.expr.range,
            version,
            count: count.map(|a| a.expr),
            for_each: for_each.map(|a| a.expr),
            depends_on,
            providers,
            arguments: b.body.attributes,
            range: b.range,
            decl_range: b.decl_range,
        },
    );
}

/// `providers = { aws = aws.west, google.x = google }`.
fn provider_map(
    a: &Attribute,
    diags: &mut Diagnostics,
) -> Vec<(
    fleetform_shared::addr::LocalProviderConfig,
    fleetform_shared::addr::LocalProviderConfig,
    SourceRange,
)> {
    let crate::eval::ExprKind::Object(items) = &a.expr.kind else {
        diags.push(
            Diagnostic::error(
                "Invalid providers argument",
                "The providers argument must be a map from provider names in the child module to provider configurations in this module, like { aws = aws.west }.",
            )
            .at(a.expr.range.clone()),
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in items {
        let parse = |e: &Expr, diags: &mut Diagnostics| {
            let text = match (&e.kind, e.as_static_address()) {
                (_, Some(_)) => address_text(e, diags),
                (crate::eval::ExprKind::Literal(Value::String(s)), _) => Some(s.clone()),
                _ => None,
            };
            match text.and_then(|t| t.parse().ok()) {
                Some(p) => Some(p),
                None => {
                    diags.push(
                        Diagnostic::error(
                            "Invalid provider configuration reference",
                            "A provider configuration reference must not include an index and is written as a provider name followed by an optional alias, like aws.west.",
                        )
                        .at(e.range.clone()),
                    );
                    None
                }
            }
        };
        if let (Some(child), Some(parent)) = (parse(k, diags), parse(v, diags)) {
            out.push((child, parent, k.range.to(&v.range)));
        }
    }
    out
}
