//! The values a run knows so far, per module instance: its variables,
//! locals, outputs, module call expansions and the values of its resource
//! instances (planned values during planning, new objects during apply),
//! each with its sensitivity marks beside it; and the provider functions
//! each module can call. Plain data below the run context and everything
//! that evaluates: [`crate::run::eval::scope::EvalScope`] reads it, the
//! walks fill it.

use fleetform_lang::config::Module as ModuleConfig;
use fleetform_lang::eval::{EvalEnv, Marks, Reference};
use fleetform_shared::addr::{AbsResource, InstanceKey, Module, ModuleInstance, Resource};
use fleetform_shared::state::ObjectState;
use fleetform_shared::types::Type;
use fleetform_shared::value::{PathStep, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// How a resource or a module call expands into instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expansion {
    Single,
    Count,
    ForEach,
    /// `count`/`for_each` is not known yet.
    Unknown,
}

impl Expansion {
    /// What a block's meta-arguments say, before they are evaluated.
    pub fn of(count: bool, for_each: bool) -> Expansion {
        match (count, for_each) {
            (true, _) => Expansion::Count,
            (_, true) => Expansion::ForEach,
            _ => Expansion::Single,
        }
    }

    /// The value of a reference to the whole thing, from its instances' values.
    fn aggregate<'v>(self, items: impl Iterator<Item = (&'v InstanceKey, Value)>) -> Value {
        match self {
            Expansion::Unknown => Value::unknown(),
            Expansion::Single => items
                .filter(|(k, _)| **k == InstanceKey::None)
                .map(|(_, v)| v)
                .next()
                .unwrap_or(Value::null()),
            // By index: an instance without a value (its create failed, a
            // failure isolated from what reads the others) leaves an
            // unknown in its place, so the others keep their indexes.
            Expansion::Count => {
                let mut list = Vec::new();
                for (k, v) in items {
                    if let InstanceKey::Int(i) = k
                        && let Ok(i) = usize::try_from(*i)
                    {
                        list.resize_with(list.len().max(i), Value::unknown);
                        if i == list.len() {
                            list.push(v);
                        }
                    }
                }
                Value::List(list.into())
            }
            Expansion::ForEach => Value::Map(
                items
                    .filter_map(|(k, v)| match k {
                        InstanceKey::Str(s) => Some((s.clone(), v)),
                        _ => None,
                    })
                    .collect(),
            ),
        }
    }

    /// The marks of [`Expansion::aggregate`]'s value.
    fn aggregate_marks<'v>(self, items: impl Iterator<Item = (&'v InstanceKey, Marks)>) -> Marks {
        match self {
            Expansion::Unknown => Marks::none(),
            Expansion::Single => items
                .filter(|(k, _)| **k == InstanceKey::None)
                .map(|(_, m)| m)
                .next()
                .unwrap_or_default(),
            Expansion::Count => items.fold(Marks::none(), |acc, (k, m)| match k {
                InstanceKey::Int(i) => acc.with(m.nest(PathStep::Index(*i))),
                _ => acc,
            }),
            Expansion::ForEach => items
                .filter_map(|(k, m)| match k {
                    InstanceKey::Str(s) => Some(m.nest(PathStep::Key(s.clone()))),
                    _ => None,
                })
                .fold(Marks::none(), Marks::with),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ResourceValues {
    pub expansion: Expansion,
    pub instances: BTreeMap<InstanceKey, Value>,
    /// The sensitive parts of each instance's value (none when absent).
    /// While an instance is being planned: those of its configuration.
    /// Set with [`ResourceValues::set_marks`], which keeps no entry for
    /// an instance with none (most have none: a million empty entries
    /// were about 70 MB).
    pub marks: BTreeMap<InstanceKey, Marks>,
    /// The object type the resource's schema implies, shared by its
    /// instances: references see typed objects (a null attribute has its
    /// schema's type, as in Terraform), the stored objects stay untyped.
    pub object_type: Option<Arc<Type>>,
}

impl ResourceValues {
    pub fn new(expansion: Expansion) -> ResourceValues {
        ResourceValues {
            expansion,
            instances: BTreeMap::new(),
            marks: BTreeMap::new(),
            object_type: None,
        }
    }

    pub fn with_type(self, object_type: Option<Arc<Type>>) -> ResourceValues {
        ResourceValues {
            object_type,
            ..self
        }
    }

    /// An instance's value from a state object, with its recorded
    /// sensitive paths.
    pub fn set_object(&mut self, key: &InstanceKey, object: &ObjectState) {
        self.instances.insert(key.clone(), object.value.clone());
        self.set_marks(
            key,
            Marks::from_paths(object.sensitive_paths.iter().cloned()),
        );
    }

    /// Sets an instance's marks, replacing what it had.
    pub fn set_marks(&mut self, key: &InstanceKey, marks: Marks) {
        if marks.is_empty() {
            self.marks.remove(key);
        } else {
            self.marks.insert(key.clone(), marks);
        }
    }

    /// The value a reference to the whole resource evaluates to.
    pub fn aggregate(&self) -> Value {
        let ty = self.object_type.as_ref();
        self.expansion.aggregate(
            self.instances
                .iter()
                .map(|(k, v)| (k, typed_object(v.clone(), ty))),
        )
    }

    /// The marks of the value [`ResourceValues::aggregate`] returns.
    pub fn aggregate_marks(&self) -> Marks {
        self.expansion.aggregate_marks(
            self.instances
                .keys()
                .map(|k| (k, self.marks.get(k).cloned().unwrap_or_default())),
        )
    }
}

/// `value` with the object type `ty` (see [`Value::typed_as_object`]).
fn typed_object(value: Value, ty: Option<&Arc<Type>>) -> Value {
    match ty {
        Some(ty) => value.typed_as_object(ty),
        None => value,
    }
}

/// How one module call expanded in one instance of the calling module.
#[derive(Clone, Debug)]
pub struct CallExpansion {
    pub expansion: Expansion,
    pub keys: Vec<InstanceKey>,
}

/// The values of one module instance.
#[derive(Clone, Debug, Default)]
pub struct ModuleValues {
    pub variables: BTreeMap<String, Value>,
    pub variable_marks: BTreeMap<String, Marks>,
    pub locals: BTreeMap<String, Value>,
    pub local_marks: BTreeMap<String, Marks>,
    pub outputs: fleetform_shared::value::ValueMap,
    pub output_marks: BTreeMap<String, Marks>,
    pub resources: HashMap<Resource, ResourceValues>,
    /// Module calls of this instance, by name.
    pub calls: BTreeMap<String, CallExpansion>,
    /// For an instance made by a call with `for_each`: the `each.value` its
    /// call's arguments see, with its marks.
    pub each_value: Option<(Value, Marks)>,
}

#[derive(Default)]
pub struct RunValues {
    /// What functions see besides values: the bundle's files, the plan's
    /// timestamp, whether the run is applying (impure functions).
    pub env: EvalEnv,
    pub modules: HashMap<ModuleInstance, ModuleValues>,
    /// The instances of each module of the configuration, in key order,
    /// known once the module's call has been expanded.
    pub instances: HashMap<Module, Vec<ModuleInstance>>,
    /// The references to ephemeral values each module can make, for
    /// `ephemeralasnull` (see `fleetform_lang::config::ephemeral_references`).
    pub ephemeral: BTreeMap<Module, BTreeSet<Reference>>,
    /// The provider functions each module can call.
    pub functions: std::sync::Arc<RunFunctions>,
    /// The object types resource schemas imply, by (data source?, type
    /// name), computed once per run (see [`ResourceValues::object_type`]).
    pub object_types: HashMap<
        (
            fleetform_shared::addr::ResourceMode,
            fleetform_shared::name::Name,
        ),
        Arc<Type>,
    >,
}

impl RunValues {
    /// The values a run starts with: the root's input variables.
    pub fn new(root: &ModuleConfig, variables: BTreeMap<String, Value>) -> RunValues {
        let variable_marks = root
            .variables
            .values()
            .filter(|v| v.sensitive)
            .map(|v| (v.name.clone(), Marks::whole()))
            .collect();
        let mut values = RunValues::default();
        values.modules.insert(
            ModuleInstance::root(),
            ModuleValues {
                variables,
                variable_marks,
                ..ModuleValues::default()
            },
        );
        values
            .instances
            .insert(Module::root(), vec![ModuleInstance::root()]);
        values
    }

    pub fn root(&self) -> &ModuleValues {
        &self.modules[&ModuleInstance::root()]
    }

    pub fn module_mut(&mut self, m: &ModuleInstance) -> &mut ModuleValues {
        self.modules.entry(m.clone()).or_default()
    }

    /// The instances of a module (none until its call is expanded).
    pub fn instances_of(&self, m: &Module) -> Vec<ModuleInstance> {
        self.instances.get(m).cloned().unwrap_or_default()
    }

    pub fn resource(&self, addr: &AbsResource) -> Option<&ResourceValues> {
        self.modules
            .get(&addr.module)?
            .resources
            .get(&addr.resource)
    }

    pub fn resource_mut(&mut self, addr: &AbsResource) -> Option<&mut ResourceValues> {
        self.modules
            .get_mut(&addr.module)?
            .resources
            .get_mut(&addr.resource)
    }

    pub fn set_resource(&mut self, addr: &AbsResource, values: ResourceValues) {
        self.module_mut(&addr.module)
            .resources
            .insert(addr.resource.clone(), values);
    }

    pub fn set_local(&mut self, m: &ModuleInstance, name: String, value: Value, marks: Marks) {
        let mv = self.module_mut(m);
        mv.local_marks.insert(name.clone(), marks);
        mv.locals.insert(name, value);
    }

    pub fn set_variable(&mut self, m: &ModuleInstance, name: String, value: Value, marks: Marks) {
        let mv = self.module_mut(m);
        mv.variable_marks.insert(name.clone(), marks);
        mv.variables.insert(name, value);
    }

    pub fn set_output(&mut self, m: &ModuleInstance, name: String, value: Value, marks: Marks) {
        let mv = self.module_mut(m);
        mv.output_marks.insert(name.clone(), marks);
        mv.outputs.insert(name, value);
    }

    /// `module.NAME` in module instance `m`.
    pub(crate) fn call_value(&self, m: &ModuleInstance, name: &str) -> Value {
        let Some(call) = self.modules.get(m).and_then(|v| v.calls.get(name)) else {
            return Value::unknown();
        };
        call.expansion.aggregate(call.keys.iter().map(|k| {
            let outputs = self
                .modules
                .get(&m.child(name, k.clone()))
                .map(|c| Value::Map(c.outputs.clone()))
                .unwrap_or(Value::unknown());
            (k, outputs)
        }))
    }

    pub(crate) fn call_marks(&self, m: &ModuleInstance, name: &str) -> Marks {
        let Some(call) = self.modules.get(m).and_then(|v| v.calls.get(name)) else {
            return Marks::none();
        };
        call.expansion.aggregate_marks(call.keys.iter().map(|k| {
            let marks = self
                .modules
                .get(&m.child(name, k.clone()))
                .map(|c| {
                    c.output_marks.iter().fold(Marks::none(), |acc, (o, mk)| {
                        acc.with(mk.clone().nest(PathStep::Key(o.clone())))
                    })
                })
                .unwrap_or_default();
            (k, marks)
        }))
    }
}

/// The provider functions of every module of a run's configuration (made by
/// `eval::functions::prepare`).
#[derive(Default)]
pub struct RunFunctions {
    modules: HashMap<Module, fleetform_lang::provider_functions::ModuleFunctions>,
}

impl RunFunctions {
    pub fn new(
        modules: HashMap<Module, fleetform_lang::provider_functions::ModuleFunctions>,
    ) -> RunFunctions {
        RunFunctions { modules }
    }

    /// What module `m` can call; None for a module the run does not know.
    pub fn of(&self, m: &Module) -> Option<&fleetform_lang::provider_functions::ModuleFunctions> {
        self.modules.get(m)
    }
}

#[cfg(test)]
mod tests {
    use super::{Expansion, ResourceValues};
    use fleetform_shared::addr::InstanceKey;
    use fleetform_shared::marks::Marks;
    use fleetform_shared::value::Value;

    #[test]
    fn instances_without_marks_keep_no_entry_and_read_as_none() {
        let mut v = ResourceValues::new(Expansion::Count);
        let (a, b) = (InstanceKey::Int(0), InstanceKey::Int(1));
        for k in [&a, &b] {
            v.instances
                .insert(k.clone(), Value::object([("id", Value::string("x"))]));
        }
        v.set_marks(&a, Marks::whole());
        v.set_marks(&b, Marks::none());
        assert_eq!(v.marks.len(), 1);
        assert!(!v.aggregate_marks().is_empty(), "a's marks are seen");
        // Replaced by none: the entry goes, and nothing is sensitive.
        v.set_marks(&a, Marks::none());
        assert!(v.marks.is_empty());
        assert!(v.aggregate_marks().is_empty());
    }
}
