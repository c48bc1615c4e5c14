//! Diagnostics as people read them: Terraform's framed form (or its plain
//! form under `-no-color`), the detail wrapped to the terminal, the
//! location naming the top-level block it is in, and `-compact-warnings`.

use fleetform_lang::config::{context_at, top_level_blocks};
use fleetform_shared::diag::{Diagnostic, Diagnostics, Severity, render, render_plain};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

static COMPACT_WARNINGS: AtomicBool = AtomicBool::new(false);

/// `-no-color`: diagnostics without the frame, as Terraform prints them
/// then. (fleetform never colors; the frame is what `-no-color` removes.)
static PLAIN: AtomicBool = AtomicBool::new(false);

/// `-compact-warnings`: warnings as one line each from now on.
pub fn set_compact_warnings(on: bool) {
    COMPACT_WARNINGS.store(on, Ordering::Relaxed);
}

pub fn set_plain(on: bool) {
    PLAIN.store(on, Ordering::Relaxed);
}

/// The width to wrap diagnostics at: standard error's, when it is a
/// terminal. Piped output is never wrapped, so tools see whole lines
/// (Terraform wraps it at 78 columns: a difference we keep on purpose).
fn terminal_width() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stderr()).map(|(w, _)| w.0 as usize)
}

/// `text` in lines of at most `width` characters, as Terraform fills
/// them: greedily (textwrap's default balances lines), breaking at spaces
/// only (not after the `/` of a path).
pub fn fill(text: &str, width: usize) -> String {
    let options = textwrap::Options::new(width)
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::fill(text, options)
}

/// `d` with its detail wrapped to `width` columns of the box Terraform
/// draws ("│ " before each line); the lines it already has stay.
fn wrapped(d: Diagnostic, width: usize) -> Diagnostic {
    let room = width.saturating_sub(2).max(20);
    let detail = d
        .detail
        .lines()
        .map(|line| fill(line, room))
        .collect::<Vec<_>>()
        .join("\n");
    Diagnostic { detail, ..d }
}

type Blocks = Arc<Vec<(Range<usize>, String)>>;

/// The top-level blocks of each source file, parsed once per process
/// (a run can report the same warning for thousands of instances).
static BLOCKS: Mutex<Option<HashMap<(String, usize), Blocks>>> = Mutex::new(None);

fn blocks_of(filename: &str, source: &str) -> Blocks {
    let key = (filename.to_string(), source.len());
    let mut cache = BLOCKS.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert_with(|| Arc::new(top_level_blocks(filename, source)))
        .clone()
}

/// `d` naming the top-level block its range is in ("in output \"x\""),
/// as Terraform names it from the source, unless it names one already.
fn in_context(d: Diagnostic, sources: &BTreeMap<String, String>) -> Diagnostic {
    if d.context.is_some() {
        return d;
    }
    let Some(r) = &d.range else {
        return d;
    };
    let Some(source) = sources.get(&r.filename) else {
        return d;
    };
    let blocks = blocks_of(&r.filename, source);
    match context_at(&blocks, r.start.byte) {
        Some(header) => {
            let header = header.to_string();
            d.in_context(header)
        }
        None => d,
    }
}

/// A diagnostic as people read it: in full (its detail wrapped to the
/// terminal), or (a warning under `-compact-warnings`) as one line with its
/// location.
pub fn diagnostic(d: &Diagnostic, sources: &BTreeMap<String, String>) -> String {
    if d.severity == Severity::Warning && COMPACT_WARNINGS.load(Ordering::Relaxed) {
        let at = d
            .range
            .as_ref()
            .map(|r| format!(" (on {} line {})", r.filename, r.start.line))
            .unwrap_or_default();
        return format!("Warning: {}{at}\n", d.summary);
    }
    framed(in_context(d.clone(), sources), terminal_width(), sources)
}

/// [`diagnostic`] wrapped as Terraform's `test` wraps it also off a
/// terminal: its 78 columns, less the box, keep each line of the detail
/// under 76 characters.
pub fn diagnostic_wrapped(d: &Diagnostic, sources: &BTreeMap<String, String>) -> String {
    let width = terminal_width().unwrap_or(77);
    framed(in_context(d.clone(), sources), Some(width), sources)
}

fn framed(mut d: Diagnostic, width: Option<usize>, sources: &BTreeMap<String, String>) -> String {
    if let Some(width) = width {
        d = wrapped(d, width);
    }
    if PLAIN.load(Ordering::Relaxed) {
        render_plain(&d, sources)
    } else {
        render(&d, sources)
    }
}

/// `diags` as Terraform lists them: by file, line and column, those with
/// no location first, otherwise in the order they came.
pub fn in_source_order(diags: &Diagnostics) -> Vec<&Diagnostic> {
    let mut out: Vec<&Diagnostic> = diags.iter().collect();
    out.sort_by_key(|d| {
        d.range
            .as_ref()
            .map(|r| (r.filename.clone(), r.start.line, r.start.column))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_wrap_to_the_width_and_keep_their_own_line_breaks() {
        let d = Diagnostic::error(
            "Summary",
            "one two three four five six seven eight nine ten eleven twelve\nshort line",
        );
        let w = wrapped(d, 30);
        for line in w.detail.lines() {
            assert!(line.chars().count() <= 28, "{line:?}");
        }
        assert_eq!(w.detail.lines().last(), Some("short line"));
        assert!(w.detail.lines().count() >= 4, "{:?}", w.detail);
        assert_eq!(w.summary, "Summary");
        let text = render(&w, &BTreeMap::new());
        assert!(text.contains("│ short line\n"), "{text}");
    }
}
