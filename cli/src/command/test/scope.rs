//! What a test file's expressions see: the run's variables, resources and
//! data sources (planned values after `command = plan`, the state after
//! `apply`), the root module's outputs, its locals (evaluated on demand)
//! and the outputs of the file's earlier runs.
//!
//! The evaluator reads an unreserved root name with an attribute as a
//! resource, so `output.NAME` and `run.NAME` reach this scope as resources
//! of type `output` and `run`: the scope answers for those two names
//! (no provider has resource types by them).

use fleetform_lang::config::Module;
use fleetform_lang::eval::{EvalEnv, Marks, ProviderFunctions, Reference, Scope, evaluate};
use fleetform_lang::provider_functions::{ModuleFunctions, PluginsUnreachable};
use fleetform_shared::addr::{AbsResourceInstance, InstanceKey, Resource, ResourceMode};
use fleetform_shared::plan::{Action, Plan};
use fleetform_shared::state::State;
use fleetform_shared::value::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Root names a test expression uses beyond the module's own.
pub const RUN_ROOT: &str = "run";
pub const OUTPUT_ROOT: &str = "output";

pub struct TestScope<'a> {
    pub module: Option<&'a Module>,
    pub variables: BTreeMap<String, Value>,
    pub sensitive_variables: BTreeSet<String>,
    pub resources: BTreeMap<Resource, Value>,
    pub outputs: BTreeMap<String, Value>,
    /// Outputs declared or recorded sensitive: their values are not shown.
    pub sensitive_outputs: BTreeSet<String>,
    /// Earlier runs of the file: an object of each one's outputs.
    pub runs: &'a BTreeMap<String, Value>,
    pub env: EvalEnv,
    locals: RefCell<BTreeMap<String, Option<Value>>>,
    functions: Option<ModuleFunctions>,
}

impl<'a> TestScope<'a> {
    /// A scope of variables and earlier runs only: for a file's and a run's
    /// `variables`, evaluated before the run.
    pub fn inputs(variables: BTreeMap<String, Value>, runs: &'a BTreeMap<String, Value>) -> Self {
        TestScope {
            module: None,
            variables,
            sensitive_variables: BTreeSet::new(),
            resources: BTreeMap::new(),
            outputs: BTreeMap::new(),
            sensitive_outputs: BTreeSet::new(),
            runs,
            env: EvalEnv::default(),
            locals: RefCell::new(BTreeMap::new()),
            functions: None,
        }
    }

    /// A scope of the run's module after it ran.
    pub fn after_run(
        module: &'a Module,
        variables: BTreeMap<String, Value>,
        runs: &'a BTreeMap<String, Value>,
        env: EvalEnv,
    ) -> Self {
        let functions = ModuleFunctions::new(
            module,
            Arc::new(PluginsUnreachable(
                "fleetform test evaluates assertions without provider plugins",
            )),
        );
        TestScope {
            module: Some(module),
            sensitive_variables: module
                .variables
                .values()
                .filter(|v| v.sensitive)
                .map(|v| v.name.clone())
                .collect(),
            variables,
            resources: BTreeMap::new(),
            outputs: BTreeMap::new(),
            sensitive_outputs: BTreeSet::new(),
            runs,
            env,
            locals: RefCell::new(BTreeMap::new()),
            functions: Some(functions),
        }
    }

    /// Resources and outputs as an applied state records them.
    pub fn with_state(mut self, state: &State) -> Self {
        let instances = state
            .resources
            .iter()
            .filter_map(|(addr, inst)| Some((addr, inst.current.as_ref()?.value.clone())));
        self.resources = group(instances);
        self.outputs = state
            .outputs
            .iter()
            .map(|(k, o)| (k.clone(), o.value.clone()))
            .collect();
        self.sensitive_outputs = state
            .outputs
            .iter()
            .filter(|(_, o)| o.sensitive)
            .map(|(k, _)| k.clone())
            .collect();
        self
    }

    /// Resources and outputs as a plan would leave them: planned values
    /// (unknown where the plan does not know them yet), data sources as
    /// read while planning.
    pub fn with_plan(mut self, plan: &Plan) -> Self {
        let planned = plan
            .changes
            .iter()
            .filter(|c| c.deposed.is_none() && c.action != Action::Delete)
            .map(|c| (&c.addr, c.after.clone()));
        let data = plan.data_values.iter().map(|(a, v)| (a, v.clone()));
        self.resources = group(planned.chain(data));
        self.outputs = plan
            .outputs
            .iter()
            .map(|(k, o)| (k.clone(), o.after.clone()))
            .collect();
        self.sensitive_outputs = plan
            .outputs
            .iter()
            .filter(|(_, o)| o.sensitive)
            .map(|(k, _)| k.clone())
            .collect();
        self
    }
}

/// Root-module instances gathered per resource: the object alone, a list
/// by index (count) or a map by key (for_each).
fn group<'x>(
    instances: impl Iterator<Item = (&'x AbsResourceInstance, Value)>,
) -> BTreeMap<Resource, Value> {
    let mut by_resource: BTreeMap<Resource, Vec<(InstanceKey, Value)>> = BTreeMap::new();
    for (addr, value) in instances {
        if !addr.module.0.is_empty() {
            continue;
        }
        by_resource
            .entry(addr.resource.resource.clone())
            .or_default()
            .push((addr.resource.key.clone(), value));
    }
    by_resource
        .into_iter()
        .map(|(r, mut items)| {
            let value = match items.first().map(|(k, _)| k) {
                Some(InstanceKey::Int(_)) => {
                    items.sort_by_key(|(k, _)| match k {
                        InstanceKey::Int(i) => *i,
                        _ => 0,
                    });
                    Value::List(items.into_iter().map(|(_, v)| v).collect())
                }
                Some(InstanceKey::Str(_)) => Value::Map(
                    items
                        .into_iter()
                        .filter_map(|(k, v)| match k {
                            InstanceKey::Str(s) => Some((s, v)),
                            _ => None,
                        })
                        .collect(),
                ),
                _ => items.pop().map(|(_, v)| v).unwrap_or(Value::null()),
            };
            (r, value)
        })
        .collect()
}

impl Scope for TestScope<'_> {
    fn variable(&self, name: &str) -> Option<Value> {
        self.variables.get(name).cloned()
    }

    fn variable_ref(&self, name: &str) -> Option<&Value> {
        self.variables.get(name)
    }

    fn local(&self, name: &str) -> Option<Value> {
        let local = self.module?.locals.get(name)?;
        if let Some(known) = self.locals.borrow().get(name) {
            return Some(known.clone().unwrap_or(Value::unknown()));
        }
        self.locals.borrow_mut().insert(name.to_string(), None);
        let v = evaluate(&local.expr, self).unwrap_or(Value::unknown());
        self.locals
            .borrow_mut()
            .insert(name.to_string(), Some(v.clone()));
        Some(v)
    }

    fn resource(&self, addr: &Resource) -> Option<Value> {
        if addr.mode == ResourceMode::Managed {
            match addr.type_name.as_str() {
                RUN_ROOT => return self.runs.get(addr.name.as_str()).cloned(),
                OUTPUT_ROOT => return self.outputs.get(addr.name.as_str()).cloned(),
                _ => {}
            }
        }
        if let Some(v) = self.resources.get(addr) {
            return Some(v.clone());
        }
        // Declared but not planned or applied (count = 0, a target left
        // it out): as Terraform, an empty collection or unknown.
        let block = self.module?.resources.get(addr)?;
        Some(match (&block.count, &block.for_each) {
            (Some(_), _) => Value::List(Default::default()),
            (_, Some(_)) => Value::Map(Default::default()),
            _ => Value::unknown(),
        })
    }

    fn module_call(&self, name: &str) -> Option<Value> {
        self.module?
            .module_calls
            .contains_key(name)
            .then_some(Value::unknown())
    }

    fn count_index(&self) -> Option<Value> {
        None
    }

    fn each(&self) -> Option<(Value, Value)> {
        None
    }

    fn path(&self, name: &str) -> Option<Value> {
        match name {
            "module" | "root" => Some(Value::string(".")),
            "cwd" => Some(Value::string(self.env.cwd.clone())),
            _ => None,
        }
    }

    fn workspace(&self) -> Option<Value> {
        Some(Value::string("default"))
    }

    fn marks(&self, reference: &Reference) -> Marks {
        match reference {
            Reference::Variable(n) if self.sensitive_variables.contains(n) => Marks::whole(),
            Reference::Resource(r)
                if r.mode == ResourceMode::Managed
                    && r.type_name == OUTPUT_ROOT
                    && self.sensitive_outputs.contains(r.name.as_str()) =>
            {
                Marks::whole()
            }
            _ => Marks::none(),
        }
    }

    fn env(&self) -> &EvalEnv {
        &self.env
    }

    fn provider_functions(&self) -> Option<&dyn ProviderFunctions> {
        self.functions.as_ref().map(|f| f as &dyn ProviderFunctions)
    }
}
