//! Diagnostics: problems a user can fix (bad HCL, unknown reference, cycle,
//! provider error). They accumulate instead of failing fast, carry a source
//! range, and render the way Terraform renders them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Severity {
    Error,
    Warning,
}

/// A position in a source file; line and column are 1-based, byte is 0-based.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
    pub byte: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRange {
    pub filename: String,
    pub start: Pos,
    pub end: Pos,
}

impl SourceRange {
    /// Builds a range from byte offsets into `source`, computing lines and columns.
    pub fn from_bytes(filename: &str, source: &str, start: usize, end: usize) -> SourceRange {
        SourceRange {
            filename: filename.to_string(),
            start: pos_of(source, start),
            end: pos_of(source, end),
        }
    }

    /// The range from the start of `self` to the end of `other`.
    pub fn to(&self, other: &SourceRange) -> SourceRange {
        SourceRange {
            filename: self.filename.clone(),
            start: self.start,
            end: other.end,
        }
    }
}

/// Where the lines of one source text start, so that each position is
/// found by a binary search, not by counting lines from the start of the
/// file (which made loading a 4,000-line file quadratic).
#[derive(Clone, Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(source: &str) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { starts }
    }

    /// [`pos_of`], for the source this index was made from.
    pub fn pos(&self, source: &str, byte: usize) -> Pos {
        let byte = byte.min(source.len());
        let before = floor_char_boundary(source, byte);
        let line = self.starts.partition_point(|&s| s <= before);
        let line_start = self.starts[line - 1];
        let column = source[line_start..before].chars().count() + 1;
        Pos { line, column, byte }
    }

    /// [`SourceRange::from_bytes`], for the source this index was made from.
    pub fn range(&self, filename: &str, source: &str, start: usize, end: usize) -> SourceRange {
        SourceRange {
            filename: filename.to_string(),
            start: self.pos(source, start),
            end: self.pos(source, end),
        }
    }
}

/// Line and column (in characters) of a byte offset.
pub fn pos_of(source: &str, byte: usize) -> Pos {
    let byte = byte.min(source.len());
    let before = &source[..floor_char_boundary(source, byte)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let column = before[line_start..].chars().count() + 1;
    Pos { line, column, byte }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for SourceRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{},{}",
            self.filename, self.start.line, self.start.column
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    pub range: Option<SourceRange>,
    /// The enclosing block header (`resource "null_resource" "a"`), shown as
    /// "in ..." after the location like Terraform does.
    pub context: Option<String>,
    /// The resource instance address the problem concerns, when there is one.
    pub address: Option<String>,
    /// What the expression at `range` referred to and what each was, for a
    /// failed condition: Terraform lists them under the quoted source line.
    #[serde(default)]
    pub values: Vec<ExprValue>,
}

/// One reference of a diagnostic's expression and its value in words, as
/// Terraform's `snippet.values` (`var.rev` / `is 1`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExprValue {
    pub traversal: String,
    pub statement: String,
}

impl Diagnostic {
    pub fn error(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: detail.into(),
            range: None,
            context: None,
            address: None,
            values: Vec::new(),
        }
    }

    pub fn warning(summary: impl Into<String>, detail: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(summary, detail)
        }
    }

    pub fn at(mut self, range: SourceRange) -> Diagnostic {
        self.range = Some(range);
        self
    }

    pub fn at_opt(mut self, range: Option<SourceRange>) -> Diagnostic {
        self.range = range;
        self
    }

    pub fn in_context(mut self, context: impl Into<String>) -> Diagnostic {
        self.context = Some(context.into());
        self
    }

    pub fn for_address(mut self, address: impl ToString) -> Diagnostic {
        self.address = Some(address.to_string());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}: {}", self.summary)?;
        if let Some(r) = &self.range {
            write!(f, " ({r})")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// An accumulating list of diagnostics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics(Vec::new())
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    /// Adds `other`, each placed at `address` (the resource instance a
    /// provider's answer was about); says whether any of them is an error.
    pub fn extend_at(&mut self, other: Diagnostics, address: &impl ToString) -> bool {
        let failed = other.has_errors();
        let address = address.to_string();
        self.0
            .extend(other.0.into_iter().map(|d| d.for_address(&address)));
        failed
    }

    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    /// `Err(self)` when there is an error, so `?` can stop on errors while
    /// warnings keep accumulating.
    pub fn into_result(self) -> Result<Diagnostics, Diagnostics> {
        if self.has_errors() {
            Err(self)
        } else {
            Ok(self)
        }
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics(vec![d])
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Diagnostics {
        Diagnostics(iter.into_iter().collect())
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Renders a diagnostic the way Terraform does, with the source line quoted
/// when the file is among `sources`:
///
/// ```text
/// ╷
/// │ Error: Unsupported argument
/// │
/// │   on main.tf line 3, in resource "null_resource" "a":
/// │    3:   foo = 1
/// │
/// │ An argument named "foo" is not expected here.
/// ╵
/// ```
pub fn render(d: &Diagnostic, sources: &BTreeMap<String, String>) -> String {
    let mut out = String::from("╷\n");
    for line in lines(d, sources) {
        if line.is_empty() {
            out.push_str("│\n");
        } else {
            out.push_str(&format!("│ {line}\n"));
        }
    }
    out.push_str("╵\n");
    out
}

/// [`render`] without the frame, as Terraform prints diagnostics under
/// `-no-color`: a blank line, then the same lines.
pub fn render_plain(d: &Diagnostic, sources: &BTreeMap<String, String>) -> String {
    let mut out = String::from("\n");
    for line in lines(d, sources) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The lines of a rendered diagnostic, inside its frame.
fn lines(d: &Diagnostic, sources: &BTreeMap<String, String>) -> Vec<String> {
    let mut body = Vec::new();
    let sev = match d.severity {
        Severity::Error => "Error",
        Severity::Warning => "Warning",
    };
    body.push(format!("{sev}: {}", d.summary));
    if d.address.is_some() || d.range.is_some() {
        body.push(String::new());
    }
    if let Some(addr) = &d.address {
        body.push(format!("  with {addr},"));
    }
    if let Some(r) = &d.range {
        let ctx = d
            .context
            .as_ref()
            .map(|c| format!(", in {c}"))
            .unwrap_or_default();
        body.push(format!("  on {} line {}{ctx}:", r.filename, r.start.line));
        if let Some(line) = sources
            .get(&r.filename)
            .and_then(|src| src.lines().nth(r.start.line.saturating_sub(1)))
        {
            body.push(format!("{:>4}: {}", r.start.line, line));
            if !d.values.is_empty() {
                body.push(format!("    ├{}", "─".repeat(16)));
                for v in &d.values {
                    body.push(format!("    │ {} {}", v.traversal, v.statement));
                }
            }
        }
    }
    if !d.detail.is_empty() {
        body.push(String::new());
        body.extend(d.detail.lines().map(str::to_string));
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_at_places_each_diagnostic_and_says_whether_one_is_an_error() {
        let mut all = Diagnostics::new();
        let warning = Diagnostics(vec![Diagnostic::warning("w", "")]);
        assert!(!all.extend_at(warning, &"sim_object.a[0]"));
        let mixed = Diagnostics(vec![
            Diagnostic::warning("w2", ""),
            Diagnostic::error("e", ""),
        ]);
        assert!(all.extend_at(mixed, &"sim_object.a[1]"));
        let placed: Vec<_> = all.0.iter().map(|d| d.address.as_deref()).collect();
        assert_eq!(
            placed,
            [
                Some("sim_object.a[0]"),
                Some("sim_object.a[1]"),
                Some("sim_object.a[1]")
            ]
        );
    }

    #[test]
    fn a_line_index_finds_the_same_positions_as_counting() {
        let src = "a = 1\n\nbé = \"x\"\r\n  c = [\n    1,\n  ]\n";
        let index = LineIndex::new(src);
        for byte in 0..=src.len() + 2 {
            assert_eq!(index.pos(src, byte), pos_of(src, byte), "byte {byte}");
        }
        assert_eq!(
            index.range("main.tf", src, 7, 9),
            SourceRange::from_bytes("main.tf", src, 7, 9)
        );
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let src = "a = 1\nbé = 2\n";
        let p = pos_of(src, src.find('=').unwrap());
        assert_eq!((p.line, p.column), (1, 3));
        let p = pos_of(src, src.rfind('=').unwrap());
        assert_eq!((p.line, p.column), (2, 4));
    }

    #[test]
    fn renders_location_and_source_line() {
        let src = "resource \"null_resource\" \"a\" {\n  foo = 1\n}\n";
        let start = src.find("foo").unwrap();
        let d = Diagnostic::error(
            "Unsupported argument",
            "An argument named \"foo\" is not expected here.",
        )
        .at(SourceRange::from_bytes("main.tf", src, start, start + 3))
        .in_context("resource \"null_resource\" \"a\"");
        let sources = BTreeMap::from([("main.tf".to_string(), src.to_string())]);
        let text = render(&d, &sources);
        assert!(text.contains("│ Error: Unsupported argument"), "{text}");
        assert!(
            text.contains("on main.tf line 2, in resource \"null_resource\" \"a\":"),
            "{text}"
        );
        assert!(text.contains("   2:   foo = 1"), "{text}");
        let with = render(&d.clone().for_address("null_resource.a"), &sources);
        assert!(
            with.contains("│   with null_resource.a,\n│   on main.tf line 2"),
            "{with}"
        );
        assert_eq!(
            render_plain(&d, &sources),
            "\nError: Unsupported argument\n\n  on main.tf line 2, in resource \"null_resource\" \"a\":\n   2:   foo = 1\n\nAn argument named \"foo\" is not expected here.\n"
        );
    }
}
