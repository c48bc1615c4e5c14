//! HCL native syntax as tokens, each with its exact source text, so that
//! the formatter can write back everything it does not respace unchanged.
//!
//! The token boundaries are the ones the formatter's rules need:
//! - A line comment (`#`, `//`) includes the line break ending it, so it
//!   ends a line of the layout as a newline does.
//! - A heredoc opener (`<<EOT`, `<<-EOT`) includes its line break; the
//!   heredoc's text runs are literals; its closing line (marker with the
//!   whitespace around it, without the line break) is one token.
//! - Templates are split into literals, `${`/`%{` openers (with a `~`
//!   strip marker when there is one) and the `}` (or `~}`) closing them,
//!   with the expressions between as ordinary tokens.

use super::FormatError;
use regex::Regex;
use std::sync::LazyLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Ident,
    Number,
    OBrace,
    CBrace,
    OBrack,
    CBrack,
    OParen,
    CParen,
    Equal,
    Comma,
    Dot,
    Ellipsis,
    Colon,
    DoubleColon,
    Question,
    FatArrow,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    EqualOp,
    NotEqual,
    Lt,
    Gt,
    LtEq,
    GtEq,
    And,
    Or,
    Bang,
    /// The `"` opening a quoted template.
    OQuote,
    /// The `"` closing a quoted template.
    CQuote,
    /// Literal text of a quoted template, escapes as written.
    QuotedLit,
    /// `<<EOT` or `<<-EOT` with the line break after it.
    OHeredoc,
    /// A heredoc's closing line, without its line break.
    CHeredoc,
    /// Literal text of a heredoc, line breaks included.
    HeredocLit,
    /// `${` or `${~`.
    TemplateInterp,
    /// `%{` or `%{~`.
    TemplateControl,
    /// `}` or `~}` closing an interpolation or directive.
    TemplateSeqEnd,
    /// `# ...` or `// ...`, with the line break ending it (if any).
    LineComment,
    BlockComment,
    /// `\n` or `\r\n`.
    Newline,
}

impl Kind {
    /// +1 for the tokens that open a nesting level, -1 for those that
    /// close one: what the layout's indentation counts.
    pub(super) fn bracket_change(self) -> i32 {
        match self {
            Kind::OBrace
            | Kind::OBrack
            | Kind::OParen
            | Kind::TemplateInterp
            | Kind::TemplateControl => 1,
            Kind::CBrace | Kind::CBrack | Kind::CParen | Kind::TemplateSeqEnd => -1,
            _ => 0,
        }
    }
}

#[derive(Clone, Debug)]
pub(super) struct Token {
    pub kind: Kind,
    pub text: String,
    /// Byte offset in the source (for error positions only; tokens made by
    /// the rewrites carry the position of what they replace).
    pub pos: usize,
    /// Heredoc text at the heredoc's own level: its literals, the `${` and
    /// `%{` opening interpolations directly in it, and its closing line. A
    /// layout line starting with such a token is heredoc content, which
    /// the formatter leaves where it is.
    pub heredoc_top: bool,
}

pub(super) struct Lexed {
    pub tokens: Vec<Token>,
    /// As many spaces as there are spaces and tabs after the last token
    /// (the file ends without a line break after them).
    pub trailing: String,
}

/// What a `}` closes, and how text is read, at each nesting level.
enum Ctx {
    /// An object constructor or block body.
    Brace,
    /// `${ ... }` or `%{ ... }`.
    Interp,
    /// Inside `"..."`.
    Quoted,
    /// Inside a heredoc's text; `at_line_start` when the next character
    /// begins a line (where the closing marker may stand).
    Heredoc { marker: String, at_line_start: bool },
}

struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    stack: Vec<Ctx>,
    out: Vec<Token>,
}

pub(super) fn lex(src: &str) -> Result<Lexed, FormatError> {
    let mut lx = Lexer {
        src,
        b: src.as_bytes(),
        i: 0,
        stack: Vec::new(),
        out: Vec::new(),
    };
    lx.run()?;
    let end = lx.out.last().map_or(0, |t| t.pos + t.text.len());
    Ok(Lexed {
        // Written as one space per character (a tab included).
        trailing: " ".repeat(src[end..].chars().count()),
        tokens: lx.out,
    })
}

/// Unicode's identifier classes (UAX #31), as HCL's names use them.
static ID_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\p{ID_Start}$").expect("a valid pattern"));
static ID_CONTINUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\p{ID_Continue}$").expect("a valid pattern"));

fn unicode_class(re: &Regex, c: char) -> bool {
    let mut buf = [0u8; 4];
    re.is_match(c.encode_utf8(&mut buf))
}

fn is_ident_start(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphabetic() || c == '_'
    } else {
        unicode_class(&ID_START, c)
    }
}

/// Names may also hold dashes.
fn is_ident_continue(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_' || c == '-'
    } else {
        unicode_class(&ID_CONTINUE, c)
    }
}

impl Lexer<'_> {
    fn err<T>(&self, pos: usize, msg: &str) -> Result<T, FormatError> {
        Err(FormatError::at(self.src, pos, msg))
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize, heredoc_top: bool) {
        self.out.push(Token {
            kind,
            text: self.src[start..end].to_string(),
            pos: start,
            heredoc_top,
        });
        self.i = end;
    }

    fn at(&self, off: usize) -> u8 {
        self.b.get(self.i + off).copied().unwrap_or(0)
    }

    fn run(&mut self) -> Result<(), FormatError> {
        while self.i < self.b.len() {
            match self.stack.last() {
                Some(Ctx::Quoted) => self.quoted()?,
                Some(Ctx::Heredoc { .. }) => self.heredoc()?,
                _ => self.code()?,
            }
        }
        match self.stack.last() {
            Some(Ctx::Quoted) | Some(Ctx::Heredoc { .. }) => {
                self.err(self.b.len(), "Unterminated template string")
            }
            _ => Ok(()),
        }
    }

    /// One token (or a run of spaces) of expression or body syntax.
    fn code(&mut self) -> Result<(), FormatError> {
        let s = self.i;
        let c = self.b[s];
        let two = |k| (k, s + 2);
        let one = |k| (k, s + 1);
        let (kind, end) = match c {
            b' ' | b'\t' => {
                self.i += 1;
                return Ok(());
            }
            b'\n' => one(Kind::Newline),
            b'\r' if self.at(1) == b'\n' => two(Kind::Newline),
            b'#' => (Kind::LineComment, self.line_comment_end(s)),
            b'/' if self.at(1) == b'/' => (Kind::LineComment, self.line_comment_end(s)),
            b'/' if self.at(1) == b'*' => match self.src[s + 2..].find("*/") {
                Some(e) => (Kind::BlockComment, s + 2 + e + 2),
                None => return self.err(s, "Unterminated comment"),
            },
            b'"' => {
                self.stack.push(Ctx::Quoted);
                one(Kind::OQuote)
            }
            b'<' if self.at(1) == b'<' => match self.heredoc_opener(s) {
                Some((end, marker)) => {
                    self.stack.push(Ctx::Heredoc {
                        marker,
                        at_line_start: true,
                    });
                    (Kind::OHeredoc, end)
                }
                // Not a heredoc: two less-than operators, which the parser
                // rejects.
                None => one(Kind::Lt),
            },
            b'0'..=b'9' => (Kind::Number, self.number_end(s)),
            b'{' => {
                self.stack.push(Ctx::Brace);
                one(Kind::OBrace)
            }
            b'}' => match self.stack.last() {
                Some(Ctx::Interp) => {
                    self.stack.pop();
                    one(Kind::TemplateSeqEnd)
                }
                _ => {
                    self.stack.pop();
                    one(Kind::CBrace)
                }
            },
            b'~' if self.at(1) == b'}' && matches!(self.stack.last(), Some(Ctx::Interp)) => {
                self.stack.pop();
                two(Kind::TemplateSeqEnd)
            }
            b'[' => one(Kind::OBrack),
            b']' => one(Kind::CBrack),
            b'(' => one(Kind::OParen),
            b')' => one(Kind::CParen),
            b',' => one(Kind::Comma),
            b'?' => one(Kind::Question),
            b'+' => one(Kind::Plus),
            b'-' => one(Kind::Minus),
            b'*' => one(Kind::Star),
            b'/' => one(Kind::Slash),
            b'%' => one(Kind::Percent),
            b'.' if self.at(1) == b'.' && self.at(2) == b'.' => (Kind::Ellipsis, s + 3),
            b'.' => one(Kind::Dot),
            b':' if self.at(1) == b':' => two(Kind::DoubleColon),
            b':' => one(Kind::Colon),
            b'=' if self.at(1) == b'=' => two(Kind::EqualOp),
            b'=' if self.at(1) == b'>' => two(Kind::FatArrow),
            b'=' => one(Kind::Equal),
            b'!' if self.at(1) == b'=' => two(Kind::NotEqual),
            b'!' => one(Kind::Bang),
            b'<' if self.at(1) == b'=' => two(Kind::LtEq),
            b'<' => one(Kind::Lt),
            b'>' if self.at(1) == b'=' => two(Kind::GtEq),
            b'>' => one(Kind::Gt),
            b'&' if self.at(1) == b'&' => two(Kind::And),
            b'|' if self.at(1) == b'|' => two(Kind::Or),
            _ => {
                let ch = self.src[s..].chars().next().unwrap_or('\0');
                if is_ident_start(ch) {
                    (Kind::Ident, self.ident_end(s))
                } else {
                    return self.err(s, "Invalid character");
                }
            }
        };
        self.push(kind, s, end, false);
        Ok(())
    }

    /// The end of a line comment: after its line break, or the end of the
    /// file.
    fn line_comment_end(&self, s: usize) -> usize {
        self.src[s..].find('\n').map_or(self.b.len(), |e| s + e + 1)
    }

    fn ident_end(&self, s: usize) -> usize {
        self.src[s..]
            .char_indices()
            .find(|&(k, c)| k > 0 && !is_ident_continue(c))
            .map_or(self.b.len(), |(k, _)| s + k)
    }

    /// digits, then `.digits` and `e[+-]digits` only when digits follow.
    fn number_end(&self, s: usize) -> usize {
        let b = self.b;
        let digits = |mut j: usize| {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            j
        };
        let mut j = digits(s);
        if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
            j = digits(j + 1);
        }
        if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
            let mut k = j + 1;
            if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
                k += 1;
            }
            if k < b.len() && b[k].is_ascii_digit() {
                j = digits(k);
            }
        }
        j
    }

    /// `<<ID` or `<<-ID` followed by a line break: the end of the opener
    /// (after the line break) and the marker.
    fn heredoc_opener(&self, s: usize) -> Option<(usize, String)> {
        let mut j = s + 2;
        if self.b.get(j) == Some(&b'-') {
            j += 1;
        }
        let first = self.src[j..].chars().next()?;
        if !is_ident_start(first) {
            return None;
        }
        let e = self.ident_end(j);
        let marker = self.src[j..e].to_string();
        match (self.b.get(e), self.b.get(e + 1)) {
            (Some(b'\n'), _) => Some((e + 1, marker)),
            (Some(b'\r'), Some(b'\n')) => Some((e + 2, marker)),
            _ => None,
        }
    }

    /// `${`/`%{` (with `~`) at `s`, or None. `$${` and `%%{` are escapes,
    /// literal text.
    fn template_opener(&self, s: usize) -> Option<(Kind, usize)> {
        let b = self.b;
        let kind = match b.get(s) {
            Some(b'$') => Kind::TemplateInterp,
            Some(b'%') => Kind::TemplateControl,
            _ => return None,
        };
        if b.get(s + 1) != Some(&b'{') {
            return None;
        }
        let end = if b.get(s + 2) == Some(&b'~') {
            s + 3
        } else {
            s + 2
        };
        Some((kind, end))
    }

    /// Is `s` the start of an escaped `$${` or `%%{`?
    fn escaped_opener(&self, s: usize) -> bool {
        let b = self.b;
        matches!(b.get(s), Some(b'$') | Some(b'%'))
            && b.get(s + 1) == b.get(s)
            && b.get(s + 2) == Some(&b'{')
    }

    /// Literal text of a quoted template up to its next interpolation,
    /// directive or closing quote.
    fn quoted(&mut self) -> Result<(), FormatError> {
        let s = self.i;
        let b = self.b;
        let mut j = s;
        loop {
            match b.get(j) {
                None => return self.err(j, "Unterminated template string"),
                Some(b'"') => break,
                Some(b'\n') | Some(b'\r') => {
                    return self.err(j, "Invalid multi-line string");
                }
                Some(b'\\') => j = self.escape_end(j)?,
                Some(_) if self.escaped_opener(j) => j += 3,
                Some(_) if self.template_opener(j).is_some() => break,
                Some(_) => j += 1,
            }
        }
        if j > s {
            self.push(Kind::QuotedLit, s, j, false);
        }
        if b[j] == b'"' {
            self.stack.pop();
            self.push(Kind::CQuote, j, j + 1, false);
        } else if let Some((kind, end)) = self.template_opener(j) {
            self.stack.push(Ctx::Interp);
            self.push(kind, j, end, false);
        }
        Ok(())
    }

    /// The end of the escape sequence at `j` (a backslash).
    fn escape_end(&self, j: usize) -> Result<usize, FormatError> {
        let b = self.b;
        let hex =
            |n: usize| (1..=n).all(|k| b.get(j + 1 + k).is_some_and(|c| c.is_ascii_hexdigit()));
        match b.get(j + 1) {
            Some(b'n' | b'r' | b't' | b'"' | b'\\') => Ok(j + 2),
            Some(b'u') if hex(4) => Ok(j + 6),
            Some(b'U') if hex(8) => Ok(j + 10),
            _ => self.err(j, "Invalid escape sequence"),
        }
    }

    /// Heredoc text up to its next interpolation or directive, or its
    /// closing line.
    fn heredoc(&mut self) -> Result<(), FormatError> {
        let Some(Ctx::Heredoc {
            marker,
            at_line_start,
        }) = self.stack.last()
        else {
            unreachable!("heredoc() runs inside a heredoc");
        };
        let marker = marker.clone();
        let mut line_start = *at_line_start;
        let s = self.i;
        let b = self.b;
        let mut j = s;
        loop {
            if line_start {
                if let Some(close_end) = self.closing_line(j, &marker) {
                    if j > s {
                        self.push(Kind::HeredocLit, s, j, true);
                    }
                    self.stack.pop();
                    self.push(Kind::CHeredoc, j, close_end, true);
                    return Ok(());
                }
                line_start = false;
            }
            match b.get(j) {
                None => return self.err(j, "Unterminated template string"),
                Some(b'\n') => {
                    j += 1;
                    line_start = true;
                }
                Some(_) if self.escaped_opener(j) => j += 3,
                Some(_) => {
                    if let Some((kind, end)) = self.template_opener(j) {
                        if j > s {
                            self.push(Kind::HeredocLit, s, j, true);
                        }
                        if let Some(Ctx::Heredoc { at_line_start, .. }) = self.stack.last_mut() {
                            // Back from the interpolation, the text goes on
                            // mid-line.
                            *at_line_start = false;
                        }
                        self.stack.push(Ctx::Interp);
                        self.push(kind, j, end, true);
                        return Ok(());
                    }
                    j += self.src[j..].chars().next().map_or(1, char::len_utf8);
                }
            }
        }
    }

    /// When the line at `j` is the closing marker (whitespace around it
    /// allowed) followed by a line break: the end of the marker's line
    /// without the line break (which is lexed as an ordinary newline).
    fn closing_line(&self, j: usize, marker: &str) -> Option<usize> {
        let nl = j + self.src[j..].find('\n')?;
        let end = if nl > j && self.b[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        (self.src[j..end].trim_matches([' ', '\t']) == marker).then_some(end)
    }
}
