//! Edits of a state that `state mv`, `state rm` and
//! `state replace-provider` make, as Terraform makes them: pure functions
//! on a [`State`], each returning the lines that say what changed, or why
//! nothing can (then the state is left as it was).

use crate::addr::{
    AbsResource, AbsResourceInstance, InstanceKey, ModuleInstance, ProviderAddr, Target,
};
use crate::state::State;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum StateEdit {
    /// `state mv FROM TO`: a module, a resource (every instance) or one
    /// instance takes a new address; the objects stay as they are.
    Move { from: String, to: String },
    /// `state rm ADDR...`: fleetform forgets the objects (they go on
    /// existing).
    Remove { addrs: Vec<String> },
    /// `state replace-provider FROM TO`: objects managed by provider FROM
    /// are from now on managed by TO (a fork, a private registry copy).
    ReplaceProvider { from: String, to: String },
}

fn target(addr: &str, role: &str) -> Result<Target, String> {
    addr.parse().map_err(|e: crate::addr::AddrParseError| {
        format!("invalid {role} address {addr:?}: {}", e.reason)
    })
}

/// Whether `module` lies in (or is) `prefix`.
fn within(module: &ModuleInstance, prefix: &ModuleInstance) -> bool {
    module.0.len() >= prefix.0.len() && module.0[..prefix.0.len()] == prefix.0[..]
}

fn rebase(module: &ModuleInstance, from: &ModuleInstance, to: &ModuleInstance) -> ModuleInstance {
    let mut path = to.0.clone();
    path.extend(module.0[from.0.len()..].iter().cloned());
    ModuleInstance(path)
}

/// A resource address as one instance: `x.y` is the instance without a key.
fn as_instance(t: &Target) -> Option<AbsResourceInstance> {
    match t {
        Target::Instance(i) => Some(i.clone()),
        Target::Resource(r) => Some(r.instance(InstanceKey::None)),
        Target::Module(_) => None,
    }
}

impl State {
    /// Applies `edit`; on `Err` the state is unchanged.
    pub fn edit(&mut self, edit: &StateEdit) -> Result<Vec<String>, String> {
        let mut next = self.clone();
        let said = match edit {
            StateEdit::Move { from, to } => next.move_objects(from, to)?,
            StateEdit::Remove { addrs } => next.remove_objects(addrs)?,
            StateEdit::ReplaceProvider { from, to } => next.replace_provider(from, to)?,
        };
        *self = next;
        Ok(said)
    }

    /// (old address, new address) of every instance a move takes.
    fn move_plan(
        &self,
        from: &Target,
        to: &Target,
    ) -> Result<Vec<(AbsResourceInstance, AbsResourceInstance)>, String> {
        let plan: Vec<(AbsResourceInstance, AbsResourceInstance)> = match (from, to) {
            (Target::Module(f), Target::Module(t)) => {
                if within(t, f) {
                    return Err(format!("cannot move {from} into itself ({to})"));
                }
                self.resources
                    .keys()
                    .filter(|a| within(&a.module, f))
                    .map(|a| {
                        let mut moved = a.clone();
                        moved.module = rebase(&a.module, f, t);
                        (a.clone(), moved)
                    })
                    .collect()
            }
            (Target::Module(_), _) | (_, Target::Module(_)) => {
                return Err(format!(
                    "cannot move {from} to {to}: a module moves only to a module address"
                ));
            }
            (Target::Resource(f), Target::Resource(t))
                if self
                    .instances_of(f)
                    .any(|a| a.resource.key != InstanceKey::None) =>
            {
                self.instances_of(f)
                    .map(|a| (a.clone(), t.instance(a.resource.key.clone())))
                    .collect()
            }
            _ => {
                let (f, t) = (
                    as_instance(from).expect("not a module"),
                    as_instance(to).expect("not a module"),
                );
                if self.resources.contains_key(&f) {
                    vec![(f, t)]
                } else {
                    vec![]
                }
            }
        };
        if plan.is_empty() {
            return Err(format!(
                "cannot move {from}: it does not match anything in the current state"
            ));
        }
        for (old, new) in &plan {
            let (a, b) = (&old.resource.resource, &new.resource.resource);
            if a.mode != b.mode || a.type_name != b.type_name {
                return Err(format!(
                    "cannot move {old} to {new}: the resource types differ ({} and {})",
                    a.type_name, b.type_name
                ));
            }
            if self.resources.contains_key(new) && !plan.iter().any(|(o, _)| o == new) {
                return Err(format!(
                    "cannot move to {new}: there is already a resource instance at that address in the current state"
                ));
            }
        }
        Ok(plan)
    }

    fn instances_of<'a>(
        &'a self,
        r: &'a AbsResource,
    ) -> impl Iterator<Item = &'a AbsResourceInstance> + 'a {
        self.resources
            .keys()
            .filter(move |a| a.module == r.module && a.resource.resource == r.resource)
    }

    fn move_objects(&mut self, from: &str, to: &str) -> Result<Vec<String>, String> {
        let (f, t) = (target(from, "source")?, target(to, "destination")?);
        let plan = self.move_plan(&f, &t)?;
        let mut moved = Vec::with_capacity(plan.len());
        for (old, new) in &plan {
            if let Some(i) = self.resources.remove(old) {
                moved.push((new.clone(), i));
            }
            if let Some(op) = self.interrupted.remove(old) {
                self.interrupted.insert(new.clone(), op);
            }
        }
        self.resources.extend(moved);
        // Destroy ordering follows the objects to their new addresses.
        let renamed: std::collections::HashMap<AbsResource, AbsResource> = plan
            .iter()
            .map(|(o, n)| (o.containing_resource(), n.containing_resource()))
            .collect();
        for inst in self.resources.values_mut() {
            for obj in inst.current.iter_mut().chain(inst.deposed.values_mut()) {
                for d in &mut obj.dependencies {
                    if let Some(n) = renamed.get(d) {
                        *d = n.clone();
                    }
                }
            }
        }
        let mut said = vec![format!("Move {from:?} to {to:?}")];
        said.push(format!("Successfully moved {} object(s).", plan.len()));
        Ok(said)
    }

    fn remove_objects(&mut self, addrs: &[String]) -> Result<Vec<String>, String> {
        let mut said = Vec::new();
        let mut count = 0;
        for addr in addrs {
            let t = target(addr, "resource instance")?;
            let gone: Vec<AbsResourceInstance> = self
                .resources
                .keys()
                .filter(|a| t.contains_instance(a))
                .cloned()
                .collect();
            if gone.is_empty() {
                return Err(format!(
                    "no matching objects found for {addr}: to remove an object, give its address as `state list` shows it"
                ));
            }
            for a in gone {
                self.resources.remove(&a);
                self.interrupted.remove(&a);
                said.push(format!("Removed {a}"));
                count += 1;
            }
        }
        said.push(format!(
            "Successfully removed {count} resource instance(s)."
        ));
        Ok(said)
    }

    fn replace_provider(&mut self, from: &str, to: &str) -> Result<Vec<String>, String> {
        let parse = |s: &str, role: &str| {
            s.parse::<ProviderAddr>()
                .map_err(|e| format!("invalid {role} provider address {s:?}: {e}"))
        };
        let (f, t) = (parse(from, "source")?, parse(to, "target")?);
        let mut said = vec![format!("Replacing provider {f} with {t}:")];
        let mut count = 0;
        for (addr, inst) in &mut self.resources {
            if inst.provider == f {
                inst.provider = t.clone();
                said.push(format!("  {addr}"));
                count += 1;
            }
        }
        if count == 0 {
            return Err(format!(
                "no resource instance in the state is managed by provider {f}"
            ));
        }
        said.push(format!(
            "Successfully replaced provider for {count} resource instance(s)."
        ));
        Ok(said)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{InstanceState, ObjectState, ObjectStatus};
    use crate::value::Value;

    fn obj(id: &str, deps: &[&str]) -> ObjectState {
        ObjectState {
            value: Value::object([("id", Value::from(id))]),
            private: vec![],
            schema_version: 0,
            status: ObjectStatus::Ready,
            dependencies: deps
                .iter()
                .map(|d| {
                    d.parse::<AbsResourceInstance>()
                        .unwrap()
                        .containing_resource()
                })
                .collect(),
            create_before_destroy: false,
            sensitive_paths: vec![],
            value_sensitive_paths: None,
            undecoded: false,
        }
    }

    fn state(entries: &[(&str, &[&str])]) -> State {
        let mut s = State::new("l");
        for (addr, deps) in entries {
            s.resources.insert(
                addr.parse().unwrap(),
                InstanceState {
                    provider: ProviderAddr::implied("null"),
                    current: Some(obj(addr, deps)),
                    deposed: Default::default(),
                },
            );
        }
        s
    }

    fn addrs(s: &State) -> Vec<String> {
        s.resources.keys().map(ToString::to_string).collect()
    }

    fn mv(from: &str, to: &str) -> StateEdit {
        StateEdit::Move {
            from: from.into(),
            to: to.into(),
        }
    }

    #[test]
    fn a_resource_moves_with_every_instance_and_its_dependents_follow() {
        let mut s = state(&[
            ("null_resource.a[0]", &[]),
            ("null_resource.a[1]", &[]),
            ("null_resource.c", &["null_resource.a[0]"]),
        ]);
        let said = s.edit(&mv("null_resource.a", "null_resource.b")).unwrap();
        assert_eq!(said[1], "Successfully moved 2 object(s).");
        assert_eq!(
            addrs(&s),
            [
                "null_resource.b[0]",
                "null_resource.b[1]",
                "null_resource.c"
            ]
        );
        let c = &s.resources[&"null_resource.c".parse().unwrap()];
        assert_eq!(
            c.current.as_ref().unwrap().dependencies[0].to_string(),
            "null_resource.b"
        );
        // The object itself is unchanged.
        let b0 = &s.resources[&"null_resource.b[0]".parse().unwrap()];
        assert_eq!(
            *b0.current.as_ref().unwrap().value.get_attr("id"),
            Value::from("null_resource.a[0]")
        );
    }

    #[test]
    fn instances_and_single_resources_move_between_keys() {
        let mut s = state(&[("null_resource.a", &[]), ("null_resource.x[\"k\"]", &[])]);
        s.edit(&mv("null_resource.a", "null_resource.b[0]"))
            .unwrap();
        s.edit(&mv("null_resource.x[\"k\"]", "null_resource.x[\"j\"]"))
            .unwrap();
        assert_eq!(addrs(&s), ["null_resource.b[0]", "null_resource.x[\"j\"]"]);
        s.edit(&mv("null_resource.b[0]", "null_resource.b"))
            .unwrap();
        assert_eq!(addrs(&s), ["null_resource.b", "null_resource.x[\"j\"]"]);
    }

    #[test]
    fn modules_move_with_everything_inside() {
        let mut s = state(&[
            ("module.old.null_resource.a", &[]),
            ("module.old.module.inner.null_resource.b", &[]),
            ("null_resource.root", &[]),
        ]);
        s.edit(&mv("module.old", "module.new[\"x\"]")).unwrap();
        assert_eq!(
            addrs(&s),
            [
                "null_resource.root",
                "module.new[\"x\"].null_resource.a",
                "module.new[\"x\"].module.inner.null_resource.b",
            ]
        );
    }

    #[test]
    fn a_bad_move_says_why_and_changes_nothing() {
        let mut s = state(&[("null_resource.a", &[]), ("null_resource.b", &[])]);
        let before = s.clone();
        for (from, to, why) in [
            (
                "null_resource.nope",
                "null_resource.c",
                "does not match anything",
            ),
            (
                "null_resource.a",
                "null_resource.b",
                "already a resource instance",
            ),
            ("null_resource.a", "random_id.a", "resource types differ"),
            ("module.m", "null_resource.c", "only to a module"),
            ("null_resource.a", "not an address!", "invalid destination"),
        ] {
            let e = s.edit(&mv(from, to)).unwrap_err();
            assert!(e.contains(why), "{from} -> {to}: {e}");
            assert_eq!(s, before);
        }
    }

    #[test]
    fn remove_forgets_what_matches_or_nothing() {
        let mut s = state(&[
            ("null_resource.a[0]", &[]),
            ("null_resource.a[1]", &[]),
            ("module.m.null_resource.b", &[]),
            ("null_resource.keep", &[]),
        ]);
        let before = s.clone();
        let e = s
            .edit(&StateEdit::Remove {
                addrs: vec!["null_resource.a[0]".into(), "null_resource.nope".into()],
            })
            .unwrap_err();
        assert!(
            e.contains("no matching objects found for null_resource.nope"),
            "{e}"
        );
        assert_eq!(s, before, "all or nothing");
        let said = s
            .edit(&StateEdit::Remove {
                addrs: vec!["null_resource.a".into(), "module.m".into()],
            })
            .unwrap();
        assert_eq!(
            said.last().unwrap(),
            "Successfully removed 3 resource instance(s)."
        );
        assert_eq!(addrs(&s), ["null_resource.keep"]);
    }

    #[test]
    fn replace_provider_moves_objects_to_another_source() {
        let mut s = state(&[("null_resource.a", &[]), ("null_resource.b", &[])]);
        let said = s
            .edit(&StateEdit::ReplaceProvider {
                from: "hashicorp/null".into(),
                to: "registry.acme.example/acme/null".into(),
            })
            .unwrap();
        assert_eq!(
            said.last().unwrap(),
            "Successfully replaced provider for 2 resource instance(s)."
        );
        for i in s.resources.values() {
            assert_eq!(i.provider.to_string(), "registry.acme.example/acme/null");
        }
        let e = s
            .edit(&StateEdit::ReplaceProvider {
                from: "hashicorp/null".into(),
                to: "x/y".into(),
            })
            .unwrap_err();
        assert!(e.contains("no resource instance"), "{e}");
    }
}
