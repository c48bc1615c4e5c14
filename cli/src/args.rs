//! Command-line arguments, in Terraform's style: single-dash long flags
//! (`-auto-approve`, `-var k=v`, `-chdir=DIR`) are accepted as written.

use clap::{Args, Parser, Subcommand};
use fleetform_shared::addr::{AbsResourceInstance, ResourceMode, Target};
use fleetform_shared::diag::Diagnostic;
use fleetform_shared::wire::PlanOptions;
use std::path::PathBuf;

/// fleetform plans and applies Terraform configurations (same .tf language,
/// same providers), executing each run with a fleet of workers.
///
/// Without --coordinator (or FLEETFORM_COORDINATOR) it runs in embedded
/// mode: coordinator and workers inside this process, state under
/// .fleetform/ in the working directory.
#[derive(Parser, Debug)]
#[command(
    name = "fleetform",
    version,
    propagate_version = true,
    after_help = "Examples:\n  fleetform -chdir=examples/quickstart apply -auto-approve\n  fleetform plan -detailed-exitcode -var servers=5\n  export FLEETFORM_COORDINATOR=http://127.0.0.1:7400\n  fleetform init -project=web && fleetform apply   (a coordinator keeps each project's state)"
)]
pub struct Cli {
    /// Switch to DIR before doing anything else (like terraform -chdir).
    #[arg(long, global = true, value_name = "DIR")]
    pub chdir: Option<PathBuf>,
    /// Coordinator to talk to, e.g. http://127.0.0.1:7400. Embedded mode when unset.
    #[arg(long, global = true, env = "FLEETFORM_COORDINATOR", value_name = "URL")]
    pub coordinator: Option<String>,
    /// Workspace (state) to use, instead of the one `fleetform workspace
    /// select` chose for this directory (also TF_WORKSPACE; default: "default").
    #[arg(long, global = true, env = "FLEETFORM_WORKSPACE", value_name = "NAME")]
    pub workspace: Option<String>,
    /// Ask for input (approval) when needed; -input=false never asks, so
    /// apply then needs -auto-approve or a saved plan (as in Terraform).
    #[arg(long, global = true, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub input: bool,
    /// Accepted for Terraform compatibility: output is never colored.
    #[arg(long, global = true)]
    pub no_color: bool,
    /// Accepted for Terraform compatibility: a workspace is always locked
    /// while a run changes it (-lock=false says so and changes nothing).
    #[arg(long, global = true, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub lock: bool,
    /// How long a run waits for a workspace another run has locked, as a
    /// duration (`30s`, `5m`). By default a locked workspace fails the
    /// command at once, saying who holds the lock since when.
    #[arg(long, global = true, value_name = "DURATION")]
    pub lock_timeout: Option<String>,
    /// Show warnings as one line each (summary and location) instead of
    /// in full; errors are always shown in full.
    #[arg(long, global = true)]
    pub compact_warnings: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Prepare the working directory: install the modules that `module` blocks call.
    ///
    /// Like `terraform init` and `tofu init`, and compatible with them: modules
    /// are installed into .terraform/modules/ and recorded in
    /// .terraform/modules/modules.json in Terraform's format, so a directory
    /// initialised by Terraform or OpenTofu works unchanged in fleetform, and
    /// the other way round. Run it again whenever a module source changes.
    ///
    /// Module sources:
    ///   ./path, ../path
    ///       A local directory: nothing is copied, the manifest records it.
    ///   git::https://example.com/repo.git//subdir?ref=v1.2.0
    ///   git::ssh://git@example.com/repo.git, git::file:///path/repo.git
    ///   github.com/org/repo//subdir?ref=v1.2.0, git@github.com:org/repo.git
    ///       A git repository, cloned into .terraform/modules/NAME. ?ref= names
    ///       a branch, tag or commit (default: the default branch); //subdir
    ///       the module's directory in the repository.
    ///   namespace/name/system, hostname/namespace/name/system (+ version)
    ///       A registry module. fleetform cannot download from registries
    ///       yet: it uses what `terraform init` or `tofu init` installed and
    ///       says what to do when nothing is installed.
    ///   s3::, gcs::, hg::, http(s) archives, absolute paths
    ///       Not supported yet (used when Terraform/OpenTofu installed them).
    /// Modules called by installed modules are installed too (NAME.CHILD).
    ///
    /// Git repositories are fetched with the system `git` command, as
    /// Terraform's go-getter does, so your git credentials, ssh configuration
    /// and url.insteadOf rules apply. A branch or tag is cloned shallow.
    ///
    /// Modules installed from the same source are kept; a module whose source
    /// changed is installed again; -upgrade installs every module again.
    ///
    /// Exit status: 0 when the directory is ready, 1 on any error.
    #[command(verbatim_doc_comment)]
    Init(InitArgs),
    /// Show the changes required by the current configuration.
    Plan(PlanArgs),
    /// Create or update infrastructure.
    ///
    /// Ctrl-C cancels the run: nothing new starts, providers are asked to
    /// stop calls in progress, and what completed stays in the state. A second
    /// Ctrl-C stops waiting.
    Apply(ApplyArgs),
    /// Destroy previously-created infrastructure.
    Destroy(ApplyArgs),
    /// Evaluate expressions against the configuration and the state, one
    /// per line: `var.x`, `local.y`, `sim_object.a[0].id`, functions.
    ///
    /// Variables take their values as a plan would (-var, variables files,
    /// TF_VAR_, defaults); resources are what the state records (one not
    /// in the state yet is "(known after apply)"); module outputs are not
    /// evaluated. On a terminal it prompts ("exit" or Ctrl-D ends);
    /// otherwise it reads standard input, so `echo 'var.x' | fleetform
    /// console` works, and exits 1 if any expression failed.
    Console(ConsoleArgs),
    /// Run the .tftest.hcl tests: plan or apply each run block, check its asserts
    ///
    /// As `terraform test` (1.11) runs them, with its report.
    ///
    /// Test files are read from the working directory and from its tests/
    /// directory (-test-directory=DIR names another). Each file's runs plan
    /// or apply the configuration (or the local module a run names) in
    /// order on scratch states (one per module), never the workspace's; their
    /// assert blocks are checked against the plan or the applied state and
    /// expect_failures against the failed checks. When a file's runs are
    /// done, everything they created is destroyed. Runs use real providers:
    /// mock_provider and override blocks are not supported yet (refused
    /// with their location). Exit status: 0 when every run passed, 1 if any
    /// failed.
    #[command(verbatim_doc_comment)]
    Test(TestArgs),
    /// Rewrite configuration files in the canonical style (as `terraform
    /// fmt`): 2-space indentation, aligned `=`, canonical spacing.
    ///
    /// Formats the .tf and .tfvars files of the working directory (or of
    /// each TARGET file or directory; `-` reads standard input and writes
    /// standard output), listing the files it changed. Exit status: 0, 2
    /// when a file does not parse (it is left as it is), 3 with -check
    /// when a file is not formatted.
    Fmt(FmtArgs),
    /// Update the state to match the real objects, changing none of them:
    /// the same as `apply -refresh-only -auto-approve`.
    Refresh(RunArgs),
    /// Show fleetform's version, the platform, and the provider versions
    /// that .terraform.lock.hcl selects.
    Version(VersionArgs),
    /// Check whether the configuration is valid: syntax, references, cycles, provider schemas.
    ///
    /// Checks syntax, references, cycles, and every resource, data source
    /// and provider block against its provider's schema (unsupported,
    /// missing and mistyped arguments, nested block counts), with every
    /// variable and reference unknown, as Terraform validates. The
    /// providers must be available (as for plan). Exit 0 when valid.
    Validate(ValidateArgs),
    /// Show output values from the state.
    Output(OutputArgs),
    /// Inspect the state.
    #[command(subcommand)]
    State(StateCommand),
    /// Mark a resource instance as not fully functional: the next plan replaces it.
    Taint(AddressArg),
    /// Remove the tainted mark from a resource instance.
    Untaint(AddressArg),
    /// Show a saved plan, or the state when no plan file is given.
    Show(ShowArgs),
    /// Print the apply graph of the configuration (or of a saved plan) in DOT.
    Graph(GraphArgs),
    /// List the modules the configuration declares, as a tree (Terraform
    /// 1.10's `modules`), or as JSON with -json.
    Modules(ModulesArgs),
    /// Import an existing object into the state at ADDR, as `terraform
    /// import` does; the configuration must declare the resource.
    Import(ImportArgs),
    /// Show the providers the configuration requires (a tree by module,
    /// with version constraints) and those the state uses.
    #[command(args_conflicts_with_subcommands = true)]
    Providers(ProvidersArgs),
    /// Install the modules the configuration calls (`init` without the
    /// rest): -update installs every module again.
    Get(GetArgs),
    /// Print machine-readable metadata about fleetform (Terraform's
    /// `metadata`): `metadata functions -json` lists the signatures of the
    /// built-in functions.
    #[command(subcommand)]
    Metadata(MetadataCommand),
    /// Store a coordinator's API token for later commands (Terraform's
    /// `login`): asks for the token, checks that the coordinator accepts
    /// it, and saves it in ~/.terraform.d/credentials.tfrc.json under the
    /// coordinator's host. Commands then use it when FLEETFORM_TOKEN is
    /// unset.
    Login(LoginArgs),
    /// Remove the token `login` stored for a coordinator's host (the
    /// token stays valid at the coordinator until its operator revokes
    /// it).
    Logout(LoginArgs),
    /// Find runs again: list them, follow one, cancel one.
    ///
    /// A run goes on at the coordinator whatever happens to the terminal
    /// that started it (closed, interrupted twice, or cut off while the
    /// coordinator restarted); these commands reach it by its id.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// List the objects of the workspace that changed outside fleetform,
    /// as the latest recorded reads found them (each plan that refreshes
    /// records its reads), with when each was read. Exits 0 when there is
    /// none, 2 when there is drift.
    Drift,
    /// List the live workers of the fleet: id, pool, host, version,
    /// concurrency, tasks in flight and done, whether they run local-exec
    /// provisioners, and when each was last heard from (workers send a
    /// heartbeat every 5 seconds; one silent for 20 is gone).
    Workers,
    /// Manage workspaces: several states for one configuration.
    ///
    /// Each workspace has its own state, lock and history; runs on
    /// different workspaces proceed at the same time. The selected one is
    /// remembered per directory in .fleetform/environment; -workspace=NAME
    /// (or FLEETFORM_WORKSPACE, or TF_WORKSPACE) overrides it for one command.
    #[command(subcommand)]
    Workspace(WorkspaceCommand),
    /// Remove a workspace's lock that its holder left behind.
    ///
    /// A lock names its holder and expires by itself about 30 seconds
    /// after that holder stops renewing it (it died, or lost its
    /// connection). Use this only when you know the holder is gone: two
    /// runs writing one state can lose objects. LOCK_ID is the ID of the
    /// "Error acquiring the state lock" message.
    ForceUnlock(ForceUnlockArgs),
}

impl Command {
    /// Takes out the positional DIR argument, which means -chdir=DIR.
    ///
    /// Decision: Terraform 0.x read the configuration from DIR but kept the
    /// state in the working directory, and Terraform 1.x refuses DIR. A
    /// mix of directories is the confusing part, so fleetform takes DIR as
    /// -chdir=DIR: everything (configuration, state, .fleetform/,
    /// .terraform/) is DIR's. An argument to apply that is a file is a
    /// saved plan, and stays.
    pub fn take_dir(&mut self) -> Option<PathBuf> {
        let dir = |d: &mut Option<PathBuf>| d.take_if(|p| !p.is_file());
        match self {
            Command::Plan(p) => dir(&mut p.run.dir),
            Command::Apply(a) | Command::Destroy(a) => dir(&mut a.run.dir),
            Command::Refresh(r) => dir(&mut r.dir),
            Command::Validate(d) => d.dir.take(),
            Command::Graph(g) => g.dir.take(),
            Command::Init(i) => i.dir.take(),
            Command::Providers(ProvidersArgs {
                command: Some(ProvidersCommand::Schema(a)),
                ..
            }) => a.dir.take(),
            Command::Providers(p) => p.dir.take(),
            Command::Get(g) => g.dir.take(),
            _ => None,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum WorkspaceCommand {
    /// Create a workspace (empty state) and select it.
    New(WorkspaceNameArg),
    /// Select the workspace the commands in this directory use.
    Select(WorkspaceSelectArgs),
    /// List the workspaces; the selected one is marked with `*`.
    List,
    /// Print the name of the selected workspace.
    Show,
    /// Delete a workspace and its state. It must not be selected, and its
    /// state must be empty (destroy first) unless -force is given.
    Delete(WorkspaceDeleteArgs),
}

#[derive(Args, Debug, Clone)]
pub struct WorkspaceNameArg {
    /// Letters, digits, - and _.
    pub name: String,
}

#[derive(Args, Debug, Clone)]
pub struct WorkspaceSelectArgs {
    /// Create the workspace when it does not exist.
    #[arg(long)]
    pub or_create: bool,
    pub name: String,
}

#[derive(Args, Debug, Clone)]
pub struct WorkspaceDeleteArgs {
    /// Delete even when the state still tracks objects: fleetform forgets
    /// them, and they go on running unmanaged.
    #[arg(long)]
    pub force: bool,
    pub name: String,
}

#[derive(Args, Debug, Clone)]
pub struct ForceUnlockArgs {
    /// The lock's ID.
    pub lock_id: String,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub force: bool,
}

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// List the runs the coordinator knows: running ones, those finished
    /// since it started, and those it resumed after a restart.
    List,
    /// Show a run's events from its start and follow it to its end. The
    /// exit status is the run's: 0 when it succeeded, 1 otherwise.
    Watch(RunIdArg),
    /// Cancel a run: nothing new starts, providers of operations in
    /// progress are asked to stop, and what completed stays in the state.
    Cancel(RunIdArg),
    /// Show a run: its workspace, command and status, and the operations it
    /// left interrupted (a worker stopped while the provider may have been
    /// acting), each with what to do about it. A run this coordinator does
    /// not know (it restarted since) is looked up in the -workspace's state.
    Show(RunIdArg),
}

#[derive(Args, Debug, Clone)]
pub struct RunIdArg {
    /// The run's id, as `fleetform runs list` shows it.
    pub run_id: String,
}

#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    #[command(flatten)]
    pub vars: VarArgs,
    /// Resource instance address to import to, e.g. sim_object.a.
    pub address: String,
    /// The provider's id of the existing object.
    pub id: String,
}

#[derive(Args, Debug, Clone)]
pub struct ProvidersMirrorArgs {
    /// The mirror directory.
    pub target: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct ProvidersArgs {
    #[command(subcommand)]
    pub command: Option<ProvidersCommand>,
    /// Run in DIR, exactly as -chdir=DIR does.
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct GetArgs {
    /// Install every module again, even those installed from the same source.
    #[arg(long)]
    pub update: bool,
    /// Run in DIR, exactly as -chdir=DIR does.
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct InitArgs {
    /// Install every module again, even those installed from the same source.
    #[arg(long)]
    pub upgrade: bool,
    /// Install modules; -get=false skips the module step.
    #[arg(long = "get", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub get: bool,
    /// Take over the Terraform state of this directory (terraform.tfstate,
    /// or the file a `backend "local"` block names; a non-default
    /// workspace's under terraform.tfstate.d/): it is pushed into
    /// fleetform's state for the selected workspace, lineage and serial
    /// kept, and the file is left as it is. Refused when fleetform's state
    /// is of another lineage or newer.
    #[arg(long)]
    pub migrate_state: bool,
    /// Accepted for Terraform compatibility: fleetform asks nothing when it
    /// migrates a state.
    #[arg(long)]
    pub force_copy: bool,
    /// Bind this directory to project NAME, recorded in .fleetform/project:
    /// every later command here uses NAME's workspaces and states. A
    /// coordinator keeps each project's states apart, so configurations
    /// sharing a fleet never share a state. Needed for every command that
    /// uses a state through a coordinator (or FLEETFORM_PROJECT=NAME for a
    /// directory bound to none). Leaving a binding whose states hold
    /// objects needs -migrate-state (copy them into NAME) or -reconfigure.
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// With -project: switch to the new project's states and leave the old
    /// binding's states as they are (Terraform's -reconfigure).
    #[arg(long, requires = "project")]
    pub reconfigure: bool,
    /// Run in DIR, exactly as -chdir=DIR does: DIR's configuration, state
    /// and .fleetform/ (default: the working directory).
    pub dir: Option<PathBuf>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum ProvidersCommand {
    /// Check the providers installed here against .terraform.lock.hcl and
    /// write it (the lock step of `init`): the selected version, the
    /// configuration's constraints and the package's h1: hash.
    Lock,
    /// Copy the package of every provider the configuration needs, as
    /// installed here, into DIR in the layout a filesystem_mirror reads.
    Mirror(ProvidersMirrorArgs),
    /// Print the schemas of the configuration's providers as JSON, in the
    /// format of `terraform providers schema -json`.
    Schema(ProvidersSchemaArgs),
}

#[derive(Args, Debug, Clone)]
pub struct ProvidersSchemaArgs {
    /// Print as JSON (required, as in Terraform).
    #[arg(long)]
    pub json: bool,
    /// Run in DIR, exactly as -chdir=DIR does: DIR's configuration, state
    /// and .fleetform/ (default: the working directory).
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct ValidateArgs {
    /// Print Terraform's validate JSON (format_version, valid,
    /// error_count, warning_count, diagnostics).
    #[arg(long)]
    pub json: bool,
    /// Run in DIR, exactly as -chdir=DIR does (default: the working
    /// directory).
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct FmtArgs {
    /// Rewrite nothing; exit 3 if any file is not formatted.
    #[arg(long)]
    pub check: bool,
    /// Show the changes as a unified diff.
    #[arg(long)]
    pub diff: bool,
    /// Descend into subdirectories.
    #[arg(long)]
    pub recursive: bool,
    /// List the files whose formatting changes (-list=false: do not).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub list: bool,
    /// Write the changes to the files (-write=false: do not).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub write: bool,
    /// Files or directories (default: the working directory); `-` for
    /// standard input.
    pub targets: Vec<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ConsoleArgs {
    #[command(flatten)]
    pub vars: VarArgs,
}

#[derive(Args, Debug, Clone)]
pub struct TestArgs {
    #[command(flatten)]
    pub vars: VarArgs,
    /// Run only this test file (a path from the working directory, e.g.
    /// tests/a.tftest.hcl); repeat for several.
    #[arg(long, value_name = "FILE")]
    pub filter: Vec<String>,
    /// The directory of test files besides the working directory.
    #[arg(long, default_value = "tests", value_name = "DIR")]
    pub test_directory: String,
    /// Print the plan or the state of each run after its status.
    #[arg(long)]
    pub verbose: bool,
    /// Machine-readable output: not supported yet (refused).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct VersionArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct LoginArgs {
    /// The coordinator: a host (`coord.example.com:7400`, reached over
    /// https) or its URL (`http://127.0.0.1:7400` for one on loopback).
    /// Default: the coordinator of -coordinator / FLEETFORM_COORDINATOR.
    pub host: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum MetadataCommand {
    /// Print the signatures of the built-in functions as JSON, in
    /// Terraform's format (-json is required, as in Terraform).
    Functions(MetadataFunctionsArgs),
}

#[derive(Args, Debug)]
pub struct MetadataFunctionsArgs {
    /// Print as JSON (the only format).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone, Default)]
pub struct DirArg {
    /// Run in DIR, exactly as -chdir=DIR does: DIR's configuration, state
    /// and .fleetform/ (default: the working directory).
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    #[command(flatten)]
    pub vars: VarArgs,
    /// Refresh prior objects from the real infrastructure before planning;
    /// -refresh=false plans against the state as recorded.
    #[arg(long = "refresh", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub refresh: bool,
    /// Only update the state to match the real objects; change nothing.
    #[arg(long)]
    pub refresh_only: bool,
    /// Reuse an object read no longer ago than DURATION (90s, 5m, 1h30m)
    /// by an earlier plan, instead of reading it again; the plan says how
    /// old its oldest reused object is. An object the plan changes is read again first (see
    /// -reread-changed). Default: every object is read, as Terraform does.
    #[arg(long, value_name = "DURATION")]
    pub refresh_max_age: Option<String>,
    /// With -refresh-max-age: read again, before the plan is final, every
    /// reused object whose plan changes it. -reread-changed=false plans
    /// such changes on the earlier read.
    #[arg(long = "reread-changed", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub reread_changed: bool,
    /// Plan to replace this resource instance even if it could be updated. Repeatable.
    #[arg(long = "replace", value_name = "ADDR")]
    pub replace: Vec<String>,
    /// Plan only this resource (or instance) and what it depends on. Repeatable.
    #[arg(long = "target", value_name = "ADDR")]
    pub targets: Vec<String>,
    /// Plan everything except this resource (or instance) and what depends on it. Repeatable.
    #[arg(long = "exclude", value_name = "ADDR")]
    pub excludes: Vec<String>,
    /// Print machine-readable JSON messages, one per line (Terraform's UI format).
    #[arg(long)]
    pub json: bool,
    /// Limit the operations of this run in flight at once (creates,
    /// updates, deletes, provisioners) to N. Default: the workers' slots
    /// bound it (embedded mode: 256 at once; a worker: 64), and the
    /// coordinator dispatches at most 4,096 ahead of their answers (raise it
    /// with this option for a fleet of more than 4,096 slots).
    /// Planning is not limited by it (it has its own window of 4,096).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub parallelism: Option<u32>,
    /// Plan even when the state holds only objects of resources this
    /// configuration does not declare. Without it such a run stops before
    /// planning: that state is most likely another configuration's, and the
    /// plan would destroy every object in it.
    #[arg(long)]
    pub adopt_state: bool,
    /// Not supported: fleetform keeps the state in its store (see
    /// `state pull`, `state push`).
    #[arg(long, value_name = "PATH", hide = true)]
    pub state: Option<String>,
    #[arg(long, value_name = "PATH", hide = true)]
    pub state_out: Option<String>,
    #[arg(long, value_name = "PATH", hide = true)]
    pub backup: Option<String>,
    /// Run in DIR, exactly as -chdir=DIR does: DIR's configuration, state
    /// and .fleetform/ (default: the working directory). For apply, a plan
    /// file written by `plan -out` instead applies exactly that plan.
    pub dir: Option<PathBuf>,
}

impl RunArgs {
    /// The validated planning options, or the diagnostic that explains why
    /// they cannot be used (checked before anything is submitted).
    pub fn plan_options(&self, destroy: bool) -> Result<PlanOptions, Diagnostic> {
        if !self.targets.is_empty() && !self.excludes.is_empty() {
            return Err(Diagnostic::error(
                "Invalid combination of arguments",
                "-target and -exclude cannot be used together. Please remove one of the flags.",
            ));
        }
        if self.refresh_only && destroy {
            return Err(Diagnostic::error(
                "Incompatible plan mode options",
                "The -destroy option cannot be used together with -refresh-only.",
            ));
        }
        if self.refresh_only && !self.refresh {
            return Err(Diagnostic::error(
                "Incompatible refresh options",
                "It doesn't make sense to use -refresh-only at the same time as -refresh=false, because fleetform would have nothing to do.",
            ));
        }
        if let Some((flag, _)) = [
            ("-state", &self.state),
            ("-state-out", &self.state_out),
            ("-backup", &self.backup),
        ]
        .into_iter()
        .find(|(_, v)| v.is_some())
        {
            return Err(Diagnostic::error(
                format!("{flag} is not supported"),
                format!(
                    "fleetform keeps each workspace's state in its state store, with every snapshot in its history, not in local files. To bring a Terraform state file in, use `fleetform state push FILE`; to get the state as a file, `fleetform state pull > FILE`. Remove {flag}."
                ),
            ));
        }
        let refresh_max_age_ms = match &self.refresh_max_age {
            None => None,
            Some(text) => Some(refresh_max_age(text, self.refresh, self.refresh_only)?),
        };
        if !self.reread_changed && refresh_max_age_ms.is_none() {
            // Without -refresh-max-age every object is read fresh, so there
            // is nothing to read again: accepting the flag would let a user
            // believe a plan rests on earlier reads when it does not.
            return Err(Diagnostic::error(
                "Incompatible refresh options",
                "-reread-changed=false only applies to objects reused under -refresh-max-age; without -refresh-max-age every object is read, and nothing is reused. Add -refresh-max-age=DURATION or remove -reread-changed=false.",
            ));
        }
        for addr in &self.replace {
            let parsed = parse_addr(addr, "replace")?;
            if parsed.resource.resource.mode == ResourceMode::Data {
                return Err(Diagnostic::error(
                    "Invalid replace address",
                    format!(
                        "{addr} is a data resource: only managed resource instances can be replaced."
                    ),
                ));
            }
        }
        for addr in &self.targets {
            parse_target(addr, "target")?;
        }
        for addr in &self.excludes {
            parse_target(addr, "exclude")?;
        }
        Ok(PlanOptions {
            refresh: self.refresh,
            refresh_only: self.refresh_only,
            replace: self.replace.clone(),
            targets: self.targets.clone(),
            excludes: self.excludes.clone(),
            parallelism: self.parallelism,
            adopt_state: self.adopt_state,
            refresh_max_age_ms,
            no_reread_changed: !self.reread_changed,
            ..PlanOptions::default()
        })
    }
}

/// `-refresh-max-age`'s value in milliseconds, or why it cannot be used.
fn refresh_max_age(text: &str, refresh: bool, refresh_only: bool) -> Result<u64, Diagnostic> {
    if !refresh {
        return Err(Diagnostic::error(
            "Incompatible refresh options",
            "-refresh-max-age chooses which objects a plan reads again; with -refresh=false it reads none. Remove one of the two.",
        ));
    }
    if refresh_only {
        return Err(Diagnostic::error(
            "Incompatible refresh options",
            "-refresh-only reads every object again: that is what it is for, so it reuses no earlier read. Remove -refresh-max-age, or plan without -refresh-only.",
        ));
    }
    match fleetform_lang::eval::parse_go_duration(text) {
        Ok(age) => Ok(u64::try_from(age.as_millis()).unwrap_or(u64::MAX)),
        Err(e) => Err(Diagnostic::error(
            "Invalid value for -refresh-max-age",
            format!("{e}. Give a duration such as 90s, 5m or 1h30m."),
        )),
    }
}

/// `-var NAME=VALUE` and `-var-file=FILE` in the order given: a later one
/// overrides an earlier one whichever flag each is, so the order across the
/// two flags matters. Clap's derive keeps one list per flag, so this reads
/// the argument positions itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VarArgs(pub Vec<VarArg>);

#[derive(Debug, Clone, PartialEq)]
pub enum VarArg {
    /// `-var NAME=VALUE`, unsplit.
    Var(String),
    /// `-var-file=FILE`, as given.
    File(String),
}

const VAR_ID: &str = "var";
const VAR_FILE_ID: &str = "var_file";

impl clap::FromArgMatches for VarArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut items: Vec<(usize, VarArg)> = Vec::new();
        let mut take = |id: &str, make: fn(String) -> VarArg| {
            if let (Some(values), Some(indices)) = (m.get_many::<String>(id), m.indices_of(id)) {
                items.extend(indices.zip(values).map(|(i, v)| (i, make(v.clone()))));
            }
        };
        take(VAR_ID, VarArg::Var);
        take(VAR_FILE_ID, VarArg::File);
        items.sort_by_key(|(i, _)| *i);
        Ok(VarArgs(items.into_iter().map(|(_, a)| a).collect()))
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for VarArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            clap::Arg::new(VAR_ID)
                .long("var")
                .value_name("NAME=VALUE")
                .action(clap::ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Set a variable: -var 'name=value'. Repeatable."),
        )
        .arg(
            clap::Arg::new(VAR_FILE_ID)
                .long("var-file")
                .value_name("FILE")
                .action(clap::ArgAction::Append)
                .value_parser(clap::value_parser!(String))
                .help("Set variables from a .tfvars (or .tfvars.json) file. Repeatable; later -var and -var-file options override earlier ones."),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// A resource or resource instance address (`null_resource.a`, `x.b[0]`).
fn parse_addr(addr: &str, flag: &str) -> Result<AbsResourceInstance, Diagnostic> {
    addr.parse()
        .map_err(|e: fleetform_shared::addr::AddrParseError| {
            Diagnostic::error(
                format!("Invalid {flag} address"),
                format!("-{flag}={addr}: {}.", e.reason),
            )
        })
}

/// A module, resource or resource instance address (`module.a`,
/// `module.a["k"].x.y`, `x.y[0]`).
fn parse_target(addr: &str, flag: &str) -> Result<Target, Diagnostic> {
    addr.parse()
        .map_err(|e: fleetform_shared::addr::AddrParseError| {
            Diagnostic::error(
                format!("Invalid {flag} address"),
                format!("-{flag}={addr}: {}.", e.reason),
            )
        })
}

#[derive(Args, Debug, Clone)]
pub struct PlanArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Exit 0 when there are no changes, 2 when there are, 1 on error.
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Plan to destroy every object in the state.
    #[arg(long)]
    pub destroy: bool,
    /// Write the plan to FILE; `fleetform apply FILE` applies exactly it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// For `import` blocks whose target has no resource block: write one
    /// from the imported object to FILE (a new file), and plan with it.
    #[arg(long, value_name = "FILE")]
    pub generate_config_out: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ModulesArgs {
    /// Print the modules as JSON: each call's key, source and version.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ShowArgs {
    /// Print Terraform's JSON representation of the plan or state.
    #[arg(long)]
    pub json: bool,
    /// A plan file written by `plan -out` (default: show the state).
    pub file: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct GraphArgs {
    /// Draw the apply graph of this saved plan instead of planning now.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Which graph. Without -type (and without -plan): the configuration's
    /// resources only, a cluster per module, as Terraform's default graph.
    /// `apply` (the default with -plan=FILE): Terraform's apply graph of
    /// -plan=FILE (the configuration's nodes and each change's operations),
    /// or without a plan file that of no changes, the configuration's;
    /// `plan` or `plan-refresh-only`: Terraform's plan graph of the
    /// configuration (of -plan=FILE's with one), without planning;
    /// `plan-destroy`: the configuration's resources and their
    /// dependencies, edges reversed (the order a destroy takes).
    #[arg(long = "type", value_name = "TYPE", value_parser = ["apply", "plan", "plan-refresh-only", "plan-destroy"])]
    pub graph_type: Option<String>,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Run in DIR, exactly as -chdir=DIR does: DIR's configuration, state
    /// and .fleetform/ (default: the working directory).
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub run: RunArgs,
    /// Apply without asking for approval.
    #[arg(long)]
    pub auto_approve: bool,
}

#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print a string output's value without quotes.
    #[arg(long)]
    pub raw: bool,
    /// Name of one output (default: all).
    pub name: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum StateCommand {
    /// List resource instances in the state.
    List,
    /// Show the attributes of one resource instance.
    Show(AddressArg),
    /// Print the state in Terraform's state file format (version 4).
    Pull(StatePullArgs),
    /// Replace the workspace's state with a Terraform state file (version
    /// 4, e.g. a terraform.tfstate, or what `state pull` printed). Refused
    /// when the file is of another lineage than the workspace's state, or
    /// older (lower serial), unless -force.
    Push(StatePushArgs),
    /// List the snapshots of the state: serial, when, which run wrote it,
    /// lineage. Every snapshot is kept; `state pull -serial=N` prints one.
    History,
    /// Give objects a new address without touching them: a module
    /// (`module.a` to `module.b["x"]`), a resource with all its instances
    /// (`x.a` to `x.b`), or one instance (`x.a[0]` to `x.b`). Use it after
    /// renaming in the configuration (or write a `moved` block instead).
    /// The types must match, and the destination must be free.
    Mv(StateMvArgs),
    /// Forget objects: fleetform stops managing them, and they go on
    /// existing. Each ADDRESS is an instance, a resource (all its
    /// instances) or a module (everything in it).
    Rm(StateRmArgs),
    /// Make objects managed by provider FROM managed by TO from now on
    /// (e.g. hashicorp/aws to registry.acme.corp/acme/aws).
    ReplaceProvider(StateReplaceProviderArgs),
}

#[derive(Args, Debug, Clone)]
pub struct StateMvArgs {
    /// Say what would move; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    pub source: String,
    pub destination: String,
}

#[derive(Args, Debug, Clone)]
pub struct StateRmArgs {
    /// Say what would be removed; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[arg(required = true, value_name = "ADDRESS")]
    pub addresses: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct StateReplaceProviderArgs {
    /// Do not ask for confirmation.
    #[arg(long)]
    pub auto_approve: bool,
    /// The provider's source address now, e.g. hashicorp/aws.
    pub from: String,
    /// The new one, e.g. registry.acme.corp/acme/aws.
    pub to: String,
}

#[derive(Args, Debug, Clone)]
pub struct StatePushArgs {
    /// Push even a state of another lineage, or an older one.
    #[arg(long)]
    pub force: bool,
    /// The state file; `-` reads standard input.
    pub file: PathBuf,
}

#[derive(Args, Debug, Clone)]
pub struct StatePullArgs {
    /// Print this snapshot instead of the latest (see `state history`).
    #[arg(long, value_name = "N")]
    pub serial: Option<u64>,
}

#[derive(Args, Debug, Clone)]
pub struct AddressArg {
    /// Resource instance address, e.g. sim_object.a[0].
    pub address: String,
}

/// Rewrites Terraform-style `-long-flag` arguments to `--long-flag` so clap
/// accepts both spellings. Single letters (`-h`) are left alone, as is
/// everything after `--` and anything that is a value (`-var` takes one).
pub fn normalize<I: IntoIterator<Item = String>>(args: I) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest_literal = false;
    for (i, a) in args.into_iter().enumerate() {
        if i == 0 || rest_literal {
            out.push(a);
            continue;
        }
        if a == "--" {
            rest_literal = true;
            out.push(a);
            continue;
        }
        let name = a.trim_start_matches('-');
        let single_dash_long = a.starts_with('-')
            && !a.starts_with("--")
            && name.len() > 1
            && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
        if single_dash_long {
            out.push(format!("-{a}"));
        } else {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(normalize(args.iter().map(|s| s.to_string()))).unwrap()
    }

    #[test]
    fn accepts_terraform_style_flags() {
        let cli = parse(&[
            "fleetform",
            "-chdir=examples/x",
            "apply",
            "-auto-approve",
            "-var",
            "n=3",
            "-var=m=4",
        ]);
        assert_eq!(
            cli.chdir.as_deref(),
            Some(std::path::Path::new("examples/x"))
        );
        match cli.command {
            Command::Apply(a) => {
                assert!(a.auto_approve);
                assert_eq!(
                    a.run.vars,
                    VarArgs(vec![VarArg::Var("n=3".into()), VarArg::Var("m=4".into())])
                );
            }
            other => panic!("{other:?}"),
        }
        let cli = parse(&[
            "fleetform",
            "plan",
            "-detailed-exitcode",
            "--refresh=false",
            "dir",
        ]);
        match cli.command {
            Command::Plan(p) => {
                assert!(p.detailed_exitcode);
                assert!(!p.run.refresh);
                assert_eq!(p.run.dir.as_deref(), Some(std::path::Path::new("dir")));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn planning_options_are_repeatable_in_terraform_spelling() {
        let cli = parse(&[
            "fleetform",
            "plan",
            "-replace=null_resource.a",
            "-replace",
            "null_resource.b[0]",
            "-target=null_resource.c",
            "-exclude=null_resource.d",
            "-refresh-only",
            "-json",
            "-out=tf.plan",
        ]);
        let Command::Plan(p) = cli.command else {
            panic!("not a plan")
        };
        assert_eq!(p.run.replace, ["null_resource.a", "null_resource.b[0]"]);
        assert_eq!(p.run.targets, ["null_resource.c"]);
        assert_eq!(p.run.excludes, ["null_resource.d"]);
        assert!(p.run.refresh_only && p.run.json);
        assert_eq!(p.out.as_deref(), Some(std::path::Path::new("tf.plan")));
        let cli = parse(&["fleetform", "show", "-json", "tf.plan"]);
        let Command::Show(s) = cli.command else {
            panic!("not show")
        };
        assert!(s.json);
        assert_eq!(s.file.as_deref(), Some(std::path::Path::new("tf.plan")));
        let cli = parse(&["fleetform", "graph", "-plan=tf.plan"]);
        let Command::Graph(g) = cli.command else {
            panic!("not graph")
        };
        assert_eq!(g.plan.as_deref(), Some(std::path::Path::new("tf.plan")));
    }

    #[test]
    fn planning_options_are_validated_before_submitting() {
        let run = |args: &[&str]| {
            let mut all = vec!["fleetform", "apply"];
            all.extend_from_slice(args);
            let Command::Apply(a) = parse(&all).command else {
                panic!("not apply")
            };
            a.run.plan_options(false)
        };
        let err = run(&["-target=null_resource.a", "-exclude=null_resource.b"]).unwrap_err();
        assert_eq!(err.summary, "Invalid combination of arguments");
        assert!(
            err.detail
                .contains("-target and -exclude cannot be used together")
        );
        let err = run(&["-replace=null_resource"]).unwrap_err();
        assert_eq!(err.summary, "Invalid replace address");
        let err = run(&["-replace=data.null_data_source.x"]).unwrap_err();
        assert!(err.detail.contains("data resource"), "{}", err.detail);
        let err = run(&["-target=a.b.c.d"]).unwrap_err();
        assert_eq!(err.summary, "Invalid target address");
        assert!(run(&["-refresh-only", "-refresh=false"]).is_err());
        let err = run(&["-refresh-max-age=5 minutes"]).unwrap_err();
        assert_eq!(err.summary, "Invalid value for -refresh-max-age");
        assert!(run(&["-refresh-max-age=5m", "-refresh=false"]).is_err());
        let aged = run(&["-refresh-max-age=1m30s", "-reread-changed=false"]).unwrap();
        assert_eq!(aged.refresh_max_age_ms, Some(90_000));
        assert!(aged.no_reread_changed);
        let err = run(&["-reread-changed=false"]).unwrap_err();
        assert_eq!(err.summary, "Incompatible refresh options");
        assert!(
            err.detail.contains("-reread-changed=false"),
            "{}",
            err.detail
        );
        assert!(!run(&["-reread-changed=true"]).unwrap().no_reread_changed);
        let err = run(&["-refresh-only", "-refresh-max-age=5m"]).unwrap_err();
        assert!(
            err.detail.contains("-refresh-only reads every object"),
            "{}",
            err.detail
        );
        assert_eq!(run(&[]).unwrap().refresh_max_age_ms, None);
        let ok = run(&[
            "-replace=null_resource.a[0]",
            "-exclude=module.m.null_resource.b",
            "-refresh-only",
        ])
        .unwrap();
        assert_eq!(ok.replace, ["null_resource.a[0]"]);
        assert_eq!(ok.excludes, ["module.m.null_resource.b"]);
        assert!(ok.refresh_only && ok.refresh);
    }

    #[test]
    fn var_and_var_file_keep_their_order_across_the_two_flags() {
        let cli = parse(&[
            "fleetform",
            "plan",
            "-var-file=a.tfvars",
            "-var",
            "x=1",
            "-var-file",
            "b.tfvars.json",
            "-var=y=2",
        ]);
        let Command::Plan(p) = cli.command else {
            panic!("not a plan")
        };
        assert_eq!(
            p.run.vars.0,
            [
                VarArg::File("a.tfvars".into()),
                VarArg::Var("x=1".into()),
                VarArg::File("b.tfvars.json".into()),
                VarArg::Var("y=2".into()),
            ]
        );
        let cli = parse(&["fleetform", "import", "-var-file=c.tfvars", "x.a", "id"]);
        let Command::Import(i) = cli.command else {
            panic!("not import")
        };
        assert_eq!(i.vars.0, [VarArg::File("c.tfvars".into())]);
    }

    #[test]
    fn init_takes_terraform_flags() {
        let Command::Init(i) =
            parse(&["fleetform", "init", "-upgrade", "-get=false", "live"]).command
        else {
            panic!("not init")
        };
        assert!(i.upgrade && !i.get);
        assert_eq!(i.dir.as_deref(), Some(std::path::Path::new("live")));
        let Command::Init(i) = parse(&["fleetform", "-chdir=x", "init"]).command else {
            panic!("not init")
        };
        assert!(!i.upgrade && i.get && i.dir.is_none());
    }

    #[test]
    fn values_that_look_like_flags_after_double_dash_are_kept() {
        assert_eq!(
            normalize(["x".into(), "--".into(), "-abc".into()]),
            ["x", "--", "-abc"]
        );
        assert_eq!(normalize(["x".into(), "-h".into()]), ["x", "-h"]);
    }
}
