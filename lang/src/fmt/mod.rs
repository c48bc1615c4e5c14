//! `terraform fmt` as a library function: [`format`] gives the canonical
//! layout of one native-syntax (`.tf`) file, byte for byte what Terraform
//! v1.11 writes.
//!
//! The rules were learned by running `terraform fmt` on many inputs; the
//! golden files under `tests/fixtures/fmt` pin them down. The pipeline:
//!
//! 1. [`lexer`]: the file as HCL tokens, with the exact text of each (a
//!    line comment keeps the newline that ends it, a heredoc's opening
//!    token keeps its newline, string contents stay as written).
//! 2. [`parser`]: a full syntax check (Terraform refuses to format a file
//!    that does not parse), which also reports where the attributes'
//!    values and the blocks' labels are.
//! 3. [`rewrite`]: the canonical changes beyond whitespace: a value that is
//!    only `"${ expr }"` becomes `expr`, a top-level `variable` block's
//!    legacy type (`"string"`, `list`, ...) becomes a type expression, and
//!    block labels are written anew (quoted, escapes normalized).
//! 4. [`layout`]: the whitespace: indentation by bracket nesting, spacing
//!    between tokens, `=` and trailing comments aligned in runs of lines.
//!
//! Where Terraform's output is not a fixed point of Terraform itself
//! (spaces after the last token of a file without a final line break; a
//! trailing block comment there; `"${"${x}"}"`), this function does as
//! Terraform does, so it is not idempotent on those inputs either. Where
//! Terraform v1.11.4 loses meaning, it is not followed: a block label
//! holding `$` or `%` (which Terraform drops) and a `true`/`false`/`null`
//! index (`x[false]`, which Terraform turns into `x[]`) stay as written.

mod layout;
mod lexer;
mod parser;
mod rewrite;

#[cfg(test)]
mod tests;

use std::fmt;

/// A file that does not parse, so cannot be formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// 1-based line of the offending text.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    pub message: String,
}

impl FormatError {
    /// An error at byte offset `pos` of `src`.
    fn at(src: &str, pos: usize, message: impl Into<String>) -> Self {
        let pos = pos.min(src.len());
        let before = &src[..pos];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        FormatError {
            line,
            column,
            message: message.into(),
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for FormatError {}

/// `terraform fmt` of one file's text. Err: the file does not parse (the
/// message names line and column).
/// The byte ranges of the keys of each object constructor in `src`, in
/// file order within each object; None when `src` does not parse.
pub(crate) fn object_keys(src: &str) -> Option<Vec<Vec<std::ops::Range<usize>>>> {
    let lexed = lexer::lex(src).ok()?;
    let structure = parser::parse(src, &lexed.tokens).ok()?;
    let toks = &lexed.tokens;
    Some(
        structure
            .object_keys
            .iter()
            .map(|keys| {
                keys.iter()
                    .map(|&(first, last)| toks[first].pos..toks[last].pos + toks[last].text.len())
                    .collect()
            })
            .collect(),
    )
}

pub fn format(src: &str) -> Result<String, FormatError> {
    // Terraform drops a byte order mark.
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    let lexed = lexer::lex(src)?;
    let structure = parser::parse(src, &lexed.tokens)?;
    let tokens = rewrite::apply(lexed.tokens, &structure);
    let mut out = layout::render(&tokens);
    // Spaces and tabs after the last token stay when the file does not end
    // with a line break; then the line break is added.
    out.push_str(&lexed.trailing);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}
