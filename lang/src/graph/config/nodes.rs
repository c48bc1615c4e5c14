//! Pass 1: a node for every variable, local, output, resource and module
//! call of every module in the tree.

use super::{ConfigGraph, ConfigNode};
use crate::config::Config;
use fleetform_shared::addr::ConfigResource;

pub(super) fn add(g: &mut ConfigGraph, config: &Config) {
    for node in config.modules() {
        let path = &node.path;
        let m = &node.module;
        for name in m.variables.keys() {
            g.add(ConfigNode::Variable(path.clone(), name.clone()));
        }
        for name in m.locals.keys() {
            g.add(ConfigNode::Local(path.clone(), name.clone()));
        }
        for r in m.resources.keys() {
            g.add(ConfigNode::Resource(ConfigResource {
                module: path.clone(),
                resource: r.clone(),
            }));
        }
        for name in m.outputs.keys() {
            g.add(ConfigNode::Output(path.clone(), name.clone()));
        }
        for name in node.children.keys() {
            g.add(ConfigNode::ModuleCall(path.child(name)));
        }
    }
}
