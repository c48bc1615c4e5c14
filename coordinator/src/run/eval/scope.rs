//! The evaluation scope of a run: what an expression in one module
//! instance sees (its values, from [`crate::run::values::RunValues`], and
//! the instance's own `count.index` / `each`), as the language crate's
//! [`Scope`].

use crate::run::values::{ModuleValues, ResourceValues, RunValues};
use fleetform_lang::eval::{EvalEnv, Marks, Reference, Scope};
use fleetform_shared::addr::{InstanceKey, ModuleInstance, Resource};
use fleetform_shared::value::Value;

/// A scope for one evaluation: a module instance's values plus the
/// instance's own `count.index` / `each`.
pub struct EvalScope<'a> {
    pub values: &'a RunValues,
    pub module: &'a ModuleInstance,
    /// `path.module`: the module's directory relative to the root.
    pub module_dir: &'a str,
    pub key: &'a InstanceKey,
    pub each_value: Option<&'a Value>,
    /// The sensitive parts of `each_value`.
    pub each_marks: Option<&'a Marks>,
    pub workspace: &'a str,
}

static ROOT: std::sync::LazyLock<ModuleInstance> = std::sync::LazyLock::new(ModuleInstance::root);

impl<'a> EvalScope<'a> {
    /// The root module's scope.
    pub fn new(values: &'a RunValues, workspace: &'a str) -> EvalScope<'a> {
        EvalScope::in_module(values, &ROOT, ".", workspace)
    }

    pub fn in_module(
        values: &'a RunValues,
        module: &'a ModuleInstance,
        module_dir: &'a str,
        workspace: &'a str,
    ) -> EvalScope<'a> {
        EvalScope {
            values,
            module,
            module_dir,
            key: &InstanceKey::None,
            each_value: None,
            each_marks: None,
            workspace,
        }
    }

    fn here(&self) -> Option<&'a ModuleValues> {
        self.values.modules.get(self.module)
    }
}

impl Scope for EvalScope<'_> {
    fn variable(&self, name: &str) -> Option<Value> {
        self.here()?.variables.get(name).cloned()
    }

    fn local(&self, name: &str) -> Option<Value> {
        self.here()?.locals.get(name).cloned()
    }

    fn local_ref(&self, name: &str) -> Option<&Value> {
        self.here()?.locals.get(name)
    }

    fn variable_ref(&self, name: &str) -> Option<&Value> {
        self.here()?.variables.get(name)
    }

    fn resource(&self, addr: &Resource) -> Option<Value> {
        self.here()?
            .resources
            .get(addr)
            .map(ResourceValues::aggregate)
    }

    fn module_call(&self, name: &str) -> Option<Value> {
        Some(self.values.call_value(self.module, name))
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
        match name {
            "module" => Some(Value::from(self.module_dir)),
            "root" => Some(Value::from(".")),
            "cwd" if !self.values.env.cwd.is_empty() => {
                Some(Value::from(self.values.env.cwd.as_str()))
            }
            "cwd" => Some(Value::from(".")),
            _ => None,
        }
    }

    fn env(&self) -> &EvalEnv {
        &self.values.env
    }

    fn provider_functions(&self) -> Option<&dyn fleetform_lang::eval::ProviderFunctions> {
        self.values
            .functions
            .of(&self.module.module())
            .map(|f| f as &dyn fleetform_lang::eval::ProviderFunctions)
    }

    fn workspace(&self) -> Option<Value> {
        // `terraform.workspace` is the name within the project.
        Some(Value::from(crate::store::workspace_of(self.workspace)))
    }

    fn is_ephemeral(&self, reference: &Reference) -> bool {
        self.values
            .ephemeral
            .get(&self.module.module())
            .is_some_and(|refs| refs.contains(reference))
    }

    fn marks(&self, reference: &Reference) -> Marks {
        let Some(here) = self.here() else {
            return Marks::none();
        };
        match reference {
            Reference::Variable(name) => here.variable_marks.get(name).cloned().unwrap_or_default(),
            Reference::Local(name) => here.local_marks.get(name).cloned().unwrap_or_default(),
            Reference::Resource(r) => here
                .resources
                .get(r)
                .map(ResourceValues::aggregate_marks)
                .unwrap_or_default(),
            Reference::ModuleCall(c) => self.values.call_marks(self.module, c),
            Reference::EachValue => self.each_marks.cloned().unwrap_or_default(),
            _ => Marks::none(),
        }
    }
}
