//! Loading a module: parse every `.tf` and `.tf.json` file, merge the
//! override files into the others, then validate each top-level block into
//! the [`Module`] model.

use super::body::{Attribute, Body, NestedBlockSyntax};
use super::files::{is_config_file, is_override_file, parse_config_file};
use super::merge::{apply_override_file, terraform_settings};
use super::model::*;
use super::named_values::{locals, output, variable};
use super::resource::decode_resource;
use crate::eval::{EmptyScope, Expr, convert, evaluate};
use fleetform_shared::addr::{AbsResourceInstance, ProviderAddr, Target};
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
                add_resource(m, r, diags);
            }
        }
        "import" if labels(&block, &[], diags) => import(m, block, diags),
        "check" if labels(&block, &["name"], diags) => super::checks::check(m, block, diags),
        "removed" if labels(&block, &[], diags) => super::checks::removed(m, block, diags),
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

/// Adds a resource or data source, refusing a second one of the same address.
pub(super) fn add_resource(m: &mut Module, r: ResourceBlock, diags: &mut Diagnostics) {
    if let Some(prev) = m.resources.get(&r.addr) {
        diags.push(
                        Diagnostic::error(
                            format!("Duplicate {} configuration", kind_word(&r)),
                            format!(
                                "A {} block named {:?} {:?} was already declared at {}. Resource names must be unique per type in each module.",
                                kind_word(&r),
                                r.addr.type_name,
                                r.addr.name,
                                at(&prev.decl_range)
                            ),
                        )
                        .at(r.decl_range.clone()),
                    );
    } else {
        m.resources.insert(r.addr.clone(), r);
    }
}

fn kind_word(r: &ResourceBlock) -> &'static str {
    super::model::kind_word(r.addr.mode)
}

/// `file:line,column` of a range, as Terraform cites earlier declarations.
pub(super) fn at(r: &SourceRange) -> String {
    format!("{}:{},{}", r.filename, r.start.line, r.start.column)
}

/// Checks the block's labels against the expected names; false when wrong.
pub(super) fn labels(b: &NestedBlockSyntax, names: &[&str], diags: &mut Diagnostics) -> bool {
    let t = &b.type_name;
    let list = names.join(", ");
    if b.labels.len() < names.len() {
        let missing = names[b.labels.len()];
        diags.push(
            Diagnostic::error(
                format!("Missing {missing} for {t}"),
                format!("All {t} blocks must have {} labels ({list}).", names.len()),
            )
            .at(b.decl_range.clone()),
        );
        return false;
    }
    if b.labels.len() > names.len() {
        let detail = if names.is_empty() {
            format!("No labels are expected for {t} blocks.")
        } else {
            format!(
                "Only {} labels ({list}) are expected for {t} blocks.",
                names.len()
            )
        };
        diags.push(
            Diagnostic::error(format!("Extraneous label for {t}"), detail)
                .at(b.label_ranges[names.len()].clone()),
        );
        return false;
    }
    for (label, range) in b.labels.iter().zip(&b.label_ranges) {
        if !valid_name(label) {
            let what = if t == "data" { "resource" } else { t };
            diags.push(
                Diagnostic::error(
                    format!("Invalid {what} name"),
                    "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
                )
                .at(range.clone()),
            );
            return false;
        }
    }
    true
}

pub(super) fn valid_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// Evaluates an argument that must be a constant (no references).
pub(super) fn constant(a: &Attribute, diags: &mut Diagnostics) -> Option<Value> {
    match evaluate(&a.expr, &EmptyScope) {
        Ok(v) => Some(v),
        Err(d) => {
            diags.extend(d);
            None
        }
    }
}

pub(super) fn const_string(a: &Attribute, diags: &mut Diagnostics) -> Option<String> {
    match constant(a, diags)? {
        Value::String(s) => Some(s),
        other => {
            diags.push(
                Diagnostic::error(
                    "Incorrect value type",
                    format!(
                        "Invalid expression value: string required, but have {}.",
                        other.kind()
                    ),
                )
                .at(a.expr.range.clone()),
            );
            None
        }
    }
}

pub(super) fn const_bool(a: &Attribute, diags: &mut Diagnostics) -> Option<bool> {
    match constant(a, diags).map(|v| convert(v, &fleetform_shared::types::Type::Bool)) {
        Some(Ok(Value::Bool(b))) => Some(b),
        Some(_) => {
            diags.push(
                Diagnostic::error(
                    "Incorrect value type",
                    "Invalid expression value: bool required.",
                )
                .at(a.expr.range.clone()),
            );
            None
        }
        None => None,
    }
}

/// Reports every argument and block left in `body` as unsupported.
pub(super) fn reject_rest(body: &Body, diags: &mut Diagnostics) {
    for (name, a) in &body.attributes {
        diags.push(
            Diagnostic::error(
                "Unsupported argument",
                format!("An argument named \"{name}\" is not expected here."),
            )
            .at(a.name_range.clone()),
        );
    }
    for b in &body.blocks {
        diags.push(
            Diagnostic::error(
                "Unsupported block type",
                format!("Blocks of type \"{}\" are not expected here.", b.type_name),
            )
            .at(b.decl_range.clone()),
        );
    }
    // JSON properties no schema named (normally reported while parsing).
    for p in &body.json {
        diags.push(super::json_body::extraneous(p, &[]));
    }
}

pub(super) fn check_rules(
    blocks: Vec<NestedBlockSyntax>,
    diags: &mut Diagnostics,
) -> Vec<CheckRule> {
    let mut out = Vec::new();
    for mut b in blocks {
        let condition = b.body.take_attribute("condition");
        let message = b.body.take_attribute("error_message");
        reject_rest(&b.body, diags);
        match (condition, message) {
            (Some(c), Some(m)) => out.push(CheckRule {
                condition: c.expr,
                error_message: m.expr,
                range: b.range,
                decl_range: b.decl_range,
            }),
            (c, _) => {
                let missing = if c.is_none() {
                    "condition"
                } else {
                    "error_message"
                };
                diags.push(missing_argument(missing, &b.body.missing_item_range));
            }
        }
    }
    out
}

pub(super) fn missing_argument(name: &str, range: &SourceRange) -> Diagnostic {
    Diagnostic::error(
        "Missing required argument",
        format!("The argument \"{name}\" is required, but no definition was found."),
    )
    .at(range.clone())
}

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

pub(super) fn reject_blocks(body: &Body, diags: &mut Diagnostics) {
    reject_rest(
        &Body {
            blocks: body.blocks.clone(),
            ..Body::default()
        },
        diags,
    );
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

/// A static traversal written as an address (`null_resource.a["k"]`).
pub(super) fn address_text(e: &Expr, diags: &mut Diagnostics) -> Option<String> {
    let Some((root, steps)) = e.as_traversal() else {
        diags.push(
            Diagnostic::error("Invalid address", "A static resource address is required.")
                .at(e.range.clone()),
        );
        return None;
    };
    let mut out = root;
    for s in steps {
        match s {
            crate::eval::TraversalStep::Attr(a) => {
                out.push('.');
                out.push_str(&a);
            }
            crate::eval::TraversalStep::Index(Value::String(k)) => {
                out.push_str(&format!(
                    "[{}]",
                    serde_json::to_string(&k).unwrap_or_default()
                ));
            }
            crate::eval::TraversalStep::Index(v) => out.push_str(&format!(
                "[{}]",
                crate::eval::convert(v, &fleetform_shared::types::Type::String)
                    .ok()?
                    .as_str()?
            )),
        }
    }
    Some(out)
}

/// A construct of the language that fleetform does not carry out yet: an
/// error at its source, never silence (a check that never runs, a script
/// that never happens, a module whose resources are never planned).
pub(super) fn not_implemented(what: &str, range: &SourceRange) -> Diagnostic {
    Diagnostic::error(
        format!("Unsupported feature: {what}"),
        format!("fleetform does not support {what} yet, and will not run a configuration that uses them rather than ignore part of it."),
    )
    .at(range.clone())
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
        .map(|a| super::named_values::depends_on(&a, diags))
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
            let text = match (&e.kind, e.as_traversal()) {
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
