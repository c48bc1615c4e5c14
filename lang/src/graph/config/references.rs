//! Pass 4: an edge for every reference and `depends_on`, resolved in the
//! module that makes it (a call's arguments and meta-arguments in the
//! calling module). Undeclared names are diagnostics at the reference.

use super::{ConfigGraph, ConfigNode};
use crate::config::{Config, ModuleNode};
use crate::eval::{Reference, ReferencePath};
use fleetform_shared::addr::{ConfigResource, LocalProviderConfig, Module};
use fleetform_shared::diag::{Diagnostic, Diagnostics, SourceRange};

pub(super) fn add(g: &mut ConfigGraph, config: &Config, diags: &mut Diagnostics) {
    for node in config.modules() {
        let path = &node.path;
        let m = &node.module;
        // A child's variable is checked by its validation rules when it
        // is evaluated, so the other variables they use come first (the
        // root's are all known before the walk).
        if !path.is_root() {
            for (name, var) in &m.variables {
                let from = ConfigNode::Variable(path.clone(), name.clone());
                let refs: Vec<_> = var
                    .validations
                    .iter()
                    .flat_map(|r| {
                        let mut v = r.condition.references();
                        v.extend(r.error_message.references());
                        v
                    })
                    .collect();
                link(g, config, node, &from, refs, diags);
            }
        }
        for (name, local) in &m.locals {
            let from = ConfigNode::Local(path.clone(), name.clone());
            link(g, config, node, &from, local.expr.references(), diags);
        }
        for (key, p) in &m.providers {
            let Ok(local) = key.parse::<LocalProviderConfig>() else {
                continue;
            };
            let from = ConfigNode::Provider(fleetform_shared::addr::AbsProviderConfig {
                module: path.clone(),
                provider: m.provider_addr(&local.local_name),
                alias: local.alias,
            });
            link(g, config, node, &from, p.body.references(), diags);
        }
        for (addr, r) in &m.resources {
            let from = ConfigNode::Resource(ConfigResource {
                module: path.clone(),
                resource: addr.clone(),
            });
            let mut refs = r.body.references();
            refs.extend(r.count.iter().flat_map(|c| c.references()));
            refs.extend(r.for_each.iter().flat_map(|c| c.references()));
            refs.extend(r.depends_on.iter().cloned());
            for trigger in &r.lifecycle.replace_triggered_by {
                refs.extend(trigger.references());
            }
            // Conditions are checked while the resource is visited: what
            // they use must be ready by then.
            for rule in r
                .lifecycle
                .preconditions
                .iter()
                .chain(&r.lifecycle.postconditions)
            {
                refs.extend(rule.condition.references());
                refs.extend(rule.error_message.references());
            }
            for p in &r.provisioners {
                refs.extend(p.references());
            }
            link(g, config, node, &from, refs, diags);
        }
        for (name, o) in &m.outputs {
            let mut refs = o.expr.references();
            refs.extend(o.depends_on.iter().cloned());
            for rule in &o.preconditions {
                refs.extend(rule.condition.references());
                refs.extend(rule.error_message.references());
            }
            let from = ConfigNode::Output(path.clone(), name.clone());
            link(g, config, node, &from, refs, diags);
        }
        for (name, call) in &m.module_calls {
            let child = path.child(name);
            if config.module(&child).is_none() {
                continue; // not loaded: the loader reported why
            }
            let mut refs: Vec<_> = call.count.iter().flat_map(|c| c.references()).collect();
            refs.extend(call.for_each.iter().flat_map(|c| c.references()));
            refs.extend(call.depends_on.iter().cloned());
            link(
                g,
                config,
                node,
                &ConfigNode::ModuleCall(child.clone()),
                refs,
                diags,
            );
            for (var, arg) in &call.arguments {
                let from = ConfigNode::Variable(child.clone(), var.clone());
                if g.ids.contains_key(&from) {
                    link(g, config, node, &from, arg.expr.references(), diags);
                }
            }
        }
    }
    whole_module_refs(g, config);
}

/// Records the references to a module call's whole object (`module.m`,
/// `module.m[0]`, `module.m[*]`: no output named after it) made by
/// locals, resources, outputs and module arguments
/// ([`ConfigGraph::whole_module_refs`]).
fn whole_module_refs(g: &mut ConfigGraph, config: &Config) {
    for node in config.modules() {
        let path = &node.path;
        let m = &node.module;
        let mut uses: Vec<(ConfigNode, Vec<ReferencePath>)> = Vec::new();
        for (name, local) in &m.locals {
            let from = ConfigNode::Local(path.clone(), name.clone());
            uses.push((from, local.expr.reference_paths()));
        }
        for (addr, r) in &m.resources {
            let from = ConfigNode::Resource(ConfigResource {
                module: path.clone(),
                resource: addr.clone(),
            });
            let mut refs = r.body.reference_paths();
            for e in r.count.iter().chain(&r.for_each) {
                refs.extend(e.reference_paths());
            }
            uses.push((from, refs));
        }
        for (name, o) in &m.outputs {
            let from = ConfigNode::Output(path.clone(), name.clone());
            uses.push((from, o.expr.reference_paths()));
        }
        for (name, call) in &m.module_calls {
            for (var, arg) in &call.arguments {
                let from = ConfigNode::Variable(path.child(name), var.clone());
                uses.push((from, arg.expr.reference_paths()));
            }
        }
        for (from, refs) in uses {
            for r in refs {
                if let Reference::ModuleCall(c) = &r.reference
                    && r.path.is_empty()
                    && g.ids.contains_key(&from)
                {
                    g.whole_module_refs.insert((from.clone(), path.child(c)));
                }
            }
        }
    }
}

/// Adds `from → target` for each reference made in module `node`.
fn link(
    g: &mut ConfigGraph,
    config: &Config,
    node: &ModuleNode,
    from: &ConfigNode,
    refs: Vec<(Reference, SourceRange)>,
    diags: &mut Diagnostics,
) {
    let path = &node.path;
    for (r, range) in refs {
        let targets: Vec<ConfigNode> = match &r {
            Reference::Variable(n) => vec![ConfigNode::Variable(path.clone(), n.clone())],
            Reference::Local(n) => vec![ConfigNode::Local(path.clone(), n.clone())],
            Reference::Resource(res) => {
                // A check's scoped data source is for its assertions only.
                if node
                    .module
                    .resources
                    .get(res)
                    .is_some_and(|b| b.check.is_some())
                {
                    diags.push(
                        Diagnostic::error(
                            "Reference to scoped resource",
                            format!(
                                "The referenced data resource \"{}\" \"{}\" is not available from this context.",
                                res.type_name, res.name
                            ),
                        )
                        .at(range),
                    );
                    continue;
                }
                vec![ConfigNode::Resource(ConfigResource {
                    module: path.clone(),
                    resource: res.clone(),
                })]
            }
            Reference::ModuleCall(c) => {
                let child = path.child(c);
                let Some(child_node) = config.module(&child) else {
                    diags.push(undeclared_module(path, c, range));
                    continue;
                };
                let mut t: Vec<ConfigNode> = child_node
                    .module
                    .outputs
                    .keys()
                    .map(|o| ConfigNode::Output(child.clone(), o.clone()))
                    .collect();
                t.push(ConfigNode::ModuleCall(child));
                t
            }
            Reference::ModuleOutput(c, o) => {
                let child = path.child(c);
                let Some(child_node) = config.module(&child) else {
                    diags.push(undeclared_module(path, c, range));
                    continue;
                };
                if !child_node.module.outputs.contains_key(o) {
                    diags.push(
                        Diagnostic::error(
                            "Unsupported attribute",
                            format!("This object does not have an attribute named \"{o}\"."),
                        )
                        .at(range),
                    );
                    continue;
                }
                vec![
                    ConfigNode::Output(child.clone(), o.clone()),
                    ConfigNode::ModuleCall(child),
                ]
            }
            _ => continue,
        };
        for target in targets {
            if g.ids.contains_key(&target) {
                g.depend(from, &target);
            } else {
                diags.push(undeclared(&target, path, range.clone()));
            }
        }
    }
}

fn module_name(path: &Module) -> String {
    if path.is_root() {
        "the root module".to_string()
    } else {
        path.to_string()
    }
}

fn undeclared_module(path: &Module, call: &str, range: SourceRange) -> Diagnostic {
    Diagnostic::error(
        "Reference to undeclared module",
        format!(
            "No module call named \"{call}\" is declared in {}.",
            module_name(path)
        ),
    )
    .at(range)
}

fn undeclared(target: &ConfigNode, path: &Module, range: SourceRange) -> Diagnostic {
    let (summary, detail) = match target {
        ConfigNode::Variable(_, n) => (
            "Reference to undeclared input variable",
            format!(
                "An input variable with the name \"{n}\" has not been declared. This variable can be declared with a variable \"{n}\" {{}} block."
            ),
        ),
        ConfigNode::Local(_, n) => (
            "Reference to undeclared local value",
            format!("A local value with the name \"{n}\" has not been declared."),
        ),
        ConfigNode::Resource(r) => (
            "Reference to undeclared resource",
            format!(
                "A {} resource \"{}\" \"{}\" has not been declared in {}.",
                match r.resource.mode {
                    fleetform_shared::addr::ResourceMode::Data => "data",
                    fleetform_shared::addr::ResourceMode::Ephemeral => "ephemeral",
                    fleetform_shared::addr::ResourceMode::Managed => "managed",
                },
                r.resource.type_name,
                r.resource.name,
                module_name(path)
            ),
        ),
        other => (
            "Reference to undeclared object",
            format!("{other} has not been declared."),
        ),
    };
    Diagnostic::error(summary, detail).at(range)
}
