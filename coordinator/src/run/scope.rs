//! The evaluation scope of a run: variables, locals and the values of
//! resource instances known so far (planned values during planning, new
//! objects during apply).

use fleetform_shared::addr::{InstanceKey, Resource};
use fleetform_shared::eval::Scope;
use fleetform_shared::value::Value;
use std::collections::{BTreeMap, HashMap};

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
}

impl ResourceValues {
    pub fn new(expansion: Expansion) -> ResourceValues {
        ResourceValues {
            expansion,
            instances: BTreeMap::new(),
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
    pub locals: BTreeMap<String, Value>,
    pub resources: HashMap<Resource, ResourceValues>,
}

/// A scope for one evaluation: the run's values plus the instance's own
/// `count.index` / `each`.
pub struct EvalScope<'a> {
    pub values: &'a RunValues,
    pub key: &'a InstanceKey,
    pub each_value: Option<&'a Value>,
    pub workspace: &'a str,
}

impl<'a> EvalScope<'a> {
    pub fn new(values: &'a RunValues, workspace: &'a str) -> EvalScope<'a> {
        EvalScope {
            values,
            key: &InstanceKey::None,
            each_value: None,
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
}
