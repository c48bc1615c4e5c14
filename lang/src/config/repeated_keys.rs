//! A workaround for a second gap in hcl-edit 0.10 (the newest release):
//! its parser refuses an object constructor that gives a key twice
//! (`{ "3gpp" = "a", "3gpp" = "b" }`: "expected unique object key; found
//! redefined object key"), because its syntax tree keeps an object's items
//! in a map. HCL accepts it, evaluates every item and keeps the last value
//! for a key, and Terraform reads such files: public modules with
//! 1,000-entry lookup tables have them (the corpus's `mime-map`).
//!
//! When that error stops the parser, the key it points at is rewritten to
//! a key hcl-edit does not take for the same one while HCL evaluates it to
//! the same string: a bare name `k` becomes `"k"`; a quoted or
//! parenthesized key `K` becomes `(K)`. Then the file is parsed again. The
//! evaluator builds objects item by item, the last one winning, so the
//! result is HCL's.
//!
//! Offsets: the rewrite adds two characters; when at least two blanks
//! follow the key (as in `terraform fmt`'s aligned maps) two of them go, so
//! every later byte offset stays exact. Otherwise later columns of that
//! line are off by two in diagnostics, lines never.

use std::borrow::Cow;

/// How many keys one file may repeat before the first error stands (each
/// costs a parse of the file).
const MAX_REWRITES: usize = 10_000;

/// Whether `e` is hcl-edit's refusal of a repeated object key.
fn is_repeated_key(e: &hcl_edit::parser::Error) -> bool {
    e.message().contains("found redefined object key")
}

/// Parses `source` with `parse`, rewriting repeated object keys as the
/// module doc says; the parsed value and the text it was parsed from.
/// Any other error, or a key it cannot rewrite, is given back as is.
pub(crate) fn parse_allowing_repeated_keys<'s, T>(
    source: &'s str,
    parse: impl Fn(&str) -> Result<T, hcl_edit::parser::Error>,
) -> Result<(T, Cow<'s, str>), hcl_edit::parser::Error> {
    let first = match parse(source) {
        Ok(v) => return Ok((v, Cow::Borrowed(source))),
        Err(e) if is_repeated_key(&e) => e,
        Err(e) => return Err(e),
    };
    // hcl-edit's object parsing is quadratic in the number of keys, so one
    // parse per repeated key would be slow on the big tables where repeats
    // happen: rewrite every repeat found by the formatter's parser at
    // once; the loop below is the safety net for what that misses.
    let mut text = match rewrite_all_repeats(source) {
        Some(t) => Cow::Owned(t),
        None => match rewrite_key_at(source, first.location().offset()) {
            Some(t) => Cow::Owned(t),
            None => return Err(first),
        },
    };
    for _ in 0..MAX_REWRITES {
        match parse(&text) {
            Ok(v) => return Ok((v, text)),
            Err(e) if is_repeated_key(&e) => match rewrite_key_at(&text, e.location().offset()) {
                Some(t) => text = Cow::Owned(t),
                None => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
    parse(&text).map(|v| (v, text))
}

/// `text` with the k-th repeat of each key of each object constructor
/// (same text, same object) wrapped k times; None when nothing repeats or
/// the formatter's parser refuses the file.
fn rewrite_all_repeats(text: &str) -> Option<String> {
    let mut edits: Vec<(std::ops::Range<usize>, usize)> = Vec::new();
    for keys in crate::fmt::object_keys(text)? {
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for range in keys {
            let n = seen.entry(&text[range.clone()]).or_insert(0);
            if *n > 0 {
                edits.push((range, *n));
            }
            *n += 1;
        }
    }
    if edits.is_empty() {
        return None;
    }
    // From the end, so earlier offsets stay valid while editing.
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_string();
    for (range, times) in edits {
        let mut key = out[range.clone()].to_string();
        for _ in 0..times {
            key = wrapped(&key);
        }
        let added = key.len() - range.len();
        let blanks = out.as_bytes()[range.end..]
            .iter()
            .take_while(|c| **c == b' ' || **c == b'\t')
            .count();
        let absorbed = if blanks >= added { added } else { 0 };
        out.replace_range(range.start..range.end + absorbed, &key);
    }
    Some(out)
}

/// A key hcl-edit tells from `key` that HCL evaluates to the same string.
fn wrapped(key: &str) -> String {
    let bare_name = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare_name {
        format!("\"{key}\"")
    } else {
        format!("({key})")
    }
}

/// `text` with the object key starting at byte `start` rewritten; None
/// when no key this knows starts there.
fn rewrite_key_at(text: &str, start: usize) -> Option<String> {
    let b = text.as_bytes();
    let (end, replacement) = match *b.get(start)? {
        b'"' => {
            let end = quoted_end(b, start)?;
            (end, format!("({})", &text[start..end]))
        }
        b'(' => {
            let end = group_end(b, start)?;
            (end, format!("({})", &text[start..end]))
        }
        c if c.is_ascii_alphabetic() || c == b'_' => {
            let end = start
                + text[start..]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'))
                    .unwrap_or(text.len() - start);
            (end, format!("\"{}\"", &text[start..end]))
        }
        _ => return None,
    };
    // Two blanks after the key make room for the two added characters.
    let blanks = b[end..]
        .iter()
        .take_while(|c| **c == b' ' || **c == b'\t')
        .count();
    let rest_from = if blanks >= 2 { end + 2 } else { end };
    let mut out = String::with_capacity(text.len() + 2);
    out.push_str(&text[..start]);
    out.push_str(&replacement);
    out.push_str(&text[rest_from..]);
    Some(out)
}

/// The offset just past the quoted string opening at `start`, across
/// escapes and `${ }` / `%{ }` interpolations (which may hold strings).
fn quoted_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            b'\n' => return None,
            b'$' | b'%' if b.get(i + 1) == Some(&b'{') => {
                i = group_end(b, i + 1)?;
            }
            _ => i += 1,
        }
    }
    None
}

/// The offset just past the bracket that closes the one at `start`
/// (`(`, `{` or `[`), skipping quoted strings.
fn group_end(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' => {
                i = quoted_end(b, i)?;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(src: &str) -> String {
        let (_, text) = parse_allowing_repeated_keys(src, hcl_edit::parser::parse_body)
            .unwrap_or_else(|e| panic!("{e}"));
        text.into_owned()
    }

    #[test]
    fn a_repeated_quoted_key_is_parenthesized_in_the_room_of_its_blanks() {
        let src = "m = {\n  \"a\"  = 1\n  \"b\"  = 2\n  \"a\"  = 3\n}\n";
        let out = parsed(src);
        assert_eq!(out, "m = {\n  \"a\"  = 1\n  \"b\"  = 2\n  (\"a\")= 3\n}\n");
        assert_eq!(out.len(), src.len());
    }

    #[test]
    fn a_third_occurrence_is_wrapped_again_and_bare_names_are_quoted() {
        let out = parsed("m = { a = 1, a = 2, a = 3, \"k\" = 1, \"k\" = 2, \"k\" = 3 }\n");
        assert_eq!(
            out,
            "m = { a = 1, \"a\" = 2, (\"a\") = 3, \"k\" = 1, (\"k\") = 2, ((\"k\")) = 3 }\n"
        );
    }

    #[test]
    fn interpolated_keys_and_keys_inside_strings_are_handled() {
        let out = parsed("m = { \"${x}-}\" = 1, \"${x}-}\" = 2 }\n");
        assert_eq!(out, "m = { \"${x}-}\" = 1, (\"${x}-}\") = 2 }\n");
    }

    #[test]
    fn other_syntax_errors_are_given_back() {
        let Err(e) =
            parse_allowing_repeated_keys("m = { a = 1, a = 2 \n", hcl_edit::parser::parse_body)
        else {
            panic!("an unclosed object is still an error");
        };
        assert!(!is_repeated_key(&e), "{e}");
    }
}
