//! Pass 3: module calls. A call's expansion (its `count`/`for_each` in
//! every instance of the calling module) comes before everything in the
//! child module; a nested call's expansion after its parent's. The call's
//! arguments must match the child's input variables.

use super::{ConfigGraph, ConfigNode};
use crate::config::Config;
use fleetform_shared::addr::ConfigResource;
use fleetform_shared::diag::{Diagnostic, Diagnostics};

pub(super) fn add(g: &mut ConfigGraph, config: &Config, diags: &mut Diagnostics) {
    for node in config.modules() {
        let Some(call) = config.call(&node.path) else {
            continue;
        };
        let expand = ConfigNode::ModuleCall(node.path.clone());
        if let Some((parent, _)) = node.path.parent()
            && !parent.is_root()
        {
            g.depend(&expand, &ConfigNode::ModuleCall(parent));
        }
        let m = &node.module;
        let mut inside: Vec<ConfigNode> = Vec::new();
        inside.extend(
            m.variables
                .keys()
                .map(|n| ConfigNode::Variable(node.path.clone(), n.clone())),
        );
        inside.extend(
            m.locals
                .keys()
                .map(|n| ConfigNode::Local(node.path.clone(), n.clone())),
        );
        inside.extend(
            m.outputs
                .keys()
                .map(|n| ConfigNode::Output(node.path.clone(), n.clone())),
        );
        inside.extend(m.resources.keys().map(|r| {
            ConfigNode::Resource(ConfigResource {
                module: node.path.clone(),
                resource: r.clone(),
            })
        }));
        inside.extend(
            g.ids
                .keys()
                .filter(|n| matches!(n, ConfigNode::Provider(p) if p.module == node.path))
                .cloned()
                .collect::<Vec<_>>(),
        );
        for n in &inside {
            g.depend(n, &expand);
        }

        for (name, arg) in &call.arguments {
            if !m.variables.contains_key(name) {
                diags.push(
                    Diagnostic::error(
                        "Unsupported argument",
                        format!("An argument named \"{name}\" is not expected here."),
                    )
                    .at(arg.name_range.clone()),
                );
            }
        }
        for (name, var) in &m.variables {
            if var.default.is_none() && !call.arguments.contains_key(name) {
                diags.push(
                    Diagnostic::error(
                        "Missing required argument",
                        format!(
                            "The argument \"{name}\" is required, but no definition was found."
                        ),
                    )
                    .at(call.decl_range.clone()),
                );
            }
        }
        let expands =
            call.count.is_some() || call.for_each.is_some() || !call.depends_on.is_empty();
        if expands && !m.providers.is_empty() {
            diags.push(
                Diagnostic::error(
                    "Module is incompatible with count, for_each, and depends_on",
                    format!(
                        "The module at {} is a legacy module which contains its own local provider configurations, and so calls to it may not use the count, for_each, or depends_on arguments. If you also control the module, consider updating it to use the providers argument to receive provider configurations from its caller.",
                        node.path
                    ),
                )
                .at(call.decl_range.clone()),
            );
        }
    }
}
