//! `moved` blocks: before planning, objects in the prior state are rebound
//! from their old address to the new one, so a refactoring plans as no-ops
//! instead of deletes and creates.
//!
//! A block's addresses are relative to the module that holds it, and the
//! block applies in every instance of that module found in the state. An
//! endpoint is a resource (every instance keeps its key), a resource
//! instance, a module call (`module.a` on both sides: every instance keeps
//! its key, as a rename of the call) or a module instance (`module.a[0]`,
//! or `module.a` meaning the instance without a key when the other side has
//! one); moving a module moves everything in it, nested modules included.

use crate::config::{Config, Moved};
use fleetform_shared::addr::{
    AbsResource, AbsResourceInstance, InstanceKey, Module, ModuleInstance, ResourceMode, Target,
};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::state::State;
use std::collections::BTreeMap;

/// One statement, relative to its module.
#[derive(Clone, Debug, PartialEq)]
enum Statement {
    Resource(AbsResource, AbsResource),
    Instance(AbsResourceInstance, AbsResourceInstance),
    /// A module call renamed: (calling path, old name, new name), keys kept.
    Call(ModuleInstance, String, String),
    ModuleInstance(ModuleInstance, ModuleInstance),
}

impl Statement {
    fn source_text(&self) -> String {
        match self {
            Statement::Resource(f, _) => f.to_string(),
            Statement::Instance(f, _) => f.to_string(),
            Statement::Call(p, f, _) => prefixed(p, &format!("module.{f}")),
            Statement::ModuleInstance(f, _) => f.to_string(),
        }
    }

    fn target_text(&self) -> String {
        match self {
            Statement::Resource(_, t) => t.to_string(),
            Statement::Instance(_, t) => t.to_string(),
            Statement::Call(p, _, t) => prefixed(p, &format!("module.{t}")),
            Statement::ModuleInstance(_, t) => t.to_string(),
        }
    }

    /// Where a state address goes under this statement, relative addresses
    /// in and out; None when it does not match.
    fn apply(&self, rel: &AbsResourceInstance) -> Option<AbsResourceInstance> {
        match self {
            Statement::Resource(from, to) => (rel.module == from.module
                && rel.resource.resource == from.resource)
                .then(|| to.instance(rel.key().clone())),
            Statement::Instance(from, to) => (rel == from).then(|| to.clone()),
            Statement::Call(parent, from, to) => {
                let n = parent.0.len();
                let steps = &rel.module.0;
                if steps.len() <= n || steps[..n] != parent.0[..] || steps[n].0 != *from {
                    return None;
                }
                let mut out = rel.clone();
                out.module.0[n].0 = to.clone();
                Some(out)
            }
            Statement::ModuleInstance(from, to) => {
                let rest = rel.module.0.strip_prefix(&from.0[..])?;
                let mut module = to.0.clone();
                module.extend(rest.iter().cloned());
                Some(AbsResourceInstance {
                    module: ModuleInstance(module),
                    resource: rel.resource.clone(),
                })
            }
        }
    }
}

fn prefixed(p: &ModuleInstance, s: &str) -> String {
    if p.is_root() {
        s.to_string()
    } else {
        format!("{p}.{s}")
    }
}

/// Applies the `moved` blocks of every module of the configuration to
/// `state`; returns the moves made (old instance address → new). Invalid
/// statements are diagnostics and leave the state unchanged.
pub fn apply_moves(
    config: &Config,
    state: &mut State,
) -> Result<Vec<(AbsResourceInstance, AbsResourceInstance)>, Diagnostics> {
    let mut diags = Diagnostics::new();
    let mut statements: Vec<(Module, Statement, &Moved)> = Vec::new();
    for node in config.modules() {
        for m in &node.module.moved {
            match parse(m) {
                Ok(s) => statements.push((node.path.clone(), s, m)),
                Err(d) => diags.push(d),
            }
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }
    // Nothing to move: the state is not copied (the copy below keeps it
    // untouched should a statement fail; 100,000 objects are over 100 MB).
    if statements.is_empty() {
        let implied = implied_moves(config, state);
        for (from, to) in &implied {
            let obj = state.resources.remove(from).expect("listed from state");
            state.resources.insert(to.clone(), obj);
        }
        return Ok(implied);
    }
    // Chains (a → b, b → c) resolve to their end; a cycle is an error.
    let mut next: BTreeMap<String, (String, &Moved)> = BTreeMap::new();
    for (path, s, m) in &statements {
        let key = |t: String| format!("{path}:{t}");
        if next
            .insert(key(s.source_text()), (key(s.target_text()), m))
            .is_some()
        {
            diags.push(
                Diagnostic::error("Ambiguous move statements", format!("A statement moving {} was already declared; each object can move to only one new address.", s.source_text()))
                    .at(m.range.clone()),
            );
        }
    }
    for (from, (_, m)) in &next {
        let mut seen = vec![from.clone()];
        let mut cur = from.clone();
        while let Some((to, _)) = next.get(&cur) {
            if seen.contains(to) {
                let shown: Vec<&str> = seen
                    .iter()
                    .map(|s| s.split_once(':').map_or(s.as_str(), |(_, t)| t))
                    .collect();
                let to_shown = to.split_once(':').map_or(to.as_str(), |(_, t)| t);
                diags.push(
                    Diagnostic::error(
                        "Cyclic dependency in move statements",
                        format!(
                            "The move statements form a cycle: {} -> {to_shown}.",
                            shown.join(" -> ")
                        ),
                    )
                    .at(m.range.clone()),
                );
                break;
            }
            seen.push(to.clone());
            cur = to.clone();
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }
    let mut moves: Vec<(AbsResourceInstance, AbsResourceInstance)> = Vec::new();
    let mut result = state.clone();
    // Passes until nothing moves: chains resolve whatever the statement
    // order (cycles were refused above, so this ends).
    loop {
        let mut moved_any = false;
        for (path, s, m) in &statements {
            let pairs: Vec<(AbsResourceInstance, AbsResourceInstance)> = result
                .resources
                .keys()
                .filter_map(|addr| {
                    let (prefix, rel) = split(addr, path)?;
                    let to = s.apply(&rel)?;
                    Some((addr.clone(), join(&prefix, to)))
                })
                .collect();
            for (from, to) in pairs {
                if still_declared(config, &from) {
                    diags.push(
                    Diagnostic::error(
                        "Moved object still exists",
                        format!("This statement declares a move from {from}, but that resource instance is still declared in the configuration. Remove the old declaration to move it."),
                    )
                    .at(m.range.clone()),
                );
                    continue;
                }
                if result.resources.contains_key(&to) {
                    diags.push(
                    Diagnostic::error(
                        "Moved object still exists",
                        format!("Cannot move {from} to {to}: there is already a resource instance at the new address."),
                    )
                    .at(m.range.clone()),
                );
                    continue;
                }
                moved_any = true;
                let obj = result.resources.remove(&from).expect("listed from state");
                result.resources.insert(to.clone(), obj);
                // A later statement of the chain continues from here.
                if let Some(prev) = moves.iter_mut().find(|(_, t)| *t == from) {
                    prev.1 = to.clone();
                } else {
                    moves.push((from, to));
                }
            }
        }
        if diags.has_errors() {
            return Err(diags);
        }
        if !moved_any {
            break;
        }
    }
    // After the explicit statements, which win: an object one of them
    // moved is no longer where an implied move would look.
    for (from, to) in implied_moves(config, &result) {
        let obj = result.resources.remove(&from).expect("listed from state");
        result.resources.insert(to.clone(), obj);
        moves.push((from, to));
    }
    *state = result;
    Ok(moves)
}

/// The moves Terraform implies without a `moved` block: a resource that
/// gained `count` takes its object without a key as `[0]`, and one that
/// lost `count` takes its `[0]` as the object without a key, in each
/// module instance, when the new address holds nothing. (A for_each
/// resource implies none: no key follows from the absence of one.)
fn implied_moves(
    config: &Config,
    state: &State,
) -> Vec<(AbsResourceInstance, AbsResourceInstance)> {
    let modules: std::collections::HashMap<Module, &crate::config::ModuleNode> = config
        .modules()
        .into_iter()
        .map(|n| (n.path.clone(), n))
        .collect();
    let mut out = Vec::new();
    for addr in state.resources.keys() {
        if addr.resource.resource.mode != ResourceMode::Managed {
            continue;
        }
        let to_key = match addr.key() {
            InstanceKey::None => InstanceKey::Int(0),
            InstanceKey::Int(0) => InstanceKey::None,
            _ => continue,
        };
        let Some(node) = modules.get(&addr.module.module()) else {
            continue;
        };
        let Some(block) = node.module.resources.get(&addr.resource.resource) else {
            continue;
        };
        let wants = match (block.count.is_some(), block.for_each.is_some()) {
            (true, false) => InstanceKey::Int(0),
            (false, false) => InstanceKey::None,
            _ => continue,
        };
        if to_key != wants {
            continue;
        }
        let to = AbsResourceInstance {
            module: addr.module.clone(),
            resource: addr.resource.resource.instance(to_key),
        };
        if !state.resources.contains_key(&to) {
            out.push((addr.clone(), to));
        }
    }
    out
}

/// Splits a state address into the instance of module `path` it lies in
/// and the address relative to it; None when it is not under `path`.
fn split(
    addr: &AbsResourceInstance,
    path: &Module,
) -> Option<(ModuleInstance, AbsResourceInstance)> {
    let n = path.0.len();
    let steps = &addr.module.0;
    if steps.len() < n || steps[..n].iter().map(|(name, _)| name).ne(path.0.iter()) {
        return None;
    }
    Some((
        ModuleInstance(steps[..n].to_vec()),
        AbsResourceInstance {
            module: ModuleInstance(steps[n..].to_vec()),
            resource: addr.resource.clone(),
        },
    ))
}

fn join(prefix: &ModuleInstance, rel: AbsResourceInstance) -> AbsResourceInstance {
    let mut module = prefix.0.clone();
    module.extend(rel.module.0);
    AbsResourceInstance {
        module: ModuleInstance(module),
        resource: rel.resource,
    }
}

/// Whether the configuration still declares this exact instance, as far as
/// is known before evaluation: its module (with a key only where the call
/// has count/for_each) and its resource.
fn still_declared(config: &Config, addr: &AbsResourceInstance) -> bool {
    let mut node = &config.root;
    for (name, key) in &addr.module.0 {
        let Some(call) = node.module.module_calls.get(name) else {
            return false;
        };
        let expands = call.count.is_some() || call.for_each.is_some();
        if !expands && *key != InstanceKey::None {
            return false;
        }
        // Which keys count/for_each declare is only known when they are
        // evaluated; the plan then simply plans whatever is left.
        if expands {
            return false;
        }
        let Some(child) = node.children.get(name) else {
            return false;
        };
        node = child;
    }
    match node.module.resources.get(&addr.resource.resource) {
        None => false,
        Some(b) => match addr.key() {
            InstanceKey::None => b.count.is_none() && b.for_each.is_none(),
            InstanceKey::Int(_) | InstanceKey::Str(_) => false,
        },
    }
}

fn parse(m: &Moved) -> Result<Statement, Diagnostic> {
    let invalid =
        |detail: String| Diagnostic::error("Invalid move statement", detail).at(m.range.clone());
    let (from, to) = (&m.from, &m.to);
    if from == to {
        return Err(Diagnostic::error(
            "Redundant move statement",
            format!("This statement declares a move from {from} to the same address."),
        )
        .at(m.range.clone()));
    }
    match (from, to) {
        (Target::Module(f), Target::Module(t)) => {
            let (Some((fp, fname, fkey)), Some((tp, tname, tkey))) = (f.parent(), t.parent())
            else {
                return Err(invalid("A module move needs two module addresses.".into()));
            };
            if *fkey == InstanceKey::None && *tkey == InstanceKey::None {
                if fp != tp {
                    return Err(invalid(format!(
                        "Cannot move {from} to {to}: a module call can be renamed in place, or its instances moved one by one to another module."
                    )));
                }
                Ok(Statement::Call(fp, fname.to_string(), tname.to_string()))
            } else {
                Ok(Statement::ModuleInstance(f.clone(), t.clone()))
            }
        }
        (Target::Module(_), _) | (_, Target::Module(_)) => Err(invalid(format!(
            "Cannot move {from} to {to}: a module can only move to a module, and a resource to a resource."
        ))),
        (f, t) => {
            let (fr, tr) = (resource_of(f), resource_of(t));
            if fr.mode != tr.mode || fr.type_name != tr.type_name {
                return Err(Diagnostic::error(
                    "Resource type mismatch",
                    format!("This statement declares a move from {from} to {to}, which is a {} of a different type.", if tr.mode == ResourceMode::Data { "data source" } else { "resource" }),
                )
                .at(m.range.clone()));
            }
            if fr.mode == ResourceMode::Data {
                return Err(invalid("Data sources cannot be moved.".into()));
            }
            match (f, t) {
                (Target::Resource(f), Target::Resource(t)) => {
                    Ok(Statement::Resource(f.clone(), t.clone()))
                }
                _ => Ok(Statement::Instance(instance_of(f), instance_of(t))),
            }
        }
    }
}

fn resource_of(t: &Target) -> &fleetform_shared::addr::Resource {
    match t {
        Target::Resource(r) => &r.resource,
        Target::Instance(i) => &i.resource.resource,
        Target::Module(_) => unreachable!("modules are handled before"),
    }
}

/// A resource written without a key, moved to or from an instance, is its
/// instance without a key.
fn instance_of(t: &Target) -> AbsResourceInstance {
    match t {
        Target::Resource(r) => r.instance(InstanceKey::None),
        Target::Instance(i) => i.clone(),
        Target::Module(_) => unreachable!("modules are handled before"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_config;
    use fleetform_shared::ProviderAddr;
    use fleetform_shared::state::{ObjectState, StateDelta};
    use fleetform_shared::value::Value;

    fn state(addrs: &[&str]) -> State {
        let mut s = State::new("l");
        for a in addrs {
            s.apply_delta(&StateDelta::SetCurrent {
                addr: a.parse().unwrap(),
                provider: ProviderAddr::implied("null"),
                object: Some(ObjectState::new(Value::object([("id", Value::from(*a))]))),
            });
        }
        s
    }

    fn module(src: &str) -> Config {
        tree(&[("main.tf", src)])
    }

    fn tree(files: &[(&str, &str)]) -> Config {
        let files = files
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let (c, d) = load_config(&files);
        assert!(!d.has_errors(), "{d}");
        c.unwrap()
    }

    fn keys(s: &State) -> Vec<String> {
        s.resources.keys().map(ToString::to_string).collect()
    }

    #[test]
    fn renames_resources_and_follows_chains_in_any_order() {
        let m = module(
            "moved {\n  from = null_resource.b\n  to = null_resource.c\n}\nmoved {\n  from = null_resource.a\n  to = null_resource.b\n}\nresource \"null_resource\" \"c\" {}\n",
        );
        let mut s = state(&["null_resource.a"]);
        let moves = apply_moves(&m, &mut s).unwrap();
        assert_eq!(keys(&s), ["null_resource.c"]);
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].1.to_string(), "null_resource.c");
    }

    #[test]
    fn moves_instances_and_whole_counted_resources() {
        let m = module(
            "moved {\n  from = null_resource.a[1]\n  to = null_resource.b\n}\nresource \"null_resource\" \"b\" {}\nresource \"null_resource\" \"a\" {\n  count = 1\n}\n",
        );
        let mut s = state(&["null_resource.a[0]", "null_resource.a[1]"]);
        apply_moves(&m, &mut s).unwrap();
        assert_eq!(keys(&s), ["null_resource.a[0]", "null_resource.b"]);
        let m = module(
            "moved {\n  from = null_resource.a\n  to = null_resource.x\n}\nresource \"null_resource\" \"x\" {\n  count = 2\n}\n",
        );
        let mut s = state(&["null_resource.a[0]", "null_resource.a[1]"]);
        apply_moves(&m, &mut s).unwrap();
        assert_eq!(keys(&s), ["null_resource.x[0]", "null_resource.x[1]"]);
    }

    #[test]
    fn gaining_or_losing_count_implies_a_move_where_the_new_address_is_free() {
        let counted = "resource \"null_resource\" \"a\" {\n  count = 2\n}\n";
        let mut s = state(&["null_resource.a"]);
        let moves = apply_moves(&module(counted), &mut s).unwrap();
        assert_eq!(keys(&s), ["null_resource.a[0]"]);
        assert_eq!(moves.len(), 1);
        // [0] taken already: the object without a key stays to be destroyed.
        let mut s = state(&["null_resource.a", "null_resource.a[0]"]);
        assert!(apply_moves(&module(counted), &mut s).unwrap().is_empty());
        let mut s = state(&["null_resource.a[0]", "null_resource.a[1]"]);
        apply_moves(&module("resource \"null_resource\" \"a\" {}\n"), &mut s).unwrap();
        assert_eq!(keys(&s), ["null_resource.a", "null_resource.a[1]"]);
        // for_each implies nothing; in a module the module's config counts.
        let mut s = state(&["null_resource.a"]);
        let each = "resource \"null_resource\" \"a\" {\n  for_each = {}\n}\n";
        assert!(apply_moves(&module(each), &mut s).unwrap().is_empty());
        let c = tree(&[
            ("main.tf", "module \"m\" {\n  source = \"./m\"\n}\n"),
            ("m/main.tf", counted),
        ]);
        let mut s = state(&["module.m.null_resource.a"]);
        apply_moves(&c, &mut s).unwrap();
        assert_eq!(keys(&s), ["module.m.null_resource.a[0]"]);
        // An explicit statement wins.
        let explicit =
            format!("{counted}moved {{\n  from = null_resource.a\n  to = null_resource.a[1]\n}}\n");
        let mut s = state(&["null_resource.a"]);
        apply_moves(&module(&explicit), &mut s).unwrap();
        assert_eq!(keys(&s), ["null_resource.a[1]"]);
    }

    #[test]
    fn invalid_moves_are_diagnosed_and_change_nothing() {
        let cases = [
            (
                "moved {\n  from = null_resource.a\n  to = sim_object.a\n}\n",
                "Resource type mismatch",
            ),
            (
                "moved {\n  from = null_resource.a\n  to = null_resource.b\n}\nmoved {\n  from = null_resource.b\n  to = null_resource.a\n}\n",
                "Cyclic dependency in move statements",
            ),
            (
                "moved {\n  from = null_resource.a\n  to = null_resource.b\n}\nresource \"null_resource\" \"a\" {}\n",
                "Moved object still exists",
            ),
            (
                "moved {\n  from = null_resource.a\n  to = null_resource.a\n}\n",
                "Redundant move statement",
            ),
        ];
        for (src, summary) in cases {
            let mut s = state(&["null_resource.a", "null_resource.z"]);
            let before = s.clone();
            let err = apply_moves(&module(src), &mut s).unwrap_err();
            assert!(err.iter().any(|d| d.summary == summary), "{src}: {err}");
            assert_eq!(s, before);
        }
    }

    #[test]
    fn moves_into_out_of_and_between_modules() {
        let child = ("m/main.tf", "resource \"null_resource\" \"x\" {}\n");
        // A root resource into a module, and a module call renamed.
        let c = tree(&[
            (
                "main.tf",
                "module \"b\" {\n  source = \"./m\"\n}\nmoved {\n  from = null_resource.x\n  to = module.b.null_resource.x\n}\nmoved {\n  from = module.a\n  to = module.b\n}\n",
            ),
            child,
        ]);
        let mut s = state(&["null_resource.x", "module.a.null_resource.y"]);
        apply_moves(&c, &mut s).unwrap();
        assert_eq!(
            keys(&s),
            ["module.b.null_resource.x", "module.b.null_resource.y"]
        );
        // A module instance gets a key; keyed instances of a call keep theirs.
        let c = tree(&[
            (
                "main.tf",
                "module \"n\" {\n  source = \"./m\"\n  count = 1\n}\nmoved {\n  from = module.n\n  to = module.n[0]\n}\n",
            ),
            child,
        ]);
        let mut s = state(&[
            "module.n.null_resource.x",
            "module.n.module.deep.null_resource.z",
        ]);
        apply_moves(&c, &mut s).unwrap();
        assert_eq!(
            keys(&s),
            [
                "module.n[0].null_resource.x",
                "module.n[0].module.deep.null_resource.z"
            ]
        );
        // A block inside a module applies in each of its instances, with
        // addresses relative to the module: the root's own object stays.
        let c = tree(&[
            (
                "main.tf",
                "module \"k\" {\n  source = \"./m\"\n  for_each = toset([\"p\", \"q\"])\n}\n",
            ),
            (
                "m/main.tf",
                "resource \"null_resource\" \"x\" {}\nmoved {\n  from = null_resource.old\n  to = null_resource.x\n}\n",
            ),
        ]);
        let mut s = state(&[
            "module.k[\"p\"].null_resource.old",
            "module.k[\"q\"].null_resource.old",
            "null_resource.old",
        ]);
        apply_moves(&c, &mut s).unwrap();
        assert_eq!(
            keys(&s),
            [
                "null_resource.old",
                "module.k[\"p\"].null_resource.x",
                "module.k[\"q\"].null_resource.x"
            ]
        );
        // A module cannot become a resource.
        let c = module("moved {\n  from = module.a\n  to = null_resource.b\n}\n");
        let err = apply_moves(&c, &mut state(&[])).unwrap_err();
        assert!(
            err.iter().any(|d| d.summary == "Invalid move statement"),
            "{err}"
        );
    }
}
