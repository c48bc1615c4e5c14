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
        ("root_module", module_json(&config.root, "", files, plan)),
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
    let refs = expr.references();
    if refs.is_empty() {
        return match evaluate(expr, &EmptyScope) {
            Ok(v) => Json::object([("constant_value", value_json(&v))]),
            Err(_) => Json::Object(Map::new()),
        };
    }
    let mut list: Vec<String> = Vec::new();
    for (r, range) in refs {
        let whole = r.to_string();
        if let Some(t) = text_at(files, &range)
            && t != whole
            && !list.contains(&t)
        {
            list.push(t);
        }
        if !list.contains(&whole) {
            list.push(whole);
        }
    }
    Json::object([(
        "references",
        Json::Array(list.into_iter().map(Json::from).collect()),
    )])
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
    let mut locals = module.provider_local_names();
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

fn module_json(node: &ModuleNode, prefix: &str, files: &Sources, plan: &Plan) -> Json {
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
    let mut resources: Vec<_> = module.resources.iter().collect();
    resources.sort_by_key(|(r, _)| (r.mode == ResourceMode::Data, r.to_string()));
    let list: Vec<Json> = resources
        .into_iter()
        .map(|(r, block)| {
            let address = if prefix.is_empty() {
                r.to_string()
            } else {
                format!("{prefix}.{r}")
            };
            let mut entry = Map::new();
            entry.insert("address".into(), address.clone().into());
            let mode = if r.mode == ResourceMode::Data {
                "data"
            } else {
                "managed"
            };
            entry.insert("mode".into(), mode.into());
            entry.insert("type".into(), r.type_name.clone().into());
            entry.insert("name".into(), r.name.clone().into());
            let local = block.provider.clone();
            let key = if prefix.is_empty() {
                local
            } else {
                format!("{prefix}:{local}")
            };
            entry.insert("provider_config_key".into(), key.into());
            entry.insert("expressions".into(), body_json(&block.body, files));
            let schema_version = plan
                .changes
                .iter()
                .find(|c| c.addr.containing_resource().to_string() == address)
                .map_or(0, |c| c.schema_version);
            entry.insert("schema_version".into(), schema_version.into());
            if let Some(c) = &block.count {
                entry.insert("count_expression".into(), expression_json(c, files));
            }
            if let Some(f) = &block.for_each {
                entry.insert("for_each_expression".into(), expression_json(f, files));
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
                    module_json(child, &child_prefix, files, plan),
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
