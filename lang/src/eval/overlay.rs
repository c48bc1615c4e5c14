//! [`Overlay`]: a scope that adds names to another scope — `self` (a
//! resource instance's own object, in provisioners and postconditions) or a
//! `dynamic` block's iterator — and forwards everything else. One wrapper,
//! so a method added to [`Scope`] is forwarded in one place.

use super::{EvalEnv, Marks, Reference, Scope};
use fleetform_shared::addr::{Resource, ResourceMode};
use fleetform_shared::value::Value;

/// The iterator of one expanded `dynamic` block element (`name.key`,
/// `name.value`).
#[derive(Clone, Debug)]
pub struct Iteration {
    pub name: String,
    pub key: Value,
    pub value: Value,
    /// The sensitive parts of `value`.
    pub marks: Marks,
}

/// `inner` plus `self` and/or a `dynamic` iterator.
pub struct Overlay<'a> {
    pub inner: &'a dyn Scope,
    /// `self`, with its sensitive parts.
    pub self_object: Option<(Value, Marks)>,
    pub iteration: Option<&'a Iteration>,
}

impl<'a> Overlay<'a> {
    pub fn with_self(inner: &'a dyn Scope, value: Value, marks: Marks) -> Overlay<'a> {
        Overlay {
            inner,
            self_object: Some((value, marks)),
            iteration: None,
        }
    }

    pub fn with_iteration(inner: &'a dyn Scope, iteration: &'a Iteration) -> Overlay<'a> {
        Overlay {
            inner,
            self_object: None,
            iteration: Some(iteration),
        }
    }

    /// The iterator, when `addr` names one of its attributes: the evaluator
    /// reads `rule.value` as a root name with one attribute, which is the
    /// shape of a managed resource reference.
    fn iterator_attr<'r>(&self, addr: &'r Resource) -> Option<(&Iteration, &'r str)> {
        let it = self.iteration?;
        (addr.mode == ResourceMode::Managed && addr.type_name == it.name)
            .then_some((it, addr.name.as_str()))
    }
}

impl Scope for Overlay<'_> {
    fn variable(&self, name: &str) -> Option<Value> {
        self.inner.variable(name)
    }
    fn is_ephemeral(&self, reference: &Reference) -> bool {
        self.inner.is_ephemeral(reference)
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
        match self.iterator_attr(addr) {
            Some((it, "key")) => Some(it.key.clone()),
            Some((it, "value")) => Some(it.value.clone()),
            _ => self.inner.resource(addr),
        }
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
        if let Reference::Resource(addr) = reference {
            match self.iterator_attr(addr) {
                Some((it, "value")) => return it.marks.clone(),
                Some((_, "key")) => return Marks::none(),
                _ => {}
            }
        }
        self.inner.marks(reference)
    }
    fn env(&self) -> &EvalEnv {
        self.inner.env()
    }
    fn provider_functions(&self) -> Option<&dyn super::ProviderFunctions> {
        self.inner.provider_functions()
    }
    fn self_value(&self) -> Option<Value> {
        match &self.self_object {
            Some((v, _)) => Some(v.clone()),
            None => self.inner.self_value(),
        }
    }
    fn self_marks(&self) -> Marks {
        match &self.self_object {
            Some((_, m)) => m.clone(),
            None => self.inner.self_marks(),
        }
    }
}
