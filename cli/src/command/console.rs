//! `console`: evaluates expressions against the configuration and the
//! state, one per line, as `terraform console` does. Variables take their
//! values as a plan would (-var, variables files, TF_VAR_, defaults);
//! resources are what the state records (a resource the state does not
//! have yet is `(known after apply)`); locals are evaluated on demand from
//! those; functions see the configuration's files. `module.NAME` is its
//! outputs, evaluated in each instance of the call as the root is: the
//! call's arguments (with that instance's `count.index` or `each`) give
//! the child's variables, the state its resources. Reads standard input
//! when it is not a terminal, so `echo 'var.x' | fleetform console` works.
//!
//! Piped input is read as Terraform 1.11 reads it: every line is
//! evaluated, but only the last line's result is printed (an empty line's
//! is empty); the first error is shown on standard error and ends the
//! console with exit code 1, the lines after it not evaluated; a line
//! `exit` ends it with exit code 0, printing nothing; `help` is the help
//! text.

use crate::client::Client;
use crate::present::run_text::hcl_value;
use fleetform_lang::config::{Module, ModuleNode};
use fleetform_lang::eval::{
    EvalEnv, Expr, ExprKind, MapFiles, Marks, ProviderFunctions, Reference, Scope, evaluate_marked,
};
use fleetform_lang::provider_functions::{ModuleFunctions, PluginsUnreachable};
use fleetform_shared::addr::{InstanceKey, ModuleInstance, Resource};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::state::State;
use fleetform_shared::value::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, IsTerminal, Write};

/// What every module instance's scope shares.
struct Console<'a> {
    state: Option<&'a State>,
    /// The schema shapes of the state's resource types (from the
    /// coordinator's schema cache), which type their objects.
    shapes: fleetform_shared::plan::shape::Shapes,
    workspace: String,
    env: EvalEnv,
}

/// The scope of one module instance (the root's, or a child's while
/// `module.NAME` is evaluated).
struct ConsoleScope<'a> {
    console: &'a Console<'a>,
    node: &'a ModuleNode,
    module: &'a Module,
    instance: ModuleInstance,
    variables: BTreeMap<String, Value>,
    sensitive_variables: BTreeSet<String>,
    /// Locals evaluated so far (None while one is being evaluated: a
    /// cycle reads as unknown).
    locals: RefCell<BTreeMap<String, Option<Value>>>,
    /// Module calls evaluated so far: their outputs.
    calls: RefCell<BTreeMap<String, Value>>,
    /// `provider::…` functions: the built-in `terraform` provider's; the
    /// console starts no plugin, so a call of another provider's fails
    /// saying so.
    functions: ModuleFunctions,
}

impl<'a> ConsoleScope<'a> {
    fn new(
        console: &'a Console<'a>,
        node: &'a ModuleNode,
        instance: ModuleInstance,
        variables: BTreeMap<String, Value>,
    ) -> ConsoleScope<'a> {
        let module = &node.module;
        ConsoleScope {
            console,
            node,
            module,
            instance,
            variables,
            sensitive_variables: module
                .variables
                .values()
                .filter(|v| v.sensitive)
                .map(|v| v.name.clone())
                .collect(),
            locals: RefCell::new(BTreeMap::new()),
            calls: RefCell::new(BTreeMap::new()),
            functions: ModuleFunctions::new(
                module,
                std::sync::Arc::new(PluginsUnreachable(
                    "fleetform console starts no provider plugins; use them in a plan or apply",
                )),
            ),
        }
    }

    /// `module.NAME`: the outputs of each instance of the call, as an
    /// object (a list with `count`, a map with `for_each`); unknown while
    /// its expansion or the call is not known.
    fn call_value(&self, name: &str) -> Value {
        let (Some(call), Some(child)) = (
            self.module.module_calls.get(name),
            self.node.children.get(name),
        ) else {
            return Value::unknown();
        };
        let eval = |e: &Expr| fleetform_lang::eval::evaluate(e, self).ok();
        // The instances: (key, count.index, each).
        let keys: Vec<CallInstance> = match (&call.count, &call.for_each) {
            (Some(c), _) => match eval(c).and_then(|v| match v {
                Value::Number(n) => n.as_i64(),
                _ => None,
            }) {
                Some(n) => (0..n.max(0))
                    .map(|i| (InstanceKey::Int(i), Some(Value::from(i)), None))
                    .collect(),
                None => return Value::unknown(),
            },
            (_, Some(f)) => match eval(f) {
                Some(Value::Map(m)) => m
                    .iter()
                    .map(|(k, v)| {
                        (
                            InstanceKey::Str(k.to_string()),
                            None,
                            Some((Value::string(k.clone()), v.clone())),
                        )
                    })
                    .collect(),
                // A set of strings (sets are lists here).
                Some(Value::List(items)) => items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .map(|k| {
                        let kv = Value::string(k.clone());
                        (InstanceKey::Str(k), None, Some((kv.clone(), kv)))
                    })
                    .collect(),
                _ => return Value::unknown(),
            },
            _ => vec![(InstanceKey::None, None, None)],
        };
        let mut outputs = Vec::new();
        for (key, index, each) in keys {
            let keyed = Keyed {
                inner: self,
                index,
                each,
            };
            let variables = child
                .module
                .variables
                .values()
                .map(|v| {
                    let given = call.arguments.get(&v.name).map(|a| {
                        fleetform_lang::eval::evaluate(&a.expr, &keyed).unwrap_or(Value::unknown())
                    });
                    let value = match given {
                        Some(g) => v.convert(g.clone()).unwrap_or(g),
                        None => v.default.clone().unwrap_or(Value::null()),
                    };
                    (v.name.clone(), value)
                })
                .collect();
            let scope = ConsoleScope::new(
                self.console,
                child,
                self.instance.child(name, key.clone()),
                variables,
            );
            let values: fleetform_shared::value::ValueMap = child
                .module
                .outputs
                .values()
                .map(|o| {
                    let v =
                        fleetform_lang::eval::evaluate(&o.expr, &scope).unwrap_or(Value::unknown());
                    (o.name.clone(), v)
                })
                .collect();
            outputs.push((key, Value::Map(values)));
        }
        match outputs.first().map(|(k, _)| k) {
            Some(InstanceKey::None) => outputs.swap_remove(0).1,
            Some(InstanceKey::Str(_)) => Value::Map(
                outputs
                    .into_iter()
                    .filter_map(|(k, v)| match k {
                        InstanceKey::Str(s) => Some((s, v)),
                        _ => None,
                    })
                    .collect(),
            ),
            _ if call.for_each.is_some() => Value::Map(Default::default()),
            _ => Value::List(outputs.into_iter().map(|(_, v)| v).collect()),
        }
    }
}

/// One instance of a module call: its key, its `count.index`, its `each`.
type CallInstance = (InstanceKey, Option<Value>, Option<(Value, Value)>);

/// A scope with a module call instance's `count.index` or `each`, for its
/// arguments; everything else is the calling module's.
struct Keyed<'s> {
    inner: &'s dyn Scope,
    index: Option<Value>,
    each: Option<(Value, Value)>,
}

impl Scope for Keyed<'_> {
    fn variable(&self, name: &str) -> Option<Value> {
        self.inner.variable(name)
    }
    fn local(&self, name: &str) -> Option<Value> {
        self.inner.local(name)
    }
    fn resource(&self, addr: &Resource) -> Option<Value> {
        self.inner.resource(addr)
    }
    fn module_call(&self, name: &str) -> Option<Value> {
        self.inner.module_call(name)
    }
    fn count_index(&self) -> Option<Value> {
        self.index.clone()
    }
    fn each(&self) -> Option<(Value, Value)> {
        self.each.clone()
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
    fn provider_functions(&self) -> Option<&dyn ProviderFunctions> {
        self.inner.provider_functions()
    }
}

impl ConsoleScope<'_> {
    /// A resource's value in this module instance from the state: the
    /// object, a list by index (count) or a map by key (for_each).
    fn resource_value(&self, addr: &Resource) -> Value {
        let Some(state) = self.console.state else {
            return Value::unknown();
        };
        // Typed by the schema, as a plan's references see them (`type()`
        // of an attribute that is null is its attribute's type).
        let mut object_type: Option<Option<std::sync::Arc<fleetform_shared::types::Type>>> = None;
        let instances: Vec<(&InstanceKey, Value)> = state
            .resources
            .iter()
            .filter(|(a, _)| a.module == self.instance && a.resource.resource == *addr)
            .filter_map(|(a, i)| {
                let value = i.current.as_ref()?.value.clone();
                let ty = object_type.get_or_insert_with(|| {
                    self.console
                        .shapes
                        .get(&i.provider, addr.mode, &addr.type_name)
                        .map(|s| std::sync::Arc::new(s.implied_type()))
                });
                let value = match ty {
                    Some(ty) => value.typed_as_object(ty),
                    None => value,
                };
                Some((&a.resource.key, value))
            })
            .collect();
        if instances.is_empty() {
            return Value::unknown();
        }
        match instances[0].0 {
            InstanceKey::None => instances[0].1.clone(),
            InstanceKey::Int(_) => {
                let mut by_index: Vec<(i64, Value)> = instances
                    .iter()
                    .filter_map(|(k, v)| match k {
                        InstanceKey::Int(i) => Some((*i, v.clone())),
                        _ => None,
                    })
                    .collect();
                by_index.sort_by_key(|(i, _)| *i);
                Value::List(by_index.into_iter().map(|(_, v)| v).collect())
            }
            InstanceKey::Str(_) => Value::Map(
                instances
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

impl Scope for ConsoleScope<'_> {
    fn variable(&self, name: &str) -> Option<Value> {
        self.variables.get(name).cloned()
    }
    fn local(&self, name: &str) -> Option<Value> {
        let local = self.module.locals.get(name)?;
        if let Some(known) = self.locals.borrow().get(name) {
            return Some(known.clone().unwrap_or(Value::unknown()));
        }
        self.locals.borrow_mut().insert(name.to_string(), None);
        let v = fleetform_lang::eval::evaluate(&local.expr, self).unwrap_or(Value::unknown());
        self.locals
            .borrow_mut()
            .insert(name.to_string(), Some(v.clone()));
        Some(v)
    }
    fn resource(&self, addr: &Resource) -> Option<Value> {
        self.module
            .resources
            .contains_key(addr)
            .then(|| self.resource_value(addr))
    }
    fn module_call(&self, name: &str) -> Option<Value> {
        if !self.module.module_calls.contains_key(name) {
            return None;
        }
        if let Some(v) = self.calls.borrow().get(name) {
            return Some(v.clone());
        }
        let v = self.call_value(name);
        self.calls.borrow_mut().insert(name.to_string(), v.clone());
        Some(v)
    }
    fn count_index(&self) -> Option<Value> {
        None
    }
    fn each(&self) -> Option<(Value, Value)> {
        None
    }
    fn path(&self, name: &str) -> Option<Value> {
        match name {
            "module" => Some(Value::string(self.node.dir.clone())),
            "root" => Some(Value::string(".")),
            "cwd" => Some(Value::string(self.console.env.cwd.clone())),
            _ => None,
        }
    }
    fn workspace(&self) -> Option<Value> {
        Some(Value::string(self.console.workspace.clone()))
    }
    fn marks(&self, reference: &Reference) -> Marks {
        match reference {
            Reference::Variable(n) if self.sensitive_variables.contains(n) => Marks::whole(),
            _ => Marks::none(),
        }
    }
    fn env(&self) -> &EvalEnv {
        &self.console.env
    }
    fn provider_functions(&self) -> Option<&dyn ProviderFunctions> {
        Some(&self.functions)
    }
}

/// How the console shows a value.
fn show(value: &Value, marks: &Marks) -> String {
    if marks.paths().any(|p| p.is_empty()) {
        return "(sensitive value)".to_string();
    }
    if *value == Value::unknown() {
        return "(known after apply)".to_string();
    }
    // Terraform shows a string of several lines as a heredoc, as it is.
    if let Value::String(s) = value
        && s.contains('\n')
    {
        return format!("<<EOT\n{s}\nEOT");
    }
    hcl_value(value, 0)
}

pub async fn run(client: &mut Client, ws: &str, vars: &crate::args::VarArgs) -> anyhow::Result<u8> {
    let dir = std::path::Path::new(".");
    let files = crate::bundle::pack(dir)?;
    let (config, diags) = fleetform_lang::config::load_config(&files);
    for d in diags.iter() {
        eprint!("{}", crate::present::run_text::diagnostic(d, &files));
    }
    let Some(config) = config.filter(|_| !diags.has_errors()) else {
        return Ok(1);
    };
    let module = &config.root.module;
    let inputs = match crate::vars::collect(dir, vars) {
        Ok(i) => i,
        Err(d) => return Ok(crate::present::report::report(false, &d)),
    };
    let sources = inputs.sources();
    let variables = match fleetform_lang::inputs::input_values(module, &sources) {
        Ok(v) => v.values,
        Err(d) => {
            for d in d.iter() {
                eprint!("{}", crate::present::run_text::diagnostic(d, &files));
            }
            return Ok(1);
        }
    };
    let (state, shapes) = crate::client::state_and_shapes(client, ws).await?;
    let data = crate::bundle::pack_data(dir, &files)?;
    let env = EvalEnv {
        files: std::sync::Arc::new(MapFiles::new(
            files
                .iter()
                .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
                .chain(data.into_iter().map(|(k, b)| (k, b.0))),
        )),
        apply: true,
        plan_timestamp: None,
        cwd: std::env::current_dir()?.display().to_string(),
    };
    let console = Console {
        state: state.as_ref(),
        shapes,
        workspace: fleetform_coordinator::store::workspace_of(ws).to_string(),
        env,
    };
    let scope = ConsoleScope::new(&console, &config.root, ModuleInstance::root(), variables);
    if !std::io::stdin().is_terminal() {
        return piped(&scope);
    }
    let stdin = std::io::stdin();
    loop {
        print!("> ");
        std::io::stdout().flush()?;
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            break;
        }
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if text == "exit" || text == "quit" {
            break;
        }
        match eval_line(text, &scope) {
            Ok(out) => println!("{out}"),
            Err(d) => {
                let sources = BTreeMap::from([("<console-input>".to_string(), text.to_string())]);
                for d in d {
                    eprint!("{}", crate::present::run_text::diagnostic(&d, &sources));
                }
            }
        }
    }
    Ok(0)
}

const HELP: &str = "The Terraform console allows you to experiment with Terraform interpolations.
You may access resources in the state (if you have one) just as you would
from a configuration. For example: \"aws_instance.foo.id\" would evaluate
to the ID of \"aws_instance.foo\" if it exists in your state.

Type in the interpolation to test and hit <enter> to see the result.

To exit the console, type \"exit\" and hit <enter>, or use Control-C or
Control-D.";

/// What one piped line does.
enum Line {
    Result(String),
    Exit,
}

fn handle(text: &str, scope: &ConsoleScope<'_>) -> Result<Line, Vec<Diagnostic>> {
    Ok(match text {
        "" => Line::Result(String::new()),
        "exit" => Line::Exit,
        "help" => Line::Result(HELP.to_string()),
        _ => Line::Result(eval_line(text, scope)?),
    })
}

/// Standard input that is not a terminal: the last result only, stopping
/// at the first error (see the module comment).
fn piped(scope: &ConsoleScope<'_>) -> anyhow::Result<u8> {
    let mut last = String::new();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let text = line.trim();
        match handle(text, scope) {
            Ok(Line::Result(out)) => last = out,
            Ok(Line::Exit) => return Ok(0),
            Err(d) => {
                let sources = BTreeMap::from([("<console-input>".to_string(), text.to_string())]);
                for d in d {
                    eprint!("{}", crate::present::run_text::diagnostic(&d, &sources));
                }
                return Ok(1);
            }
        }
    }
    println!("{last}");
    Ok(0)
}

fn eval_line(text: &str, scope: &ConsoleScope<'_>) -> Result<String, Vec<Diagnostic>> {
    let expr: Expr = fleetform_lang::eval::parse_expression("<console-input>", text)
        .map_err(|d| d.iter().cloned().collect::<Vec<_>>())?;
    // `type(x)`, as in Terraform's console: only the whole line, never
    // inside an expression.
    if let ExprKind::Call { name, args, .. } = &expr.kind
        && name == "type"
    {
        let [arg] = args.as_slice() else {
            return Err(vec![Diagnostic::error(
                "Invalid number of arguments",
                "The console-only \"type\" function takes exactly one argument.",
            )]);
        };
        if calls_type(arg) {
            // `type(type(x))` is the type of a type.
            return Ok("type".into());
        }
        let value = fleetform_lang::eval::evaluate(arg, scope)
            .map_err(|d| d.iter().cloned().collect::<Vec<_>>())?;
        return Ok(value.ty().console_text());
    }
    if calls_type(&expr) {
        return Err(vec![Diagnostic::error(
            "Invalid use of type function",
            "The console-only \"type\" function cannot be used as part of an expression.",
        )]);
    }
    let (value, marks) =
        evaluate_marked(&expr, scope).map_err(|d| d.iter().cloned().collect::<Vec<_>>())?;
    Ok(show(&value, &marks))
}

/// Whether `expr` calls the console's `type` function anywhere.
fn calls_type(expr: &Expr) -> bool {
    if matches!(&expr.kind, ExprKind::Call { name, .. } if name == "type") {
        return true;
    }
    let mut found = false;
    expr.for_each_child(&mut |c| found |= calls_type(c));
    found
}
