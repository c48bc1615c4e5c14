//! A syntax check of the token stream by HCL's native grammar: Terraform
//! formats only files that parse, so [`parse`] fails where Terraform's
//! parser does (the errors it reports are in its words where practical).
//! On success it tells the rewrites where the attribute values and the
//! block labels are.
//!
//! Line breaks matter in bodies and object constructors (they end an
//! attribute or an item) and are ignored inside parentheses, brackets,
//! template interpolations and `for` expressions; a line comment counts as
//! a line break, a block comment as nothing.

use super::FormatError;
use super::lexer::{Kind, Token};
use std::collections::HashSet;

/// An attribute's value: the token indices of its first and last token
/// (comments before or after it excluded).
pub(super) struct Attr {
    pub first: usize,
    pub last: usize,
    /// The `type` argument of a top-level `variable` block.
    pub variable_type: bool,
}

/// A block's labels.
pub(super) struct Header {
    /// The token after the block's type name.
    pub after_type: usize,
    /// Each label's first and last token (one identifier, or a quote, its
    /// literal if not empty and a quote).
    pub labels: Vec<(usize, usize)>,
}

#[derive(Default)]
pub(super) struct Structure {
    /// Every attribute of every body, in file order.
    pub attrs: Vec<Attr>,
    /// The blocks that have labels.
    pub headers: Vec<Header>,
    /// Each object constructor's keys, as the first and last token of
    /// each (for the loader's repeated-key workaround).
    pub object_keys: Vec<Vec<(usize, usize)>>,
}

pub(super) fn parse(src: &str, tokens: &[Token]) -> Result<Structure, FormatError> {
    let mut p = Parser {
        src,
        toks: tokens,
        pos: 0,
        last: 0,
        lines_matter: vec![true],
        depth: 0,
        out: Structure::default(),
    };
    p.body(BodyKind::File)?;
    Ok(p.out)
}

#[derive(Clone, Copy, PartialEq)]
enum BodyKind {
    File,
    Block,
    /// The body of a top-level `variable` block.
    Variable,
}

/// Where a template's sequence of parts stopped.
#[derive(PartialEq)]
enum Stop {
    /// The closing quote or heredoc marker (not consumed).
    Close,
    Else,
    EndIf,
    EndFor,
}

struct Parser<'a> {
    src: &'a str,
    toks: &'a [Token],
    /// The next token to look at.
    pos: usize,
    /// The last token consumed.
    last: usize,
    /// Whether line breaks are tokens (top) or skipped.
    lines_matter: Vec<bool>,
    /// Expressions being parsed, one inside another.
    depth: usize,
    out: Structure,
}

/// How deep expressions may nest: far beyond any real configuration, and
/// shallow enough that the recursive descent cannot exhaust a thread's
/// stack.
const MAX_DEPTH: usize = 200;

type PResult<T = ()> = Result<T, FormatError>;

impl Parser<'_> {
    fn lines_matter(&self) -> bool {
        self.lines_matter.last().copied().unwrap_or(true)
    }

    /// The index of the next significant token from `from`.
    fn next_from(&self, mut i: usize) -> Option<usize> {
        let keep_lines = self.lines_matter();
        while let Some(t) = self.toks.get(i) {
            match t.kind {
                Kind::BlockComment => {}
                Kind::Newline | Kind::LineComment if !keep_lines => {}
                _ => return Some(i),
            }
            i += 1;
        }
        None
    }

    /// The kind of the next significant token; a line comment reads as the
    /// line break it ends with.
    fn peek(&self) -> Option<Kind> {
        self.peek_nth(0)
    }

    fn peek_nth(&self, n: usize) -> Option<Kind> {
        let mut i = self.next_from(self.pos)?;
        for _ in 0..n {
            i = self.next_from(i + 1)?;
        }
        Some(match self.toks[i].kind {
            Kind::LineComment => Kind::Newline,
            k => k,
        })
    }

    fn peek_text(&self) -> &str {
        self.next_from(self.pos)
            .map_or("", |i| self.toks[i].text.as_str())
    }

    fn peek_keyword(&self, word: &str) -> bool {
        self.peek() == Some(Kind::Ident) && self.peek_text() == word
    }

    /// Consumes the next significant token; its index.
    fn bump(&mut self) -> usize {
        let i = self
            .next_from(self.pos)
            .expect("bump() follows a successful peek()");
        self.pos = i + 1;
        self.last = i;
        i
    }

    /// An error at the next significant token (or the end of the file).
    fn err<T>(&self, msg: &str) -> PResult<T> {
        let at = self
            .next_from(self.pos)
            .map_or(self.src.len(), |i| self.toks[i].pos);
        Err(FormatError::at(self.src, at, msg))
    }

    fn expect(&mut self, kind: Kind, msg: &str) -> PResult<usize> {
        if self.peek() == Some(kind) {
            Ok(self.bump())
        } else {
            self.err(msg)
        }
    }

    /// Runs `f` with line breaks significant (`true`) or skipped.
    fn with_lines<T>(
        &mut self,
        matter: bool,
        f: impl FnOnce(&mut Self) -> PResult<T>,
    ) -> PResult<T> {
        self.lines_matter.push(matter);
        let r = f(self);
        self.lines_matter.pop();
        r
    }

    // ---- bodies ----

    fn body(&mut self, kind: BodyKind) -> PResult {
        let mut names: HashSet<String> = HashSet::new();
        loop {
            match self.peek() {
                None if kind == BodyKind::File => return Ok(()),
                None => return self.err("Unclosed configuration block"),
                Some(Kind::Newline) => {
                    self.bump();
                }
                Some(Kind::CBrace) if kind != BodyKind::File => return Ok(()),
                Some(Kind::Ident) => self.item(kind, &mut names)?,
                _ => return self.err("Argument or block definition required"),
            }
        }
    }

    /// An attribute or a block, then its line break.
    fn item(&mut self, body: BodyKind, names: &mut HashSet<String>) -> PResult {
        let name_idx = self.bump();
        let name = self.toks[name_idx].text.clone();
        if self.peek() == Some(Kind::Equal) {
            self.attribute_value(&name, name_idx, body, names)?;
        } else {
            // A block left open is reported where it opens, as Terraform
            // reports it (the innermost one: an outer block sees the error
            // already moved away from the end of the file).
            let end = FormatError::at(self.src, self.src.len(), "");
            self.block(&name, body).map_err(|e| {
                if e.message == "Unclosed configuration block"
                    && (e.line, e.column) == (end.line, end.column)
                {
                    FormatError::at(self.src, self.toks[name_idx].pos, e.message)
                } else {
                    e
                }
            })?;
        }
        match self.peek() {
            None => Ok(()),
            Some(Kind::Newline) => {
                self.bump();
                Ok(())
            }
            _ => self.err("Missing newline after argument or block definition"),
        }
    }

    /// After an attribute's name: `= value`.
    fn attribute_value(
        &mut self,
        name: &str,
        name_idx: usize,
        body: BodyKind,
        names: &mut HashSet<String>,
    ) -> PResult {
        if !names.insert(name.to_string()) {
            return Err(FormatError::at(
                self.src,
                self.toks[name_idx].pos,
                format!("Attribute redefined: the argument {name:?} was already set"),
            ));
        }
        self.bump(); // =
        let first = self.next_from(self.pos).unwrap_or(self.toks.len());
        self.expr()?;
        self.out.attrs.push(Attr {
            first,
            last: self.last,
            variable_type: body == BodyKind::Variable && name == "type",
        });
        Ok(())
    }

    /// After a block's type name: labels, then a body in braces.
    fn block(&mut self, type_name: &str, body: BodyKind) -> PResult {
        let mut header = Header {
            after_type: self.last + 1,
            labels: Vec::new(),
        };
        loop {
            match self.peek() {
                Some(Kind::Ident) => {
                    let i = self.bump();
                    header.labels.push((i, i));
                }
                Some(Kind::OQuote) => {
                    let first = self.bump();
                    if self.peek() == Some(Kind::QuotedLit) {
                        self.bump();
                    }
                    let last = self.expect(
                        Kind::CQuote,
                        "Invalid string literal: a block label cannot contain interpolations",
                    )?;
                    header.labels.push((first, last));
                }
                Some(Kind::OBrace) => break,
                _ => return self.err("Invalid block definition: expected a label or '{'"),
            }
        }
        if !header.labels.is_empty() {
            self.out.headers.push(header);
        }
        self.bump(); // {
        let inner = if body == BodyKind::File && type_name == "variable" {
            BodyKind::Variable
        } else {
            BodyKind::Block
        };
        match self.peek() {
            Some(Kind::CBrace) => {}
            Some(Kind::Newline) => {
                self.bump();
                self.body(inner)?;
            }
            // A single-line block holds at most one attribute.
            Some(Kind::Ident) if self.peek_nth(1) == Some(Kind::Equal) => {
                let name_idx = self.bump();
                let name = self.toks[name_idx].text.clone();
                self.attribute_value(&name, name_idx, inner, &mut HashSet::new())?;
                if self.peek() != Some(Kind::CBrace) {
                    return self.err(
                        "Invalid single-argument block definition: a single-line block holds one argument and its closing brace",
                    );
                }
            }
            _ => return self.err("Argument definition required in a single-line block"),
        }
        self.expect(Kind::CBrace, "Unclosed configuration block")?;
        Ok(())
    }

    // ---- expressions ----

    fn expr(&mut self) -> PResult {
        self.nested(|p| {
            p.binary(0)?;
            if p.peek() == Some(Kind::Question) {
                p.bump();
                p.expr()?;
                p.expect(Kind::Colon, "Missing false expression in conditional")?;
                p.expr()?;
            }
            Ok(())
        })
    }

    /// Runs `f` one nesting level deeper; an error past [`MAX_DEPTH`].
    fn nested(&mut self, f: impl FnOnce(&mut Self) -> PResult) -> PResult {
        if self.depth >= MAX_DEPTH {
            return self.err("Expression nested too deeply");
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn binary(&mut self, level: usize) -> PResult {
        const LEVELS: [&[Kind]; 6] = [
            &[Kind::Or],
            &[Kind::And],
            &[Kind::EqualOp, Kind::NotEqual],
            &[Kind::Lt, Kind::Gt, Kind::LtEq, Kind::GtEq],
            &[Kind::Plus, Kind::Minus],
            &[Kind::Star, Kind::Slash, Kind::Percent],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        self.binary(level + 1)?;
        while self.peek().is_some_and(|k| ops.contains(&k)) {
            self.bump();
            self.binary(level + 1)?;
        }
        Ok(())
    }

    fn unary(&mut self) -> PResult {
        if matches!(self.peek(), Some(Kind::Minus | Kind::Bang)) {
            self.bump();
            return self.nested(|p| p.unary());
        }
        self.postfix()
    }

    /// A primary expression and its traversals: `.name`, `.0`, `[key]`,
    /// `.*` and `[*]`.
    fn postfix(&mut self) -> PResult {
        self.primary()?;
        let mut attr_splat = false;
        loop {
            match self.peek() {
                Some(Kind::Dot) => {
                    self.bump();
                    match self.peek() {
                        Some(Kind::Ident) => {
                            self.bump();
                        }
                        Some(Kind::Number) => {
                            let i = self.bump();
                            if !self.toks[i].text.bytes().all(|c| c.is_ascii_digit()) {
                                return Err(FormatError::at(
                                    self.src,
                                    self.toks[i].pos,
                                    "Invalid legacy index syntax",
                                ));
                            }
                        }
                        Some(Kind::Star) => {
                            if attr_splat {
                                return self.err("Nested splat expression not allowed");
                            }
                            attr_splat = true;
                            self.bump();
                        }
                        _ => return self.err("Invalid attribute name"),
                    }
                }
                Some(Kind::OBrack) => {
                    // An index ends an attribute splat (`a.*.b[0].*` is
                    // fine, `a.*.b.*` is not).
                    attr_splat = false;
                    self.bump();
                    // `[*]` is one unit: no line break inside it where line
                    // breaks matter. An index is an expression, where they
                    // do not.
                    if self.peek() == Some(Kind::Star) {
                        self.bump();
                        self.expect(Kind::CBrack, "Missing close bracket on splat index")?;
                    } else {
                        self.with_lines(false, |p| {
                            p.expr()?;
                            p.expect(Kind::CBrack, "Missing close bracket on index")?;
                            Ok(())
                        })?;
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn primary(&mut self) -> PResult {
        match self.peek() {
            Some(Kind::Number) => {
                self.bump();
                Ok(())
            }
            Some(Kind::Ident) => {
                self.bump();
                match self.peek() {
                    Some(Kind::OParen) => self.call_args(),
                    Some(Kind::DoubleColon) => {
                        while self.peek() == Some(Kind::DoubleColon) {
                            self.bump();
                            self.expect(Kind::Ident, "Missing function name after '::'")?;
                        }
                        if self.peek() != Some(Kind::OParen) {
                            return self.err("Missing open parenthesis");
                        }
                        self.call_args()
                    }
                    _ => Ok(()),
                }
            }
            Some(Kind::OParen) => {
                self.bump();
                self.with_lines(false, |p| {
                    p.expr()?;
                    p.expect(Kind::CParen, "Unbalanced parentheses")?;
                    Ok(())
                })
            }
            Some(Kind::OBrack) => {
                self.bump();
                self.with_lines(false, |p| {
                    if p.starts_for() {
                        p.for_expr(Kind::CBrack)
                    } else {
                        p.tuple()
                    }
                })
            }
            Some(Kind::OBrace) => {
                self.bump();
                // `for` may stand on a line of its own.
                let is_for = self.with_lines(false, |p| Ok(p.starts_for()))?;
                if is_for {
                    self.with_lines(false, |p| p.for_expr(Kind::CBrace))
                } else {
                    self.with_lines(true, |p| p.object())
                }
            }
            Some(Kind::OQuote) => {
                self.bump();
                self.template(Kind::CQuote)
            }
            Some(Kind::OHeredoc) => {
                self.bump();
                self.template(Kind::CHeredoc)
            }
            _ => self.err("Invalid expression: expected the start of an expression"),
        }
    }

    /// `for` first in brackets or braces always begins a `for` expression
    /// (`{for = 1}` is an error, not an object).
    fn starts_for(&self) -> bool {
        self.peek_keyword("for")
    }

    /// After `(`: arguments, the last one possibly expanded with `...`.
    fn call_args(&mut self) -> PResult {
        self.bump(); // (
        self.with_lines(false, |p| {
            loop {
                if p.peek() == Some(Kind::CParen) {
                    p.bump();
                    return Ok(());
                }
                p.expr()?;
                match p.peek() {
                    Some(Kind::Ellipsis) => {
                        p.bump();
                        p.expect(Kind::CParen, "Missing closing parenthesis")?;
                        return Ok(());
                    }
                    Some(Kind::Comma) => {
                        p.bump();
                    }
                    Some(Kind::CParen) => {}
                    _ => return p.err("Missing argument separator"),
                }
            }
        })
    }

    /// After `[`: items separated by commas.
    fn tuple(&mut self) -> PResult {
        loop {
            if self.peek() == Some(Kind::CBrack) {
                self.bump();
                return Ok(());
            }
            self.expr()?;
            match self.peek() {
                Some(Kind::Comma) => {
                    self.bump();
                }
                Some(Kind::CBrack) => {}
                _ => return self.err("Missing item separator"),
            }
        }
    }

    /// After `{`: `key = value` or `key : value` items separated by commas
    /// or line breaks.
    fn object(&mut self) -> PResult {
        let mut keys = Vec::new();
        loop {
            match self.peek() {
                Some(Kind::Newline) => {
                    self.bump();
                    continue;
                }
                Some(Kind::CBrace) => {
                    self.bump();
                    self.out.object_keys.push(keys);
                    return Ok(());
                }
                None => return self.err("Missing closing brace of the object"),
                _ => {}
            }
            let first = self.next_from(self.pos).unwrap_or(self.pos);
            self.expr()?;
            keys.push((first, self.last));
            if !matches!(self.peek(), Some(Kind::Equal | Kind::Colon)) {
                return self.err("Missing attribute value: expected '=' or ':'");
            }
            self.bump();
            self.expr()?;
            match self.peek() {
                Some(Kind::Comma | Kind::Newline) => {
                    self.bump();
                }
                Some(Kind::CBrace) => {}
                _ => return self.err("Missing attribute separator"),
            }
        }
    }

    /// At `for`: `for k, v in coll : value` (`key => value...` in an
    /// object), an optional `if cond`, then `close`.
    fn for_expr(&mut self, close: Kind) -> PResult {
        self.bump(); // for
        self.expect(Kind::Ident, "Invalid 'for' expression: a name is required")?;
        if self.peek() == Some(Kind::Comma) {
            self.bump();
            self.expect(Kind::Ident, "Invalid 'for' expression: a name is required")?;
        }
        if !self.peek_keyword("in") {
            return self.err("Invalid 'for' expression: 'in' is required");
        }
        self.bump();
        self.expr()?;
        self.expect(Kind::Colon, "Invalid 'for' expression: ':' is required")?;
        self.expr()?;
        if close == Kind::CBrace {
            self.expect(Kind::FatArrow, "Invalid 'for' expression: '=>' is required")?;
            self.expr()?;
            if self.peek() == Some(Kind::Ellipsis) {
                self.bump();
            }
        }
        if self.peek_keyword("if") {
            self.bump();
            self.expr()?;
        }
        self.expect(
            close,
            "Invalid 'for' expression: extra characters before its end",
        )?;
        Ok(())
    }

    // ---- templates ----

    /// After an opening quote or heredoc marker: parts up to `close`.
    fn template(&mut self, close: Kind) -> PResult {
        if self.template_parts()? != Stop::Close {
            return Err(FormatError::at(
                self.src,
                self.toks[self.last].pos,
                "Unexpected template directive without its opening directive",
            ));
        }
        self.expect(close, "Unterminated template string")?;
        Ok(())
    }

    /// Literals, interpolations and directives, up to the end of the
    /// template or a directive that ends an enclosing one.
    fn template_parts(&mut self) -> PResult<Stop> {
        loop {
            // Template parts are never line breaks or comments: look at the
            // raw next token.
            let Some(t) = self.toks.get(self.pos) else {
                return self.err("Unterminated template string");
            };
            match t.kind {
                Kind::QuotedLit | Kind::HeredocLit => {
                    self.pos += 1;
                    self.last = self.pos - 1;
                }
                Kind::TemplateInterp => {
                    self.pos += 1;
                    self.with_lines(false, |p| {
                        p.expr()?;
                        p.expect(Kind::TemplateSeqEnd, "Missing end of interpolation: '}'")
                    })?;
                }
                Kind::TemplateControl => {
                    self.pos += 1;
                    if let Some(stop) = self.directive()? {
                        return Ok(stop);
                    }
                }
                Kind::CQuote | Kind::CHeredoc => return Ok(Stop::Close),
                _ => return self.err("Unterminated template string"),
            }
        }
    }

    /// After `%{`: an `if` or `for` directive with its parts (None), or an
    /// `else`/`endif`/`endfor` ending the parts of an enclosing one.
    fn directive(&mut self) -> PResult<Option<Stop>> {
        let word = self.with_lines(false, |p| {
            let i = p.expect(Kind::Ident, "Invalid template directive")?;
            Ok(p.toks[i].text.clone())
        })?;
        let end = |p: &mut Self| {
            p.with_lines(false, |p| {
                p.expect(
                    Kind::TemplateSeqEnd,
                    "Missing end of template directive: '}'",
                )
            })
        };
        match word.as_str() {
            "if" => {
                self.with_lines(false, |p| p.expr())?;
                end(self)?;
                let mut stop = self.template_parts()?;
                if stop == Stop::Else {
                    stop = self.template_parts()?;
                }
                if stop != Stop::EndIf {
                    return self.err("Unexpected directive: expected %{endif} to end %{if}");
                }
                Ok(None)
            }
            "for" => {
                self.with_lines(false, |p| {
                    p.expect(Kind::Ident, "Invalid 'for' directive: a name is required")?;
                    if p.peek() == Some(Kind::Comma) {
                        p.bump();
                        p.expect(Kind::Ident, "Invalid 'for' directive: a name is required")?;
                    }
                    if !p.peek_keyword("in") {
                        return p.err("Invalid 'for' directive: 'in' is required");
                    }
                    p.bump();
                    p.expr()
                })?;
                end(self)?;
                if self.template_parts()? != Stop::EndFor {
                    return self.err("Unexpected directive: expected %{endfor} to end %{for}");
                }
                Ok(None)
            }
            "else" | "endif" | "endfor" => {
                end(self)?;
                Ok(Some(match word.as_str() {
                    "else" => Stop::Else,
                    "endif" => Stop::EndIf,
                    _ => Stop::EndFor,
                }))
            }
            _ => self.err("Invalid template directive"),
        }
    }
}
