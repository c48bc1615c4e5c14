//! The "Changes to Outputs" part of a plan as Terraform 1.11 writes it:
//! names aligned, a created or removed collection over several lines with
//! a marker on each item.

use fleetform_shared::plan::render_value as inline;
use fleetform_shared::plan::{Action, OutputChange};
use fleetform_shared::value::Value;
use std::fmt::Write;

const HIDDEN: &str = "(sensitive value)";

/// The section, from its heading, for the outputs that change.
pub(super) fn write_output_changes(out: &mut String, outputs: &[(&String, &OutputChange)]) {
    if outputs.is_empty() {
        return;
    }
    out.push_str("\nChanges to Outputs:\n");
    let width = outputs.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, o) in outputs {
        let text = match (o.action, &o.before) {
            _ if o.sensitive => match o.action {
                Action::Update => format!("{HIDDEN} -> {HIDDEN}"),
                Action::Delete => format!("{HIDDEN} -> null"),
                _ => HIDDEN.to_string(),
            },
            (Action::Update, Some(before)) => format!("{} -> {}", inline(before), inline(&o.after)),
            (Action::Delete, Some(before)) => format!("{} -> null", block(before, 4, '-')),
            _ => block(&o.after, 4, '+'),
        };
        let sym = match o.action {
            Action::Create => "+",
            Action::Delete => "-",
            _ => "~",
        };
        let _ = writeln!(out, "  {sym} {name:<width$} = {text}");
    }
}

/// `v` with each item of a collection on its own line after `marker`; the
/// closing bracket at `indent` columns.
fn block(v: &Value, indent: usize, marker: char) -> String {
    let pad = " ".repeat(indent + 2);
    let close = " ".repeat(indent);
    match v {
        Value::List(items) if !items.is_empty() => {
            let mut s = String::from("[\n");
            for i in items {
                let _ = writeln!(s, "{pad}{marker} {},", block(i, indent + 4, marker));
            }
            format!("{s}{close}]")
        }
        Value::Map(m) if !m.is_empty() => {
            let keys: Vec<String> = m.keys().map(|k| key(k)).collect();
            let width = keys.iter().map(|k| k.chars().count()).max().unwrap_or(0);
            let mut s = String::from("{\n");
            for (k, x) in keys.iter().zip(m.values()) {
                let _ = writeln!(
                    s,
                    "{pad}{marker} {k:<width$} = {}",
                    block(x, indent + 4, marker)
                );
            }
            format!("{s}{close}}}")
        }
        Value::List(_) => "[]".into(),
        Value::Map(_) => "{}".into(),
        other => inline(other),
    }
}

/// An output's type is not known to the renderer, so its keys are
/// written as an object's: bare when they are names, quoted otherwise.
fn key(k: &str) -> String {
    let name = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if name {
        k.to_string()
    } else {
        serde_json::to_string(k).unwrap_or_else(|_| format!("\"{k}\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_collections_take_a_line_an_item() {
        let names = OutputChange {
            action: Action::Create,
            before: None,
            after: Value::tuple(vec![Value::from("a"), Value::from("b")]),
            sensitive: false,
        };
        let tags = OutputChange {
            action: Action::Create,
            before: None,
            after: Value::object([("env", Value::from("dev")), ("two words", Value::from("x"))]),
            sensitive: false,
        };
        let (n, t) = ("names".to_string(), "tags".to_string());
        let mut out = String::new();
        write_output_changes(&mut out, &[(&n, &names), (&t, &tags)]);
        assert_eq!(
            out,
            "\nChanges to Outputs:\n  + names = [\n      + \"a\",\n      + \"b\",\n    ]\n  + tags  = {\n      + env         = \"dev\"\n      + \"two words\" = \"x\"\n    }\n"
        );
    }
}
