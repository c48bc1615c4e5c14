//! `moved` blocks: before planning, objects in the prior state are rebound
//! from their old address to the new one, so a refactoring plans as no-ops
//! instead of deletes and creates.

use crate::config::{Module, Moved};
use fleetform_shared::addr::{AbsResource, AbsResourceInstance, InstanceKey};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::state::State;
use std::collections::BTreeMap;

/// One parsed statement: whole resources, or single instances.
#[derive(Clone, Debug, PartialEq)]
enum Statement {
    Resource(AbsResource, AbsResource),
    Instance(AbsResourceInstance, AbsResourceInstance),
}

/// Applies the module's `moved` blocks to `state`; returns the moves made
/// (old instance address → new). Invalid statements are diagnostics and
/// leave the state unchanged.
pub fn apply_moves(
    module: &Module,
    state: &mut State,
) -> Result<Vec<(AbsResourceInstance, AbsResourceInstance)>, Diagnostics> {
    let mut diags = Diagnostics::new();
    let mut statements = Vec::new();
    for m in &module.moved {
        match parse(m) {
            Ok(s) => statements.push((s, m)),
            Err(d) => diags.push(d),
        }
    }
    if diags.has_errors() {
        return Err(diags);
    }
    // Chains (a → b, b → c) resolve to their end; a cycle is an error.
    let mut next: BTreeMap<String, (String, &Moved)> = BTreeMap::new();
    for (s, m) in &statements {
        let (from, to) = match s {
            Statement::Resource(f, t) => (f.to_string(), t.to_string()),
            Statement::Instance(f, t) => (f.to_string(), t.to_string()),
        };
        if next.insert(from.clone(), (to, m)).is_some() {
            diags.push(
                Diagnostic::error("Ambiguous move statements", format!("A statement moving {from} was already declared; each object can move to only one new address."))
                    .at(m.range.clone()),
            );
        }
    }
    for (from, (_, m)) in &next {
        let mut seen = vec![from.clone()];
        let mut cur = from.clone();
        while let Some((to, _)) = next.get(&cur) {
            if seen.contains(to) {
                diags.push(
                    Diagnostic::error(
                        "Cyclic dependency in move statements",
                        format!(
                            "The move statements form a cycle: {} -> {to}.",
                            seen.join(" -> ")
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
    let mut moves = Vec::new();
    let mut result = state.clone();
    // Passes until nothing moves: chains resolve whatever the statement
    // order (cycles were refused above, so this ends).
    loop {
        let mut moved_any = false;
        for (s, m) in &statements {
            let pairs: Vec<(AbsResourceInstance, AbsResourceInstance)> = match s {
                Statement::Resource(from, to) => result
                    .resources
                    .keys()
                    .filter(|a| a.containing_resource() == *from)
                    .map(|a| (a.clone(), to.instance(a.key().clone())))
                    .collect(),
                Statement::Instance(from, to) => {
                    if result.resources.contains_key(from) {
                        vec![(from.clone(), to.clone())]
                    } else {
                        vec![]
                    }
                }
            };
            for (from, to) in pairs {
                if module.resources.contains_key(&from.resource.resource) && declares(module, &from)
                {
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
                if let Some(prev) = moves
                    .iter_mut()
                    .find(|(_, t): &&mut (AbsResourceInstance, AbsResourceInstance)| *t == from)
                {
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
    *state = result;
    Ok(moves)
}

/// Whether the configuration still declares this exact instance, as far as
/// is known before evaluation.
fn declares(module: &Module, addr: &AbsResourceInstance) -> bool {
    match module.resources.get(&addr.resource.resource) {
        None => false,
        Some(b) => match addr.key() {
            InstanceKey::None => b.count.is_none() && b.for_each.is_none(),
            // Which keys count/for_each declare is only known when they are
            // evaluated; the plan then simply plans whatever is left.
            InstanceKey::Int(_) | InstanceKey::Str(_) => false,
        },
    }
}

fn parse(m: &Moved) -> Result<Statement, Diagnostic> {
    let bad = |which: &str, e: String| {
        Diagnostic::error(
            "Invalid address",
            format!("The {which} address is invalid: {e}"),
        )
        .at(m.range.clone())
    };
    let from: AbsResourceInstance = m
        .from
        .parse()
        .map_err(|e: fleetform_shared::addr::AddrParseError| bad("\"from\"", e.to_string()))?;
    let to: AbsResourceInstance =
        m.to.parse()
            .map_err(|e: fleetform_shared::addr::AddrParseError| bad("\"to\"", e.to_string()))?;
    let (fr, tr) = (&from.resource.resource, &to.resource.resource);
    if fr.mode != tr.mode || fr.type_name != tr.type_name {
        return Err(Diagnostic::error(
            "Resource type mismatch",
            format!("This statement declares a move from {from} to {to}, which is a {} of a different type.", if tr.mode == fleetform_shared::addr::ResourceMode::Data { "data source" } else { "resource" }),
        )
        .at(m.range.clone()));
    }
    if fr.mode == fleetform_shared::addr::ResourceMode::Data {
        return Err(
            Diagnostic::error("Invalid move statement", "Data sources cannot be moved.")
                .at(m.range.clone()),
        );
    }
    if from == to {
        return Err(Diagnostic::error(
            "Redundant move statement",
            format!("This statement declares a move from {from} to the same address."),
        )
        .at(m.range.clone()));
    }
    let whole = |a: &AbsResourceInstance| {
        a.key() == &InstanceKey::None && !m_has_key(&m.from) && !m_has_key(&m.to)
    };
    if whole(&from) && whole(&to) {
        Ok(Statement::Resource(
            from.containing_resource(),
            to.containing_resource(),
        ))
    } else {
        Ok(Statement::Instance(from, to))
    }
}

fn m_has_key(text: &str) -> bool {
    text.trim_end().ends_with(']')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_module;
    use fleetform_shared::ProviderAddr;
    use fleetform_shared::state::{ObjectState, ObjectStatus, StateDelta};
    use fleetform_shared::value::Value;

    fn state(addrs: &[&str]) -> State {
        let mut s = State::new("l");
        for a in addrs {
            s.apply_delta(&StateDelta::SetCurrent {
                addr: a.parse().unwrap(),
                provider: ProviderAddr::implied("null"),
                object: Some(ObjectState {
                    value: Value::object([("id", Value::from(*a))]),
                    private: vec![],
                    schema_version: 0,
                    status: ObjectStatus::Ready,
                    dependencies: vec![],
                    create_before_destroy: false,
                    sensitive_paths: vec![],
                }),
            });
        }
        s
    }

    fn module(src: &str) -> Module {
        let (m, d) = load_module(&BTreeMap::from([("main.tf".to_string(), src.to_string())]));
        assert!(!d.has_errors(), "{d}");
        m.unwrap()
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
}
