//! The `configuration` section of `show -json PLANFILE`: Terraform's
//! representation of the configuration the plan was made from, which
//! policy tools read (OPA/conftest policies, terraform-compliance): the
//! providers' configurations, and for each module its resources with their
//! argument expressions, outputs, variables and module calls.
//!
//! An expression is `{"constant_value": V}` when it refers to nothing (its
//! value, evaluated now), else `{"references": [...]}`: each traversal as
//! written and the object it belongs to (`sim_object.a.id`,
//! `sim_object.a`), as Terraform 1.x lists them. Nested blocks are lists of
//! such expression objects under the block's type.

use fleetform_lang::config::{Body, Config, Module, ModuleNode};
use fleetform_lang::eval::{EmptyScope, Expr, evaluate};
use fleetform_shared::addr::ResourceMode;
use fleetform_shared::json::{Json, Map};
use fleetform_shared::plan::Plan;
use std::collections::BTreeMap;

use super::plan_json::value_json;

/// Source text, to write traversals as written.
type Sources = BTreeMap<String, String>;

pub fn configuration_json(config: &Config, files: &Sources, plan: &Plan) -> Json {
    let mut providers = Map::new();
    provider_configs(&config.root, "", files, &mut providers);
    Json::object([
        ("provider_config", providers.into()),
        (
            "root_module",
            module_json(config, &config.root, "", files, plan),
        ),
    ])
}

/// The text of a traversal at `range`, when it is one line of HCL.
fn text_at(files: &Sources, range: &fleetform_shared::diag::SourceRange) -> Option<String> {
    let src = files.get(&range.filename)?;
    let text = src.get(range.start.byte..range.end.byte)?;
    (!text.contains('\n') && !text.trim().is_empty() && !text.starts_with('"'))
        .then(|| text.trim().to_string())
}

pub fn expression_json(expr: &Expr, files: &Sources) -> Json {
    let refs = expr.reference_traversals();
    if refs.is_empty() {
        // Terraform evaluates such an expression without functions: one
        // that calls any has no constant value to show.
        if calls_a_function(expr) {
            return Json::Object(Map::new());
        }
        return match evaluate(expr, &EmptyScope) {
            Ok(v) => Json::object([("constant_value", value_json(&v))]),
            Err(_) => Json::Object(Map::new()),
        };
    }
    let mut list: Vec<String> = Vec::new();
    let mut add = |s: String| {
        if !list.contains(&s) {
            list.push(s);
        }
    };
    for (r, range) in refs {
        let whole = r.to_string();
        let written = text_at(files, &range).filter(|t| t.starts_with(&whole));
        let Some(written) = written else {
            add(whole);
            continue;
        };
        // As Terraform 1.x lists a reference: the traversal as written,
        // then shorter and shorter down to the object it belongs to (a
        // resource instance when an index follows the resource), then the
        // resource itself.
        let (subject, rest) = match split_steps(&written[whole.len()..]).split_first() {
            Some((first, rest)) if first.starts_with('[') => {
                (format!("{whole}{first}"), rest.to_vec())
            }
            _ => (whole.clone(), split_steps(&written[whole.len()..])),
        };
        for n in (1..=rest.len()).rev() {
            add(format!("{subject}{}", rest[..n].concat()));
        }
        add(subject.clone());
        if subject != whole {
            add(whole);
        }
        // A module output belongs to its call, as Terraform lists it.
        if let fleetform_lang::eval::Reference::ModuleOutput(call, _) = &r {
            add(format!("module.{call}"));
        }
    }
    Json::object([(
        "references",
        Json::Array(list.into_iter().map(Json::from).collect()),
    )])
}

fn calls_a_function(e: &Expr) -> bool {
    if matches!(e.kind, fleetform_lang::eval::ExprKind::Call { .. }) {
        return true;
    }
    let mut found = false;
    e.for_each_child(&mut |c| found |= calls_a_function(c));
    found
}

/// The steps of a traversal's text after its first names: `.name` and
/// `[index]` (brackets inside quoted keys are not steps).
fn split_steps(text: &str) -> Vec<String> {
    let mut steps = Vec::new();
    let mut current = String::new();
    let (mut depth, mut quoted, mut escaped) = (0usize, false, false);
    for c in text.chars() {
        if quoted {
            current.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '.' | '[' if depth == 0 && !current.is_empty() => {
                steps.push(std::mem::take(&mut current));
            }
            _ => {}
        }
        match c {
            '"' => quoted = true,
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        current.push(c);
    }
    if !current.is_empty() {
        steps.push(current);
    }
    steps
}

/// A body's arguments and nested blocks.
fn body_json(body: &Body, files: &Sources) -> Json {
    let mut out = Map::new();
    for (name, a) in &body.attributes {
        out.insert(name.clone(), expression_json(&a.expr, files));
    }
    let mut blocks: BTreeMap<String, Vec<Json>> = BTreeMap::new();
    for b in &body.blocks {
        blocks
            .entry(b.type_name.clone())
            .or_default()
            .push(body_json(&b.body, files));
    }
    for (name, list) in blocks {
        out.insert(name, Json::Array(list));
    }
    out.into()
}

/// `provider_config` keys: `aws`, `aws.east`, `module.child:aws`.
fn provider_configs(node: &ModuleNode, prefix: &str, files: &Sources, out: &mut Map) {
    let module = &node.module;
    let key = |local: &str| {
        if prefix.is_empty() {
            local.to_string()
        } else {
            format!("{prefix}:{local}")
        }
    };
    // A module's configurations: in the root every provider it uses; in a
    // child only those it configures itself (what it inherits or is passed
    // is its parent's entry, which its resources point at).
    let mut locals = module.provider_local_names();
    if !prefix.is_empty() {
        locals.retain(|l| module.providers.contains_key(l));
    }
    locals.sort();
    for local in locals {
        let addr = module.provider_addr(&local);
        let mut entry = Map::new();
        entry.insert("name".into(), local.clone().into());
        entry.insert("full_name".into(), addr.to_string().into());
        if let Some(v) = module
            .required_providers
            .get(&local)
            .and_then(|r| r.version.clone())
        {
            entry.insert("version_constraint".into(), v.into());
        }
        if !prefix.is_empty() {
            entry.insert("module_address".into(), prefix.to_string().into());
        }
        if let Some(block) = module.providers.get(&local) {
            entry.insert("expressions".into(), body_json(&block.body, files));
        }
        out.insert(key(&local), entry.into());
    }
    for block in module.providers.values().filter(|b| b.alias.is_some()) {
        let addr = module.provider_addr(&block.name);
        let mut entry = Map::new();
        entry.insert("name".into(), block.name.clone().into());
        entry.insert("full_name".into(), addr.to_string().into());
        entry.insert("alias".into(), block.alias.clone().into());
        entry.insert("expressions".into(), body_json(&block.body, files));
        out.insert(key(&block.key()), entry.into());
    }
    for (name, child) in &node.children {
        let child_prefix = if prefix.is_empty() {
            format!("module.{name}")
        } else {
            format!("{prefix}.module.{name}")
        };
        provider_configs(child, &child_prefix, files, out);
    }
}

fn module_json(
    config: &Config,
    node: &ModuleNode,
    prefix: &str,
    files: &Sources,
    plan: &Plan,
) -> Json {
    let module: &Module = &node.module;
    let mut out = Map::new();
    let outputs: Map = module
        .outputs
        .iter()
        .map(|(name, o)| {
            let mut entry = Map::new();
            entry.insert("expression".into(), expression_json(&o.expr, files));
            if o.sensitive {
                entry.insert("sensitive".into(), true.into());
            }
            if let Some(d) = &o.description {
                entry.insert("description".into(), d.clone().into());
            }
            if !o.depends_on.is_empty() {
                entry.insert(
                    "depends_on".into(),
                    Json::Array(
                        o.depends_on
                            .iter()
                            .map(|(r, _)| r.to_string().into())
                            .collect(),
                    ),
                );
            }
            (name.clone(), entry.into())
        })
        .collect();
    if !outputs.is_empty() {
        out.insert("outputs".into(), outputs.into());
    }
    // Managed resources first, then data sources, each by address.
    // Ephemeral resources are left out, as Terraform 1.11 leaves them out.
    let mut resources: Vec<_> = module
        .resources
        .iter()
        .filter(|(r, _)| r.mode != ResourceMode::Ephemeral)
        .collect();
    resources.sort_by_key(|(r, _)| (r.mode == ResourceMode::Data, r.to_string()));
    let list: Vec<Json> = resources
        .into_iter()
        .map(|(r, block)| {
            // Relative to the module, as Terraform writes it; the plan's
            // changes are found by the absolute address.
            let absolute = if prefix.is_empty() {
                r.to_string()
            } else {
                format!("{prefix}.{r}")
            };
            let mut entry = Map::new();
            entry.insert("address".into(), r.to_string().into());
            let mode = if r.mode == ResourceMode::Data {
                "data"
            } else {
                "managed"
            };
            entry.insert("mode".into(), mode.into());
            entry.insert("type".into(), r.type_name.as_str().into());
            entry.insert("name".into(), r.name.as_str().into());
            let key = provider_key(config, &node.path, &block.provider);
            entry.insert("provider_config_key".into(), key.into());
            entry.insert("expressions".into(), body_json(&block.body, files));
            let schema_version = plan
                .changes
                .iter()
                .find(|c| c.addr.containing_resource().to_string() == absolute)
                .map_or(0, |c| c.schema_version);
            entry.insert("schema_version".into(), schema_version.into());
            // Terraform leaves out a meta-argument expression it cannot
            // show (neither references nor a constant value).
            for (key, e) in [
                ("count_expression", &block.count),
                ("for_each_expression", &block.for_each),
            ] {
                if let Some(e) = e {
                    let j = expression_json(e, files);
                    if j.as_object().is_some_and(|m| !m.is_empty()) {
                        entry.insert(key.into(), j);
                    }
                }
            }
            if !block.depends_on.is_empty() {
                entry.insert(
                    "depends_on".into(),
                    Json::Array(
                        block
                            .depends_on
                            .iter()
                            .map(|(r, _)| r.to_string().into())
                            .collect(),
                    ),
                );
            }
            entry.into()
        })
        .collect();
    if !list.is_empty() {
        out.insert("resources".into(), Json::Array(list));
    }
    let calls: Map = module
        .module_calls
        .iter()
        .map(|(name, call)| {
            let mut entry = Map::new();
            entry.insert("source".into(), call.source.clone().into());
            let args: Map = call
                .arguments
                .iter()
                .map(|(k, a)| (k.clone(), expression_json(&a.expr, files)))
                .collect();
            entry.insert("expressions".into(), args.into());
            if let Some(c) = &call.count {
                entry.insert("count_expression".into(), expression_json(c, files));
            }
            if let Some(f) = &call.for_each {
                entry.insert("for_each_expression".into(), expression_json(f, files));
            }
            if let Some(v) = &call.version {
                entry.insert("version_constraint".into(), v.clone().into());
            }
            if let Some(child) = node.children.get(name) {
                let child_prefix = if prefix.is_empty() {
                    format!("module.{name}")
                } else {
                    format!("{prefix}.module.{name}")
                };
                entry.insert(
                    "module".into(),
                    module_json(config, child, &child_prefix, files, plan),
                );
            }
            (name.clone(), entry.into())
        })
        .collect();
    if !calls.is_empty() {
        out.insert("module_calls".into(), calls.into());
    }
    let variables: Map = module
        .variables
        .iter()
        .map(|(name, v)| {
            let mut entry = Map::new();
            if let Some(d) = &v.default {
                entry.insert("default".into(), value_json(d));
            }
            if let Some(d) = &v.description {
                entry.insert("description".into(), d.clone().into());
            }
            if v.sensitive {
                entry.insert("sensitive".into(), true.into());
            }
            (name.clone(), entry.into())
        })
        .collect();
    if !variables.is_empty() {
        out.insert("variables".into(), variables.into());
    }
    out.into()
}

/// The `provider_config` key of the configuration that a resource of the
/// module at `path` uses under the local name `local` (`null`,
/// `null.alt`), as Terraform 1.x resolves it: the module's own
/// `provider` block, else what its call passes (`providers = {...}`), else
/// its parent's configuration of the same provider, up to the root.
fn provider_key(config: &Config, path: &fleetform_shared::addr::Module, local: &str) -> String {
    let own = |prefix: &str| {
        if prefix.is_empty() {
            local.to_string()
        } else {
            format!("{prefix}:{local}")
        }
    };
    let Some(node) = config.module(path) else {
        return own(&path.to_string());
    };
    let Some((parent_path, call_name)) = path.parent() else {
        return own("");
    };
    if node.module.providers.contains_key(local) {
        return own(&path.to_string());
    }
    let Some(parent) = config.module(&parent_path) else {
        return own(&path.to_string());
    };
    let passed = parent.module.module_calls.get(call_name).and_then(|call| {
        call.providers
            .iter()
            .find(|(child, _, _)| child.to_string() == local)
            .map(|(_, from, _)| from.to_string())
    });
    let in_parent = passed.unwrap_or_else(|| {
        let addr = node.module.provider_addr(local);
        parent
            .module
            .provider_local_names()
            .into_iter()
            .find(|l| !l.contains('.') && parent.module.provider_addr(l) == addr)
            .unwrap_or_else(|| addr.type_name.to_string())
    });
    provider_key(config, &parent_path, &in_parent)
}
