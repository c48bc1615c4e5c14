//! Values inside a plan's attributes, laid out as Terraform 1.11 lays them
//! out: collections one element a line, each line with its change sign,
//! and a changed collection showing only what changed, with one unchanged
//! neighbour on each side of a changed element and a count of the rest.
//!
//! Positions are the column of the change sign of the line that holds the
//! value; nested lines go four columns right of it, closing brackets two.
//!
//! Maps and objects: a map (a map-typed attribute, whose keys Terraform
//! quotes and counts as "elements") is told from an object (attribute
//! names bare when they are identifiers, counted as "attributes") by the
//! type the value carries. Below an attribute Terraform renders maps of
//! any-typed values as objects, so only an attribute's own value can be a
//! map here. Sequences: a tuple (what expressions make) is compared
//! position by position; a list or set (typed so by a schema) by its
//! longest common subsequence of elements.

use super::heredoc;
use fleetform_shared::json::Json;
use fleetform_shared::plan::render_value as inline;
use fleetform_shared::types::Type;
use fleetform_shared::value::{Value, ValueList, ValueMap};
use std::collections::BTreeSet;
use std::fmt::Write;

/// What a sensitive value shows.
pub const HIDDEN: &str = "(sensitive value)";

/// How a value is placed: the sign column of its line, whether it is an
/// attribute's own value, and (for that value) the sensitive map keys.
#[derive(Clone, Copy)]
pub struct At<'h> {
    pub col: usize,
    pub top: bool,
    pub hidden: &'h BTreeSet<String>,
}

static NONE: BTreeSet<String> = BTreeSet::new();

impl At<'_> {
    /// The position of a value held by an entry of this one.
    fn inner(&self) -> At<'static> {
        At {
            col: self.col + 4,
            top: false,
            hidden: &NONE,
        }
    }
}

fn is_map(m: &ValueMap, at: &At<'_>) -> bool {
    at.top && matches!(m.ty(), Some(Type::Map(_)))
}

fn is_list(l: &ValueList) -> bool {
    matches!(l.ty(), Some(Type::List(_) | Type::Set(_)))
}

/// A key as Terraform shows it: map keys and names that are not
/// identifiers quoted, attribute names bare.
fn key_text(k: &str, map: bool) -> String {
    let ident = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if map || !ident {
        serde_json::to_string(k).unwrap_or_else(|_| k.to_string())
    } else {
        k.to_string()
    }
}

fn hidden_count(n: usize, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("# ({n} unchanged {noun}{s} hidden)")
}

/// `v` as created (`sign` '+'), destroyed ('-') or shown as it is (' '):
/// every nested line carries the sign.
pub fn whole(v: &Value, sign: char, at: At<'_>) -> String {
    match v {
        Value::Map(m) if !m.is_empty() => {
            let map = is_map(m, &at);
            let width = m.keys().map(|k| key_text(k, map).len()).max().unwrap_or(0);
            let pad = " ".repeat(at.col + 4);
            let mut s = "{\n".to_string();
            for (k, x) in m.iter() {
                let body = match at.hidden.contains(k.as_str()) {
                    true => HIDDEN.to_string(),
                    false => whole(x, sign, at.inner()),
                };
                let _ = writeln!(s, "{pad}{sign} {:<width$} = {body}", key_text(k, map));
            }
            s.push_str(&" ".repeat(at.col + 2));
            s.push('}');
            s
        }
        Value::Map(_) => "{}".into(),
        Value::List(l) if !l.is_empty() => {
            let pad = " ".repeat(at.col + 4);
            let mut s = "[\n".to_string();
            for x in l.iter() {
                let _ = writeln!(s, "{pad}{sign} {},", whole(x, sign, at.inner()));
            }
            s.push_str(&" ".repeat(at.col + 2));
            s.push(']');
            s
        }
        Value::List(_) => "[]".into(),
        _ => match (json_document(v), heredoc::multiline(v)) {
            (Some(doc), _) => {
                let inner = whole(&doc, sign, at.inner());
                jsonencode(&format!("  {inner}"), at)
            }
            (None, Some(text)) => heredoc::block(text, at.col, ""),
            (None, None) => inline(v),
        },
    }
}

/// A string holding a JSON object or array, as the value it encodes:
/// Terraform shows such strings as `jsonencode(...)` of that value.
fn json_document(v: &Value) -> Option<Value> {
    let Value::String(s) = v else {
        return None;
    };
    if !matches!(s.trim_start().as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    Json::parse(s.as_bytes()).ok().map(|j| from_json(&j))
}

fn from_json(j: &Json) -> Value {
    match j {
        Json::Null => Value::null(),
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Value::Number(n.clone()),
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::tuple(items.iter().map(from_json).collect()),
        Json::Object(m) => Value::object(m.iter().map(|(k, v)| (k.clone(), from_json(v)))),
    }
}

/// `jsonencode(` with `line` (sign and value, at the column of a nested
/// element) and the closing parenthesis under the holding line.
fn jsonencode(line: &str, at: At<'_>) -> String {
    format!(
        "jsonencode(\n{}{line}\n{})",
        " ".repeat(at.col + 4),
        " ".repeat(at.col + 2)
    )
}

/// The change from `b` to `a`, both present (neither null).
pub fn diff(b: &Value, a: &Value, at: At<'_>) -> String {
    match (b, a) {
        (_, Value::Unknown(_)) => format!("{} -> {}", whole(b, '-', at), inline(a)),
        (Value::Map(bm), Value::Map(am)) => map_diff(bm, am, at),
        (Value::List(bl), Value::List(al)) => list_diff(bl, al, at),
        (Value::String(_), Value::String(_))
            if let (Some(x), Some(y)) = (json_document(b), json_document(a))
                && x != y =>
        {
            jsonencode(&format!("~ {}", diff(&x, &y, at.inner())), at)
        }
        (Value::String(x), Value::String(y)) if x.contains('\n') || y.contains('\n') => {
            heredoc::diff(x, y, at.col, "")
        }
        _ => format!("{} -> {}", whole(b, '-', at), whole(a, '+', at)),
    }
}

fn map_diff(b: &ValueMap, a: &ValueMap, at: At<'_>) -> String {
    let map = is_map(a, &at) || is_map(b, &at);
    let keys: BTreeSet<&fleetform_shared::name::Name> = b.keys().chain(a.keys()).collect();
    let width = keys
        .iter()
        .map(|k| key_text(k, map).len())
        .max()
        .unwrap_or(0);
    let pad = " ".repeat(at.col + 4);
    let mut s = "{\n".to_string();
    let mut unchanged = 0;
    for k in keys {
        let key = key_text(k, map);
        let secret = at.hidden.contains(k.as_str());
        let shown = |v: &Value, sign| match secret {
            true => HIDDEN.to_string(),
            false => whole(v, sign, at.inner()),
        };
        let line = match (b.get(k), a.get(k)) {
            (Some(x), Some(y)) if x == y => {
                unchanged += 1;
                continue;
            }
            (Some(Value::Null(_)), Some(y)) | (None, Some(y)) => {
                format!("+ {key:<width$} = {}", shown(y, '+'))
            }
            // A map's entry removed "-> null", an object's attribute not.
            (Some(x), Some(Value::Null(_))) | (Some(x), None) => {
                let gone = if map { " -> null" } else { "" };
                format!("- {key:<width$} = {}{gone}", shown(x, '-'))
            }
            (Some(_), Some(y)) if secret => format!("~ {key:<width$} = {}", shown(y, '~')),
            (Some(x), Some(y)) => format!("~ {key:<width$} = {}", diff(x, y, at.inner())),
            (None, None) => continue,
        };
        let _ = writeln!(s, "{pad}{line}");
    }
    if unchanged > 0 {
        let noun = if map { "element" } else { "attribute" };
        let _ = writeln!(s, "{pad}  {}", hidden_count(unchanged, noun));
    }
    s.push_str(&" ".repeat(at.col + 2));
    s.push('}');
    s
}

/// One element of a changed sequence.
enum Step<'v> {
    Same(&'v Value),
    Changed(&'v Value, &'v Value),
    Added(&'v Value),
    Removed(&'v Value),
}

fn list_diff(b: &ValueList, a: &ValueList, at: At<'_>) -> String {
    let (bs, as_): (Vec<&Value>, Vec<&Value>) = (b.iter().collect(), a.iter().collect());
    let steps = if is_list(b) || is_list(a) {
        common_subsequence(&bs, &as_)
    } else {
        positional(&bs, &as_)
    };
    let changed = |s: &Step<'_>| !matches!(s, Step::Same(_));
    let pad = " ".repeat(at.col + 4);
    let mut s = "[\n".to_string();
    let mut hidden = 0;
    let flush = |s: &mut String, hidden: &mut usize| {
        if *hidden > 0 {
            let _ = writeln!(s, "{pad}  {}", hidden_count(*hidden, "element"));
            *hidden = 0;
        }
    };
    for (i, step) in steps.iter().enumerate() {
        let line = match step {
            Step::Same(v) => {
                // One unchanged element beside each change is shown.
                let near =
                    (i > 0 && changed(&steps[i - 1])) || steps.get(i + 1).is_some_and(changed);
                if !near {
                    hidden += 1;
                    continue;
                }
                format!("  {},", whole(v, ' ', at.inner()))
            }
            Step::Changed(x, y) => format!("~ {},", diff(x, y, at.inner())),
            Step::Added(y) => format!("+ {},", whole(y, '+', at.inner())),
            Step::Removed(x) => format!("- {},", whole(x, '-', at.inner())),
        };
        flush(&mut s, &mut hidden);
        let _ = writeln!(s, "{pad}{line}");
    }
    flush(&mut s, &mut hidden);
    s.push_str(&" ".repeat(at.col + 2));
    s.push(']');
    s
}

/// Tuples: element i against element i; what one has beyond the other is
/// added or removed.
fn positional<'v>(b: &[&'v Value], a: &[&'v Value]) -> Vec<Step<'v>> {
    let mut out = Vec::new();
    for i in 0..b.len().max(a.len()) {
        out.push(match (b.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => Step::Same(x),
            (Some(x), Some(y)) => Step::Changed(x, y),
            (None, Some(y)) => Step::Added(y),
            (Some(x), None) => Step::Removed(x),
            (None, None) => unreachable!("within the longer of the two"),
        });
    }
    out
}

/// Lists and sets: the elements both keep, in order; the rest removed
/// and added.
fn common_subsequence<'v>(b: &[&'v Value], a: &[&'v Value]) -> Vec<Step<'v>> {
    let (n, m) = (b.len(), a.len());
    let mut common = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            common[i][j] = if b[i] == a[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && b[i] == a[j] {
            out.push(Step::Same(b[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || common[i + 1][j] >= common[i][j + 1]) {
            out.push(Step::Removed(b[i]));
            i += 1;
        } else {
            out.push(Step::Added(a[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(col: usize) -> At<'static> {
        At {
            col,
            top: true,
            hidden: &NONE,
        }
    }

    fn strings(items: &[&str]) -> Value {
        Value::tuple(items.iter().map(|s| Value::from(*s)).collect())
    }

    #[test]
    fn created_collections_take_a_line_per_element() {
        let v = Value::object([
            ("list", strings(&["a", "b"])),
            ("empty", Value::tuple(vec![])),
            ("z w", Value::Bool(true)),
            (
                "nest",
                Value::tuple(vec![Value::object([("n", Value::int(1))])]),
            ),
        ]);
        assert_eq!(
            whole(&v, '+', at(6)),
            "{
          + empty = []
          + list  = [
              + \"a\",
              + \"b\",
            ]
          + nest  = [
              + {
                  + n = 1
                },
            ]
          + \"z w\" = true
        }"
        );
    }

    #[test]
    fn a_changed_tuple_shows_changes_with_one_neighbour_each_side() {
        let b = strings(&["a", "b", "c", "d", "e", "f", "g"]);
        let a = strings(&["a", "b", "c", "D", "e", "f", "g"]);
        assert_eq!(
            diff(&b, &a, at(10)),
            "[
                # (2 unchanged elements hidden)
                \"c\",
              ~ \"d\" -> \"D\",
                \"e\",
                # (2 unchanged elements hidden)
            ]"
        );
        assert_eq!(
            diff(&strings(&["a", "b"]), &strings(&["a", "b", "c"]), at(10)),
            "[
                # (1 unchanged element hidden)
                \"b\",
              + \"c\",
            ]"
        );
    }

    #[test]
    fn a_changed_object_hides_what_did_not_change() {
        let b = Value::object([
            ("x", Value::int(1)),
            ("y", Value::from("two")),
            ("gone", Value::from("bye")),
        ]);
        let a = Value::object([
            ("x", Value::int(2)),
            ("y", Value::from("two")),
            ("new", Value::Bool(true)),
        ]);
        assert_eq!(
            diff(&b, &a, at(6)),
            "{
          - gone = \"bye\"
          + new  = true
          ~ x    = 1 -> 2
            # (1 unchanged attribute hidden)
        }"
        );
        let list = |items: &[&str]| {
            Value::typed_list(
                items.iter().map(|s| Value::from(*s)).collect(),
                Type::list(Type::String),
            )
        };
        assert_eq!(
            diff(&list(&["a", "b", "c"]), &list(&["a", "c", "d"]), at(6)),
            "[
            \"a\",
          - \"b\",
            \"c\",
          + \"d\",
        ]"
        );
    }
}
