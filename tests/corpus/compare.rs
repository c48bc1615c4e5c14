//! Expectations of the corpus test and how a run is held against them:
//! outputs (value, type and sensitivity; values compared exactly, numbers
//! by value, or, for outputs random by design, matched against a pattern);
//! managed resource instances; the saved plan's resource changes; files.
//!
//! Included by tests/tests/corpus.rs (`#[path]`), kept beside the manifest
//! whose rules it implements.

use super::{Module, corpus_dir};
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How one output is compared; outputs without a rule compare exactly.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The whole string must match this pattern (a regex subset, see
    /// [`Pattern`]); the recorded value is not looked at.
    pub regex: String,
}

/// The differences between `want` (recorded, or Terraform's) and `got`
/// (`output -json`'s objects: value, type, sensitive), one line each, at
/// most a few per output so a wholly wrong value stays readable.
pub fn compare_outputs(
    want: &BTreeMap<String, Json>,
    got: &BTreeMap<String, Json>,
    rules: &BTreeMap<String, Rule>,
) -> Vec<String> {
    let mut out = Vec::new();
    for name in want.keys().filter(|k| !got.contains_key(*k)) {
        out.push(format!("output {name}: missing"));
    }
    for name in got.keys().filter(|k| !want.contains_key(*k)) {
        out.push(format!(
            "output {name}: not expected (value {})",
            short(&got[name]["value"])
        ));
    }
    for (name, w_out) in want {
        let Some(g_out) = got.get(name) else { continue };
        for key in ["type", "sensitive"] {
            let (w, g) = (&w_out[key], &g_out[key]);
            if w != g {
                out.push(format!(
                    "output {name}: {key}: want {}, got {}",
                    short(w),
                    short(g)
                ));
            }
        }
        let (w, g) = (&w_out["value"], &g_out["value"]);
        if let Some(rule) = rules.get(name) {
            let pattern = Pattern::parse(&rule.regex).expect("valid pattern in the manifest");
            match g.as_str() {
                Some(s) if pattern.matches(s) => {}
                _ => out.push(format!(
                    "output {name}: {} does not match /{}/",
                    short(g),
                    rule.regex
                )),
            }
            continue;
        }
        let mut diffs = Vec::new();
        diff(name, w, g, &mut diffs);
        let n = diffs.len();
        out.extend(diffs.into_iter().take(5));
        if n > 5 {
            out.push(format!("output {name}: ... and {} more differences", n - 5));
        }
    }
    out
}

fn short(v: &Json) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}...", s.chars().take(160).collect::<String>())
    } else {
        s
    }
}

pub fn diff(path: &str, want: &Json, got: &Json, out: &mut Vec<String>) {
    match (want, got) {
        (Json::Object(w), Json::Object(g)) => {
            for k in w.keys().chain(g.keys().filter(|k| !w.contains_key(*k))) {
                let p = format!("{path}.{k}");
                match (w.get(k), g.get(k)) {
                    (Some(a), Some(b)) => diff(&p, a, b, out),
                    (Some(a), None) => out.push(format!("{p}: missing (want {})", short(a))),
                    (None, Some(b)) => out.push(format!("{p}: not expected (got {})", short(b))),
                    (None, None) => {}
                }
            }
        }
        (Json::Array(w), Json::Array(g)) if w.len() == g.len() => {
            for (i, (a, b)) in w.iter().zip(g).enumerate() {
                diff(&format!("{path}[{i}]"), a, b, out);
            }
        }
        _ if same_leaf(want, got) => {}
        _ => out.push(format!("{path}: want {}, got {}", short(want), short(got))),
    }
}

/// Equal leaves; numbers by value, as `8` and `8.0` are the same number
/// (Terraform's JSON and ours may spell one differently).
fn same_leaf(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        _ => a == b,
    }
}

/// `output -json` (all outputs) as name → its object (value, type,
/// sensitive).
pub fn parse_outputs(stdout: &str) -> Result<BTreeMap<String, Json>, String> {
    serde_json::from_str(stdout).map_err(|e| format!("output -json is not JSON ({e}): {stdout}"))
}

/// Whether a `state list` address is a data resource instance: `data.` after
/// the module path (`module.a["k.data.x"].module.b[0].`), whose keys may hold
/// any character inside their quotes.
pub fn is_data_address(addr: &str) -> bool {
    let mut rest = addr;
    while let Some(after) = rest.strip_prefix("module.") {
        let name_end = after.find(['.', '[']).unwrap_or(after.len());
        let mut tail = &after[name_end..];
        if tail.starts_with('[') {
            // Skip the instance key, a number or a quoted string.
            let mut quoted = false;
            let mut escaped = false;
            let close = tail.char_indices().skip(1).find(|&(_, c)| {
                let end = !quoted && c == ']';
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => quoted = !quoted,
                    _ => {}
                }
                end
            });
            tail = close.map_or("", |(i, _)| &tail[i + 1..]);
        }
        rest = tail.strip_prefix('.').unwrap_or(tail);
    }
    rest.starts_with("data.")
}

/// What one tool's plan and apply gave: the outputs (`output -json`'s
/// objects), the managed resource instances (`state list` without data
/// sources, sorted) and the saved plan's resource changes
/// ([`super::plan::resource_changes`]). The expectations have the same shape.
pub struct Observed {
    pub outputs: BTreeMap<String, Json>,
    pub state: Vec<String>,
    pub changes: Vec<Json>,
}

/// The recorded expectations of a module: `expected.json` (outputs),
/// `expected_state.txt` (one address a line) and `expected_plan.json`
/// (resource changes).
pub type Expected = Observed;

impl Expected {
    fn paths(m: &Module) -> (PathBuf, PathBuf, PathBuf) {
        let dir = corpus_dir().join(&m.name);
        (
            dir.join("expected.json"),
            dir.join("expected_state.txt"),
            dir.join("expected_plan.json"),
        )
    }

    pub fn empty() -> Expected {
        Expected {
            outputs: BTreeMap::new(),
            state: Vec::new(),
            changes: Vec::new(),
        }
    }

    pub fn load(m: &Module) -> Result<Expected, String> {
        let (outputs, state, changes) = Expected::paths(m);
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|e| {
                format!(
                    "{}: {e} (FLEETFORM_CORPUS_RECORD=1 records Terraform's)",
                    p.display()
                )
            })
        };
        Ok(Expected {
            outputs: serde_json::from_str(&read(&outputs)?)
                .map_err(|e| format!("{}: {e}", outputs.display()))?,
            state: read(&state)?.lines().map(str::to_string).collect(),
            changes: serde_json::from_str(&read(&changes)?)
                .map_err(|e| format!("{}: {e}", changes.display()))?,
        })
    }

    pub fn record(&self, m: &Module) {
        let (outputs, state, changes) = Expected::paths(m);
        std::fs::create_dir_all(outputs.parent().unwrap()).unwrap();
        let json = serde_json::to_string_pretty(&self.outputs).unwrap() + "\n";
        std::fs::write(outputs, json).unwrap();
        let lines: String = self.state.iter().map(|a| format!("{a}\n")).collect();
        std::fs::write(state, lines).unwrap();
        let json = serde_json::to_string_pretty(&self.changes).unwrap() + "\n";
        std::fs::write(changes, json).unwrap();
    }

    /// Everything in which `seen` (with the files under `root`) differs.
    pub fn differences(&self, m: &Module, seen: &Observed, root: &Path) -> Vec<String> {
        let mut out = compare_outputs(&self.outputs, &seen.outputs, &m.outputs);
        for a in self.state.iter().filter(|a| !seen.state.contains(a)) {
            out.push(format!("state: {a} missing"));
        }
        for a in seen.state.iter().filter(|a| !self.state.contains(a)) {
            out.push(format!("state: {a} not expected"));
        }
        out.extend(super::plan::compare_changes(&self.changes, &seen.changes));
        for (f, want) in &m.files_expected {
            match std::fs::read_to_string(root.join(f)) {
                Ok(got) if &got == want => {}
                Ok(got) => out.push(format!("file {f}: want {want:?}, got {got:?}")),
                Err(e) => out.push(format!("file {f}: {e}")),
            }
        }
        out
    }
}

/// A small regex subset, enough for the formats of random and time values
/// (the test crate has no regex dependency): literals, `.`, `\d`, `\w`,
/// escaped punctuation, classes `[a-z0-9_-]` / `[^...]`, and the quantifiers
/// `?`, `*`, `+`, `{n}`, `{n,m}`. It always matches the whole string, so `^`
/// and `$` at the ends are accepted and ignored; groups and `|` are refused.
#[derive(Debug)]
pub struct Pattern(Vec<Piece>);

#[derive(Debug)]
struct Piece {
    atom: Atom,
    min: usize,
    max: usize,
}

#[derive(Debug)]
enum Atom {
    Char(char),
    Any,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Atom {
    fn accepts(&self, c: char) -> bool {
        match self {
            Atom::Char(x) => *x == c,
            Atom::Any => true,
            Atom::Class { negated, ranges } => {
                ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
            }
        }
    }
}

fn escape_class(c: char) -> Atom {
    match c {
        'd' => Atom::Class {
            negated: false,
            ranges: vec![('0', '9')],
        },
        'w' => Atom::Class {
            negated: false,
            ranges: vec![('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')],
        },
        other => Atom::Char(other),
    }
}

impl Pattern {
    pub fn parse(src: &str) -> Result<Pattern, String> {
        let src = src.strip_prefix('^').unwrap_or(src);
        let src = src.strip_suffix('$').unwrap_or(src);
        let chars: Vec<char> = src.chars().collect();
        let mut pieces = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let atom = match chars[i] {
                '.' => Atom::Any,
                '\\' => {
                    i += 1;
                    escape_class(*chars.get(i).ok_or("trailing backslash")?)
                }
                '[' => {
                    let (atom, next) = parse_class(&chars, i + 1)?;
                    i = next - 1;
                    atom
                }
                c @ ('(' | ')' | '|' | '^' | '$' | '?' | '*' | '+' | '{') => {
                    return Err(format!("unsupported `{c}` in pattern /{src}/"));
                }
                c => Atom::Char(c),
            };
            i += 1;
            let (min, max, next) = parse_quantifier(&chars, i)?;
            i = next;
            pieces.push(Piece { atom, min, max });
        }
        Ok(Pattern(pieces))
    }

    pub fn matches(&self, s: &str) -> bool {
        let chars: Vec<char> = s.chars().collect();
        match_from(&self.0, &chars)
    }
}

/// A class from just after `[`; returns it and the index after `]`.
fn parse_class(chars: &[char], mut i: usize) -> Result<(Atom, usize), String> {
    let negated = chars.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    loop {
        let c = *chars.get(i).ok_or("unclosed [")?;
        if c == ']' {
            return Ok((Atom::Class { negated, ranges }, i + 1));
        }
        let lo = if c == '\\' {
            i += 1;
            match escape_class(*chars.get(i).ok_or("unclosed [")?) {
                Atom::Class { ranges: r, .. } => {
                    ranges.extend(r);
                    i += 1;
                    continue;
                }
                Atom::Char(x) => x,
                Atom::Any => unreachable!("escapes are classes or characters"),
            }
        } else {
            c
        };
        // `a-z` is a range; a `-` first or last is itself.
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|c| *c != ']') {
            ranges.push((lo, chars[i + 2]));
            i += 3;
        } else {
            ranges.push((lo, lo));
            i += 1;
        }
    }
}

fn parse_quantifier(chars: &[char], i: usize) -> Result<(usize, usize, usize), String> {
    Ok(match chars.get(i) {
        Some('?') => (0, 1, i + 1),
        Some('*') => (0, usize::MAX, i + 1),
        Some('+') => (1, usize::MAX, i + 1),
        Some('{') => {
            let end = chars[i..]
                .iter()
                .position(|c| *c == '}')
                .ok_or("unclosed {")?
                + i;
            let body: String = chars[i + 1..end].iter().collect();
            let num = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("bad count {{{body}}}"))
            };
            match body.split_once(',') {
                Some((a, b)) => (num(a)?, num(b)?, end + 1),
                None => (num(&body)?, num(&body)?, end + 1),
            }
        }
        _ => (1, 1, i),
    })
}

/// Backtracking: the pieces consume all of `s`.
fn match_from(pieces: &[Piece], s: &[char]) -> bool {
    let Some((p, rest)) = pieces.split_first() else {
        return s.is_empty();
    };
    let most = s
        .iter()
        .take(p.max)
        .take_while(|c| p.atom.accepts(**c))
        .count();
    (p.min..=most).rev().any(|n| match_from(rest, &s[n..]))
}

#[test]
fn patterns_match_whole_strings() {
    let p = Pattern::parse("^st[a-z][a-z0-9]{3}$").unwrap();
    assert!(p.matches("stq1x9"));
    assert!(!p.matches("st1q1x"), "the class after st wants a letter");
    assert!(!p.matches("stq1x9z"), "whole string only");
    let t = Pattern::parse(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$").unwrap();
    assert!(t.matches("2026-11-24T01:00:49Z"));
    assert!(!t.matches("2026-11-24 01:00:49Z"));
    let r = Pattern::parse("a[^-x]+b?c{1,2}").unwrap();
    assert!(r.matches("ayyc") && r.matches("aybcc"));
    assert!(!r.matches("a-c") && !r.matches("axc") && !r.matches("ay"));
    let q = Pattern::parse("x{2,3}").unwrap();
    assert!(!q.matches("x") && q.matches("xx") && q.matches("xxx") && !q.matches("xxxx"));
    assert!(Pattern::parse("(a|b)").is_err());
}

#[test]
fn data_addresses_are_told_from_managed_ones() {
    assert!(is_data_address("data.local_file.saturn[0]"));
    assert!(is_data_address(
        "module.dots[\"a.b\"].module.venus[1].data.local_file.pluto[0]"
    ));
    assert!(!is_data_address(
        "module.dots[\"x].data.y\"].random_integer.jupiter[0]"
    ));
    assert!(!is_data_address("module.m.local_file.foo[\"#1\"]"));
    assert!(!is_data_address("random_integer.data"));
}
