//! Provider-defined functions (`provider::NAME::FUNC(...)`) in a run.
//!
//! # Where a call is evaluated, and why
//!
//! The coordinator never runs providers (in a fleet it has no provider
//! binaries, and keeping plugin processes out of it keeps it small and its
//! failures its own), so a call of a plugin provider's function becomes a
//! [`TaskKind::Function`] task that a worker carries out on an unconfigured
//! instance of the provider, through the same queue, provider resolution
//! and lock file as every other task. In embedded mode the in-process
//! worker takes it; nothing else differs.
//!
//! The coordinator still needs the signatures before it can check a call
//! (argument count, nulls, unknowns, types): a worker reports them with the
//! provider's schema (its `functions`), and [`prepare`] fetches the schema
//! of every provider the configuration calls a function of before anything
//! is evaluated, since the graph gives expressions no edge to the providers
//! whose functions they call.
//!
//! Expressions are evaluated synchronously, deep inside the plan and apply
//! walks, so a call waits for its task in place (`block_in_place`: the
//! runtime moves this thread's other tasks elsewhere meanwhile). That is
//! acceptable because provider functions are pure: each distinct call
//! (provider, function, arguments) is made once per run and its answer is
//! remembered, so plan and apply, and the many evaluations of one
//! expression, share one task. Calls with unknown arguments never get this
//! far (their result is unknown without asking), and the built-in
//! `terraform` provider's functions are computed by the language crate.

use crate::dispatch::Dispatcher;
use crate::run::eval::providers;
use crate::run::handle::Shared;
use crate::run::values::RunFunctions;
use fleetform_lang::config::Config;
use fleetform_lang::provider_functions::{ModuleFunctions, PluginFunctions, calls};
use fleetform_shared::ProviderAddr;
use fleetform_shared::addr::{AbsProviderConfig, Module};
use fleetform_shared::diag::Diagnostics;
use fleetform_shared::function::{FunctionError, FunctionSignature};
use fleetform_shared::schema::ProviderSchema;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{FunctionTask, ProviderSpec, Task, TaskKind, TaskOutcome};
use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

/// The run's functions, with the schemas of the providers called fetched
/// through workers.
pub async fn prepare(
    shared: &Shared,
    config: &Config,
    run_id: &str,
) -> Result<RunFunctions, Diagnostics> {
    let mut called: BTreeMap<ProviderAddr, Module> = BTreeMap::new();
    for node in config.modules() {
        for c in calls(&node.module) {
            if let Some(r) = node.module.required_providers.get(&c.local)
                && !r.source.is_builtin()
            {
                called
                    .entry(r.source.clone())
                    .or_insert_with(|| node.path.clone());
            }
        }
    }
    let mut providers = BTreeMap::new();
    for (addr, module) in called {
        let p = AbsProviderConfig {
            module,
            provider: addr.clone(),
            alias: None,
        };
        let spec = providers::spec(config, &p);
        let schema = providers::schema(shared, run_id, &format!("functions-{addr}"), &spec).await?;
        providers.insert(addr, (Arc::new(spec), schema));
    }
    let plugins: Arc<dyn PluginFunctions> = Arc::new(FleetPlugins {
        providers,
        dispatcher: shared.dispatcher.clone(),
        run_id: run_id.to_string(),
        answers: Mutex::default(),
    });
    Ok(RunFunctions::new(
        config
            .modules()
            .into_iter()
            .map(|n| {
                (
                    n.path.clone(),
                    ModuleFunctions::new(&n.module, plugins.clone()),
                )
            })
            .collect(),
    ))
}

type Answer = Result<Value, FunctionError>;

/// Plugin providers' functions, called through workers.
struct FleetPlugins {
    providers: BTreeMap<ProviderAddr, (Arc<ProviderSpec>, Arc<ProviderSchema>)>,
    dispatcher: Dispatcher,
    run_id: String,
    /// Each distinct call's answer, by [`call_key`].
    answers: Mutex<HashMap<u64, Answer>>,
}

/// A call's identity: the same provider, function and arguments always
/// give the same answer.
fn call_key(provider: &ProviderAddr, name: &str, args: &[Value]) -> u64 {
    let mut h = DefaultHasher::new();
    provider.to_string().hash(&mut h);
    name.hash(&mut h);
    format!("{args:?}").hash(&mut h);
    h.finish()
}

impl PluginFunctions for FleetPlugins {
    fn signature(&self, provider: &ProviderAddr, name: &str) -> Option<FunctionSignature> {
        self.providers.get(provider)?.1.functions.get(name).cloned()
    }

    fn call(&self, provider: &ProviderAddr, name: &str, args: Vec<Value>) -> Answer {
        let key = call_key(provider, name, &args);
        if let Some(a) = self.answers.lock().expect("answers lock").get(&key) {
            return a.clone();
        }
        let Some((spec, schema)) = self.providers.get(provider) else {
            return Err(FunctionError::call(format!("no schema of {provider}")));
        };
        let Some(signature) = schema.functions.get(name).cloned() else {
            return Err(FunctionError::call(format!(
                "{provider} has no function {name:?}"
            )));
        };
        let task = Task {
            id: format!("{}:function:{key:016x}", self.run_id),
            run_id: self.run_id.clone(),
            provider: spec.clone(),
            kind: TaskKind::Function(FunctionTask {
                name: name.to_string(),
                arguments: args,
                signature,
            }),
        };
        let answer = wait_for(&self.dispatcher, task);
        // A task that could not be carried out is not the function's
        // answer: it is not remembered, so a later evaluation asks again.
        if answer
            .as_ref()
            .is_err_and(|e| e.argument.is_none() && e.text.starts_with(UNANSWERED))
        {
            return answer;
        }
        self.answers
            .lock()
            .expect("answers lock")
            .insert(key, answer.clone());
        answer
    }
}

const UNANSWERED: &str = "the call was not made: ";

/// Dispatches `task` and waits for its answer, holding this thread.
fn wait_for(dispatcher: &Dispatcher, task: Task) -> Answer {
    let unanswered = |why: String| FunctionError::call(format!("{UNANSWERED}{why}"));
    let handle = match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() != tokio::runtime::RuntimeFlavor::CurrentThread => h,
        _ => return Err(unanswered("no multi-threaded runtime to wait in".into())),
    };
    let dispatcher = dispatcher.clone();
    let result = tokio::task::block_in_place(move || {
        handle.block_on(async move {
            let rx = dispatcher
                .dispatch(vec![task])
                .await
                .map_err(|e| e.to_string())?;
            let rx = rx.into_iter().next().ok_or("no receiver")?;
            rx.await
                .map_err(|_| "the coordinator stopped waiting".to_string())
        })
    });
    match result {
        Ok(r) => match r.outcome {
            TaskOutcome::Function(answer) => answer,
            TaskOutcome::Failed(d) => Err(unanswered(
                d.iter()
                    .map(|d| format!("{}: {}", d.summary, d.detail))
                    .collect::<Vec<_>>()
                    .join("; "),
            )),
            other => Err(unanswered(format!("unexpected worker answer {other:?}"))),
        },
        Err(why) => Err(unanswered(why)),
    }
}

#[cfg(test)]
mod tests;
