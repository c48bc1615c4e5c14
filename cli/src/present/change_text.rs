//! One resource change (or drift) as `terraform plan` shows it: its
//! headline, then the resource block with what changes in it, attribute by
//! attribute, sensitive and write-only values hidden. The plan
//! ([`super::plan_text`]) and the drift ([`super::drift_text`]) both draw
//! their entries with [`render_entry`].

use super::block_text;
use super::value_text::{self, HIDDEN};
use fleetform_shared::addr::ResourceMode;
use fleetform_shared::marks::Marks;
use fleetform_shared::plan::render_value as inline;
use fleetform_shared::plan::shape::Shapes;
use fleetform_shared::plan::{Action, ResourceChange};
use fleetform_shared::value::{PathStep, Value};
use std::collections::BTreeSet;
use std::fmt::Write;

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
    let is_block = |name: &str| shape.is_some_and(|s| s.blocks.contains_key(name));
    let names: BTreeSet<&fleetform_shared::name::Name> = before
        .keys()
        .chain(after.keys())
        .filter(|n| !is_block(n))
        .collect();
    let before_marks = Marks::from_paths(c.before_sensitive_paths.iter().cloned());
    let after_marks = Marks::from_paths(c.sensitive_paths.iter().cloned());
    // An update may only change what is sensitive: those attributes show.
    let resensitized = |name: &str| {
        let step = PathStep::Key(name.to_string());
        c.action == Action::Update && before_marks.child(&step) != after_marks.child(&step)
    };
    // Terraform 1.x shows the attributes that identify an object (`id`,
    // `name`, `tags`) in an update even when they do not change (and in an
    // object that only moved).
    let in_place = c.action == Action::Update || c.action == Action::NoOp;
    let identifying = |name: &str| {
        (in_place || c.action.is_replace())
            && IDENTIFYING.contains(&name)
            && before.get(name).is_some_and(|v| !v.is_null())
            && before.get(name) == after.get(name)
    };
    // Write-only attributes are null on both sides: Terraform names them
    // in a create, a destroy or a replacement, and counts them among the
    // unchanged attributes of an update.
    let write_only = |name: &str| {
        c.write_only_paths
            .iter()
            .any(|p| p == &[PathStep::Key(name.to_string())])
    };
    let shows_write_only =
        matches!(c.action, Action::Create | Action::Delete) || c.action.is_replace();
    let shown = |name: &str| {
        if write_only(name) {
            return shows_write_only;
        }
        !is_hidden(before.get(name), after.get(name), c.action)
            || resensitized(name)
            || identifying(name)
    };
    // Aligned on every attribute that is set before or after, shown or
    // hidden as unchanged, as Terraform 1.11 aligns them.
    let set = |n: &str| {
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
            .and_then(|s| s.attributes.get(name.as_str()))
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
            .any(|p| p.first() == Some(&PathStep::Key(name.to_string())));
        let note = if forces && c.action.is_replace() {
            " # forces replacement"
        } else {
            ""
        };
        if let Some(s) = nested {
            let path = [PathStep::Key(name.to_string())];
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
        if identifying(name) && !marks.touches(&[PathStep::Key(name.to_string())]) {
            let body = value_block(a, 6, ' ', "", &BTreeSet::new());
            let _ = writeln!(out, "        {name:<width$} = {body}");
            continue;
        }
        let path = [PathStep::Key(name.to_string())];
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
            let keys: BTreeSet<&fleetform_shared::name::Name> =
                bm.keys().chain(am.keys()).collect();
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
                let shown = |v: &Value, sign: char| match hidden.contains(k.as_str()) {
                    true => HIDDEN.to_string(),
                    false => value_text::whole(v, sign, inner),
                };
                match (bm.get(k), am.get(k)) {
                    (Some(x), Some(y)) if x == y && show_unchanged => {
                        let _ = writeln!(s, "{pad}  {key:<width$} = {}", shown(x, ' '));
                    }
                    (Some(x), Some(y)) if x == y => unchanged += 1,
                    (Some(_), Some(y)) if hidden.contains(k.as_str()) => {
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

pub(super) fn value_block(
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

pub(super) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| s.to_string())
}

pub(super) fn symbol(a: Action) -> &'static str {
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

const WRITE_ONLY: &str = "(write-only attribute)";
