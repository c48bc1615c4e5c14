//! The evaluation scope of a run: variables, locals and the values of
//! resource instances known so far (planned values during planning, new
//! objects during apply), each with its sensitivity marks beside it.

use fleetform_lang::config::Module;
use fleetform_lang::eval::{Marks, Reference, Scope};
use fleetform_shared::addr::{InstanceKey, Resource};
use fleetform_shared::state::ObjectState;
use fleetform_shared::value::{PathStep, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How a resource expands into instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expansion {
    Single,
    Count,
    ForEach,
    /// `count`/`for_each` is not known yet.
    Unknown,
}

#[derive(Clone, Debug)]
pub struct ResourceValues {
    pub expansion: Expansion,
    pub instances: BTreeMap<InstanceKey, Value>,
    /// The sensitive parts of each instance's value (none when absent).
    /// While an instance is being planned: those of its configuration.
    pub marks: BTreeMap<InstanceKey, Marks>,
}

impl ResourceValues {
    pub fn new(expansion: Expansion) -> ResourceValues {
        ResourceValues {
            expansion,
            instances: BTreeMap::new(),
            marks: BTreeMap::new(),
        }
    }

    /// An instance's value from a state object, with its recorded
    /// sensitive paths.
    pub fn set_object(&mut self, key: &InstanceKey, object: &ObjectState) {
        self.instances.insert(key.clone(), object.value.clone());
        self.marks.insert(
            key.clone(),
            Marks::from_paths(object.sensitive_paths.iter().cloned()),
        );
    }

    /// The marks of the value [`ResourceValues::aggregate`] returns.
    pub fn aggregate_marks(&self) -> Marks {
        let of = |k: &InstanceKey| self.marks.get(k).cloned().unwrap_or_default();
        match self.expansion {
            Expansion::Unknown => Marks::none(),
            Expansion::Single => of(&InstanceKey::None),
            Expansion::Count => self
                .instances
                .keys()
                .enumerate()
                .fold(Marks::none(), |m, (i, k)| {
                    m.with(of(k).nest(PathStep::Index(i as i64)))
                }),
            Expansion::ForEach => self
                .instances
                .keys()
                .filter_map(|k| match k {
                    InstanceKey::Str(s) => Some(of(k).nest(PathStep::Key(s.clone()))),
                    _ => None,
                })
                .fold(Marks::none(), Marks::with),
        }
    }

    /// The value a reference to the whole resource evaluates to.
    pub fn aggregate(&self) -> Value {
        match self.expansion {
            Expansion::Unknown => Value::Unknown,
            Expansion::Single => self
                .instances
                .get(&InstanceKey::None)
                .cloned()
                .unwrap_or(Value::Null),
            Expansion::Count => Value::List(self.instances.values().cloned().collect()),
            Expansion::ForEach => Value::Map(
                self.instances
                    .iter()
                    .filter_map(|(k, v)| match k {
                        InstanceKey::Str(s) => Some((s.clone(), v.clone())),
                        _ => None,
                    })
                    .collect(),
            ),
        }
    }
}

#[derive(Default)]
pub struct RunValues {
    pub variables: BTreeMap<String, Value>,
    /// Variables declared `sensitive = true`.
    pub sensitive_variables: BTreeSet<String>,
    pub locals: BTreeMap<String, Value>,
    /// The sensitive parts of local values (none when absent).
    pub local_marks: BTreeMap<String, Marks>,
    pub resources: HashMap<Resource, ResourceValues>,
}

impl RunValues {
    /// The values a run starts with: its input variables.
    pub fn new(module: &Module, variables: BTreeMap<String, Value>) -> RunValues {
        RunValues {
            variables,
            sensitive_variables: module
                .variables
                .values()
                .filter(|v| v.sensitive)
                .map(|v| v.name.clone())
                .collect(),
            ..RunValues::default()
        }
    }

    pub fn set_local(&mut self, name: String, value: Value, marks: Marks) {
        self.local_marks.insert(name.clone(), marks);
        self.locals.insert(name, value);
    }
}

/// A scope for one evaluation: the run's values plus the instance's own
/// `count.index` / `each`.
pub struct EvalScope<'a> {
    pub values: &'a RunValues,
    pub key: &'a InstanceKey,
    pub each_value: Option<&'a Value>,
    /// The sensitive parts of `each_value`.
    pub each_marks: Option<&'a Marks>,
    pub workspace: &'a str,
}

impl<'a> EvalScope<'a> {
    pub fn new(values: &'a RunValues, workspace: &'a str) -> EvalScope<'a> {
        EvalScope {
            values,
            key: &InstanceKey::None,
            each_value: None,
            each_marks: None,
            workspace,
        }
    }
}

impl Scope for EvalScope<'_> {
    fn variable(&self, name: &str) -> Option<Value> {
        self.values.variables.get(name).cloned()
    }

    fn local(&self, name: &str) -> Option<Value> {
        self.values.locals.get(name).cloned()
    }

    fn resource(&self, addr: &Resource) -> Option<Value> {
        self.values
            .resources
            .get(addr)
            .map(ResourceValues::aggregate)
    }

    fn count_index(&self) -> Option<Value> {
        match self.key {
            InstanceKey::Int(i) => Some(Value::int(*i)),
            _ => None,
        }
    }

    fn each(&self) -> Option<(Value, Value)> {
        match (self.key, self.each_value) {
            (InstanceKey::Str(k), Some(v)) => Some((Value::from(k.as_str()), v.clone())),
            _ => None,
        }
    }

    fn path(&self, name: &str) -> Option<Value> {
        matches!(name, "module" | "root" | "cwd").then(|| Value::from("."))
    }

    fn workspace(&self) -> Option<Value> {
        Some(Value::from(self.workspace))
    }

    fn marks(&self, reference: &Reference) -> Marks {
        let values = self.values;
        match reference {
            Reference::Variable(name) if values.sensitive_variables.contains(name) => {
                Marks::whole()
            }
            Reference::Local(name) => values.local_marks.get(name).cloned().unwrap_or_default(),
            Reference::Resource(r) => values
                .resources
                .get(r)
                .map(ResourceValues::aggregate_marks)
                .unwrap_or_default(),
            Reference::EachValue => self.each_marks.cloned().unwrap_or_default(),
            _ => Marks::none(),
        }
    }
}
