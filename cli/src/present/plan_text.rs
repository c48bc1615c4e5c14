//! Renders a plan the way `terraform plan` prints it.

use super::block_text;
use super::value_text;
use fleetform_shared::addr::{InstanceKey, ResourceMode};
use fleetform_shared::marks::Marks;
use fleetform_shared::plan::render_value as inline;
use fleetform_shared::plan::shape::Shapes;
use fleetform_shared::plan::{Action, ActionReason, Plan, PlanMode, ResourceChange};
use fleetform_shared::value::{PathStep, Value};
use std::collections::BTreeSet;
use std::fmt::Write;

const HIDDEN: &str = "(sensitive value)";
const WRITE_ONLY: &str = "(write-only attribute)";

/// The human-readable plan: the legend, one block per changed instance,
/// output changes and the summary line.
pub fn render_plan(plan: &Plan) -> String {
    let mut text = String::new();
    write_plan(plan, &mut |part: &mut String| {
        text.push_str(part);
        part.clear();
    });
    text
}

/// [`render_plan`], handed to `sink` a part at a time (each part about
/// 64 KB or less; `sink` empties it): a plan of 100,000 creates is about
/// 60 MB of text, which need not be held whole to be printed.
pub fn write_plan(plan: &Plan, sink: &mut dyn FnMut(&mut String)) {
    const PART: usize = 64 * 1024;
    let mut out = String::new();
    let moved_from = plan.previous_addresses();
    let refresh_only = plan.mode == PlanMode::RefreshOnly;
    // Objects that moved, were imported or had their configuration
    // written are shown even when nothing else about them changes.
    let shown_anyway = |c: &ResourceChange| {
        c.deposed.is_none()
            && !refresh_only
            && (plan.imports.contains_key(&c.addr) || moved_from.contains_key(&c.addr))
    };
    let mut changed: Vec<&ResourceChange> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp || shown_anyway(c))
        .collect();
    // Terraform lists a module's data sources before its managed
    // resources; the plan keeps them in address order otherwise.
    changed.sort_by_key(|c| {
        let m = &c.addr.module;
        (
            m.0.len(),
            m,
            c.addr.resource.resource.mode != ResourceMode::Data,
        )
    });
    let outputs_change = plan.outputs.values().any(|o| o.action != Action::NoOp);
    let empty = changed.is_empty() && !outputs_change;
    // Drift is shown with changes it may explain, and on its own in a
    // refresh-only plan, which is about nothing else.
    let drift = plan.drift_shown();
    let drift_shown = !drift.is_empty() && (refresh_only || !empty);
    if drift_shown {
        super::drift_text::write_drift(&mut out, plan, &drift, &moved_from);
        if out.len() >= PART {
            sink(&mut out);
        }
    }
    if empty {
        if refresh_only && drift_shown {
            // What applying it does was said with the drift.
        } else if plan.mode == PlanMode::Destroy {
            out.push_str("No changes. No objects need to be destroyed.\n\n");
            out.push_str(
                "Either you have not created any objects yet or the existing objects were\nalready deleted outside of fleetform.\n",
            );
        } else if refresh_only {
            out.push_str("No changes. Your infrastructure still matches the configuration.\n\n");
            out.push_str(
                "fleetform has checked that the real remote objects still match the result of\nyour most recent changes, and found no differences.\n",
            );
        } else {
            out.push_str("No changes. Your infrastructure matches the configuration.\n\n");
            out.push_str(
                "fleetform has compared your real infrastructure against your configuration\nand found no differences, so no changes are needed.\n",
            );
        }
        sink(&mut out);
        return;
    }
    if drift_shown {
        let _ = write!(out, "\n{}\n\n", "─".repeat(77));
    }
    let symbols: BTreeSet<Action> = changed
        .iter()
        .map(|c| c.action)
        .filter(|a| *a != Action::NoOp)
        .collect();
    if !changed.is_empty() {
        // Moves and imports alone have no symbol, and no legend.
        if !symbols.is_empty() {
            out.push_str(
                "fleetform used the selected providers to generate the following execution\n",
            );
            out.push_str("plan. Resource actions are indicated with the following symbols:\n");
            for a in LEGEND_ORDER.iter().filter(|a| symbols.contains(a)) {
                let _ = writeln!(out, "{} {}", symbol(*a), legend(*a));
            }
            out.push('\n');
        }
        out.push_str(if plan.errored {
            "fleetform planned the following actions, but then encountered a problem:\n"
        } else {
            "fleetform will perform the following actions:\n"
        });
        for c in &changed {
            out.push('\n');
            let from = moved_from.get(&c.addr).filter(|_| c.deposed.is_none());
            let import = plan.imports.get(&c.addr).filter(|_| c.deposed.is_none());
            let generated = c.deposed.is_none() && plan.generated_config.contains_key(&c.addr);
            match (c.action, from, import) {
                (Action::NoOp, _, Some(_)) => render_import(&mut out, c, generated),
                (Action::NoOp, Some(from), None) => {
                    let head = format!("  # {from} has moved to {}", c.addr);
                    render_entry(&mut out, c, &head, &plan.shapes);
                }
                (Action::Forget, _, _) => render_forget(&mut out, c),
                _ => {
                    let mut head = headline(c);
                    if let Some(from) = from {
                        let _ = write!(head, "\n  # (moved from {from})");
                    }
                    if let Some(id) = import {
                        let _ = write!(head, "\n  # (imported from {})", quote(id));
                    }
                    if generated {
                        head.push_str("\n  # (config will be generated)");
                    }
                    render_entry(&mut out, c, &head, &plan.shapes);
                }
            }
            if out.len() >= PART {
                sink(&mut out);
            }
        }
        let _ = writeln!(out, "\nPlan: {}", plan.summary());
    }
    let outputs: Vec<_> = plan
        .outputs
        .iter()
        .filter(|(_, o)| o.action != Action::NoOp)
        .collect();
    super::output_text::write_output_changes(&mut out, &outputs);
    sink(&mut out);
}

/// The order Terraform 1.11 lists the symbols in.
const LEGEND_ORDER: [Action; 7] = [
    Action::Create,
    Action::Update,
    Action::Delete,
    Action::DeleteThenCreate,
    Action::CreateThenDelete,
    Action::Read,
    Action::Forget,
];

fn symbol(a: Action) -> &'static str {
    match a {
        Action::Create => "  +",
        Action::Delete => "  -",
        Action::Update => "  ~",
        Action::DeleteThenCreate => "-/+",
        Action::CreateThenDelete => "+/-",
        Action::Read => " <=",
        Action::NoOp => "   ",
        Action::Forget => " .",
    }
}

fn legend(a: Action) -> &'static str {
    match a {
        Action::Create => "create",
        Action::Delete => "destroy",
        Action::Update => "update in-place",
        Action::DeleteThenCreate => "destroy and then create replacement",
        Action::CreateThenDelete => "create replacement and then destroy",
        Action::Read => "read (data resources)",
        Action::NoOp => "no-op",
        Action::Forget => "forget",
    }
}

/// An object imported with no change: shown whole, without symbols.
fn render_import(out: &mut String, c: &ResourceChange, generated: bool) {
    let r = &c.addr.resource.resource;
    let _ = writeln!(out, "  # {} will be imported", c.addr);
    if generated {
        out.push_str("  # (config will be generated)\n");
    }
    let _ = writeln!(out, "    resource \"{}\" \"{}\" {{", r.type_name, r.name);
    render_object(out, c);
}

/// An object forgotten from state (`removed` with `destroy = false`):
/// shown as it is, untouched.
fn render_forget(out: &mut String, c: &ResourceChange) {
    let r = &c.addr.resource.resource;
    let _ = writeln!(out, "{}", headline(c));
    let _ = writeln!(
        out,
        "{} resource \"{}\" \"{}\" {{",
        symbol(c.action),
        r.type_name,
        r.name
    );
    render_object(out, c);
}

/// The prior object's attributes without change markers.
fn render_object(out: &mut String, c: &ResourceChange) {
    if let Some(m) = c.before.as_map() {
        let width = m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, _)| k.len())
            .max()
            .unwrap_or(0);
        let marks = Marks::from_paths(c.before_sensitive_paths.iter().cloned());
        for (k, v) in m.iter().filter(|(_, v)| !v.is_null()) {
            let shown = if marks.touches(&[PathStep::Key(k.clone())]) {
                HIDDEN.to_string()
            } else {
                value_block(v, 6, ' ', "", &BTreeSet::new())
            };
            let _ = writeln!(out, "        {k:<width$} = {shown}");
        }
    }
    out.push_str("    }\n");
}

fn headline(c: &ResourceChange) -> String {
    let deposed = c
        .deposed
        .as_ref()
        .map(|d| format!(" (deposed object {d})"))
        .unwrap_or_default();
    let what = match (c.action, c.reason) {
        (Action::Create, _) => "will be created",
        (Action::Delete, _) => "will be destroyed",
        (Action::Update, _) => "will be updated in-place",
        (Action::DeleteThenCreate | Action::CreateThenDelete, reason) => match reason {
            ActionReason::ReplaceBecauseTainted => "is tainted, so must be replaced",
            ActionReason::ReplaceByRequest => "will be replaced, as requested",
            ActionReason::ReplaceByTriggers => {
                "will be replaced due to changes in replace_triggered_by"
            }
            _ => "must be replaced",
        },
        (Action::Read, _) => "will be read during apply",
        (Action::NoOp, _) => "has no changes",
        (Action::Forget, _) => {
            "will no longer be managed by fleetform, but will not be destroyed\n  # (destroy = false is set in the configuration)"
        }
    };
    let mut head = format!("  # {}{deposed} {what}", c.addr);
    if c.deposed.is_some() && c.action == Action::Delete {
        // Terraform says why a deposed object goes.
        head.push_str("\n  # (left over from a partially-failed replacement of this instance)");
    } else if let Some(why) = reason_line(c) {
        let _ = write!(head, "\n  # ({why})");
    }
    head
}

/// The line Terraform 1.11 adds under a headline to say why a delete or a
/// deferred read happens (a replacement says it in the headline itself).
fn reason_line(c: &ResourceChange) -> Option<String> {
    let r = &c.addr.resource;
    Some(match (c.action, c.reason) {
        (Action::Delete, ActionReason::DeleteBecauseNoResourceConfig) => {
            format!("because {} is not in configuration", r.resource)
        }
        (Action::Delete, ActionReason::DeleteBecauseNoModule) => {
            format!("because {} is not in configuration", c.addr.module)
        }
        (Action::Delete, ActionReason::DeleteBecauseCountIndex) => {
            format!("because index {} is out of range for count", r.key)
        }
        (Action::Delete, ActionReason::DeleteBecauseEachKey) => {
            format!("because key {} is not in for_each map", r.key)
        }
        (Action::Delete, ActionReason::DeleteBecauseNoRepetition) => match r.key {
            InstanceKey::None => "because resource uses count or for_each".into(),
            InstanceKey::Int(_) => "because resource does not use count".into(),
            InstanceKey::Str(_) => "because resource does not use for_each".into(),
        },
        (Action::Read, ActionReason::ReadBecauseConfigUnknown) => {
            "config refers to values not yet known".into()
        }
        (Action::Read, ActionReason::ReadBecauseDependencyPending) => {
            "depends on a resource or a module with changes pending".into()
        }
        _ => return None,
    })
}

/// A change (or drift) under its headline `head`: the resource block with
/// what changes in it.
pub(super) fn render_entry(out: &mut String, c: &ResourceChange, head: &str, shapes: &Shapes) {
    let _ = writeln!(out, "{head}");
    let r = &c.addr.resource.resource;
    let kind = if r.mode == ResourceMode::Data {
        "data"
    } else {
        "resource"
    };
    let _ = writeln!(
        out,
        "{} {kind} \"{}\" \"{}\" {{",
        symbol(c.action),
        r.type_name,
        r.name
    );
    let before = c.before.as_map().cloned().unwrap_or_default();
    let after = c.after.as_map().cloned().unwrap_or_default();
    // With the schema's shape, nested blocks are drawn after the
    // attributes (below), and nested attributes by their shape.
    let shape = shapes.get(&c.provider, r.mode, &r.type_name);
    let is_block = |name: &String| shape.is_some_and(|s| s.blocks.contains_key(name));
    let names: BTreeSet<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|n| !is_block(n))
        .collect();
    let before_marks = Marks::from_paths(c.before_sensitive_paths.iter().cloned());
    let after_marks = Marks::from_paths(c.sensitive_paths.iter().cloned());
    // An update may only change what is sensitive: those attributes show.
    let resensitized = |name: &String| {
        let step = PathStep::Key(name.clone());
        c.action == Action::Update && before_marks.child(&step) != after_marks.child(&step)
    };
    // Terraform 1.x shows the attributes that identify an object (`id`,
    // `name`, `tags`) in an update even when they do not change (and in an
    // object that only moved).
    let in_place = c.action == Action::Update || c.action == Action::NoOp;
    let identifying = |name: &String| {
        (in_place || c.action.is_replace())
            && IDENTIFYING.contains(&name.as_str())
            && before.get(name).is_some_and(|v| !v.is_null())
            && before.get(name) == after.get(name)
    };
    // Write-only attributes are null on both sides: Terraform names them
    // in a create, a destroy or a replacement, and counts them among the
    // unchanged attributes of an update.
    let write_only = |name: &String| {
        c.write_only_paths
            .iter()
            .any(|p| p == &[PathStep::Key(name.clone())])
    };
    let shows_write_only =
        matches!(c.action, Action::Create | Action::Delete) || c.action.is_replace();
    let shown = |name: &String| {
        if write_only(name) {
            return shows_write_only;
        }
        !is_hidden(before.get(name), after.get(name), c.action)
            || resensitized(name)
            || identifying(name)
    };
    // Aligned on every attribute that is set before or after, shown or
    // hidden as unchanged, as Terraform 1.11 aligns them.
    let set = |n: &String| {
        !before.get(n).unwrap_or(&Value::null()).is_null()
            || !after.get(n).unwrap_or(&Value::null()).is_null()
    };
    let width = names
        .iter()
        .filter(|n| shown(n) || set(n))
        .map(|n| n.len())
        .max()
        .unwrap_or(0);
    let marks = before_marks.clone().with(after_marks.clone());
    let cx = block_text::Cx {
        before: &before_marks,
        after: &after_marks,
        replace: &c.requires_replace,
    };
    let has_attrs = names.iter().any(|n| set(n));
    let mut unchanged = 0;
    for name in names {
        let b = before.get(name).unwrap_or(&fleetform_shared::value::NULL);
        let a = after.get(name).unwrap_or(&fleetform_shared::value::NULL);
        let nested = shape
            .and_then(|s| s.attributes.get(name))
            .filter(|s| s.nested.is_some());
        if write_only(name) {
            match c.action {
                _ if !shows_write_only => unchanged += 1,
                Action::Delete => {
                    let _ = writeln!(out, "      - {name:<width$} = {WRITE_ONLY} -> null");
                }
                Action::Create => {
                    let _ = writeln!(out, "      + {name:<width$} = {WRITE_ONLY}");
                }
                _ => {
                    let _ = writeln!(out, "      ~ {name:<width$} = {WRITE_ONLY}");
                }
            }
            continue;
        }
        if !shown(name) {
            // Counted as Terraform counts them: unset (null) ones are not.
            if (in_place || c.action.is_replace()) && !b.is_null() {
                unchanged += 1;
            }
            continue;
        }
        if a == b && resensitized(name) {
            render_sensitive(out, name, width, b, a, c.action, "");
            let _ = writeln!(
                out,
                "        # (the value is unchanged; only whether it is sensitive changes)"
            );
            continue;
        }
        let forces = c
            .requires_replace
            .iter()
            .any(|p| p.first() == Some(&PathStep::Key(name.clone())));
        let note = if forces && c.action.is_replace() {
            " # forces replacement"
        } else {
            ""
        };
        if let Some(s) = nested {
            let path = [PathStep::Key(name.clone())];
            if let Some(d) = block_text::attribute(&path, b, a, Some(s), &cx) {
                let opts = block_text::Opts::default();
                let _ = writeln!(
                    out,
                    "      {} {name:<width$} = {}",
                    sym_of(d.act),
                    d.render(1, opts)
                );
            }
            continue;
        }
        if identifying(name) && !marks.touches(&[PathStep::Key(name.clone())]) {
            let body = value_block(a, 6, ' ', "", &BTreeSet::new());
            let _ = writeln!(out, "        {name:<width$} = {body}");
            continue;
        }
        let path = [PathStep::Key(name.clone())];
        let map_like = |v: &Value| matches!(v, Value::Map(_) | Value::Null(_) | Value::Unknown(_));
        // A sensitive map entry hides only that entry; anything else
        // sensitive inside an attribute hides the whole attribute.
        if marks.covers(&path) || (marks.touches(&path) && !(map_like(b) && map_like(a))) {
            render_sensitive(out, name, width, b, a, c.action, note);
            continue;
        }
        let hidden: BTreeSet<String> = marks
            .paths()
            .filter(|p| p.len() >= 2 && p[0] == path[0])
            .filter_map(|p| match &p[1] {
                PathStep::Key(k) => Some(k.clone()),
                PathStep::Index(_) => None,
            })
            .collect();
        render_attr(out, 6, name, width, (b, a), c.action, note, &hidden);
    }
    if unchanged > 0 {
        let s = if unchanged == 1 { "" } else { "s" };
        let _ = writeln!(out, "        # ({unchanged} unchanged attribute{s} hidden)");
    }
    if let Some(shape) = shape {
        let mut act = block_text::Act::NoOp;
        let groups = block_text::block_groups(&[], &c.before, &c.after, shape, &cx, &mut act);
        block_text::block_lines(out, &groups, has_attrs, 1, block_text::Opts::default());
    }
    out.push_str("    }\n");
}

/// A nested attribute's change sign, as its line shows it.
fn sym_of(act: block_text::Act) -> char {
    match act {
        block_text::Act::NoOp => ' ',
        block_text::Act::Create => '+',
        block_text::Act::Update => '~',
        block_text::Act::Delete => '-',
    }
}

/// A sensitive attribute: whether it changes, never its value.
fn render_sensitive(
    out: &mut String,
    name: &str,
    width: usize,
    b: &Value,
    a: &Value,
    action: Action,
    note: &str,
) {
    let (sym, body) = match action {
        Action::Create | Action::Read => ('+', HIDDEN.to_string()),
        Action::Delete => ('-', format!("{HIDDEN} -> null")),
        _ if b.is_null() => ('+', HIDDEN.to_string()),
        _ if a.is_null() => ('-', format!("{HIDDEN} -> null")),
        _ => ('~', HIDDEN.to_string()),
    };
    let _ = writeln!(out, "      {sym} {name:<width$} = {body}{note}");
}

/// Null-to-null attributes are never shown; unchanged ones are hidden in
/// updates and replacements, except `id`-like identifiers Terraform keeps.
/// Attributes Terraform always shows in an update: they say which object
/// it is.
const IDENTIFYING: [&str; 3] = ["id", "name", "tags"];

fn is_hidden(b: Option<&Value>, a: Option<&Value>, action: Action) -> bool {
    let b = b.unwrap_or(&fleetform_shared::value::NULL);
    let a = a.unwrap_or(&fleetform_shared::value::NULL);
    match action {
        Action::Create | Action::Read => a.is_null(),
        Action::Delete => b.is_null(),
        _ => a == b,
    }
}

/// One attribute; `hidden` are the keys of its map entries that are sensitive.
#[allow(clippy::too_many_arguments)]
fn render_attr(
    out: &mut String,
    indent: usize,
    name: &str,
    width: usize,
    (b, a): (&Value, &Value),
    action: Action,
    note: &str,
    hidden: &BTreeSet<String>,
) {
    let pad = " ".repeat(indent);
    let at = value_text::At {
        col: indent,
        top: true,
        hidden,
    };
    let (sym, body) = match action {
        Action::Create | Action::Read => ('+', value_block(a, indent, '+', note, hidden)),
        Action::Delete => (
            '-',
            format!("{} -> null", value_block(b, indent, '-', note, hidden)),
        ),
        _ if b.is_null() => ('+', value_block(a, indent, '+', note, hidden)),
        _ if a.is_null() => (
            '-',
            format!("{} -> null", value_block(b, indent, '-', note, hidden)),
        ),
        // `tags` shows its unchanged entries too, as Terraform shows them.
        _ if name == "tags" => ('~', change_body(b, a, indent, note, hidden, true)),
        _ => ('~', with_note(value_text::diff(b, a, at), note)),
    };
    // A note on a multi-line value sits after its opening brace.
    let note = if body.contains('\n') { "" } else { note };
    let _ = writeln!(out, "{pad}{sym} {name:<width$} = {body}{note}");
}

/// Map entries of a changed map, one line each, with the closing brace.
fn change_body(
    b: &Value,
    a: &Value,
    indent: usize,
    note: &str,
    hidden: &BTreeSet<String>,
    show_unchanged: bool,
) -> String {
    match (b, a) {
        (Value::Map(bm), Value::Map(am)) => {
            let keys: BTreeSet<&String> = bm.keys().chain(am.keys()).collect();
            let width = keys.iter().map(|k| quote(k).len()).max().unwrap_or(0);
            let pad = " ".repeat(indent + 4);
            let mut s = format!("{{{note}\n");
            let mut unchanged = 0;
            let inner = value_text::At {
                col: indent + 4,
                top: false,
                hidden: &BTreeSet::new(),
            };
            for k in keys {
                let key = quote(k);
                let shown = |v: &Value, sign: char| match hidden.contains(k) {
                    true => HIDDEN.to_string(),
                    false => value_text::whole(v, sign, inner),
                };
                match (bm.get(k), am.get(k)) {
                    (Some(x), Some(y)) if x == y && show_unchanged => {
                        let _ = writeln!(s, "{pad}  {key:<width$} = {}", shown(x, ' '));
                    }
                    (Some(x), Some(y)) if x == y => unchanged += 1,
                    (Some(_), Some(y)) if hidden.contains(k) => {
                        let _ = writeln!(s, "{pad}~ {key:<width$} = {}", shown(y, '~'));
                    }
                    (Some(x), Some(y)) => {
                        let body = value_text::diff(x, y, inner);
                        let _ = writeln!(s, "{pad}~ {key:<width$} = {body}");
                    }
                    (None, Some(y)) => {
                        let body = shown(y, '+');
                        let _ = writeln!(s, "{pad}+ {key:<width$} = {body}");
                    }
                    (Some(x), None) => {
                        let body = shown(x, '-');
                        let _ = writeln!(s, "{pad}- {key:<width$} = {body} -> null");
                    }
                    (None, None) => {}
                }
            }
            if unchanged > 0 {
                let e = if unchanged == 1 { "" } else { "s" };
                let _ = writeln!(s, "{pad}  # ({unchanged} unchanged element{e} hidden)");
            }
            s.push_str(&" ".repeat(indent + 2));
            s.push('}');
            s
        }
        _ => format!(
            "{} -> {}",
            inline_masked(b, hidden),
            inline_masked(a, hidden)
        ),
    }
}

fn value_block(
    v: &Value,
    indent: usize,
    sym: char,
    note: &str,
    hidden: &BTreeSet<String>,
) -> String {
    let at = value_text::At {
        col: indent,
        top: true,
        hidden,
    };
    with_note(value_text::whole(v, sym, at), note)
}

/// `note` (" # forces replacement") after the opening of a value of
/// several lines (`{`, `[`, `<<-EOT`); a one-line value's note is put at
/// the end of its line by the caller.
fn with_note(body: String, note: &str) -> String {
    if note.is_empty() || !body.contains('\n') {
        return body;
    }
    let open = body.find('\n').expect("checked above");
    format!("{}{note}{}", &body[..open], &body[open..])
}

/// A map entry's value, or that it is sensitive.
fn entry(k: &str, v: &Value, hidden: &BTreeSet<String>) -> String {
    if hidden.contains(k) {
        HIDDEN.to_string()
    } else {
        inline(v)
    }
}

/// [`inline`], with the `hidden` entries of a map shown as sensitive.
fn inline_masked(v: &Value, hidden: &BTreeSet<String>) -> String {
    match v {
        Value::Map(m) if !hidden.is_empty() => format!(
            "{{ {} }}",
            m.iter()
                .map(|(k, x)| format!("{} = {}", quote(k), entry(k, x, hidden)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => inline(v),
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fleetform_shared::addr::ProviderAddr;
    use fleetform_shared::plan::ResourceChange;

    /// A map of strings, typed as a provider's schema types one.
    fn smap<K: Into<String>>(items: impl IntoIterator<Item = (K, Value)>) -> Value {
        let Value::Map(m) = Value::object(items) else {
            unreachable!("an object is a map")
        };
        Value::Map(m.typed(fleetform_shared::types::Type::map(
            fleetform_shared::types::Type::String,
        )))
    }

    fn change(addr: &str, action: Action, before: Value, after: Value) -> ResourceChange {
        ResourceChange {
            before,
            after,
            requires_replace: vec![vec![PathStep::Key("triggers".into())]],
            ..ResourceChange::new(addr.parse().unwrap(), ProviderAddr::implied("null"), action)
        }
    }

    #[test]
    fn a_large_plan_is_written_in_parts_that_make_the_whole_text() {
        let changes = (0..5000)
            .map(|i| {
                let after = Value::object([
                    ("id", Value::unknown()),
                    ("triggers", smap([("n", Value::from(format!("{i}")))])),
                ]);
                change(
                    &format!("null_resource.r[{i}]"),
                    Action::Create,
                    Value::null(),
                    after,
                )
            })
            .collect();
        let plan = Plan {
            changes,
            ..Plan::default()
        };
        let whole = render_plan(&plan);
        let mut parts = Vec::new();
        write_plan(&plan, &mut |part: &mut String| {
            parts.push(std::mem::take(part));
        });
        assert!(
            parts.len() > 5,
            "{} parts for {} bytes",
            parts.len(),
            whole.len()
        );
        // Each part is cut after the change that took it past 64 KB.
        assert!(parts.iter().all(|p| p.len() < 65 * 1024));
        assert_eq!(parts.concat(), whole);
        assert!(whole.contains("Plan: 5000 to add, 0 to change, 0 to destroy.\n"));
    }

    #[test]
    fn a_forgotten_object_is_shown_as_it_is() {
        let old = Value::object([("id", Value::from("1")), ("triggers", Value::null())]);
        let plan = Plan {
            changes: vec![change(
                "null_resource.f",
                Action::Forget,
                old,
                Value::null(),
            )],
            ..Plan::default()
        };
        let text = render_plan(&plan);
        assert!(text.contains(" . forget\n"), "{text}");
        assert!(
            text.contains(
                "  # null_resource.f will no longer be managed by fleetform, but will not be destroyed\n  # (destroy = false is set in the configuration)\n . resource \"null_resource\" \"f\" {\n        id = \"1\"\n    }\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("Plan: 0 to add, 0 to change, 0 to destroy, 1 to forget.\n"),
            "{text}"
        );
    }

    #[test]
    fn renders_like_terraform() {
        let created = Value::object([
            ("id", Value::unknown()),
            ("triggers", smap([("a", Value::from("b"))])),
        ]);
        let old = Value::object([
            ("id", Value::from("1")),
            ("triggers", smap([("a", Value::from("x"))])),
        ]);
        let new = Value::object([
            ("id", Value::unknown()),
            ("triggers", smap([("a", Value::from("y"))])),
        ]);
        let plan = Plan {
            changes: vec![
                change("null_resource.a", Action::Create, Value::null(), created),
                change(
                    "null_resource.b",
                    Action::DeleteThenCreate,
                    old.clone(),
                    new,
                ),
                change("null_resource.c", Action::Delete, old, Value::null()),
            ],
            ..Plan::default()
        };
        let text = render_plan(&plan);
        assert!(
            text.contains(
                "  # null_resource.a will be created\n  + resource \"null_resource\" \"a\" {\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("      + id       = (known after apply)\n"),
            "{text}"
        );
        assert!(
            text.contains("-/+ resource \"null_resource\" \"b\" {"),
            "{text}"
        );
        assert!(text.contains("      ~ triggers = { # forces replacement\n          ~ \"a\" = \"x\" -> \"y\"\n        }\n"), "{text}");
        assert!(
            text.contains("-/+ destroy and then create replacement\n"),
            "{text}"
        );
        assert!(
            text.contains("  # null_resource.c will be destroyed"),
            "{text}"
        );
        assert!(
            text.contains("Plan: 2 to add, 0 to change, 2 to destroy."),
            "{text}"
        );
    }

    #[test]
    fn sensitive_attributes_are_never_shown() {
        let mut c = change(
            "random_password.p",
            Action::Create,
            Value::null(),
            Value::object([
                ("result", Value::from("hunter2")),
                ("length", Value::int(8)),
            ]),
        );
        c.sensitive_paths = vec![vec![PathStep::Key("result".into())]];
        let text = render_plan(&Plan {
            changes: vec![c],
            ..Plan::default()
        });
        assert!(text.contains("+ result = (sensitive value)"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }

    #[test]
    fn a_sensitive_map_entry_hides_only_that_entry() {
        let tags = |pw: &str| {
            Value::object([(
                "triggers",
                smap([("password", Value::from(pw)), ("env", Value::from("prod"))]),
            )])
        };
        let secret = vec![
            PathStep::Key("triggers".into()),
            PathStep::Key("password".into()),
        ];
        let mut created = change(
            "null_resource.a",
            Action::Create,
            Value::null(),
            tags("s3cret"),
        );
        created.sensitive_paths = vec![secret.clone()];
        let mut updated = change(
            "null_resource.b",
            Action::Update,
            tags("old-pw"),
            Value::object([(
                "triggers",
                smap([
                    ("password", Value::from("new-pw")),
                    ("env", Value::from("dev")),
                ]),
            )]),
        );
        // Sensitive before only: the old value stays hidden too.
        updated.before_sensitive_paths = vec![secret];
        let text = render_plan(&Plan {
            changes: vec![created, updated],
            ..Plan::default()
        });
        assert!(text.contains("\"password\" = (sensitive value)"), "{text}");
        assert!(text.contains("\"env\"      = \"prod\""), "{text}");
        assert!(
            text.contains("~ \"env\"      = \"prod\" -> \"dev\""),
            "{text}"
        );
        assert!(
            text.contains("~ \"password\" = (sensitive value)"),
            "{text}"
        );
        for secret in ["s3cret", "old-pw", "new-pw"] {
            assert!(!text.contains(secret), "{secret} leaked:\n{text}");
        }
    }

    #[test]
    fn an_update_of_sensitivity_alone_shows_the_attribute_hidden() {
        let v = Value::object([
            ("id", Value::from("1")),
            ("triggers", smap([("pw", Value::from("s3cret"))])),
        ]);
        let mut c = change("null_resource.a", Action::Update, v.clone(), v);
        c.before_sensitive_paths = vec![vec![
            PathStep::Key("triggers".into()),
            PathStep::Key("pw".into()),
        ]];
        let text = render_plan(&Plan {
            changes: vec![c],
            ..Plan::default()
        });
        assert!(text.contains("        id       = \"1\"\n      ~ triggers = (sensitive value)\n        # (the value is unchanged; only whether it is sensitive changes)\n    }"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
    }

    /// Terraform 1.11.4's text for this update of a `sim_object`, as it
    /// printed it (only the id written here): `id`, `name` and `tags` show
    /// unchanged, and so do the unchanged entries of a changed `tags`; an
    /// unset attribute is not counted as hidden.
    #[test]
    fn an_update_shows_the_identifying_attributes_as_terraform_does() {
        let tags = |env: &str, x: bool| {
            let mut m = vec![("env", Value::from(env)), ("team", Value::from("fleet"))];
            if x {
                m.push(("x", Value::from("1")));
            }
            smap(m)
        };
        let before = Value::object([
            ("id", Value::from("1d25")),
            ("name", Value::from("app")),
            ("size", Value::int(3)),
            ("tags", tags("test", false)),
            ("note", Value::null()),
        ]);
        let mut after = before.clone();
        if let Value::Map(m) = &mut after {
            m.insert("size".into(), Value::int(5));
        }
        let c = change(
            "sim_object.app",
            Action::Update,
            before.clone(),
            after.clone(),
        );
        let text = render_plan(&Plan {
            changes: vec![c],
            ..Plan::default()
        });
        assert!(
            text.contains(concat!(
                "  # sim_object.app will be updated in-place\n",
                "  ~ resource \"sim_object\" \"app\" {\n",
                "        id   = \"1d25\"\n",
                "        name = \"app\"\n",
                "      ~ size = 3 -> 5\n",
                "        tags = {\n",
                "            \"env\"  = \"test\"\n",
                "            \"team\" = \"fleet\"\n",
                "        }\n",
                "    }\n",
            )),
            "{text}"
        );
        if let Value::Map(m) = &mut after {
            m.insert("tags".into(), tags("prod", true));
        }
        let c = change("sim_object.app", Action::Update, before, after);
        let text = render_plan(&Plan {
            changes: vec![c],
            ..Plan::default()
        });
        assert!(
            text.contains(concat!(
                "      ~ tags = {\n",
                "          ~ \"env\"  = \"test\" -> \"prod\"\n",
                "            \"team\" = \"fleet\"\n",
                "          + \"x\"    = \"1\"\n",
                "        }\n",
            )),
            "{text}"
        );
    }

    /// Terraform 1.11.4's text for a plan whose only change is a `moved`
    /// block (`null_resource.a2` to `a3`): no legend, the object as it is.
    #[test]
    fn a_move_alone_is_shown_without_a_legend() {
        let v = Value::object([("id", Value::from("1347")), ("triggers", Value::null())]);
        let plan = Plan {
            changes: vec![change("null_resource.a3", Action::NoOp, v.clone(), v)],
            moved: vec![(
                "null_resource.a2".parse().unwrap(),
                "null_resource.a3".parse().unwrap(),
            )],
            ..Plan::default()
        };
        assert_eq!(
            render_plan(&plan),
            concat!(
                "fleetform will perform the following actions:\n",
                "\n",
                "  # null_resource.a2 has moved to null_resource.a3\n",
                "    resource \"null_resource\" \"a3\" {\n",
                "        id = \"1347\"\n",
                "    }\n",
                "\n",
                "Plan: 0 to add, 0 to change, 0 to destroy.\n",
            )
        );
    }

    /// As Terraform 1.11.4 prints them: an import alone shows the object
    /// whole; an import or a move with a change says so under the headline.
    #[test]
    fn imports_and_moves_with_changes_say_where_the_object_comes_from() {
        let before = Value::object([("id", Value::from("abc")), ("input", Value::null())]);
        let after = Value::object([("id", Value::from("abc")), ("input", Value::from("v"))]);
        let imported = ResourceChange {
            provider: ProviderAddr::implied("terraform"),
            ..change(
                "terraform_data.x",
                Action::NoOp,
                before.clone(),
                before.clone(),
            )
        };
        let plan = Plan {
            changes: vec![imported.clone()],
            imports: [("terraform_data.x".parse().unwrap(), "abc".to_string())].into(),
            ..Plan::default()
        };
        assert_eq!(
            render_plan(&plan),
            concat!(
                "fleetform will perform the following actions:\n",
                "\n",
                "  # terraform_data.x will be imported\n",
                "    resource \"terraform_data\" \"x\" {\n",
                "        id = \"abc\"\n",
                "    }\n",
                "\n",
                "Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.\n",
            )
        );
        let updated = change(
            "terraform_data.x",
            Action::Update,
            before.clone(),
            after.clone(),
        );
        let plan = Plan {
            changes: vec![updated.clone()],
            ..plan
        };
        assert!(
            render_plan(&plan).contains(concat!(
                "  # terraform_data.x will be updated in-place\n",
                "  # (imported from \"abc\")\n",
                "  ~ resource \"terraform_data\" \"x\" {\n",
            )),
            "{}",
            render_plan(&plan)
        );
        let plan = Plan {
            changes: vec![change("terraform_data.y", Action::Update, before, after)],
            moved: vec![(
                "terraform_data.x".parse().unwrap(),
                "terraform_data.y".parse().unwrap(),
            )],
            ..Plan::default()
        };
        assert!(
            render_plan(&plan).contains(concat!(
                "  # terraform_data.y will be updated in-place\n",
                "  # (moved from terraform_data.x)\n",
                "  ~ resource \"terraform_data\" \"y\" {\n",
            )),
            "{}",
            render_plan(&plan)
        );
    }

    /// Terraform 1.11.4's text for this update of a `sim_server` (one
    /// disk resized, one rule's port changed, a label added): nested
    /// blocks drawn as blocks after the attributes, aligned on all of them.
    #[test]
    fn nested_blocks_are_drawn_as_blocks_by_their_shape() {
        use super::block_text::tests::{server, server_shape};
        let before = server(&[10, 20, 30], &[22, 80], &[("env", "prod")]);
        let after = server(
            &[10, 25, 30],
            &[2222, 80],
            &[("env", "prod"), ("team", "fleet")],
        );
        let mut c = change("sim_server.s", Action::Update, before, after);
        c.provider = ProviderAddr::implied("sim");
        c.requires_replace.clear();
        let token = vec![PathStep::Key("token".into())];
        c.sensitive_paths = vec![token.clone()];
        c.before_sensitive_paths = vec![token];
        let mut shapes = Shapes::default();
        shapes
            .0
            .entry(ProviderAddr::implied("sim").to_string())
            .or_default()
            .resources
            .insert("sim_server".into(), server_shape());
        let text = render_plan(&Plan {
            changes: vec![c],
            shapes,
            ..Plan::default()
        });
        assert!(
            text.contains(concat!(
                "  ~ resource \"sim_server\" \"s\" {\n",
                "        id        = \"s1\"\n",
                "        name      = \"web\"\n",
                "        # (2 unchanged attributes hidden)\n",
                "\n",
                "      ~ disk {\n",
                "          ~ size = 20 -> 25\n",
                "        }\n",
                "\n",
                "      + label \"team\" {\n",
                "          + value = \"fleet\"\n",
                "        }\n",
                "\n",
                "      - rule {\n",
                "          - port = 22 -> null\n",
                "        }\n",
                "      + rule {\n",
                "          + port = 2222\n",
                "        }\n",
                "\n",
                "        # (5 unchanged blocks hidden)\n",
                "    }\n",
            )),
            "{text}"
        );
    }

    #[test]
    fn no_changes_message() {
        assert!(render_plan(&Plan::default()).starts_with("No changes."));
    }
}
