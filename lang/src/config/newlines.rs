//! A workaround for a gap in hcl-edit 0.10 (the newest release): inside an
//! object `for` expression, HCL ignores newlines (`{ for k in xs : k => c
//! ? a :⏎ b }` is valid and Terraform reads it), but hcl-edit stops at the
//! line break. When a file fails to parse, the loader tries again on a copy
//! whose line breaks inside object `for` expressions are spaces. The copy
//! has the same length, so every byte offset, and so every source range
//! computed from the original text, stays exact.
//!
//! Strings, templates and heredocs are skipped as they are, and a nested
//! object constructor keeps its newlines (they separate its items there).
//! A comment directly inside an object `for` becomes blanks along with its
//! newline, since a line comment joined to the next line would swallow it;
//! elsewhere comments stay.

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    /// `{`: an object `for` expression when `for_expr`.
    Brace { for_expr: bool },
    /// `[` or `(`.
    Group,
    /// A quoted template string.
    Str,
    /// `${ ... }` or `%{ ... }` inside a string.
    Interp,
}

/// The source with line breaks inside object `for` expressions turned into
/// spaces; None when there are none.
pub(super) fn join_object_for_lines(src: &str) -> Option<String> {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut stack: Vec<Frame> = Vec::new();
    let mut changed = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if stack.last() == Some(&Frame::Str) {
            match c {
                b'\\' => i += 1,
                b'"' => {
                    stack.pop();
                }
                b'$' | b'%' if b.get(i + 1) == Some(&b'{') => {
                    stack.push(Frame::Interp);
                    i += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => stack.push(Frame::Str),
            b'#' | b'/' if c == b'#' || b.get(i + 1) == Some(&b'/') => {
                let end = line_end(b, i);
                if in_for(&stack) {
                    // A line comment ends at its newline, which must go
                    // too: the comment becomes blanks as well.
                    blank(&mut out, i, end + 1);
                    changed = true;
                }
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = find(b, i + 2, b"*/").map_or(b.len(), |e| e + 1);
                if in_for(&stack) && b[i..end].contains(&b'\n') {
                    blank(&mut out, i, end + 1);
                    changed = true;
                }
                i = end;
            }
            b'<' if b.get(i + 1) == Some(&b'<') => i = heredoc_end(b, i),
            b'{' => {
                let for_expr = starts_with_for(b, i + 1);
                stack.push(Frame::Brace { for_expr });
            }
            b'[' | b'(' => stack.push(Frame::Group),
            b'}' | b']' | b')' => {
                stack.pop();
            }
            b'\n' | b'\r' if in_for(&stack) => {
                out[i] = b' ';
                changed = true;
            }
            _ => {}
        }
        i += 1;
    }
    // Only ASCII newlines became ASCII spaces: still valid UTF-8.
    changed.then(|| String::from_utf8(out).expect("newlines replaced by spaces"))
}

/// Whether the innermost frame is an object `for` expression.
fn in_for(stack: &[Frame]) -> bool {
    stack.last() == Some(&Frame::Brace { for_expr: true })
}

/// Turns `out[from..to]` (clamped to its end) into spaces.
fn blank(out: &mut [u8], from: usize, to: usize) {
    let to = to.min(out.len());
    out[from..to].fill(b' ');
}

/// The index of the newline ending the line at `i` (or the end): scanning
/// resumes after it, so a line comment keeps its newline.
fn line_end(b: &[u8], i: usize) -> usize {
    find(b, i, b"\n").unwrap_or(b.len())
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

/// Whether `{` at `open - 1` starts a `for` expression: `for` then a space.
fn starts_with_for(b: &[u8], open: usize) -> bool {
    let mut j = open;
    while j < b.len() && b[j].is_ascii_whitespace() {
        j += 1;
    }
    b.get(j..j + 3) == Some(b"for") && b.get(j + 3).is_some_and(|c| c.is_ascii_whitespace())
}

/// Skips a heredoc starting at `<<` (`<<EOT` or `<<-EOT`) to the end of its
/// closing marker line; returns where scanning resumes.
fn heredoc_end(b: &[u8], start: usize) -> usize {
    let mut j = start + 2;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let name_start = j;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    if j == name_start {
        return start + 1; // not a heredoc (`<<` alone is no HCL operator)
    }
    let marker = &b[name_start..j];
    let mut line = match find(b, j, b"\n") {
        Some(e) => e + 1,
        None => return b.len(),
    };
    while line < b.len() {
        let end = find(b, line, b"\n").unwrap_or(b.len());
        let text = &b[line..end];
        let trimmed = text.trim_ascii();
        if trimmed == marker {
            return end.saturating_sub(1).max(line);
        }
        line = end + 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_inside_object_for_become_spaces_and_nothing_else_changes() {
        let src = "x = { for k in xs : k => c ? a :\n  b }\ny = {\n  a = 1\n  b = 2\n}\n";
        let out = join_object_for_lines(src).unwrap();
        assert_eq!(out.len(), src.len());
        assert_eq!(
            out,
            "x = { for k in xs : k => c ? a :   b }\ny = {\n  a = 1\n  b = 2\n}\n"
        );
        // A line comment inside goes with its newline (else it would
        // run on into the next line).
        let commented = "x = { for k in xs : # why\n k =>\n k }\n";
        assert_eq!(
            join_object_for_lines(commented).unwrap(),
            "x = { for k in xs :        k =>  k }\n"
        );
        // Tuple `for`, plain objects, strings and comments keep their newlines.
        let plain = "t = [for x in xs :\n x]\n# { for x in y :\n\"{ for \\\" x\"\n";
        assert_eq!(join_object_for_lines(plain), None);
    }

    #[test]
    fn nested_objects_comments_and_heredocs_inside_keep_their_lines() {
        let src = "m = { for k, v in xs : k => {\n  a = v # note {\n  b = <<EOT\n}\nEOT\n} if\n v != null }\n";
        let out = join_object_for_lines(src).unwrap();
        // Only the newline before `v != null` is in the for expression itself.
        assert_eq!(
            out,
            "m = { for k, v in xs : k => {\n  a = v # note {\n  b = <<EOT\n}\nEOT\n} if  v != null }\n"
        );
    }

    #[test]
    fn the_file_that_hcl_edit_rejects_loads_with_exact_locations() {
        let src = "locals {\n  m = { for k in [\"a\"] : k => k == \"a\" ? \"x\" :\n  \"y\" }\n}\noutput \"o\" {\n  value = local.m\n}\n";
        let (body, diags) = crate::config::parse_file("main.tf", src);
        assert!(!diags.has_errors(), "{diags}");
        let body = body.unwrap();
        let output = body
            .blocks
            .iter()
            .find(|b| b.type_name == "output")
            .unwrap();
        assert_eq!(output.decl_range.start.line, 5);
    }

    /// Comments inside an object `for` expression whose lines have to be
    /// joined: after a conditional's `?` or `:`, between a key spanning
    /// lines and `=>`, inside the `if`. Values taken from terraform 1.11.4.
    #[test]
    fn comments_inside_a_joined_for_expression_are_read_past() {
        use crate::eval::{MapScope, evaluate};
        use fleetform_shared::value::Value;
        let src = "locals {
  d1 = { for k, v in local.m : k => v > 1 ? \"big\" : # note
    \"small\" }
  d2 = { for k, v in local.m :
    # a comment
    \"${k}-x\" # the key
    // another
    => v > 1 ? # why
    \"big\" : /* block
    comment */
    \"small\" }
  d3 = { for k, v in local.m : k => v
    # before if
    if v > 1 && # and
    k != \"c\" }
}
";
        let (body, diags) = crate::config::parse_file("main.tf", src);
        assert!(!diags.has_errors(), "{diags}");
        let locals = &body.unwrap().blocks[0].body;
        let m = Value::object([
            ("a".to_string(), Value::int(1)),
            ("b".to_string(), Value::int(2)),
        ]);
        let scope = MapScope::new().with_local("m", m);
        let value = |name: &str| evaluate(&locals.attributes[name].expr, &scope).unwrap();
        let obj = |items: [(&str, Value); 2]| Value::object(items.map(|(k, v)| (k.to_string(), v)));
        assert_eq!(
            value("d1"),
            obj([("a", "small".into()), ("b", "big".into())])
        );
        assert_eq!(
            value("d2"),
            obj([("a-x", "small".into()), ("b-x", "big".into())])
        );
        assert_eq!(
            value("d3"),
            Value::object([("b".to_string(), Value::int(2))])
        );
    }
}
