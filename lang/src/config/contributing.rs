//! The resource attributes that objects of a configuration are computed
//! from, directly or through locals, module inputs, module outputs and
//! other resources' arguments: what Terraform lists as a plan's
//! `relevant_attributes` (its `globalref` analysis), so a plan shows only
//! the drift that may explain its changes.
//!
//! It reads the configuration only, as Terraform does: paths are the
//! references' static traversals as written (not checked against schemas),
//! and a resource argument's references count whole, whatever part of its
//! value a reference reads.

use super::body::{Body, NestedBlockSyntax};
use super::model::ResourceBlock;
use super::tree::{Config, ModuleNode};
use crate::eval::{Reference, ReferencePath};
use fleetform_shared::addr::{AbsResourceInstance, InstanceKey, ModuleInstance, Resource};
use fleetform_shared::provider::AttrPath;
use fleetform_shared::value::PathStep;
use std::collections::{BTreeSet, HashSet};

/// A part of a resource instance that something reads: `path` within
/// `resource` (empty for the whole object).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResourceAttr {
    pub resource: AbsResourceInstance,
    pub path: AttrPath,
}

/// Where the walk starts: what a plan changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Changed {
    /// A resource instance: its arguments' and blocks' references.
    Resource(AbsResourceInstance),
    /// An output of a module instance: its value's references.
    Output(ModuleInstance, String),
}

/// Every resource attribute the `changed` objects are computed from, each
/// once, in order. A resource that only changes itself is not in it: its
/// own arguments are what it is computed from, not its attributes.
pub fn contributing_attributes(config: &Config, changed: &[Changed]) -> Vec<ResourceAttr> {
    let mut walk = Walk {
        config,
        visited: HashSet::new(),
        pending: Vec::new(),
        found: BTreeSet::new(),
    };
    for c in changed {
        match c {
            Changed::Resource(addr) => {
                let Some(r) = walk.resource(&addr.module, &addr.resource.resource) else {
                    continue;
                };
                let refs = Part::Body(&r.body).reference_paths();
                walk.queue_resource_refs(&addr.module, r, refs);
            }
            Changed::Output(module, name) => {
                if let Some(o) = walk.node(module).and_then(|n| n.module.outputs.get(name)) {
                    walk.queue(module, o.expr.reference_paths());
                }
            }
        }
    }
    while let Some(r) = walk.pending.pop() {
        walk.visit(r);
    }
    walk.found.into_iter().collect()
}

/// A reference in the module instance it was made in. References to
/// `count`/`each` are resolved where they are found (a resource's body)
/// and never queued.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Ref {
    module: ModuleInstance,
    path: ReferencePath,
}

struct Walk<'a> {
    config: &'a Config,
    visited: HashSet<Ref>,
    pending: Vec<Ref>,
    found: BTreeSet<ResourceAttr>,
}

impl<'a> Walk<'a> {
    fn node(&self, module: &ModuleInstance) -> Option<&'a ModuleNode> {
        self.config.module(&module.module())
    }

    fn resource(&self, module: &ModuleInstance, r: &Resource) -> Option<&'a ResourceBlock> {
        self.node(module)?.module.resources.get(r)
    }

    /// Queues references made in `module`, recording those to resources.
    fn queue(&mut self, module: &ModuleInstance, refs: Vec<ReferencePath>) {
        for path in refs {
            if let Reference::Resource(r) = &path.reference {
                let key = path.key.clone().unwrap_or(InstanceKey::None);
                self.found.insert(ResourceAttr {
                    resource: AbsResourceInstance {
                        module: module.clone(),
                        resource: r.instance(key),
                    },
                    path: path.path.clone(),
                });
            }
            let r = Ref {
                module: module.clone(),
                path,
            };
            if !self.visited.contains(&r) {
                self.pending.push(r);
            }
        }
    }

    /// Queues the references found in a resource's configuration: those
    /// to `count.index` or `each` stand for the references of its `count`
    /// or `for_each` expression.
    fn queue_resource_refs(
        &mut self,
        module: &ModuleInstance,
        block: &ResourceBlock,
        refs: Vec<ReferencePath>,
    ) {
        let repetition = refs.iter().any(|r| {
            matches!(
                r.reference,
                Reference::CountIndex | Reference::EachKey | Reference::EachValue
            )
        });
        if repetition {
            let expr = block.count.as_ref().or(block.for_each.as_ref());
            let more = expr.map(|e| e.reference_paths()).unwrap_or_default();
            self.queue(module, more);
        }
        self.queue(module, refs);
    }

    /// Follows one reference to what its object is computed from.
    fn visit(&mut self, r: Ref) {
        if !self.visited.insert(r.clone()) {
            return;
        }
        let Ref { module, path } = r;
        let Some(node) = self.node(&module) else {
            return;
        };
        match &path.reference {
            Reference::Local(name) => {
                if let Some(l) = node.module.locals.get(name) {
                    self.queue(&module, l.expr.reference_paths());
                }
            }
            Reference::Variable(name) => {
                let Some((caller, call, _)) = module.parent() else {
                    return;
                };
                let arg = self
                    .node(&caller)
                    .and_then(|n| n.module.module_calls.get(call))
                    .and_then(|c| c.arguments.get(name));
                if let Some(a) = arg {
                    self.queue(&caller, a.expr.reference_paths());
                }
            }
            Reference::ModuleOutput(call, name) => {
                self.output(&module.child(call, InstanceKey::None), name);
            }
            Reference::ModuleCall(call) => {
                let callee = module.child(call, path.key.clone().unwrap_or(InstanceKey::None));
                match (&path.key, path.path.first()) {
                    // `module.m[0].out`: one output of one instance.
                    (Some(_), Some(PathStep::Key(name))) => self.output(&callee, name),
                    _ => {
                        let names: Vec<String> = self
                            .node(&callee)
                            .map(|n| n.module.outputs.keys().cloned().collect())
                            .unwrap_or_default();
                        for name in names {
                            self.output(&callee, &name);
                        }
                    }
                }
            }
            Reference::Resource(res) => {
                let Some(block) = node.module.resources.get(res) else {
                    return;
                };
                let refs = reads(&block.body, &path.path)
                    .iter()
                    .flat_map(Part::reference_paths)
                    .collect();
                self.queue_resource_refs(&module, block, refs);
            }
            _ => {}
        }
    }

    fn output(&mut self, callee: &ModuleInstance, name: &str) {
        let expr = self
            .node(callee)
            .and_then(|n| n.module.outputs.get(name))
            .map(|o| o.expr.reference_paths());
        if let Some(refs) = expr {
            self.queue(callee, refs);
        }
    }
}

/// A part of a resource's configuration that a path into its object
/// reads, whole.
enum Part<'a> {
    Body(&'a Body),
    Block(&'a NestedBlockSyntax),
    /// An argument's expression.
    Argument(&'a crate::eval::Expr),
    /// The properties of a JSON body with this name, whole (argument or
    /// nested blocks: only the schema tells).
    Json(&'a Body, &'a str),
}

impl Part<'_> {
    fn reference_paths(&self) -> Vec<ReferencePath> {
        match self {
            Part::Body(b) => b
                .attributes
                .values()
                .map(|a| a.expr.reference_paths())
                .chain(
                    b.blocks
                        .iter()
                        .filter(|n| !META_BLOCKS.contains(&n.type_name.as_str()))
                        .map(|n| n.reference_paths()),
                )
                .chain([b.json_reference_paths(None)])
                .flatten()
                .collect(),
            Part::Block(b) => b.reference_paths(),
            Part::Argument(e) => e.reference_paths(),
            Part::Json(b, name) => b.json_reference_paths(Some(name)),
        }
    }
}

/// Blocks of a resource body that are not the provider schema's (their
/// references are not what the object is computed from).
const META_BLOCKS: &[&str] = &["lifecycle", "connection", "provisioner"];

/// Follows `path` into a resource body without its schema: a name is an
/// argument (whose expression is then read whole) or a nested block type.
/// Into blocks of one type, a whole-number index picks one of a list
/// (a `dynamic` block of that type stands for all from it on, as it may
/// make the indexed one), a key picks a labelled block of a map, and a
/// name goes on inside single blocks. Nothing when no part of the
/// configuration matches the path.
fn reads<'a>(body: &'a Body, path: &[PathStep]) -> Vec<Part<'a>> {
    let Some((first, rest)) = path.split_first() else {
        return vec![Part::Body(body)];
    };
    let PathStep::Key(name) = first else {
        return vec![];
    };
    if let Some(a) = body.attributes.get(name) {
        return vec![Part::Argument(&a.expr)];
    }
    let blocks: Vec<&NestedBlockSyntax> = body
        .blocks
        .iter()
        .filter(|b| b.type_name == *name || is_dynamic_of(b, name))
        .collect();
    if blocks.is_empty() {
        return match body.json.iter().find(|p| p.name == *name) {
            Some(p) => vec![Part::Json(body, &p.name)],
            None => vec![],
        };
    }
    within_blocks(blocks, name, rest)
}

fn is_dynamic_of(b: &NestedBlockSyntax, type_name: &str) -> bool {
    b.type_name == "dynamic" && b.labels.first().is_some_and(|l| l == type_name)
}

fn within_blocks<'a>(
    blocks: Vec<&'a NestedBlockSyntax>,
    type_name: &str,
    path: &[PathStep],
) -> Vec<Part<'a>> {
    let Some((first, rest)) = path.split_first() else {
        return blocks.into_iter().map(Part::Block).collect();
    };
    let dynamic = blocks.iter().position(|b| is_dynamic_of(b, type_name));
    let chosen: Vec<&NestedBlockSyntax> = match first {
        PathStep::Index(i) => {
            let Ok(i) = usize::try_from(*i) else {
                return vec![];
            };
            match dynamic {
                Some(d) if i >= d => return blocks[d..].iter().map(|b| Part::Block(b)).collect(),
                _ => blocks.get(i).into_iter().copied().collect(),
            }
        }
        PathStep::Key(k) if blocks.iter().any(|b| !b.labels.is_empty()) => {
            if dynamic.is_some() {
                return blocks.into_iter().map(Part::Block).collect();
            }
            blocks
                .into_iter()
                .filter(|b| b.labels.first() == Some(k))
                .collect()
        }
        // Single blocks: the step names something inside them.
        PathStep::Key(_) => {
            return blocks
                .into_iter()
                .flat_map(|b| match b.type_name.as_str() {
                    "dynamic" => vec![Part::Block(b)],
                    _ => reads(&b.body, path),
                })
                .collect();
        }
    };
    chosen
        .into_iter()
        .flat_map(|b| reads(&b.body, rest))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn config(files: &[(&str, &str)]) -> Config {
        let files: BTreeMap<String, String> = files
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect();
        let (config, diags) = super::super::load_config(&files);
        assert!(!diags.has_errors(), "{diags:?}");
        config.unwrap()
    }

    /// The attributes, as `address path` text.
    fn contributing(config: &Config, changed: &[Changed]) -> Vec<String> {
        contributing_attributes(config, changed)
            .into_iter()
            .map(|a| {
                format!(
                    "{} {}",
                    a.resource,
                    fleetform_shared::value::path_string(&a.path)
                )
            })
            .collect()
    }

    fn resource(addr: &str) -> Changed {
        Changed::Resource(addr.parse().unwrap())
    }

    const ROOT: &str = r#"
resource "sim_object" "a" {
  name = "a"
  size = var.size
  tags = { env = "test" }
}
variable "size" {
  default = 1
}
locals {
  a_name = sim_object.a.name
}
resource "sim_object" "b" {
  name = "b-${local.a_name}"
  size = sim_object.a.size
  tags = { env = sim_object.a.tags["env"], k = sim_object.a.tags[var.size] }
}
resource "sim_object" "c" {
  name = sim_object.b.name
}
resource "sim_object" "d" {
  count = length(sim_object.a.tags)
  name  = "d${count.index}"
}
resource "sim_object" "e" {
  name = "e"
}
output "e" {
  value = sim_object.e.id
}
"#;

    /// A change depends on the attributes it reads, through locals, as far
    /// as their paths are static; not on its own attributes, nor on
    /// attributes others read.
    #[test]
    fn a_change_reads_attributes_directly_and_through_locals() {
        let c = config(&[("main.tf", ROOT)]);
        assert_eq!(
            contributing(&c, &[resource("sim_object.b")]),
            [
                "sim_object.a name",
                "sim_object.a size",
                "sim_object.a tags",
                "sim_object.a tags.env",
            ]
        );
        assert!(contributing(&c, &[resource("sim_object.a")]).is_empty());
        assert!(contributing(&c, &[resource("sim_object.e")]).is_empty());
    }

    /// An attribute read is followed to the argument it is computed from
    /// (`c` reads `b.name`, which reads `a.name` through a local, not
    /// `a.size`); `count.index` stands for the `count` expression; a
    /// changed output reads what its value reads.
    #[test]
    fn reads_are_followed_through_arguments_count_and_outputs() {
        let c = config(&[("main.tf", ROOT)]);
        assert_eq!(
            contributing(&c, &[resource("sim_object.c")]),
            ["sim_object.a name", "sim_object.b name"]
        );
        assert_eq!(
            contributing(&c, &[resource("sim_object.d[0]")]),
            ["sim_object.a tags"]
        );
        assert_eq!(
            contributing(&c, &[Changed::Output(ModuleInstance::root(), "e".into())]),
            ["sim_object.e id"]
        );
    }

    /// Module inputs lead to the caller's arguments and module outputs to
    /// the callee's values, each in its module instance.
    #[test]
    fn reads_cross_module_boundaries() {
        let root = r#"
resource "sim_object" "a" {
  name = "a"
}
module "m" {
  source = "./m"
  in     = sim_object.a.name
}
resource "sim_object" "r" {
  name = module.m.out
}
"#;
        let child = r#"
variable "in" {}
resource "sim_object" "x" {
  name = var.in
}
output "out" {
  value = sim_object.x.id
}
"#;
        let c = config(&[("main.tf", root), ("m/main.tf", child)]);
        assert_eq!(
            contributing(&c, &[resource("sim_object.r")]),
            ["module.m.sim_object.x id"]
        );
        assert_eq!(
            contributing(&c, &[resource("module.m.sim_object.x")]),
            ["sim_object.a name"]
        );
    }

    /// A path into nested blocks reads the block it names: by position in
    /// a list of blocks.
    #[test]
    fn paths_into_nested_blocks_read_the_named_block() {
        let c = config(&[(
            "main.tf",
            r#"
resource "sim_object" "a" {
  name = "a"
}
resource "sim_server" "w" {
  name = "w"
  rule {
    x = sim_object.a.name
  }
  rule {
    x = sim_object.a.size
  }
}
resource "sim_object" "c" {
  name = sim_server.w.rule[1].x
}
"#,
        )]);
        assert_eq!(
            contributing(&c, &[resource("sim_object.c")]),
            ["sim_object.a size", "sim_server.w rule[1].x"]
        );
    }

    /// A `.tf.json` resource's properties are read as HCL arguments are.
    #[test]
    fn json_resources_are_read_too() {
        let c = config(&[(
            "main.tf.json",
            r#"{
  "resource": {
    "sim_object": {
      "a": { "name": "a", "size": "${var.n}" },
      "b": { "name": "${sim_object.a.name}" },
      "c": { "name": "${sim_object.b.name}-${sim_object.a.tags[\"k\"]}" }
    }
  },
  "variable": { "n": { "default": 1 } }
}"#,
        )]);
        assert_eq!(
            contributing(&c, &[resource("sim_object.c")]),
            [
                "sim_object.a name",
                "sim_object.a tags.k",
                "sim_object.b name"
            ]
        );
    }
}
