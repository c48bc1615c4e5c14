//! Strings of several lines in a plan, as Terraform shows them: a
//! `<<-EOT` block, its lines indented under the attribute, and for a
//! changed string the lines removed and added between the lines kept.
//!
//! Positions are given as the column of the change sign (`+`, `-`, `~`)
//! of the line that holds the attribute or map entry: the text sits six
//! columns right of it, a changed line's own sign four, `EOT` two.

use fleetform_shared::value::Value;
use std::fmt::Write;

/// The text of `v` when it is a string of more than one line.
pub fn multiline(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) if s.contains('\n') => Some(s),
        _ => None,
    }
}

/// A string's lines; the empty line after a final newline is not one.
fn lines(s: &str) -> Vec<&str> {
    s.strip_suffix('\n').unwrap_or(s).split('\n').collect()
}

/// `s` as a heredoc whose attribute's sign is at column `sign`; `note`
/// (" # forces replacement") follows the opening marker.
pub fn block(s: &str, sign: usize, note: &str) -> String {
    let mut out = format!("<<-EOT{note}\n");
    for l in lines(s) {
        let _ = writeln!(out, "{}{l}", pad(sign + 6, l));
    }
    out.push_str(&" ".repeat(sign + 2));
    out.push_str("EOT");
    out
}

/// The change from `before` to `after` as one heredoc: kept lines as
/// they are, removed ones with `-`, added ones with `+`.
pub fn diff(before: &str, after: &str, sign: usize, note: &str) -> String {
    let mut out = format!("<<-EOT{note}\n");
    for (mark, l) in line_diff(&lines(before), &lines(after)) {
        match mark {
            ' ' => {
                let _ = writeln!(out, "{}{l}", pad(sign + 6, l));
            }
            _ => {
                let _ = writeln!(out, "{}{mark} {l}", " ".repeat(sign + 4));
            }
        }
    }
    out.push_str(&" ".repeat(sign + 2));
    out.push_str("EOT");
    out
}

/// No trailing spaces on an empty line.
fn pad(n: usize, line: &str) -> String {
    if line.is_empty() {
        String::new()
    } else {
        " ".repeat(n)
    }
}

/// Above this many line pairs the diff is not searched for common lines:
/// everything before is removed and everything after added.
const MAX_PAIRS: usize = 4_000_000;

/// A shortest edit between two lists of lines (longest common
/// subsequence), removals before additions where they meet.
fn line_diff<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(char, &'a str)> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > MAX_PAIRS {
        let mut out: Vec<(char, &str)> = a.iter().map(|l| ('-', *l)).collect();
        out.extend(b.iter().map(|l| ('+', *l)));
        return out;
    }
    // common[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut common = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            common[i][j] = if a[i] == b[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(n + m));
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || common[i + 1][j] >= common[i][j + 1]) {
            out.push(('-', a[i]));
            i += 1;
        } else {
            out.push(('+', b[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_indents_its_lines_under_the_attribute() {
        assert_eq!(
            block("alpha\nbeta\n", 6, ""),
            "<<-EOT\n            alpha\n            beta\n        EOT"
        );
        assert_eq!(
            block("a\n\nb", 2, " # x"),
            "<<-EOT # x\n        a\n\n        b\n    EOT"
        );
    }

    #[test]
    fn a_diff_keeps_common_lines_and_marks_the_rest() {
        assert_eq!(
            diff("one\ntwo\nthree\n", "one\nTWO\nthree\n", 10, ""),
            "<<-EOT\n                one\n              - two\n              + TWO\n                three\n            EOT"
        );
        assert_eq!(
            line_diff(&["a", "b"], &["b", "c"]),
            [('-', "a"), (' ', "b"), ('+', "c")]
        );
        assert_eq!(line_diff(&[], &["x"]), [('+', "x")]);
    }
}
