//! [`WithSelf`]: a scope that adds `self` (a resource instance's own
//! object) to another scope, for provisioner blocks and postconditions.

use super::{EvalEnv, Marks, Reference, Scope};
use fleetform_shared::addr::Resource;
use fleetform_shared::value::Value;

/// `inner` plus `self`: everything else is looked up in `inner`.
pub struct WithSelf<'a> {
    pub inner: &'a dyn Scope,
    pub value: Value,
    /// The sensitive parts of `value`.
    pub marks: Marks,
}

impl Scope for WithSelf<'_> {
    fn variable(&self, name: &str) -> Option<Value> {
        self.inner.variable(name)
    }
    fn local(&self, name: &str) -> Option<Value> {
        self.inner.local(name)
    }
    fn local_ref(&self, name: &str) -> Option<&Value> {
        self.inner.local_ref(name)
    }
    fn variable_ref(&self, name: &str) -> Option<&Value> {
        self.inner.variable_ref(name)
    }
    fn resource(&self, addr: &Resource) -> Option<Value> {
        self.inner.resource(addr)
    }
    fn module_call(&self, name: &str) -> Option<Value> {
        self.inner.module_call(name)
    }
    fn count_index(&self) -> Option<Value> {
        self.inner.count_index()
    }
    fn each(&self) -> Option<(Value, Value)> {
        self.inner.each()
    }
    fn path(&self, name: &str) -> Option<Value> {
        self.inner.path(name)
    }
    fn workspace(&self) -> Option<Value> {
        self.inner.workspace()
    }
    fn marks(&self, reference: &Reference) -> Marks {
        self.inner.marks(reference)
    }
    fn env(&self) -> &EvalEnv {
        self.inner.env()
    }
    fn self_value(&self) -> Option<Value> {
        Some(self.value.clone())
    }
    fn self_marks(&self) -> Marks {
        self.marks.clone()
    }
}
