//! `-json` output of plan/apply/destroy: Terraform's machine-readable UI
//! format, one JSON object per line on stdout (`version` first, then
//! `planned_change`, `change_summary`, `apply_start`/`apply_complete`,
//! `provision_start`/`provision_progress`/`provision_complete`,
//! `outputs`, `diagnostic`...).

use crate::present::plan_json::{TERRAFORM_VERSION, index_json, type_json, value_json};
use crate::present::run_view::{RunView, prior_ids};
use fleetform_shared::addr::AbsResourceInstance;
use fleetform_shared::diag::{Diagnostic, Severity};
use fleetform_shared::json::{self, Json};
use fleetform_shared::plan::{Action, ActionReason, ChangeSummary, Plan, PlanMode};
use fleetform_shared::state::OutputState;
use fleetform_shared::wire::{ApplyOp, Operation, RunEvent, RunStatus};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The UI format version we follow.
pub const UI_VERSION: &str = "1.2";

pub struct JsonView {
    sources: BTreeMap<String, String>,
    operation: Operation,
    /// Plan-only runs end after the plan; apply runs report an apply summary.
    plan_only: bool,
    /// Saved plans are applied without showing their changes again.
    show_plan: bool,
    version_sent: bool,
    /// Whether the plan had changes (once it came).
    had_changes: bool,
    /// The `id` of each change's prior object, for the hooks.
    prior_ids: HashMap<(AbsResourceInstance, Option<String>), String>,
    started: HashMap<(AbsResourceInstance, Option<String>, bool), Instant>,
    /// For `apply_progress`: each started operation's kind and the last
    /// elapsed time reported, in seconds.
    progress: HashMap<(AbsResourceInstance, Option<String>, bool), (ApplyOp, u64)>,
    outputs: Option<BTreeMap<String, OutputState>>,
}

impl JsonView {
    pub fn new(
        sources: BTreeMap<String, String>,
        operation: Operation,
        plan_only: bool,
        show_plan: bool,
    ) -> JsonView {
        JsonView {
            sources,
            operation,
            plan_only,
            show_plan,
            version_sent: false,
            had_changes: false,
            prior_ids: HashMap::new(),
            started: HashMap::new(),
            progress: HashMap::new(),
            outputs: None,
        }
    }

    /// Prints a diagnostic raised by the CLI itself (bad arguments...).
    pub fn diagnostic(&mut self, d: &Diagnostic) {
        let m = diagnostic(d, &self.sources);
        self.print(vec![m]);
    }

    fn print(&mut self, messages: Vec<Json>) {
        if !self.version_sent {
            self.version_sent = true;
            println!("{}", version());
        }
        for m in messages {
            println!("{m}");
        }
    }

    /// The messages one run event turns into (after the version line).
    pub fn messages(&mut self, event: &RunEvent) -> Vec<Json> {
        match event {
            RunEvent::Started { .. }
            | RunEvent::AwaitingApproval
            | RunEvent::Planning { .. }
            | RunEvent::Progress { .. } => vec![],
            RunEvent::Diagnostics(d) => d.iter().map(|d| diagnostic(d, &self.sources)).collect(),
            RunEvent::Cancelling => vec![message(
                "info",
                "Cancelling: nothing new starts, operations in progress are asked to stop".into(),
                "log",
                json!({}),
            )],
            RunEvent::Planned(plan) => {
                let out = if self.show_plan {
                    planned(plan)
                } else {
                    vec![]
                };
                self.had_changes = plan.has_changes();
                self.prior_ids = prior_ids(plan);
                out
            }
            RunEvent::ApplyStart {
                addr, deposed, op, ..
            } => {
                let key = (addr.clone(), deposed.clone(), *op == ApplyOp::Delete);
                self.started.insert(key.clone(), Instant::now());
                self.progress.insert(key, (*op, 0));
                let mut hook = json!({ "resource": resource_addr(addr), "action": op_action(*op) });
                let mut id = String::new();
                if matches!(op, ApplyOp::Update | ApplyOp::Delete)
                    && let Some(v) = self.prior_id(addr, deposed)
                {
                    hook["id_key"] = "id".into();
                    hook["id_value"] = v.clone().into();
                    id = format!(" [id={v}]");
                }
                let verb = match op {
                    ApplyOp::Create => "Creating...",
                    ApplyOp::Update => "Modifying...",
                    ApplyOp::Delete => "Destroying...",
                    // Terraform's JSON view names a read so (its
                    // human view says "Reading...").
                    ApplyOp::Read => "Refreshing...",
                    ApplyOp::Open => "Opening...",
                    ApplyOp::Renew => "Renewing...",
                    ApplyOp::Close => "Closing...",
                };
                let text = format!("{addr}: {verb}{id}");
                let kind = match op.is_ephemeral() {
                    true => "ephemeral_op_start",
                    false => "apply_start",
                };
                vec![message("info", text, kind, json!({ "hook": hook }))]
            }
            RunEvent::ApplyComplete {
                addr,
                deposed,
                op,
                id,
                elapsed_ms,
                ..
            } => {
                let key = (addr.clone(), deposed.clone(), *op == ApplyOp::Delete);
                self.started.remove(&key);
                self.progress.remove(&key);
                let secs = elapsed_ms / 1000;
                let mut hook = json!({
                    "resource": resource_addr(addr),
                    "action": op_action(*op),
                    "elapsed_seconds": secs,
                });
                let mut id_text = String::new();
                if let (false, Some(id)) = (*op == ApplyOp::Delete, id) {
                    hook["id_key"] = "id".into();
                    hook["id_value"] = id.clone().into();
                    id_text = format!(" [id={id}]");
                }
                let text = format!("{addr}: {} complete after {secs}s{id_text}", noun(*op));
                let kind = match op.is_ephemeral() {
                    true => "ephemeral_op_complete",
                    false => "apply_complete",
                };
                vec![message("info", text, kind, json!({ "hook": hook }))]
            }
            RunEvent::ApplyErrored {
                addr,
                deposed,
                op,
                diagnostics,
                ..
            } => {
                let key = (addr.clone(), deposed.clone(), *op == ApplyOp::Delete);
                self.progress.remove(&key);
                let secs = self
                    .started
                    .remove(&key)
                    .map(|t| t.elapsed().as_secs())
                    .unwrap_or(0);
                let hook = json!({
                    "resource": resource_addr(addr),
                    "action": op_action(*op),
                    "elapsed_seconds": secs,
                });
                let text = format!("{addr}: {} errored after {secs}s", noun(*op));
                let mut out = vec![message(
                    "info",
                    text,
                    "apply_errored",
                    json!({ "hook": hook }),
                )];
                out.extend(diagnostics.iter().map(|d| diagnostic(d, &self.sources)));
                out
            }
            RunEvent::ProvisionStart { addr, provisioner } => {
                let hook = json!({ "resource": resource_addr(addr), "provisioner": provisioner });
                let text = format!("{addr}: Provisioning with '{provisioner}'...");
                vec![message(
                    "info",
                    text,
                    "provision_start",
                    json!({ "hook": hook }),
                )]
            }
            RunEvent::ProvisionOutput {
                addr,
                provisioner,
                line,
            } => {
                // Terraform sends no message for a blank line.
                let line = line.trim_end();
                if line.is_empty() {
                    return vec![];
                }
                let hook = json!({
                    "resource": resource_addr(addr),
                    "provisioner": provisioner,
                    "output": line,
                });
                let text = format!("{addr}: ({provisioner}): {line}");
                vec![message(
                    "info",
                    text,
                    "provision_progress",
                    json!({ "hook": hook }),
                )]
            }
            RunEvent::ProvisionDone {
                addr,
                provisioner,
                errored,
            } => {
                let hook = json!({ "resource": resource_addr(addr), "provisioner": provisioner });
                let (kind, what) = if *errored {
                    ("provision_errored", "errored")
                } else {
                    ("provision_complete", "complete")
                };
                let text = format!("{addr}: ({provisioner}) Provisioning {what}");
                vec![message("info", text, kind, json!({ "hook": hook }))]
            }
            RunEvent::Outputs(outputs) => {
                // Terraform reports the apply summary before the outputs.
                self.outputs = Some(outputs.clone());
                vec![]
            }
            RunEvent::Finished { status, summary } => self.finished(*status, summary),
        }
    }

    fn finished(&mut self, status: RunStatus, summary: &ChangeSummary) -> Vec<Json> {
        let mut out = Vec::new();
        let applied = self.operation != Operation::Plan && !self.plan_only;
        let had_changes = self.had_changes;
        if applied && had_changes && status == RunStatus::Succeeded {
            let (text, op) = if self.operation == Operation::Destroy {
                (
                    format!(
                        "Destroy complete! Resources: {} destroyed.",
                        summary.destroy
                    ),
                    "destroy",
                )
            } else {
                (
                    format!("Apply complete! Resources: {}", applied_counts(summary)),
                    "apply",
                )
            };
            out.push(change_summary(text, summary, op));
        }
        if let Some(outputs) = self.outputs.take().filter(|o| !o.is_empty()) {
            out.push(applied_outputs(&outputs));
        }
        out
    }

    /// The `id` of the prior object a change starts from, for the hook.
    fn prior_id(&self, addr: &AbsResourceInstance, deposed: &Option<String>) -> Option<String> {
        self.prior_ids
            .get(&(addr.clone(), deposed.clone()))
            .cloned()
    }
}

impl JsonView {
    /// `apply_progress` every 10 seconds of each operation in progress,
    /// as Terraform sends them ("Still creating... [10s elapsed]").
    pub fn progress_messages(&mut self, now: Instant) -> Vec<Json> {
        let mut due_now = Vec::new();
        for (key, start) in &self.started {
            let Some((op, said)) = self.progress.get_mut(key) else {
                continue;
            };
            let due = now.duration_since(*start).as_secs() / 10 * 10;
            if due == 0 || due <= *said {
                continue;
            }
            *said = due;
            due_now.push((key.0.clone(), *op, due));
        }
        due_now.sort_by(|a, b| a.0.cmp(&b.0));
        due_now
            .into_iter()
            .map(|(addr, op, due)| {
                let verb = match op {
                    ApplyOp::Create => "creating",
                    ApplyOp::Update => "modifying",
                    ApplyOp::Delete => "destroying",
                    ApplyOp::Read => "refreshing",
                    ApplyOp::Open => "opening",
                    ApplyOp::Renew => "renewing",
                    ApplyOp::Close => "closing",
                };
                let hook = json!({
                    "resource": resource_addr(&addr),
                    "action": op_action(op),
                    "elapsed_seconds": due,
                });
                message(
                    "info",
                    format!("{addr}: Still {verb}... [{due}s elapsed]"),
                    "apply_progress",
                    json!({ "hook": hook }),
                )
            })
            .collect()
    }
}

impl RunView for JsonView {
    fn event(&mut self, event: &RunEvent) {
        let messages = self.messages(event);
        self.print(messages);
    }

    fn tick(&mut self) {
        let messages = self.progress_messages(Instant::now());
        if !messages.is_empty() {
            self.print(messages);
        }
    }
}

/// The first line: who we are and which UI format version we speak.
pub fn version() -> Json {
    message(
        "info",
        format!(
            "fleetform {} (Terraform {TERRAFORM_VERSION})",
            env!("CARGO_PKG_VERSION")
        ),
        "version",
        json!({ "terraform": TERRAFORM_VERSION, "ui": UI_VERSION }),
    )
}

fn planned(plan: &Plan) -> Vec<Json> {
    let mut out = Vec::new();
    let moved_from = plan.previous_addresses();
    // Every drift, as Terraform sends it (the text shows the relevant part).
    for d in plan.drift.iter().filter(|d| d.action != Action::NoOp) {
        let action = change_action(d.action);
        let mut change = json!({ "resource": resource_addr(&d.addr), "action": action });
        if let Some(from) = moved_from.get(&d.addr) {
            change["previous_resource"] = resource_addr(from);
        }
        let text = format!("{}: Drift detected ({action})", d.addr);
        out.push(message(
            "info",
            text,
            "resource_drift",
            json!({ "change": change }),
        ));
    }
    let refresh_only = plan.mode == PlanMode::RefreshOnly;
    for c in &plan.changes {
        let current = c.deposed.is_none() && !refresh_only;
        let from = moved_from.get(&c.addr).filter(|_| current);
        let import = plan.imports.get(&c.addr).filter(|_| current);
        let action = match (c.action, from, import) {
            (Action::NoOp, _, Some(_)) => "import",
            (Action::NoOp, Some(_), None) => "move",
            (Action::NoOp, None, None) => continue,
            (a, _, _) => change_action(a),
        };
        let mut change = json!({ "resource": resource_addr(&c.addr) });
        if let Some(from) = from {
            change["previous_resource"] = resource_addr(from);
        }
        change["action"] = action.into();
        if let Some(r) = change_reason(c.reason) {
            change["reason"] = r.into();
        }
        if let Some(id) = import {
            change["importing"] = json!({ "id": id });
        }
        let text = format!("{}: Plan to {action}", c.addr);
        out.push(message(
            "info",
            text,
            "planned_change",
            json!({ "change": change }),
        ));
    }
    let s = plan.summary();
    let text = if plan.has_changes() {
        format!("Plan: {s}")
    } else {
        "No changes.".to_string()
    };
    out.push(change_summary(text, &s, "plan"));
    if !plan.outputs.is_empty() {
        let outputs: serde_json::Map<String, serde_json::Value> = plan
            .outputs
            .iter()
            .map(|(k, o)| {
                let v = json!({ "sensitive": o.sensitive, "action": change_action(o.action) });
                (k.clone(), v)
            })
            .collect();
        let text = format!("Outputs: {}", outputs.len());
        out.push(message(
            "info",
            text,
            "outputs",
            json!({ "outputs": outputs }),
        ));
    }
    out
}

/// "N added, N changed, N destroyed." (imported objects first and
/// forgotten ones last, when any, as Terraform counts them).
pub fn applied_counts(s: &ChangeSummary) -> String {
    let imported = if s.import > 0 {
        format!("{} imported, ", s.import)
    } else {
        String::new()
    };
    let forgotten = if s.forget > 0 {
        format!(", {} forgotten", s.forget)
    } else {
        String::new()
    };
    format!(
        "{imported}{} added, {} changed, {} destroyed{forgotten}.",
        s.add, s.change, s.destroy
    )
}

fn change_summary(text: String, s: &ChangeSummary, operation: &str) -> Json {
    let mut changes = json!({
        "add": s.add,
        "change": s.change,
        "import": s.import,
        "remove": s.destroy,
        "operation": operation,
    });
    if s.forget > 0 {
        changes["forget"] = s.forget.into();
    }
    message(
        "info",
        text,
        "change_summary",
        json!({ "changes": changes }),
    )
}

/// Built as [`Json`] rather than with `json!`: values keep every digit of their numbers.
fn applied_outputs(outputs: &BTreeMap<String, OutputState>) -> Json {
    let map: json::Map = outputs
        .iter()
        .map(|(k, o)| {
            let mut v = json::Map::from([
                ("sensitive".to_string(), o.sensitive.into()),
                ("type".to_string(), type_json(&o.value)),
            ]);
            if !o.sensitive {
                v.insert("value".into(), value_json(&o.value));
            }
            (k.clone(), Json::Object(v))
        })
        .collect();
    let text = format!("Outputs: {}", map.len());
    message(
        "info",
        text,
        "outputs",
        Json::object([("outputs", map.into())]),
    )
}

/// Terraform's `resource` object naming an instance in UI messages.
pub fn resource_addr(addr: &AbsResourceInstance) -> serde_json::Value {
    let r = &addr.resource.resource;
    json!({
        "addr": addr.to_string(),
        "module": addr.module.to_string(),
        "resource": addr.resource.to_string(),
        "implied_provider": r.implied_provider(),
        "resource_type": r.type_name,
        "resource_name": r.name,
        "resource_key": index_json(addr.key()).map_or(serde_json::Value::Null, |k| k.to_serde()),
    })
}

fn change_action(a: Action) -> &'static str {
    match a {
        Action::NoOp => "noop",
        Action::Create => "create",
        Action::Read => "read",
        Action::Update => "update",
        Action::DeleteThenCreate | Action::CreateThenDelete => "replace",
        Action::Delete => "delete",
        Action::Forget => "remove",
    }
}

/// The UI's reason strings, which differ from the plan JSON's `action_reason`.
fn change_reason(r: ActionReason) -> Option<&'static str> {
    Some(match r {
        ActionReason::None => return None,
        ActionReason::ReplaceBecauseTainted => "tainted",
        ActionReason::ReplaceByRequest => "requested",
        ActionReason::ReplaceBecauseCannotUpdate => "cannot_update",
        ActionReason::ReplaceByTriggers => "replace_triggered_by",
        ActionReason::DeleteBecauseNoResourceConfig => "delete_because_no_resource_config",
        ActionReason::DeleteBecauseCountIndex => "delete_because_count_index",
        ActionReason::DeleteBecauseEachKey => "delete_because_each_key",
        ActionReason::DeleteBecauseNoRepetition => "delete_because_wrong_repetition",
        ActionReason::DeleteBecauseNoModule => "delete_because_no_module",
        ActionReason::ReadBecauseConfigUnknown => "read_because_config_unknown",
        ActionReason::ReadBecauseDependencyPending => "read_because_dependency_pending",
    })
}

fn op_action(op: ApplyOp) -> &'static str {
    match op {
        ApplyOp::Create => "create",
        ApplyOp::Update => "update",
        ApplyOp::Delete => "delete",
        ApplyOp::Read => "read",
        ApplyOp::Open => "open",
        ApplyOp::Renew => "renew",
        ApplyOp::Close => "close",
    }
}

fn noun(op: ApplyOp) -> &'static str {
    match op {
        ApplyOp::Create => "Creation",
        ApplyOp::Update => "Modifications",
        ApplyOp::Delete => "Destruction",
        ApplyOp::Read => "Refresh",
        ApplyOp::Open => "Opening",
        ApplyOp::Renew => "Renewal",
        ApplyOp::Close => "Closing",
    }
}

/// A `diagnostic` message, with the source snippet when the file is known.
pub fn diagnostic(d: &Diagnostic, sources: &BTreeMap<String, String>) -> Json {
    let (level, severity, prefix) = match d.severity {
        Severity::Error => ("error", "error", "Error"),
        Severity::Warning => ("warn", "warning", "Warning"),
    };
    let mut diag = json!({ "severity": severity, "summary": d.summary, "detail": d.detail });
    if let Some(a) = &d.address {
        diag["address"] = a.clone().into();
    }
    if let Some(r) = &d.range {
        let pos = |p: &fleetform_shared::diag::Pos| json!({ "line": p.line, "column": p.column, "byte": p.byte });
        diag["range"] =
            json!({ "filename": r.filename, "start": pos(&r.start), "end": pos(&r.end) });
        if let Some(src) = sources.get(&r.filename) {
            diag["snippet"] = snippet(d, src);
        }
    }
    let text = format!("{prefix}: {}", d.summary);
    message(level, text, "diagnostic", json!({ "diagnostic": diag }))
}

/// The source lines the range covers, with the highlighted part as offsets.
fn snippet(d: &Diagnostic, src: &str) -> serde_json::Value {
    let r = d.range.as_ref().expect("called with a range");
    let start = r.start.byte.min(src.len());
    let end = r.end.byte.clamp(start, src.len());
    let line_start = src[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = src[end..].find('\n').map(|i| end + i).unwrap_or(src.len());
    json!({
        "context": d.context,
        "code": src[line_start..line_end],
        "start_line": r.start.line,
        "highlight_start_offset": start - line_start,
        "highlight_end_offset": end - line_start,
        "values": d.values.iter().map(|v| json!({ "traversal": v.traversal, "statement": v.statement })).collect::<Vec<_>>(),
    })
}

/// One UI message: the common `@` fields, the type and its own fields.
fn message(level: &str, text: String, kind: &str, fields: impl Into<Json>) -> Json {
    let mut m = json::Map::new();
    m.insert("@level".into(), level.into());
    m.insert("@message".into(), text.into());
    m.insert("@module".into(), "terraform.ui".into());
    m.insert("@timestamp".into(), timestamp(SystemTime::now()).into());
    if let Json::Object(f) = fields.into() {
        m.extend(f);
    }
    m.insert("type".into(), kind.into());
    m.into()
}

/// RFC 3339 in UTC with microseconds, as Terraform writes `@timestamp`.
pub fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_micros()
    )
}

#[cfg(test)]
mod tests;
