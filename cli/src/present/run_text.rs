//! Rendering run events for people, the way Terraform prints a run.

use crate::closed_output::{self, Stream};
pub use crate::present::diagnostic_text::{
    diagnostic, diagnostic_wrapped, fill, set_compact_warnings, set_plain,
};
use crate::present::plan_text::write_plan;
use crate::present::run_view::{RunView, prior_ids};
use fleetform_shared::AbsResourceInstance;
use fleetform_shared::diag::{Diagnostic, Diagnostics};
use fleetform_shared::plan::ChangeSummary;
use fleetform_shared::state::OutputState;
use fleetform_shared::value::Value;
use fleetform_shared::wire::{ApplyOp, Operation, RunEvent};
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// `-compact-warnings`: warnings as one line each from now on.
/// `fleetform refresh`: Terraform's refresh command shows each object it
/// read and the outputs, not the refresh-only plan and "Apply complete!"
/// that `apply -refresh-only` shows.
static REFRESH_VIEW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn set_refresh_view(on: bool) {
    REFRESH_VIEW.store(on, std::sync::atomic::Ordering::Relaxed);
}

pub fn refresh_view() -> bool {
    REFRESH_VIEW.load(std::sync::atomic::Ordering::Relaxed)
}

/// Warnings the coordinator sends about the run's own progress, shown when
/// they come rather than after the plan.
const PROGRESS_NOTICES: &[&str] = &["Waiting for the state store"];

/// How often Terraform says an operation is still going.
const STILL_EVERY_SECS: u64 = 10;

/// An operation in progress, for "Still creating... [10s elapsed]".
struct InFlight {
    since: Instant,
    op: ApplyOp,
    /// " [id=...", when the object has one.
    id: Option<String>,
    /// The last elapsed time said, in seconds.
    said: u64,
}

pub struct Renderer {
    pub sources: BTreeMap<String, String>,
    pub operation: Operation,
    /// False when applying a saved plan: it was shown when it was made.
    pub show_plan: bool,
    /// Whether the plan refreshed the prior objects (not `-refresh=false`):
    /// then each one read is said before the plan, as Terraform does.
    pub refreshed: bool,
    last_progress: Instant,
    planning_shown: bool,
    applying: bool,
    /// The `id` of each prior object, for "Destroying... [id=...]".
    prior_ids: HashMap<(AbsResourceInstance, Option<String>), String>,
    in_flight: HashMap<(AbsResourceInstance, Option<String>), InFlight>,
    /// The run's root outputs, shown after the summary (as Terraform does).
    outputs: Option<BTreeMap<String, OutputState>>,
    /// A large apply on a terminal: the summary, and the per-instance lines
    /// in a log file.
    live: Option<crate::present::live::Live>,
    /// The planned operations by kind, for the live summary once applying
    /// starts.
    planned_totals: Option<BTreeMap<&'static str, usize>>,
    /// Whether to say "Importing..." for the plan's imports as applying
    /// starts (not for the `import` command, which says it its own way).
    pub say_imports: bool,
    /// The plan's imports (address, id), said once applying starts.
    imports: Vec<(AbsResourceInstance, String)>,
    /// Warnings found while planning, said after the plan as Terraform
    /// does (an error says them at once, before itself).
    held_warnings: Vec<Diagnostic>,
    /// Whether the plan was shown (or will not be): warnings go out as they
    /// come from then on.
    planned: bool,
    /// The run only plans (`plan`, `plan -destroy`): its plan is shown when
    /// the run ends.
    pub plan_only: bool,
    pending_plan: Option<std::sync::Arc<fleetform_shared::plan::Plan>>,
    /// "Closing..." lines of the plan's ephemeral resources: Terraform's
    /// walk closes them after the objects it refreshed, whose lines this
    /// view writes from the plan, so they wait for it.
    held_closes: Vec<String>,
}

impl Renderer {
    pub fn new(sources: BTreeMap<String, String>, operation: Operation) -> Renderer {
        Renderer {
            sources,
            operation,
            show_plan: true,
            refreshed: true,
            last_progress: Instant::now(),
            planning_shown: false,
            applying: false,
            prior_ids: HashMap::new(),
            in_flight: HashMap::new(),
            outputs: None,
            live: None,
            planned_totals: None,
            say_imports: true,
            imports: Vec::new(),
            held_warnings: Vec::new(),
            planned: false,
            plan_only: false,
            pending_plan: None,
            held_closes: Vec::new(),
        }
    }

    /// Applying starts: the live summary or a blank line, then the imports
    /// it records, as Terraform says them ("Importing... [id=…]"). Called
    /// at the first operation, or at the end when there was none.
    fn start_applying(&mut self) {
        if self.applying {
            return;
        }
        self.applying = true;
        let op = format!("{:?}", self.operation).to_lowercase();
        self.live = self
            .planned_totals
            .take()
            .and_then(|t| crate::present::live::Live::start(t, &op));
        for (addr, id) in std::mem::take(&mut self.imports) {
            self.instance_line(&format!("{addr}: Importing... [id={id}]"));
            self.instance_line(&format!("{addr}: Import complete [id={id}]"));
        }
    }

    /// A per-instance line: on the terminal, or in the live summary's log.
    /// An ephemeral resource's close while planning waits for the plan.
    fn close_line(&mut self, op: ApplyOp, line: &str) {
        if op == ApplyOp::Close && !self.planned {
            self.held_closes.push(line.to_string());
        } else {
            self.instance_line(line);
        }
    }

    fn release_closes(&mut self) {
        for line in std::mem::take(&mut self.held_closes) {
            self.instance_line(&line);
        }
    }

    fn instance_line(&mut self, line: &str) {
        match &mut self.live {
            Some(live) => live.log(line),
            None => println!("{line}"),
        }
    }

    /// Each operation in progress with its seconds so far.
    fn running(&self) -> Vec<(String, u64)> {
        self.in_flight
            .iter()
            .map(|((addr, deposed), f)| {
                (
                    format!("{addr}{}", deposed_suffix(deposed)),
                    f.since.elapsed().as_secs(),
                )
            })
            .collect()
    }

    /// The "Still creating..." lines due now, in address order.
    fn still_lines(&mut self, now: Instant) -> Vec<String> {
        let mut lines = Vec::new();
        for ((addr, deposed), f) in &mut self.in_flight {
            let elapsed = now.duration_since(f.since).as_secs();
            let due = elapsed / STILL_EVERY_SECS * STILL_EVERY_SECS;
            if due == 0 || due <= f.said {
                continue;
            }
            f.said = due;
            let verb = match f.op {
                ApplyOp::Create => "creating",
                ApplyOp::Update => "modifying",
                ApplyOp::Delete => "destroying",
                ApplyOp::Read => "reading",
                ApplyOp::Open => "opening",
                ApplyOp::Renew => "renewing",
                ApplyOp::Close => "closing",
            };
            let id =
                f.id.as_ref()
                    .map(|id| format!("id={id}, "))
                    .unwrap_or_default();
            lines.push(format!(
                "{addr}{}: Still {verb}... [{id}{due}s elapsed]",
                deposed_suffix(deposed)
            ));
        }
        lines.sort();
        lines
    }

    pub fn diagnostics(&mut self, diags: &Diagnostics) {
        if diags.is_empty() {
            return;
        }
        // A notice about the run's own progress (it waits for the state
        // store) is said at once; the configuration's warnings wait for the
        // plan, as Terraform shows them.
        let progress = diags
            .iter()
            .all(|d| PROGRESS_NOTICES.contains(&d.summary.as_str()));
        if self.show_plan && !self.planned && !diags.has_errors() && !progress {
            self.held_warnings.extend(diags.iter().cloned());
            return;
        }
        // The errors that stopped a plan come after the changes planned
        // before them, which are shown when the run ends.
        if self.pending_plan.as_ref().is_some_and(|p| p.errored) && !progress {
            self.held_warnings.extend(diags.iter().cloned());
            return;
        }
        self.release_warnings();
        if let Some(live) = &mut self.live {
            live.clear();
        }
        // Terraform writes warnings to standard output, errors to standard
        // error, each in source order.
        for d in crate::present::diagnostic_text::in_source_order(diags) {
            if d.is_error() {
                eprint!("{}", diagnostic(d, &self.sources));
            } else {
                print!("{}", diagnostic(d, &self.sources));
            }
        }
        let running = self.running();
        if let Some(live) = &mut self.live {
            live.draw(&running);
        }
    }

    /// The refreshed objects and the plan, on standard output.
    fn show_planned(&mut self, plan: &fleetform_shared::plan::Plan) {
        if refresh_view() {
            for line in refreshed_lines(plan) {
                println!("{line}");
            }
            self.release_closes();
        } else if self.show_plan {
            // Printed as it is rendered, not held whole.
            use std::io::Write as _;
            // A failed write ends the command as a failed print! does
            // (crate::closed_output): by SIGPIPE when nobody reads any more.
            let failed = |e: std::io::Error| closed_output::write_error(Stream::Stdout, &e);
            let mut stdout = std::io::stdout().lock();
            if self.refreshed {
                for line in refreshed_lines(plan) {
                    writeln!(stdout, "{line}").unwrap_or_else(failed);
                }
            }
            for line in std::mem::take(&mut self.held_closes) {
                writeln!(stdout, "{line}").unwrap_or_else(failed);
            }
            stdout.write_all(b"\n").unwrap_or_else(failed);
            write_plan(plan, &mut |part: &mut String| {
                stdout.write_all(part.as_bytes()).unwrap_or_else(failed);
                part.clear();
            });
            stdout.flush().unwrap_or_else(failed);
        }
    }

    /// The warnings held back while planning, now. An apply evaluates its
    /// checks again once applied: Terraform shows only those.
    fn release_warnings(&mut self) {
        self.planned = true;
        let mut held = std::mem::take(&mut self.held_warnings);
        if self.operation != Operation::Plan {
            held.retain(|d| !d.summary.starts_with("Check block assertion"));
        }
        if !held.is_empty() {
            self.diagnostics(&Diagnostics(held));
        }
    }

    /// The outputs a run that applied nothing shows: the plan's values (no
    /// apply walk sent them).
    pub fn outputs_from_plan(&mut self, plan: &fleetform_shared::plan::Plan) {
        if self.outputs.is_none() {
            self.outputs = Some(
                plan.outputs
                    .iter()
                    .filter(|(_, o)| o.action != fleetform_shared::plan::Action::Delete)
                    .map(|(name, o)| {
                        let state = OutputState {
                            value: o.after.clone(),
                            sensitive: o.sensitive,
                        };
                        (name.clone(), state)
                    })
                    .collect(),
            );
        }
    }

    /// The end of `fleetform refresh`: the outputs alone.
    pub fn refresh_complete(&mut self) {
        if let Some(outputs) = &self.outputs {
            print_outputs(outputs);
        }
    }

    /// "Apply complete!" (or "Destroy complete!"), then the outputs.
    pub fn apply_complete(&mut self, summary: &ChangeSummary) {
        if let Some(mut live) = self.live.take() {
            live.finish(&[]);
        }
        if self.operation == Operation::Destroy {
            println!(
                "\nDestroy complete! Resources: {} destroyed.",
                summary.destroy
            );
        } else {
            println!(
                "\nApply complete! Resources: {}",
                crate::present::json_events::applied_counts(summary)
            );
            if let Some(outputs) = &self.outputs {
                print_outputs(outputs);
            }
        }
    }
}

impl RunView for Renderer {
    fn tick(&mut self) {
        for line in self.still_lines(Instant::now()) {
            self.instance_line(&line);
        }
        let running = self.running();
        if let Some(live) = &mut self.live {
            live.draw(&running);
        }
    }

    /// Prints one event; the caller decides on exit codes.
    fn event(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Started { .. } | RunEvent::AwaitingApproval => {}
            RunEvent::Finished { status, .. } => {
                if let Some(plan) = self.pending_plan.take() {
                    self.show_planned(&plan);
                }
                self.release_closes();
                self.release_warnings();
                if *status == fleetform_shared::wire::RunStatus::Succeeded
                    && !self.imports.is_empty()
                {
                    self.start_applying();
                }
                if let Some(mut live) = self.live.take() {
                    let running = self.running();
                    live.finish(&running);
                }
            }
            RunEvent::Diagnostics(d) => self.diagnostics(d),
            RunEvent::Cancelling => {
                eprintln!("Stopping: the run was cancelled; waiting for operations in progress.")
            }
            RunEvent::Planning { done, total } => {
                if self.last_progress.elapsed().as_secs() >= 2
                    || (!self.planning_shown && *total > 100 && done == total)
                {
                    eprintln!("Planning: {done}/{total} instances");
                    self.last_progress = Instant::now();
                    self.planning_shown = true;
                }
            }
            RunEvent::Planned(plan) if plan.errored => {
                // Shown when the run has ended, the errors after it.
                if self.show_plan && !refresh_view() {
                    self.pending_plan = Some(plan.clone());
                }
            }
            RunEvent::Planned(plan) => {
                self.prior_ids = prior_ids(plan);
                let nothing_to_ask = self.plan_only || !plan.has_changes() || refresh_view();
                if nothing_to_ask && (self.show_plan || refresh_view()) {
                    // Nothing to approve: shown once the run has ended and
                    // let go of the workspace, since a reader that stops
                    // reading ends this process, which must not leave the
                    // lock behind.
                    self.pending_plan = Some(plan.clone());
                } else {
                    self.show_planned(plan);
                    self.release_warnings();
                }
                self.planned_totals = Some(crate::present::live::totals(plan));
                let applies = matches!(self.operation, Operation::Apply);
                if applies && self.say_imports {
                    self.imports = plan
                        .imports
                        .iter()
                        .map(|(a, id)| (a.clone(), id.clone()))
                        .collect();
                }
            }
            RunEvent::ApplyStart {
                addr, deposed, op, ..
            } => {
                let verb = match op {
                    ApplyOp::Create => "Creating...",
                    ApplyOp::Update => "Modifying...",
                    ApplyOp::Delete => "Destroying...",
                    ApplyOp::Read => "Reading...",
                    ApplyOp::Open => "Opening...",
                    ApplyOp::Renew => "Renewing...",
                    ApplyOp::Close => "Closing...",
                };
                // A data source read or an ephemeral resource's open while
                // planning is not the apply.
                let planning = (*op == ApplyOp::Read || op.is_ephemeral()) && !self.planned;
                if !planning {
                    self.start_applying();
                }
                if let Some(live) = self.live.as_mut().filter(|_| !op.is_ephemeral()) {
                    live.started();
                }
                let id = match op {
                    ApplyOp::Update | ApplyOp::Delete => self
                        .prior_ids
                        .get(&(addr.clone(), deposed.clone()))
                        .map(|id| format!(" [id={id}]"))
                        .unwrap_or_default(),
                    ApplyOp::Create
                    | ApplyOp::Read
                    | ApplyOp::Open
                    | ApplyOp::Renew
                    | ApplyOp::Close => String::new(),
                };
                self.close_line(
                    *op,
                    &format!("{addr}{}: {verb}{id}", deposed_suffix(deposed)),
                );
                let prior = self.prior_ids.get(&(addr.clone(), deposed.clone()));
                self.in_flight.insert(
                    (addr.clone(), deposed.clone()),
                    InFlight {
                        since: Instant::now(),
                        op: *op,
                        id: prior.filter(|_| *op != ApplyOp::Create).cloned(),
                        said: 0,
                    },
                );
            }
            RunEvent::ApplyComplete {
                addr,
                deposed,
                op,
                id,
                elapsed_ms,
                ..
            } => {
                self.in_flight.remove(&(addr.clone(), deposed.clone()));
                let what = match op {
                    ApplyOp::Create => "Creation complete",
                    ApplyOp::Update => "Modifications complete",
                    ApplyOp::Delete => "Destruction complete",
                    ApplyOp::Read => "Read complete",
                    ApplyOp::Open => "Opening complete",
                    ApplyOp::Renew => "Renewal complete",
                    ApplyOp::Close => "Closing complete",
                };
                let id = match (op, id) {
                    (ApplyOp::Delete | ApplyOp::Open | ApplyOp::Renew | ApplyOp::Close, _)
                    | (_, None) => String::new(),
                    (_, Some(id)) => format!(" [id={id}]"),
                };
                self.close_line(
                    *op,
                    &format!(
                        "{addr}{}: {what} after {}s{id}",
                        deposed_suffix(deposed),
                        elapsed_ms / 1000
                    ),
                );
                if let Some(live) = self.live.as_mut().filter(|_| !op.is_ephemeral()) {
                    live.completed(*op);
                }
            }
            RunEvent::ApplyErrored {
                addr,
                deposed,
                diagnostics,
                ..
            } => {
                self.in_flight.remove(&(addr.clone(), deposed.clone()));
                self.instance_line(&format!("{addr}: failed"));
                if let Some(live) = &mut self.live {
                    live.errored(addr.to_string());
                }
                self.diagnostics(diagnostics);
            }
            RunEvent::ProvisionStart { addr, provisioner } => {
                self.instance_line(&format!("{addr}: Provisioning with '{provisioner}'..."));
            }
            RunEvent::ProvisionOutput {
                addr,
                provisioner,
                line,
            } => {
                self.instance_line(&provision_line(addr, provisioner, line));
            }
            // A failure is reported with the operation's diagnostics.
            RunEvent::ProvisionDone { .. } => {}
            RunEvent::Progress { done, total } => {
                if self.live.is_none() && self.last_progress.elapsed().as_secs() >= 2 {
                    eprintln!("Progress: {done}/{total} operations done");
                    self.last_progress = Instant::now();
                }
            }
            RunEvent::Outputs(outputs) => self.outputs = Some(outputs.clone()),
        }
    }
}

/// One line of provisioner output as Terraform prints it: prefixed with
/// the instance and the provisioner; a blank line stays blank.
fn provision_line(addr: &AbsResourceInstance, provisioner: &str, line: &str) -> String {
    let line = line.trim_end();
    if line.is_empty() {
        String::new()
    } else {
        format!("{addr} ({provisioner}): {line}")
    }
}

fn deposed_suffix(deposed: &Option<String>) -> String {
    deposed
        .as_ref()
        .map(|d| format!(" (deposed object {d})"))
        .unwrap_or_default()
}

fn print_outputs(outputs: &BTreeMap<String, OutputState>) {
    if outputs.is_empty() {
        return;
    }
    println!("\nOutputs:\n");
    for (name, o) in outputs {
        println!(
            "{name} = {}",
            if o.sensitive {
                "<sensitive>".to_string()
            } else {
                hcl_value(&o.value, 0)
            }
        );
    }
}

/// A value in HCL syntax, multi-line for collections (as `terraform output`).
pub fn hcl_value(v: &Value, indent: usize) -> String {
    let pad = " ".repeat(indent + 2);
    match v {
        Value::List(items) if !items.is_empty() => {
            let body: Vec<String> = items
                .iter()
                .map(|i| format!("{pad}{},", hcl_value(i, indent + 2)))
                .collect();
            format!("[\n{}\n{}]", body.join("\n"), " ".repeat(indent))
        }
        // Terraform quotes every key here and does not align the `=`.
        Value::Map(m) if !m.is_empty() => {
            let body: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{pad}{} = {}", key(k), hcl_value(x, indent + 2)))
                .collect();
            format!("{{\n{}\n{}}}", body.join("\n"), " ".repeat(indent))
        }
        Value::List(_) => "[]".into(),
        Value::Map(_) => "{}".into(),
        other => fleetform_shared::plan::render_value(other),
    }
}

fn key(k: &str) -> String {
    serde_json::to_string(k).unwrap_or_else(|_| format!("\"{k}\""))
}

/// A value as JSON (unknown becomes null: outputs in state are always known).
pub use crate::present::plan_json::value_json as json_value;

/// The `id` of each change's prior object (updates, deletes), by address
/// and deposed key: what the apply messages name.
/// `ADDR: Refreshing state... [id=ID]` for each current managed object the
/// plan read, in address order (Terraform prints them as the reads end).
fn refreshed_lines(plan: &fleetform_shared::plan::Plan) -> Vec<String> {
    let mut lines: Vec<(&AbsResourceInstance, String)> = plan
        .changes
        .iter()
        .filter(|c| {
            c.deposed.is_none()
                && c.addr.resource.resource.mode == fleetform_shared::addr::ResourceMode::Managed
        })
        .filter_map(|c| {
            let id = c.before.get_attr("id").as_str()?;
            Some((
                &c.addr,
                format!("{}: Refreshing state... [id={id}]", c.addr),
            ))
        })
        .collect();
    lines.sort_by(|a, b| a.0.cmp(b.0));
    lines.into_iter().map(|(_, l)| l).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hcl_values_render_like_terraform_output() {
        let v = Value::object([("a", Value::from("x")), ("long-key", Value::int(1))]);
        assert_eq!(
            hcl_value(&v, 0),
            "{\n  \"a\" = \"x\"\n  \"long-key\" = 1\n}"
        );
        assert_eq!(
            hcl_value(&Value::tuple(vec![Value::int(1)]), 0),
            "[\n  1,\n]"
        );
        assert_eq!(json_value(&v), serde_json::json!({"a": "x", "long-key": 1}));
    }

    #[test]
    fn provisioner_output_is_prefixed_like_terraforms() {
        let addr: AbsResourceInstance = "null_resource.a[0]".parse().unwrap();
        assert_eq!(
            provision_line(
                &addr,
                "local-exec",
                "Executing: [\"/bin/sh\" \"-c\" \"echo hi\"]"
            ),
            "null_resource.a[0] (local-exec): Executing: [\"/bin/sh\" \"-c\" \"echo hi\"]"
        );
        assert_eq!(
            provision_line(&addr, "local-exec", "  indented \t "),
            "null_resource.a[0] (local-exec):   indented"
        );
        assert_eq!(provision_line(&addr, "local-exec", " \r"), "");
    }
}

#[cfg(test)]
mod still_tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn long_operations_are_said_to_go_on_every_ten_seconds() {
        let mut r = Renderer::new(BTreeMap::new(), Operation::Apply);
        let a: AbsResourceInstance = "null_resource.a".parse().unwrap();
        let b: AbsResourceInstance = "null_resource.b".parse().unwrap();
        let t0 = Instant::now();
        r.in_flight.insert(
            (a.clone(), None),
            InFlight {
                since: t0,
                op: ApplyOp::Create,
                id: None,
                said: 0,
            },
        );
        r.in_flight.insert(
            (b.clone(), None),
            InFlight {
                since: t0,
                op: ApplyOp::Delete,
                id: Some("b-1".into()),
                said: 0,
            },
        );
        assert!(r.still_lines(t0 + Duration::from_secs(9)).is_empty());
        assert_eq!(
            r.still_lines(t0 + Duration::from_secs(10)),
            [
                "null_resource.a: Still creating... [10s elapsed]",
                "null_resource.b: Still destroying... [id=b-1, 10s elapsed]"
            ]
        );
        // Once per ten seconds.
        assert!(r.still_lines(t0 + Duration::from_secs(15)).is_empty());
        r.in_flight.remove(&(b, None));
        assert_eq!(
            r.still_lines(t0 + Duration::from_secs(21)),
            ["null_resource.a: Still creating... [20s elapsed]"]
        );
    }
}
