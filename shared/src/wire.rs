//! Messages between the CLI, the coordinator and the workers. Everything on
//! the wire is one of these types, encoded with rmp-serde.

use crate::addr::{AbsResourceInstance, ProviderAddr};
use crate::diag::Diagnostics;
use crate::plan::{Action, ChangeSummary, Plan};
use crate::provider::AttrPath;
use crate::schema::ProviderSchema;
use crate::state::OutputState;
use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// JetStream names shared by coordinator and workers.
pub mod nats {
    use std::time::Duration;
    /// How long JetStream remembers a message id: a task or result
    /// published again within it (a retry after an outage) is dropped as a
    /// duplicate. Longer than [`RETRY_FOR`], so retries never duplicate.
    pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(15 * 60);
    /// How long publishing is retried while NATS is out of reach.
    pub const RETRY_FOR: Duration = Duration::from_secs(10 * 60);
    /// Work-queue stream holding tasks; subjects `fleetform.task.<pool>`.
    pub const TASK_STREAM: &str = "FLEETFORM_TASKS";
    pub const TASK_SUBJECT_PREFIX: &str = "fleetform.task";
    /// Limits stream holding results; subjects `fleetform.result.<run_id>`.
    pub const RESULT_STREAM: &str = "FLEETFORM_EVENTS";
    pub const RESULT_SUBJECT_PREFIX: &str = "fleetform.result";
    /// Durable pull consumer shared by all workers of a pool.
    pub fn worker_consumer(pool: &str) -> String {
        format!("fleetform-workers-{pool}")
    }
    pub fn task_subject(pool: &str) -> String {
        format!("{TASK_SUBJECT_PREFIX}.{pool}")
    }
    pub fn result_subject(run_id: &str) -> String {
        format!("{RESULT_SUBJECT_PREFIX}.{run_id}")
    }
    /// Core NATS (not JetStream) subject of [`super::RunControl`] messages
    /// for the workers of a pool: only workers alive at the time need them.
    pub fn control_subject(pool: &str) -> String {
        format!("fleetform.control.{pool}")
    }
    /// Core NATS subjects of [`super::TaskProgress`] messages,
    /// `fleetform.progress.<run_id>`: live output that the task's result
    /// repeats, so nothing needs them to be durable.
    pub const PROGRESS_SUBJECT_PREFIX: &str = "fleetform.progress";
    /// Key-value bucket of [`super::WorkerInfo`] heartbeats, keys
    /// `<pool>.<worker id>`; an entry older than [`WORKER_TTL`] is a worker
    /// that stopped.
    pub const WORKERS_BUCKET: &str = "FLEETFORM_WORKERS";
    pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);
    pub const WORKER_TTL: Duration = Duration::from_secs(20);
    pub fn progress_subject(run_id: &str) -> String {
        format!("{PROGRESS_SUBJECT_PREFIX}.{run_id}")
    }
    /// Core NATS request subject of [`super::ClaimRequest`]s,
    /// `fleetform.claim.<run_id>`: a worker asks the coordinator that runs
    /// the run (every coordinator hears it; the others stay silent), which
    /// records the claim in the object store, not in JetStream (a queue
    /// that loses acknowledged writes would forget the claim too).
    pub const CLAIM_SUBJECT_PREFIX: &str = "fleetform.claim";
    pub fn claim_subject(run_id: &str) -> String {
        format!("{CLAIM_SUBJECT_PREFIX}.{run_id}")
    }
    /// Core NATS request subject of [`super::TaskStatusRequest`]s to one
    /// worker, `fleetform.worker.<worker id>.task`: a coordinator asks the
    /// holder of an overdue task's claim what became of it.
    pub fn task_status_subject(worker: &str) -> String {
        format!("fleetform.worker.{worker}.task")
    }
    /// Core NATS request subject of tasks sent to one worker process
    /// directly, `fleetform.worker.<worker id>.direct.<incarnation>`: the
    /// next link of a chain goes to the process that ran the link before,
    /// its claim written for that process first (see
    /// [`super::DirectAnswer`]). A process of the same id started later
    /// has another incarnation, so it never hears what was sent to an
    /// earlier one.
    pub fn direct_subject(worker: &str, incarnation: &str) -> String {
        format!("fleetform.worker.{worker}.direct.{incarnation}")
    }
    /// The claimant's attempt of a task sent directly to a worker process:
    /// `direct.<incarnation>` (the claimant is `<worker> direct.<incarnation>`).
    pub fn direct_attempt(incarnation: &str) -> String {
        format!("direct.{incarnation}")
    }
    /// The incarnation a claimant's attempt sent a task to directly, if it
    /// is such an attempt.
    pub fn direct_incarnation(claimant: &str) -> Option<&str> {
        let (_, attempt) = claimant.rsplit_once(' ')?;
        attempt.strip_prefix("direct.").filter(|i| !i.is_empty())
    }
}

/// A worker process's answer to a task sent to it directly
/// ([`nats::direct_subject`]), whose claim the coordinator wrote for that
/// process before sending it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DirectAnswer {
    /// Taken up: it runs (or ran) here, and its result goes to the run.
    Accepted,
    /// Not taken up, and never will be by this process: it was asked about
    /// the task before it arrived ([`TaskStatus::Refused`]). The claim may
    /// be released and the task sent elsewhere.
    Refused,
}

/// A coordinator's question to a worker about a task whose result is
/// overdue: the queue may have lost the result, or the task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskStatusRequest {
    pub run_id: String,
    pub task_id: String,
    /// Asked of the process a task was sent to directly (its claim names
    /// this incarnation): if it is that process and does not have the
    /// task, it refuses the task from now on and answers
    /// [`TaskStatus::Refused`]. Empty otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub incarnation: String,
}

/// A worker's answer to a [`TaskStatusRequest`], from the tasks it took
/// lately.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TaskStatus {
    /// It runs the task now.
    Running,
    /// It finished the task: here is the result again (the one published
    /// may have been lost).
    Finished(TaskResult),
    /// It does not know the task (never took it, forgot it, or restarted).
    Unknown,
    /// The process the task was sent to directly never took it up, and
    /// from now on refuses it should it still arrive: the task may be run
    /// elsewhere. Only to a request naming this process's incarnation.
    Refused,
}

/// A worker's request to take a task up that must not run twice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimRequest {
    pub run_id: String,
    pub task_id: String,
    pub worker: String,
    /// Drawn once per delivery the worker claims, and sent again with each
    /// repeat of the request: a claim recorded by a coordinator whose
    /// answer was lost (it died, or the network dropped it) is the same
    /// claimant's when it asks again, so it is answered "first" again,
    /// not "taken".
    #[serde(default)]
    pub attempt: String,
    /// The worker understands [`ClaimAnswer::Duplicate`]; one that does
    /// not (an older worker) is answered `Taken` instead.
    #[serde(default)]
    pub drops_duplicates: bool,
}

/// A coordinator's answer to a [`ClaimRequest`], given once the claim is
/// recorded (or found) in the object store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClaimAnswer {
    /// Nobody took the task up before: run it.
    First,
    /// Someone did: it may have reached the provider already.
    Taken,
    /// Someone else did, and runs it still (or finished it, and its result
    /// was handed to the run): drop this delivery, acknowledged and
    /// without a result. Only for a request with `drops_duplicates`.
    Duplicate,
}

/// What a worker says of itself with every heartbeat: `fleetform workers`
/// lists it, and a coordinator checks a pool's policies with it before a
/// run needs them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerInfo {
    pub id: String,
    pub pool: String,
    pub host: String,
    pub version: String,
    pub concurrency: u64,
    pub in_flight: u64,
    pub completed: u64,
    /// Whether it runs `local-exec` provisioners (`--allow-local-exec`).
    pub allow_local_exec: bool,
    /// RFC 3339.
    pub started_at: String,
    /// RFC 3339, this heartbeat's time.
    pub seen_at: String,
}

/// What the coordinator tells every worker of a pool about a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunControl {
    /// The run was cancelled: interrupt its provider calls (`StopProvider`)
    /// and answer its remaining tasks [`TaskOutcome::Cancelled`].
    Stop { run_id: String },
    /// The run ended: its provider processes can go.
    Finished { run_id: String },
}

pub const DEFAULT_POOL: &str = "default";

/// A provider as a task names it: where it comes from and how it is configured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderSpec {
    pub addr: ProviderAddr,
    pub version_constraint: Option<String>,
    /// The provider block's configuration, decoded against the provider
    /// schema (`Null` before the schema is known).
    pub config: Value,
    /// What the run's dependency lock file says of this provider.
    #[serde(default)]
    pub lock: ProviderLock,
}

/// The dependency lock file's word on one provider of a run, which every
/// worker that starts the provider obeys (Terraform's rules): a locked
/// version is the only one used, and its package must match an `h1:` hash
/// the file records, if it records any; with a lock file, a provider it
/// does not name is not used until `init` selects it. Development
/// overrides and unversioned builds are exempt, as Terraform exempts
/// `dev_overrides`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum ProviderLock {
    /// No lock file came with the configuration: the newest installed
    /// version that the constraints allow.
    #[default]
    NoLockFile,
    /// The version the lock file selects, and the hashes it records.
    Locked {
        version: String,
        hashes: Vec<String>,
    },
    /// The lock file does not name this provider.
    NotSelected,
}

/// One unit of work for a worker. `id` is deterministic for the operation
/// (run, phase, address), so a re-dispatch is de-duplicated by JetStream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub run_id: String,
    /// Shared by a run's tasks of one provider configuration (they are
    /// many: one or more per instance); written on the wire as the spec
    /// itself.
    pub provider: std::sync::Arc<ProviderSpec>,
    pub kind: TaskKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TaskKind {
    /// Fetch the provider's schema. `cached` lists the fingerprints (see
    /// [`TaskOutcome::Schema`]) whose schemas the coordinator already holds:
    /// when the worker resolves to one of them it answers without starting
    /// the provider.
    Schema {
        cached: Vec<String>,
    },
    Plan(PlanTask),
    Apply(ApplyTask),
    /// Read a data source (at plan time, or at apply time when deferred).
    Read(ReadTask),
    /// Import an existing object: ImportResourceState, then ReadResource.
    Import(ImportTask),
    /// Run the creation-time provisioners of an object just created.
    Provision(ProvisionTask),
    /// Call one of the provider's functions (`provider::NAME::FUNC`) with
    /// arguments the coordinator evaluated; the provider is not configured.
    Function(FunctionTask),
    /// Open an ephemeral resource instance for the walk:
    /// ValidateEphemeralResourceConfig + OpenEphemeralResource.
    Open(OpenTask),
    /// Renew an ephemeral resource instance the walk still needs, with
    /// the private data of its open (or of its last renewal).
    Renew(RenewTask),
    /// Close an ephemeral resource instance the walk opened.
    Close(CloseTask),
}

/// Open one ephemeral resource instance; its configuration is wholly known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenTask {
    pub addr: AbsResourceInstance,
    pub type_name: String,
    pub config: Value,
}

/// What opening gave: the value (never recorded), and what closing needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenOutcome {
    pub result: Value,
    pub private: Option<Vec<u8>>,
    /// Unix milliseconds after which the provider wants a renewal.
    pub renew_at: Option<i64>,
    pub diagnostics: Diagnostics,
}

/// Close one ephemeral resource instance, with what its open answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CloseTask {
    pub addr: AbsResourceInstance,
    pub type_name: String,
    pub private: Option<Vec<u8>>,
}

/// Renew one ephemeral resource instance (RenewEphemeralResource).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RenewTask {
    pub addr: AbsResourceInstance,
    pub type_name: String,
    pub private: Option<Vec<u8>>,
}

/// What renewing gave: private data for the next renewal and when it is
/// due (none: no more renewals), or the provider's errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RenewOutcome {
    pub private: Option<Vec<u8>>,
    /// Unix milliseconds after which the provider wants another renewal.
    pub renew_at: Option<i64>,
    pub diagnostics: Diagnostics,
}

/// A provider-defined function call: its arguments are known, converted to
/// their parameters' types, and null only where the signature allows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionTask {
    pub name: String,
    pub arguments: Vec<Value>,
    /// How the arguments and the result travel to and from the provider.
    pub signature: crate::function::FunctionSignature,
}

/// Run provisioners for an instance whose object was just created.
///
/// A separate task rather than part of the create's [`ApplyTask`]: the
/// arguments may refer to `self`, the object the create returns, and only
/// the coordinator holds everything else they may refer to (variables,
/// locals, other resources). So the coordinator evaluates them once the
/// create's result is in, and sends them here fully evaluated; the worker
/// evaluates nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProvisionTask {
    pub addr: AbsResourceInstance,
    pub provisioners: Vec<ProvisionerSpec>,
}

/// One `provisioner "local-exec"` block with its arguments evaluated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProvisionerSpec {
    /// `local-exec`.
    pub kind: String,
    pub command: String,
    /// The program and its arguments that run `command`; empty for the
    /// default (`/bin/sh -c`).
    pub interpreter: Vec<String>,
    pub working_dir: Option<String>,
    /// Added to the worker's own environment.
    pub environment: BTreeMap<String, String>,
    /// Do not show the command.
    pub quiet: bool,
    pub on_failure: OnFailure,
    /// The arguments had sensitive values: no output is shown, only a note
    /// that it was suppressed (Terraform's rule).
    pub suppress_output: bool,
    /// What suppressed it was an ephemeral value, which the note names.
    #[serde(default)]
    pub ephemeral_config: bool,
    /// The block, where a failure is reported, and its resource's header.
    pub range: Option<crate::diag::SourceRange>,
    pub context: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OnFailure {
    Fail,
    Continue,
}

/// What running provisioners did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProvisionOutcome {
    /// Every provisioner that ran, in order.
    pub steps: Vec<ProvisionStep>,
    /// The problems that fail the operation: errors of provisioners with
    /// `on_failure = fail` (later provisioners did not run).
    pub diagnostics: Diagnostics,
}

/// One provisioner's run: what it printed, and whether it failed (which
/// fails the operation only with `on_failure = fail`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProvisionStep {
    pub kind: String,
    /// Output messages, one line each, as the provisioner printed them.
    pub output: Vec<String>,
    pub errored: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportTask {
    pub addr: AbsResourceInstance,
    pub type_name: String,
    pub id: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportOutcome {
    /// The imported object after refresh; `None` when the provider found
    /// nothing with that id.
    pub object: Option<PriorObject>,
    pub diagnostics: Diagnostics,
}

/// Read one data source instance: ValidateDataResourceConfig + ReadDataSource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadTask {
    pub addr: AbsResourceInstance,
    pub type_name: String,
    /// The configuration decoded against the data source schema, wholly known.
    pub config: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReadOutcome {
    pub state: Value,
    pub diagnostics: Diagnostics,
}

/// A prior object as a worker needs it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriorObject {
    pub value: Value,
    pub private: Vec<u8>,
    pub schema_version: i64,
}

/// Plan one managed resource instance: refresh the prior object, then
/// PlanResourceChange (twice for a replacement).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanTask {
    pub addr: AbsResourceInstance,
    pub type_name: String,
    pub prior: Option<PriorObject>,
    /// The instance's configuration decoded against the resource schema;
    /// may contain unknowns. `Null` plans a delete.
    pub config: Value,
    pub refresh: bool,
    /// Replace even if the provider could update (tainted, `-replace`).
    pub force_replace: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanOutcome {
    /// The prior object after refresh; `None` when it no longer exists.
    pub prior: Option<PriorObject>,
    /// The prior object as its schema upgrade left it, before refresh, when
    /// the upgrade changed it (most often it does not, and this is `None`):
    /// what refreshing is compared with to tell drift.
    #[serde(default)]
    pub upgraded: Option<Value>,
    pub planned: Value,
    pub planned_private: Vec<u8>,
    pub requires_replace: Vec<AttrPath>,
    /// The provider said the change cannot be made in place; `planned` is
    /// then the plan for a new object.
    pub replace: bool,
    pub diagnostics: Diagnostics,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApplyOp {
    Create,
    Update,
    Delete,
    /// Read a data source whose read was deferred to apply.
    Read,
    /// Open an ephemeral resource (in events only: "Opening...").
    Open,
    /// Renew an ephemeral resource (in events only: "Renewing...").
    Renew,
    /// Close an ephemeral resource (in events only: "Closing...").
    Close,
}

impl ApplyOp {
    /// An ephemeral resource's open, renewal or close.
    pub fn is_ephemeral(self) -> bool {
        matches!(self, ApplyOp::Open | ApplyOp::Renew | ApplyOp::Close)
    }
}

/// Apply one half of a planned change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApplyTask {
    pub addr: AbsResourceInstance,
    pub type_name: String,
    pub op: ApplyOp,
    pub prior: Option<PriorObject>,
    /// The final configuration (upstream values now known).
    pub config: Value,
    /// What planning promised, to check the final plan against.
    pub planned: Value,
    pub planned_private: Vec<u8>,
    /// For a delete: destroy-time provisioners to run first, evaluated
    /// with `self` the object being deleted (which is known already, so
    /// they travel with the delete).
    #[serde(default)]
    pub provisioners: Vec<ProvisionerSpec>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApplyOutcome {
    /// The object after apply; `Null` when deleted (or when a create failed
    /// before producing anything).
    pub new_state: Value,
    pub private: Vec<u8>,
    pub diagnostics: Diagnostics,
    /// The destroy-time provisioners that ran before a delete.
    #[serde(default)]
    pub provisioned: Vec<ProvisionStep>,
}

/// Something a task in progress shows before its result: a provisioner
/// starting, and each line of its output as it is printed.
///
/// Best effort and not durable: the result carries everything again
/// ([`ProvisionStep::output`]), and the coordinator shows from it whatever
/// it did not see live. `step` counts the task's provisioners from 0 and
/// `seq` the lines of one provisioner, so the coordinator can tell a line
/// it has not seen from a gap or a duplicate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskProgress {
    pub task_id: String,
    pub run_id: String,
    pub step: u32,
    pub event: ProgressEvent,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ProgressEvent {
    /// Provisioner `step` starts.
    Started { provisioner: String },
    /// Line `seq` of provisioner `step`'s output.
    Output { seq: u32, line: String },
    /// Provisioner `step` ended after `lines` lines of output.
    Finished { errored: bool, lines: u32 },
    /// The task's provider answers with throttling errors: the worker
    /// retries and lowers its concurrency for that provider. About the run
    /// rather than the task (`step` is 0); a worker sends at most one every
    /// few seconds per provider and run.
    Throttled(ProviderThrottled),
}

/// A worker's word that a provider throttles its calls, shown to the run
/// as a warning.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderThrottled {
    pub provider: ProviderAddr,
    pub worker: String,
    /// Calls this worker lets the provider have at once: before the latest
    /// throttling error and now (equal when it had already been lowered).
    pub limit_before: u32,
    pub limit: u32,
    /// Up to which it may go back, one at a time, while calls succeed.
    pub limit_max: u32,
    /// The first retry's wait.
    pub retry_in_ms: u64,
    /// Throttling errors on this worker since its previous notice to the run.
    pub errors: u64,
    /// What the provider said (the throttling diagnostic's summary).
    pub message: String,
}

impl ProviderThrottled {
    /// The warning a run shows:
    /// `Provider registry.terraform.io/x/sim throttled: concurrency 32 → 16, retrying in 1.2s`.
    pub fn diagnostic(&self) -> crate::diag::Diagnostic {
        let limit = if self.limit_before == self.limit {
            format!("concurrency {}", self.limit)
        } else {
            format!("concurrency {} → {}", self.limit_before, self.limit)
        };
        let calls = if self.errors == 1 { "call" } else { "calls" };
        crate::diag::Diagnostic::warning(
            format!(
                "Provider {} throttled: {limit}, retrying in {:.1}s",
                self.provider,
                self.retry_in_ms as f64 / 1000.0
            ),
            format!(
                "The provider refused {} {calls} on worker {} with a throttling error (\"{}\"). The worker retries such calls with exponential backoff and runs at most {} calls to this provider at once, adding one back after each window of successful calls, up to {}.",
                self.errors, self.worker, self.message, self.limit, self.limit_max
            ),
        )
    }
}

/// A worker's answer to a task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    pub task_id: String,
    pub run_id: String,
    pub worker: String,
    pub outcome: TaskOutcome,
    /// The worker process's incarnation (drawn at its start): the run may
    /// send what this result makes ready to the same process directly
    /// ([`nats::direct_subject`]). Empty from in-process workers and
    /// older ones, and in what a run journals.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub incarnation: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TaskOutcome {
    /// The provider the worker resolved, as `<address>@<version>` (or a
    /// fingerprint of an unversioned executable), and its schema unless the
    /// coordinator said it has it.
    Schema {
        fingerprint: String,
        schema: Option<Box<ProviderSchema>>,
    },
    Plan(PlanOutcome),
    Apply(ApplyOutcome),
    Read(ReadOutcome),
    Import(ImportOutcome),
    Provision(ProvisionOutcome),
    /// The function's result, or the provider's reason it failed.
    Function(Result<Value, crate::function::FunctionError>),
    Open(OpenOutcome),
    Renew(RenewOutcome),
    /// What closing an ephemeral resource reported.
    Close(Diagnostics),
    /// The task could not be carried out (provider missing, crashed...).
    Failed(Diagnostics),
    /// The run was cancelled before the task started: no provider was called.
    Cancelled,
    /// The task was delivered again after an earlier delivery went
    /// unanswered (its worker died or lost its connection), and it is not
    /// safe to repeat: the earlier attempt may have reached the provider, so
    /// running it again could create a second object. No provider was
    /// called this time; the run reports the operation as interrupted.
    Interrupted {
        attempt: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Operation {
    Plan,
    Apply,
    Destroy,
}

/// What the CLI submits: the configuration bundle and the run options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    pub operation: Operation,
    /// `.tf` file name → content.
    pub files: BTreeMap<String, String>,
    /// `-var` and `-var-file`, in the order given on the command line (a
    /// later one wins, whichever kind each is).
    pub variables: Vec<VariableArg>,
    pub auto_approve: bool,
    /// Apply exactly this saved plan (shared: a run holds it while it
    /// goes, and its journal record names it).
    pub saved_plan: Option<Arc<Plan>>,
    /// Stop after planning (`plan`, `plan -destroy`).
    pub plan_only: bool,
    pub options: PlanOptions,
    /// The variables files loaded without being named, in precedence order:
    /// `terraform.tfvars`, `terraform.tfvars.json`, then every
    /// `*.auto.tfvars` / `*.auto.tfvars.json` by file name; (name, content).
    #[serde(default)]
    pub auto_var_files: Vec<(String, String)>,
    /// `TF_VAR_<name>` environment variables: (name, raw value).
    #[serde(default)]
    pub env_variables: Vec<(String, String)>,
    /// Files of the module directories other than configuration, by path
    /// from the root module, for `file()`, `templatefile()`, `fileset()`...
    #[serde(default)]
    pub data_files: BTreeMap<String, Blob>,
    /// The root module's directory as an absolute path where the CLI runs
    /// (`path.cwd`, `abspath()`); empty when unknown.
    #[serde(default)]
    pub cwd: String,
    /// Where the configuration comes from, `HOST:DIRECTORY`, recorded with
    /// the snapshots the run writes; empty when unknown.
    #[serde(default)]
    pub source: String,
}

/// Bytes that travel as one msgpack binary, not as a list of numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blob(#[serde(with = "serde_bytes")] pub Vec<u8>);

/// One `-var` or `-var-file` option. Both kinds share one list because
/// Terraform lets a later option override an earlier one of either kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum VariableArg {
    /// `-var name=value`, unparsed (parsed against the variable's type).
    Var { name: String, value: String },
    /// `-var-file=FILE`: the file name as given and its content.
    File { name: String, content: String },
}

/// The single-run planning options (docs/planning/planning-behaviors.md,
/// "Behaviors chosen for one run"; docs/planning/exclude.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanOptions {
    /// Refresh prior objects before planning (`-refresh=false` turns it off).
    pub refresh: bool,
    /// `-refresh-only`: every instance is a no-op; refreshed objects are recorded.
    pub refresh_only: bool,
    /// `-replace=ADDR`: replace these instances even if they could be updated.
    pub replace: Vec<String>,
    /// `-target=ADDR`: plan only these resources and what they depend on.
    pub targets: Vec<String>,
    /// `-exclude=ADDR`: plan everything except these and what depends on them.
    pub excludes: Vec<String>,
    /// `fleetform import ADDR ID`: objects to import besides `import` blocks.
    #[serde(default)]
    pub imports: Vec<(String, String)>,
    /// Only import (the `import` command): nothing else is planned or applied.
    #[serde(default)]
    pub import_only: bool,
    /// `-parallelism=N`: at most N apply operations of the run in flight.
    #[serde(default)]
    pub parallelism: Option<u32>,
    /// `-adopt-state`: plan even when the state holds only objects of
    /// resources this configuration does not declare (the guard against
    /// another configuration's state lets the run go on).
    #[serde(default)]
    pub adopt_state: bool,
    /// `plan -generate-config-out`: root-module resources (`type.name`)
    /// whose blocks in the request are empty stand-ins for import targets
    /// that had none; planning writes their configuration from the
    /// imported objects ([`crate::plan::Plan::generated_config`]).
    #[serde(default)]
    pub generate_config: Vec<String>,
    /// `-refresh-max-age=DURATION`, in milliseconds: an object read no
    /// longer ago than this (by an earlier plan; the workspace's record of
    /// refreshed objects) is not read again. `None`: every object is read, as
    /// Terraform does.
    #[serde(default)]
    pub refresh_max_age_ms: Option<u64>,
    /// `-reread-changed=false`: an object whose earlier read was reused
    /// and whose plan changes it is not read again before the plan is
    /// final (by default it is, so nothing is changed on an old read).
    #[serde(default)]
    pub no_reread_changed: bool,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            refresh: true,
            refresh_only: false,
            replace: vec![],
            targets: vec![],
            excludes: vec![],
            imports: vec![],
            import_only: false,
            parallelism: None,
            adopt_state: false,
            generate_config: vec![],
            refresh_max_age_ms: None,
            no_reread_changed: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunStatus {
    /// A plan with no changes, or a successful apply.
    Succeeded,
    /// A plan that has changes (plan-only runs).
    Planned,
    Failed,
    /// The plan was not approved.
    Discarded,
    /// The run was cancelled: what finished before is in the state, nothing
    /// else was started.
    Cancelled,
}

/// What a run reports while it goes; the CLI renders these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RunEvent {
    Started {
        run_id: String,
        operation: Operation,
    },
    Diagnostics(Diagnostics),
    /// Planning progress: instances planned so far.
    Planning {
        done: usize,
        total: usize,
    },
    /// The plan, shared by the run's event log, its watchers and the
    /// apply (one copy in memory, not one each).
    Planned(Arc<Plan>),
    AwaitingApproval,
    /// Somebody asked to cancel the run: nothing new starts, and the
    /// providers of operations in progress are asked to stop.
    Cancelling,
    /// One operation started: `op` is the half of `action` being carried
    /// out (a replacement is a create and a delete).
    ApplyStart {
        addr: AbsResourceInstance,
        deposed: Option<String>,
        action: Action,
        op: ApplyOp,
    },
    ApplyComplete {
        addr: AbsResourceInstance,
        deposed: Option<String>,
        action: Action,
        op: ApplyOp,
        id: Option<String>,
        elapsed_ms: u64,
        worker: String,
    },
    ApplyErrored {
        addr: AbsResourceInstance,
        deposed: Option<String>,
        action: Action,
        op: ApplyOp,
        diagnostics: Diagnostics,
    },
    Progress {
        done: usize,
        total: usize,
    },
    /// A provisioner of an instance starts (Terraform's `provision_start`).
    /// Its start and output lines arrive live as the worker reports them
    /// ([`TaskProgress`]), the rest (all of it, if nothing came live) with
    /// the provisioner's result; in order either way.
    ProvisionStart {
        addr: AbsResourceInstance,
        provisioner: String,
    },
    /// One line of a provisioner's output (`provision_progress`).
    ProvisionOutput {
        addr: AbsResourceInstance,
        provisioner: String,
        line: String,
    },
    /// A provisioner finished (`provision_complete` / `provision_errored`);
    /// an error fails the operation only with `on_failure = fail`, and is
    /// then reported with the operation's diagnostics.
    ProvisionDone {
        addr: AbsResourceInstance,
        provisioner: String,
        errored: bool,
    },
    Outputs(BTreeMap<String, OutputState>),
    Finished {
        status: RunStatus,
        summary: ChangeSummary,
    },
}
