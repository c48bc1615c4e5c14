//! `yamlencode`, byte for byte as Terraform writes YAML (go-cty-yaml over
//! go-yaml's libyaml-derived emitter): block mappings and sequences,
//! `[]`/`{}` when empty, strings double-quoted (keys too) unless they hold
//! a line break, then literal `|` blocks where the emitter allows them,
//! numbers, bools and null plain, lines folded at column 80 inside quoted
//! strings, and `...` after a document that ends with a plain scalar.
//! The emitter's state (column, indents, whitespace/indention flags) is
//! followed step by step so spacing and line breaks come out the same.

use super::{Def, FnResult, Unknowns::Deep, def};
use fleetform_shared::value::Value;

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;

pub(super) const DEFS: &[Def] = &[def("yamlencode", Deep, yamlencode)];

const BEST_INDENT: i64 = 2;
const BEST_WIDTH: usize = 80;

fn yamlencode(a: &[Value]) -> FnResult {
    let mut e = Emitter::default();
    e.node(&a[0], Context::Root);
    // Document end (implicit), then stream end.
    e.write_indent();
    if e.open_ended {
        e.write_indicator("...", true, false, false);
        e.write_indent();
    }
    Ok(Value::String(e.out))
}

#[derive(Clone, Copy, PartialEq)]
enum Context {
    Root,
    Sequence,
    MappingValue,
    /// A key written inline (`key: value`).
    SimpleKey,
    /// A key after `? `.
    ComplexKey,
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Plain,
    DoubleQuoted,
    Literal,
}

struct Emitter {
    out: String,
    column: usize,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
    open_ended: bool,
}

impl Default for Emitter {
    fn default() -> Emitter {
        Emitter {
            out: String::new(),
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
            open_ended: false,
        }
    }
}

/// What the emitter learns from scanning a scalar before choosing a style.
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    block_allowed: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// libyaml's printable set (supplementary-plane characters are not).
fn is_printable(c: char) -> bool {
    matches!(c as u32, 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD) && c != '\u{FEFF}'
}

fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = value.starts_with("---") || value.starts_with("...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let chars: Vec<char> = value.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let first = i == 0;
        let last = i + 1 == chars.len();
        let followed_by_whitespace = last || matches!(chars[i + 1], ' ' | '\t');
        if first {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= first;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= first;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = matches!(c, ' ' | '\t' | '\0') || is_break(c);
    }
    let edges = leading_space || leading_break || trailing_space || trailing_break;
    Analysis {
        multiline: line_breaks,
        block_plain_allowed: !(edges
            || break_space
            || space_break
            || special
            || line_breaks
            || block_indicators),
        block_allowed: !(trailing_space || space_break || special),
    }
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write(&mut self, s: &str) {
        for c in s.chars() {
            self.put(c);
        }
    }

    /// Writes a line break character from the value.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn decrease_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        s: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        self.write(s);
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    fn node(&mut self, v: &Value, ctx: Context) {
        match v {
            Value::List(items) if items.is_empty() => self.empty_collection("[", "]"),
            Value::Map(m) if m.is_empty() => self.empty_collection("{", "}"),
            Value::List(items) => {
                let indentless = ctx == Context::MappingValue && !self.indention;
                self.increase_indent(false, indentless);
                for item in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.node(item, Context::Sequence);
                }
                self.decrease_indent();
            }
            Value::Map(m) => {
                self.increase_indent(false, false);
                for (k, v) in m {
                    self.write_indent();
                    let a = analyze(k);
                    if !a.multiline && k.len() <= 128 {
                        self.scalar(k, Style::DoubleQuoted, Context::SimpleKey);
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.string(k, Context::ComplexKey);
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.node(v, Context::MappingValue);
                }
                self.decrease_indent();
            }
            Value::String(s) => self.string(s, ctx),
            Value::Number(n) => self.scalar(&n.to_string(), Style::Plain, ctx),
            Value::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain, ctx),
            Value::Null(_) | Value::Unknown(_) => self.scalar("null", Style::Plain, ctx),
        }
    }

    fn string(&mut self, s: &str, ctx: Context) {
        let style = if s.contains('\n') {
            Style::Literal
        } else {
            Style::DoubleQuoted
        };
        self.scalar(s, style, ctx);
    }

    fn empty_collection(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.decrease_indent();
        self.write_indicator(close, false, false, false);
    }

    fn scalar(&mut self, value: &str, style: Style, ctx: Context) {
        let a = analyze(value);
        let simple_key = ctx == Context::SimpleKey;
        let mut style = style;
        if simple_key && a.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain && !a.block_plain_allowed {
            // Never reached for numbers, bools and null.
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!a.block_allowed || simple_key) {
            style = Style::DoubleQuoted;
        }
        self.increase_indent(true, false);
        match style {
            Style::Plain => {
                if !self.whitespace {
                    self.put(' ');
                }
                self.write(value);
                self.whitespace = false;
                self.indention = false;
                if ctx == Context::Root {
                    self.open_ended = true;
                }
            }
            Style::DoubleQuoted => self.double_quoted(value, !simple_key),
            Style::Literal => self.literal(value),
        }
        self.decrease_indent();
    }

    fn double_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        // libyaml escapes every character when the value starts with a BOM.
        let bom = value.starts_with('\u{FEFF}');
        let mut spaces = false;
        let mut iter = value.char_indices().peekable();
        while let Some((i, c)) = iter.next() {
            if bom || !is_printable(c) || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\x07' => self.put('a'),
                    '\x08' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\x0b' => self.put('v'),
                    '\x0c' => self.put('f'),
                    '\r' => self.put('r'),
                    '\x1b' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{A0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    c => {
                        let v = c as u32;
                        let text = if v <= 0xFF {
                            format!("x{v:02X}")
                        } else if v <= 0xFFFF {
                            format!("u{v:04X}")
                        } else {
                            format!("U{v:08X}")
                        };
                        self.write(&text);
                    }
                }
                spaces = false;
            } else if c == ' ' {
                let next_is_space = iter.peek().is_some_and(|(_, n)| *n == ' ');
                // Fold a long line at a space (not the first or last byte);
                // a following space is escaped so it survives folding.
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < value.len()
                {
                    self.write_indent();
                    if next_is_space {
                        self.put('\\');
                    }
                } else {
                    self.put(' ');
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        // Block scalar hints: an indentation digit when the text starts
        // with a space or break, then the chomping indicator.
        if value.starts_with(' ') || value.starts_with(is_break) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        self.open_ended = false;
        let mut rev = value.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(prev)) if is_break(prev) => Some("+"),
            _ => None,
        };
        if let Some(ch) = chomp {
            self.write_indicator(ch, false, false, false);
            if ch == "+" {
                self.open_ended = true;
            }
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}
