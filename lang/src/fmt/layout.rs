//! The whitespace of the canonical layout, line by line.
//!
//! A layout line ends at a newline token, after a line comment (which holds
//! its line break) and after a heredoc opener (likewise). A heredoc's text
//! therefore begins lines of its own; a line that begins with heredoc text
//! is content and keeps its place (it is neither indented nor counted for
//! nesting), though the expressions interpolated in it are respaced.
//!
//! Per line:
//! - Indentation: two spaces per nesting level. A line that opens more
//!   brackets than it closes indents the lines after it by one level,
//!   however many it opens; a line that closes more than it opens undoes
//!   that many brackets (so whole levels only when all the brackets of the
//!   lines that opened them are closed) and is itself indented at the level
//!   it leaves. A line with as many openers as closers stays at the level.
//! - Spacing: between two tokens on the line, one space or none, decided
//!   by the pair (and, for a minus, the token before it): see [`spaced`].
//! - Cells: a line is split at its first `=` (at whatever depth) when the
//!   brackets from there to the end of the line balance (for a line that
//!   opens a heredoc, up to the next newline token, the heredoc's text
//!   included). The `=` of consecutive such lines line up in one column,
//!   one space after the longest text before them (indentation included:
//!   `{ a = 1 }, {` and the `b = 2` under it line up). A line comment
//!   after other tokens is a trailing comment (so is a block comment that
//!   ends the file); the trailing comments of consecutive lines line up
//!   one space after the longest line. Widths are counted in grapheme
//!   clusters. Any other line (blank, comment only, a block, an `=` whose
//!   value leaves a bracket open or closes one) ends the run; heredoc
//!   content lines belong to the line that opened the heredoc.

use super::lexer::{Kind, Token};
use unicode_segmentation::UnicodeSegmentation;

/// Text width as the layout counts it: in grapheme clusters (`é` written
/// as `e` and a combining accent is one, so is a flag).
fn width(s: &str) -> usize {
    s.graphemes(true).count()
}

struct Line {
    /// The line's tokens (a line comment or heredoc opener ending it
    /// included), as indices.
    first: usize,
    end: usize,
    /// The newline token ending the line, if it is one.
    newline: Option<usize>,
    /// Heredoc content: written as it is.
    verbatim: bool,
    indent: usize,
    /// Text before the `=` (or all of it when there is no `=` cell).
    lead: String,
    /// From the `=` on, when the line has an `=` cell.
    assign: Option<String>,
    /// A trailing line comment.
    comment: Option<String>,
}

pub(super) fn render(tokens: &[Token]) -> String {
    let mut lines = split_lines(tokens);
    indent(tokens, &mut lines);
    for line in &mut lines {
        cells(tokens, line);
    }
    align_assignments(&mut lines);
    let mut out = String::new();
    let widths: Vec<usize> = lines.iter().map(content_width).collect();
    let comment_cols = comment_columns(&lines, &widths);
    for (k, line) in lines.iter().enumerate() {
        if line.first < line.end {
            if !line.verbatim {
                out.push_str(&"  ".repeat(line.indent));
            }
            out.push_str(&line.lead);
            if let Some(a) = &line.assign {
                out.push_str(a);
            }
            if let Some(c) = &line.comment {
                let pad = comment_cols[k].saturating_sub(widths[k]).max(1);
                out.push_str(&" ".repeat(pad));
                out.push_str(c);
            }
        }
        if let Some(nl) = line.newline {
            out.push_str(&tokens[nl].text);
        }
    }
    out
}

fn split_lines(tokens: &[Token]) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut first = 0;
    let line = |first, end, newline| Line {
        first,
        end,
        newline,
        verbatim: first < end && tokens[first].heredoc_top,
        indent: 0,
        lead: String::new(),
        assign: None,
        comment: None,
    };
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Newline => {
                lines.push(line(first, i, Some(i)));
                first = i + 1;
            }
            Kind::LineComment | Kind::OHeredoc if t.text.ends_with('\n') => {
                lines.push(line(first, i + 1, None));
                first = i + 1;
            }
            _ => {}
        }
    }
    lines.push(line(first, tokens.len(), None));
    lines
}

fn net_brackets(tokens: &[Token], line: &Line) -> i32 {
    tokens[line.first..line.end]
        .iter()
        .map(|t| t.kind.bracket_change())
        .sum()
}

/// The bracket balance of the logical line starting at token `first`: up
/// to the next newline token or line comment, so a heredoc opened on the
/// line counts with its text (an interpolation left open there unbalances
/// the line that holds the `=`).
fn logical_net(tokens: &[Token], first: usize) -> i32 {
    let mut net = 0;
    for t in &tokens[first..] {
        match t.kind {
            Kind::Newline => break,
            Kind::LineComment if t.text.ends_with('\n') => break,
            k => net += k.bracket_change(),
        }
    }
    net
}

/// Nesting levels: each entry of the stack is one level, holding the
/// number of brackets still open from the line that opened it.
fn indent(tokens: &[Token], lines: &mut [Line]) {
    let mut stack: Vec<i32> = Vec::new();
    for line in lines.iter_mut().filter(|l| !l.verbatim) {
        let net = net_brackets(tokens, line);
        if net > 0 {
            line.indent = stack.len();
            stack.push(net);
            continue;
        }
        let mut closed = -net;
        while closed > 0 {
            let Some(top) = stack.last_mut() else { break };
            if closed < *top {
                *top -= closed;
                closed = 0;
            } else {
                closed -= *top;
                stack.pop();
            }
        }
        line.indent = stack.len();
    }
}

/// The line's text, split into its cells.
fn cells(tokens: &[Token], line: &mut Line) {
    let toks = &tokens[line.first..line.end];
    let mut body = toks;
    // A comment ending the line: a line comment, or a block comment that
    // the end of the file follows.
    if let [rest @ .., last] = toks
        && (last.kind == Kind::LineComment
            || (last.kind == Kind::BlockComment && line.newline.is_none()))
        && !rest.is_empty()
        && !line.verbatim
    {
        line.comment = Some(last.text.clone());
        body = rest;
    }
    // The first `=` on the line, at whatever depth, when from it to the end
    // of the logical line the brackets balance.
    let split = if line.verbatim {
        None
    } else {
        body.iter()
            .position(|t| t.kind == Kind::Equal)
            .filter(|&eq| logical_net(tokens, line.first + eq) == 0)
    };
    // Whether a space goes before each token (the first one's is the
    // indentation's business).
    let space: Vec<bool> = (0..body.len())
        .map(|k| k > 0 && spaced(k.checked_sub(2).map(|j| &body[j]), &body[k - 1], &body[k]))
        .collect();
    let join = |from: usize, to: usize| {
        let mut s = String::new();
        for k in from..to {
            if k > from && space[k] {
                s.push(' ');
            }
            s.push_str(&body[k].text);
        }
        s
    };
    match split {
        Some(eq) if eq > 0 => {
            line.lead = join(0, eq);
            line.assign = Some(join(eq, body.len()));
        }
        _ => line.lead = join(0, body.len()),
    }
}

/// Lines up the `=` of runs of consecutive lines that have an `=` cell.
/// Heredoc content lines belong to the line that opened the heredoc and do
/// not end a run.
fn align_assignments(lines: &mut [Line]) {
    let mut k = 0;
    while k < lines.len() {
        if lines[k].assign.is_none() {
            k += 1;
            continue;
        }
        let mut run = vec![k];
        let mut j = k + 1;
        while j < lines.len() {
            if lines[j].verbatim {
                j += 1;
                continue;
            }
            if lines[j].assign.is_none() {
                break;
            }
            run.push(j);
            j += 1;
        }
        // Lines of a run may differ in indentation (`{ a = 1 }, {` then
        // `b = 2`): the `=` line up in the same column.
        let lead_end = |l: &Line| 2 * l.indent + width(&l.lead);
        let widest = run.iter().map(|&r| lead_end(&lines[r])).max().unwrap_or(0);
        for &r in &run {
            let pad = widest - lead_end(&lines[r]) + 1;
            let lead = &mut lines[r].lead;
            lead.push_str(&" ".repeat(pad));
        }
        k = j;
    }
}

/// The width of a line before its trailing comment, indentation included.
fn content_width(line: &Line) -> usize {
    let indent = if line.verbatim { 0 } else { 2 * line.indent };
    indent + width(&line.lead) + line.assign.as_deref().map_or(0, width)
}

/// The column (0-based) of each line's trailing comment.
fn comment_columns(lines: &[Line], widths: &[usize]) -> Vec<usize> {
    let mut cols = vec![0; lines.len()];
    let mut k = 0;
    while k < lines.len() {
        if lines[k].comment.is_none() {
            k += 1;
            continue;
        }
        let mut j = k;
        while j < lines.len() && lines[j].comment.is_some() {
            j += 1;
        }
        let col = widths[k..j].iter().max().copied().unwrap_or(0) + 1;
        cols[k..j].fill(col);
        k = j;
    }
    cols
}

/// Whether one space separates `a` and the following `b` on a line;
/// `before` is the token before `a` on the same line, if any.
fn spaced(before: Option<&Token>, a: &Token, b: &Token) -> bool {
    use Kind::*;
    let (ak, bk) = (a.kind, b.kind);
    match () {
        // A function name and its parentheses stay together.
        _ if ak == Ident && bk == OParen => false,
        _ if ak == Dot || bk == Dot => false,
        _ if ak == DoubleColon || bk == DoubleColon => false,
        _ if bk == Comma || bk == Ellipsis => false,
        _ if ak == Comma => true,
        // Template text is never respaced.
        _ if matches!(ak, OQuote | QuotedLit | HeredocLit | OHeredoc)
            || matches!(bk, QuotedLit | HeredocLit | CQuote | CHeredoc) =>
        {
            false
        }
        // `for x in [a, b]`: `in` is a keyword here, not a name indexed.
        _ if ak == Ident && a.text == "in" && before.is_some_and(|t| t.kind == Ident) => true,
        // An index follows a name, a number or a closing bracket directly.
        _ if bk == OBrack && (matches!(ak, Ident | Number) || ak.bracket_change() < 0) => false,
        _ if ak == Minus => !is_negation(before),
        _ if ak == Bang => false,
        // Braces have spaces inside, except an empty pair.
        _ if ak == OBrace || bk == CBrace => !(ak == OBrace && bk == CBrace),
        // `${ {a = 1} }`: braces against an interpolation's are kept apart.
        _ if matches!(ak, TemplateInterp | TemplateControl) && bk == OBrace => true,
        _ if ak == CBrace && bk == TemplateSeqEnd => true,
        _ if ak == TemplateSeqEnd && matches!(bk, TemplateInterp | TemplateControl) => false,
        _ if ak.bracket_change() > 0 => false,
        _ if bk.bracket_change() < 0 => false,
        _ => true,
    }
}

/// A minus after these (or first on its line) negates; after anything
/// else it subtracts and gets spaces on both sides.
fn is_negation(before: Option<&Token>) -> bool {
    use Kind::*;
    before.is_none_or(|t| {
        matches!(
            t.kind,
            OParen
                | OBrace
                | OBrack
                | Equal
                | Colon
                | Comma
                | Question
                | Plus
                | Minus
                | Star
                | Slash
                | Percent
                | EqualOp
                | NotEqual
                | Lt
                | Gt
                | LtEq
                | GtEq
                | And
                | Or
                | Bang
        )
    })
}
