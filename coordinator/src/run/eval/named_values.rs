//! Named values of module instances: local values, the input variables of
//! child modules (their call's arguments, evaluated in the calling
//! instance), the outputs of child modules, and module call expansions.
//! Each node of the configuration graph stands for all instances of its
//! module; evaluating it evaluates every instance.
//!
//! While planning they are evaluated once, in graph order. While applying,
//! the ones a resource depends on are evaluated again (from applied
//! objects) before its first instance is configured, and all of them before
//! the root outputs are recorded ([`Refresh`]).

use crate::run::ctx::RunCtx;
use crate::run::eval::expand::expand_call;
use crate::run::eval::scope::EvalScope;
use crate::run::values::CallExpansion;
use fleetform_lang::eval::{Marks, evaluate_marked};
use fleetform_lang::graph::config::{ConfigGraph, ConfigNode};
use fleetform_lang::inputs::check_validation;
use fleetform_shared::addr::{ConfigResource, Module};
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::graph::NodeId;
use fleetform_shared::value::Value;
use std::collections::{HashMap, HashSet};

/// Evaluates `node` for every instance of its module; problems are
/// returned (the values they concern are unknown). Resources, providers
/// and root variables and outputs are not named values: nothing happens.
pub(crate) fn evaluate_node(ctx: &mut RunCtx<'_>, node: &ConfigNode) -> Diagnostics {
    match node {
        ConfigNode::Local(m, name) => local(ctx, m, name),
        ConfigNode::Variable(m, name) if !m.is_root() => variable(ctx, m, name),
        ConfigNode::Output(m, name) if !m.is_root() => output(ctx, m, name),
        ConfigNode::ModuleCall(m) => expand(ctx, m),
        _ => Diagnostics::new(),
    }
}

fn dir_of<'c>(ctx: &RunCtx<'c>, m: &Module) -> &'c str {
    ctx.config.module(m).map(|n| n.dir.as_str()).unwrap_or(".")
}

fn local(ctx: &mut RunCtx<'_>, m: &Module, name: &str) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let Some(expr) = ctx
        .config
        .module(m)
        .and_then(|n| n.module.locals.get(name))
        .map(|l| &l.expr)
    else {
        return diags;
    };
    let dir = dir_of(ctx, m);
    for inst in ctx.values.instances_of(m) {
        let scope = EvalScope::in_module(&ctx.values, &inst, dir, ctx.workspace());
        let (v, marks) = evaluate_marked(expr, &scope).unwrap_or_else(|d| {
            diags.extend(d);
            (Value::unknown(), Marks::none())
        });
        ctx.values.set_local(&inst, name.to_string(), v, marks);
    }
    diags
}

/// A child module's input variable: its call's argument, evaluated in the
/// calling instance with the call's `count.index` / `each`, converted to
/// the variable's type; the default when the argument is absent (or null
/// for a variable that is not nullable).
fn variable(ctx: &mut RunCtx<'_>, m: &Module, name: &str) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let (Some((parent, _)), Some(call), Some(var)) = (
        m.parent(),
        ctx.config.call(m),
        ctx.config
            .module(m)
            .and_then(|n| n.module.variables.get(name)),
    ) else {
        return diags;
    };
    let parent_dir = dir_of(ctx, &parent);
    let arg = call.arguments.get(name);
    for inst in ctx.values.instances_of(m) {
        let Some((parent_inst, _, key)) = inst.parent() else {
            continue;
        };
        let each = ctx
            .values
            .modules
            .get(&inst)
            .and_then(|v| v.each_value.clone());
        let (value, mut marks) = match arg {
            None => (Value::null(), Marks::none()),
            Some(a) => {
                let scope = EvalScope {
                    key,
                    each_value: each.as_ref().map(|(v, _)| v),
                    each_marks: each.as_ref().map(|(_, m)| m),
                    ..EvalScope::in_module(&ctx.values, &parent_inst, parent_dir, ctx.workspace())
                };
                match evaluate_marked(&a.expr, &scope) {
                    Ok(r) => r,
                    Err(d) => {
                        diags.extend(d);
                        ctx.values.set_variable(
                            &inst,
                            name.to_string(),
                            Value::unknown(),
                            Marks::none(),
                        );
                        continue;
                    }
                }
            }
        };
        let value = match (&value, &var.default) {
            (Value::Null(_), Some(d)) if arg.is_none() || !var.nullable => d.clone(),
            (Value::Null(_), None) if !var.nullable => {
                let range = arg
                    .map(|a| a.expr.range.clone())
                    .unwrap_or(call.decl_range.clone());
                diags.push(
                    Diagnostic::error(
                        "Invalid value for input variable",
                        format!("The given value is not suitable for {m}.var.{name}: required variable may not be set to null."),
                    )
                    .at(range),
                );
                Value::unknown()
            }
            _ => value,
        };
        let value = match (&var.ty, value) {
            (Some(_), v) if !v.is_null() && !v.is_unknown() => match var.convert(v) {
                Ok(v) => v,
                Err(e) => {
                    let range = arg
                        .map(|a| a.expr.range.clone())
                        .unwrap_or(call.decl_range.clone());
                    diags.push(
                        Diagnostic::error(
                            "Invalid value for input variable",
                            format!(
                                "The given value is not suitable for {m}.var.{name} declared at {}:{},{}: {e}.",
                                var.decl_range.filename, var.decl_range.start.line, var.decl_range.start.column
                            ),
                        )
                        .at(range),
                    );
                    Value::unknown()
                }
            },
            (_, v) => v,
        };
        if var.sensitive {
            marks = marks.with(Marks::whole());
        }
        ctx.values
            .set_variable(&inst, name.to_string(), value, marks);
        // The validation rules, in the child instance where the value now is.
        let range = arg
            .map(|a| a.expr.range.clone())
            .unwrap_or_else(|| call.decl_range.clone());
        let dir = dir_of(ctx, m);
        let scope = EvalScope::in_module(&ctx.values, &inst, dir, ctx.workspace());
        for rule in &var.validations {
            check_validation(rule, &scope, &range, &mut diags);
        }
    }
    diags
}

fn output(ctx: &mut RunCtx<'_>, m: &Module, name: &str) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let Some(o) = ctx
        .config
        .module(m)
        .and_then(|n| n.module.outputs.get(name))
    else {
        return diags;
    };
    let dir = dir_of(ctx, m);
    for inst in ctx.values.instances_of(m) {
        let scope = EvalScope::in_module(&ctx.values, &inst, dir, ctx.workspace());
        let (status, d) = crate::run::eval::conditions::output_rules(o, &scope);
        diags.extend(d);
        // A child module's output need not declare `sensitive = true` to
        // carry a sensitive value (Terraform asks it only of root outputs,
        // which are shown): its marks travel with it to the caller.
        let (v, marks) = match evaluate_marked(&o.expr, &scope) {
            _ if status == fleetform_lang::rules::conditions::RuleStatus::Failed => {
                (Value::unknown(), Marks::none())
            }
            Ok((v, marks)) if o.sensitive => (v, marks.with(Marks::whole())),
            Ok(r) => r,
            Err(d) => {
                diags.extend(d);
                (Value::unknown(), Marks::none())
            }
        };
        ctx.values.set_output(&inst, name.to_string(), v, marks);
    }
    diags
}

/// A module call's `count` / `for_each` in every instance of the calling
/// module: the instances of the child module.
fn expand(ctx: &mut RunCtx<'_>, child: &Module) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let (Some((parent, call_name)), Some(call)) = (child.parent(), ctx.config.call(child)) else {
        return diags;
    };
    let parent_dir = dir_of(ctx, &parent);
    let mut all = Vec::new();
    for pinst in ctx.values.instances_of(&parent) {
        let scope = EvalScope::in_module(&ctx.values, &pinst, parent_dir, ctx.workspace());
        let instances = match expand_call(call, &scope) {
            Ok(i) => i,
            Err(d) => {
                diags.extend(d);
                continue;
            }
        };
        let mut keys = Vec::with_capacity(instances.keys.len());
        for (key, each) in instances.keys {
            let inst = pinst.child(call_name, key.clone());
            let marks = instances.each_marks.get(&key).cloned().unwrap_or_default();
            ctx.values.module_mut(&inst).each_value = each.map(|v| (v, marks));
            all.push(inst);
            keys.push(key);
        }
        ctx.values.module_mut(&pinst).calls.insert(
            call_name.to_string(),
            CallExpansion {
                expansion: instances.expansion,
                keys,
            },
        );
    }
    all.sort();
    ctx.values.instances.insert(child.clone(), all);
    diags
}

/// Apply-time re-evaluation of named values (see the module comment).
pub(crate) struct Refresh<'g> {
    graph: &'g ConfigGraph,
    position: HashMap<NodeId, usize>,
    /// Resources whose named values are current: everything they depend on
    /// is applied before their first instance starts, so once is enough.
    refreshed: HashSet<ConfigResource>,
}

impl<'g> Refresh<'g> {
    pub fn new(graph: &'g ConfigGraph) -> Refresh<'g> {
        let order = graph.dag.topological_order().unwrap_or_default();
        let position = order.into_iter().enumerate().map(|(i, n)| (n, i)).collect();
        Refresh {
            graph,
            position,
            refreshed: HashSet::new(),
        }
    }

    /// Re-evaluates the named values `r` depends on, once per resource.
    pub fn refresh_for(&mut self, ctx: &mut RunCtx<'_>, r: &ConfigResource) {
        if !self.refreshed.insert(r.clone()) {
            return;
        }
        let Some(id) = self.graph.id(&ConfigNode::Resource(r.clone())) else {
            return;
        };
        // Not past another resource: a named value that resource depends
        // on is read from its applied object, not from the named values
        // behind it (those were refreshed before it was applied, or it
        // has no change). Walking every ancestor made a chain of N
        // resources visit N^2/2 nodes.
        let nodes = self
            .graph
            .dag
            .ancestors_through([id], |n| !matches!(n, ConfigNode::Resource(_)));
        self.evaluate(ctx, nodes);
    }

    /// Re-evaluates every named value.
    pub fn refresh_all(&mut self, ctx: &mut RunCtx<'_>) {
        let nodes = self.graph.dag.node_ids().collect();
        self.evaluate(ctx, nodes);
    }

    fn evaluate(&self, ctx: &mut RunCtx<'_>, nodes: HashSet<NodeId>) {
        let mut named: Vec<(usize, NodeId)> = nodes
            .into_iter()
            .filter(|n| {
                matches!(
                    self.graph.dag.node(*n),
                    ConfigNode::Local(..) | ConfigNode::Variable(..) | ConfigNode::Output(..)
                )
            })
            .map(|n| (self.position.get(&n).copied().unwrap_or(usize::MAX), n))
            .collect();
        named.sort();
        for (_, n) in named {
            // An error here was already reported while planning; the value
            // stays unknown and the configuration using it is refused.
            let _ = evaluate_node(ctx, self.graph.dag.node(n));
        }
    }
}
